"""``pyhip.hip``'s arrays, copies to and from them and texture objects, in hip-python's conventions
(``_hippython_api``): its signatures without defaults, ``(err, value…)`` tuples, struct arguments as
``structs.py``'s types (or their addresses, as hip-python's ``fromPyobj`` takes them), output structs filled in
place, enum results as enums.

Arrays are returned as ``hipArray`` structs (their fields as HIP 5.2 fills them; ``int(a)`` is the handle the
C ABI hands out), texture objects as ``__hip_texture`` Pointers.  Implementations read every struct through
its ctypes view (``texture_types.c_struct``), so the C ABI's plain addresses and integers go the same way."""
from __future__ import annotations

import ctypes
import threading

from .._hip_enums import hipMemcpyKind
from ..errors import HipError, hipError_t
from ..runtime import images as I, textures as T
from ..runtime.context import runtime
from ..runtime.memory import as_address
from . import structs
from ._api import hip_api
from .conventions import argument_checker
from .pointers import address_of
from .texture_types import __hip_texture, c_struct, new_struct

INVALID = hipError_t.hipErrorInvalidValue
_lock = threading.RLock()
_arrays: dict[int, tuple] = {}        # hipArray struct address -> (hipArray struct, ImageArray)
_mipmaps: dict[int, tuple] = {}       # hipMipmappedArray struct address -> (struct, [hipArray structs of the levels])


# ---- handles --------------------------------------------------------------------------------------------------
def handle_address(obj) -> int:
    """The address a handle argument names (a struct, Pointer, int, ``ctypes.c_void_p``; None is NULL)."""
    try:
        return address_of(obj)
    except (TypeError, ValueError):
        raise HipError(INVALID, f"not a handle: {type(obj).__name__}") from None


def array_of(handle) -> I.ImageArray:
    a = handle_address(handle)
    if not a:
        raise HipError(INVALID, "null array")
    with _lock:
        hit = _arrays.get(a)
    if hit is None or not hit[1].addr:
        raise HipError(INVALID, f"not a live hipArray: {handle!r}")
    return hit[1]


def _channel_desc(ct, fmt: I.Format) -> None:
    ct.x, ct.y, ct.z, ct.w, ct.f = I.channel_desc_of(fmt)


def _struct_for(a: I.ImageArray):
    s = structs.hipArray()
    o = s._obj
    o.data, o.width, o.height, o.depth = a.addr, a.width, a.height, a.depth
    o.Format, o.NumChannels = a.fmt.array_format, a.fmt.channels
    _channel_desc(o.desc, a.fmt)
    a.handle = s
    with _lock:
        _arrays[int(s)] = (s, a)
    return s


def _forget(a: I.ImageArray) -> None:
    with _lock:
        _arrays.pop(int(a.handle), None)


def format_of(desc) -> I.Format:
    """The element format of a hipChannelFormatDesc (its ctypes view)."""
    if desc is None:
        raise HipError(INVALID, "null channel descriptor")
    return I.format_for_channel_desc(desc.x, desc.y, desc.z, desc.w, desc.f)


def channel_desc(fmt: I.Format):
    """A hipChannelFormatDesc ctypes struct for an element format."""
    d = new_struct("hipChannelFormatDesc")
    _channel_desc(d, fmt)
    return d


# ---- channel descriptors and arrays -------------------------------------------------------------------------------
def hipCreateChannelDesc(x, y, z, w, f):
    """``(hipSuccess, desc)`` as hip-python returns it (HIP's is an inline: the last error is untouched)."""
    x, y, z, w, f = _check_channel_desc((x, y, z, w, f), {})
    d = structs.hipChannelFormatDesc()
    o = d._obj
    o.x, o.y, o.z, o.w, o.f = x, y, z, w, f
    return (hipError_t.hipSuccess, d)


_check_channel_desc = argument_checker(hipCreateChannelDesc)


@hip_api(1)
def hipMallocArray(desc, width, height, flags):
    return _struct_for(I.create_array(runtime().device(), format_of(c_struct("hipChannelFormatDesc", desc)),
                                      width, height, 0, flags))


def _extent(extent):
    e = c_struct("hipExtent", extent)
    if e is None:
        raise HipError(INVALID, "null extent")
    return e


@hip_api(1)
def hipMalloc3DArray(desc, extent, flags):
    e = _extent(extent)
    return _struct_for(I.create_array(runtime().device(), format_of(c_struct("hipChannelFormatDesc", desc)),
                                      e.width, e.height, e.depth, flags))


