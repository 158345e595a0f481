"""Legacy texture references (``texture<T, dim, mode>`` globals and ``hipModuleGetTexRef``) as hipamd 5.2
implements them: binding creates a texture object from the reference's fields (``addressMode``,
``filterMode``, ``readMode``, ``normalized``, ...), stores it in the reference's ``textureObject`` and copies
the whole 88-byte ``textureReference`` to the device variable kernels read.  A reference is a
``textureReference`` struct (``texture_types``) in host memory; its device variable is known from
``hipModuleGetTexRef`` or, for hipcc's static ``texture<>`` globals, from the C ABI's registration."""
from __future__ import annotations

import ctypes
import threading

from ..errors import HipError, hipError_t
from ..runtime import images as I, ops, textures as T
from ..runtime.context import runtime
from ..runtime.memory import as_address
from . import textures as HT
from ._api import hip_api
from .texture_types import HIP_ARRAY_DESCRIPTOR, hipChannelFormatDesc, hipResourceDesc, hipResourceViewDesc, \
    hipTextureDesc, textureReference

INVALID = hipError_t.hipErrorInvalidValue
HIP_TRSA_OVERRIDE_FORMAT, HIP_TRSF_READ_AS_INTEGER, HIP_TRSF_NORMALIZED_COORDINATES, HIP_TRSF_SRGB = 1, 1, 2, 0x10
_lock = threading.RLock()
_refs: dict[int, tuple[textureReference, int]] = {}      # reference address -> (struct, device variable address)
static_resolver = None                                   # set by the C ABI: host shadow address -> device address


def _ref(tex) -> textureReference:
    if tex is None:
        raise HipError(INVALID, "null texture reference")
    if isinstance(tex, textureReference):
        return tex
    return textureReference.from_address(int(tex))


def _device_var(r: textureReference) -> int:
    with _lock:
        hit = _refs.get(ctypes.addressof(r))
    if hit is not None:
        return hit[1]
    if static_resolver is not None:
        return static_resolver(ctypes.addressof(r))
    raise HipError(hipError_t.hipErrorInvalidSymbol, "the texture reference has no device variable")


def _tex_desc(r: textureReference) -> hipTextureDesc:
    d = hipTextureDesc(filterMode=r.filterMode, readMode=r.readMode, sRGB=r.sRGB, normalizedCoords=r.normalized,
                       maxAnisotropy=r.maxAnisotropy, mipmapFilterMode=r.mipmapFilterMode,
                       mipmapLevelBias=r.mipmapLevelBias, minMipmapLevelClamp=r.minMipmapLevelClamp,
                       maxMipmapLevelClamp=r.maxMipmapLevelClamp)
    for i in range(3):
        d.addressMode[i] = r.addressMode[i]
    return d


def _rebind(tex, res: hipResourceDesc, view: hipResourceViewDesc | None = None) -> None:
    """Replace the reference's texture object and copy the reference to its device variable."""
    r = _ref(tex)
    dev_addr = _device_var(r)
    if r.textureObject:
        HT.destroy_texture_object(r.textureObject)
        r.textureObject = 0
    r.textureObject = int(HT.create_texture_object(res, _tex_desc(r), view))
    ops.memcpy(dev_addr, ctypes.addressof(r), ctypes.sizeof(textureReference), 1, None, sync=True)


def _aligned(dev_ptr: int) -> tuple[int, int]:
    """(pointer aligned down to the texture alignment, offset)."""
    if not dev_ptr:
        raise HipError(INVALID, "null device pointer")
    off = dev_ptr % T.ALIGN
    return dev_ptr - off, off


def _linear(dev_ptr: int, desc: hipChannelFormatDesc, size: int) -> hipResourceDesc:
    res = hipResourceDesc(resType=T.RES_LINEAR)
    res.res.linear.devPtr, res.res.linear.desc, res.res.linear.sizeInBytes = dev_ptr, desc, int(size)
    return res


def _pitch2d(dev_ptr: int, desc: hipChannelFormatDesc, w, h, pitch) -> hipResourceDesc:
    res = hipResourceDesc(resType=T.RES_PITCH2D)
    p2 = res.res.pitch2D
    p2.devPtr, p2.desc, p2.width, p2.height, p2.pitchInBytes = dev_ptr, desc, int(w), int(h), int(pitch)
    return res


def _array(array, desc: hipChannelFormatDesc) -> tuple[hipResourceDesc, hipResourceViewDesc]:
    res = hipResourceDesc(resType=T.RES_ARRAY)
    res.res.array.array = array
    fmt = HT.format_of(desc)
    code = next(k for k, v in HT._VIEW.items() if v == (fmt.array_format, fmt.channels))
    st = HT.array_of(array)
    return res, hipResourceViewDesc(format=code, width=st.width, height=st.height, depth=st.depth)


def _own_desc(r: textureReference) -> hipChannelFormatDesc:
    return hipChannelFormatDesc(*I.channel_desc_of(I.Format(r.format, r.numChannels)))


# ---- binding -----------------------------------------------------------------------------------------------------
def bind_linear(tex, dev_ptr, desc, size) -> int:
    base, off = _aligned(as_address(dev_ptr) or 0)
    _rebind(tex, _linear(base, desc, size))
    return off


def bind_2d(tex, dev_ptr, desc, width, height, pitch) -> int:
    base, off = _aligned(as_address(dev_ptr) or 0)
    _rebind(tex, _pitch2d(base, desc, width, height, pitch))
    return off


