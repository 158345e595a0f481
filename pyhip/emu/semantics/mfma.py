"""Matrix fused multiply-add (MAI: v_mfma_*): single-block 32x32 and 16x16 shapes and the multi-block
(_2b/_4b/_16b, 4x4) ones, f32, xf32, f16, bf16 (1k and the older two-per-register), i8, fp8/bf8 (gfx942
FNUZ formats) and f64 (16x16x4) inputs, plus v_accvgpr_read/write/mov.  Not here: v_mfma_f64_4x4x4 and the
sparse v_smfmac_*.

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

from .. import fp
from .registry import op as register_op, register

U16, U32, F16, F32, F64 = np.uint16, np.uint32, np.float16, np.float32, np.float64

_LANE = np.arange(64)


def _out_layout(M, blocks):
    """(register, row, col, block) index arrays (regs, 64): the output element each register of each lane
    holds.  32x32: 16 registers per block; 16x16: 4 per block; 4x4 (16 blocks): register i of lane
    4 * block + j holds D[block][i][j]."""
    if M == 4:
        reg = np.arange(4)[:, None]
        return (np.broadcast_to(reg, (4, 64)), np.broadcast_to(_LANE[None, :] % 4, (4, 64)),
                np.broadcast_to(_LANE[None, :] // 4, (4, 64)))
    per = 16 if M == 32 else 4
    reg = np.arange(per * blocks)[:, None]
    r, blk = reg % per, reg // per
    if M == 32:
        ii = 8 * (r // 4) + 4 * (_LANE[None, :] // 32) + (r % 4)
    else:                                                  # 16x16: lane = j + 16*(i//4), register i % 4
        ii = 4 * (_LANE[None, :] // 16) + r
    shape = (per * blocks, 64)
    return np.broadcast_to(ii, shape), np.broadcast_to(_LANE[None, :] % M, shape), np.broadcast_to(blk, shape)


def _xf32(x):
    """f32 → xf32 (8-bit exponent, 10-bit mantissa), round to nearest even, kept as f32."""
    u = x.view(U32).astype(np.uint64)
    rounded = (u + np.uint64(0xFFF) + ((u >> np.uint64(13)) & np.uint64(1))) & np.uint64(0xFFFFE000)
    out = rounded.astype(U32)
    keep = ~np.isfinite(x)
    out[keep] = x.view(U32)[keep]
    return out.view(F32)


def _fp8_table(mant_bits, bias):
    """The 256 values of an FNUZ 8-bit float (gfx942: no infinities, no -0; 0x80 is the NaN)."""
    exp_bits = 7 - mant_bits
    out = np.empty(256, F64)
    for v in range(256):
        s, e, m = v >> 7, (v >> mant_bits) & ((1 << exp_bits) - 1), v & ((1 << mant_bits) - 1)
        mag = m * 2.0 ** (1 - bias - mant_bits) if e == 0 else (1 + m / (1 << mant_bits)) * 2.0 ** (e - bias)
        out[v] = -mag if s else mag
    out[0x80] = np.nan
    return out


FP8_VALUES = _fp8_table(3, 8)         # E4M3FNUZ
BF8_VALUES = _fp8_table(2, 16)        # E5M2FNUZ
_BITS = {"f32": 32, "xf32": 32, "f16": 16, "bf16": 16, "i8": 8, "fp8": 8, "bf8": 8, "f64": 64}


def _operand(code, acc, literal):
    """A / B source: a VGPR/AGPR number, or a reader of a scalar or constant (the same dword in every
    register of the operand and every lane)."""
    if code >= 256:
        return code - 256 + acc
    from ..operands import vreader
    return vreader(code, literal)


def _inputs(st, w, reg, kind, kpl):
    """(nw, 64, kpl) input values of one operand (float64, or int64 for i8)."""
    nregs = max(1, kpl * _BITS[kind] // 32)
    if callable(reg):
        one = np.ascontiguousarray(reg(st, w))
        v = np.ascontiguousarray(np.stack([one] * nregs, axis=-1))
    else:
        v = np.ascontiguousarray(np.stack([st.vgpr[reg + i, w] for i in range(nregs)], axis=-1))
    if kind == "f32":
        return v.view(F32).astype(F64)
    if kind == "f64":
        return v.view(F64)
    if kind == "xf32":
        return _xf32(v.view(F32)).astype(F64)
    if kind == "f16":
        return v.view(F16).astype(F64)                   # element e = half e of the register group
    if kind == "bf16":
        return (v.view(U16).astype(U32) << U32(16)).view(F32).astype(F64)
    if kind == "i8":
        return v.view(np.int8).astype(np.int64)
    if kind in ("fp8", "bf8"):
        return (FP8_VALUES if kind == "fp8" else BF8_VALUES)[v.view(np.uint8)]
    raise NotImplementedError(kind)


def _sparse_a(st, w, reg, idx_reg, kind, kpl, sel_bits):
    """v_smfmac A operand: per lane ``kpl`` dense k values from ``kpl // 2`` stored ones, two per group of four
    k; the group's 4-bit index nibble (index1 << 2 | index0) in the compression register names their slots."""
    comp = _inputs(st, w, reg, kind, kpl // 2)                    # (nw, 64, kpl / 2)
    idx = st.vgpr[idx_reg, w] >> U32(sel_bits)
    dense = np.zeros(comp.shape[:2] + (kpl,), comp.dtype)
    rows, lanes = np.indices(comp.shape[:2])
    for g in range(kpl // 4):
        nib = (idx >> U32(4 * g)) & U32(0xF)
        for s, slot in enumerate((nib & U32(3), nib >> U32(2))):
            dense[rows, lanes, 4 * g + slot.astype(np.int64)] = comp[:, :, 2 * g + s]
    return dense


def _shape_tables(kind, M, kpl, blocks):
    """(K, a_lane, a_item, II, JJ, BB) of a shape: A[b, i, k] is item ``a_item`` of lane ``a_lane`` (B likewise
    with j), and register r of lane l of D holds D[BB][II][JJ] (arrays (registers, 64))."""
    groups = 64 // M
    f64 = kind == "f64"
    if f64 and M == 4:
        # v_mfma_f64_4x4x4_4b: lane = 16 k + 4 block + i for A (j for B); D[b][i][j] in lane 16 i + 4 b + j
        K = 4
        i, k, b = np.meshgrid(np.arange(4), np.arange(K), np.arange(blocks), indexing="ij")
        a_lane, a_item = 16 * k + 4 * b + i, np.zeros_like(k)
        lane = np.arange(64)[None, :]
        II, JJ, BB = lane // 16, lane % 4, (lane % 16) // 4
    else:
        if blocks not in (1, groups):
            raise ValueError("mixed block / K-group MFMA layouts are not described")
        K = kpl * (groups if blocks == 1 else 1)
        i, k, b = np.meshgrid(np.arange(M), np.arange(K), np.arange(blocks), indexing="ij")
        a_lane = i + M * (k // kpl if blocks == 1 else b)
        a_item = k % kpl                                               # A[b, i, k] → (lane, item)
        II, JJ, BB = _out_layout(M, blocks)
        if f64:                                    # f64 16x16: D[i][j] in register pair i // 4, lane 16 (i % 4) + j
            r, lane = np.arange(4)[:, None], np.arange(64)[None, :]
            II, JJ, BB = (np.broadcast_to(x, (4, 64)) for x in (4 * r + lane // 16, lane % 16, 0 * lane))
    return K, a_lane, a_item, II, JJ, BB


class Plan:
    """Everything one MFMA instruction computes with, from its shape and fields (the numpy factory below and
    the native engine's lowering both use it)."""

    def __init__(self, inst, K_, kind, M, kpl, blocks=1, kind_b=None, sparse=False):
        kind_b = kind_b or kind
        self.kind, self.kind_b, self.M, self.kpl, self.blocks, self.sparse = kind, kind_b, M, kpl, blocks, sparse
        f64 = self.f64 = kind == "f64"
        self.K, self.a_lane, self.a_item, self.II, self.JJ, self.BB = _shape_tables(kind, M, kpl, blocks)
        self.nregs = self.II.shape[0]
        self.integer = kind == "i8"
        self.width = 2 if f64 else 1
        f = inst.fields
        cbsz, abid = f.get("cbsz", 0), f.get("abid", 0)
        blgp = 0 if f64 else f.get("blgp", 0)             # f64 MFMA: those bits are NEG
        self.sel_bits = self.idx_reg = None
        if sparse:
            # CBSZ/ABID pick the compression index set: ABID's set of kpl bits unless CBSZ is set (the first)
            self.sel_bits = 0 if cbsz else (abid % (32 // kpl)) * kpl
            cbsz = abid = 0
            if f["src2"] < 256:
                raise NotImplementedError("v_smfmac with a non-VGPR compression index operand")
        if f64 and M == 4 and cbsz:
            raise NotImplementedError("CBSZ/ABID on v_mfma_f64_4x4x4")
        if cbsz and (blocks == 1 or (1 << cbsz) > blocks or abid >= (1 << cbsz)):
            raise NotImplementedError(f"MFMA CBSZ={cbsz} ABID={abid} for a {blocks}-block shape")
        lane = np.arange(64)
        # A broadcast: block b reads the A rows of block ABID of its group of 2^CBSZ blocks
        self.a_src = (((lane // M) >> cbsz << cbsz) + abid) * M + lane % M if cbsz else None
        # B lane-group pattern: broadcast a half or a quarter of the lanes, or rotate by 16
        self.b_src = {0: None, 1: lane % 32, 2: 32 + lane % 32, 3: (lane + 16) % 64}.get(blgp, 16 * (blgp - 4) + lane % 16)
        self.negs = f.get("neg", 0) if f64 else 0
        acc = K_.accum_offset if f.get("acc_cd") else 0
        src_acc = f.get("opsel_hi", 0)                     # MAI: bit 0 / bit 1 = A / B in AGPRs
        self.a_reg = _operand(f["src0"], K_.accum_offset if src_acc & 1 else 0, inst.literal)
        self.b_reg = _operand(f["src1"], K_.accum_offset if src_acc & 2 else 0, inst.literal)
        self.d_reg = f["vdst"] + acc
        c_code = f["src2"]
        self.c_reg = c_code - 256 + acc if c_code >= 256 else None
        if sparse:                                         # SrcC holds the indices; D accumulates in place
            self.idx_reg, self.c_reg = c_code - 256, self.d_reg
        self.c_const = None
        if self.c_reg is None:
            from ..operands import constant
            cval = constant(c_code, inst.literal, "f64" if f64 else ("b32" if self.integer else "f32"))
            if cval is None:
                raise NotImplementedError("MFMA with a scalar register C operand")
            self.c_const = (np.array([cval], np.uint64).view(F64)[0] if f64 else
                            np.array([cval & 0xFFFFFFFF], U32).view(np.int32 if self.integer else F32)[0])


def _mfma(kind, M, kpl, blocks=1, kind_b=None, sparse=False):
    """``blocks`` independent M x M products; the 64 lanes form 64 // M groups of M lanes: with one block
    the groups hold consecutive K slices of ``kpl`` values (K = groups * kpl), with several blocks each
    group is one block (K = kpl)."""
    _shape_tables(kind, M, kpl, blocks)                # an undescribed layout fails at registration

    def factory(inst, K_):
        p = Plan(inst, K_, kind, M, kpl, blocks, kind_b, sparse)
        kind_b_, integer, f64, nregs, width = p.kind_b, p.integer, p.f64, p.nregs, p.width
        a_lane, a_item, II, JJ, BB, K = p.a_lane, p.a_item, p.II, p.JJ, p.BB, p.K
        a_src, b_src, negs, a_reg, b_reg, d_reg, c_reg = p.a_src, p.b_src, p.negs, p.a_reg, p.b_reg, p.d_reg, p.c_reg
        idx_reg, sel_bits, c_const = p.idx_reg, p.sel_bits, p.c_const

        def run(st, w):
            av = _sparse_a(st, w, a_reg, idx_reg, kind, kpl, sel_bits) if sparse else _inputs(st, w, a_reg, kind, kpl)
            bv = _inputs(st, w, b_reg, kind_b_, kpl)
            if a_src is not None:
                av = av[:, a_src]
            if b_src is not None:
                bv = bv[:, b_src]
            A = av[:, a_lane, a_item]                      # (nw, M, K, blocks)
            B = bv[:, a_lane, a_item]                      # B[b, j, k] uses the same lane pattern as A
            if negs & 1:
                A = -A
            if negs & 2:
                B = -B
            nw = A.shape[0]
            if c_reg is not None:
                regs = np.stack([st.vgpr[c_reg + r, w] for r in range(nregs * width)], axis=1)   # (nw, R, 64)
                if f64:
                    regs = np.ascontiguousarray(regs.reshape(nw, nregs, 2, 64).transpose(0, 1, 3, 2)).view(F64)[..., 0]
                C = np.zeros((nw, M, M, blocks), np.int64 if integer else F64)
                C[:, II, JJ, BB] = regs.view(np.int32) if integer else (regs if f64 else regs.view(F32))
            else:
                C = np.full((nw, M, M, blocks), c_const, np.int64 if integer else F64)
            if negs & 4:
                C = -C
            if f64:                                        # f64: one FMA per k, in k order
                D = C
                for kk in range(K):
                    D = fp.fma64(A[:, :, kk, :][:, :, None, :], B[:, :, kk, :][:, None, :, :], D)
            else:                                          # exact products, one f32 rounding
                D = np.einsum("nikb,njkb->nijb", A, B) + C
            out = D[:, II, JJ, BB]                         # (nw, R, 64)
            if integer:
                out = (out & 0xFFFFFFFF).astype(U32)
            elif f64:
                out = np.ascontiguousarray(out).view(U32).reshape(nw, nregs, 64, 2).transpose(0, 1, 3, 2).reshape(nw, nregs * 2, 64)
            else:
                out = out.astype(F32).view(U32)
            for r in range(nregs * width):
                st.vgpr[d_reg + r, w] = out[:, r]
        return run
    factory.shape = (kind, M, kpl, blocks, kind_b, sparse)     # read by the native engine's lowering
    return factory


_SHAPES = {
    # name: (input kind, M, values per lane, blocks)
    "v_mfma_f32_32x32x2f32": ("f32", 32, 1, 1), "v_mfma_f32_32x32x2_f32": ("f32", 32, 1, 1),
    "v_mfma_f32_16x16x4f32": ("f32", 16, 1, 1), "v_mfma_f32_16x16x4_f32": ("f32", 16, 1, 1),
    "v_mfma_f32_32x32x1f32": ("f32", 32, 1, 2), "v_mfma_f32_32x32x1_2b_f32": ("f32", 32, 1, 2),
    "v_mfma_f32_16x16x1f32": ("f32", 16, 1, 4), "v_mfma_f32_16x16x1_4b_f32": ("f32", 16, 1, 4),
    "v_mfma_f32_4x4x1f32": ("f32", 4, 1, 16), "v_mfma_f32_4x4x1_16b_f32": ("f32", 4, 1, 16),
    "v_mfma_f32_32x32x8f16": ("f16", 32, 4, 1), "v_mfma_f32_32x32x8_f16": ("f16", 32, 4, 1),
    "v_mfma_f32_16x16x16f16": ("f16", 16, 4, 1), "v_mfma_f32_16x16x16_f16": ("f16", 16, 4, 1),
    "v_mfma_f32_32x32x4f16": ("f16", 32, 4, 2), "v_mfma_f32_32x32x4_2b_f16": ("f16", 32, 4, 2),
    "v_mfma_f32_16x16x4f16": ("f16", 16, 4, 4), "v_mfma_f32_16x16x4_4b_f16": ("f16", 16, 4, 4),
    "v_mfma_f32_4x4x4f16": ("f16", 4, 4, 16), "v_mfma_f32_4x4x4_16b_f16": ("f16", 4, 4, 16),
    "v_mfma_f32_32x32x8bf16_1k": ("bf16", 32, 4, 1), "v_mfma_f32_32x32x8_bf16": ("bf16", 32, 4, 1),
    "v_mfma_f32_16x16x16bf16_1k": ("bf16", 16, 4, 1), "v_mfma_f32_16x16x16_bf16": ("bf16", 16, 4, 1),
    "v_mfma_f32_32x32x4bf16_1k": ("bf16", 32, 4, 2), "v_mfma_f32_32x32x4_2b_bf16": ("bf16", 32, 4, 2),
    "v_mfma_f32_16x16x4bf16_1k": ("bf16", 16, 4, 4), "v_mfma_f32_16x16x4_4b_bf16": ("bf16", 16, 4, 4),
    "v_mfma_f32_4x4x4bf16_1k": ("bf16", 4, 4, 16), "v_mfma_f32_4x4x4_16b_bf16": ("bf16", 4, 4, 16),
    "v_mfma_f32_32x32x4bf16": ("bf16", 32, 2, 1), "v_mfma_f32_16x16x8bf16": ("bf16", 16, 2, 1),
    "v_mfma_f32_32x32x2bf16": ("bf16", 32, 2, 2), "v_mfma_f32_16x16x2bf16": ("bf16", 16, 2, 4),
    "v_mfma_f32_4x4x2bf16": ("bf16", 4, 2, 16),
    "v_mfma_f32_32x32x4_xf32": ("xf32", 32, 2, 1), "v_mfma_f32_16x16x8_xf32": ("xf32", 16, 2, 1),
    "v_mfma_i32_32x32x8i8": ("i8", 32, 4, 1), "v_mfma_i32_16x16x16i8": ("i8", 16, 4, 1),
    "v_mfma_i32_32x32x16_i8": ("i8", 32, 8, 1), "v_mfma_i32_16x16x32_i8": ("i8", 16, 8, 1),
    "v_mfma_i32_32x32x4i8": ("i8", 32, 4, 2), "v_mfma_i32_32x32x4_2b_i8": ("i8", 32, 4, 2),
    "v_mfma_i32_16x16x4i8": ("i8", 16, 4, 4), "v_mfma_i32_16x16x4_4b_i8": ("i8", 16, 4, 4),
    "v_mfma_i32_4x4x4i8": ("i8", 4, 4, 16), "v_mfma_i32_4x4x4_16b_i8": ("i8", 4, 4, 16),
    "v_mfma_f64_16x16x4f64": ("f64", 16, 1, 1), "v_mfma_f64_16x16x4_f64": ("f64", 16, 1, 1),
    "v_mfma_f64_4x4x4f64": ("f64", 4, 1, 4), "v_mfma_f64_4x4x4_4b_f64": ("f64", 4, 1, 4),
}
for _name, (_kind, _m, _kpl, _blocks) in _SHAPES.items():
    register(_name, _mfma(_kind, _m, _kpl, _blocks))
for _a in ("fp8", "bf8"):
    for _b in ("fp8", "bf8"):
        register(f"v_mfma_f32_16x16x32_{_a}_{_b}", _mfma(_a, 16, 8, 1, _b))
        register(f"v_mfma_f32_32x32x16_{_a}_{_b}", _mfma(_a, 32, 8, 1, _b))
        # 4:2 sparse A (gfx942): per lane 8 (16-bit) or 16 (8-bit) dense k from half as many stored values
        register(f"v_smfmac_f32_16x16x64_{_a}_{_b}", _mfma(_a, 16, 16, 1, _b, sparse=True))
        register(f"v_smfmac_f32_32x32x32_{_a}_{_b}", _mfma(_a, 32, 16, 1, _b, sparse=True))
for _k in ("f16", "bf16"):
    register(f"v_smfmac_f32_16x16x32_{_k}", _mfma(_k, 16, 8, sparse=True))
    register(f"v_smfmac_f32_32x32x16_{_k}", _mfma(_k, 32, 8, sparse=True))
register("v_smfmac_i32_16x16x64_i8", _mfma("i8", 16, 16, sparse=True))
register("v_smfmac_i32_32x32x32_i8", _mfma("i8", 32, 16, sparse=True))


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