def _array_descriptor(name: str, d):
    v = c_struct(name, d)
    if v is None:
        raise HipError(INVALID, "null array descriptor")
    return v


@hip_api(1)
def hipArrayCreate(pAllocateArray):
    d = _array_descriptor("HIP_ARRAY_DESCRIPTOR", pAllocateArray)
    return _struct_for(I.create_array(runtime().device(), I.Format(d.Format, d.NumChannels), d.Width, d.Height,
                                      0, 0))


@hip_api(1)
def hipArray3DCreate(pAllocateArray):
    d = _array_descriptor("HIP_ARRAY3D_DESCRIPTOR", pAllocateArray)
    return _struct_for(I.create_array(runtime().device(), I.Format(d.Format, d.NumChannels), d.Width, d.Height,
                                      d.Depth, d.Flags))


def _free_array(array):
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
    out = c_struct("hipChannelFormatDesc", desc)
    if out is None:
        raise HipError(INVALID, "null output descriptor")
    _channel_desc(out, array_of(array).fmt)


# mipmapped arrays: the runtime API is not supported by HIP 5.2; the driver API keeps one array per level
@hip_api(1)
def hipMallocMipmappedArray(desc, extent, numLevels, flags):
    raise HipError(hipError_t.hipErrorNotSupported, "hipMallocMipmappedArray is not supported (as in HIP 5.2)")


@hip_api()
def hipFreeMipmappedArray(mipmappedArray):
    raise HipError(hipError_t.hipErrorNotSupported, "hipFreeMipmappedArray is not supported (as in HIP 5.2)")


@hip_api(1)
def hipGetMipmappedArrayLevel(mipmappedArray, level):
    raise HipError(hipError_t.hipErrorNotSupported, "hipGetMipmappedArrayLevel is not supported (as in HIP 5.2)")


@hip_api(1)
def hipMipmappedArrayCreate(pMipmappedArrayDesc, numMipmapLevels):
    d = _array_descriptor("HIP_ARRAY3D_DESCRIPTOR", pMipmappedArrayDesc)
    fmt = I.Format(d.Format, d.NumChannels)
    n = numMipmapLevels
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
    s = structs.hipMipmappedArray()
    o = s._obj
    o.data, o.type, o.width, o.height, o.depth = levels[0].addr, kind_code(I.array_kind(d.Width, d.Height, d.Depth,
                                                                                         d.Flags)), \
        d.Width, d.Height, d.Depth
    o.min_mipmap_level, o.max_mipmap_level, o.flags, o.format = 0, n, d.Flags, d.Format
    _channel_desc(o.desc, fmt)
    for a in levels:
        a.owner = s
    level_structs = [_struct_for(a) for a in levels]
    with _lock:
        _mipmaps[int(s)] = (s, level_structs)
    return s


def kind_code(kind: str) -> int:
    """cl_mem_object_type of an array kind (what HIP 5.2 stores in hipMipmappedArray.type)."""
    return {"1d": 0x10F4, "2d": 0x10F1, "3d": 0x10F2, "1da": 0x10F5, "2da": 0x10F3}[kind]


def mipmap_of(handle):
    """(hipMipmappedArray struct, [level hipArray structs]) of a live mipmapped array."""
    with _lock:
        hit = _mipmaps.get(handle_address(handle))
    if hit is None:
        raise HipError(INVALID, f"not a mipmapped array: {handle!r}")
    return hit


@hip_api()
def hipMipmappedArrayDestroy(hMipmappedArray):
    s, levels = mipmap_of(hMipmappedArray)
    for lv in levels:
        a = array_of(lv)
        I.destroy_array(a)
        _forget(a)
    with _lock:
        _mipmaps.pop(int(s), None)


@hip_api(1)
def hipMipmappedArrayGetLevel(hMipMappedArray, level):
    s, levels = mipmap_of(hMipMappedArray)
    if not 0 <= level < len(levels):
        raise HipError(INVALID, f"level {level} of {len(levels)}")
    return levels[level]


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
    if spitch == 0:
        raise HipError(hipError_t.hipErrorInvalidPitchValue, "source pitch 0")
    if height == 0:
        return                                    # an empty copy succeeds and copies nothing (HIP 5.2)
    I.copy_3d(runtime(), _arr(dst, wOffset, hOffset), _mem(src, kind, "src", spitch), width, height, 1, stream, sync)


