"""GFX9 decoder: code bytes → :class:`Instruction` objects (fields per ``instruction.py``).

Opcode → mnemonic comes from the generated ``_tables_gfx9`` (llvm-mc-19 sweeps) for the target.
"""
from __future__ import annotations

import struct

from . import formats as F
from ._tables_gfx9 import OPCODES
from .instruction import DecodeError, Instruction

_TARGET_TABLE = {"gfx90a": "gfx90a", "gfx940": "gfx942", "gfx941": "gfx942", "gfx942": "gfx942"}


def table_for(target: str) -> dict:
    proc = target.split(":")[0]
    key = _TARGET_TABLE.get(proc)
    if key is None:
        raise DecodeError(0, 0, f"no decoder tables for {proc} (supported: gfx90a, gfx940-942)")
    return OPCODES[key]


def decode_one(code: bytes, offset: int, target: str, table: dict | None = None) -> Instruction:
    table = table or table_for(target)
    if offset + 4 > len(code):
        raise DecodeError(offset, 0, "truncated instruction")
    w0 = struct.unpack_from("<I", code, offset)[0]
    enc = F.classify(w0)
    if enc is None:
        raise DecodeError(offset, w0, "unknown encoding")
    op = F.opcode(enc, w0)
    size = F.base_size(enc)
    if size == 8:
        if offset + 8 > len(code):
            raise DecodeError(offset, w0, "truncated 64-bit instruction")
        w1 = struct.unpack_from("<I", code, offset + 4)[0]
    else:
        w1 = 0
    if enc == "FLAT":
        enc = F.flat_segment(w0)
    entry = table.get(enc, {}).get(op)
    if entry is None:
        raise DecodeError(offset, w0, f"invalid {enc} opcode {op}")
    fl = F.fields(enc, w0, w1)
    words = [w0] + ([w1] if size == 8 else [])
    inst = Instruction(pc=offset, size=size, encoding=enc, opcode=op, name=entry[0], fields=fl)
    if enc in ("VOP1", "VOP2", "VOPC"):
        s0 = fl["src0"]
        if s0 in (F.DPP, F.SDWA):
            if offset + 8 > len(code):
                raise DecodeError(offset, w0, "truncated DPP/SDWA word")
            ext = struct.unpack_from("<I", code, offset + 4)[0]
            words.append(ext)
            inst.size = 8
            if s0 == F.DPP:
                inst.dpp = F.dpp_fields(ext)
                fl["src0"] = 256 + inst.dpp["src0"]
            else:
                inst.sdwa = F.sdwa_fields(ext)
                fl["src0"] = inst.sdwa["src0"] + (0 if inst.sdwa["s0"] else 256)
                if enc == "VOP2" and inst.sdwa["s1"]:
                    fl["vsrc1"] = fl["vsrc1"]     # SGPR src1 in SDWA: keep the raw encoding, flagged by s1
    if enc in ("SOP1", "SOP2", "SOPC", "SOPK", "VOP1", "VOP2", "VOPC", "VOP3", "VOP3P"):
        srcs = [fl.get(k) for k in ("ssrc0", "ssrc1", "src0", "src1", "src2")]
        if enc == "SOPK" and inst.name in ("s_setreg_imm32_b32",):
            srcs.append(F.LITERAL)
        if F.LITERAL in srcs and not (enc == "VOP3" and False):
            if offset + inst.size + 4 > len(code):
                raise DecodeError(offset, w0, "truncated literal")
            inst.literal = struct.unpack_from("<I", code, offset + inst.size)[0]
            words.append(inst.literal)
            inst.size += 4
    if inst.name in ("v_madmk_f32", "v_madak_f32", "v_fmamk_f32", "v_fmaak_f32", "v_madmk_f16", "v_madak_f16",
                     "v_fmamk_f16", "v_fmaak_f16") and inst.literal is None:
        inst.literal = struct.unpack_from("<I", code, offset + inst.size)[0]
        words.append(inst.literal)
        inst.size += 4
    inst.words = tuple(words)
    return inst


def decode(code: bytes, target: str, base: int = 0, stop_at_endpgm: bool = False) -> list[Instruction]:
    """Linear sweep over ``code``; ``pc`` values are offsets plus ``base``."""
    table = table_for(target)
    out, off = [], 0
    while off < len(code):
        inst = decode_one(code, off, target, table)
        inst.pc = base + off
        out.append(inst)
        off += inst.size
        if stop_at_endpgm and inst.name == "s_endpgm":
            break
    return out
