"""Where an allocation or free happened: the HIP API call and its caller — the first Python frame outside
pyhip, or (a C or C++ program under ``pyhip exec``) the first native return address in the program's own
code, named by symbol and, when it has DWARF line tables, file:line (llvm-addr2line, when the report is
written)."""
from __future__ import annotations

import ctypes
import ctypes.util
import functools
import os
import shutil
import subprocess
import sys
import threading

_PKG = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))        # the pyhip package directory
_SKIP_OBJECTS = ("libpython", "libamdhip64", "_cffi_backend", "libffi", "libc.so", "libstdc++", "ld-linux",
                 "_native_", "libhsa-runtime", "libgcc_s", "/python3")


class _DlInfo(ctypes.Structure):
    _fields_ = [("dli_fname", ctypes.c_char_p), ("dli_fbase", ctypes.c_void_p),
                ("dli_sname", ctypes.c_char_p), ("dli_saddr", ctypes.c_void_p)]


@functools.lru_cache(maxsize=1)
def _libc():
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        libc.backtrace.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_int]
        libc.dladdr.argtypes = [ctypes.c_void_p, ctypes.POINTER(_DlInfo)]
        return libc
    except (OSError, AttributeError):
        return None


@functools.cache
def _in_pyhip(filename: str) -> bool:
    return os.path.abspath(filename).startswith(_PKG + os.sep)


_THREADING = os.path.abspath(threading.__file__)


def _api_and_caller() -> tuple[str | None, str | None, bool]:
    """The API call (the outermost hip* function of pyhip below the caller, else the outermost pyhip function
    there: ``to_device``, ``empty`` ...), the caller (the first frame outside pyhip) and whether the caller is
    only the start of a thread (a thread of pyhip's own: device malloc's heap service on the hostcall thread,
    which allocates for ockl's heap, not for the program)."""
    f = sys._getframe(2)
    api = outer = None
    while f is not None:
        fn = f.f_code.co_filename
        if _in_pyhip(fn):
            outer = f.f_code.co_name
            if outer.startswith("hip"):
                api = outer
        elif not fn.startswith("<"):
            return api or outer, f"{fn}:{f.f_lineno} in {f.f_code.co_name}", os.path.abspath(fn) == _THREADING
        f = f.f_back
    return api or outer, None, False


def _return_addresses() -> tuple[int, ...]:
    """The native stack's return addresses, innermost first (named later, only for a report)."""
    libc = _libc()
    if libc is None:
        return ()
    buf = (ctypes.c_void_p * 128)()
    n = libc.backtrace(buf, 128)
    return tuple(buf[i] for i in range(n) if buf[i])


def _program_frames(stack: tuple[int, ...], limit: int = 4) -> list[tuple[str, int]]:
    """``(object file, offset)`` of the first return addresses in the program's own code (not Python, libc,
    pyhip's shim or its native parts), innermost first."""
    libc = _libc()
    out = []
    if libc is None:
        return out
    info = _DlInfo()
    for a in stack:
        if not libc.dladdr(ctypes.c_void_p(a), ctypes.byref(info)) or not info.dli_fname:
            continue
        name = info.dli_fname.decode(errors="replace")
        if not name or name == sys.executable or name.startswith(_PKG) or any(s in name for s in _SKIP_OBJECTS):
            continue
        path = os.path.realpath("/proc/self/exe") if not os.path.isabs(name) else name
        out.append((path, a - 1 - (info.dli_fbase or 0)))  # the call instruction, not the one after it
        if len(out) == limit:
            break
    return out


def where(event: str) -> dict:
    """A description of the allocation / free happening now (see the module doc)."""
    api, caller, internal = _api_and_caller()
    out = {"event": event, "api": api}
    if internal:
        out["internal"] = True              # (leaks: not the program's)
    if caller is not None:
        out["caller"] = caller
    else:                                   # called from native code (a hipcc program under pyhip exec)
        out["stack"] = _return_addresses()
    return out


@functools.lru_cache(maxsize=4096)
def symbolize(path: str, offset: int) -> list[str]:
    """``function at file:line`` of an offset into an object file, one per inlined level (innermost first; with
    no line tables: ``function (object)``, or ``object+0xoffset``)."""
    tool = shutil.which("llvm-addr2line-19") or shutil.which("llvm-addr2line") or shutil.which("addr2line")
    if tool:
        try:
            r = subprocess.run([tool, "-f", "-C", "-i", "-e", path, hex(offset)], capture_output=True, text=True,
                               timeout=20, check=False)
            lines = r.stdout.strip().split("\n")
            out = []
            for fn, loc in zip(lines[0::2], lines[1::2]):
                loc = loc.split(" (")[0]
                if loc.endswith(":0"):               # a file but no line (no line tables): the file alone
                    loc = "??" if loc.startswith("??") else loc[:-2]
                    if fn != "??" and loc != "??":
                        out.append(f"{fn} ({os.path.basename(loc)})")
                        continue
                if fn != "??":
                    out.append(f"{fn} at {loc}" if not loc.startswith("??") else f"{fn} ({os.path.basename(path)})")
            if r.returncode == 0 and out:
                return out
        except (OSError, subprocess.SubprocessError):
            pass
    return [f"{os.path.basename(path)}+0x{offset:x}"]


def describe(w: dict | None) -> str | None:
    """One line for a :func:`where` record."""
    if not w:
        return None
    parts = [w.get("api") or "(internal)"]
    if w.get("caller"):
        parts.append(f"from {w['caller']}")
    elif w.get("stack"):
        # the first frame outside HIP's headers (hipMalloc<T> and friends are inline templates there)
        names = [n for path, off in _program_frames(w["stack"]) for n in symbolize(path, off)]
        if names:
            parts.append("from " + next((n for n in names if "/hip/" not in n), names[0]))
    return " ".join(parts)
