"""Pointer arguments for Triton kernels.

Triton takes as a pointer argument any object with ``data_ptr()`` and a ``dtype`` (torch's names; a numpy
dtype works: Triton reads ``str(dtype)``).  pyhip's ``DeviceArray`` has both.  Other device buffers are
wrapped by :func:`tensor`: anything with ``__cuda_array_interface__`` (hip-python's and numba's device
arrays, CuPy), a ``__dlpack__`` exporter on a ROCm device, or an object with ``data_ptr()`` but no dtype."""
from __future__ import annotations

import numpy as np

from ..errors import HipError, hipError_t

kDLROCM = 10


class TritonPointer:
    """A device buffer as Triton sees a tensor: ``data_ptr()``, ``dtype`` (numpy), ``shape``.  Holds the
    object it came from so the memory stays alive while the wrapper does."""

    __slots__ = ("_ptr", "dtype", "shape", "base")

    def __init__(self, ptr: int, dtype, shape=(), base=None):
        self._ptr = int(ptr)
        self.dtype = np.dtype(dtype)
        self.shape = tuple(int(s) for s in shape)
        self.base = base

    def data_ptr(self) -> int:
        return self._ptr

    def __repr__(self) -> str:
        return f"<TritonPointer 0x{self._ptr:x} {self.dtype} {self.shape}>"


def _from_dlpack(obj) -> TritonPointer:
    from ..dlpack import capsule_tensor, release_tensor, tensor_dtype

    dev_type, _ = obj.__dlpack_device__()
    if dev_type != kDLROCM:
        raise HipError(hipError_t.hipErrorInvalidValue, f"DLPack device type {dev_type} is not ROCm ({kDLROCM})")
    t = capsule_tensor(obj.__dlpack__())
    try:
        shape = [t.shape[i] for i in range(t.ndim)]
        return TritonPointer(t.data + t.byte_offset, tensor_dtype(t), shape, base=obj)
    finally:
        release_tensor(t)


def tensor(obj, dtype=None) -> TritonPointer:
    """``obj`` as a Triton pointer argument; ``dtype`` overrides (or supplies) the element type."""
    cai = getattr(obj, "__cuda_array_interface__", None)
    if isinstance(cai, dict) and "data" in cai:
        return TritonPointer(cai["data"][0] or 0, dtype or np.dtype(cai["typestr"]), cai.get("shape", ()), obj)
    if hasattr(obj, "data_ptr"):
        dt = dtype if dtype is not None else getattr(obj, "dtype", None)
        if dt is None:
            raise HipError(hipError_t.hipErrorInvalidValue, f"{type(obj).__name__} has no dtype: pass dtype=")
        return TritonPointer(obj.data_ptr(), dt, getattr(obj, "shape", ()), obj)
    if hasattr(obj, "__dlpack__") and hasattr(obj, "__dlpack_device__"):
        p = _from_dlpack(obj)
        return p if dtype is None else TritonPointer(p.data_ptr(), dtype, p.shape, obj)
    raise HipError(hipError_t.hipErrorInvalidValue,
                   f"{type(obj).__name__} is not a device buffer (no data_ptr, __cuda_array_interface__ or DLPack)")
