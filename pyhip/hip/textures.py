"""``pyhip.hip``'s arrays, copies to and from them, texture and surface objects (hip-python's conventions:
``(err, value…)`` tuples, structs from ``texture_types``, output structs filled in place).

Arrays are returned as ``hipArray`` structs (their fields as HIP 5.2 fills them; ``int(a)`` is the handle
the C ABI hands out); any of these functions accepts the struct or its address."""
from __future__ import annotations

import ctypes
import threading

from .._hip_enums import hipMemcpyKind
from ..errors import HipError, hipError_t
from ..runtime import images as I, textures as T
from ..runtime.context import runtime
from ..runtime.memory import as_address
from ._api import hip_api
from .texture_types import (HIP_ARRAY3D_DESCRIPTOR, HIP_ARRAY_DESCRIPTOR, HIP_RESOURCE_DESC, HIP_RESOURCE_VIEW_DESC,
                            HIP_TEXTURE_DESC, hipArray, hipChannelFormatDesc,
                            hipMipmappedArray, hipResourceDesc, hipResourceViewDesc, hipSurfaceObject_t,
                            hipTextureDesc, hipTextureObject_t)

INVALID = hipError_t.hipErrorInvalidValue
_lock = threading.RLock()
_arrays: dict[int, tuple[hipArray, I.ImageArray]] = {}        # hipArray struct address -> (struct, storage)
_mipmaps: dict[int, tuple[hipMipmappedArray, list]] = {}       # hipMipmappedArray address -> (struct, levels)


# ---- handles --------------------------------------------------------------------------------------------------
def array_of(handle) -> I.ImageArray:
    if handle is None:
        raise HipError(INVALID, "null array")
    with _lock:
        hit = _arrays.get(int(handle))
    if hit is None or not hit[1].addr:
        raise HipError(hipError_t.hipErrorInvalidValue, f"not a live hipArray: {handle!r}")
    return hit[1]


def _struct_for(a: I.ImageArray) -> hipArray:
    x, y, z, w, f = I.channel_desc_of(a.fmt)
    s = hipArray(data=a.addr, desc=hipChannelFormatDesc(x=x, y=y, z=z, w=w, f=f), width=a.width, height=a.height,
                 depth=a.depth, Format=a.fmt.array_format, NumChannels=a.fmt.channels)
    a.handle = s
    with _lock:
        _arrays[int(s)] = (s, a)
    return s


def _forget(a: I.ImageArray) -> None:
    with _lock:
        _arrays.pop(int(a.handle), None)


def format_of(desc) -> I.Format:
    if desc is None:
        raise HipError(INVALID, "null channel descriptor")
    return I.format_for_channel_desc(desc.x, desc.y, desc.z, desc.w, desc.f)


# ---- channel descriptors and arrays -------------------------------------------------------------------------------
def hipCreateChannelDesc(x: int, y: int, z: int, w: int, f):
    return (hipError_t.hipSuccess, hipChannelFormatDesc(x=int(x), y=int(y), z=int(z), w=int(w), f=int(f)))


@hip_api(1)
def hipMallocArray(desc, width: int, height: int = 0, flags: int = 0):
    return _struct_for(I.create_array(runtime().device(), format_of(desc), width, height, 0, flags))


@hip_api(1)
def hipMalloc3DArray(desc, extent, flags: int = 0):
    return _struct_for(I.create_array(runtime().device(), format_of(desc), extent.width, extent.height,
                                      extent.depth, flags))


def _from_descriptor(d, depth: int, flags: int):
    fmt = I.Format(int(d.Format), int(d.NumChannels))
    return _struct_for(I.create_array(runtime().device(), fmt, d.Width, d.Height, depth, flags))


@hip_api(1)
def hipArrayCreate(pAllocateArray: HIP_ARRAY_DESCRIPTOR):
    return _from_descriptor(pAllocateArray, 0, 0)


