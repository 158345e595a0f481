"""hip-python's pointer types (``hip._util.types``): ``Pointer``, ``CStr``, ``NDBuffer``/``DeviceArray`` (what
``hipMalloc`` returns: ``configure(typestr, shape)``, ``itemsize``, indexing, ``__cuda_array_interface__``),
``ListOfBytes``/``ListOfPointer``, and the ``extra`` packing of ``hipModuleLaunchKernel``.

Every type here speaks pyhip's ``__hip_pointer__`` protocol, so the runtime takes them wherever it takes an
address.  Device addresses are the emulated GPU's; host addresses are real (buffers are pinned by a reference
for as long as the wrapper lives).
"""
from __future__ import annotations

import ctypes
import math
import operator

import numpy as np

NULL = 0


def buffer_address(obj) -> int:
    """Address of the first byte of a simple, contiguous buffer (bytes, bytearray, numpy, array.array...)."""
    mv = memoryview(obj)
    if not mv.contiguous:
        raise RuntimeError("failed to create simple, contiguous Py_buffer from Python object")
    if mv.nbytes == 0:
        return 0
    return np.frombuffer(mv.cast("B") if mv.ndim != 1 or mv.format != "B" else mv, np.uint8).ctypes.data


def _is_buffer(obj) -> bool:
    try:
        memoryview(obj)
    except TypeError:
        return False
    return True


_CTYPES_DATA = (ctypes.Array, ctypes.Structure, ctypes.Union, ctypes._SimpleCData)


def address_of(pyobj) -> int:
    """hip-python's ``Pointer.init_from_pyobj`` order: None, ctypes.c_void_p, buffer, CUDA array interface,
    Pointer, int, ``as_c_void_p()``; pyhip pointers (``__hip_pointer__``) before the buffer check."""
    if pyobj is None:
        return NULL
    if isinstance(pyobj, ctypes.c_void_p):
        return pyobj.value or NULL
    if hasattr(pyobj, "__hip_pointer__"):
        return int(pyobj.__hip_pointer__())
    if isinstance(pyobj, (int, np.integer)) and not isinstance(pyobj, bool):
        return int(pyobj)
    if isinstance(pyobj, _CTYPES_DATA):       # a buffer: its own memory (what buffer_address finds, faster)
        return ctypes.addressof(pyobj) if ctypes.sizeof(pyobj) else NULL
    if _is_buffer(pyobj):
        return buffer_address(pyobj)
    cai = getattr(pyobj, "__cuda_array_interface__", None)
    if cai is not None:
        if "data" not in cai:
            raise ValueError("input object has '__cuda_array_interface__' attribute but the dict has no 'data' key")
        return int(cai["data"][0] or 0)
    if hasattr(pyobj, "as_c_void_p"):
        return pyobj.as_c_void_p().value or NULL
    raise TypeError(f"unsupported input type: '{type(pyobj)}'")


class Pointer:
    """``hip._util.types.Pointer``: a ``void*`` from None, ``ctypes.c_void_p``, a buffer (its data, kept
    alive), a CUDA-array-interface object, another Pointer, an int, or anything with ``as_c_void_p()``."""

    __slots__ = ("_ptr", "_keep", "__weakref__", "__dict__")

    def __init__(self, pyobj=None):
        self._ptr = address_of(pyobj)
        self._keep = pyobj

    @classmethod
    def fromObj(cls, pyobj):
        return pyobj if isinstance(pyobj, cls) else cls(pyobj)

    @classmethod
    def fromPtr(cls, ptr: int):
        p = cls.__new__(cls)
        Pointer.__init__(p, int(ptr))
        return p

    def createRef(self) -> "Pointer":
        """A Pointer to a cell holding this pointer's address (a ``void**``)."""
        cell = ctypes.c_void_p(self._ptr or None)
        ref = Pointer(ctypes.addressof(cell))
        ref._keep = (cell, self)
        return ref

    @property
    def is_ptr_null(self) -> bool:
        return self._ptr == NULL

    def __bool__(self) -> bool:
        return self._ptr != NULL

    def __int__(self) -> int:
        return self._ptr

    def __hip_pointer__(self) -> int:
        return self._ptr

    __hip_address__ = operator.attrgetter("_ptr")      # the same, read in C (runtime/argreaders.py)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} object, _ptr={self._ptr}>"

    def as_c_void_p(self) -> ctypes.c_void_p:
        return ctypes.c_void_p(self._ptr)

    def __getitem__(self, offset):
        if isinstance(offset, int):
            if offset < 0:
                raise ValueError(f"offset='{offset}' must be non-negative")
            p = Pointer(self._ptr + offset)
            p._keep = self
            return p
        raise NotImplementedError("'__getitem__': not implemented for other 'offset' types than 'int'")


