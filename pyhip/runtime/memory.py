"""Pointers and memory operations of the runtime: hipMalloc'd device memory, pinned host memory,
copies in every direction (numpy arrays or any buffer on the host side) and fills, in stream order."""
from __future__ import annotations

import ctypes
import operator

import numpy as np

from .._hip_enums import hipMemcpyKind
from ..errors import HipError, hipError_t


class DevicePointer:
    """A device address (usable with ``int()``; plain ints are accepted wherever a pointer is)."""

    __slots__ = ("value", "device", "size", "__weakref__")

    def __init__(self, value: int, device=None, size: int = 0):
        self.value, self.device, self.size = int(value), device, size

    def __int__(self) -> int:
        return self.value

    __index__ = __int__

    def __hip_pointer__(self) -> int:
        return self.value

    __hip_address__ = operator.attrgetter("value")     # the same, read in C (runtime/argreaders.py)

    def __add__(self, off: int) -> "DevicePointer":
        return DevicePointer(self.value + int(off), self.device)

    def __eq__(self, other) -> bool:
        try:
            return int(other) == self.value
        except (TypeError, ValueError):
            return NotImplemented

    def __hash__(self) -> int:
        return hash(self.value)

    def __repr__(self) -> str:
        return f"<DevicePointer 0x{self.value:x}>"


class HostPointer(DevicePointer):
    """Pinned host memory (hipHostMalloc): a numpy view for the host, an address for kernels."""

    __slots__ = ("array",)

    def __init__(self, value: int, device, size: int, array: np.ndarray):
        super().__init__(value, device, size)
        self.array = array

    def __repr__(self) -> str:
        return f"<HostPointer 0x{self.value:x} ({self.size} bytes)>"


def as_address(p) -> int | None:
    """Device address of a pointer-like value, or None if it is a host buffer.  Pointer-likes: ints,
    DevicePointer, ``__hip_pointer__``, ``ctypes.c_void_p`` (before the buffer check: ctypes objects are
    buffers too), CUDA-array-interface objects, anything with ``as_c_void_p()``."""
    if p is None:
        return 0
    if isinstance(p, (int, np.integer)) and not isinstance(p, bool):
        return int(p)
    if isinstance(p, DevicePointer):
        return p.value
    if hasattr(p, "__hip_pointer__"):
        return int(p.__hip_pointer__())
    if isinstance(p, ctypes.c_void_p):
        return p.value or 0
    cai = getattr(p, "__cuda_array_interface__", None)
    if isinstance(cai, dict) and "data" in cai:
        return int(cai["data"][0] or 0)
    if hasattr(p, "as_c_void_p"):
        return p.as_c_void_p().value or 0
    return None


def host_view(buf, nbytes: int, writable: bool) -> memoryview:
    """A byte view of a host buffer (numpy array, bytes, bytearray, memoryview, ctypes...)."""
    try:
        mv = memoryview(buf)
    except TypeError:
        raise HipError(hipError_t.hipErrorInvalidValue, f"{type(buf).__name__} is neither a pointer nor a buffer") from None
    if not mv.contiguous:
        raise HipError(hipError_t.hipErrorInvalidValue, "host buffer is not contiguous")
    mv = mv.cast("B") if mv.format != "B" or mv.ndim != 1 else mv
    if writable and mv.readonly:
        raise HipError(hipError_t.hipErrorInvalidValue, "destination host buffer is read-only")
    if nbytes > mv.nbytes:
        raise HipError(hipError_t.hipErrorInvalidValue, f"copy of {nbytes} bytes overruns a {mv.nbytes}-byte host buffer")
    return mv[:nbytes]


def classify_copy(dst, src, kind: int):
    """Return ``(dst_addr or None, src_addr or None)``.  Like ROCm 5.2 the direction comes from the
    pointers, not from ``kind``; ``kind`` must be a hipMemcpyKind, and a copy between two host buffers needs
    hipMemcpyHostToHost or hipMemcpyDefault (ops.memcpy checks that once it knows which side is device)."""
    try:
        hipMemcpyKind(int(kind))
    except ValueError:
        raise HipError(hipError_t.hipErrorInvalidMemcpyDirection, f"invalid hipMemcpyKind {kind}") from None
    return as_address(dst), as_address(src)
