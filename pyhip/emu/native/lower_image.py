"""Lowering of the image (MIMG) instructions to native/engine/ops_image.h: image_load[_mip], image_store[_mip],
image_atomic_*, image_get_resinfo and every image_sample* / image_gather4* variant the numpy engine executes
(``mimg.executable_sample``; 16-bit derivatives stay with the numpy engine, which faults on them).

The C handlers know no descriptor layout and no format number: every fact comes from here as one aux table per
generation (``image_table``), built from the numpy semantics' own tables (image_desc's T# fields, unified
formats, DATA_FORMATS and implied_pitch's row alignment; texels.check_format; mimg's coordinate counts):

  word 0          row alignment in bytes of layered images without a pitch field (0: the PITCH field is used)
  words 1-16      per T# TYPE: coordinates (0: a type the emulator does not run) | layered << 4 | array << 5 |
                  one row (1-D) << 6
  3 words/field   for each of TF_* (ops_image.h): two parts (used << 31 | dword | shift << 3 | bits << 8 |
                  left shift << 14) OR-ed together, plus a constant added (sizes are stored minus one)
  2 words/code    per format index (TF_FMT's value): buffer_format.layout_words' layout (valid bit 24: the
                  emulated device reads and writes it)
The sampler table (``sampler_table``): one word per S# field ops_sample.h reads, with its fixed-point fraction.

A descriptor the numpy engine refuses faults with kind FK_IMAGE; ``image_fault`` rebuilds the numpy engine's
exception from the fault's argument (the descriptor fields its messages name) by calling the numpy checks."""
from __future__ import annotations

from types import SimpleNamespace

from ..image_desc import (ARRAY_TYPES, BORDER_REGISTER, DATA_FORMATS, IMG_1D, IMG_1D_ARRAY, IMG_3D, S_FIELDS_BY_GEN,
                          T_FIELDS_BY_GEN, implied_pitch, pack_tsharp, unified_formats)
from ..memory import GPUFault
from ..semantics import mimg, sampler as S, texels
from .lowerbase import Unsupported

# the order of native/engine/ops_image.h's TF_* fields: (T# field parts by generation, constant added)
_FIELDS = (("BASE", 0), ("FMT", 0), ("WIDTH", 1), ("HEIGHT", 1), ("DEPTH", 1), ("PITCH", 1), ("BASE_ARRAY", 0),
           ("DST_SEL_X", 0), ("DST_SEL_Y", 0), ("DST_SEL_Z", 0), ("DST_SEL_W", 0), ("BASE_LEVEL", 0),
           ("LAST_LEVEL", 0), ("SW_MODE", 0), ("TYPE", 0))


def _parts(gen: int, name: str) -> list[tuple[str, int]]:
    """The T# fields a TF_* value is made of, with their left shifts."""
    if name == "BASE":                                    # 256-byte aligned: address bits 47:8
        return [("BASE_ADDRESS", 8), ("BASE_ADDRESS_HI", 40)]
    if name == "FMT":
        return [("DATA_FORMAT", 0), ("NUM_FORMAT", 6)] if gen == 9 else [("FORMAT", 0)]
    if name == "WIDTH" and gen != 9:
        return [("WIDTH_LO", 0), ("WIDTH_HI", 2)]
    return [(name, 0)]


def _format_pairs(gen: int) -> dict:
    """format index -> (data format, number format)."""
    if gen == 9:
        return {d | n << 6: (d, n) for d in range(64) for n in range(16)}
    return dict(unified_formats(gen))


def _layout(dfmt: int, nfmt: int) -> tuple[int, int]:
    comps = DATA_FORMATS.get(dfmt)
    if comps is None:
        return 0, 0
    try:
        texels.check_format(comps, nfmt)
    except GPUFault:
        return 0, 0
    return nfmt | dfmt << 8 | len(comps) << 16 | 1 << 24, sum(b << 8 * i for i, b in enumerate(comps))


_TABLES: dict = {}


