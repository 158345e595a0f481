"""Building and locating the drop-in ``libamdhip64.so.5`` (cached per build-input fingerprint)."""
from __future__ import annotations

import os
import sys
from pathlib import Path

_SOURCE_TREE = Path(__file__).resolve().parents[2] / "native" / "hip"      # a checkout / editable install
_INSTALLED = Path(__file__).resolve().parent / "native"                    # copied there by setup.py
NATIVE = _SOURCE_TREE if (_SOURCE_TREE / "build_shim.py").exists() else _INSTALLED


def cache_dir() -> Path:
    base = Path(os.environ.get("PYHIP_CACHE", Path.home() / ".cache" / "pyhip"))
    return base / f"shim-{_native('build_shim').fingerprint()}"


def build_once(target: Path, build) -> Path:
    """``target``, made by ``build(tmpdir) -> built file`` if it does not exist yet.  Concurrent first uses
    (several processes) build under an exclusive lock into a private directory and rename the finished
    library into place, so no program ever loads a half-written file."""
    if not target.exists():
        import fcntl
        import tempfile

        target.parent.mkdir(parents=True, exist_ok=True)
        with open(target.parent / ".build.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if not target.exists():
                with tempfile.TemporaryDirectory(dir=target.parent) as tmp:
                    os.replace(build(Path(tmp)), target)
    return target


def _native(name: str):
    """A build script of native/hip (build_shim, build_hiprtc) as a module."""
    sys.path.insert(0, str(NATIVE))
    try:
        import importlib
        return importlib.import_module(name)
    finally:
        sys.path.pop(0)


def shim_path(build: bool = True) -> Path:
    """Directory holding libamdhip64.so.5 and libhiprtc.so.5 (AMD's separate hiprtc library, next to
    libamdhip64), built on first use."""
    d = cache_dir()
    if build:
        build_once(d / "libamdhip64.so.5", lambda tmp: _native("build_shim").build(tmp))
        build_once(d / "libhiprtc.so.5", lambda tmp: _native("build_hiprtc").build(tmp))
    return d


def load_in_process():
    """pyhip's libamdhip64.so.5 loaded into this Python process (ctypes), its embedded interpreter this one:
    its exports reach the runtime this process already uses.  Its first call runs cffi's embedding start-up,
    whose spin lock on Python 3.8-3.11 is ``PyCapsule_Type.tp_version_tag`` (0 = free): once the process has
    looked an attribute up on a capsule (a DLPack exchange does), the type carries a version tag and that
    first call spins forever.  ``PyType_Modified`` drops the tag (it is only a cache) just before."""
    import ctypes

    lib = ctypes.CDLL(str(shim_path() / "libamdhip64.so.5"))
    capsule = type(_a_capsule())
    ctypes.pythonapi.PyType_Modified(ctypes.py_object(capsule))
    n = ctypes.c_int()
    code = lib.hipGetDeviceCount(ctypes.byref(n))                   # the first call: the shim's start-up
    return lib, code


def _a_capsule():
    import ctypes
    new = ctypes.pythonapi.PyCapsule_New
    new.restype, new.argtypes = ctypes.py_object, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
    return new(ctypes.c_void_p(1), None, None)


def site_dirs() -> list[str]:
    """This interpreter's site directories (a venv's site-packages, the user site), for the embedded one."""
    import site

    dirs = list(site.getsitepackages())
    if site.ENABLE_USER_SITE:
        dirs.append(site.getusersitepackages())
    return [d for d in dirs if os.path.isdir(d)]


def run(program: str, args: list[str]) -> int:
    """Run an unmodified hipcc-built program against the shim; returns its exit status."""
    import subprocess

    d = shim_path()
    env = dict(os.environ)
    env["LD_LIBRARY_PATH"] = str(d) + (":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else "")
    pkg_root = str(Path(__file__).resolve().parents[2])          # the directory that holds the pyhip package
    env["PYTHONPATH"] = pkg_root + (":" + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env["PYHIP_SITE_DIRS"] = os.pathsep.join(site_dirs())
    try:
        return subprocess.run([program, *args], env=env).returncode
    except OSError as exc:                  # missing, not executable, wrong format: like a shell
        print(f"pyhip exec: {program}: {exc.strerror}", file=sys.stderr)
        return 127 if isinstance(exc, FileNotFoundError) else 126