class HostMemory(Pointer):
    """What ``hipHostMalloc`` returns: a Pointer to pinned host memory (a real host address, mapped into every
    emulated device); pyhip adds ``.array`` (a numpy uint8 view), ``.size`` (bytes) and ``.device``."""

    def __init__(self, host_pointer):
        super().__init__(int(host_pointer))
        self._keep = host_pointer
        self.array = host_pointer.array
        self.size = host_pointer.size
        self.device = host_pointer.device


class CStr(bytes):
    """``hip._util.types.CStr`` as returned by ``hipGetErrorName``, ``hiprtcGetLoweredName``...: the bytes of a
    C string; ``str()`` and ``repr()`` decode it as UTF-8, indexing gives characters, ``int()`` is the address
    of its NUL-terminated copy."""

    def __new__(cls, value=b""):
        if isinstance(value, str):
            value = value.encode()
        self = super().__new__(cls, bytes(value).split(b"\0", 1)[0])
        self._buf = ctypes.create_string_buffer(bytes(self))
        return self

    def __str__(self) -> str:
        return bytes(self).decode("utf-8")

    __repr__ = __str__

    def __getitem__(self, subscript):
        return str(self)[subscript]

    def __int__(self) -> int:
        return ctypes.addressof(self._buf)

    __hip_pointer__ = __int__

    def as_c_void_p(self) -> ctypes.c_void_p:
        return ctypes.c_void_p(int(self))

    @property
    def is_ptr_null(self) -> bool:
        return False

    def encode(self, encoding="utf-8", errors="strict") -> bytes:
        return str(self).encode(encoding, errors)


def as_name(obj) -> str:
    """A ``const char*`` argument (CStr adapter): bytes, a CStr, a buffer, an address; pyhip also takes str."""
    if isinstance(obj, str):
        return obj
    if isinstance(obj, (bytes, bytearray, memoryview)):
        return bytes(obj).split(b"\0", 1)[0].decode("utf-8")
    if obj is None:
        raise TypeError("expected a C string, got None")
    addr = address_of(obj)
    if not addr:
        raise ValueError("null C string")
    return ctypes.string_at(addr).decode("utf-8")


def list_of_bytes(pyobj, count: int | None = None) -> list[bytes]:
    """``ListOfBytes``: a list/tuple of bytes (or CStr; pyhip also takes str), or the address of a
    ``const char*[count]`` array."""
    if pyobj is None:
        return []
    if isinstance(pyobj, (list, tuple)):
        out = []
        for entry in pyobj:
            if isinstance(entry, str):
                entry = entry.encode()
            if not isinstance(entry, (bytes, bytearray)):
                raise ValueError("elements of list/tuple input must be of type 'bytes'")
            out.append(bytes(entry).split(b"\0", 1)[0])
        return out[:count] if count is not None else out
    addr = address_of(pyobj)
    if count is None or addr == 0:
        return []
    ptrs = (ctypes.c_void_p * count).from_address(addr)
    return [ctypes.string_at(p) if p else b"" for p in ptrs]


