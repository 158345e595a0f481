"""The compiled half of the AQL core (native/aql_atomics.c via cffi, module ``pyhip._native_aql``) and
:class:`NativeBlock`, a zeroed 64-byte aligned allocation that rings, queues and signals live in."""
from __future__ import annotations

_REQUIRED = ("pyhip_queue_reserve", "pyhip_signal_wait_multi", "pyhip_signal_complete", "pyhip_cp_wait_packet", "pyhip_foreign_submit", "pyhip_raw_signal_add",
             "pyhip_queue_process", "pyhip_signal_register", "pyhip_launch_functions", "pyhip_armed_wait")


def _build_in_place():
    """A source checkout that was never built: compile once (in a temporary directory) and put only the
    shared object into the package directory."""
    import importlib
    import shutil
    import sys
    import tempfile
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    sys.path.insert(0, str(root / "native"))
    try:
        from build_aql import ffibuilder  # type: ignore
    finally:
        sys.path.pop(0)
    with tempfile.TemporaryDirectory() as tmp:
        so = Path(ffibuilder.compile(tmpdir=tmp))
        shutil.copy2(so, root / "pyhip" / so.name)
    return importlib.import_module("pyhip._native_aql")


try:
    from .. import _native_aql as _mod
except ImportError:
    _mod = _build_in_place()

ffi, lib = _mod.ffi, _mod.lib
_missing = [n for n in _REQUIRED if not hasattr(lib, n)]
if _missing:
    raise ImportError(f"pyhip._native_aql ({_mod.__file__}) is stale (no {', '.join(_missing)}); "
                      "rebuild it with `pip install -e .` or `python native/build_aql.py`")


class NativeBlock:
    """A zeroed, 64-byte aligned native allocation, freed when its owner is collected."""

    __slots__ = ("ptr", "size", "address", "__weakref__")

    def __init__(self, size: int, destructor=None):
        p = lib.pyhip_alloc64(size)
        if p == ffi.NULL:
            raise MemoryError(f"cannot allocate {size} bytes of native memory")
        self.ptr = ffi.gc(p, destructor or lib.pyhip_free, size)
        self.size = size
        self.address = int(ffi.cast("uintptr_t", self.ptr))

    def at(self, offset: int, ctype: str = "uint8_t*"):
        return ffi.cast(ctype, ffi.cast("char*", self.ptr) + offset)

    def u64(self, offset: int):
        return self.at(offset, "uint64_t*")

    def i64(self, offset: int):
        return self.at(offset, "int64_t*")

    def u32(self, offset: int):
        return self.at(offset, "uint32_t*")

    def bytes_at(self, offset: int):
        return self.at(offset, "uint8_t*")

    def buffer(self):
        return ffi.buffer(self.ptr, self.size)


def now_ns() -> int:
    """CLOCK_MONOTONIC in ns (the clock of signal start_ts / end_ts; equals ``time.monotonic_ns()``)."""
    return lib.pyhip_now_ns()


def fault_epoch() -> int:
    """Completions with an error so far, process-wide (native/aql_atomics.c)."""
    return lib.pyhip_fault_epoch()
