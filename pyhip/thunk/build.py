"""Building and locating the drop-in ``libhsakmt.so.1`` (``pyhip thunk-path``).

The library embeds the interpreter that builds it: the cache key is the build inputs *and* that
interpreter (its executable, version and sys.path), and the embedded init code puts the builder's sys.path
first — so a program started with only ``LD_LIBRARY_PATH`` pointing at the library finds pyhip and its
dependencies (numpy, msgpack, ...) even when they live in a virtual environment."""
from __future__ import annotations

import fcntl
import hashlib
import os
import sys
import tempfile
from pathlib import Path

_SOURCE_TREE = Path(__file__).resolve().parents[2] / "native" / "hsakmt"    # a checkout / editable install
_INSTALLED = Path(__file__).resolve().parent / "native"                     # copied there by setup.py
NATIVE = _SOURCE_TREE if (_SOURCE_TREE / "build_thunk.py").exists() else _INSTALLED


def _builder():
    sys.path.insert(0, str(NATIVE))
    try:
        import build_thunk  # type: ignore
    finally:
        sys.path.pop(0)
    return build_thunk


def _search_path() -> list[str]:
    pkg_root = str(Path(__file__).resolve().parents[2])
    return [pkg_root] + [p for p in sys.path if p and p != pkg_root and os.path.isdir(p)]


def init_code() -> str:
    return ("import sys\n"
            f"sys.path[:0] = [p for p in {_search_path()!r} if p not in sys.path]\n"
            "from pyhip.thunk.entry import install\n"
            "install()\n")


def cache_dir() -> Path:
    base = Path(os.environ.get("PYHIP_CACHE", Path.home() / ".cache" / "pyhip"))
    who = hashlib.sha256(f"{sys.executable}|{sys.version}|{init_code()}".encode()).hexdigest()[:8]
    return base / f"thunk-{_builder().fingerprint(who)}"


def thunk_path(build: bool = True) -> Path:
    """Directory holding libhsakmt.so.1, built on first use (under a lock, into a private directory that
    is renamed into place: no process ever loads a half-written library)."""
    d = cache_dir()
    lib = d / "libhsakmt.so.1"
    if build and not lib.exists():
        d.mkdir(parents=True, exist_ok=True)
        with open(d / ".build.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if not lib.exists():
                with tempfile.TemporaryDirectory(dir=d) as tmp:
                    built = _builder().build(Path(tmp), init_code())
                    os.replace(built, lib)
    return d


def amd_hip_library() -> str | None:
    """Where AMD's own libamdhip64.so.5 is (Debian: libamdhip64-5), or None."""
    import ctypes.util

    for d in ("/usr/lib/x86_64-linux-gnu", "/opt/rocm/lib", "/usr/lib64", "/usr/lib"):
        p = Path(d) / "libamdhip64.so.5"
        if p.exists():
            return str(p)
    found = ctypes.util.find_library("amdhip64")
    return found


def run_amd(program: str, args: list[str]) -> int:
    """Run an unmodified hipcc program on AMD's HIP runtime and ROCr over pyhip's libhsakmt (the emulated
    GPU).  Returns the program's exit status (negative: killed by that signal)."""
    import subprocess

    if amd_hip_library() is None:
        raise FileNotFoundError("AMD's HIP runtime (libamdhip64.so.5) is not installed: "
                                "apt-get install libamdhip64-5 (Debian) or install ROCm")
    d = thunk_path()
    env = dict(os.environ)
    keep = [p for p in env.get("LD_LIBRARY_PATH", "").split(":") if p and "shim-" not in p]
    env["LD_LIBRARY_PATH"] = ":".join([str(d)] + keep)
    return subprocess.run([program, *args], env=env).returncode
