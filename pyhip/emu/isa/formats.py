"""Instruction formats of GFX9 (gfx90a, gfx94x), GFX10.3 and GFX11: classify the first dword, extract the
opcode, unpack the fields.  ``family`` is 9, 10 or 11 (``families.py``).

Field layouts: AMD Vega / CDNA / "RDNA2" / "RDNA3" ISA documents, checked against ``llvm-mc-19
-show-encoding``.  Field names follow ``instruction.py`` (GFX9's); what RDNA moved is put back where GFX9
has it, so the execution semantics are shared:

* GFX9 MIMG on gfx90a: bit 16 (TFE on other GFX9 parts) selects AGPR data (``acc``), bit 7 is the SCC bit.
* GFX11 swaps the codes of M0 and NULL (124 = NULL, 125 = M0); scalar operand codes are normalised to the
  GFX9/GFX10 meaning (124 = M0, 125 = NULL) by the decoder, which knows which fields of an opcode hold SGPRs.
* RDNA SMEM always has an immediate offset and an SGPR offset (NULL when unused): ``imm`` = 1, ``soe`` =
  whether SOFFSET is a register.  FLAT/GLOBAL/SCRATCH ``saddr`` NULL ("off") becomes GFX9's 0x7F; GFX11
  scratch has an explicit ``sve`` (VADDR used) bit.
* RDNA MTBUF has a unified 7-bit ``format`` (``dfmt``/``nfmt`` are filled from it by the decoder).
* VOPD (GFX11 dual issue) is one instruction with two halves: ``opx``/``opy`` and X/Y operand fields.
* RDNA MIMG: GFX10 keeps opcode bit 7 in bit 0 and the number of NSA (non-sequential address) dwords in bits
  2:1; GFX11 has an 8-bit opcode and one NSA bit.  ``dim`` (SQ_RSRC_IMG_* - 8) replaces GFX9's ``da``;
  ``nsa`` is the number of extra address dwords (the decoder reads them into ``fields['vaddrs']``).
"""
from __future__ import annotations

from .families import module

LITERAL, SDWA, DPP, DPP8, DPP8FI = 255, 249, 250, 233, 234
NULL = 125                      # the NULL SGPR code after normalisation (GFX10's value)
NULL11 = 124                    # GFX11's raw NULL code
SADDR_OFF = 0x7F                # GFX9's "off" in FLAT saddr, used by the semantics
SHORT = ("SOP1", "SOP2", "SOPC", "SOPK", "SOPP", "VOP1", "VOP2", "VOPC")

# the fixed bits of word 0 of each encoding, (shift, width) of its opcode field, and the bits of word 0 that
# select the encoding and the opcode (FLAT includes seg): RDNA's, and what GFX9 and GFX11 have otherwise
_FIXED = {"SOP2": 0x80000000, "SOPK": 0xB0000000, "SOP1": 0xBE800000, "SOPC": 0xBF000000, "SOPP": 0xBF800000,
          "SMEM": 0xF4000000, "VOP2": 0x00000000, "VOP1": 0x7E000000, "VOPC": 0x7C000000, "VOP3": 0xD4000000,
          "VOP3P": 0xCC000000, "DS": 0xD8000000, "FLAT": 0xDC000000, "MUBUF": 0xE0000000, "MTBUF": 0xE8000000}
ENCODING_FIXED = {9: {**_FIXED, "SMEM": 0xC0000000, "VOP3": 0xD0000000, "VOP3P": 0xD3800000, "MIMG": 0xF0000000},
                  10: {**_FIXED, "MIMG": 0xF0000000}, 11: {**_FIXED, "VOPD": 0xC8000000, "MIMG": 0xF0000000}}
# GFX10: MUBUF op[7] is bit 25, MTBUF op[3] word 1 bit 21, MIMG op[7] bit 0
_FIELD = {"SOP2": (23, 7), "SOPK": (23, 5), "SOP1": (8, 8), "SOPC": (16, 7), "SOPP": (16, 7), "SMEM": (18, 8),
          "VOP2": (25, 6), "VOP1": (9, 8), "VOPC": (17, 8), "VOP3": (16, 10), "VOP3P": (16, 7), "DS": (18, 8),
          "FLAT": (18, 7), "MUBUF": (18, 7), "MTBUF": (16, 3)}
OPCODE_FIELD = {9: {**_FIELD, "DS": (17, 8), "MTBUF": (15, 4), "MIMG": (18, 7)}, 10: {**_FIELD, "MIMG": (18, 7)},
                11: {**_FIELD, "MUBUF": (18, 8), "MTBUF": (15, 4), "VOPDX": (22, 4), "VOPDY": (17, 5),
                     "MIMG": (18, 8)}}