def list_of_pointers(pyobj, count: int | None = None) -> list[int]:
    """``ListOfPointer``: a list/tuple of pointer-likes, or the address of a ``void*[count]`` array."""
    if pyobj is None:
        return []
    if isinstance(pyobj, (list, tuple)):
        return [address_of(e) for e in pyobj]
    addr = address_of(pyobj)
    if count is None or addr == 0:
        return []
    return [p or 0 for p in (ctypes.c_void_p * count).from_address(addr)]


# -- device arrays ------------------------------------------------------------------------------------------
_ITEMSIZE = {}
for _codes, _n in ((("?", "bool", "bool_", "bool8"), 1), (("uint8", "u1", "byte", "b", "ubyte", "B", "int8", "i1"), 1),
                   (("uint16", "u2", "int16", "i2", "short", "h", "ushort", "H", "float16", "f2", "half", "e"), 2),
                   (("uint32", "u4", "int32", "i4", "intc", "i", "uintc", "I", "float32", "f4", "single", "f"), 4),
                   (("uint64", "u8", "int64", "i8", "intp", "int0", "p", "uintp", "uint0", "P", "long", "int",
                     "int_", "l", "ulong", "uint", "L", "longlong", "q", "ulonglong", "Q", "float64", "f8", "double",
                     "float", "float_", "d", "complex64", "c8", "csingle", "singlecomplex", "F"), 8),
                   (("complex128", "c16", "cdouble", "complex", "complex_", "cfloat", "D", "longdouble", "longfloat",
                     "g"), 16),
                   (("clongdouble", "clongfloat", "longcomplex", "G"), 32)):
    for _c in _codes:
        _ITEMSIZE[_c] = _n
        if len(_c) <= 3 and _c[0] not in "=<>":
            for _p in "=<>":
                _ITEMSIZE[_p + _c] = _n
NUMPY_CHAR_CODES = tuple(_ITEMSIZE) + ("str", "str_", "str0", "unicode", "unicode_", "U", "bytes", "bytes_", "bytes0",
                                       "S", "void", "void0", "V", "object", "object_", "O", "datetime64")


