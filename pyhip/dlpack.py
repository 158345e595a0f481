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


_PyCapsule_New = ctypes.pythonapi.PyCapsule_New
_PyCapsule_New.restype = ctypes.py_object
_PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]


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
    return _PyCapsule_New(ctypes.addressof(mt), b"dltensor", None)


def capsule_tensor(capsule) -> DLTensor:
    """Read a ``dltensor`` capsule back (for tests and consumers inside pyhip)."""
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype = ctypes.c_void_p
    get.argtypes = [ctypes.py_object, ctypes.c_char_p]
    return DLManagedTensor.from_address(get(capsule, b"dltensor")).dl_tensor
