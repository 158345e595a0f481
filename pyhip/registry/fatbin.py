"""Fat binaries: the ``__hip_fatbin_wrapper`` hip-clang emits, the offload bundle it points to, and the record
the registry keeps of each registered one (its functions, variables and per-device modules).

A fat binary's *handle* is what ``__hipRegisterFatBinary`` returns to the program (a ``void**`` it stores and
hands back to every other registration call and to ``__hipUnregisterFatBinary``): here the address of a
pointer-sized cell the record owns, so handles are unique, non-null and never reused in a process."""
from __future__ import annotations

import ctypes
import struct
from dataclasses import dataclass, field

from ..errors import HipError, LoaderError, hipError_t
from ..loader import Binary, load
from ..loader.bundle import BUNDLE_MAGIC, CCOB_MAGIC
from ..loader.extent import image_at
from ..loader.hostelf import HIPF_MAGIC


def bundle_at(address: int) -> bytes:
    """The offload bundle (plain or compressed) at host ``address`` (what a fat binary wrapper points to)."""
    head = ctypes.string_at(address, 24)
    if head[:4] != CCOB_MAGIC and head != BUNDLE_MAGIC:
        raise HipError(hipError_t.hipErrorInvalidImage, "fat binary is not an offload bundle")
    return image_at(address)


def wrapper_source(address: int):
    """The bundle of the ``__hip_fatbin_wrapper`` at host ``address`` (u32 magic, u32 version 1, u64 bundle
    address), as a callable that reads it (a bundle is read when a kernel of it is first needed).
    HipError(hipErrorInvalidImage) when it is not a wrapper."""
    magic, version, bundle = struct.unpack("<IIQ", ctypes.string_at(address, 16))
    if magic != HIPF_MAGIC or version != 1:
        raise HipError(hipError_t.hipErrorInvalidImage, f"not a fat binary wrapper (magic 0x{magic:x}, "
                                                         f"version {version})")
    return lambda: bundle_at(bundle)


@dataclass
class FatBinary:
    source: object                      # bytes, or a callable returning bytes (read lazily)
    cell: ctypes.c_void_p = field(default_factory=ctypes.c_void_p)   # its address is the handle
    binary: Binary | None = None
    functions: dict = field(default_factory=dict)   # host handle address -> device name
    variables: dict = field(default_factory=dict)   # host shadow address -> VarInfo
    per_device: dict = field(default_factory=dict)  # device index -> its module (the runtime's make_module)
    error: LoaderError | None = None

    @property
    def handle(self) -> int:
        return ctypes.addressof(self.cell)

    def parsed(self) -> Binary:
        """The bundle's code objects (read and parsed once; a failure is remembered and raised again)."""
        if self.error is not None:
            raise self.error
        if self.binary is None:
            try:
                data = self.source() if callable(self.source) else self.source
                self.binary = load(data, origin=f"fat binary 0x{self.handle:x}")
            except LoaderError as exc:
                self.error = exc
                raise
        return self.binary