def bind_array(tex, array, desc) -> None:
    if array is None or int(array) == 0:
        raise HipError(INVALID, "null array")
    if desc is None:
        raise HipError(INVALID, "null channel descriptor")
    _rebind(tex, *_array(array, desc))


@hip_api(1)
def hipBindTexture(tex, devPtr, desc, size: int):
    return bind_linear(tex, devPtr, desc, size)


@hip_api(1)
def hipBindTexture2D(tex, devPtr, desc, width: int, height: int, pitch: int):
    return bind_2d(tex, devPtr, desc, width, height, pitch)


@hip_api()
def hipBindTextureToArray(tex, array, desc):
    bind_array(tex, array, desc)


@hip_api()
def hipBindTextureToMipmappedArray(tex, mipmappedArray, desc):
    raise HipError(hipError_t.hipErrorNotSupported, "mipmapped textures are not supported (as in HIP 5.2)")


@hip_api()
def hipUnbindTexture(tex):
    r = _ref(tex)
    if r.textureObject:
        HT.destroy_texture_object(r.textureObject)
    r.textureObject = 0


@hip_api(1)
def hipGetTextureAlignmentOffset(texref):
    _ref(texref)
    return 0                       # HIP 5.2 reports 0


@hip_api(1)
def hipModuleGetTexRef(hmod, name):
    from .launch import _module

    if name is None:
        raise HipError(INVALID, "null name")
    dev_addr, _ = _module(hmod).global_var(name.decode() if isinstance(name, bytes) else name)
    r = textureReference()
    raw = runtime().device().backend.read(dev_addr, ctypes.sizeof(r))
    ctypes.memmove(ctypes.addressof(r), raw, ctypes.sizeof(r))
    with _lock:
        _refs[ctypes.addressof(r)] = (r, dev_addr)
    return r


# ---- the driver-style setters and getters --------------------------------------------------------------------------
@hip_api()
def hipTexRefSetArray(texRef, array, flags: int):
    if array is None or int(array) == 0:
        raise HipError(INVALID, "null array")
    if int(flags) != HIP_TRSA_OVERRIDE_FORMAT:
        raise HipError(INVALID, "flags must be HIP_TRSA_OVERRIDE_FORMAT")
    _rebind(texRef, *_array(array, _own_desc(_ref(texRef))))


@hip_api(1)
def hipTexRefSetAddress(texRef, dptr, bytes: int):
    return bind_linear(texRef, dptr, _own_desc(_ref(texRef)), bytes)


@hip_api()
def hipTexRefSetAddress2D(texRef, desc: HIP_ARRAY_DESCRIPTOR, dptr, Pitch: int):
    if desc is None:
        raise HipError(INVALID, "null descriptor")
    cd = hipChannelFormatDesc(*I.channel_desc_of(I.Format(int(desc.Format), int(desc.NumChannels))))
    _rebind(texRef, _pitch2d(as_address(dptr) or 0, cd, desc.Width, desc.Height, Pitch))


@hip_api()
def hipTexRefSetAddressMode(texRef, dim: int, am):
    if not 0 <= int(dim) <= 2:
        raise HipError(INVALID, f"dimension {dim}")
    _ref(texRef).addressMode[int(dim)] = int(am)


@hip_api()
def hipTexRefSetFilterMode(texRef, fm):
    _ref(texRef).filterMode = int(fm)


@hip_api()
def hipTexRefSetFlags(texRef, Flags: int):
    r, flags = _ref(texRef), int(Flags)
    r.readMode = 0 if flags & HIP_TRSF_READ_AS_INTEGER else 1
    r.normalized = int(bool(flags & HIP_TRSF_NORMALIZED_COORDINATES))
    r.sRGB = int(bool(flags & HIP_TRSF_SRGB))


@hip_api()
def hipTexRefSetFormat(texRef, fmt, NumPackedComponents: int):
    r = _ref(texRef)
    r.format, r.numChannels = int(fmt), int(NumPackedComponents)


@hip_api(1)
def hipTexRefGetAddress(texRef):
    res = hipResourceDesc()
    HT.fill_resource_desc(res, _ref(texRef).textureObject or 0)
    if res.resType == T.RES_LINEAR:
        return res.res.linear.devPtr or 0
    if res.resType == T.RES_PITCH2D:
        return res.res.pitch2D.devPtr or 0
    raise HipError(INVALID, "the reference is bound to an array, not to memory")


@hip_api(1)
def hipTexRefGetAddressMode(texRef, dim: int):
    if int(dim) not in (0, 1):                # HIP 5.2 accepts dimensions 0 and 1 here
        raise HipError(INVALID, f"dimension {dim}")
    return _ref(texRef).addressMode[int(dim)]


@hip_api(1)
def hipTexRefGetFilterMode(texRef):
    return _ref(texRef).filterMode


@hip_api(1)
def hipTexRefGetFlags(texRef):
    r = _ref(texRef)
    return (HIP_TRSF_READ_AS_INTEGER if r.readMode == 0 else 0) | \
        (HIP_TRSF_NORMALIZED_COORDINATES if r.normalized == 1 else 0) | (HIP_TRSF_SRGB if r.sRGB == 1 else 0)


@hip_api(2)
def hipTexRefGetFormat(texRef):
    r = _ref(texRef)
    return r.format, r.numChannels


__all__ = [n for n in dir() if n.startswith("hip")]
