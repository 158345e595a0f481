"""Image resource (T#, 8 dwords), sampler (S#, 4 dwords) and typed-buffer (V# word 3) descriptors per
hardware generation — GFX9 (gfx90a), GFX10.3 (gfx1030) and GFX11 (gfx1100): the bit fields as the hardware
reads them, packing (the runtime builds descriptors with these) and unpacking (the MIMG and typed-buffer
semantics read them), and the enumerations their fields take.  One table per generation and descriptor
(``T_FIELDS_BY_GEN``, ``S_FIELDS_BY_GEN``, ``V3_FIELDS_BY_GEN``); ``generation(processor)`` picks it.

GFX9: the ``SQ_IMG_RSRC_WORD0-7`` / ``SQ_IMG_SAMP_WORD0-3`` registers of AMD's Vega ISA document (the layout
ROCr's GFX9 image manager writes).  Sizes are stored minus one (WIDTH, HEIGHT, DEPTH, PITCH); for arrays
DEPTH is the last slice; the base address is 256-byte aligned (bits 47:8 in BASE_ADDRESS/BASE_ADDRESS_HI).

GFX10/GFX11 (ROCr's resource_nv.h / resource_gfx11.h and its Navi image manager, Mesa's register
headers): one FORMAT field holding a *unified* format code (``unified_formats``: the codes LLVM names for
MTBUF, from the generated decoder tables, plus the image-only SRGB and packed 16-bit ones) instead of
DATA_FORMAT/NUM_FORMAT; WIDTH - 1 split into WIDTH_LO (word 1 bits 31:30) and WIDTH_HI (word 2 bits 11:0);
HEIGHT in word 2 bits 27:14; word 4 holds DEPTH - 1 (3-D), the last slice (arrays) or, for 1-D and 2-D
images, PITCH - 1 in elements (14 bits); BASE_ARRAY moved to word 4; GFX10 sets RESOURCE_LEVEL (word 2
bit 31).  Arrays and 3-D images have no pitch field: a linear (SW_MODE 0) surface's rows are then padded
to 256 bytes (``implied_pitch``), the layout pyhip's arrays use on every generation.  The S# keeps GFX9's
positions for every field pyhip programs or reads (clamps, FORCE_UNNORMALIZED, filters, LODs,
BORDER_COLOR_TYPE); word 0 bit 31 is SKIP_DEGAMMA from GFX10 on, and GFX11 moved BORDER_COLOR_PTR to word 3
bits 29:18.  V# word 3: GFX9 NUM_FORMAT (14:12) / DATA_FORMAT (18:15); GFX10 FORMAT (18:12), GFX11 FORMAT
(17:12), both unified codes.
"""
from __future__ import annotations

from dataclasses import dataclass