@hip_api(1)
def hipArray3DCreate(pAllocateArray: HIP_ARRAY3D_DESCRIPTOR):
    return _from_descriptor(pAllocateArray, pAllocateArray.Depth, pAllocateArray.Flags)


def _free_array(array):
    if array is None or int(array) == 0:
        raise HipError(INVALID, "null array")
    a = array_of(array)
    if a.owner is not None:
        raise HipError(INVALID, "a mipmap level belongs to its mipmapped array")
    I.destroy_array(a)
    _forget(a)


@hip_api()
def hipFreeArray(array):
    _free_array(array)


@hip_api()
def hipArrayDestroy(array):
    _free_array(array)


@hip_api()
def hipGetChannelDesc(desc, array):
    if desc is None:
        raise HipError(INVALID, "null output descriptor")
    x, y, z, w, f = I.channel_desc_of(array_of(array).fmt)
    desc.x, desc.y, desc.z, desc.w, desc.f = x, y, z, w, f


# mipmapped arrays: the runtime API is not supported by HIP 5.2; the driver API keeps one array per level
@hip_api(1)
def hipMallocMipmappedArray(desc, extent, numLevels: int, flags: int = 0):
    raise HipError(hipError_t.hipErrorNotSupported, "hipMallocMipmappedArray is not supported (as in HIP 5.2)")


@hip_api()
def hipFreeMipmappedArray(mipmappedArray):
    raise HipError(hipError_t.hipErrorNotSupported, "hipFreeMipmappedArray is not supported (as in HIP 5.2)")


@hip_api(1)
def hipGetMipmappedArrayLevel(mipmappedArray, level: int):
    raise HipError(hipError_t.hipErrorNotSupported, "hipGetMipmappedArrayLevel is not supported (as in HIP 5.2)")


@hip_api(1)
def hipMipmappedArrayCreate(pMipmappedArrayDesc: HIP_ARRAY3D_DESCRIPTOR, numMipmapLevels: int):
    d = pMipmappedArrayDesc
    fmt = I.Format(int(d.Format), int(d.NumChannels))
    n = int(numMipmapLevels)
    if not 1 <= n <= I.mip_levels(d.Width, d.Height, d.Depth):
        raise HipError(INVALID, f"{n} mip levels for a {d.Width} x {d.Height} x {d.Depth} array")
    dev = runtime().device()
    levels = []
    try:
        for lv in range(n):
            shrink = (lambda v: max(v >> lv, 1) if v else 0)
            depth = d.Depth if d.Flags & I.hipArrayLayered else shrink(d.Depth)
            levels.append(I.create_array(dev, fmt, shrink(d.Width), shrink(d.Height), depth, d.Flags))
    except HipError:
        for a in levels:
            I.destroy_array(a)
        raise
    x, y, z, w, f = I.channel_desc_of(fmt)
    kind = I.array_kind(d.Width, d.Height, d.Depth, d.Flags)
    s = hipMipmappedArray(data=levels[0].addr, desc=hipChannelFormatDesc(x=x, y=y, z=z, w=w, f=f),
                          type=kind_code(kind), width=d.Width, height=d.Height, depth=d.Depth, min_mipmap_level=0,
                          max_mipmap_level=n, flags=d.Flags, format=int(d.Format))
    for a in levels:
        a.owner = s
    structs = [_struct_for(a) for a in levels]
    with _lock:
        _mipmaps[int(s)] = (s, structs)
    return s


def kind_code(kind: str) -> int:
    """cl_mem_object_type of an array kind (what HIP 5.2 stores in hipMipmappedArray.type)."""
    return {"1d": 0x10F4, "2d": 0x10F1, "3d": 0x10F2, "1da": 0x10F5, "2da": 0x10F3}[kind]


def _mipmap(handle):
    with _lock:
        hit = _mipmaps.get(int(handle)) if handle is not None else None
    if hit is None:
        raise HipError(INVALID, f"not a mipmapped array: {handle!r}")
    return hit


