"""The decoded-instruction contract shared by the GFX9 decoder and the execution engine.

The decoder (``pyhip.emu.isa.decoder``) turns code bytes into :class:`Instruction` objects; the engine
(``pyhip.emu``) compiles each one, once per loaded kernel, into an operation on numpy wave state.

Field names follow AMD's Vega/CDNA ISA documents, lower-cased: ``ssrc0``, ``ssrc1``, ``sdst``,
``simm16`` (SOP*), ``sbase``, ``sdata``, ``offset``, ``soffset``, ``imm``, ``glc`` (SMEM), ``src0``,
``vsrc1``, ``vdst`` (VOP1/VOP2/VOPC), ``src0``, ``src1``, ``src2``, ``vdst``, ``sdst``, ``abs``,
``neg``, ``clamp``, ``omod``, ``opsel``, ``opsel_hi``, ``neg_hi`` (VOP3A/VOP3B/VOP3P; MAI adds
``acc_cd``, ``cbsz``, ``abid``, ``blgp``), ``addr``, ``data0``, ``data1``, ``vdst``, ``offset0``,
``offset1``, ``gds``, ``acc`` (DS), ``addr``, ``data``, ``vdst``, ``saddr``, ``offset``, ``seg``,
``glc``, ``slc``, ``sc0``, ``sc1``, ``nt``, ``acc`` (FLAT/GLOBAL/SCRATCH), ``vaddr``, ``vdata``,
``srsrc``, ``soffset``, ``offset``, ``offen``, ``idxen``, ``glc``, ``slc``, ``lds``, ``tfe``,
``dfmt``, ``nfmt`` (MUBUF/MTBUF).  Source operands keep their raw 9-bit (VALU) or 8-bit (SALU)
encodings: 0-101 SGPRs, 102/103 flat_scratch, 104/105 xnack_mask, 106/107 vcc, 108-123 ttmp, 124 m0,
126/127 exec, 128-192 integers 0..64, 193-208 -1..-16, 235-238 shared/private base/limit,
240-248 float constants, 251 vccz, 252 execz, 253 scc, 255 literal, 256-511 v0-v255.
Destinations keep their raw encodings too (``vdst`` 0-255 = v0-v255; ``sdst`` as SGPR encoding).

DPP and SDWA words are decoded into ``dpp`` / ``sdwa`` dicts (``dpp_ctrl``, ``row_mask``,
``bank_mask``, ``bound_ctrl``, ``src0_neg``, ``src0_abs``, ``src1_neg``, ``src1_abs``, and
``dst_sel``, ``dst_unused``, ``src0_sel``, ``src0_sext``, ``src1_sel``, ``src1_sext``, ``s0``,
``s1``, ``sdst``, ``sd``, ``clamp``, ``omod``) with the real ``src0`` placed in ``fields``.
"""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(slots=True)
class Instruction:
    pc: int                 # byte offset of the instruction from the start of the decoded range
    size: int               # 4, 8 or 12 bytes (literal / DPP / SDWA words included)
    encoding: str           # 'SOP1','SOP2','SOPC','SOPK','SOPP','SMEM','VOP1','VOP2','VOPC','VOP3A',
                            # 'VOP3B','VOP3P','DS','FLAT','GLOBAL','SCRATCH','MUBUF','MTBUF'
    opcode: int             # the opcode field of that encoding
    name: str               # LLVM mnemonic without _e32/_e64/_dpp/_sdwa suffix, e.g. 'v_add_co_u32'
    fields: dict = field(default_factory=dict)
    literal: int | None = None      # 32-bit literal constant when an operand is 255
    dpp: dict | None = None
    sdwa: dict | None = None
    words: tuple = ()       # the raw little-endian dwords

    @property
    def next_pc(self) -> int:
        return self.pc + self.size


class DecodeError(ValueError):
    """Bytes that are not a valid instruction for the target."""

    def __init__(self, pc: int, word: int, message: str = "invalid instruction"):
        self.pc, self.word = pc, word
        super().__init__(f"{message} at pc 0x{pc:x}: 0x{word:08x}")
