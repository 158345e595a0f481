"""Packed 16-bit math (VOP3P v_pk_*), dot products (v_dot*, v_dot*c), mixed-precision FMA (v_fma_mix*),
and the VOP2 ops that accumulate into their destination (v_mac_f16, v_madak/madmk_f16, v_pk_fmac_f16).

VOP3P: for each source i, OP_SEL[i] picks the half feeding the low lane of the result and OP_SEL_HI[i] the
half feeding the high lane; NEG/NEG_HI negate the f16 halves.  Inline constants hold their value in the low
half only (GFX9 does not replicate them; compilers use OP_SEL_HI=0 to reuse the low half)."""
from __future__ import annotations

import numpy as np

from .. import fp
from ..operands import vreader, write_v
from . import op, register
from .common import F32, F64, I32, I64, U32, dst, readers, srcs, store32
from .valu import mad

F16, U16, I16 = np.float16, np.uint16, np.int16
_HALF = {"f16": F16, "u16": U16, "i16": I16}


def _kind_reader(code, lit, kind):
    return vreader(code, lit, "f16" if kind == "f16" else "b32")


def _halves(inst, n, kinds):
    """Per source: (lo, hi) readers → uint16 arrays after OP_SEL/OP_SEL_HI and NEG/NEG_HI."""
    f = inst.fields
    codes = srcs(inst)
    opsel, opsel_hi = f["opsel"], f["opsel_hi"] | (f["opsel_hi2"] << 2)
    out = []
    for i in range(n):
        rd = _kind_reader(codes[i], inst.literal, kinds[i])
        neg_lo = kinds[i] == "f16" and f["neg"] >> i & 1
        neg_hi = kinds[i] == "f16" and f["neg_hi"] >> i & 1

        def half(sel, neg, rd=rd):
            def g(st, w):
                v = rd(st, w)
                v = ((v >> U32(16)) if sel else v) & U32(0xFFFF)
                if neg:
                    v = v ^ U32(0x8000)
                return v.astype(U16)
            return g
        out.append((half(opsel >> i & 1, neg_lo), half(opsel_hi >> i & 1, neg_hi)))
    return out


def pk16(kinds_in, kind_out, fn):
    n = len(kinds_in)

    def factory(inst, K):
        hv = _halves(inst, n, kinds_in)
        clamp = inst.fields.get("clamp", 0) and kind_out == "f16"
        d = dst(inst)
        ot = _HALF[kind_out]

        def lane(args):
            r = fn(*(a.view(_HALF[k]) for a, k in zip(args, kinds_in)))
            r = np.asarray(r).astype(ot)
            if clamp:
                r = np.where(np.isnan(r), ot(0), np.clip(r, 0, 1)).astype(ot)
            return r.view(U16).astype(U32)

        def run(st, w):
            m = st.exec_mask(w)
            with np.errstate(all="ignore"):
                lo = lane([h[0](st, w) for h in hv])
                hi = lane([h[1](st, w) for h in hv])
            write_v(st, w, d, lo | (hi << U32(16)), m)
        return run
    return factory


def _h(fn):
    return lambda *a: fn(*(x.astype(F64) for x in a)).astype(F16)


for _name, _kinds, _out, _fn in (
    ("v_pk_add_f16", ("f16", "f16"), "f16", _h(lambda a, b: a + b)),
    ("v_pk_mul_f16", ("f16", "f16"), "f16", _h(lambda a, b: a * b)),
    ("v_pk_fma_f16", ("f16", "f16", "f16"), "f16", _h(lambda a, b, c: a * b + c)),
    ("v_pk_max_f16", ("f16", "f16"), "f16", fp.fmax),
    ("v_pk_min_f16", ("f16", "f16"), "f16", fp.fmin),
    ("v_pk_add_u16", ("u16", "u16"), "u16", lambda a, b: a + b),
    ("v_pk_add_i16", ("i16", "i16"), "i16", lambda a, b: a + b),
    ("v_pk_sub_u16", ("u16", "u16"), "u16", lambda a, b: a - b),
    ("v_pk_sub_i16", ("i16", "i16"), "i16", lambda a, b: a - b),
    ("v_pk_mul_lo_u16", ("u16", "u16"), "u16", lambda a, b: a * b),
    ("v_pk_lshlrev_b16", ("u16", "u16"), "u16", lambda a, b: b << (a & U16(15))),
    ("v_pk_lshrrev_b16", ("u16", "u16"), "u16", lambda a, b: b >> (a & U16(15))),
    ("v_pk_ashrrev_i16", ("u16", "i16"), "i16", lambda a, b: b >> (a & U16(15)).astype(I16)),
    ("v_pk_max_u16", ("u16", "u16"), "u16", np.maximum),
    ("v_pk_min_u16", ("u16", "u16"), "u16", np.minimum),
    ("v_pk_max_i16", ("i16", "i16"), "i16", np.maximum),
    ("v_pk_min_i16", ("i16", "i16"), "i16", np.minimum),
    ("v_pk_mad_u16", ("u16", "u16", "u16"), "u16", lambda a, b, c: a * b + c),
    ("v_pk_mad_i16", ("i16", "i16", "i16"), "i16", lambda a, b, c: a * b + c),
):
    register(_name, pk16(_kinds, _out, _fn))