# name -> (dword, shift, bits)
T_FIELDS = {
    "BASE_ADDRESS": (0, 0, 32), "BASE_ADDRESS_HI": (1, 0, 8), "MIN_LOD": (1, 8, 12), "DATA_FORMAT": (1, 20, 6),
    "NUM_FORMAT": (1, 26, 4), "NV": (1, 30, 1), "META_DIRECT": (1, 31, 1),
    "WIDTH": (2, 0, 14), "HEIGHT": (2, 14, 14), "PERF_MOD": (2, 28, 3),
    "DST_SEL_X": (3, 0, 3), "DST_SEL_Y": (3, 3, 3), "DST_SEL_Z": (3, 6, 3), "DST_SEL_W": (3, 9, 3),
    "BASE_LEVEL": (3, 12, 4), "LAST_LEVEL": (3, 16, 4), "SW_MODE": (3, 20, 5), "TYPE": (3, 28, 4),
    "DEPTH": (4, 0, 13), "PITCH": (4, 13, 16), "BC_SWIZZLE": (4, 29, 3),
    "BASE_ARRAY": (5, 0, 13), "ARRAY_PITCH": (5, 13, 4), "META_DATA_ADDRESS_HI": (5, 17, 8),
    "META_LINEAR": (5, 25, 1), "META_PIPE_ALIGNED": (5, 26, 1), "META_RB_ALIGNED": (5, 27, 1), "MAX_MIP": (5, 28, 4),
    "MIN_LOD_WARN": (6, 0, 12), "COUNTER_BANK_ID": (6, 12, 8), "LOD_HDW_CNT_EN": (6, 20, 1),
    "COMPRESSION_EN": (6, 21, 1), "ALPHA_IS_ON_MSB": (6, 22, 1), "COLOR_TRANSFORM": (6, 23, 1),
    "LOST_ALPHA_BITS": (6, 24, 4), "LOST_COLOR_BITS": (6, 28, 4), "META_DATA_ADDRESS": (7, 0, 32),
}
S_FIELDS = {
    "CLAMP_X": (0, 0, 3), "CLAMP_Y": (0, 3, 3), "CLAMP_Z": (0, 6, 3), "MAX_ANISO_RATIO": (0, 9, 3),
    "DEPTH_COMPARE_FUNC": (0, 12, 3), "FORCE_UNNORMALIZED": (0, 15, 1), "ANISO_THRESHOLD": (0, 16, 3),
    "MC_COORD_TRUNC": (0, 19, 1), "FORCE_DEGAMMA": (0, 20, 1), "ANISO_BIAS": (0, 21, 6), "TRUNC_COORD": (0, 27, 1),
    "DISABLE_CUBE_WRAP": (0, 28, 1), "FILTER_MODE": (0, 29, 2), "COMPAT_MODE": (0, 31, 1),
    "MIN_LOD": (1, 0, 12), "MAX_LOD": (1, 12, 12), "PERF_MIP": (1, 24, 4), "PERF_Z": (1, 28, 4),
    "LOD_BIAS": (2, 0, 14), "LOD_BIAS_SEC": (2, 14, 6), "XY_MAG_FILTER": (2, 20, 2), "XY_MIN_FILTER": (2, 22, 2),
    "Z_FILTER": (2, 24, 2), "MIP_FILTER": (2, 26, 2), "MIP_POINT_PRECLAMP": (2, 28, 1), "BLEND_ZERO_PRT": (2, 29, 1),
    "FILTER_PREC_FIX": (2, 30, 1), "ANISO_OVERRIDE": (2, 31, 1),
    "BORDER_COLOR_PTR": (3, 0, 12), "SKIP_DEGAMMA": (3, 12, 1), "BORDER_COLOR_TYPE": (3, 30, 2),
}

