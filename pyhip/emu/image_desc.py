"""GFX9 image resource (T#, 8 dwords) and sampler (S#, 4 dwords) descriptors: the bit fields as the
hardware reads them, packing (the runtime builds descriptors with these) and unpacking (the MIMG semantics
read them), and the enumerations their fields take.

Field positions are those of the GFX9 ``SQ_IMG_RSRC_WORD0-7`` / ``SQ_IMG_SAMP_WORD0-3`` registers (AMD's
Vega ISA document; the same layout ROCr's GFX9 image manager writes).  Sizes are stored minus one
(WIDTH, HEIGHT, DEPTH, PITCH); for arrays DEPTH is the last slice; the base address is 256-byte aligned
(bits 47:8 in BASE_ADDRESS/BASE_ADDRESS_HI).
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


def pack_tsharp(**fields) -> list[int]:
    return _pack(fields, T_FIELDS, 8)


def pack_ssharp(**fields) -> list[int]:
    return _pack(fields, S_FIELDS, 4)


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


def parse_tsharp(words) -> Image:
    """An :class:`Image` from 8 T# dwords; ValueError for a descriptor the emulator cannot read."""
    f = _unpack(words, T_FIELDS)
    typ = f["TYPE"]
    if typ < IMG_1D:
        raise ValueError(f"resource type {typ} is a buffer (V#), not an image")
    if f["DATA_FORMAT"] not in DATA_FORMATS:
        raise ValueError(f"image data format {f['DATA_FORMAT']} is not supported by the emulated device")
    comps = DATA_FORMATS[f["DATA_FORMAT"]]
    base = (f["BASE_ADDRESS"] | f["BASE_ADDRESS_HI"] << 32) << 8
    depth = f["DEPTH"] + 1 if typ in (IMG_3D,) + ARRAY_TYPES else 1
    return Image(base=base, data_format=f["DATA_FORMAT"], num_format=f["NUM_FORMAT"], width=f["WIDTH"] + 1,
                 height=f["HEIGHT"] + 1, depth=depth, base_array=f["BASE_ARRAY"] if typ in ARRAY_TYPES else 0,
                 pitch=f["PITCH"] + 1, dst_sel=(f["DST_SEL_X"], f["DST_SEL_Y"], f["DST_SEL_Z"], f["DST_SEL_W"]),
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


def parse_ssharp(words) -> Sampler:
    f = _unpack(words, S_FIELDS)
    return Sampler(clamp=(f["CLAMP_X"], f["CLAMP_Y"], f["CLAMP_Z"]), unnormalized=bool(f["FORCE_UNNORMALIZED"]),
                   trunc_coord=bool(f["TRUNC_COORD"]), force_degamma=bool(f["FORCE_DEGAMMA"]),
                   filter_mode=f["FILTER_MODE"], mag_filter=f["XY_MAG_FILTER"], min_filter=f["XY_MIN_FILTER"],
                   z_filter=f["Z_FILTER"], mip_filter=f["MIP_FILTER"], min_lod=_fixed(f["MIN_LOD"], 12, 8),
                   max_lod=_fixed(f["MAX_LOD"], 12, 8), lod_bias=_fixed(f["LOD_BIAS"], 14, 8, signed=True),
                   border_type=f["BORDER_COLOR_TYPE"])