# ---- dot products -----------------------------------------------------------------------------------------------
def _elems(x, bits, signed):
    """The 32 / ``bits`` packed integer elements of x, as int64 arrays."""
    n = 32 // bits
    out = []
    for i in range(n):
        v = ((x >> U32(bits * i)) & U32((1 << bits) - 1)).astype(I64)
        if signed:
            v = np.where(v >= 1 << (bits - 1), v - (1 << bits), v)
        out.append(v)
    return out


def _idot(bits, signed):
    def fn(a, b, c):
        acc = (c.view(I32) if signed else c).astype(I64)
        for x, y in zip(_elems(a, bits, signed), _elems(b, bits, signed)):
            acc = acc + x * y
        return (acc & 0xFFFFFFFF).astype(U32)
    return fn


def _fdot2(a, b, c):
    """f16 pairs: products exact in float64, summed with the f32 accumulator, one rounding to f32."""
    ah = [((a >> U32(s)) & U32(0xFFFF)).astype(U16).view(F16).astype(F64) for s in (0, 16)]
    bh = [((b >> U32(s)) & U32(0xFFFF)).astype(U16).view(F16).astype(F64) for s in (0, 16)]
    return (ah[0] * bh[0] + ah[1] * bh[1] + c.view(F32).astype(F64)).astype(F32).view(U32)


def _dot_factory(fn, accumulate_dst, float_neg=False):
    """VOP3P v_dot*: D = dot(S0, S1) + S2; VOP2 v_dot*c: D = dot(S0, S1) + D."""
    def factory(inst, K):
        rds = readers(inst, 2 if accumulate_dst else 3)
        d = dst(inst)
        f = inst.fields
        negs = (f.get("neg", 0), f.get("neg_hi", 0)) if inst.encoding == "VOP3P" and float_neg else (0, 0)

        def run(st, w):
            m = st.exec_mask(w)
            a, b = rds[0](st, w), rds[1](st, w)
            c = st.vgpr[d, w] if accumulate_dst else rds[2](st, w)
            if negs[0] or negs[1]:
                a, b, c = (_neg_halves(x, negs[0] >> i & 1, negs[1] >> i & 1) for i, x in enumerate((a, b, c)))
            with np.errstate(all="ignore"):
                r = fn(a, b, c)
            store32(inst, st, w, r, m)
        return run
    return factory


def _neg_halves(x, lo, hi):
    return x ^ U32((0x8000 if lo else 0) | (0x80000000 if hi else 0))


register("v_dot2_f32_f16", _dot_factory(_fdot2, False, True))
register("v_dot2c_f32_f16", _dot_factory(_fdot2, True))
for _n, _bits, _signed in (("v_dot2_i32_i16", 16, True), ("v_dot2_u32_u16", 16, False), ("v_dot4_i32_i8", 8, True),
                           ("v_dot4_u32_u8", 8, False), ("v_dot8_i32_i4", 4, True), ("v_dot8_u32_u4", 4, False)):
    register(_n, _dot_factory(_idot(_bits, _signed), False))
for _n, _bits in (("v_dot2c_i32_i16", 16), ("v_dot4c_i32_i8", 8), ("v_dot8c_i32_i4", 4)):
    register(_n, _dot_factory(_idot(_bits, True), True))


