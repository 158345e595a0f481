"""Legacy texture references (``texture<T, dim, mode>`` globals and ``hipModuleGetTexRef``) as hipamd 5.2
implements them: binding creates a texture object from the reference's fields (``addressMode``,
``filterMode``, ``readMode``, ``normalized``, ...), stores it in the reference's ``textureObject`` and copies
the whole 88-byte ``textureReference`` to the device variable kernels read.  A reference is a
``textureReference`` struct (``structs``) in host memory; its device variable is known from
``hipModuleGetTexRef`` or, for hipcc's static ``texture<>`` globals, from the C ABI's registration."""
from __future__ import annotations

import ctypes
import threading

from .._hip_enums import hipArray_Format, hipTextureAddressMode, hipTextureFilterMode
from ..errors import HipError, hipError_t
from ..runtime import images as I, ops, textures as T
from ..runtime.context import runtime
from ..runtime.memory import as_address
from . import structs, textures as HT
from ._api import hip_api
from ._constants import (HIP_TRSA_OVERRIDE_FORMAT, HIP_TRSF_NORMALIZED_COORDINATES, HIP_TRSF_READ_AS_INTEGER,
                         HIP_TRSF_SRGB)
from .pointers import Pointer, as_name
from .texture_types import c_struct, new_struct

INVALID = hipError_t.hipErrorInvalidValue
_lock = threading.RLock()
_refs: dict[int, tuple] = {}      # reference address -> (textureReference struct, device variable address)
static_resolver = None            # set by the C ABI: host shadow address -> device address


def _ref(tex):
    """The ctypes view of a textureReference argument (the struct, or its address)."""
    r = c_struct("textureReference", tex)
    if r is None:
        raise HipError(INVALID, "null texture reference")
    return r


def _device_var(r) -> int:
    with _lock:
        hit = _refs.get(ctypes.addressof(r))
    if hit is not None:
        return hit[1]
    if static_resolver is not None:
        return static_resolver(ctypes.addressof(r))
    raise HipError(hipError_t.hipErrorInvalidSymbol, "the texture reference has no device variable")


def _tex_desc(r):
    d = new_struct("hipTextureDesc")
    d.filterMode, d.readMode, d.sRGB, d.normalizedCoords = r.filterMode, r.readMode, r.sRGB, r.normalized
    d.maxAnisotropy, d.mipmapFilterMode, d.mipmapLevelBias = r.maxAnisotropy, r.mipmapFilterMode, r.mipmapLevelBias
    d.minMipmapLevelClamp, d.maxMipmapLevelClamp = r.minMipmapLevelClamp, r.maxMipmapLevelClamp
    d.addressMode[:] = r.addressMode[:]
    return d


def _rebind(r, res, view=None) -> None:
    """Replace the reference's texture object and copy the reference to its device variable."""
    dev_addr = _device_var(r)
    if r.textureObject:
        HT.destroy_texture_object(r.textureObject)
        r.textureObject = None
    r.textureObject = HT.create_texture_object(res, _tex_desc(r), view)
    ops.memcpy(dev_addr, ctypes.addressof(r), ctypes.sizeof(r), 1, None, sync=True)


def _aligned(dev_ptr: int) -> tuple[int, int]:
    """(pointer aligned down to the texture alignment, offset)."""
    if not dev_ptr:
        raise HipError(INVALID, "null device pointer")
    off = dev_ptr % T.ALIGN
    return dev_ptr - off, off


def _linear(dev_ptr: int, desc, size: int):
    res = new_struct("hipResourceDesc")
    res.resType = T.RES_LINEAR
    res.res.linear.devPtr, res.res.linear.desc, res.res.linear.sizeInBytes = dev_ptr, desc, size
    return res


def _pitch2d(dev_ptr: int, desc, w: int, h: int, pitch: int):
    res = new_struct("hipResourceDesc")
    res.resType = T.RES_PITCH2D
    p2 = res.res.pitch2D
    p2.devPtr, p2.desc, p2.width, p2.height, p2.pitchInBytes = dev_ptr, desc, w, h, pitch
    return res


def _array(array, desc):
    """(hipResourceDesc, hipResourceViewDesc) of an array bound through a reference: the view gives the
    reference's format."""
    st = HT.array_of(array)
    res = new_struct("hipResourceDesc")
    res.resType = T.RES_ARRAY
    res.res.array.array = HT.handle_address(array)
    fmt = HT.format_of(desc)
    view = new_struct("hipResourceViewDesc")
    view.format = next(k for k, v in HT.VIEW_FORMATS.items() if v == (fmt.array_format, fmt.channels))
    view.width, view.height, view.depth = st.width, st.height, st.depth
    return res, view


def _own_desc(r):
    return HT.channel_desc(I.Format(r.format, r.numChannels))


def _desc(desc):
    d = c_struct("hipChannelFormatDesc", desc)
    if d is None:
        raise HipError(INVALID, "null channel descriptor")
    return d


# ---- binding -----------------------------------------------------------------------------------------------------
def bind_linear(tex, dev_ptr, desc, size) -> int:
    r, d = _ref(tex), _desc(desc)
    base, off = _aligned(as_address(dev_ptr) or 0)
    _rebind(r, _linear(base, d, size))
    return off


