"""How a launch argument's value is read: the one rule for every launch.

``read_arg(pk, value, where)`` says how the runtime reads a value for an explicit-argument slot of kind ``pk``
(kernargs.ParamKind): ``conv(value)`` gives an int (pointer and integer slots, untyped integers), a float
(float slots, untyped floats) or the bytes of an untyped argument; and ``by_type``: whether every object of
that type is read the same way, so that repeat launches (runtime/fastlaunch.py) may decide once per argument
type.  A slot refusing the value's kind raises HipError(hipErrorInvalidValue); value checks (ranges, sizes)
are kernargs.encode_arg's.
"""
from __future__ import annotations

import ctypes
import functools
import numbers
import operator

import numpy as np

from ..errors import HipError, hipError_t


def _bad(msg: str) -> HipError:
    return HipError(hipError_t.hipErrorInvalidValue, msg)


_CT_INTS = (ctypes.c_byte, ctypes.c_ubyte, ctypes.c_short, ctypes.c_ushort, ctypes.c_int, ctypes.c_uint,
            ctypes.c_long, ctypes.c_ulong, ctypes.c_longlong, ctypes.c_ulonglong, ctypes.c_bool)
_CT_FLOATS = (ctypes.c_float, ctypes.c_double)
_ct_value = operator.attrgetter("value")


def plain(t) -> bool:
    """Python's own numbers and numpy's scalar types: what ``struct`` reads from them (``__index__``,
    ``__float__``) is what ``int()`` / ``float()`` give."""
    return t in (int, bool, float) or (issubclass(t, (np.number, np.bool_)) and t.__module__ == "numpy")


def _zero(value) -> int:
    return 0


def _hip_pointer(value) -> int:
    return int(value.__hip_pointer__())


def _ptr_attr(value) -> int:
    return int(value.ptr)


def _void_p(value) -> int:
    return value.value or 0


def _ct_bytes(value) -> bytes:
    return bytes(memoryview(value).cast("B"))


def _np_bytes(value) -> bytes:
    return np.asarray(value).tobytes()


def half_bytes(value) -> bytes:
    return np.float16(value).tobytes()


@functools.lru_cache(maxsize=256)
def _address_getter(t):
    """The ``__hip_address__`` of the class that defines ``t``'s ``__hip_pointer__`` (a subclass overriding
    ``__hip_pointer__`` does not inherit its parent's getter), or None."""
    for k in t.__mro__:
        if "__hip_pointer__" in vars(k):
            return vars(k).get("__hip_address__")
    return None


def pointer_reader(value, where: str):
    """``(conv, by_type)`` for a device pointer; HipError when ``value`` is no pointer."""
    if value is None:
        return _zero, True
    if isinstance(value, (bool, np.bool_)) or isinstance(value, (float, np.floating)):
        raise _bad(f"{where}: expected a device pointer, got {type(value).__name__}")
    if isinstance(value, (int, np.integer)):
        return int, plain(type(value))
    if hasattr(value, "__hip_pointer__"):
        # a type may name a C-level getter giving what its __hip_pointer__ gives (``__hip_address__``, an
        # operator.attrgetter): a repeat launch then reads the address without a Python frame
        return _address_getter(type(value)) or _hip_pointer, hasattr(type(value), "__hip_pointer__")
    if isinstance(value, ctypes.c_void_p):
        return _void_p, True
    if hasattr(value, "ptr"):              # DeviceArray and friends
        return _ptr_attr, False
    if hasattr(value, "__int__") and not isinstance(value, (str, bytes)):
        return int, False
    raise _bad(f"{where}: expected a device pointer, got {type(value).__name__}")


def read_arg(pk, value, where: str):
    """``(conv, by_type)`` for ``value`` in a slot of kind ``pk`` (a kernargs.ParamKind); HipError when the slot refuses
    the value's kind."""
    if pk.kind == "pointer":
        return pointer_reader(value, where)
    if pk.kind == "float":
        if isinstance(value, np.floating) and value.dtype.itemsize != pk.size:
            raise _bad(f"{where}: {pk.ctype} parameter given a {value.dtype} ({value.dtype.itemsize} bytes)")
        if isinstance(value, _CT_FLOATS):
            if ctypes.sizeof(value) != pk.size:
                raise _bad(f"{where}: {pk.ctype} parameter given a {type(value).__name__} "
                           f"({ctypes.sizeof(value)} bytes)")
            return _ct_value, True
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
            raise _bad(f"{where}: {pk.ctype} parameter given {type(value).__name__}")
        return float, plain(type(value))
    if pk.kind == "int":
        if isinstance(value, _CT_INTS):
            return _ct_value, True
        if isinstance(value, (float, np.floating)) or not isinstance(value, (numbers.Integral, np.integer)):
            raise _bad(f"{where}: {pk.ctype or 'integer'} parameter given {type(value).__name__}")
        return int, plain(type(value))
    # unknown type (extern "C" by-value, structs): bytes-like of the exact size, or a scalar that fits
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes, False                 # its length is the value's
    if isinstance(value, np.ndarray) or isinstance(value, np.generic):
        return _np_bytes, isinstance(value, (np.number, np.bool_)) and plain(type(value))
    if hasattr(value, "_type_") or hasattr(value, "_fields_"):   # ctypes objects
        return _ct_bytes, hasattr(type(value), "_type_") or hasattr(type(value), "_fields_")
    if isinstance(value, (bool, np.bool_)):
        return int, type(value) is bool
    if isinstance(value, numbers.Integral):
        return int, plain(type(value))
    if isinstance(value, numbers.Real):
        return float, plain(type(value))
    if pk.size != 8:
        return (lambda v: b""), False       # refused below by its size
    conv, by_type = pointer_reader(value, where)
    return (lambda v: checked_pointer(conv(v), where).to_bytes(8, "little")), by_type


def checked_pointer(v: int, where: str) -> int:
    if not 0 <= v < 1 << 64:
        raise _bad(f"{where}: pointer value out of range")
    return v
