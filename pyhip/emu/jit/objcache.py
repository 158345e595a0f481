"""Compiled kernels kept across processes.

Generating a kernel's IR and compiling it through LLVM costs tens to hundreds of milliseconds; the machine code
depends only on the code bytes and the kernel context (what the lowered-program cache keys on,
pyhip/emu/native/cache.py, including pyhip/emu's own sources), the kernel entry, the MODE it starts in, its
VGPR rows, the compiled form (lockstep or not), the host CPU and the LLVM that compiled it.  This module keeps
the object file under a key made of all of those; a later process loads it (relocations resolve the native
runtime's entry points afresh) instead of generating and compiling.

Where: ``$PYHIP_JIT_CACHE_DIR`` if set, else the ``jit`` subdirectory beside the lowered-program cache
(``$PYHIP_CACHE_DIR``, ``$XDG_CACHE_HOME/pyhip`` or ``~/.cache/pyhip``); an empty value turns it off.
Writes are atomic; an unreadable entry is recompiled and rewritten; at most MAX_ENTRIES entries, least
recently used removed first."""
from __future__ import annotations

import collections
import functools
import hashlib
import os
import tempfile
from pathlib import Path

from ..native import cache as lowered

MAX_ENTRIES = 1024
stats = collections.Counter()                # "hit", "miss", "store", "bad"


def directory() -> Path | None:
    env = os.environ.get("PYHIP_JIT_CACHE_DIR")
    if env is not None:
        return Path(env) if env else None
    d = lowered.directory()
    return None if d is None else d.parent / "jit"


@functools.lru_cache(maxsize=1)
def _host() -> bytes:
    import llvmlite
    import llvmlite.binding as b
    from .compiler import host_cpu
    return repr((*host_cpu(), llvmlite.__version__,
                 b.llvm_version_info, os.environ.get("PYHIP_JIT_CODEGEN_OPT", "1"),
                 os.environ.get("PYHIP_JIT_OPT", "1"))).encode()


def prime() -> None:
    """Compute now what a process's first cached kernel needs on its way to its code: the host part of the key
    (the CPU's features: ~0.7 ms) and the lowered programs' source stamp (a walk of pyhip/emu: ~1.3 ms).  Called
    when a device's native engine starts (its queue thread, before the first dispatch)."""
    if directory() is not None:
        _host()
    if lowered.directory() is not None:
        lowered.source_stamp()


def key(program, K, entry_offset: int, mode, rows: int, lockstep: bool) -> str | None:
    if directory() is None:
        return None
    base = lowered.key(program, K)
    if base is None:
        return None
    h = hashlib.blake2b(base.encode(), digest_size=32)
    h.update(_host())
    h.update(repr((entry_offset, mode, rows, lockstep, K.lanes, K.family)).encode())
    return h.hexdigest()


def load(k: str) -> bytes | None:
    path = directory() / f"{k}.o"
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        stats["miss"] += 1
        return None
    except OSError:
        stats["bad"] += 1
        return None
    if len(data) < 64 or data[:4] != b"\x7fELF":
        stats["bad"] += 1
        return None
    stats["hit"] += 1
    try:
        os.utime(path)
    except OSError:
        pass
    return data


def store(k: str, data: bytes) -> None:
    d = directory()
    try:
        d.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=d, suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.replace(tmp, d / f"{k}.o")
        except BaseException:
            os.unlink(tmp)
            raise
    except OSError:
        return
    stats["store"] += 1
    lowered.trim_suffix(d, ".o", MAX_ENTRIES)
