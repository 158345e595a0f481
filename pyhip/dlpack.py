"""DLPack export (``__dlpack__``) of device arrays: a ``dltensor`` PyCapsule built with ctypes."""
from __future__ import annotations

import ctypes

import numpy as np


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int), ("device_id", ctypes.c_int)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int),
                ("dtype", DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class DLManagedTensor(ctypes.Structure):
    pass


_DELETER = ctypes.CFUNCTYPE(None, ctypes.POINTER(DLManagedTensor))
DLManagedTensor._fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", _DELETER)]

_KIND = {"i": 0, "u": 1, "f": 2, "b": 6, "c": 5}
_alive: dict[int, tuple] = {}


@_DELETER
def _deleter(ptr):
    _alive.pop(ctypes.addressof(ptr.contents), None)


_CAPSULE_DESTRUCTOR = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


def _api(name, restype, *argtypes):
    """A private prototype of a C-API function (``ctypes.pythonapi.X`` is shared: setting its argtypes
    would change them for every other user in the process)."""
    return ctypes.PYFUNCTYPE(restype, *argtypes)((name, ctypes.pythonapi))


_PyCapsule_New = _api("PyCapsule_New", ctypes.py_object, ctypes.c_void_p, ctypes.c_char_p, _CAPSULE_DESTRUCTOR)
_PyCapsule_IsValid = _api("PyCapsule_IsValid", ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p)
_PyCapsule_GetPointer = _api("PyCapsule_GetPointer", ctypes.c_void_p, ctypes.c_void_p, ctypes.c_char_p)
_GetPointer = _api("PyCapsule_GetPointer", ctypes.c_void_p, ctypes.py_object, ctypes.c_char_p)
_SetName = _api("PyCapsule_SetName", ctypes.c_int, ctypes.py_object, ctypes.c_char_p)


@_CAPSULE_DESTRUCTOR
def _capsule_destructor(capsule):
    # DLPack protocol: a consumer renames the capsule to "used_dltensor" and owns the tensor from then on;
    # a capsule dropped while still named "dltensor" was never consumed, so its tensor is released here
    if _PyCapsule_IsValid(capsule, b"dltensor"):
        _deleter(ctypes.cast(_PyCapsule_GetPointer(capsule, b"dltensor"), ctypes.POINTER(DLManagedTensor)))


def to_capsule(address: int, shape, dtype, device_type: int, device_id: int, keepalive=None):
    dtype = np.dtype(dtype)
    if dtype.kind not in _KIND:
        raise TypeError(f"dtype {dtype} has no DLPack equivalent")
    shape_arr = (ctypes.c_int64 * len(shape))(*shape)
    mt = DLManagedTensor()
    mt.dl_tensor.data = address
    mt.dl_tensor.device = DLDevice(device_type, device_id)
    mt.dl_tensor.ndim = len(shape)
    mt.dl_tensor.dtype = DLDataType(_KIND[dtype.kind], dtype.itemsize * 8, 1)
    mt.dl_tensor.shape = shape_arr
    mt.dl_tensor.strides = None
    mt.dl_tensor.byte_offset = 0
    mt.deleter = _deleter
    _alive[ctypes.addressof(mt)] = (mt, shape_arr, keepalive)
    return _PyCapsule_New(ctypes.addressof(mt), b"dltensor", _capsule_destructor)


def capsule_tensor(capsule) -> DLTensor:
    """Consume a ``dltensor`` capsule (for tests and consumers inside pyhip): renamed "used_dltensor" as
    the protocol requires, so the tensor stays valid after the capsule is gone, until the consumer calls
    ``release_tensor`` with it."""
    mt = DLManagedTensor.from_address(_GetPointer(capsule, b"dltensor"))
    _SetName(capsule, b"used_dltensor")
    return mt.dl_tensor


def tensor_dtype(tensor: DLTensor) -> np.dtype:
    """The numpy dtype of a DLTensor's (code, bits) (single-lane types only)."""
    kind = {v: k for k, v in _KIND.items()}.get(tensor.dtype.code)
    if kind is None or tensor.dtype.lanes != 1:
        raise TypeError(f"DLPack dtype code {tensor.dtype.code} x{tensor.dtype.lanes} has no numpy equivalent")
    return np.dtype("?" if kind == "b" else f"{kind}{tensor.dtype.bits // 8}")


def release_tensor(tensor: DLTensor) -> None:
    """The consumer's side of the protocol: call the managed tensor's deleter once done with it."""
    mt = DLManagedTensor.from_address(ctypes.addressof(tensor))
    mt.deleter(ctypes.pointer(mt))