T_FIELDS_GFX10 = {
    "BASE_ADDRESS": (0, 0, 32), "BASE_ADDRESS_HI": (1, 0, 8), "MIN_LOD": (1, 8, 12), "FORMAT": (1, 20, 9),
    "WIDTH_LO": (1, 30, 2), "WIDTH_HI": (2, 0, 12), "HEIGHT": (2, 14, 14), "RESOURCE_LEVEL": (2, 31, 1),
    "DST_SEL_X": (3, 0, 3), "DST_SEL_Y": (3, 3, 3), "DST_SEL_Z": (3, 6, 3), "DST_SEL_W": (3, 9, 3),
    "BASE_LEVEL": (3, 12, 4), "LAST_LEVEL": (3, 16, 4), "SW_MODE": (3, 20, 5), "BC_SWIZZLE": (3, 25, 3),
    "TYPE": (3, 28, 4), "DEPTH": (4, 0, 13), "PITCH": (4, 0, 14), "BASE_ARRAY": (4, 16, 13),
    "ARRAY_PITCH": (5, 0, 4), "MAX_MIP": (5, 4, 4), "MIN_LOD_WARN": (5, 8, 12), "PERF_MOD": (5, 20, 3),
    "COUNTER_BANK_ID": (6, 0, 8), "COMPRESSION_EN": (6, 21, 1), "META_DATA_ADDRESS": (6, 24, 8),
    "META_DATA_ADDRESS_HI": (7, 0, 32),
}
T_FIELDS_GFX11 = {
    "BASE_ADDRESS": (0, 0, 32), "BASE_ADDRESS_HI": (1, 0, 8), "MAX_MIP": (1, 16, 4), "FORMAT": (1, 20, 8),
    "WIDTH_LO": (1, 30, 2), "WIDTH_HI": (2, 0, 12), "HEIGHT": (2, 14, 14),
    "DST_SEL_X": (3, 0, 3), "DST_SEL_Y": (3, 3, 3), "DST_SEL_Z": (3, 6, 3), "DST_SEL_W": (3, 9, 3),
    "BASE_LEVEL": (3, 12, 4), "LAST_LEVEL": (3, 16, 4), "SW_MODE": (3, 20, 5), "BC_SWIZZLE": (3, 25, 3),
    "TYPE": (3, 28, 4), "DEPTH": (4, 0, 13), "PITCH": (4, 0, 14), "BASE_ARRAY": (4, 16, 13),
    "ARRAY_PITCH": (5, 0, 4), "PERF_MOD": (5, 20, 3), "MIN_LOD_LO": (5, 27, 5), "MIN_LOD_HI": (6, 0, 7),
    "COMPRESSION_EN": (6, 21, 1), "META_DATA_ADDRESS": (6, 24, 8), "META_DATA_ADDRESS_HI": (7, 0, 32),
}
S_FIELDS_GFX10 = {k: v for k, v in S_FIELDS.items() if k not in ("COMPAT_MODE", "SKIP_DEGAMMA")}
S_FIELDS_GFX10["SKIP_DEGAMMA"] = (0, 31, 1)
S_FIELDS_GFX11 = {k: v for k, v in S_FIELDS_GFX10.items() if k not in ("BORDER_COLOR_PTR", "MIP_POINT_PRECLAMP")}
S_FIELDS_GFX11["BORDER_COLOR_PTR"] = (3, 18, 12)
# typed-buffer V# word 3 (whole-descriptor dword 3)
V3_FIELDS = {"DST_SEL_X": (3, 0, 3), "DST_SEL_Y": (3, 3, 3), "DST_SEL_Z": (3, 6, 3), "DST_SEL_W": (3, 9, 3),
             "NUM_FORMAT": (3, 12, 3), "DATA_FORMAT": (3, 15, 4), "INDEX_STRIDE": (3, 21, 2),
             "ADD_TID_ENABLE": (3, 23, 1), "TYPE": (3, 30, 2)}
V3_FIELDS_GFX10 = {"DST_SEL_X": (3, 0, 3), "DST_SEL_Y": (3, 3, 3), "DST_SEL_Z": (3, 6, 3), "DST_SEL_W": (3, 9, 3),
                   "FORMAT": (3, 12, 7), "INDEX_STRIDE": (3, 21, 2), "ADD_TID_ENABLE": (3, 23, 1),
                   "RESOURCE_LEVEL": (3, 24, 1), "OOB_SELECT": (3, 28, 2), "TYPE": (3, 30, 2)}
V3_FIELDS_GFX11 = {k: v for k, v in V3_FIELDS_GFX10.items() if k != "RESOURCE_LEVEL"}
V3_FIELDS_GFX11["FORMAT"] = (3, 12, 6)
T_FIELDS_BY_GEN = {9: T_FIELDS, 10: T_FIELDS_GFX10, 11: T_FIELDS_GFX11}
S_FIELDS_BY_GEN = {9: S_FIELDS, 10: S_FIELDS_GFX10, 11: S_FIELDS_GFX11}
V3_FIELDS_BY_GEN = {9: V3_FIELDS, 10: V3_FIELDS_GFX10, 11: V3_FIELDS_GFX11}

# IMG_DATA_FORMAT -> component widths, X first (X sits in the low bits of a packed format)
DATA_FORMATS = {
    1: (8,), 2: (16,), 3: (8, 8), 4: (32,), 5: (16, 16), 6: (11, 11, 10), 7: (10, 11, 11), 8: (2, 10, 10, 10),
    9: (10, 10, 10, 2), 10: (8, 8, 8, 8), 11: (32, 32), 12: (16, 16, 16, 16), 13: (32, 32, 32),
    14: (32, 32, 32, 32), 16: (5, 6, 5), 17: (5, 5, 5, 1), 18: (1, 5, 5, 5), 19: (4, 4, 4, 4),
}
DATA_FORMAT_NAMES = {1: "8", 2: "16", 3: "8_8", 4: "32", 5: "16_16", 6: "10_11_11", 7: "11_11_10",
                     8: "10_10_10_2", 9: "2_10_10_10", 10: "8_8_8_8", 11: "32_32", 12: "16_16_16_16",
                     13: "32_32_32", 14: "32_32_32_32", 16: "5_6_5", 17: "1_5_5_5", 18: "5_5_5_1", 19: "4_4_4_4"}