@hip_api()
def hipMipmappedArrayDestroy(hMipmappedArray):
    s, levels = _mipmap(hMipmappedArray)
    for lv in levels:
        a = array_of(lv)
        I.destroy_array(a)
        _forget(a)
    with _lock:
        _mipmaps.pop(int(s), None)


@hip_api(1)
def hipMipmappedArrayGetLevel(hMipMappedArray, level: int):
    s, levels = _mipmap(hMipMappedArray)
    if not 0 <= int(level) < len(levels):
        raise HipError(INVALID, f"level {level} of {len(levels)}")
    return levels[int(level)]


# ---- copies ---------------------------------------------------------------------------------------------------------
def _mem(ptr, kind: int, side: str, pitch: int = 0, height: int = 0, x: int = 0, y: int = 0, z: int = 0):
    """An Endpoint for a pointer/buffer on one side of a copy."""
    k = hipMemcpyKind(int(kind))
    addr = as_address(ptr)
    if addr is None:                                      # a Python buffer on the host
        if (side == "src" and k in (hipMemcpyKind.hipMemcpyDeviceToHost, hipMemcpyKind.hipMemcpyDeviceToDevice)) or \
                (side == "dst" and k in (hipMemcpyKind.hipMemcpyHostToDevice, hipMemcpyKind.hipMemcpyDeviceToDevice)):
            raise HipError(INVALID, f"{k.name}: the {side} must be a device pointer")
        return I.Endpoint(buf=ptr, pitch=pitch, height=height, x=x, y=y, z=z)
    if not addr:
        raise HipError(INVALID, f"null {side} pointer")
    return I.Endpoint(addr=addr, pitch=pitch, height=height, x=x, y=y, z=z)


def _arr(array, x_bytes: int = 0, y: int = 0, z: int = 0):
    return I.Endpoint(array=array_of(array), x=int(x_bytes), y=int(y), z=int(z))


def _copy2d_to(dst, wOffset, hOffset, src, spitch, width, height, kind, stream, sync):
    if int(spitch) == 0:
        raise HipError(hipError_t.hipErrorInvalidPitchValue, "source pitch 0")
    I.copy_3d(_arr(dst, wOffset, hOffset), _mem(src, kind, "src", int(spitch)), width, height, 1, stream, sync)


def _copy2d_from(dst, dpitch, src, wOffset, hOffset, width, height, kind, stream, sync):
    if int(dpitch) == 0:
        raise HipError(hipError_t.hipErrorInvalidPitchValue, "destination pitch 0")
    I.copy_3d(_mem(dst, kind, "dst", int(dpitch)), _arr(src, wOffset, hOffset), width, height, 1, stream, sync)


@hip_api()
def hipMemcpy2DToArray(dst, wOffset: int, hOffset: int, src, spitch: int, width: int, height: int, kind):
    _copy2d_to(dst, wOffset, hOffset, src, spitch, width, height, kind, None, True)


@hip_api()
def hipMemcpy2DToArrayAsync(dst, wOffset: int, hOffset: int, src, spitch: int, width: int, height: int, kind,
                            stream=None):
    _copy2d_to(dst, wOffset, hOffset, src, spitch, width, height, kind, stream, False)


@hip_api()
def hipMemcpy2DFromArray(dst, dpitch: int, src, wOffset: int, hOffset: int, width: int, height: int, kind):
    _copy2d_from(dst, dpitch, src, wOffset, hOffset, width, height, kind, None, True)


@hip_api()
def hipMemcpy2DFromArrayAsync(dst, dpitch: int, src, wOffset: int, hOffset: int, width: int, height: int, kind,
                              stream=None):
    _copy2d_from(dst, dpitch, src, wOffset, hOffset, width, height, kind, stream, False)


def _linear(a: I.ImageArray, count: int):
    """HIP 5.2's hipMemcpyToArray/FromArray region: ``count`` bytes as rows of count / height bytes."""
    rows = max(a.height, 1)
    return int(count) // rows, int(count) // a.width // a.fmt.element_size