_BITS = {"SOP2": 0xFF800000, "SOPK": 0xFF800000, "SOP1": 0xFF80FF00, "SOPC": 0xFFFF0000, "SOPP": 0xFFFF0000,
         "SMEM": 0xFFFC0000, "VOP2": 0xFE000000, "VOP1": 0xFE01FE00, "VOPC": 0xFFFE0000, "VOP3": 0xFFFF0000,
         "VOP3P": 0xFFFF0000, "DS": 0xFFFC0000, "FLAT": 0xFFFCC000, "MUBUF": 0xFFFC0000, "MTBUF": 0xFC070000}
ENCODING_BITS = {9: {**_BITS, "DS": 0xFFFE0000, "MTBUF": 0xFC078000, "MIMG": 0xFDFC0000},
                 10: {**_BITS, "MIMG": 0xFDFC0001},
                 11: {**_BITS, "FLAT": 0xFFFF0000, "MTBUF": 0xFC078000, "VOPDX": 0xFFC00000, "VOPDY": 0xFC3E0000,
                      "MIMG": 0xFFFC0000}}
# MIMG bits that size the instruction (the NSA dword count): never "must keep" bits
MIMG_NSA_BITS = {10: 0x6, 11: 0x1}
# MIMG bits (word1 << 32 | word0) whose validity the generated ``mimg`` sizing facts decide (NSA, DIM, DMASK,
# A16, D16, TFE): not per-bit "must keep" facts
MIMG_SIZED_BITS = {10: 0x6 | 7 << 3 | 0xF << 8 | 1 << 16 | 3 << 62, 11: 0x1 | 7 << 2 | 0xF << 8 | 3 << 16 | 1 << 53}
# the encodings told apart by the top 6 bits of word 0 (after the SOP*/VOP1/VOP2/VOPC/VOP3P prefixes)
_TOP6 = {9: {0x30: "SMEM", 0x34: "VOP3", 0x36: "DS", 0x37: "FLAT", 0x38: "MUBUF", 0x3A: "MTBUF", 0x3C: "MIMG"},
         10: {0x3D: "SMEM", 0x35: "VOP3", 0x36: "DS", 0x37: "FLAT", 0x38: "MUBUF", 0x3A: "MTBUF", 0x3C: "MIMG"}}
_TOP6[11] = {**_TOP6[10], 0x32: "VOPD"}


def classify(w: int, family: int) -> str | None:
    """Encoding name of a first dword (None for graphics-only encodings: EXP, VINTRP, LDSDIR, or unknown)."""
    top7 = w >> 25
    if top7 == 0x3F:
        return "VOP1"
    if top7 == 0x3E:
        return "VOPC"
    if w >> 31 == 0:
        return "VOP2"
    top9 = w >> 23
    if top9 == 0x17D:
        return "SOP1"
    if top9 == 0x17E:
        return "SOPC"
    if top9 == 0x17F:
        return "SOPP"
    if w >> 28 == 0xB:
        return "SOPK"
    if w >> 30 == 2:
        return "SOP2"
    if (top9 == 0x1A7) if family == 9 else (w >> 24 == 0xCC):
        return "VOP3P"
    return _TOP6[family].get(w >> 26)


def opcode(enc: str, w0: int, w1: int, family: int) -> int:
    if family == 10:
        if enc == "MTBUF":
            return (w0 >> 16 & 7) | (w1 >> 21 & 1) << 3
        if enc == "MUBUF":
            return (w0 >> 18 & 0x7F) | (w0 >> 25 & 1) << 7
        if enc == "MIMG":
            return (w0 >> 18 & 0x7F) | (w0 & 1) << 7
    if enc == "VOPD":
        return (w0 >> 22 & 0xF) << 5 | (w0 >> 17 & 0x1F)
    shift, bits = OPCODE_FIELD[family][enc]
    return w0 >> shift & ((1 << bits) - 1)


def flat_segment(w0: int, family: int) -> str:
    return ("FLAT", "SCRATCH", "GLOBAL", "FLAT")[w0 >> (16 if family == 11 else 14) & 3]


def sext(v: int, bits: int) -> int:
    return v - (1 << bits) if v >> (bits - 1) & 1 else v


