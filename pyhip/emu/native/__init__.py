"""The native runtime (native/engine/*.c, module ``pyhip._native_engine``): kernels lowered once to a
pre-decoded instruction array (:mod:`.lower`) and run on a pool of threads without the GIL (:mod:`.run`) by
the compiled engine (pyhip/emu/jit), which calls the C handlers of the instructions without a description
(memory, LDS, MFMA, control and system instructions).  The numpy engine (pyhip/emu/engine.py) stays the
reference; see docs/engine.md.

``available()`` is False when the extension can be neither loaded nor built (a bare source checkout without
a C compiler); the emulator then runs everything on the numpy engine.  In a source checkout the extension
is rebuilt in place whenever native/engine/ changed since it was built (a digest is kept next to it)."""
from __future__ import annotations

import importlib
import sys
import threading
from pathlib import Path

_lock = threading.Lock()
_mod = None
_error: Exception | None = None
ABI = 2
ROOT = Path(__file__).resolve().parents[3]
PKG = ROOT / "pyhip"
DIGEST = PKG / "_native_engine.digest"


def _builder():
    sys.path.insert(0, str(ROOT / "native"))
    try:
        import build_engine  # type: ignore
    finally:
        sys.path.pop(0)
    return build_engine


def _source_hash() -> str:
    """The engine sources' digest (native/engine_source.py: no cffi import, see there)."""
    sys.path.insert(0, str(ROOT / "native"))
    try:
        from engine_source import source_hash  # type: ignore
    finally:
        sys.path.pop(0)
    return source_hash()


def _build_in_place(b, variant: str) -> None:
    """Compile the variant this CPU runs in a temporary directory; only the shared object (and its source
    digest) land in pyhip/."""
    import shutil
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        so = Path(b.builder(variant).compile(tmpdir=tmp))
        for old in PKG.glob("_native_engine*.so"):
            old.unlink()
        shutil.copy2(so, PKG / so.name)
    DIGEST.write_text(b.source_hash())
    importlib.invalidate_caches()


def _cpu_variant() -> str:
    import platform
    if platform.machine() not in ("x86_64", "AMD64"):
        return ""
    try:
        with open("/proc/cpuinfo") as f:
            flags = next((ln.split(":", 1)[1].split() for ln in f if ln.startswith("flags")), [])
    except OSError:
        return ""
    return "_v3" if {"avx2", "fma", "bmi2"} <= set(flags) else ""


def _load():
    variant = _cpu_variant()
    if (ROOT / "native" / "engine").is_dir():            # a source checkout: keep the build current
        built = list(PKG.glob(f"_native_engine{variant}.*so"))
        if built and not DIGEST.exists():
            # built by pip (an editable install) from these sources: record them rather than rebuild (a
            # rebuild imports cffi, which fails in an embedded interpreter whose _cffi_backend is another's)
            DIGEST.write_text(_source_hash())
        have = DIGEST.read_text().strip() if DIGEST.exists() else ""
        if have != _source_hash() or not built:
            _build_in_place(_builder(), variant)
    try:
        m = importlib.import_module(f"pyhip._native_engine{variant}")
    except ImportError:
        if not variant:
            raise
        m = importlib.import_module("pyhip._native_engine")
    if m.lib.pyhip_engine_abi() != ABI:
        raise ImportError(f"pyhip._native_engine ({m.__file__}) is stale; rebuild it with `pip install .` "
                          "or `python native/build_engine.py`")
    return m


def module():
    """The loaded extension, or raise ImportError saying why it is unavailable."""
    global _mod, _error
    if _mod is not None:
        return _mod
    with _lock:
        if _mod is None:
            if _error is not None:
                raise ImportError(f"the native engine is unavailable: {_error}")
            try:
                _mod = _load()
            except Exception as exc:              # no compiler, no headers, a stale build, ...
                _error = exc
                raise ImportError(f"the native engine is unavailable: {exc}") from exc
        return _mod


def available() -> bool:
    try:
        module()
        return True
    except ImportError:
        return False


def describe() -> str:
    """One line for ``pyhip info``: which build of the native engine this process uses, or why none."""
    try:
        m = module()
    except ImportError as exc:
        return f"unavailable, every dispatch runs on the numpy engine ({exc})"
    name = m.__name__.rsplit(".", 1)[-1]
    variant = "x86-64-v3 (AVX2/FMA/BMI2)" if name.endswith("_v3") else "baseline"
    return f"{name} ({variant} build), {m.lib.pyhip_engine_threads()} threads (PYHIP_ENGINE_THREADS)"