@hip_api()
def hipMemcpyToArray(dst, wOffset: int, hOffset: int, src, count: int, kind):
    w, h = _linear(array_of(dst), count)
    I.copy_3d(_arr(dst, wOffset, hOffset), _mem(src, kind, "src", w), w, h, 1)


@hip_api()
def hipMemcpyFromArray(dst, srcArray, wOffset: int, hOffset: int, count: int, kind):
    w, h = _linear(array_of(srcArray), count)
    I.copy_3d(_mem(dst, kind, "dst", w), _arr(srcArray, wOffset, hOffset), w, h, 1)


@hip_api()
def hipMemcpyHtoA(dstArray, dstOffset: int, srcHost, ByteCount: int):
    I.copy_3d(_arr(dstArray, dstOffset), _mem(srcHost, hipMemcpyKind.hipMemcpyHostToDevice, "src"), ByteCount, 1, 1)


@hip_api()
def hipMemcpyAtoH(dstHost, srcArray, srcOffset: int, ByteCount: int):
    I.copy_3d(_mem(dstHost, hipMemcpyKind.hipMemcpyDeviceToHost, "dst"), _arr(srcArray, srcOffset), ByteCount, 1, 1)


def _memcpy3d(p, stream, sync):
    if p is None:
        raise HipError(INVALID, "null copy parameters")
    ext = p.extent
    if ext.width == 0 or ext.height == 0 or ext.depth == 0:
        return                                            # HIP 5.2: an empty copy succeeds before any check
    src_arr, dst_arr = p.srcArray or None, p.dstArray or None
    elem = array_of(dst_arr if dst_arr else src_arr).fmt.element_size if (src_arr or dst_arr) else 1
    if src_arr:
        src = _arr(src_arr, p.srcPos.x * array_of(src_arr).fmt.element_size, p.srcPos.y, p.srcPos.z)
    else:
        src = _mem(p.srcPtr.ptr, p.kind, "src", p.srcPtr.pitch, p.srcPtr.ysize, p.srcPos.x, p.srcPos.y, p.srcPos.z)
    if dst_arr:
        dst = _arr(dst_arr, p.dstPos.x * array_of(dst_arr).fmt.element_size, p.dstPos.y, p.dstPos.z)
    else:
        dst = _mem(p.dstPtr.ptr, p.kind, "dst", p.dstPtr.pitch, p.dstPtr.ysize, p.dstPos.x, p.dstPos.y, p.dstPos.z)
    I.copy_3d(dst, src, ext.width * elem, ext.height, ext.depth, stream, sync)


@hip_api()
def hipMemcpy3D(p):
    """Copies between arrays and pitched memory (array extents and positions in elements, memory ones in
    bytes, as hipamd 5.2 reads hipMemcpy3DParms)."""
    _memcpy3d(p, None, True)


@hip_api()
def hipMemcpy3DAsync(p, stream=None):
    _memcpy3d(p, stream, False)


# ---- texture and surface objects ------------------------------------------------------------------------------------
def resource_of(d: hipResourceDesc) -> T.Resource:
    if d is None:
        raise HipError(INVALID, "null resource descriptor")
    kind = int(d.resType)
    if kind == T.RES_ARRAY:
        if not d.res.array.array:
            raise HipError(INVALID, "the resource's array is null")
        return T.Resource(kind, array=array_of(d.res.array.array))
    if kind == T.RES_MIPMAPPED:
        if not d.res.mipmap.mipmap:
            raise HipError(INVALID, "the resource's mipmapped array is null")
        return T.Resource(kind, mipmap=_mipmap(d.res.mipmap.mipmap)[0])
    if kind == T.RES_LINEAR:
        lin = d.res.linear
        return T.Resource(kind, dev_ptr=lin.devPtr or 0, fmt=format_of(lin.desc), size_bytes=lin.sizeInBytes)
    if kind == T.RES_PITCH2D:
        p = d.res.pitch2D
        return T.Resource(kind, dev_ptr=p.devPtr or 0, fmt=format_of(p.desc), width=p.width, height=p.height,
                          pitch_bytes=p.pitchInBytes)
    raise HipError(INVALID, f"invalid resource type {kind}")


