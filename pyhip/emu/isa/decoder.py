"""GFX9 decoder: code bytes → :class:`Instruction` objects (fields per ``instruction.py``).

Everything per opcode comes from the generated ``_tables_gfx9`` (llvm-mc-19 sweeps of gfx90a and gfx942):
the mnemonic, the bits that must keep a fixed value (unused fields; a word that violates them is not a
valid instruction), which sources exist (a 255 there takes a 32-bit literal; GFX9 VOP3/VOP3P have no
literals), and whether a VOP1/VOP2/VOPC opcode has DPP (src0 = 250) and SDWA (src0 = 249) forms.

VOP3A/VOP3B are reported as ``encoding == 'VOP3'`` (the engine's convention); VOP3 opcodes 0x000-0x0ff
are VOPC, 0x100-0x13f VOP2 and 0x140-0x17f VOP1 promoted to VOP3 (LLVM mnemonic with ``_e64``), the
rest are VOP3-only.  FLAT's seg field selects FLAT/GLOBAL/SCRATCH; the global/scratch offset is 13-bit
signed, the flat one 12-bit unsigned; the SMEM offset is 21-bit signed.  MIMG exists on gfx90a only (gfx94x
has no image instructions) and encodes no address count (the T#'s type decides it at execution).
"""
from __future__ import annotations

import struct

from . import decoder_rdna
from . import formats as F
from ._tables_gfx9 import INFO, OPCODES
from .instruction import DecodeError, Instruction

_TARGET_TABLE = {"gfx90a": "gfx90a", "gfx940": "gfx942", "gfx941": "gfx942", "gfx942": "gfx942"}
_KMK = frozenset(("v_madmk_f32", "v_madak_f32", "v_fmamk_f32", "v_fmaak_f32", "v_madmk_f16", "v_madak_f16",
                  "v_fmamk_f16", "v_fmaak_f16"))
_SRC_LIT = {"SOP2": ("ssrc0", "ssrc1"), "SOP1": ("ssrc0",), "SOPC": ("ssrc0", "ssrc1"), "VOP1": ("src0",),
            "VOP2": ("src0",), "VOPC": ("src0",), "VOP3": ("src0", "src1", "src2"),
            "VOP3P": ("src0", "src1", "src2")}
_U32 = struct.Struct("<I")
_U64 = struct.Struct("<II")


class _Op:
    """Decoding facts of one (target, encoding, opcode)."""
    __slots__ = ("name", "llvm", "must_mask", "must_value", "lit_slots", "dpp", "sdwa", "kmk", "src_types")

    def __init__(self, entry, info, enc):
        self.name, self.llvm = entry[0], entry[1]
        self.must_mask, self.must_value = info.get("must_mask", 0), info.get("must_value", 0)
        self.src_types = info.get("src_types", {})
        self.lit_slots = tuple(s for s in _SRC_LIT.get(enc, ()) if self.src_types.get(s) is not None)
        if self.name == "s_set_gpr_idx_on":
            self.lit_slots = ("ssrc0",)
        self.dpp, self.sdwa = info.get("dpp", False), info.get("sdwa", False)
        self.kmk = self.name in _KMK or self.name == "s_setreg_imm32_b32"


_CACHE: dict = {}


def table_for(target: str) -> dict:
    """{(encoding, opcode): _Op} for a target (``gfx90a``, ``gfx940``-``gfx942``, features ignored)."""
    proc = target.split(":")[0]
    key = _TARGET_TABLE.get(proc)
    if key is None:
        if decoder_rdna.family(proc):
            return decoder_rdna.table_for(proc)
        raise DecodeError(0, 0, f"no decoder tables for {proc} (supported: gfx90a, gfx940-942, gfx1030-1036, "
                                f"gfx1100-1103)")
    t = _CACHE.get(key)
    if t is None:
        t = {}
        for enc, ops in OPCODES[key].items():
            for op, entry in ops.items():
                t[(enc, op)] = _Op(entry, INFO[key][enc][op], enc)
        _CACHE[key] = t
    return t


def op_info(target: str, enc: str, opcode: int) -> "_Op":
    return table_for(target)[(enc, opcode)]


