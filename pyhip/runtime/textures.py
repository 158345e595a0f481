"""Texture and surface objects as HIP 5.2 builds them: a small device allocation holding the 12-dword image
object (``images``) and, for textures, the 8-dword sampler object (the 4-dword S# and 4 zero dwords) at
dword 12 — the layout ``hipTextureObject_t`` points to and the device library reads
(``HIP_IMAGE_OBJECT_SIZE_DWORD`` 12, ``HIP_SAMPLER_OBJECT_OFFSET_DWORD`` 12).

The rules are hipamd 5.2's ``ihipCreateTextureObject``: the S# takes ``addressMode[0]`` for all three axes
(ROCclr programs one addressing mode), wrap and mirror become clamp with unnormalized coordinates, border
addressing uses the transparent-black border colour (``borderColor`` is not programmed), anisotropy, LOD
bias and LOD clamps other than 0 are refused (hipErrorNotSupported), mipmapped arrays are not supported.
``hipReadModeNormalizedFloat`` reads 8/16-bit integer data as UNORM/SNORM (32-bit integers stay
integers); sRGB reads 4-channel 8-bit data through the SRGB number format.  A linear resource becomes a
buffer descriptor (V#, read by ``tex1Dfetch`` with buffer_load_format), a pitched 2-D resource a 2-D T#
over the caller's memory.
"""
from __future__ import annotations

import struct
import threading
from dataclasses import dataclass, field

from ..emu import image_desc as D
from ..errors import HipError, hipError_t
from .images import MAX_1D_LINEAR, MAX_2D, Format, ImageArray, require_images

INVALID, NOT_SUPPORTED = hipError_t.hipErrorInvalidValue, hipError_t.hipErrorNotSupported
ALIGN = 256                        # texture base address and pitch alignment (textureAlignment)
OBJECT_BYTES = 256                 # one allocation per object (the hardware reads 80 bytes of it)
WRAP, CLAMP, MIRROR, BORDER = 0, 1, 2, 3          # hipTextureAddressMode
POINT, LINEAR = 0, 1                              # hipTextureFilterMode
ELEMENT_TYPE, NORMALIZED_FLOAT = 0, 1             # hipTextureReadMode
RES_ARRAY, RES_MIPMAPPED, RES_LINEAR, RES_PITCH2D = 0, 1, 2, 3
_CLAMP = {WRAP: D.WRAP, CLAMP: D.CLAMP_LAST_TEXEL, MIRROR: D.MIRROR, BORDER: D.CLAMP_BORDER}


@dataclass
class TextureDesc:
    address_mode: tuple = (WRAP, WRAP, WRAP)
    filter_mode: int = POINT
    read_mode: int = ELEMENT_TYPE
    srgb: int = 0
    border_color: tuple = (0.0, 0.0, 0.0, 0.0)
    normalized: int = 0
    max_anisotropy: int = 0
    mipmap_filter_mode: int = POINT
    mipmap_level_bias: float = 0.0
    min_mipmap_level_clamp: float = 0.0
    max_mipmap_level_clamp: float = 0.0


@dataclass
class Resource:
    """What a hipResourceDesc names: an array, a mipmapped array, linear or pitched 2-D device memory."""
    kind: int
    array: ImageArray | None = None
    mipmap: object = None
    dev_ptr: int = 0
    fmt: Format | None = None       # element format of linear / pitch2D memory
    size_bytes: int = 0
    width: int = 0
    height: int = 0
    pitch_bytes: int = 0


@dataclass
class ImageObject:
    """A texture or surface object: its device address and what it was created from."""
    kind: str                       # 'texture' | 'surface'
    device: object
    addr: int
    resource: Resource
    tex_desc: TextureDesc | None = None
    view: object = None             # the caller's resource view description, returned as given
    words: list = field(default_factory=list)


_lock = threading.Lock()
_objects: dict[int, ImageObject] = {}


def lookup(addr: int, kind: str) -> ImageObject:
    with _lock:
        o = _objects.get(int(addr))
    if o is None or o.kind != kind:
        raise HipError(INVALID, f"0x{int(addr):x} is not a {kind} object")
    return o


def sampler_words(td: TextureDesc, res_kind: int, gen: int = 9) -> list[int]:
    """The S# HIP 5.2 programs for a texture descriptor, plus 4 zero dwords."""
    mode = td.address_mode[0]
    if res_kind == RES_LINEAR:
        clamp = D.WRAP                          # addressing is ignored for linear resources
    elif not td.normalized and mode in (WRAP, MIRROR):
        clamp = D.CLAMP_LAST_TEXEL
    else:
        if mode not in _CLAMP:
            raise HipError(INVALID, f"invalid address mode {mode}")
        clamp = _CLAMP[mode]
    if td.filter_mode not in (POINT, LINEAR):
        raise HipError(INVALID, f"invalid filter mode {td.filter_mode}")
    filt = D.XY_BILINEAR if td.filter_mode == LINEAR and res_kind != RES_LINEAR else D.XY_POINT
    return D.pack_ssharp(gen, CLAMP_X=clamp, CLAMP_Y=clamp, CLAMP_Z=clamp, FORCE_UNNORMALIZED=int(not td.normalized),
                         MAX_LOD=4095, XY_MAG_FILTER=filt, XY_MIN_FILTER=filt, Z_FILTER=D.Z_NONE,
                         BORDER_COLOR_TYPE=D.BORDER_TRANS_BLACK) + [0, 0, 0, 0]


