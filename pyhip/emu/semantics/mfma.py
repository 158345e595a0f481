"""Matrix fused multiply-add (MAI: v_mfma_*) for the single-block 32x32 and 16x16 shapes (f32, xf32, f16,
bf16, i8 inputs), plus v_accvgpr_read/write/mov.  Multi-block (_2b/_4b/4x4) and f64 shapes are not here.

Operand layouts (AMD matrix instruction calculator, one block of M x M): lane ``l`` of A holds row
``i = l % M`` and K-slice ``l // M`` (``kpl`` consecutive k values packed in its registers), B likewise
with the column ``j = l % M``.  32x32: D/C are 16 registers per lane with ``D[i][j]`` in register
``4*(i//8) + i%4`` of lane ``j + 32*((i//4) % 2)``; 16x16: 4 registers, ``D[i][j]`` in register ``i % 4``
of lane ``j + 16*(i//4)``.  i8 products accumulate exactly in int32 (wrapping).  Products of the f32/f16 inputs are exact in float64 and the sum is rounded
to f32 once per instruction (the hardware's internal accumulation order is unspecified; results agree
to the last bit or two).  xf32 inputs are rounded to 10 mantissa bits (nearest even) first.  MFMA
ignores EXEC (every lane's registers take part), as on hardware.
"""
from __future__ import annotations

import numpy as np

from . import op as register_op, register

U16, U32, F16, F32, F64 = np.uint16, np.uint32, np.float16, np.float32, np.float64

_LANE = np.arange(64)


def _out_layout(M):
    """(rows, cols) index arrays (regs, 64): the output element each register of each lane holds."""
    if M == 32:
        reg = np.arange(16)
        ii = 8 * (reg[:, None] // 4) + 4 * (_LANE[None, :] // 32) + (reg[:, None] % 4)
        return ii, np.broadcast_to(_LANE[None, :] % 32, (16, 64))
    reg = np.arange(4)                                     # 16x16: lane = j + 16*(i//4), register i % 4
    ii = 4 * (_LANE[None, :] // 16) + reg[:, None]
    return ii, np.broadcast_to(_LANE[None, :] % 16, (4, 64))


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
    if kind in ("f16", "bf16"):
        v = np.ascontiguousarray(np.stack([st.vgpr[reg + i, w] for i in range(2)], axis=-1))
        if kind == "f16":
            return v.view(F16).astype(F64)               # (nw, 64, 4): element e = half e of the pair
        return (v.view(U16).astype(U32) << U32(16)).view(F32).astype(F64)
    if kind == "i8":
        v = np.ascontiguousarray(st.vgpr[reg, w])[:, :, None]
        return v.view(np.int8).astype(np.int64)          # (nw, 64, 4)
    raise NotImplementedError(kind)


def _mfma(kind, M, kpl):
    """One block, M x M output, K = (64 // M) * kpl: lane group g = lane // M holds k in [g*kpl, (g+1)*kpl)."""
    groups = 64 // M
    K = groups * kpl
    i, k = np.meshgrid(np.arange(M), np.arange(K), indexing="ij")
    a_lane, a_item = i + M * (k // kpl), k % kpl                      # A[i, k]
    k2, j2 = np.meshgrid(np.arange(K), np.arange(M), indexing="ij")
    b_lane, b_item = j2 + M * (k2 // kpl), k2 % kpl                   # B[k, j]
    II, JJ = _out_layout(M)
    nregs = II.shape[0]
    integer = kind == "i8"

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
            cval = constant(c_code, inst.literal, "b32" if integer else "f32")
            if cval is None:
                raise NotImplementedError("MFMA with a scalar register C operand")
            c_bits = np.array([cval & 0xFFFFFFFF], U32)

        def run(st, w):
            av, bv = _inputs(st, w, a_reg, kind), _inputs(st, w, b_reg, kind)
            A = av[:, a_lane, a_item]                      # (nw, M, K)
            B = bv[:, b_lane, b_item]                      # (nw, K, M)
            D = np.matmul(A, B)                            # float64 (exact products), or int64
            if c_reg is not None:
                regs = np.stack([st.vgpr[c_reg + r, w] for r in range(nregs)], axis=1)    # (nw, regs, 64)
                C = np.empty_like(D)
                C[:, II, JJ] = regs.view(np.int32) if integer else regs.view(F32)
                D += C
            else:
                D += c_bits.view(np.int32)[0] if integer else F64(c_bits.view(F32)[0])
            out = D[:, II, JJ]
            out = (out & 0xFFFFFFFF).astype(U32) if integer else out.astype(F32).view(U32)
            for r in range(nregs):
                st.vgpr[d_reg + r, w] = out[:, r]
        return run
    return factory


_SHAPES = {
    # name: (input kind, M, values per lane)
    "v_mfma_f32_32x32x2f32": ("f32", 32, 1), "v_mfma_f32_32x32x2_f32": ("f32", 32, 1),
    "v_mfma_f32_16x16x4f32": ("f32", 16, 1), "v_mfma_f32_16x16x4_f32": ("f32", 16, 1),
    "v_mfma_f32_32x32x8f16": ("f16", 32, 4), "v_mfma_f32_32x32x8_f16": ("f16", 32, 4),
    "v_mfma_f32_16x16x16f16": ("f16", 16, 4), "v_mfma_f32_16x16x16_f16": ("f16", 16, 4),
    "v_mfma_f32_32x32x8bf16_1k": ("bf16", 32, 4), "v_mfma_f32_32x32x8_bf16": ("bf16", 32, 4),
    "v_mfma_f32_16x16x16bf16_1k": ("bf16", 16, 4), "v_mfma_f32_16x16x16_bf16": ("bf16", 16, 4),
    "v_mfma_f32_32x32x4_xf32": ("xf32", 32, 2), "v_mfma_f32_16x16x8_xf32": ("xf32", 16, 2),
    "v_mfma_i32_32x32x8i8": ("i8", 32, 4), "v_mfma_i32_16x16x16i8": ("i8", 16, 4),
}
for _name, (_kind, _m, _kpl) in _SHAPES.items():
    register(_name, _mfma(_kind, _m, _kpl))

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