def _copy2d_from(dst, dpitch, src, wOffset, hOffset, width, height, kind, stream, sync):
    if dpitch == 0:
        raise HipError(hipError_t.hipErrorInvalidPitchValue, "destination pitch 0")
    if height == 0:
        return                                    # an empty copy succeeds and copies nothing (HIP 5.2)
    I.copy_3d(runtime(), _mem(dst, kind, "dst", dpitch), _arr(src, wOffset, hOffset), width, height, 1, stream, sync)


@hip_api()
def hipMemcpy2DToArray(dst, wOffset, hOffset, src, spitch, width, height, kind):
    _copy2d_to(dst, wOffset, hOffset, src, spitch, width, height, kind, None, True)


@hip_api()
def hipMemcpy2DToArrayAsync(dst, wOffset, hOffset, src, spitch, width, height, kind, stream):
    _copy2d_to(dst, wOffset, hOffset, src, spitch, width, height, kind, stream, False)


@hip_api()
def hipMemcpy2DFromArray(dst, dpitch, src, wOffset, hOffset, width, height, kind):
    _copy2d_from(dst, dpitch, src, wOffset, hOffset, width, height, kind, None, True)


@hip_api()
def hipMemcpy2DFromArrayAsync(dst, dpitch, src, wOffset, hOffset, width, height, kind, stream):
    _copy2d_from(dst, dpitch, src, wOffset, hOffset, width, height, kind, stream, False)


def _linear(a: I.ImageArray, count: int):
    """HIP 5.2's hipMemcpyToArray/FromArray region: ``count`` bytes as rows of count / height bytes."""
    rows = max(a.height, 1)
    return count // rows, count // a.width // a.fmt.element_size


@hip_api()
def hipMemcpyToArray(dst, wOffset, hOffset, src, count, kind):
    w, h = _linear(array_of(dst), count)
    I.copy_3d(runtime(), _arr(dst, wOffset, hOffset), _mem(src, kind, "src", w), w, h, 1)


@hip_api()
def hipMemcpyFromArray(dst, srcArray, wOffset, hOffset, count, kind):
    w, h = _linear(array_of(srcArray), count)
    I.copy_3d(runtime(), _mem(dst, kind, "dst", w), _arr(srcArray, wOffset, hOffset), w, h, 1)


@hip_api()
def hipMemcpyHtoA(dstArray, dstOffset, srcHost, count):
    I.copy_3d(runtime(), _arr(dstArray, dstOffset), _mem(srcHost, hipMemcpyKind.hipMemcpyHostToDevice, "src"), count, 1, 1)


@hip_api()
def hipMemcpyAtoH(dst, srcArray, srcOffset, count):
    I.copy_3d(runtime(), _mem(dst, hipMemcpyKind.hipMemcpyDeviceToHost, "dst"), _arr(srcArray, srcOffset), count, 1, 1)


def _memcpy3d(parms, stream, sync):
    p = c_struct("hipMemcpy3DParms", parms)
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
    I.copy_3d(runtime(), dst, src, ext.width * elem, ext.height, ext.depth, stream, sync)


@hip_api()
def hipMemcpy3D(p):
    """Copies between arrays and pitched memory (array extents and positions in elements, memory ones in
    bytes, as hipamd 5.2 reads hipMemcpy3DParms)."""
    _memcpy3d(p, None, True)


@hip_api()
def hipMemcpy3DAsync(p, stream):
    _memcpy3d(p, stream, False)


# ---- texture objects ------------------------------------------------------------------------------------------------
def resource_of(d) -> T.Resource:
    """The runtime's Resource for a hipResourceDesc (ctypes view)."""
    if d is None:
        raise HipError(INVALID, "null resource descriptor")
    kind = d.resType
    if kind == T.RES_ARRAY:
        if not d.res.array.array:
            raise HipError(INVALID, "the resource's array is null")
        return T.Resource(kind, array=array_of(d.res.array.array))
    if kind == T.RES_MIPMAPPED:
        if not d.res.mipmap.mipmap:
            raise HipError(INVALID, "the resource's mipmapped array is null")
        return T.Resource(kind, mipmap=mipmap_of(d.res.mipmap.mipmap)[0])
    if kind == T.RES_LINEAR:
        lin = d.res.linear
        return T.Resource(kind, dev_ptr=lin.devPtr or 0, fmt=format_of(lin.desc), size_bytes=lin.sizeInBytes)
    if kind == T.RES_PITCH2D:
        p = d.res.pitch2D
        return T.Resource(kind, dev_ptr=p.devPtr or 0, fmt=format_of(p.desc), width=p.width, height=p.height,
                          pitch_bytes=p.pitchInBytes)
    raise HipError(INVALID, f"invalid resource type {kind}")


