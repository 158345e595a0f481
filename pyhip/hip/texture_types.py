"""HIP 5.2's array, texture and surface structs in their C layout (``ctypes``): the same objects serve
``pyhip.hip`` (built with keyword fields like hip-python's struct types, read and written by attribute,
``int(s)`` gives their address) and the C ABI (``T.from_address(ptr)`` views a caller's struct).  Pointer
fields accept any object with ``__int__`` (a hipArray, a device pointer).  tests/capi/test_texture_layouts.py
checks every size and offset against the installed HIP headers."""
from __future__ import annotations

import ctypes

from ..runtime.memory import DevicePointer

c_int, c_uint, c_size_t, c_void_p, c_float, c_bool = (ctypes.c_int, ctypes.c_uint, ctypes.c_size_t, ctypes.c_void_p,
                                                       ctypes.c_float, ctypes.c_bool)


class _Struct(ctypes.Structure):
    def __init__(self, *args, **kwargs):
        super().__init__(*args)
        for k, v in kwargs.items():
            setattr(self, k, v)

    def __setattr__(self, name, value):
        ftype = dict(self._fields_).get(name)
        if ftype is c_void_p and value is not None and not isinstance(value, int):
            value = int(value)
        super().__setattr__(name, value)

    def __int__(self) -> int:
        return ctypes.addressof(self)

    def c_sizeof(self) -> int:
        return ctypes.sizeof(self)

    def __repr__(self) -> str:
        fields = ", ".join(f"{n}={getattr(self, n)!r}" for n, _ in self._fields_ if not n.startswith("_"))
        return f"{type(self).__name__}({fields})"

    @classmethod
    def fromPtr(cls, ptr):
        return cls.from_address(int(ptr))


class hipChannelFormatDesc(_Struct):
    _fields_ = [("x", c_int), ("y", c_int), ("z", c_int), ("w", c_int), ("f", c_int)]


class hipArray(_Struct):
    _fields_ = [("data", c_void_p), ("desc", hipChannelFormatDesc), ("type", c_uint), ("width", c_uint),
                ("height", c_uint), ("depth", c_uint), ("Format", c_int), ("NumChannels", c_uint), ("isDrv", c_bool),
                ("textureType", c_uint)]


class hipMipmappedArray(_Struct):
    _fields_ = [("data", c_void_p), ("desc", hipChannelFormatDesc), ("type", c_uint), ("width", c_uint),
                ("height", c_uint), ("depth", c_uint), ("min_mipmap_level", c_uint), ("max_mipmap_level", c_uint),
                ("flags", c_uint), ("format", c_int)]


class _ResArray(_Struct):
    _fields_ = [("array", c_void_p)]


class _ResMipmap(_Struct):
    _fields_ = [("mipmap", c_void_p)]


class _ResLinear(_Struct):
    _fields_ = [("devPtr", c_void_p), ("desc", hipChannelFormatDesc), ("sizeInBytes", c_size_t)]


class _ResPitch2D(_Struct):
    _fields_ = [("devPtr", c_void_p), ("desc", hipChannelFormatDesc), ("width", c_size_t), ("height", c_size_t),
                ("pitchInBytes", c_size_t)]


class _ResUnion(ctypes.Union):
    _fields_ = [("array", _ResArray), ("mipmap", _ResMipmap), ("linear", _ResLinear), ("pitch2D", _ResPitch2D)]


class hipResourceDesc(_Struct):
    _fields_ = [("resType", c_int), ("res", _ResUnion)]


class hipTextureDesc(_Struct):
    _fields_ = [("addressMode", c_int * 3), ("filterMode", c_int), ("readMode", c_int), ("sRGB", c_int),
                ("borderColor", c_float * 4), ("normalizedCoords", c_int), ("maxAnisotropy", c_uint),
                ("mipmapFilterMode", c_int), ("mipmapLevelBias", c_float), ("minMipmapLevelClamp", c_float),
                ("maxMipmapLevelClamp", c_float)]


class hipResourceViewDesc(_Struct):
    _fields_ = [("format", c_int), ("width", c_size_t), ("height", c_size_t), ("depth", c_size_t),
                ("firstMipmapLevel", c_uint), ("lastMipmapLevel", c_uint), ("firstLayer", c_uint),
                ("lastLayer", c_uint)]


class textureReference(_Struct):
    _fields_ = [("normalized", c_int), ("readMode", c_int), ("filterMode", c_int), ("addressMode", c_int * 3),
                ("channelDesc", hipChannelFormatDesc), ("sRGB", c_int), ("maxAnisotropy", c_uint),
                ("mipmapFilterMode", c_int), ("mipmapLevelBias", c_float), ("minMipmapLevelClamp", c_float),
                ("maxMipmapLevelClamp", c_float), ("textureObject", c_void_p), ("numChannels", c_int),
                ("format", c_int)]


