"""RDNA3 WMMA (v_wmma_*_16x16x16_*): D = A·B + C on 16x16 matrices, wave32 and wave64.

Register layouts are AMD's (matrix instruction calculator, checked by tests/emu/test_wmma_layouts.py): A[i][k]
in lane i (and its replicas i+16, ... which must hold the same data; the emulator reads lanes 0-15), GPR k / per,
element k % per of that GPR (per = 2 for f16/bf16, 4 for iu8, 8 for iu4); B[k][j] the same with lane j; C/D
element [i][j] in GPR i / (wave / 16), lane 16 * (i % (wave / 16)) + j — as a full dword (f32/i32) or, for f16/
bf16 results, the low half (OP_SEL[2] = 0) or the high half (OP_SEL[2] = 1) with the other half kept.

NEG on float forms: NEG[0]/NEG_HI[0] negate the low/high halves of A's registers, NEG[1]/NEG_HI[1] B's, NEG[2]
subtracts C and NEG_HI[2] takes |C|.  On the integer forms NEG[0]/NEG[1] make A/B signed (unsigned otherwise)
and CLAMP saturates the i32 result.  Float products are exact (float64), summed in k order from +0, C added
last, and each result is rounded once to the destination format (hardware accumulates in an unspecified
order and may differ in the last bit); integer results wrap (or saturate with CLAMP).  Like MFMA, a WMMA
ignores EXEC: every lane's registers take part.  The compiled engine's handler (native/engine/ops_mfma.h
v_wmma, lowered by pyhip/emu/native/lower_mfma.py) computes the same, in the same order.
"""
from __future__ import annotations

import functools

import numpy as np

from ..operands import constant
from .registry import register

F32, F64, I64, U32, U64 = np.float32, np.float64, np.int64, np.uint32, np.uint64
F16, U16 = np.float16, np.uint16
# mnemonic → (input kind, output kind)
WMMA = {"v_wmma_f32_16x16x16_f16": ("f16", "f32"), "v_wmma_f32_16x16x16_bf16": ("bf16", "f32"),
        "v_wmma_f16_16x16x16_f16": ("f16", "f16"), "v_wmma_bf16_16x16x16_bf16": ("bf16", "bf16"),
        "v_wmma_i32_16x16x16_iu8": ("iu8", "i32"), "v_wmma_i32_16x16x16_iu4": ("iu4", "i32")}
_BITS = {"f16": 16, "bf16": 16, "iu8": 8, "iu4": 4}