def fields(enc: str, w0: int, w1: int, family: int) -> dict:
    """Raw fields of one instruction (``w1`` is the second dword for 64-bit encodings; GFX11's NULL and M0 not
    yet normalised, see the module doc)."""
    if enc == "SOP2":
        return {"sdst": w0 >> 16 & 0x7F, "ssrc1": w0 >> 8 & 0xFF, "ssrc0": w0 & 0xFF}
    if enc == "SOPK":
        return {"sdst": w0 >> 16 & 0x7F, "simm16": w0 & 0xFFFF}
    if enc == "SOP1":
        return {"sdst": w0 >> 16 & 0x7F, "ssrc0": w0 & 0xFF}
    if enc == "SOPC":
        return {"ssrc1": w0 >> 8 & 0xFF, "ssrc0": w0 & 0xFF}
    if enc == "SOPP":
        return {"simm16": w0 & 0xFFFF}
    if enc == "VOP2":
        return {"vdst": w0 >> 17 & 0xFF, "vsrc1": w0 >> 9 & 0xFF, "src0": w0 & 0x1FF}
    if enc == "VOP1":
        return {"vdst": w0 >> 17 & 0xFF, "src0": w0 & 0x1FF}
    if enc == "VOPC":
        return {"vsrc1": w0 >> 9 & 0xFF, "src0": w0 & 0x1FF}
    if enc == "VOP3":
        return {"vdst": w0 & 0xFF, "abs": w0 >> 8 & 7, "sdst": w0 >> 8 & 0x7F, "opsel": w0 >> 11 & 0xF,
                "clamp": w0 >> 15 & 1, "src0": w1 & 0x1FF, "src1": w1 >> 9 & 0x1FF, "src2": w1 >> 18 & 0x1FF,
                "omod": w1 >> 27 & 3, "neg": w1 >> 29 & 7}
    if enc == "VOP3P":
        return {"vdst": w0 & 0xFF, "neg_hi": w0 >> 8 & 7, "opsel": w0 >> 11 & 7, "opsel_hi2": w0 >> 14 & 1,
                "clamp": w0 >> 15 & 1, "acc_cd": w0 >> 15 & 1, "cbsz": w0 >> 8 & 7, "abid": w0 >> 11 & 0xF,
                "src0": w1 & 0x1FF, "src1": w1 >> 9 & 0x1FF, "src2": w1 >> 18 & 0x1FF,
                "opsel_hi": w1 >> 27 & 3, "neg": w1 >> 29 & 7, "blgp": w1 >> 29 & 7}
    return (_fields9 if family == 9 else _fields_rdna)(enc, w0, w1, family)


def _fields9(enc: str, w0: int, w1: int, family: int) -> dict:
    if enc == "SMEM":
        return {"sbase": (w0 & 0x3F) << 1, "sdata": w0 >> 6 & 0x7F, "soe": w0 >> 14 & 1, "nv": w0 >> 15 & 1,
                "glc": w0 >> 16 & 1, "imm": w0 >> 17 & 1, "offset": sext(w1 & 0x1FFFFF, 21),
                "soffset": w1 >> 25 & 0x7F}
    if enc == "DS":
        return {"offset0": w0 & 0xFF, "offset1": w0 >> 8 & 0xFF, "gds": w0 >> 16 & 1, "acc": w0 >> 25 & 1,
                "addr": w1 & 0xFF, "data0": w1 >> 8 & 0xFF, "data1": w1 >> 16 & 0xFF, "vdst": w1 >> 24 & 0xFF}
    if enc in ("FLAT", "GLOBAL", "SCRATCH"):
        off = w0 & 0x1FFF
        return {"offset": sext(off, 13) if enc != "FLAT" else off & 0xFFF, "lds": w0 >> 13 & 1,
                "seg": w0 >> 14 & 3, "glc": w0 >> 16 & 1, "sc0": w0 >> 16 & 1, "slc": w0 >> 17 & 1,
                "sc1": w0 >> 25 & 1, "nt": w0 >> 17 & 1, "acc": w1 >> 23 & 1,
                "addr": w1 & 0xFF, "data": w1 >> 8 & 0xFF, "saddr": w1 >> 16 & 0x7F, "vdst": w1 >> 24 & 0xFF}
    if enc in ("MUBUF", "MTBUF"):
        d = {"offset": w0 & 0xFFF, "offen": w0 >> 12 & 1, "idxen": w0 >> 13 & 1, "glc": w0 >> 14 & 1,
             "sc0": w0 >> 14 & 1, "vaddr": w1 & 0xFF, "vdata": w1 >> 8 & 0xFF, "srsrc": (w1 >> 16 & 0x1F) << 2,
             "acc": w1 >> 23 & 1, "soffset": w1 >> 24 & 0xFF}
        if enc == "MUBUF":
            d.update(lds=w0 >> 16 & 1, slc=w0 >> 17 & 1, sc1=w0 >> 15 & 1, nt=w0 >> 17 & 1)
        else:
            d.update(dfmt=w0 >> 19 & 0xF, nfmt=w0 >> 23 & 7, slc=w1 >> 22 & 1, nt=w1 >> 22 & 1, sc1=w1 >> 21 & 1)
        return d
    if enc == "MIMG":
        return {"scc": w0 >> 7 & 1, "dmask": w0 >> 8 & 0xF, "unorm": w0 >> 12 & 1, "glc": w0 >> 13 & 1,
                "da": w0 >> 14 & 1, "a16": w0 >> 15 & 1, "acc": w0 >> 16 & 1, "lwe": w0 >> 17 & 1,
                "slc": w0 >> 25 & 1, "vaddr": w1 & 0xFF, "vdata": w1 >> 8 & 0xFF, "srsrc": (w1 >> 16 & 0x1F) << 2,
                "ssamp": (w1 >> 21 & 0x1F) << 2, "d16": w1 >> 31 & 1}
    raise ValueError(enc)


