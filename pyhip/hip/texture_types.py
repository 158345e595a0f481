"""hip-python's texture types: the handle types ``__hip_texture`` / ``__hip_surface`` (``hipTextureObject_t`` /
``hipSurfaceObject_t``: Pointers to the device object kernels read), the aliases hip-python defines for the array
and driver-descriptor structs, HIP's ``make_hip*`` helpers, and ``c_struct`` — how ``pyhip.hip``'s texture
functions read a struct argument the way hip-python's ``T.fromPyobj`` does.

The structs themselves are ``structs.py``'s (``hipChannelFormatDesc``, ``hipArray``, ``hipResourceDesc``,
``hipTextureDesc``, ``textureReference``, ``HIP_RESOURCE_DESC_st``...: HIP 5.2's generated layouts, one source
of truth for pyhip.hip and the C ABI)."""
from __future__ import annotations

from . import structs
from .pointers import Pointer, address_of


class __hip_texture(Pointer):   # noqa: N801  (hip-python's name)
    """hip-python's ``hipTextureObject_t``: a Pointer holding the device address of the texture object (its
    image and sampler descriptors), passed to kernels as a pointer argument."""


class __hip_surface(Pointer):   # noqa: N801
    """hip-python's ``hipSurfaceObject_t``: a Pointer holding the device address of the surface object."""


hipTextureObject_t = __hip_texture
hipSurfaceObject_t = __hip_surface
hipArray_t = hipArray_const_t = structs.hipArray
hipMipmappedArray_t = hipMipmappedArray_const_t = structs.hipMipmappedArray
HIP_RESOURCE_DESC = structs.HIP_RESOURCE_DESC_st
HIP_TEXTURE_DESC = structs.HIP_TEXTURE_DESC_st
HIP_RESOURCE_VIEW_DESC = structs.HIP_RESOURCE_VIEW_DESC_st


def c_struct(name: str, obj):
    """The ctypes view (HIP 5.2 layout) of a struct argument, as hip-python's ``<name>.fromPyobj``: the
    struct itself, its ctypes object, or an address (int, Pointer, ``ctypes.c_void_p``, buffer); None or a NULL
    address gives None (the C function's NULL).  Implementations work on this view, so enum fields read as
    plain integers."""
    if obj is None:
        return None
    cls = structs.classes[name]
    if not isinstance(obj, (cls, structs.ctypes_type(name))) and not address_of(obj):
        return None
    return cls.fromObj(obj)._obj


def new_struct(name: str):
    """A zeroed ctypes struct of HIP 5.2's layout (for values built internally)."""
    return structs.ctypes_type(name)()


def make_hipExtent(w: int, h: int, d: int):
    return structs.hipExtent(width=w, height=h, depth=d)


def make_hipPos(x: int, y: int, z: int):
    return structs.hipPos(x=x, y=y, z=z)


def make_hipPitchedPtr(d, p: int, xsz: int, ysz: int):
    return structs.hipPitchedPtr(ptr=d, pitch=p, xsize=xsz, ysize=ysz)
