"""The compiled atomics (native/aql_atomics.c via cffi) and typed views on native memory."""
from __future__ import annotations

try:
    from .._native_aql import ffi, lib
except ImportError:  # a source checkout that was not built: compile once into the package directory
    import importlib
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "native"))
    try:
        from build_aql import ffibuilder  # type: ignore
    finally:
        sys.path.pop(0)
    ffibuilder.compile(tmpdir=str(Path(__file__).resolve().parents[2]))
    mod = importlib.import_module("pyhip._native_aql")
    ffi, lib = mod.ffi, mod.lib


class NativeBlock:
    """A zeroed, 64-byte aligned native allocation, freed with its owner."""

    __slots__ = ("ptr", "size", "address", "__weakref__")

    def __init__(self, size: int):
        p = lib.pyhip_alloc64(size)
        if p == ffi.NULL:
            raise MemoryError(f"cannot allocate {size} bytes of native memory")
        self.ptr = ffi.gc(p, lib.pyhip_free)
        self.size = size
        self.address = int(ffi.cast("uintptr_t", self.ptr))

    def u64(self, offset: int):
        return ffi.cast("uint64_t*", ffi.cast("char*", self.ptr) + offset)

    def i64(self, offset: int):
        return ffi.cast("int64_t*", ffi.cast("char*", self.ptr) + offset)

    def u32(self, offset: int):
        return ffi.cast("uint32_t*", ffi.cast("char*", self.ptr) + offset)

    def bytes_at(self, offset: int):
        return ffi.cast("uint8_t*", ffi.cast("char*", self.ptr) + offset)

    def buffer(self):
        return ffi.buffer(self.ptr, self.size)