def tex_desc_of(d: hipTextureDesc) -> T.TextureDesc:
    if d is None:
        raise HipError(INVALID, "null texture descriptor")
    return T.TextureDesc(tuple(d.addressMode), d.filterMode, d.readMode, d.sRGB, tuple(d.borderColor),
                         d.normalizedCoords, d.maxAnisotropy, d.mipmapFilterMode, d.mipmapLevelBias,
                         d.minMipmapLevelClamp, d.maxMipmapLevelClamp)


# hipResourceViewFormat -> (array format, channels); 0 (hipResViewFormatNone) keeps the array's format
_VIEW = {1: (1, 1), 2: (1, 2), 3: (1, 4), 4: (8, 1), 5: (8, 2), 6: (8, 4), 7: (2, 1), 8: (2, 2), 9: (2, 4),
         10: (9, 1), 11: (9, 2), 12: (9, 4), 13: (3, 1), 14: (3, 2), 15: (3, 4), 16: (10, 1), 17: (10, 2),
         18: (10, 4), 19: (16, 1), 20: (16, 2), 21: (16, 4), 22: (32, 1), 23: (32, 2), 24: (32, 4)}


def view_format_of(v: hipResourceViewDesc | None):
    if v is None or int(v.format) == 0:
        return None
    if int(v.format) not in _VIEW:
        raise HipError(hipError_t.hipErrorNotSupported, f"resource view format {int(v.format)} is not supported")
    return I.Format(*_VIEW[int(v.format)])


def _copy_struct(s):
    out = type(s)()
    ctypes.memmove(ctypes.addressof(out), ctypes.addressof(s), ctypes.sizeof(s))
    return out


def create_texture_object(pResDesc, pTexDesc, pResViewDesc=None) -> hipTextureObject_t:
    dev = runtime().device()
    I.require_images(dev)
    if pResDesc is None or pTexDesc is None:
        raise HipError(INVALID, "null resource or texture descriptor")
    o = T.create_texture(dev, resource_of(pResDesc), tex_desc_of(pTexDesc),
                         _copy_struct(pResViewDesc) if pResViewDesc is not None else None,
                         view_format_of(pResViewDesc))
    o.api = (_copy_struct(pResDesc), _copy_struct(pTexDesc))
    return hipTextureObject_t(o.addr, dev)


@hip_api(1)
def hipCreateTextureObject(pResDesc, pTexDesc, pResViewDesc=None):
    return create_texture_object(pResDesc, pTexDesc, pResViewDesc)


def destroy_texture_object(textureObject) -> None:
    T.destroy(as_address(textureObject) or 0, "texture")


@hip_api()
def hipDestroyTextureObject(textureObject):
    destroy_texture_object(textureObject)


def _fill(out, src) -> None:
    if out is None:
        raise HipError(INVALID, "null output descriptor")
    ctypes.memmove(ctypes.addressof(out), ctypes.addressof(src), ctypes.sizeof(src))


def fill_resource_desc(pResDesc, textureObject) -> None:
    _fill(pResDesc, T.lookup(as_address(textureObject) or 0, "texture").api[0])


@hip_api()
def hipGetTextureObjectResourceDesc(pResDesc, textureObject):
    fill_resource_desc(pResDesc, textureObject)


@hip_api()
def hipGetTextureObjectTextureDesc(pTexDesc, textureObject):
    _fill(pTexDesc, T.lookup(as_address(textureObject) or 0, "texture").api[1])


@hip_api()
def hipGetTextureObjectResourceViewDesc(pResViewDesc, textureObject):
    o = T.lookup(as_address(textureObject) or 0, "texture")
    _fill(pResViewDesc, o.view if o.view is not None else hipResourceViewDesc())


