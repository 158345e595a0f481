"""Lowering of the matrix instructions and the accumulation-register moves.  MFMA: the numpy semantics' own
:class:`~pyhip.emu.semantics.mfma.Plan` (shape tables, CBSZ/ABID/BLGP lane patterns, operands) flattened into
the program's aux table for the native handler (native/engine/ops_mfma.h ``v_mfma``).  RDNA3 WMMA: the operand
registers and modifiers for ``v_wmma`` (the layout is fixed: semantics/wmma.py)."""
from __future__ import annotations

import numpy as np

from ..semantics import SEMANTICS
from ..operands import constant
from ..semantics.mfma import Plan
from ..semantics.wmma import WMMA
from .lowerbase import Unsupported, sdesc

ACCVGPR_MOVES = ("v_accvgpr_read_b32", "v_accvgpr_write_b32", "v_accvgpr_read", "v_accvgpr_write",
                 "v_accvgpr_mov_b32")
MK = {"f32": 0, "xf32": 1, "f16": 2, "bf16": 3, "i8": 4, "fp8": 5, "bf8": 6, "f64": 7}


def lower_mfma(rec, inst, K, aux: list) -> bool:
    name = inst.name
    if name in ACCVGPR_MOVES:
        lower_accvgpr(rec, inst, K)
        return True
    if name in WMMA:
        lower_wmma(rec, inst, K)
        return True
    shape = getattr(SEMANTICS.get(name), "shape", None)
    if shape is None:
        return False
    kind, M, kpl, blocks, kind_b, sparse = shape
    try:
        p = Plan(inst, K, kind, M, kpl, blocks, kind_b, sparse)
    except NotImplementedError as exc:
        raise Unsupported(str(exc)) from None
    f = inst.fields
    rec.op = "v_mfma"
    rec.x = MK[p.kind] | MK[p.kind_b] << 4
    imm = int(p.integer) | (2 if p.f64 else 0) | ((p.negs & 7) << 2) | (64 if sparse else 0)
    for i, (reg, code) in enumerate(((p.a_reg, f["src0"]), (p.b_reg, f["src1"]))):
        if callable(reg):
            rec.src(i, *sdesc(code, inst.literal))
        else:
            rec.s[i] = reg
            rec.touch(reg + 8)
    if p.c_reg is not None:
        rec.s[2] = p.c_reg
        rec.touch(p.c_reg + p.nregs * p.width)
    else:
        imm |= 32
        bits = int(np.asarray(p.c_const).view(np.uint64 if p.f64 else np.uint32))
        rec.k[2], rec.khi[2] = bits & 0xFFFFFFFF, bits >> 32
    rec.imm = imm
    rec.d = p.d_reg
    rec.touch(p.d_reg + p.nregs * p.width)
    a_idx = (p.a_lane.astype(np.int64) << 4 | p.a_item).astype(np.int32).reshape(-1)   # [i][k][b]
    out = ((p.BB.astype(np.int64) * M + p.II) * M + p.JJ).astype(np.int32)      # D[b][i][j], flat
    none = np.full(64, -1, np.int32)
    table = np.concatenate([np.array([M, p.K, blocks, kpl, p.nregs, p.width], np.int32), a_idx, out.reshape(-1),
                            p.a_src.astype(np.int32) if p.a_src is not None else none,
                            p.b_src.astype(np.int32) if p.b_src is not None else none,
                            # v_smfmac: the compression index register and the bit its index set starts at
                            np.array([p.idx_reg, p.sel_bits] if sparse else [-1, 0], np.int32)])
    if sparse:
        rec.touch(p.idx_reg + 1)
    rec.a0 = sum(len(t) for t in aux)
    aux.append(table)
    return True


WK = {"f16": 0, "bf16": 1, "iu8": 2, "iu4": 3}          # native/engine/ops_mfma.h WK_* / WO_*
WO = {"f32": 0, "f16": 1, "bf16": 2, "i32": 3}


def lower_wmma(rec, inst, K) -> None:
    """RDNA3 WMMA (semantics/wmma.py): the operands' registers and the modifiers for native/engine/ops_mfma.h
    ``v_wmma``."""
    kin, kout = WMMA[inst.name]
    f = inst.fields
    a, b, c = f["src0"] - 256, f["src1"] - 256, f["src2"]
    if a < 0 or b < 0:
        raise Unsupported("WMMA A and B must be VGPRs")
    nab = 16 * {"f16": 16, "bf16": 16, "iu8": 8, "iu4": 4}[kin] // 32
    ncd = 16 // (K.lanes // 16)
    hi = (f["opsel"] >> 2 & 1) if kout in ("f16", "bf16") else 0
    rec.op = "v_wmma"
    rec.x = WK[kin] | WO[kout] << 4
    rec.imm = (f["neg"] & 7) | (f["neg_hi"] & 7) << 3 | (f["clamp"] & 1) << 6 | hi << 7
    if c < 256:
        cconst = constant(c, inst.literal, "f16" if kout == "f16" else "b32")
        if cconst is None:
            raise Unsupported("WMMA C must be a VGPR or an inline constant")
        rec.imm |= 1 << 8
        rec.k[2] = int(cconst) & 0xFFFFFFFF
    else:
        rec.s[2] = c - 256
        rec.touch(c - 256 + ncd)
    rec.s[0], rec.s[1], rec.d = a, b, f["vdst"]
    rec.touch(max(a, b) + nab)
    rec.touch(rec.d + ncd)


def lower_accvgpr(rec, inst, K) -> None:
    """v_accvgpr_read/write/mov (semantics/mfma.py): one row copied under EXEC between the architectural and
    the accumulation VGPRs (``K.accum_offset`` rows up), native/engine/ops_mfma.h ``v_accvgpr_mov``."""
    f, acc = inst.fields, K.accum_offset
    src, dst = f["src0"], f["vdst"]
    rec.op = "v_accvgpr_mov"
    if "read" in inst.name:
        rec.s[0], rec.d = src - 256 + acc, dst
    elif "write" in inst.name:
        if src >= 256:
            rec.s[0] = src - 256
        else:
            rec.src(0, *sdesc(src, inst.literal))
        rec.d = dst + acc
    else:
        rec.s[0], rec.d = src - 256 + acc, dst + acc
    if rec.s[0] < 0x4000:
        rec.touch(rec.s[0] + 1)
    rec.touch(rec.d + 1)
