"""``pyhip.hip``'s driver-API texture objects (``hipTexObjectCreate`` and its queries) over
``HIP_RESOURCE_DESC`` / ``HIP_TEXTURE_DESC`` / ``HIP_RESOURCE_VIEW_DESC`` (hip-python's ``*_st`` structs),
converted to the runtime API's descriptors as hipamd 5.2 does; the objects are the runtime API's
(``textures.create_texture_object``)."""
from __future__ import annotations

import ctypes

from ..errors import HipError, hipError_t
from ..runtime import images as I, textures as T
from ._api import hip_api
from ._constants import HIP_TRSF_NORMALIZED_COORDINATES, HIP_TRSF_READ_AS_INTEGER, HIP_TRSF_SRGB
from .texture_types import __hip_texture, c_struct, new_struct
from .textures import channel_desc, copy_struct, create_texture_object, destroy_texture_object, format_of, texture

INVALID = hipError_t.hipErrorInvalidValue
_VIEW_FIELDS = ("format", "width", "height", "depth", "firstMipmapLevel", "lastMipmapLevel", "firstLayer",
                "lastLayer")


def _from_driver_resource(d):
    """hipamd 5.2's getResourceDesc(HIP_RESOURCE_DESC): a hipResourceDesc (ctypes)."""
    if d is None:
        raise HipError(INVALID, "null resource descriptor")
    r = new_struct("hipResourceDesc")
    r.resType = d.resType
    if r.resType == T.RES_ARRAY:
        r.res.array.array = d.res.array.hArray
    elif r.resType == T.RES_MIPMAPPED:
        r.res.mipmap.mipmap = d.res.mipmap.hMipmappedArray
    elif r.resType == T.RES_LINEAR:
        lin = d.res.linear
        r.res.linear.devPtr, r.res.linear.sizeInBytes = lin.devPtr, lin.sizeInBytes
        r.res.linear.desc = channel_desc(I.Format(lin.format, lin.numChannels))
    elif r.resType == T.RES_PITCH2D:
        p, q = d.res.pitch2D, r.res.pitch2D
        q.devPtr, q.width, q.height, q.pitchInBytes = p.devPtr, p.width, p.height, p.pitchInBytes
        q.desc = channel_desc(I.Format(p.format, p.numChannels))
    return r


def _to_driver_resource(r, out) -> None:
    ctypes.memset(ctypes.addressof(out), 0, ctypes.sizeof(out))
    out.resType = r.resType
    if r.resType == T.RES_ARRAY:
        out.res.array.hArray = r.res.array.array
    elif r.resType == T.RES_MIPMAPPED:
        out.res.mipmap.hMipmappedArray = r.res.mipmap.mipmap
    else:
        src = r.res.linear if r.resType == T.RES_LINEAR else r.res.pitch2D
        dst = out.res.linear if r.resType == T.RES_LINEAR else out.res.pitch2D
        fmt = format_of(src.desc)
        dst.devPtr, dst.format, dst.numChannels = src.devPtr, fmt.array_format, fmt.channels
        if r.resType == T.RES_LINEAR:
            dst.sizeInBytes = src.sizeInBytes
        else:
            dst.width, dst.height, dst.pitchInBytes = src.width, src.height, src.pitchInBytes


def _from_driver_texture(d):
    if d is None:
        raise HipError(INVALID, "null texture descriptor")
    t = new_struct("hipTextureDesc")
    t.filterMode, t.readMode = d.filterMode, 0 if d.flags & HIP_TRSF_READ_AS_INTEGER else 1
    t.sRGB, t.normalizedCoords = int(bool(d.flags & HIP_TRSF_SRGB)), int(bool(d.flags & HIP_TRSF_NORMALIZED_COORDINATES))
    t.maxAnisotropy, t.mipmapFilterMode, t.mipmapLevelBias = d.maxAnisotropy, d.mipmapFilterMode, d.mipmapLevelBias
    t.minMipmapLevelClamp, t.maxMipmapLevelClamp = d.minMipmapLevelClamp, d.maxMipmapLevelClamp
    t.addressMode[:] = d.addressMode[:]
    t.borderColor[:] = d.borderColor[:]
    return t


def _view(d):
    if d is None:
        return None
    v = new_struct("hipResourceViewDesc")
    for name in _VIEW_FIELDS:
        setattr(v, name, getattr(d, name))
    return v


@hip_api(1)
def hipTexObjectCreate(pResDesc, pTexDesc, pResViewDesc):
    res, tex = c_struct("HIP_RESOURCE_DESC_st", pResDesc), c_struct("HIP_TEXTURE_DESC_st", pTexDesc)
    view = c_struct("HIP_RESOURCE_VIEW_DESC_st", pResViewDesc)
    addr = create_texture_object(_from_driver_resource(res), _from_driver_texture(tex), _view(view))
    T.lookup(addr, "texture").driver = (copy_struct(tex), copy_struct(view) if view is not None else None)
    return __hip_texture(addr)


@hip_api()
def hipTexObjectDestroy(texObject):
    destroy_texture_object(texObject)


def _out(name: str, obj):
    out = c_struct(name, obj)
    if out is None:
        raise HipError(INVALID, "null output descriptor")
    return out


@hip_api()
def hipTexObjectGetResourceDesc(pResDesc, texObject):
    o = texture(texObject)
    _to_driver_resource(o.api[0], _out("HIP_RESOURCE_DESC_st", pResDesc))


@hip_api()
def hipTexObjectGetTextureDesc(pTexDesc, texObject):
    o = texture(texObject)
    out = _out("HIP_TEXTURE_DESC_st", pTexDesc)
    drv = getattr(o, "driver", None)
    if drv is not None:
        ctypes.memmove(ctypes.addressof(out), ctypes.addressof(drv[0]), ctypes.sizeof(out))
        return
    t = o.api[1]                                            # created through the runtime API: convert
    ctypes.memset(ctypes.addressof(out), 0, ctypes.sizeof(out))
    out.filterMode, out.maxAnisotropy = t.filterMode, t.maxAnisotropy
    out.flags = (0 if t.readMode else HIP_TRSF_READ_AS_INTEGER) | \
        (HIP_TRSF_NORMALIZED_COORDINATES if t.normalizedCoords else 0) | (HIP_TRSF_SRGB if t.sRGB else 0)
    out.mipmapFilterMode, out.mipmapLevelBias = t.mipmapFilterMode, t.mipmapLevelBias
    out.minMipmapLevelClamp, out.maxMipmapLevelClamp = t.minMipmapLevelClamp, t.maxMipmapLevelClamp
    out.addressMode[:] = t.addressMode[:]
    out.borderColor[:] = t.borderColor[:]


@hip_api()
def hipTexObjectGetResourceViewDesc(pResViewDesc, texObject):
    o = texture(texObject)
    out = _out("HIP_RESOURCE_VIEW_DESC_st", pResViewDesc)
    ctypes.memset(ctypes.addressof(out), 0, ctypes.sizeof(out))
    if o.view is not None:
        for name in _VIEW_FIELDS:
            setattr(out, name, getattr(o.view, name))


__all__ = [n for n in dir() if n.startswith("hip")]