@hip_api(1)
def hipCreateSurfaceObject(pResDesc):
    dev = runtime().device()
    I.require_images(dev)
    o = T.create_surface(dev, resource_of(pResDesc))
    o.api = (_copy_struct(pResDesc),)
    return hipSurfaceObject_t(o.addr, dev)


@hip_api()
def hipDestroySurfaceObject(surfaceObject):
    T.destroy(as_address(surfaceObject) or 0, "surface")


# ---- the driver API's texture objects (HIP_RESOURCE_DESC, HIP_TEXTURE_DESC, HIP_RESOURCE_VIEW_DESC) -------------
HIP_TRSF_READ_AS_INTEGER, HIP_TRSF_NORMALIZED_COORDINATES, HIP_TRSF_SRGB = 0x01, 0x02, 0x10


def _channel(fmt: int, n: int) -> hipChannelFormatDesc:
    x, y, z, w, f = I.channel_desc_of(I.Format(int(fmt), int(n)))
    return hipChannelFormatDesc(x=x, y=y, z=z, w=w, f=f)


def _from_driver_resource(d: HIP_RESOURCE_DESC) -> hipResourceDesc:
    """hipamd 5.2's getResourceDesc(HIP_RESOURCE_DESC)."""
    if d is None:
        raise HipError(INVALID, "null resource descriptor")
    r = hipResourceDesc(resType=int(d.resType))
    if r.resType == T.RES_ARRAY:
        r.res.array.array = d.res.array.hArray or 0
    elif r.resType == T.RES_MIPMAPPED:
        r.res.mipmap.mipmap = d.res.mipmap.hMipmappedArray or 0
    elif r.resType == T.RES_LINEAR:
        lin = d.res.linear
        r.res.linear.devPtr, r.res.linear.sizeInBytes = lin.devPtr or 0, lin.sizeInBytes
        r.res.linear.desc = _channel(lin.format, lin.numChannels)
    elif r.resType == T.RES_PITCH2D:
        p, q = d.res.pitch2D, r.res.pitch2D
        q.devPtr, q.width, q.height, q.pitchInBytes = p.devPtr or 0, p.width, p.height, p.pitchInBytes
        q.desc = _channel(p.format, p.numChannels)
    return r


def _to_driver_resource(r: hipResourceDesc, out: HIP_RESOURCE_DESC) -> None:
    ctypes.memset(ctypes.addressof(out), 0, ctypes.sizeof(out))
    out.resType = r.resType
    if r.resType == T.RES_ARRAY:
        out.res.array.hArray = r.res.array.array or 0
    elif r.resType == T.RES_MIPMAPPED:
        out.res.mipmap.hMipmappedArray = r.res.mipmap.mipmap or 0
    else:
        src = r.res.linear if r.resType == T.RES_LINEAR else r.res.pitch2D
        dst = out.res.linear if r.resType == T.RES_LINEAR else out.res.pitch2D
        fmt = format_of(src.desc)
        dst.devPtr, dst.format, dst.numChannels = src.devPtr or 0, fmt.array_format, fmt.channels
        if r.resType == T.RES_LINEAR:
            dst.sizeInBytes = src.sizeInBytes
        else:
            dst.width, dst.height, dst.pitchInBytes = src.width, src.height, src.pitchInBytes


def _from_driver_texture(d: HIP_TEXTURE_DESC) -> hipTextureDesc:
    if d is None:
        raise HipError(INVALID, "null texture descriptor")
    t = hipTextureDesc(filterMode=d.filterMode, readMode=0 if d.flags & HIP_TRSF_READ_AS_INTEGER else 1,
                       sRGB=int(bool(d.flags & HIP_TRSF_SRGB)),
                       normalizedCoords=int(bool(d.flags & HIP_TRSF_NORMALIZED_COORDINATES)),
                       maxAnisotropy=d.maxAnisotropy, mipmapFilterMode=d.mipmapFilterMode,
                       mipmapLevelBias=d.mipmapLevelBias, minMipmapLevelClamp=d.minMipmapLevelClamp,
                       maxMipmapLevelClamp=d.maxMipmapLevelClamp)
    for i in range(3):
        t.addressMode[i] = d.addressMode[i]
    for i in range(4):
        t.borderColor[i] = d.borderColor[i]
    return t