def _fields_rdna(enc: str, w0: int, w1: int, family: int) -> dict:
    null = NULL if family == 10 else NULL11
    if enc == "SMEM":
        so = w1 >> 25 & 0x7F
        return {"sbase": (w0 & 0x3F) << 1, "sdata": w0 >> 6 & 0x7F, "glc": w0 >> (16 if family == 10 else 14) & 1,
                "dlc": w0 >> (14 if family == 10 else 13) & 1, "imm": 1, "soe": int(so != null), "nv": 0,
                "offset": sext(w1 & 0x1FFFFF, 21), "soffset": so}
    if enc == "DS":
        return {"offset0": w0 & 0xFF, "offset1": w0 >> 8 & 0xFF, "gds": w0 >> 17 & 1, "acc": 0,
                "addr": w1 & 0xFF, "data0": w1 >> 8 & 0xFF, "data1": w1 >> 16 & 0xFF, "vdst": w1 >> 24 & 0xFF}
    if enc in ("FLAT", "GLOBAL", "SCRATCH"):
        if family == 10:       # FLAT-segment offsets are unsigned, GLOBAL/SCRATCH ones signed
            d = {"offset": sext(w0 & 0xFFF, 12) if enc != "FLAT" else w0 & 0xFFF, "dlc": w0 >> 12 & 1,
                 "lds": w0 >> 13 & 1, "seg": w0 >> 14 & 3, "glc": w0 >> 16 & 1, "slc": w0 >> 17 & 1, "sve": 0}
        else:
            d = {"offset": sext(w0 & 0x1FFF, 13) if enc != "FLAT" else w0 & 0x1FFF, "dlc": w0 >> 13 & 1, "lds": 0,
                 "glc": w0 >> 14 & 1, "slc": w0 >> 15 & 1, "seg": w0 >> 16 & 3, "sve": w1 >> 23 & 1}
        sa = w1 >> 16 & 0x7F
        d.update(addr=w1 & 0xFF, data=w1 >> 8 & 0xFF, saddr=SADDR_OFF if sa in (null, SADDR_OFF) else sa,
                 saddr_raw=sa, vdst=w1 >> 24 & 0xFF, acc=0, sc0=d["glc"], sc1=0, nt=d["slc"])
        return d
    if enc in ("MUBUF", "MTBUF"):
        d = {"offset": w0 & 0xFFF, "vaddr": w1 & 0xFF, "vdata": w1 >> 8 & 0xFF, "srsrc": (w1 >> 16 & 0x1F) << 2,
             "soffset": w1 >> 24 & 0xFF, "acc": 0, "sc1": 0}
        if family == 10:
            d.update(offen=w0 >> 12 & 1, idxen=w0 >> 13 & 1, glc=w0 >> 14 & 1, dlc=w0 >> 15 & 1,
                     slc=w1 >> 22 & 1, tfe=w1 >> 23 & 1, lds=w0 >> 16 & 1 if enc == "MUBUF" else 0)
        else:
            d.update(slc=w0 >> 12 & 1, dlc=w0 >> 13 & 1, glc=w0 >> 14 & 1, tfe=w1 >> 21 & 1, offen=w1 >> 22 & 1,
                     idxen=w1 >> 23 & 1, lds=0)
        d.update(sc0=d["glc"], nt=d["slc"])
        if enc == "MTBUF":
            d["format"] = w0 >> 19 & 0x7F
        return d
    if enc == "MIMG":
        d = {"dmask": w0 >> 8 & 0xF, "vaddr": w1 & 0xFF, "vdata": w1 >> 8 & 0xFF, "srsrc": (w1 >> 16 & 0x1F) << 2,
             "acc": 0, "scc": 0, "lwe": 0}
        if family == 10:
            d.update(nsa=w0 >> 1 & 3, dim=w0 >> 3 & 7, dlc=w0 >> 7 & 1, unorm=w0 >> 12 & 1, glc=w0 >> 13 & 1,
                     r128=w0 >> 15 & 1, tfe=w0 >> 16 & 1, lwe=w0 >> 17 & 1, slc=w0 >> 25 & 1,
                     ssamp=(w1 >> 21 & 0x1F) << 2, a16=w1 >> 30 & 1, d16=w1 >> 31 & 1)
        else:
            d.update(nsa=w0 & 1, dim=w0 >> 2 & 7, unorm=w0 >> 7 & 1, slc=w0 >> 12 & 1, dlc=w0 >> 13 & 1,
                     glc=w0 >> 14 & 1, r128=w0 >> 15 & 1, a16=w0 >> 16 & 1, d16=w0 >> 17 & 1,
                     tfe=w1 >> 21 & 1, lwe=w1 >> 22 & 1, ssamp=(w1 >> 26 & 0x1F) << 2)
        d["da"] = int(d["dim"] in (4, 5, 7))
        return d
    if enc == "VOPD":
        vdstx = w1 >> 24 & 0xFF
        return {"opx": w0 >> 22 & 0xF, "opy": w0 >> 17 & 0x1F, "srcx0": w0 & 0x1FF, "vsrcx1": w0 >> 9 & 0xFF,
                "vdstx": vdstx, "srcy0": w1 & 0x1FF, "vsrcy1": w1 >> 9 & 0xFF,
                "vdsty": (w1 >> 17 & 0x7F) << 1 | (vdstx & 1 ^ 1)}
    raise ValueError(enc)


