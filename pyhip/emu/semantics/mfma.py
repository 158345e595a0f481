"""Matrix fused multiply-add (MAI: v_mfma_*) for the 32x32 single-block shapes, plus v_accvgpr_*.

Operand layouts (AMD matrix instruction calculator, one block): lane ``l`` of A holds row ``i = l % 32``
and K-slice ``l // 32`` (``kpl`` consecutive k values packed in its registers), B likewise with the
column ``j = l % 32``; D/C are 16 registers per lane with ``D[i][j]`` in register ``4*(i//8) + i%4`` of
lane ``j + 32*((i//4) % 2)``.  Products of the f32/f16 inputs are exact in float64 and the sum is rounded
to f32 once per instruction (the hardware's internal accumulation order is unspecified; results agree
to the last bit or two).  xf32 inputs are rounded to 10 mantissa bits (nearest even) first.  MFMA
ignores EXEC (every lane's registers take part), as on hardware.
"""
from __future__ import annotations

import numpy as np

from . import op as register_op, register

U16, U32, F16, F32, F64 = np.uint16, np.uint32, np.float16, np.float32, np.float64

_LANE = np.arange(64)
_REG = np.arange(16)
# output element (i, j) held by register r of lane l
_II = 8 * (_REG[:, None] // 4) + 4 * (_LANE[None, :] // 32) + (_REG[:, None] % 4)     # (16, 64)
_JJ = np.broadcast_to(_LANE[None, :] % 32, (16, 64))


def _xf32(x):
    """f32 → xf32 (8-bit exponent, 10-bit mantissa), round to nearest even, kept as f32."""
    u = x.view(U32).astype(np.uint64)
    rounded = (u + np.uint64(0xFFF) + ((u >> np.uint64(13)) & np.uint64(1))) & np.uint64(0xFFFFE000)
    out = rounded.astype(U32)
    keep = ~np.isfinite(x)
    out[keep] = x.view(U32)[keep]
    return out.view(F32)


def _inputs(st, w, reg, kind):
    """(nw, 64, items) float64 input values of one operand."""
    if kind == "f32":
        return st.vgpr[reg, w].view(F32).astype(F64)[:, :, None]
    if kind == "xf32":
        v = np.stack([st.vgpr[reg + i, w] for i in range(2)], axis=-1).view(F32)
        return _xf32(v).astype(F64)
    if kind == "f16":
        v = np.ascontiguousarray(np.stack([st.vgpr[reg + i, w] for i in range(2)], axis=-1))
        return v.view(F16).astype(F64)                   # (nw, 64, 4): element e = half e of the pair
    raise NotImplementedError(kind)


def _mfma(kind, kpl):
    """32x32 output, K = 2 * kpl (two K-slices of ``kpl`` values per lane)."""
    K = 2 * kpl
    # A[i, k] = input (lane = i + 32*(k // kpl), item = k % kpl); B[k, j] with lane = j + 32*(k // kpl)
    i, k = np.meshgrid(np.arange(32), np.arange(K), indexing="ij")
    a_lane, a_item = i + 32 * (k // kpl), k % kpl
    b_lane, b_item = (np.arange(32)[None, :] + 32 * (np.arange(K)[:, None] // kpl)), \
        np.broadcast_to(np.arange(K)[:, None] % kpl, (K, 32))

    def factory(inst, K_):
        f = inst.fields
        if f.get("cbsz") or f.get("abid") or f.get("blgp") or f.get("neg") or f.get("neg_hi"):
            raise NotImplementedError("MFMA broadcast/negate controls (cbsz/abid/blgp/neg) are not emulated")
        if f["src0"] < 256 or f["src1"] < 256:
            raise NotImplementedError("MFMA with scalar/constant A or B operands")
        acc = K_.accum_offset if f.get("acc_cd") else 0
        src_acc = f.get("opsel_hi", 0)                     # MAI: bit 0 / bit 1 = A / B in AGPRs
        a_reg = f["src0"] - 256 + (K_.accum_offset if src_acc & 1 else 0)
        b_reg = f["src1"] - 256 + (K_.accum_offset if src_acc & 2 else 0)
        d_reg = f["vdst"] + acc
        c_code = f["src2"]
        c_reg = c_code - 256 + acc if c_code >= 256 else None
        if c_reg is None:
            from ..operands import constant
            cval = constant(c_code, inst.literal, "f32")
            if cval is None:
                raise NotImplementedError("MFMA with a scalar register C operand")
            c_const = np.array([cval & 0xFFFFFFFF], U32).view(F32)[0]

        def run(st, w):
            av, bv = _inputs(st, w, a_reg, kind), _inputs(st, w, b_reg, kind)
            A = av[:, a_lane, a_item]                      # (nw, 32, K)
            B = bv[:, b_lane, b_item]                      # (nw, K, 32)
            D = np.matmul(A, B)                            # (nw, 32, 32), float64
            if c_reg is not None:
                regs = np.stack([st.vgpr[c_reg + r, w] for r in range(16)], axis=1).view(F32)   # (nw, 16, 64)
                C = np.empty_like(D)
                C[:, _II, _JJ] = regs
                D += C
            else:
                D += F64(c_const)
            out = D[:, _II, _JJ].astype(F32).view(U32)     # (nw, 16, 64)
            for r in range(16):
                st.vgpr[d_reg + r, w] = out[:, r]
        return run
    return factory


register("v_mfma_f32_32x32x2f32", _mfma("f32", 1))
register("v_mfma_f32_32x32x2_f32", _mfma("f32", 1))
register("v_mfma_f32_32x32x8f16", _mfma("f16", 4))
register("v_mfma_f32_32x32x8_f16", _mfma("f16", 4))
register("v_mfma_f32_32x32x4_xf32", _mfma("xf32", 2))


def _accvgpr(read):
    def factory(inst, K):
        f = inst.fields
        src, dst = f["src0"], f["vdst"]
        acc = K.accum_offset
        if read:                                           # v_accvgpr_read_b32 vD, aS
            s_reg, d_reg = src - 256 + acc, dst
        else:                                              # v_accvgpr_write_b32 aD, vS|const
            s_reg, d_reg = (src - 256 if src >= 256 else None), dst + acc
        from ..operands import vreader, write_v
        rd = vreader(src, inst.literal) if s_reg is None else None

        def run(st, w):
            m = st.exec_mask(w)
            v = st.vgpr[s_reg, w] if s_reg is not None else rd(st, w)
            write_v(st, w, d_reg, v, m)
        return run
    return factory


@register_op("v_accvgpr_mov_b32")
def _accvgpr_mov(inst, K):
    from ..operands import write_v
    s_reg, d_reg = inst.fields["src0"] - 256 + K.accum_offset, inst.fields["vdst"] + K.accum_offset

    def run(st, w):
        write_v(st, w, d_reg, st.vgpr[s_reg, w], st.exec_mask(w))
    return run


register("v_accvgpr_read_b32", _accvgpr(True))
register("v_accvgpr_write_b32", _accvgpr(False))
register("v_accvgpr_read", _accvgpr(True))
register("v_accvgpr_write", _accvgpr(False))