def tex_desc_of(d) -> T.TextureDesc:
    if d is None:
        raise HipError(INVALID, "null texture descriptor")
    return T.TextureDesc(tuple(d.addressMode), d.filterMode, d.readMode, d.sRGB, tuple(d.borderColor),
                         d.normalizedCoords, d.maxAnisotropy, d.mipmapFilterMode, d.mipmapLevelBias,
                         d.minMipmapLevelClamp, d.maxMipmapLevelClamp)


# hipResourceViewFormat -> (array format, channels); 0 (hipResViewFormatNone) keeps the array's format
VIEW_FORMATS = {1: (1, 1), 2: (1, 2), 3: (1, 4), 4: (8, 1), 5: (8, 2), 6: (8, 4), 7: (2, 1), 8: (2, 2), 9: (2, 4),
                10: (9, 1), 11: (9, 2), 12: (9, 4), 13: (3, 1), 14: (3, 2), 15: (3, 4), 16: (10, 1), 17: (10, 2),
                18: (10, 4), 19: (16, 1), 20: (16, 2), 21: (16, 4), 22: (32, 1), 23: (32, 2), 24: (32, 4)}


def view_format_of(v):
    if v is None or v.format == 0:
        return None
    if v.format not in VIEW_FORMATS:
        raise HipError(hipError_t.hipErrorNotSupported, f"resource view format {v.format} is not supported")
    return I.Format(*VIEW_FORMATS[v.format])


def copy_struct(s):
    """A private copy of a ctypes struct (what the API keeps of the caller's descriptors)."""
    out = type(s)()
    ctypes.memmove(ctypes.addressof(out), ctypes.addressof(s), ctypes.sizeof(s))
    return out


def create_texture_object(res, tex, view=None) -> int:
    """Create a texture object from ctypes views of hipResourceDesc / hipTextureDesc / hipResourceViewDesc;
    returns its device address."""
    dev = runtime().device()
    I.require_images(dev)
    if res is None or tex is None:
        raise HipError(INVALID, "null resource or texture descriptor")
    o = T.create_texture(dev, resource_of(res), tex_desc_of(tex), copy_struct(view) if view is not None else None,
                         view_format_of(view))
    o.api = (copy_struct(res), copy_struct(tex))
    return o.addr


@hip_api(1)
def hipCreateTextureObject(pResDesc, pTexDesc, pResViewDesc):
    return __hip_texture(create_texture_object(c_struct("hipResourceDesc", pResDesc),
                                               c_struct("hipTextureDesc", pTexDesc),
                                               c_struct("hipResourceViewDesc", pResViewDesc)))


def destroy_texture_object(textureObject) -> None:
    T.destroy(handle_address(textureObject), "texture")


@hip_api()
def hipDestroyTextureObject(textureObject):
    destroy_texture_object(textureObject)


def texture(textureObject) -> T.ImageObject:
    return T.lookup(handle_address(textureObject), "texture")


def _fill(name: str, out, src) -> None:
    dst = c_struct(name, out)
    if dst is None:
        raise HipError(INVALID, "null output descriptor")
    ctypes.memmove(ctypes.addressof(dst), ctypes.addressof(src), ctypes.sizeof(src))


def fill_resource_desc(pResDesc, textureObject) -> None:
    _fill("hipResourceDesc", pResDesc, texture(textureObject).api[0])


@hip_api()
def hipGetTextureObjectResourceDesc(pResDesc, textureObject):
    fill_resource_desc(pResDesc, textureObject)


@hip_api()
def hipGetTextureObjectTextureDesc(pTexDesc, textureObject):
    _fill("hipTextureDesc", pTexDesc, texture(textureObject).api[1])


@hip_api()
def hipGetTextureObjectResourceViewDesc(pResViewDesc, textureObject):
    o = texture(textureObject)
    _fill("hipResourceViewDesc", pResViewDesc, o.view if o.view is not None else new_struct("hipResourceViewDesc"))


__all__ = [n for n in dir() if n.startswith("hip")]
