"""hip-python's struct types (``hip.hip.hipDeviceProp_t``, ``hipFuncAttributes``, ``hipPointerAttribute_t``,
``dim3``, ...): real C memory with HIP 5.2's layout (pyhip/hip/_struct_layouts.py, generated from the headers),
filled in place by the API (``hipGetDeviceProperties(prop, 0)``).

Like hip-python: ``T()`` allocates zeroed memory (``dim3`` defaults to 1,1,1), ``T(*values, **fields)`` sets
fields in declaration order or by name; ``PROPERTIES()`` lists the fields; ``t[i]`` is the i-th property (so
``*dim3(4)`` unpacks); ``char`` arrays read as ``bytes``, other arrays as lists, enum fields as their enum,
pointer fields as ``Pointer``, nested structs as views; ``int(t)`` is the address; ``T.fromObj(x)`` views
memory at an address / buffer / Pointer.
"""
from __future__ import annotations

import ctypes

from .. import _hip_enums
from ._struct_layouts import RECORDS
from .conventions import int_converter
from .pointers import Pointer, address_of

_SCALARS = {
    "char": ctypes.c_char, "signed char": ctypes.c_byte, "unsigned char": ctypes.c_ubyte, "_Bool": ctypes.c_bool,
    "bool": ctypes.c_bool, "short": ctypes.c_short, "unsigned short": ctypes.c_ushort, "int": ctypes.c_int,
    "unsigned int": ctypes.c_uint, "long": ctypes.c_long, "unsigned long": ctypes.c_ulong,
    "long long": ctypes.c_longlong, "unsigned long long": ctypes.c_ulonglong, "float": ctypes.c_float,
    "double": ctypes.c_double, "pointer": ctypes.c_void_p,
}
_INT_FIELDS = ("short", "unsigned short", "int", "unsigned int", "long", "unsigned long", "long long",
               "unsigned long long", "unsigned char", "signed char")
DEFAULTS = {"dim3": {"x": 1, "y": 1, "z": 1}}      # C++ default member initialisers (hip-python sets them too)

_ctypes: dict[str, type] = {}
classes: dict[str, type] = {}


def _enum(name: str):
    return getattr(_hip_enums, name, None)


def _ctype_of(ftype: str):
    if ftype.startswith("record "):
        return ctypes_type(ftype[7:])
    if ftype.startswith("enum "):
        e = _enum(ftype[5:])
        return e.ctypes_type() if e is not None else ctypes.c_int
    return _SCALARS[ftype]


def ctypes_type(name: str) -> type:
    """The ctypes Structure/Union for a HIP record, built from the generated layout."""
    t = _ctypes.get(name)
    if t is None:
        kind, size, fields = RECORDS[name]
        base = ctypes.Union if kind == "union" else ctypes.Structure
        spec = []
        for fname, ftype, arr, _off, bits in fields:
            ct = _ctype_of(ftype)
            if arr:
                ct = ct * arr
            spec.append((fname, ct, bits[1]) if bits else (fname, ct))
        t = type(name, (base,), {"_fields_": spec})
        _ctypes[name] = t
    return t


class Struct:
    """Base of the struct wrappers: ``_obj`` is the ctypes view of the C memory."""

    _name = ""
    __slots__ = ("_obj", "_keep", "__weakref__")

    def __init__(self, *args, **kwargs):
        self._obj = ctypes_type(self._name)()
        self._keep = None
        for k, v in DEFAULTS.get(self._name, {}).items():
            setattr(self, k, v)
        props = self.PROPERTIES()
        if len(args) > len(props):
            raise ValueError("More positional arguments specified than this type has properties.")
        used = set()
        for k, v in zip(props, args):
            setattr(self, k, v)
            used.add(k)
        for k, v in kwargs.items():
            if k in used:
                raise KeyError(f"argument '{k}' has already been specified as positional argument.")
            if k not in props:
                raise KeyError(f"'{k}' is no valid property name. Valid names: " + ", ".join(f"'{p}'" for p in props))
            setattr(self, k, v)

    @classmethod
    def PROPERTIES(cls) -> list[str]:
        return [f[0] for f in RECORDS[cls._name][2]]

    @classmethod
    def _view(cls, obj, keep=None):
        s = cls.__new__(cls)
        s._obj, s._keep = obj, keep
        return s

    @classmethod
    def fromObj(cls, pyobj):
        """The struct itself, or a view of the struct at an address (int, Pointer, ctypes.c_void_p, buffer)."""
        if isinstance(pyobj, cls):
            return pyobj
        if isinstance(pyobj, ctypes_type(cls._name)):
            return cls._view(pyobj, pyobj)
        addr = address_of(pyobj)
        if not addr:
            raise ValueError(f"{cls._name}: NULL pointer")
        try:
            size = memoryview(pyobj).nbytes
        except TypeError:
            size = None
        if size is not None and size < ctypes.sizeof(ctypes_type(cls._name)):
            raise ValueError(f"{cls._name}: buffer of {size} bytes is smaller than the struct")
        return cls._view(ctypes_type(cls._name).from_address(addr), pyobj)

    def c_sizeof(self) -> int:
        return ctypes.sizeof(self._obj)

    def __int__(self) -> int:
        return ctypes.addressof(self._obj)

    __hip_pointer__ = __int__

    def as_c_void_p(self) -> ctypes.c_void_p:
        return ctypes.c_void_p(int(self))

    def createRef(self) -> Pointer:
        return Pointer(int(self)).createRef()

    def __bytes__(self) -> bytes:
        return ctypes.string_at(int(self), self.c_sizeof())

    def __repr__(self) -> str:
        return f"<{self._name} object, ptr: {int(self)}>"

    def __contains__(self, item) -> bool:
        return item in self.PROPERTIES()

    def __getitem__(self, item):
        props = self.PROPERTIES()
        if isinstance(item, int):
            if item < 0 or item >= len(props):
                raise IndexError()
            return getattr(self, props[item])
        raise ValueError("'item' type must be 'int'")

    def __len__(self) -> int:
        return len(self.PROPERTIES())