# ---- mixed precision FMA -------------------------------------------------------------------------------------------
@op("v_fma_mix_f32", "v_fma_mixlo_f16", "v_fma_mixhi_f16", "v_mad_mix_f32", "v_mad_mixlo_f16", "v_mad_mixhi_f16")
def _fma_mix(inst, K):
    """Each source is f32, or (OP_SEL_HI[i] set) the f16 half OP_SEL[i] picks; NEG negates and NEG_HI takes the
    absolute value; the fused result is f32, or rounded to f16 into the low/high half (other half kept)."""
    f = inst.fields
    codes = srcs(inst)
    opsel, opsel_hi = f["opsel"], f["opsel_hi"] | (f["opsel_hi2"] << 2)
    rds = []
    for i in range(3):
        is16 = opsel_hi >> i & 1
        rds.append((vreader(codes[i], inst.literal, "f16" if is16 else "f32"), is16, opsel >> i & 1,
                    f["neg_hi"] >> i & 1, f["neg"] >> i & 1))
    out16 = "mixlo" in inst.name or "mixhi" in inst.name
    hi = "mixhi" in inst.name
    clamp = f.get("clamp", 0)
    d = dst(inst)

    def value(st, w, rd, is16, sel, absf, negf):
        v = rd(st, w)
        if is16:
            x = (((v >> U32(16)) if sel else v) & U32(0xFFFF)).astype(U16).view(F16).astype(F64)
        else:
            x = v.view(F32).astype(F64)
        if absf:
            x = np.abs(x)
        return -x if negf else x

    def run(st, w):
        m = st.exec_mask(w)
        with np.errstate(all="ignore"):
            a, b, c = (value(st, w, *r) for r in rds)
            r = _fma_nudged(a, b, c)
            if out16:
                res = r.astype(F16)
                if clamp:
                    res = np.where(np.isnan(res), F16(0), np.clip(res, 0, 1)).astype(F16)
                bits = res.view(U16).astype(U32)
                old = st.vgpr[d, w]
                val = (old & U32(0xFFFF)) | (bits << U32(16)) if hi else (old & U32(0xFFFF0000)) | bits
            else:
                res = r.astype(F32)
                if clamp:
                    res = np.where(np.isnan(res), F32(0), np.clip(res, 0, 1)).astype(F32)
                val = res.view(U32)
        write_v(st, w, d, val, m)
    return run


def _fma_nudged(a, b, c):
    """fma of f32/f16 values (float64 arrays) as a float64 that rounds to f32 or f16 like the exact result:
    the sum as a float64 pair (TwoSum), then moved one float64 ulp towards the error term."""
    p = a * b                                     # f32 x f32 products are exact in float64
    s = p + c
    bb = s - p
    err = (p - (s - bb)) + (c - bb)               # s + err == p + c exactly
    # nudge s by the sign of the error so the single rounding to f16 sees which side the true value is on
    return np.where(err == 0, s, np.nextafter(s, np.where(err > 0, np.inf, -np.inf)))


# ---- VOP2 accumulate-into-destination ------------------------------------------------------------------------------
_mad16 = mad(F16)


@op("v_mac_f16", "v_madak_f16", "v_madmk_f16")
def _mac16(inst, K):
    rds = readers(inst, 2, is_float=True, kinds=["f16", "f16"])
    d = dst(inst)
    kind = inst.name
    k = np.array([inst.literal or 0], U32).astype(U16).view(F16)[0] if kind != "v_mac_f16" else None

    def run(st, w):
        m = st.exec_mask(w)
        a = (rds[0](st, w) & U32(0xFFFF)).astype(U16).view(F16).astype(F64)
        b = (rds[1](st, w) & U32(0xFFFF)).astype(U16).view(F16).astype(F64)
        with np.errstate(all="ignore"):
            if kind == "v_mac_f16":
                r = _mad16(a, b, (st.vgpr[d, w] & U32(0xFFFF)).astype(U16).view(F16), st.mode)
            elif kind == "v_madmk_f16":
                r = _mad16(a, np.full_like(a, k), b, st.mode)
            else:
                r = _mad16(a, b, np.full_like(a, k), st.mode)
        store32(inst, st, w, r.astype(F16).view(U16).astype(U32), m)
    return run


@op("v_pk_fmac_f16")
def _pk_fmac(inst, K):
    rds = readers(inst, 2)
    d = dst(inst)

    def run(st, w):
        m = st.exec_mask(w)
        a, b, c = rds[0](st, w), rds[1](st, w), st.vgpr[d, w]
        out = np.zeros(a.shape, U32)
        with np.errstate(all="ignore"):
            for s in (0, 16):
                x, y, z = (((v >> U32(s)) & U32(0xFFFF)).astype(U16).view(F16).astype(F64) for v in (a, b, c))
                out |= (x * y + z).astype(F16).view(U16).astype(U32) << U32(s)
        store32(inst, st, w, out, m)
    return run


@op("v_swap_b32")
def _swap(inst, K):
    a, b = inst.fields["vdst"], inst.fields["src0"] - 256

    def run(st, w):
        m = st.exec_mask(w)
        va, vb = st.vgpr[a, w].copy(), st.vgpr[b, w].copy()
        write_v(st, w, a, vb, m)
        write_v(st, w, b, va, m)
    return run


@op("v_clrexcp")
def _clrexcp(inst, K):
    return lambda st, w: None