def bind_2d(tex, dev_ptr, desc, width, height, pitch) -> int:
    r, d = _ref(tex), _desc(desc)
    base, off = _aligned(as_address(dev_ptr) or 0)
    _rebind(r, _pitch2d(base, d, width, height, pitch))
    return off


def bind_array(tex, array, desc) -> None:
    r = _ref(tex)
    if array is None or not HT.handle_address(array):
        raise HipError(INVALID, "null array")
    _rebind(r, *_array(array, _desc(desc)))


@hip_api(1)
def hipBindTexture(tex, devPtr, desc, size):
    return bind_linear(tex, devPtr, desc, size)


@hip_api(1)
def hipBindTexture2D(tex, devPtr, desc, width, height, pitch):
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
    r.textureObject = None


@hip_api(1)
def hipGetTextureAlignmentOffset(texref):
    _ref(texref)
    return 0                       # HIP 5.2 reports 0


@hip_api(1)
def hipModuleGetTexRef(hmod, name):
    """A textureReference struct holding a copy of the module's reference (what HIP 5.2 returns)."""
    from .launch import _module

    if name is None:
        raise HipError(INVALID, "null name")
    dev_addr, _ = _module(hmod).global_var(as_name(name))
    s = structs.textureReference()
    size = s.c_sizeof()
    ctypes.memmove(int(s), runtime().device().backend.read(dev_addr, size), size)
    with _lock:
        _refs[int(s)] = (s, dev_addr)
    return s


# ---- the driver-style setters and getters --------------------------------------------------------------------------
@hip_api()
def hipTexRefSetArray(tex, array, flags):
    r = _ref(tex)
    if array is None or not HT.handle_address(array):
        raise HipError(INVALID, "null array")
    if flags != HIP_TRSA_OVERRIDE_FORMAT:
        raise HipError(INVALID, "flags must be HIP_TRSA_OVERRIDE_FORMAT")
    _rebind(r, *_array(array, _own_desc(r)))


@hip_api(1)
def hipTexRefSetAddress(texRef, dptr, bytes):
    r = _ref(texRef)
    base, off = _aligned(as_address(dptr) or 0)
    _rebind(r, _linear(base, _own_desc(r), bytes))
    return off


@hip_api()
def hipTexRefSetAddress2D(texRef, desc, dptr, Pitch):
    r = _ref(texRef)
    d = c_struct("HIP_ARRAY_DESCRIPTOR", desc)
    if d is None:
        raise HipError(INVALID, "null descriptor")
    cd = HT.channel_desc(I.Format(d.Format, d.NumChannels))
    _rebind(r, _pitch2d(as_address(dptr) or 0, cd, d.Width, d.Height, Pitch))


@hip_api()
def hipTexRefSetAddressMode(texRef, dim, am):
    r = _ref(texRef)
    if not 0 <= dim <= 2:
        raise HipError(INVALID, f"dimension {dim}")
    r.addressMode[dim] = int(am)


@hip_api()
def hipTexRefSetFilterMode(texRef, fm):
    _ref(texRef).filterMode = int(fm)


@hip_api()
def hipTexRefSetFlags(texRef, Flags):
    r = _ref(texRef)
    r.readMode = 0 if Flags & HIP_TRSF_READ_AS_INTEGER else 1
    r.normalized = int(bool(Flags & HIP_TRSF_NORMALIZED_COORDINATES))
    r.sRGB = int(bool(Flags & HIP_TRSF_SRGB))


@hip_api()
def hipTexRefSetFormat(texRef, fmt, NumPackedComponents):
    r = _ref(texRef)
    r.format, r.numChannels = int(fmt), NumPackedComponents


@hip_api(1)
def hipTexRefGetAddress(texRef):
    """The device pointer the reference is bound to, as a Pointer (hip-python's ``dev_ptr``)."""
    res = HT.texture(_ref(texRef).textureObject or 0).api[0]
    if res.resType == T.RES_LINEAR:
        return Pointer(res.res.linear.devPtr or 0)
    if res.resType == T.RES_PITCH2D:
        return Pointer(res.res.pitch2D.devPtr or 0)
    raise HipError(INVALID, "the reference is bound to an array, not to memory")


def _enum(cls, value: int):
    """hip-python converts C results to the enum; a value outside it (only a C caller can store one) stays an
    integer here rather than failing the query."""
    return cls(value) if value in cls._value2member_map_ else value


@hip_api(1)
def hipTexRefGetAddressMode(texRef, dim):
    r = _ref(texRef)
    if dim not in (0, 1):                # HIP 5.2 accepts dimensions 0 and 1 here
        raise HipError(INVALID, f"dimension {dim}")
    return _enum(hipTextureAddressMode, r.addressMode[dim])


@hip_api(1)
def hipTexRefGetFilterMode(texRef):
    return _enum(hipTextureFilterMode, _ref(texRef).filterMode)


@hip_api(1)
def hipTexRefGetFlags(texRef):
    r = _ref(texRef)
    return (HIP_TRSF_READ_AS_INTEGER if r.readMode == 0 else 0) | \
        (HIP_TRSF_NORMALIZED_COORDINATES if r.normalized == 1 else 0) | (HIP_TRSF_SRGB if r.sRGB == 1 else 0)


@hip_api(2)
def hipTexRefGetFormat(texRef):
    r = _ref(texRef)
    return _enum(hipArray_Format, r.format), r.numChannels


__all__ = [n for n in dir() if n.startswith("hip")]