class NDBuffer(Pointer):
    """``hip._util.types.NDBuffer``: a contiguous n-dimensional view (shape, typestr, itemsize) of memory,
    with the CUDA array interface and numpy-like contiguous indexing."""

    NUMPY_CHAR_CODES = NUMPY_CHAR_CODES

    def __init__(self, pyobj=None):
        self._itemsize = 1
        self.__dict__["__cuda_array_interface__"] = dict(shape=(1,), typestr="B", data=(None, False), strides=None,
                                                         offset=0, mask=None, version=3, stream=None)
        buffer = type(pyobj) is not int and _is_buffer(pyobj)     # (an address: no failed memoryview to raise)
        cai = getattr(pyobj, "__cuda_array_interface__", None) if not buffer else None
        super().__init__(pyobj)
        if pyobj is not None and buffer and not isinstance(pyobj, ctypes.c_void_p):
            mv = memoryview(pyobj)
            self.configure(_force=True, typestr=mv.format or "B", itemsize=mv.itemsize, shape=tuple(mv.shape),
                           read_only=bool(mv.readonly))
        elif cai is not None:
            if cai.get("strides") is not None:
                raise RuntimeError("CUDA array interface is not contiguous")
            self._itemsize = getattr(pyobj, "_itemsize", _ITEMSIZE.get(cai.get("typestr"), 1))
            self.__dict__["__cuda_array_interface__"].update(shape=tuple(cai["shape"]), typestr=cai["typestr"])
        self._sync()

    def _sync(self) -> None:
        cai = self.__dict__["__cuda_array_interface__"]
        cai["data"] = (self._ptr, cai["data"][1])

    @property
    def __cuda_array_interface__(self) -> dict:
        self._sync()
        return self.__dict__["__cuda_array_interface__"]

    @property
    def typestr(self):
        return self.__dict__["__cuda_array_interface__"]["typestr"]

    @property
    def shape(self) -> tuple:
        return self.__dict__["__cuda_array_interface__"]["shape"]

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def itemsize(self) -> int:
        return self._itemsize

    @property
    def is_read_only(self) -> bool:
        return self.__dict__["__cuda_array_interface__"]["data"][1]

    @property
    def stream_as_int(self):
        return self.__dict__["__cuda_array_interface__"]["stream"]

    @property
    def rank(self) -> int:
        return sum(1 for r in self.shape if r > 1)

    def __repr__(self) -> str:
        return (f"<{type(self).__name__} object, _ptr={self._ptr}, typestr={self.typestr}, itemsize={self.itemsize}, "
                f"shape={self.shape}, is_read_only={self.is_read_only}, stream={self.stream_as_int}>")

    def configure(self, **kwargs):
        """(Re)configure shape, typestr, itemsize, stream, read_only; ``_force=True`` allows changing the
        number of bytes described (hip-python's ``NDBuffer.configure``)."""
        supported = ["shape", "typestr", "stream", "itemsize", "read_only", "_force"]
        for k in kwargs:
            if k not in supported:
                raise KeyError("allowed keyword arguments are: " + ", ".join(f"'{e}'" for e in supported))
        cai = self.__dict__["__cuda_array_interface__"]
        force = kwargs.get("_force", False)
        shape = old_shape = cai["shape"]
        itemsize = -1
        if "shape" in kwargs:
            shape = tuple(kwargs["shape"])
            if not len(shape):
                raise ValueError("'shape': must have at least one entry")
            if not all(isinstance(i, int) for i in shape):
                raise TypeError("'shape': entries must be int")
        if "typestr" in kwargs:
            typestr = kwargs["typestr"]
            cai["typestr"] = typestr
            itemsize = _ITEMSIZE.get(typestr, -1)
            if itemsize < 0:
                if typestr not in NUMPY_CHAR_CODES:
                    raise ValueError(f"'typestr': value '{typestr}' is not a valid numpy char code. See class "
                                     "attributes 'NUMPY_CHAR_CODES' for valid expressions.")
                if "itemsize" not in kwargs:
                    raise ValueError(f"'typestr': value '{typestr}' could not be mapped to a number of bytes. Please "
                                     "additionally specify 'itemsize'.")
        if "itemsize" in kwargs:
            itemsize = kwargs["itemsize"]
            if not isinstance(itemsize, int):
                raise TypeError("'itemsize': must be int")
            if itemsize <= 0:
                raise ValueError("'itemsize': must be positive int")
        if "stream" in kwargs:
            stream = kwargs["stream"]
            if isinstance(stream, int):
                if stream == 0:
                    raise ValueError("'stream': value '0' is disallowed as it would be ambiguous between None and "
                                     "the default stream")
                if stream < 0:
                    raise ValueError("'stream': expected positive integer")
                cai["stream"] = stream
            else:
                cai["stream"] = int(stream) if stream is not None else None
        if "read_only" in kwargs:
            if not isinstance(kwargs["read_only"], bool):
                raise ValueError("'read_only:' expected bool")
            cai["data"] = (cai["data"][0], kwargs["read_only"])
        if itemsize > 0 or shape != old_shape:
            if itemsize < 0:
                itemsize = self._itemsize
            old_bytes, new_bytes = self._itemsize * math.prod(old_shape), itemsize * math.prod(shape)
            if old_bytes != new_bytes and not force:
                raise ValueError(f"new shape would change buffer size information: {old_bytes} B -> {new_bytes} B. "
                                 "Additionaly specify `_force=True` if this is intended.")
            self._itemsize = itemsize
            cai["shape"] = shape
        return self

    @staticmethod
    def _axis(spec, dim: int):
        if isinstance(spec, int):
            if spec < 0:
                raise ValueError(f"subscript='{spec}' must be non-negative.")
            if spec >= dim:
                raise ValueError(f"subscript='{spec}' must be smaller than axis' exclusive upper bound ('{dim}')")
            return spec, spec + 1, False
        if spec.step not in (None, 1):
            raise ValueError(f"subscript's step='{spec.step}' must be 'None' or '1'.")
        stop = dim if spec.stop is None else spec.stop
        if spec.stop is not None and (stop <= 0 or stop > dim):
            raise ValueError(f"subscript's stop='{spec.stop}' must be in (0, {dim}].")
        start = 0 if spec.start is None else spec.start
        if spec.start is not None and not 0 <= start < dim:
            raise ValueError(f"subscript's start='{spec.start}' must be in [0, {dim}).")
        if start >= stop:
            raise ValueError(f"subscript's stop='{spec.stop}' must be greater than subscript's start='{spec.start}'")
        return start, stop, start == 0 and stop == dim

    def __getitem__(self, subscript):
        """A contiguous sub-array (row-major); ``[i]`` is ``[i, :, ..., :]``; ValueError if the subscripts do
        not select a contiguous region."""
        shape = self.shape
        if isinstance(subscript, tuple):
            subs = list(subscript)
        elif isinstance(subscript, (slice, int)):
            subs = [subscript]
        else:
            raise TypeError(f"subscript type='{type(subscript)}' is none of: 'slice', 'int', 'tuple'")
        if len(subs) > len(shape):
            raise IndexError(f"too many indices specified, maximum number of indices that can be specified is "
                             f"{len(shape)}")
        subs += [slice(None)] * (len(shape) - len(subs))
        stride, offset, contiguous, result = 1, 0, True, []
        for i in reversed(range(len(shape))):
            spec = subs[i]
            if isinstance(spec, int) and not isinstance(spec, bool):
                start, stop, _ = self._axis(spec, shape[i])
                contiguous = False
            elif isinstance(spec, slice):
                if not contiguous:
                    raise ValueError(f"subscript='{subs}' yields no contiguous subarray")
                start, stop, full = self._axis(spec, shape[i])
                contiguous = full
            else:
                raise TypeError(f"subscript tuple entry type='{type(spec)}' is none of: 'slice', 'int'")
            result.append(stop - start)
            offset += start * stride
            stride *= shape[i]
        sub = self._view(self._ptr + offset * self._itemsize)
        # hip-python (5.4.3 .. 6.2) lists the extents innermost axis first: x[1, :] of a (3, 20) array has shape
        # (20, 1).  Kept as is, so scripts written against hip-python see the same shapes.
        return sub.configure(_force=True, typestr=self.typestr, itemsize=self.itemsize, shape=tuple(result),
                             read_only=self.is_read_only)

    def _view(self, ptr: int) -> "NDBuffer":
        sub = NDBuffer.fromPtr(ptr)
        sub._keep = self
        return sub

    @classmethod
    def fromPtr(cls, ptr: int):
        p = cls.__new__(cls)
        NDBuffer.__init__(p, int(ptr))
        return p


