"""GFX9 instruction formats: classify the first dword, extract the opcode, and unpack the fields.

Field layouts: AMD Vega / CDNA ISA documents (SOP*, SMEM, VOP*, DS, FLAT/GLOBAL/SCRATCH, MUBUF, MTBUF, MIMG).
MIMG on gfx90a: bit 16 (TFE on other GFX9 parts) selects AGPR data (``acc``), bit 7 is the SCC cache bit.
Field names follow ``instruction.py``.
"""
from __future__ import annotations

LITERAL, SDWA, DPP = 255, 249, 250

# the fixed bits of word 0 of each encoding, and (shift, width) of its opcode field
ENCODING_FIXED = {
    "SOP2": 0x80000000, "SOPK": 0xB0000000, "SOP1": 0xBE800000, "SOPC": 0xBF000000, "SOPP": 0xBF800000,
    "SMEM": 0xC0000000, "VOP2": 0x00000000, "VOP1": 0x7E000000, "VOPC": 0x7C000000, "VOP3": 0xD0000000,
    "VOP3P": 0xD3800000, "DS": 0xD8000000, "FLAT": 0xDC000000, "MUBUF": 0xE0000000, "MTBUF": 0xE8000000,
    "MIMG": 0xF0000000,
}
OPCODE_FIELD = {
    "SOP2": (23, 7), "SOPK": (23, 5), "SOP1": (8, 8), "SOPC": (16, 7), "SOPP": (16, 7), "SMEM": (18, 8),
    "VOP2": (25, 6), "VOP1": (9, 8), "VOPC": (17, 8), "VOP3": (16, 10), "VOP3P": (16, 7), "DS": (17, 8),
    "FLAT": (18, 7), "MUBUF": (18, 7), "MTBUF": (15, 4), "MIMG": (18, 7),
}
# bits of word 0 that select the encoding and the opcode (FLAT includes seg)
ENCODING_BITS = {
    "SOP2": 0xFF800000, "SOPK": 0xFF800000, "SOP1": 0xFF80FF00, "SOPC": 0xFFFF0000, "SOPP": 0xFFFF0000,
    "SMEM": 0xFFFC0000, "VOP2": 0xFE000000, "VOP1": 0xFE01FE00, "VOPC": 0xFFFE0000, "VOP3": 0xFFFF0000,
    "VOP3P": 0xFFFF0000, "DS": 0xFFFE0000, "FLAT": 0xFFFCC000, "MUBUF": 0xFFFC0000, "MTBUF": 0xFC078000,
    "MIMG": 0xFDFC0000,
}


def classify(w: int) -> str | None:
    """Encoding name of a first dword (None for graphics-only or unknown encodings)."""
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
    if top9 == 0x1A7:
        return "VOP3P"
    top6 = w >> 26
    return {0x30: "SMEM", 0x34: "VOP3", 0x36: "DS", 0x37: "FLAT", 0x38: "MUBUF", 0x3A: "MTBUF",
            0x3C: "MIMG"}.get(top6)


def opcode(enc: str, w: int) -> int:
    if enc == "SOP2":
        return w >> 23 & 0x7F
    if enc == "SOPK":
        return w >> 23 & 0x1F
    if enc == "SOP1":
        return w >> 8 & 0xFF
    if enc in ("SOPC", "SOPP", "VOP3P"):
        return w >> 16 & 0x7F
    if enc == "SMEM":
        return w >> 18 & 0xFF
    if enc == "VOP2":
        return w >> 25 & 0x3F
    if enc == "VOP1":
        return w >> 9 & 0xFF
    if enc == "VOPC":
        return w >> 17 & 0xFF
    if enc == "VOP3":
        return w >> 16 & 0x3FF
    if enc == "DS":
        return w >> 17 & 0xFF
    if enc in ("FLAT", "MUBUF", "MIMG"):
        return w >> 18 & 0x7F
    if enc == "MTBUF":
        return w >> 15 & 0xF
    raise ValueError(enc)


def flat_segment(w: int) -> str:
    return ("FLAT", "SCRATCH", "GLOBAL", "FLAT")[w >> 14 & 3]


def base_size(enc: str) -> int:
    return 4 if enc in ("SOP1", "SOP2", "SOPC", "SOPK", "SOPP", "VOP1", "VOP2", "VOPC") else 8


def sext(v: int, bits: int) -> int:
    return v - (1 << bits) if v >> (bits - 1) & 1 else v


def fields(enc: str, w0: int, w1: int) -> dict:
    """Raw fields of one instruction (``w1`` is the second dword for 64-bit encodings)."""
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
    if enc == "SMEM":
        return {"sbase": (w0 & 0x3F) << 1, "sdata": w0 >> 6 & 0x7F, "soe": w0 >> 14 & 1, "nv": w0 >> 15 & 1,
                "glc": w0 >> 16 & 1, "imm": w0 >> 17 & 1, "offset": sext(w1 & 0x1FFFFF, 21),
                "soffset": w1 >> 25 & 0x7F}
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


def dpp_fields(w: int) -> dict:
    return {"src0": w & 0xFF, "dpp_ctrl": w >> 8 & 0x1FF, "bound_ctrl": w >> 19 & 1, "src0_neg": w >> 20 & 1,
            "src0_abs": w >> 21 & 1, "src1_neg": w >> 22 & 1, "src1_abs": w >> 23 & 1,
            "bank_mask": w >> 24 & 0xF, "row_mask": w >> 28 & 0xF}


def sdwa_fields(w: int) -> dict:
    return {"src0": w & 0xFF, "dst_sel": w >> 8 & 7, "dst_unused": w >> 11 & 3, "clamp": w >> 13 & 1,
            "omod": w >> 14 & 3, "sdst": w >> 8 & 0x7F, "sd": w >> 15 & 1, "src0_sel": w >> 16 & 7,
            "src0_sext": w >> 19 & 1, "src0_neg": w >> 20 & 1, "src0_abs": w >> 21 & 1, "s0": w >> 23 & 1,
            "src1_sel": w >> 24 & 7, "src1_sext": w >> 27 & 1, "src1_neg": w >> 28 & 1,
            "src1_abs": w >> 29 & 1, "s1": w >> 31 & 1}