# IMG_NUM_FORMAT
UNORM, SNORM, USCALED, SSCALED, UINT, SINT, FLOAT, SRGB = 0, 1, 2, 3, 4, 5, 7, 9
NUM_FORMAT_NAMES = {UNORM: "UNORM", SNORM: "SNORM", USCALED: "USCALED", SSCALED: "SSCALED", UINT: "UINT",
                    SINT: "SINT", FLOAT: "FLOAT", SRGB: "SRGB"}
# SQ_RSRC_IMG_TYPE
IMG_1D, IMG_2D, IMG_3D, IMG_CUBE, IMG_1D_ARRAY, IMG_2D_ARRAY, IMG_2D_MSAA, IMG_2D_MSAA_ARRAY = range(8, 16)
ARRAY_TYPES = (IMG_1D_ARRAY, IMG_2D_ARRAY, IMG_2D_MSAA_ARRAY)
# SQ_SEL
SEL_0, SEL_1, SEL_X, SEL_Y, SEL_Z, SEL_W = 0, 1, 4, 5, 6, 7
# SQ_TEX_CLAMP
WRAP, MIRROR, CLAMP_LAST_TEXEL, MIRROR_ONCE_LAST_TEXEL, CLAMP_HALF_BORDER, MIRROR_ONCE_HALF_BORDER, CLAMP_BORDER, \
    MIRROR_ONCE_BORDER = range(8)
# SQ_TEX_XY_FILTER / Z_FILTER / MIP_FILTER
XY_POINT, XY_BILINEAR, XY_ANISO_POINT, XY_ANISO_BILINEAR = range(4)
Z_NONE, Z_POINT, Z_LINEAR = range(3)
# SQ_TEX_BORDER_COLOR
BORDER_TRANS_BLACK, BORDER_OPAQUE_BLACK, BORDER_OPAQUE_WHITE, BORDER_REGISTER = range(4)
# SQ_IMG_FILTER_TYPE (S# FILTER_MODE)
FILTER_BLEND, FILTER_MIN, FILTER_MAX = range(3)


# image-only unified formats (no MTBUF code): code -> (IMG data format, number format); ROCr's FORMAT enums
_IMAGE_ONLY = {10: {128: (1, SRGB), 129: (3, SRGB), 130: (10, SRGB), 133: (16, UNORM), 134: (17, UNORM),
                    135: (18, UNORM)},
               11: {64: (1, SRGB), 65: (3, SRGB), 66: (10, SRGB), 68: (16, UNORM), 69: (17, UNORM),
                    70: (18, UNORM), 71: (19, UNORM)}}


def generation(processor: str) -> int:
    """9 (GFX9), 10 (GFX10.3) or 11 (GFX11): which descriptor layouts a processor's hardware reads."""
    from .isa.families import rdna
    return rdna(processor) or 9


_UNIFIED: dict = {}


def unified_formats(gen: int) -> dict:
    """GFX10/GFX11 unified format code -> (GFX9 data format, number format)."""
    t = _UNIFIED.get(gen)
    if t is None:
        from .isa.formats import unified_format
        t = {c: unified_format(gen, c) for c in range(128 if gen == 10 else 64)}
        t = {c: v for c, v in t.items() if v is not None}
        t.update(_IMAGE_ONLY[gen])
        _UNIFIED[gen] = t
    return t


def unified_code(gen: int, data_format: int, num_format: int) -> int:
    for code, v in unified_formats(gen).items():
        if v == (data_format, num_format):
            return code
    raise ValueError(f"no GFX{gen} unified format for data format {data_format}, number format {num_format}")


def _pack(fields: dict, table: dict, nwords: int) -> list[int]:
    words = [0] * nwords
    for name, value in fields.items():
        dw, shift, bits = table[name]
        value = int(value)
        if not 0 <= value < 1 << bits:
            raise ValueError(f"{name}={value} does not fit {bits} bits")
        words[dw] |= value << shift
    return words