def decode_one(code: bytes, offset: int, target: str, table: dict | None = None) -> Instruction:
    table = table or table_for(target)
    if "family" in table:                       # RDNA
        return decoder_rdna.decode_one(code, offset, target, table)
    n = len(code)
    if offset + 4 > n:
        raise DecodeError(offset, 0, "truncated instruction")
    w0 = _U32.unpack_from(code, offset)[0]
    enc = F.classify(w0)
    if enc is None:
        raise DecodeError(offset, w0, "unknown encoding")
    op = F.opcode(enc, w0)
    if enc in ("SOP1", "SOP2", "SOPC", "SOPK", "SOPP", "VOP1", "VOP2", "VOPC"):
        size, w1 = 4, 0
    else:
        if offset + 8 > n:
            raise DecodeError(offset, w0, "truncated 64-bit instruction")
        size, w1 = 8, _U32.unpack_from(code, offset + 4)[0]
        if enc == "FLAT":
            enc = F.flat_segment(w0)
    o = table.get((enc, op))
    if o is None:
        raise DecodeError(offset, w0, f"invalid {enc} opcode {op}")
    if (w0 | w1 << 32) & o.must_mask != o.must_value:
        raise DecodeError(offset, w0, f"invalid {o.name} encoding (fixed bits)")
    fl = F.fields(enc, w0, w1)
    if enc == "MIMG" and o.name.endswith("cmpswap") and fl["vdata"] == 255:
        raise DecodeError(offset, w0, f"{o.name}: data registers past v255")
    words = [w0, w1] if size == 8 else [w0]
    inst = Instruction(pc=offset, size=size, encoding=enc, opcode=op, name=o.name, fields=fl)
    if size == 4 and enc[0] == "V":
        s0 = fl["src0"]
        if s0 == F.DPP or s0 == F.SDWA:
            if not (o.dpp if s0 == F.DPP else o.sdwa):
                raise DecodeError(offset, w0, f"{o.name} has no {'DPP' if s0 == F.DPP else 'SDWA'} form")
            if offset + 8 > n:
                raise DecodeError(offset, w0, "truncated DPP/SDWA word")
            ext = _U32.unpack_from(code, offset + 4)[0]
            words.append(ext)
            inst.size = size = 8
            if s0 == F.DPP:
                inst.dpp = F.dpp_fields(ext)
                fl["src0"] = 256 + inst.dpp["src0"]
            else:
                inst.sdwa = F.sdwa_fields(ext)
                fl["src0"] = inst.sdwa["src0"] + (0 if inst.sdwa["s0"] else 256)
    lit = False
    vop3 = enc == "VOP3" or enc == "VOP3P"
    for s in o.lit_slots:
        v = fl[s]
        if v == F.LITERAL:
            if vop3:
                raise DecodeError(offset, w0, "GFX9 VOP3 has no literal constants")
            lit = True
        elif 209 <= v <= 234 or (vop3 and (v == F.DPP or v == F.SDWA)):
            raise DecodeError(offset, w0, f"reserved source operand {v}")
    if lit or o.kmk:
        if offset + size + 4 > n:
            raise DecodeError(offset, w0, "truncated literal")
        inst.literal = _U32.unpack_from(code, offset + size)[0]
        words.append(inst.literal)
        inst.size = size + 4
    inst.words = tuple(words)
    return inst


INVALID = "<invalid>"


def decode(code: bytes, target: str, base: int = 0, stop_at_endpgm: bool = False,
           tolerant: bool = False) -> list[Instruction]:
    """Linear sweep over ``code``; ``pc`` values are offsets plus ``base``.  ``tolerant``: a word that is
    not a valid instruction becomes a 4-byte :data:`INVALID` placeholder (with the decoder's message in
    ``fields['error']``) instead of an error — the engine faults only if a wave executes it, so one odd
    word does not make every kernel of a code object unusable."""
    table = table_for(target)
    if "family" in table:                       # RDNA
        return decoder_rdna.decode(code, target, base, stop_at_endpgm)
    out, off, n = [], 0, len(code)
    while off < n:
        try:
            inst = decode_one(code, off, target, table)
        except DecodeError as exc:
            if not tolerant or off + 4 > n:
                raise
            inst = Instruction(pc=off, size=4, encoding="INVALID", opcode=-1, name=INVALID,
                               fields={"error": str(exc)}, words=(exc.word,))
        inst.pc = base + off
        out.append(inst)
        off += inst.size
        if stop_at_endpgm and inst.name == "s_endpgm":
            break
    return out