def _field_property(fname: str, ftype: str, arr: int):
    if ftype.startswith("record "):
        sub = ftype[7:]

        def get(self):
            return classes[sub]._view(getattr(self._obj, fname), self)

        def set_(self, value):
            src = classes[sub].fromObj(value)
            setattr(self._obj, fname, src._obj)
    elif arr and ftype == "char":
        def get(self):
            return getattr(self._obj, fname)          # bytes up to the NUL, like Cython's char[N]

        def set_(self, value):
            if isinstance(value, str):
                value = value.encode()
            setattr(self._obj, fname, bytes(value)[:arr - 1])
    elif arr:
        def get(self):
            return list(getattr(self._obj, fname))

        def set_(self, value):
            values = list(value)
            if len(values) > arr:
                raise ValueError(f"{fname}: at most {arr} values")
            getattr(self._obj, fname)[:len(values)] = values
    elif ftype.startswith("enum ") and _enum(ftype[5:]) is not None:
        enum = _enum(ftype[5:])

        def get(self):
            v = getattr(self._obj, fname)
            return enum(v) if v in enum._value2member_map_ else v

        def set_(self, value):
            if not isinstance(value, enum):
                raise TypeError(f"'value' must be of type '{enum.__name__}'")
            setattr(self._obj, fname, int(value))
    elif ftype == "pointer":
        def get(self):
            return Pointer(getattr(self._obj, fname) or 0)

        def set_(self, value):
            setattr(self._obj, fname, address_of(value) or None)
    elif ftype in _INT_FIELDS:
        conv = int_converter(ftype)

        def get(self):
            return getattr(self._obj, fname)

        def set_(self, value):
            setattr(self._obj, fname, conv(value))      # like a Cython setter: floats truncate
    else:
        def get(self):
            return getattr(self._obj, fname)

        def set_(self, value):
            setattr(self._obj, fname, value)
    return property(get, set_, doc=fname)


def _make(name: str) -> type:
    ns = {"_name": name, "__slots__": (), "__doc__": f"``{name}`` (HIP 5.2 layout, {RECORDS[name][0]})."}
    for fname, ftype, arr, _off, _bits in RECORDS[name][2]:
        ns[fname] = _field_property(fname, ftype, arr)
    return type(name, (Struct,), ns)


for _n in RECORDS:
    classes[_n] = _make(_n)
globals().update(classes)


def fill_device_prop(prop, p) -> None:
    """Write a runtime DeviceProp into a hipDeviceProp_t (struct, address or buffer)."""
    s = classes["hipDeviceProp_t"].fromObj(prop)
    ctypes.memset(int(s), 0, s.c_sizeof())
    for name, value in p.as_dict().items():
        if name == "arch":
            for flag, bit in value.items():
                setattr(s._obj.arch, flag, int(bit))
        elif name in s.PROPERTIES():
            setattr(s, name, value)


def device_prop_bytes(p) -> bytes:
    """A hipDeviceProp_t (HIP 5.2 layout) from a runtime DeviceProp, as bytes (the C ABI copies these)."""
    s = classes["hipDeviceProp_t"]()
    fill_device_prop(s, p)
    return bytes(s)


__all__ = list(classes) + ["Struct", "ctypes_type", "fill_device_prop", "device_prop_bytes"]