def _unpack(words, table: dict) -> dict:
    return {name: (int(words[dw]) >> shift) & ((1 << bits) - 1) for name, (dw, shift, bits) in table.items()}


def pack_tsharp(gen: int = 9, **fields) -> list[int]:
    return _pack(fields, T_FIELDS_BY_GEN[gen], 8)


def pack_ssharp(gen: int = 9, **fields) -> list[int]:
    return _pack(fields, S_FIELDS_BY_GEN[gen], 4)


def implied_pitch(width: int, bpe: int) -> int:
    """Row pitch in elements of a linear GFX10/GFX11 surface without a PITCH field: rows padded to 256 bytes."""
    return -(-width * bpe // 256) * 256 // bpe


def image_words(gen: int, *, base: int, data_format: int, num_format: int, width: int, height: int, depth: int,
                pitch: int, type: int, dst_sel: tuple) -> list[int]:
    """An 8-dword linear T# (SW_MODE 0) as the hardware of ``gen`` reads it.  ``depth``: 3-D depth or the
    number of slices (1 otherwise); ``pitch``: row pitch in elements (GFX10/GFX11 arrays and 3-D images
    must use ``implied_pitch``)."""
    f = dict(BASE_ADDRESS=(base >> 8) & 0xFFFFFFFF, BASE_ADDRESS_HI=base >> 40, HEIGHT=height - 1, TYPE=type,
             DST_SEL_X=dst_sel[0], DST_SEL_Y=dst_sel[1], DST_SEL_Z=dst_sel[2], DST_SEL_W=dst_sel[3])
    layered = type in (IMG_3D,) + ARRAY_TYPES
    if gen == 9:
        f.update(DATA_FORMAT=data_format, NUM_FORMAT=num_format, WIDTH=width - 1, PITCH=pitch - 1,
                 DEPTH=depth - 1 if layered else 0)
        return pack_tsharp(9, **f)
    f.update(FORMAT=unified_code(gen, data_format, num_format), WIDTH_LO=(width - 1) & 3, WIDTH_HI=(width - 1) >> 2)
    if gen == 10:
        f["RESOURCE_LEVEL"] = 1
    if layered:
        if pitch != implied_pitch(width, element_bytes(data_format)):
            raise ValueError(f"GFX{gen} arrays and 3-D images have no pitch field: rows must be padded to 256 bytes")
        f["DEPTH"] = depth - 1
    else:
        f["PITCH"] = pitch - 1
    return pack_tsharp(gen, **f)


def buffer_word3(gen: int, data_format: int, num_format: int, dst_sel: tuple, index_stride: int = 0) -> int:
    """V# word 3 of a typed buffer (OOB_SELECT 0 on GFX10/GFX11: bounds by index and offset)."""
    f = dict(DST_SEL_X=dst_sel[0], DST_SEL_Y=dst_sel[1], DST_SEL_Z=dst_sel[2], DST_SEL_W=dst_sel[3],
             INDEX_STRIDE=index_stride)
    if gen == 9:
        f.update(DATA_FORMAT=data_format, NUM_FORMAT=num_format)
    else:
        f["FORMAT"] = unified_code(gen, data_format, num_format)
        if gen == 10:
            f["RESOURCE_LEVEL"] = 1
    return _pack(f, V3_FIELDS_BY_GEN[gen], 4)[3]


def buffer_format(gen: int, word3: int) -> tuple[int, int]:
    """(data format, number format) of a V#'s word 3; (0, 0) for a code with no such pair."""
    f = _unpack([0, 0, 0, word3], V3_FIELDS_BY_GEN[gen])
    if gen == 9:
        return f["DATA_FORMAT"], f["NUM_FORMAT"]
    return unified_formats(gen).get(f["FORMAT"], (0, 0))


def element_bytes(data_format: int) -> int:
    return sum(DATA_FORMATS[data_format]) // 8


@dataclass(frozen=True)
class Image:
    """The parts of a T# the MIMG semantics use (sizes are counts, not minus one)."""
    base: int
    data_format: int
    num_format: int
    width: int
    height: int
    depth: int              # 3D: depth; arrays: last slice + 1; otherwise 1
    base_array: int
    pitch: int              # row pitch in elements
    dst_sel: tuple
    type: int
    base_level: int
    last_level: int
    sw_mode: int
    bpe: int                # bytes per element
    comps: tuple            # component widths, X first

    @property
    def slice_bytes(self) -> int:
        rows = 1 if self.type in (IMG_1D, IMG_1D_ARRAY) else self.height
        return self.pitch * rows * self.bpe

    @property
    def layers(self) -> int:
        return self.depth - self.base_array if self.type in ARRAY_TYPES else 1


def parse_tsharp(words, gen: int = 9) -> Image:
    """An :class:`Image` from 8 T# dwords as the hardware of ``gen`` reads them; ValueError for a descriptor
    the emulator cannot read."""
    f = _unpack(words, T_FIELDS_BY_GEN[gen])
    typ = f["TYPE"]
    if typ < IMG_1D:
        raise ValueError(f"resource type {typ} is a buffer (V#), not an image")
    layered = typ in (IMG_3D,) + ARRAY_TYPES
    if gen == 9:
        dfmt, nfmt, width, pitch = f["DATA_FORMAT"], f["NUM_FORMAT"], f["WIDTH"] + 1, f["PITCH"] + 1
    else:
        pair = unified_formats(gen).get(f["FORMAT"])
        if pair is None:
            raise ValueError(f"image format {f['FORMAT']} is not supported by the emulated device")
        dfmt, nfmt = pair
        width = (f["WIDTH_LO"] | f["WIDTH_HI"] << 2) + 1
        pitch = None if layered else f["PITCH"] + 1
    if dfmt not in DATA_FORMATS:
        raise ValueError(f"image data format {dfmt} is not supported by the emulated device")
    comps = DATA_FORMATS[dfmt]
    if pitch is None:
        pitch = implied_pitch(width, sum(comps) // 8)
    base = (f["BASE_ADDRESS"] | f["BASE_ADDRESS_HI"] << 32) << 8
    depth = f["DEPTH"] + 1 if layered else 1
    return Image(base=base, data_format=dfmt, num_format=nfmt, width=width,
                 height=f["HEIGHT"] + 1, depth=depth, base_array=f["BASE_ARRAY"] if typ in ARRAY_TYPES else 0,
                 pitch=pitch, dst_sel=(f["DST_SEL_X"], f["DST_SEL_Y"], f["DST_SEL_Z"], f["DST_SEL_W"]),
                 type=typ, base_level=f["BASE_LEVEL"], last_level=f["LAST_LEVEL"], sw_mode=f["SW_MODE"],
                 bpe=sum(comps) // 8, comps=comps)


@dataclass(frozen=True)
class Sampler:
    clamp: tuple            # (x, y, z) SQ_TEX_CLAMP
    unnormalized: bool
    trunc_coord: bool
    force_degamma: bool
    filter_mode: int        # blend / min / max
    mag_filter: int
    min_filter: int
    z_filter: int
    mip_filter: int
    min_lod: float
    max_lod: float
    lod_bias: float
    border_type: int


def _fixed(v: int, bits: int, frac: int, signed: bool = False) -> float:
    if signed and v >> (bits - 1) & 1:
        v -= 1 << bits
    return v / (1 << frac)


def parse_ssharp(words, gen: int = 9) -> Sampler:
    f = _unpack(words, S_FIELDS_BY_GEN[gen])
    return Sampler(clamp=(f["CLAMP_X"], f["CLAMP_Y"], f["CLAMP_Z"]), unnormalized=bool(f["FORCE_UNNORMALIZED"]),
                   trunc_coord=bool(f["TRUNC_COORD"]), force_degamma=bool(f["FORCE_DEGAMMA"]),
                   filter_mode=f["FILTER_MODE"], mag_filter=f["XY_MAG_FILTER"], min_filter=f["XY_MIN_FILTER"],
                   z_filter=f["Z_FILTER"], mip_filter=f["MIP_FILTER"], min_lod=_fixed(f["MIN_LOD"], 12, 8),
                   max_lod=_fixed(f["MAX_LOD"], 12, 8), lod_bias=_fixed(f["LOD_BIAS"], 14, 8, signed=True),
                   border_type=f["BORDER_COLOR_TYPE"])