def image_table(gen: int) -> list[int]:
    t = _TABLES.get(gen)
    if t is not None:
        return t
    table = T_FIELDS_BY_GEN[gen]
    # implied_pitch's row alignment (GFX10/GFX11 layered images have no PITCH field)
    t = [0 if gen == 9 else implied_pitch(1, 1)]
    for typ in range(16):
        n = mimg._NCOORD.get(typ, 0)
        t.append(n | (typ in (IMG_3D,) + ARRAY_TYPES) << 4 | (typ in ARRAY_TYPES) << 5
                 | (typ in (IMG_1D, IMG_1D_ARRAY)) << 6)
    for name, add in _FIELDS:
        words = [0, 0]
        for i, (field, lshift) in enumerate(_parts(gen, name)):
            dw, shift, bits = table[field]
            words[i] = 1 << 31 | dw | shift << 3 | bits << 8 | lshift << 14
        t.extend([_s32(words[0]), _s32(words[1]), add])
    pairs = _format_pairs(gen)
    nfmt_codes = 1 << sum(table[f][2] for f, _ in _parts(gen, "FMT"))
    for code in range(nfmt_codes):
        pair = pairs.get(code)
        t.extend(_layout(*pair) if pair else (0, 0))
    _TABLES[gen] = t
    return t


def _s32(x: int) -> int:
    return x - (1 << 32) if x >= 1 << 31 else x


def _fault_words(gen: int, typ: int, sw_mode: int, fmt: int) -> list[int]:
    """T# words holding the fields the descriptor checks read (the others 0)."""
    f = {"TYPE": typ, "SW_MODE": sw_mode}
    for field, lshift in _parts(gen, "FMT"):
        bits = T_FIELDS_BY_GEN[gen][field][2]
        f[field] = fmt >> lshift & ((1 << bits) - 1)
    return pack_tsharp(gen, **f)


# the S# fields ops_sample.h's SF_* name, in order: (field, fraction bits, signed) as image_desc.parse_ssharp reads them
_S_FIELDS = (("CLAMP_X", 0, 0), ("CLAMP_Y", 0, 0), ("CLAMP_Z", 0, 0), ("FORCE_UNNORMALIZED", 0, 0),
             ("TRUNC_COORD", 0, 0), ("FORCE_DEGAMMA", 0, 0), ("FILTER_MODE", 0, 0), ("XY_MAG_FILTER", 0, 0),
             ("XY_MIN_FILTER", 0, 0), ("Z_FILTER", 0, 0), ("MIN_LOD", 8, 0), ("MAX_LOD", 8, 0), ("LOD_BIAS", 8, 1),
             ("BORDER_COLOR_TYPE", 0, 0))


def sampler_table(gen: int) -> list[int]:
    """One word per SF_* field: dword | shift << 3 | bits << 8 | fraction bits << 14 | signed << 20."""
    table = S_FIELDS_BY_GEN[gen]
    out = []
    for name, frac, signed in _S_FIELDS:
        dw, shift, bits = table[name]
        out.append(dw | shift << 3 | bits << 8 | frac << 14 | signed << 20)
    return out


# ops_image.h's FK_IMAGE argument: bits 0-3 what failed, the rest its fields
IMF_DESC, IMF_MIP, IMF_ATOMIC, IMF_BASE_LEVEL, IMF_BORDER, IMF_GATHER = 0, 1, 2, 3, 4, 5


def image_fault(inst, gen: int, arg: int) -> GPUFault:
    """The numpy engine's exception for an FK_IMAGE fault of ``inst`` (the numpy checks decide the message)."""
    what = arg & 0xF
    if what == IMF_MIP:
        return mimg.mip_fault(inst.name, arg >> 8)
    if what == IMF_BASE_LEVEL:
        return mimg.base_level_fault(inst.name, arg >> 8)
    if what == IMF_GATHER:
        return mimg.gather_fault(inst.name)
    if what == IMF_BORDER:
        try:
            S.border_components(BORDER_REGISTER, (0, 0, 0, 0), False)
        except GPUFault as exc:
            return exc
    if what == IMF_ATOMIC:
        nfmt, bpe, is64 = arg >> 8 & 0xFF, arg >> 16 & 0xFF, bool(arg >> 24 & 1)
        op = inst.name[len("image_atomic_"):]
        exc = mimg.atomic_format_fault(inst.name, op, nfmt, bpe, is64)
        return exc or GPUFault(f"{inst.name}: image atomic format")
    typ, sw_mode, fmt = arg >> 8 & 0xF, arg >> 12 & 0x1F, arg >> 20 & 0x3FF
    dim = inst.fields.get("dim") if gen >= 10 else None
    I = SimpleNamespace(gen=gen, dim=dim)
    try:
        mimg._image(_fault_words(gen, typ, sw_mode, fmt), inst.name, I)
    except GPUFault as exc:
        return exc
    return GPUFault(f"{inst.name}: image descriptor")