def _view(d) -> hipResourceViewDesc | None:
    if d is None:
        return None
    return hipResourceViewDesc(format=d.format, width=d.width, height=d.height, depth=d.depth,
                               firstMipmapLevel=d.firstMipmapLevel, lastMipmapLevel=d.lastMipmapLevel,
                               firstLayer=d.firstLayer, lastLayer=d.lastLayer)


@hip_api(1)
def hipTexObjectCreate(pResDesc: HIP_RESOURCE_DESC, pTexDesc: HIP_TEXTURE_DESC, pResViewDesc=None):
    o = create_texture_object(_from_driver_resource(pResDesc), _from_driver_texture(pTexDesc), _view(pResViewDesc))
    T.lookup(int(o), "texture").driver = (_copy_struct(pTexDesc), _copy_struct(pResViewDesc) if pResViewDesc else None)
    return o


@hip_api()
def hipTexObjectDestroy(texObject):
    destroy_texture_object(texObject)


@hip_api()
def hipTexObjectGetResourceDesc(pResDesc: HIP_RESOURCE_DESC, texObject):
    if pResDesc is None:
        raise HipError(INVALID, "null output descriptor")
    _to_driver_resource(T.lookup(as_address(texObject) or 0, "texture").api[0], pResDesc)


@hip_api()
def hipTexObjectGetTextureDesc(pTexDesc: HIP_TEXTURE_DESC, texObject):
    o = T.lookup(as_address(texObject) or 0, "texture")
    if pTexDesc is None:
        raise HipError(INVALID, "null output descriptor")
    drv = getattr(o, "driver", None)
    if drv is not None:
        _fill(pTexDesc, drv[0])
        return
    t = o.api[1]                                            # created through the runtime API: convert
    ctypes.memset(ctypes.addressof(pTexDesc), 0, ctypes.sizeof(pTexDesc))
    pTexDesc.filterMode, pTexDesc.maxAnisotropy = t.filterMode, t.maxAnisotropy
    pTexDesc.flags = (0 if t.readMode else HIP_TRSF_READ_AS_INTEGER) | \
        (HIP_TRSF_NORMALIZED_COORDINATES if t.normalizedCoords else 0) | (HIP_TRSF_SRGB if t.sRGB else 0)
    pTexDesc.mipmapFilterMode, pTexDesc.mipmapLevelBias = t.mipmapFilterMode, t.mipmapLevelBias
    pTexDesc.minMipmapLevelClamp, pTexDesc.maxMipmapLevelClamp = t.minMipmapLevelClamp, t.maxMipmapLevelClamp
    for i in range(3):
        pTexDesc.addressMode[i] = t.addressMode[i]
    for i in range(4):
        pTexDesc.borderColor[i] = t.borderColor[i]


@hip_api()
def hipTexObjectGetResourceViewDesc(pResViewDesc: HIP_RESOURCE_VIEW_DESC, texObject):
    o = T.lookup(as_address(texObject) or 0, "texture")
    if pResViewDesc is None:
        raise HipError(INVALID, "null output descriptor")
    ctypes.memset(ctypes.addressof(pResViewDesc), 0, ctypes.sizeof(pResViewDesc))
    v = o.view
    if v is not None:
        for name in ("format", "width", "height", "depth", "firstMipmapLevel", "lastMipmapLevel", "firstLayer",
                     "lastLayer"):
            setattr(pResViewDesc, name, getattr(v, name))


__all__ = [n for n in dir() if n.startswith("hip")]