def buffer_words(addr: int, fmt: Format, width: int, gen: int = 9) -> list[int]:
    """A linear texture's image object: the V# (stride = element size) then the HSA type, order, width."""
    dfmt, nfmt = fmt.buffer_format()
    sel = fmt.img_format()[2]
    w1 = (addr >> 32 & 0xFFFF) | fmt.element_size << 16
    w3 = D.buffer_word3(gen, dfmt, nfmt, sel, fmt.element_size & 3)
    return [addr & 0xFFFFFFFF, w1, width * fmt.element_size, w3, 0, 0, 0, 0, fmt.hsa_type, fmt.hsa_order, width, 0]


def pitch2d_words(addr: int, fmt: Format, width: int, height: int, pitch_bytes: int, gen: int = 9) -> list[int]:
    dfmt, nfmt, sel = fmt.img_format()
    words = D.image_words(gen, base=addr, data_format=dfmt, num_format=nfmt, width=width, height=height, depth=1,
                          pitch=pitch_bytes // fmt.element_size, type=D.IMG_2D, dst_sel=sel)
    return words + [fmt.hsa_type, fmt.hsa_order, width, 0]


def _check_resource(device, res: Resource) -> None:
    if res.kind == RES_ARRAY and (res.array is None or not res.array.addr):
        raise HipError(INVALID, "the resource's array is not a valid array")
    if res.kind == RES_LINEAR:
        if not res.dev_ptr or res.dev_ptr % ALIGN or res.fmt is None:
            raise HipError(INVALID, f"linear texture memory must be a {ALIGN}-byte aligned device pointer")
        if res.size_bytes // res.fmt.element_size >= MAX_1D_LINEAR:
            raise HipError(INVALID, f"a linear texture holds fewer than {MAX_1D_LINEAR} elements")
        device.backend.check_range(res.dev_ptr, res.size_bytes)
    if res.kind == RES_PITCH2D:
        if not res.dev_ptr or res.dev_ptr % ALIGN or res.fmt is None:
            raise HipError(INVALID, f"pitched texture memory must be a {ALIGN}-byte aligned device pointer")
        if not (0 < res.width < MAX_2D[0] and 0 < res.height < MAX_2D[1]):
            raise HipError(INVALID, f"pitched texture extent {res.width} x {res.height} out of range")
        if res.pitch_bytes % ALIGN or res.pitch_bytes < res.width * res.fmt.element_size:
            raise HipError(INVALID, f"pitch {res.pitch_bytes} must be a multiple of {ALIGN} holding a row")
        device.backend.check_range(res.dev_ptr, res.pitch_bytes * (res.height - 1) +
                                   res.width * res.fmt.element_size)


def _view_format(res: Resource, td: TextureDesc, view_fmt: Format | None) -> Format:
    base = view_fmt or res.fmt or res.array.fmt
    read_normalized = td.read_mode == NORMALIZED_FLOAT and base.bits < 32 and base.kind != "f"
    return Format(base.array_format, base.channels, read_normalized, bool(td.srgb))


def create_texture(device, res: Resource, td: TextureDesc, view=None, view_fmt: Format | None = None) -> ImageObject:
    require_images(device)
    if view is not None and res.kind not in (RES_ARRAY, RES_MIPMAPPED):
        raise HipError(INVALID, "a resource view is only allowed for arrays")
    if res.kind == RES_MIPMAPPED and (res.mipmap is None or not td.normalized):
        raise HipError(INVALID, "mipmapped textures need a mipmapped array and normalized coordinates")
    _check_resource(device, res)
    if res.kind == RES_MIPMAPPED:
        raise HipError(NOT_SUPPORTED, "mipmapped textures are not supported (as in HIP 5.2 on ROCm)")
    if td.max_anisotropy or td.mipmap_level_bias or td.min_mipmap_level_clamp or td.max_mipmap_level_clamp:
        raise HipError(NOT_SUPPORTED, "anisotropy, LOD bias and LOD clamps are not programmed (as in HIP 5.2)")
    gen = D.generation(device.isa.processor)
    samp = sampler_words(td, res.kind, gen)
    fmt = _view_format(res, td, view_fmt)
    if res.kind == RES_ARRAY:
        image = res.array.descriptor(fmt)
    elif res.kind == RES_LINEAR:
        image = buffer_words(res.dev_ptr, fmt, res.size_bytes // fmt.element_size, gen)
    else:
        image = pitch2d_words(res.dev_ptr, fmt, res.width, res.height, res.pitch_bytes, gen)
    return _new(device, "texture", res, image + samp, td, view)


def create_surface(device, res: Resource) -> ImageObject:
    if res.kind != RES_ARRAY:
        raise HipError(INVALID, "a surface object needs an array resource")
    _check_resource(device, res)
    return _new(device, "surface", res, res.array.descriptor(), None, None)


def _new(device, kind, res, words, td, view) -> ImageObject:
    addr = device.backend.alloc(OBJECT_BYTES)
    device.backend.write(addr, struct.pack(f"<{OBJECT_BYTES // 4}I", *words, *[0] * (OBJECT_BYTES // 4 - len(words))))
    o = ImageObject(kind, device, addr, res, td, view, words)
    with _lock:
        _objects[addr] = o
    return o


def destroy(addr: int, kind: str) -> None:
    if not addr:
        return
    o = lookup(addr, kind)
    o.device.synchronize_quietly()
    with _lock:
        _objects.pop(o.addr, None)
    o.device.backend.free(o.addr)