def dpp_fields(w: int, family: int) -> dict:
    d = {"src0": w & 0xFF, "dpp_ctrl": w >> 8 & 0x1FF, "bound_ctrl": w >> 19 & 1, "src0_neg": w >> 20 & 1,
         "src0_abs": w >> 21 & 1, "src1_neg": w >> 22 & 1, "src1_abs": w >> 23 & 1,
         "bank_mask": w >> 24 & 0xF, "row_mask": w >> 28 & 0xF}
    if family > 9:
        d["fi"] = w >> 18 & 1
    return d


def dpp8_fields(w: int, fi: int) -> dict:
    return {"src0": w & 0xFF, "sel": [w >> (8 + 3 * i) & 7 for i in range(8)], "fi": fi}


def sdwa_fields(w: int) -> dict:
    return {"src0": w & 0xFF, "dst_sel": w >> 8 & 7, "dst_unused": w >> 11 & 3, "clamp": w >> 13 & 1,
            "omod": w >> 14 & 3, "sdst": w >> 8 & 0x7F, "sd": w >> 15 & 1, "src0_sel": w >> 16 & 7,
            "src0_sext": w >> 19 & 1, "src0_neg": w >> 20 & 1, "src0_abs": w >> 21 & 1, "s0": w >> 23 & 1,
            "src1_sel": w >> 24 & 7, "src1_sext": w >> 27 & 1, "src1_neg": w >> 28 & 1,
            "src1_abs": w >> 29 & 1, "s1": w >> 31 & 1}


# GFX10/GFX11 unified MTBUF formats → (GFX9 dfmt, nfmt) for the typed-buffer semantics
_DFMTS = ("8", "16", "8_8", "32", "16_16", "10_11_11", "11_11_10", "10_10_10_2", "2_10_10_10", "8_8_8_8", "32_32",
          "16_16_16_16", "32_32_32", "32_32_32_32")
_NFMTS = {"UNORM": 0, "SNORM": 1, "USCALED": 2, "SSCALED": 3, "UINT": 4, "SINT": 5, "FLOAT": 7}
_UNIFIED: dict = {}


def unified_format(family: int, code: int):
    """(dfmt, nfmt) of a GFX10/GFX11 unified buffer format, or None for a format the GFX9 pair cannot name."""
    t = _UNIFIED.get(family)
    if t is None:
        t = _UNIFIED[family] = {}
        for c, name in module(family).BUF_FORMATS.items():
            if name == "DEFAULT":                   # LLVM prints no format for the default code: 8_UNORM
                name = "BUF_FMT_8_UNORM"
            d, _, n = name.removeprefix("BUF_FMT_").rpartition("_")
            if d in _DFMTS and n in _NFMTS:
                t[c] = (_DFMTS.index(d) + 1, _NFMTS[n])
    return t.get(code)