class hipExtent(_Struct):
    _fields_ = [("width", c_size_t), ("height", c_size_t), ("depth", c_size_t)]


class hipPos(_Struct):
    _fields_ = [("x", c_size_t), ("y", c_size_t), ("z", c_size_t)]


class hipPitchedPtr(_Struct):
    _fields_ = [("ptr", c_void_p), ("pitch", c_size_t), ("xsize", c_size_t), ("ysize", c_size_t)]


class hipMemcpy3DParms(_Struct):
    _fields_ = [("srcArray", c_void_p), ("srcPos", hipPos), ("srcPtr", hipPitchedPtr), ("dstArray", c_void_p),
                ("dstPos", hipPos), ("dstPtr", hipPitchedPtr), ("extent", hipExtent), ("kind", c_int)]


class HIP_ARRAY_DESCRIPTOR(_Struct):
    _fields_ = [("Width", c_size_t), ("Height", c_size_t), ("Format", c_int), ("NumChannels", c_uint)]


class HIP_ARRAY3D_DESCRIPTOR(_Struct):
    _fields_ = [("Width", c_size_t), ("Height", c_size_t), ("Depth", c_size_t), ("Format", c_int),
                ("NumChannels", c_uint), ("Flags", c_uint)]


class _DrvResArray(_Struct):
    _fields_ = [("hArray", c_void_p)]


class _DrvResMipmap(_Struct):
    _fields_ = [("hMipmappedArray", c_void_p)]


class _DrvResLinear(_Struct):
    _fields_ = [("devPtr", c_void_p), ("format", c_int), ("numChannels", c_uint), ("sizeInBytes", c_size_t)]


class _DrvResPitch2D(_Struct):
    _fields_ = [("devPtr", c_void_p), ("format", c_int), ("numChannels", c_uint), ("width", c_size_t),
                ("height", c_size_t), ("pitchInBytes", c_size_t)]


class _DrvResUnion(ctypes.Union):
    _fields_ = [("array", _DrvResArray), ("mipmap", _DrvResMipmap), ("linear", _DrvResLinear),
                ("pitch2D", _DrvResPitch2D), ("reserved", c_int * 32)]


class HIP_RESOURCE_DESC(_Struct):
    _fields_ = [("resType", c_int), ("res", _DrvResUnion), ("flags", c_uint)]


class HIP_TEXTURE_DESC(_Struct):
    _fields_ = [("addressMode", c_int * 3), ("filterMode", c_int), ("flags", c_uint), ("maxAnisotropy", c_uint),
                ("mipmapFilterMode", c_int), ("mipmapLevelBias", c_float), ("minMipmapLevelClamp", c_float),
                ("maxMipmapLevelClamp", c_float), ("borderColor", c_float * 4), ("reserved", c_int * 12)]


class HIP_RESOURCE_VIEW_DESC(_Struct):
    _fields_ = [("format", c_int), ("width", c_size_t), ("height", c_size_t), ("depth", c_size_t),
                ("firstMipmapLevel", c_uint), ("lastMipmapLevel", c_uint), ("firstLayer", c_uint),
                ("lastLayer", c_uint), ("reserved", c_uint * 16)]


class hipTextureObject_t(DevicePointer):
    """A texture object: the device address of its image + sampler descriptors (a kernel's pointer argument)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"<hipTextureObject_t 0x{self.value:x}>"


class hipSurfaceObject_t(DevicePointer):
    __slots__ = ()

    def __repr__(self) -> str:
        return f"<hipSurfaceObject_t 0x{self.value:x}>"


def make_hipExtent(w: int, h: int, d: int) -> hipExtent:
    return hipExtent(width=w, height=h, depth=d)


def make_hipPos(x: int, y: int, z: int) -> hipPos:
    return hipPos(x=x, y=y, z=z)


def make_hipPitchedPtr(d, p: int, xsz: int, ysz: int) -> hipPitchedPtr:
    return hipPitchedPtr(ptr=d, pitch=p, xsize=xsz, ysize=ysz)


STRUCTS = (hipChannelFormatDesc, hipArray, hipMipmappedArray, hipResourceDesc, hipTextureDesc, hipResourceViewDesc,
           textureReference, hipExtent, hipPos, hipPitchedPtr, hipMemcpy3DParms, HIP_ARRAY_DESCRIPTOR,
           HIP_ARRAY3D_DESCRIPTOR, HIP_RESOURCE_DESC, HIP_TEXTURE_DESC, HIP_RESOURCE_VIEW_DESC)