@functools.lru_cache(maxsize=None)
def _cd_index(lanes: int):
    """For each (C/D register r, lane l): the element (i, j) it holds."""
    per = lanes // 16
    r, lane = np.meshgrid(np.arange(16 // per), np.arange(lanes), indexing="ij")
    return per * r + lane // 16, lane % 16


def _unpack(words, bits: int, signed: bool, kind: str, neg_lo: int = 0, neg_hi: int = 0):
    """(nw, nregs, 16) uint32 → (nw, 16, K) values (float64 or int64), element e of register g at k = g*per + e."""
    per = 32 // bits
    sh = (np.arange(per) * bits).astype(U32)
    raw = (words[..., None] >> sh) & U32((1 << bits) - 1)              # (nw, nregs, 16, per)
    raw = np.ascontiguousarray(raw.transpose(0, 2, 1, 3)).reshape(words.shape[0], 16, -1)
    if kind in ("iu8", "iu4"):
        v = raw.astype(I64)
        return np.where(v >= 1 << (bits - 1), v - (1 << bits), v) if signed else v
    if neg_lo or neg_hi:                                              # even k: low halves, odd k: high halves
        flip = np.zeros(raw.shape[-1], U32)
        flip[0::2] = 0x8000 if neg_lo else 0
        flip[1::2] = 0x8000 if neg_hi else 0
        raw = raw ^ flip
    if kind == "f16":
        return raw.astype(U16).view(F16).astype(F64)
    return (raw << U32(16)).view(F32).astype(F64)                      # bf16


def _to_bf16(x):
    u = x.astype(F32).view(U32).astype(U64)
    r = ((u + U64(0x7FFF) + ((u >> U64(16)) & U64(1))) >> U64(16)).astype(U32)
    return np.where(np.isnan(x), U32(0x7FC0), r & U32(0xFFFF))


def _wmma(kin: str, kout: str):
    bits = _BITS[kin]
    nab = 16 * bits // 32                       # registers per A / B operand

    def factory(inst, K):
        f = inst.fields
        a_reg, b_reg, c_code, d = f["src0"] - 256, f["src1"] - 256, f["src2"], f["vdst"]
        if a_reg < 0 or b_reg < 0:
            raise NotImplementedError("WMMA A and B must be VGPRs")
        integer = kin.startswith("iu")
        neg, neg_hi, clamp = f["neg"], f["neg_hi"], f["clamp"]
        half = kout in ("f16", "bf16")
        hi = (f["opsel"] >> 2 & 1) if half else 0
        cconst = None
        if c_code < 256:
            cconst = constant(c_code, inst.literal, "f16" if kout == "f16" else "b32")
            if cconst is None:
                raise NotImplementedError("WMMA C must be a VGPR or an inline constant")

        def run(st, w):
            with np.errstate(all="ignore"):          # NaN, infinities and overflow are results here
                _run(st, w)

        def _run(st, w):
            lanes = st.lanes
            ncd = 16 // (lanes // 16)
            A = _unpack(st.vgpr[a_reg:a_reg + nab, w][:, :, :16].transpose(1, 0, 2), bits, bool(neg & 1), kin,
                        0 if integer else neg & 1, 0 if integer else neg_hi & 1)
            Bt = _unpack(st.vgpr[b_reg:b_reg + nab, w][:, :, :16].transpose(1, 0, 2), bits, bool(neg & 2), kin,
                         0 if integer else neg >> 1 & 1, 0 if integer else neg_hi >> 1 & 1)
            nw = A.shape[0]
            ii, jj = _cd_index(lanes)
            if cconst is not None:
                craw = np.full((nw, ncd, lanes), cconst, U32)
            else:
                craw = st.vgpr[c_code - 256:c_code - 256 + ncd, w].transpose(1, 0, 2)
            if half:
                c16 = ((craw >> U32(16)) if hi else craw) & U32(0xFFFF)
                cv = c16.astype(U16).view(F16).astype(F64) if kout == "f16" else (c16 << U32(16)).view(F32).astype(F64)
            elif integer:
                cv = craw.view(np.int32).astype(I64)
            else:
                cv = craw.view(F32).astype(F64)
            C = np.zeros((nw, 16, 16), I64 if integer else F64)
            C[:, ii, jj] = cv
            if not integer:
                if neg_hi & 4:
                    C = np.abs(C)
                if neg & 4:
                    C = -C
            acc = np.zeros((nw, 16, 16), A.dtype)           # k in order from +0, then C (as ops_mfma.h)
            for k in range(A.shape[-1]):
                acc = acc + A[:, :, None, k] * Bt[:, None, :, k]
            D = acc + C
            out = D[:, ii, jj]                                      # (nw, ncd, lanes)
            if integer:
                if clamp:
                    out = np.clip(out, -2 ** 31, 2 ** 31 - 1)
                res = (out & 0xFFFFFFFF).astype(U32)
            elif kout == "f32":
                res = out.astype(F32).view(U32)
            else:
                bits16 = out.astype(F16).view(U16).astype(U32) if kout == "f16" else _to_bf16(out)
                old = st.vgpr[d:d + ncd, w].transpose(1, 0, 2)
                res = (old & U32(0xFFFF)) | (bits16 << U32(16)) if hi else (old & U32(0xFFFF0000)) | bits16
            st.vgpr[d:d + ncd, w] = res.transpose(1, 0, 2)
        return run
    return factory


for _name, (_kin, _kout) in WMMA.items():
    register(_name, _wmma(_kin, _kout))