# ---- the records ------------------------------------------------------------------------------------------------
# NInst.a0 bits (ops_image.h IM_*)
A_D16, A_A16, A_TFE, A_MIP, A_GLC, A_NSA, A_WIDE = 1 << 4, 1 << 5, 1 << 6, 1 << 7, 1 << 8, 1 << 9, 1 << 20
# image_sample* / image_gather4* variant bits (ops_sample.h IS_*)
SAMPLE_BITS = {"o": 1 << 21, "b": 1 << 22, "c": 1 << 23, "d": 1 << 24, "cd": 1 << 24, "l": 1 << 25, "lz": 1 << 26,
               "cl": 1 << 27}
A_GATHER, A_UNORM = 1 << 28, 1 << 29
ATOMIC_OPS = mimg._ATOMICS + mimg._FLOAT_ATOMICS


def lower_image(rec, inst, K, aux: list, shared_table, atomic_codes: dict) -> bool:
    name, f = inst.name, inst.fields
    if not inst.encoding.startswith("MIMG") or not name.startswith("image_"):
        return False
    if name in ("image_load", "image_load_mip"):
        rec.op = "image_load"
    elif name in ("image_store", "image_store_mip"):
        rec.op = "image_store"
    elif name == "image_get_resinfo":
        rec.op = "image_resinfo"
    elif name.startswith("image_atomic_") and name[len("image_atomic_"):] in ATOMIC_OPS:
        rec.op = "image_atomic"
        rec.x = atomic_codes[name[len("image_atomic_"):]]
    elif mimg.executable_sample(name):
        rec.op = "image_sample"
    else:
        raise Unsupported(f"{name} has no native handler")
    if f["srsrc"] > 120:
        raise Unsupported("image resource register")
    dmask, d16 = f["dmask"], bool(f["d16"])
    a0 = dmask | A_D16 * d16 | A_A16 * bool(f["a16"]) | A_TFE * bool(f.get("tfe")) | A_MIP * name.endswith("_mip") \
        | A_GLC * bool(f["glc"])
    if K.family >= 10 and f.get("dim") is not None:
        a0 |= (IMG_1D + f["dim"]) << 16          # the T# TYPE the DIM names (mimg._image)
    nsa = f.get("vaddrs")
    if nsa:
        regs = list(nsa)
        if len(regs) > 8 or any(r > 255 for r in regs):
            raise Unsupported("image NSA address list")
        a0 |= A_NSA | len(regs) << 10
        words = [0, 0]
        for i, r in enumerate(regs):
            words[i // 4] |= r << 8 * (i % 4)
        rec.k[1], rec.k[2] = words
        rec.touch(max(regs) + 1)
    else:
        rec.s[0] = f["vaddr"]
        rec.touch(f["vaddr"] + 1)
    rec.s[1] = f["srsrc"]
    rec.d = f["vdata"] + (K.accum_offset if f["acc"] else 0)
    nbits = bin(dmask).count("1")
    if rec.op == "image_atomic":
        op = name[len("image_atomic_"):]
        wide = nbits == (4 if op.endswith("cmpswap") else 2)
        a0 |= A_WIDE * wide
        rows = (2 if wide else 1) * (2 if op.endswith("cmpswap") else 1)
        rec.touch(rec.d + max(rows, (2 if wide else 1) + bool(f.get("tfe"))))
    else:
        nout = (nbits + 1) // 2 if d16 and rec.op != "image_resinfo" else nbits
        rec.touch(rec.d + nout + bool(f.get("tfe")))
    if rec.op == "image_sample":
        flags = mimg.sample_flags(name)
        if flags & {"d", "cd"} and f["a16"]:
            raise Unsupported("16-bit derivatives")          # (the numpy engine's fault)
        for fl in flags:
            a0 |= SAMPLE_BITS[fl]
        a0 |= A_GATHER * name.startswith("image_gather4") | A_UNORM * bool(f["unorm"])
        if f["ssamp"] > 124:
            raise Unsupported("image sampler register")
        rec.s[2] = f["ssamp"]
        rec.khi[0] = shared_table(aux, sampler_table(K.family))
        if name.startswith("image_gather4"):
            rec.touch(rec.d + (2 if d16 else 4) + bool(f.get("tfe")))
    rec.a0 = a0
    rec.k[0] = shared_table(aux, image_table(K.family))
    return True