class DeviceArray(NDBuffer):
    """``hip._util.types.DeviceArray``: device memory from ``hipMalloc`` and friends (configured as
    ``shape=(nbytes,)`` of ``'B'``); indexing gives device sub-arrays; ``int()`` is the device address."""

    def __init__(self, pyobj=None):
        super().__init__(pyobj)
        self.device = getattr(pyobj, "device", None)

    @classmethod
    def from_allocation(cls, ptr) -> "DeviceArray":
        """Wrap a runtime allocation (a DevicePointer) the way hipMalloc returns it."""
        arr = cls.__new__(cls)
        NDBuffer.__init__(arr, int(ptr))
        arr.device = getattr(ptr, "device", None)
        arr._keep = ptr
        # what configure(_force=True, shape=(size,)) does with one int, without its checks (per hipMalloc)
        arr.__dict__["__cuda_array_interface__"]["shape"] = (int(getattr(ptr, "size", 0) or 0),)
        return arr

    def _view(self, ptr: int) -> "DeviceArray":
        sub = DeviceArray.fromPtr(ptr)
        sub.device, sub._keep = self.device, self
        return sub

    @classmethod
    def fromPtr(cls, ptr: int):
        p = cls.__new__(cls)
        NDBuffer.__init__(p, int(ptr))
        p.device = None
        return p
