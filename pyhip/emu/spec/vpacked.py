"""Packed math: VOP3P v_pk_* on 16-bit halves and on f32 pairs, dot products (v_dot*, and the v_dot*c forms that
accumulate into their destination), mixed-precision FMA (v_fma_mix*/v_mad_mix*), and the f16 VOP2 ops that
accumulate into their destination (v_mac_f16, v_madak/madmk_f16, v_pk_fmac_f16).

VOP3P sources: for source i, OP_SEL[i] picks the half of the 32-bit operand feeding the low half of the result
and OP_SEL_HI[i] (two bits in the first dword, the third in bit 14: the decoder's ``opsel_hi``/``opsel_hi2``) the
half feeding the high half; NEG/NEG_HI negate the f16 halves.  Inline constants are read as 32-bit values of the
source's kind (an f16 constant holds its value in the low half only: GFX9 does not replicate it, compilers use
OP_SEL_HI=0 to reuse the low half)."""
from __future__ import annotations

from .lang import (F16, F32, F64, I16, I32, U16, U32, Node, bitcast, const, fabs, fbits, fma, fneg, isnan, maximum,
                   minimum, nan_free, select, signbit)
from . import fpops
from .operands import Build, describe
from .valu import mad

# ---- VOP3P sources ------------------------------------------------------------------------------------------------
HALF_TY = {"f16": F16, "u16": U16, "i16": I16, "b16": U16}


def vop3p_mods(inst) -> tuple[int, int, int, int]:
    """(OP_SEL, OP_SEL_HI, NEG, NEG_HI) of a VOP3P instruction, one bit per source."""
    f = inst.fields
    return f.get("opsel", 0), f.get("opsel_hi", 0) | (f.get("opsel_hi2", 0) << 2), f.get("neg", 0), f.get("neg_hi", 0)


def vop3p_word(b: Build, i: int, kind: str = "b32") -> Node:
    """Source ``i``'s 32 bits (U32): a register, or a constant read as ``kind`` (f16/f32 inline constants), after
    the DPP lane move of src0 (GFX11 VOP3P DPP)."""
    return b.raw(i, kind if kind in ("f16", "f32") else "b32", False)


def split16(w: Node, sel: int) -> Node:
    """The low (``sel`` 0) or high (1) half of a U32 as U16."""
    return (w >> 16).trunc(U16) if sel else w.trunc(U16)


def vop3p_halves(b: Build, kinds) -> list[tuple[Node, Node]]:
    """Per source: its (lo, hi) halves typed by ``kinds`` (f16/u16/i16): the half OP_SEL[i] and the half
    OP_SEL_HI[i] picks, NEG[i]/NEG_HI[i] negating f16 halves."""
    opsel, opsel_hi, neg, neg_hi = vop3p_mods(b.inst)
    out = []
    for i, k in enumerate(kinds):
        w = vop3p_word(b, i, k)
        lo, hi = split16(w, opsel >> i & 1), split16(w, opsel_hi >> i & 1)
        if k == "f16":
            if neg >> i & 1:
                lo = lo ^ 0x8000
            if neg_hi >> i & 1:
                hi = hi ^ 0x8000
        out.append((bitcast(lo, HALF_TY[k]), bitcast(hi, HALF_TY[k])))
    return out


def pack16(lo: Node, hi: Node) -> Node:
    """Two 16-bit values (any 16-bit type) as one U32, ``lo`` in bits 15:0."""
    return lo.bits().zext(U32) | (hi.bits().zext(U32) << 16)


def clamp01_nan0(x: Node) -> Node:
    """The packed/mix CLAMP: to [0, 1], NaN → +0 (whatever MODE.DX10_CLAMP says)."""
    zero, one = const(0.0, x.ty), const(1.0, x.ty)
    return select(isnan(x), zero, select(x < zero, zero, select(x > one, one, x)))


def write_half(b: Build, d: int, bits16: Node, hi: int) -> None:
    """A 16-bit result into the low (``hi`` 0) or high half of VGPR ``d``, keeping the other half."""
    old = b.vgpr(d)
    v = bits16.bits().zext(U32)
    b.write_vgpr32(d, (old & 0xFFFF) | (v << 16) if hi else (old & 0xFFFF0000) | v)


# ---- v_pk_* on 16-bit halves ----------------------------------------------------------------------------------------
def pk16(names: str, kinds_in, kind_out: str, fn) -> None:
    """D.lo = fn(S*.lo), D.hi = fn(S*.hi); CLAMP (f16 results only) to [0, 1] with NaN → 0; no denormal flushing."""
    kinds_in = tuple(kinds_in)

    def build(b: Build) -> None:
        srcs = vop3p_halves(b, kinds_in)
        clamp = b.inst.fields.get("clamp", 0) and kind_out == "f16"
        res = []
        for h in (0, 1):
            r = fn(*(s[h] for s in srcs))
            if clamp:
                r = clamp01_nan0(r)
            res.append(r)
        b.write_vgpr32(b.dst(), pack16(*res))
    build.spec = (kinds_in, kind_out)
    describe(names)(build)


pk16("v_pk_add_f16", ("f16", "f16"), "f16", lambda a, b: a + b)
pk16("v_pk_mul_f16", ("f16", "f16"), "f16", lambda a, b: a * b)
pk16("v_pk_fma_f16", ("f16", "f16", "f16"), "f16", fma)
pk16("v_pk_max_f16", ("f16", "f16"), "f16", lambda a, b: fpops.fmax(a, b, 0))
pk16("v_pk_min_f16", ("f16", "f16"), "f16", lambda a, b: fpops.fmin(a, b, 0))
pk16("v_pk_add_u16", ("u16", "u16"), "u16", lambda a, b: a + b)
pk16("v_pk_add_i16", ("i16", "i16"), "i16", lambda a, b: a + b)
pk16("v_pk_sub_u16", ("u16", "u16"), "u16", lambda a, b: a - b)
pk16("v_pk_sub_i16", ("i16", "i16"), "i16", lambda a, b: a - b)
pk16("v_pk_mul_lo_u16", ("u16", "u16"), "u16", lambda a, b: a * b)
pk16("v_pk_lshlrev_b16", ("u16", "u16"), "u16", lambda a, b: b << (a & 15))
pk16("v_pk_lshrrev_b16", ("u16", "u16"), "u16", lambda a, b: b >> (a & 15))
pk16("v_pk_ashrrev_i16", ("u16", "i16"), "i16", lambda a, b: b >> (a & 15).view(I16))
pk16("v_pk_max_u16", ("u16", "u16"), "u16", maximum)
pk16("v_pk_min_u16", ("u16", "u16"), "u16", minimum)
pk16("v_pk_max_i16", ("i16", "i16"), "i16", maximum)
pk16("v_pk_min_i16", ("i16", "i16"), "i16", minimum)
pk16("v_pk_mad_u16", ("u16", "u16", "u16"), "u16", lambda a, b, c: a * b + c)
pk16("v_pk_mad_i16", ("i16", "i16", "i16"), "i16", lambda a, b, c: a * b + c)


# ---- packed f32 (gfx90a/gfx94x) ---------------------------------------------------------------------------------
def _next_code(code: int) -> int:
    """The register holding a 64-bit source's high dword: the next VGPR or SGPR; VCC, M0, EXEC, constants and
    literals give their own (32-bit) value again."""
    return code + 1 if code >= 256 or code < 102 else code


def pk_f32(names: str, nsrc: int, fn) -> None:
    """D[0] = fn(S*.lo), D[1] = fn(S*.hi) on the f32 halves of 64-bit sources: OP_SEL[i] picks the dword feeding the
    low result, OP_SEL_HI[i] the one feeding the high result, NEG/NEG_HI negate; no CLAMP, no denormal flushing."""
    def build(b: Build) -> None:
        opsel, opsel_hi, neg, neg_hi = vop3p_mods(b.inst)
        lo_in, hi_in = [], []
        for i, code in enumerate(b.codes()[:nsrc]):
            words = (b.vector(code, 32, "b32"), b.vector(_next_code(code), 32, "b32"))
            lo, hi = words[opsel >> i & 1], words[opsel_hi >> i & 1]
            if neg >> i & 1:
                lo = lo ^ 0x80000000
            if neg_hi >> i & 1:
                hi = hi ^ 0x80000000
            lo_in.append(lo.view(F32))
            hi_in.append(hi.view(F32))
        d, m = b.dst(), b.write_mask()
        b.write_vgpr(d, fn(*lo_in).bits(), m)
        b.write_vgpr(d + 1, fn(*hi_in).bits(), m)
    describe(names)(build)


pk_f32("v_pk_mul_f32", 2, lambda a, b: a * b)
pk_f32("v_pk_add_f32", 2, lambda a, b: a + b)
pk_f32("v_pk_fma_f32", 3, fma)


@describe("v_pk_mov_b32")
def _pk_mov(b: Build) -> None:
    """D[0] = S0's dword OP_SEL[0] picks, D[1] = S1's dword OP_SEL[1] picks (the dword after a source code is the
    code + 1, constants included, as the hand-written semantics had it)."""
    c0, c1 = b.codes()[:2]
    opsel = b.inst.fields.get("opsel", 0)
    lo = b.vector(c0 + (opsel & 1) if c0 != 255 else c0, 32, "b32")
    hi = b.vector(c1 + (opsel >> 1 & 1) if c1 != 255 else c1, 32, "b32")
    d, m = b.dst(), b.write_mask()
    b.write_vgpr(d, lo, m)
    b.write_vgpr(d + 1, hi, m)


# ---- dot products ----------------------------------------------------------------------------------------------------
def int_elems(x: Node, bits: int, signed: bool, ty=I32) -> list[Node]:
    """The 32 / ``bits`` packed integer elements of a U32, low first, sign- or zero-extended to ``ty``."""
    out = []
    for i in range(32 // bits):
        if signed:
            e = (x.view(I32) << (32 - bits * (i + 1))) >> (32 - bits)
            out.append(e.sext(ty) if ty.bits > 32 else e.view(ty))
        else:
            e = x >> (bits * i)
            if bits * (i + 1) < 32:
                e = e & ((1 << bits) - 1)
            out.append(e.zext(ty) if ty.bits > 32 else e.view(ty))
    return out


def f16_half(x: Node, s: int) -> Node:
    """The f16 in bits s+15:s of a U32, as F64 (exact)."""
    return split16(x, s == 16).view(F16).to(F64)


def bf16_half(x: Node, s: int) -> Node:
    """The bf16 in bits s+15:s of a U32, as F64 (exact): bf16 → f32 is the bits shifted up by 16."""
    h = (x >> 16) if s else x
    return (h << 16).view(F32).to(F64)


def neg_halves(x: Node, lo: int, hi: int) -> Node:
    """VOP3P NEG/NEG_HI on a dot product source, as the hand-written semantics applied them: bit 15 and bit 31."""
    m = (0x8000 if lo else 0) | (0x80000000 if hi else 0)
    return x ^ m if m else x


def fdot2(conv):
    """f32 D = S0.lo*S1.lo + S0.hi*S1.hi + S2.f32: exact products summed in binary64 left to right, rounded to
    f32 at the end."""
    def fn(a, b, c):
        return (conv(a, 0) * conv(b, 0) + conv(a, 16) * conv(b, 16) + c.view(F32).to(F64)).to(F32).bits()
    return fn


def idot(bits: int, signed: bool):
    """D = S2 + sum of the products of the packed elements, wrapping at 32 bits."""
    ty = I32 if signed else U32

    def fn(a, b, c):
        acc = c.view(ty)
        for x, y in zip(int_elems(a, bits, signed, ty), int_elems(b, bits, signed, ty)):
            acc = acc + x * y
        return acc.bits()
    return fn


def dot(names: str, fn, accumulate: bool, float_neg: bool = False) -> None:
    """VOP3P v_dot*: D = fn(S0, S1, S2); VOP2/VOP3 v_dot*c: D = fn(S0, S1, D).  Sources are raw 32-bit words (no
    OP_SEL, CLAMP or denormal rules); ``float_neg``: VOP3P NEG/NEG_HI flip bits 15/31 of each source."""
    def build(b: Build) -> None:
        d = b.dst()
        a, bb = b.raw(0, "b32"), b.raw(1, "b32")
        c = b.vgpr(d) if accumulate else b.raw(2, "b32")
        if float_neg and b.inst.encoding == "VOP3P":
            _, _, neg, neg_hi = vop3p_mods(b.inst)
            a, bb, c = (neg_halves(x, neg >> i & 1, neg_hi >> i & 1) for i, x in enumerate((a, bb, c)))
        b.write_vgpr32(d, fn(a, bb, c))
    describe(names)(build)


dot("v_dot2_f32_f16", fdot2(f16_half), False, True)
dot("v_dot2c_f32_f16 v_dot2acc_f32_f16", fdot2(f16_half), True)
dot("v_dot2_i32_i16", idot(16, True), False)
dot("v_dot2_u32_u16", idot(16, False), False)
dot("v_dot4_i32_i8", idot(8, True), False)
dot("v_dot4_u32_u8", idot(8, False), False)
dot("v_dot8_i32_i4", idot(4, True), False)
dot("v_dot8_u32_u4", idot(4, False), False)
dot("v_dot2c_i32_i16", idot(16, True), True)
dot("v_dot4c_i32_i8", idot(8, True), True)
dot("v_dot8c_i32_i4", idot(4, True), True)


# ---- mixed-precision FMA ----------------------------------------------------------------------------------------
def fma_to_odd(a: Node, b: Node, c: Node) -> Node:
    """a*b + c for binary64 operands that are f32 or f16 values, rounded to odd in binary64: the product is exact,
    the sum's rounding error comes from TwoSum, and an inexact sum with an even last bit steps one ulp toward the
    exact value.  Rounding the result once more to f32 or f16 then rounds the exact value correctly (53 >= 24 + 2),
    so this is the fused operation for either destination."""
    p = a * b
    s = p + c
    with nan_free():                    # a NaN or infinite s is kept as it is: err only matters when s is finite
        bb = s - p
        err = (p - (s - bb)) + (c - bb)
    sb = s.bits()
    inexact = err.ne(0.0) & fpops.isfinite(s)
    step = select(signbit(s).eq(err > 0.0), sb - 1, sb + 1)            # one ulp toward s + err
    return bitcast(select(inexact & (sb & 1).eq(0), step, sb), F64)


@describe("v_fma_mix_f32 v_fma_mixlo_f16 v_fma_mixhi_f16 v_mad_mix_f32 v_mad_mixlo_f16 v_mad_mixhi_f16")
def _fma_mix(b: Build) -> None:
    """Each source is f32 or (OP_SEL_HI[i] set) the f16 half OP_SEL[i] picks; NEG_HI[i] takes the absolute value and
    NEG[i] negates; the fused result is f32, or f16 into the low (mixlo) / high (mixhi) half, the other half kept.
    CLAMP to [0, 1] with NaN → 0; no denormal flushing."""
    inst = b.inst
    opsel, opsel_hi, neg, neg_hi = vop3p_mods(inst)
    args = []
    for i in range(3):
        if opsel_hi >> i & 1:
            x = split16(vop3p_word(b, i, "f16"), opsel >> i & 1).view(F16).to(F64)
        else:
            x = vop3p_word(b, i, "f32").view(F32).to(F64)
        if neg_hi >> i & 1:
            x = fabs(x)
        if neg >> i & 1:
            x = fneg(x)
        args.append(x)
    r = fma_to_odd(*args)
    clamp = inst.fields.get("clamp", 0)
    d = b.dst()
    if "mixlo" in inst.name or "mixhi" in inst.name:
        h = r.to(F16)
        if clamp:
            h = clamp01_nan0(h)
        write_half(b, d, h, int("mixhi" in inst.name))
        return
    r = r.to(F32)
    if clamp:
        r = clamp01_nan0(r)
    b.write_vgpr32(d, r.bits())


# ---- VOP2 ops accumulating into their destination --------------------------------------------------------------
@describe("v_mac_f16 v_madak_f16 v_madmk_f16")
def _mac16(b: Build) -> None:
    """GFX9 V_MAD_F16 forms (not fused: the product rounded and flushed by MODE first): v_mac_f16 D = S0*S1 + D,
    v_madmk_f16 D = S0*K + S1, v_madak_f16 D = S0*S1 + K (K: the literal's low half).  The high half of D is zeroed;
    no input flushing, no output modifiers."""
    x, y = b.src(0, "f16", True), b.src(1, "f16", True)
    d = b.dst()
    name = b.inst.name
    mode = b.mode
    if name == "v_mac_f16":
        r = mad(x, y, b.vgpr(d).trunc(U16).view(F16), mode)
    else:
        k = fbits((b.inst.literal or 0) & 0xFFFF, F16)
        r = mad(x, k, y, mode) if name == "v_madmk_f16" else mad(x, y, k, mode)
    b.write_vgpr32(d, r.bits().zext(U32))


@describe("v_pk_fmac_f16")
def _pk_fmac(b: Build) -> None:
    """D.lo = fma(S0.lo, S1.lo, D.lo), D.hi = fma(S0.hi, S1.hi, D.hi); sources as raw 32-bit words (no
    modifiers, no denormal flushing)."""
    a, bb, d = b.raw(0, "b32"), b.raw(1, "b32"), b.dst()
    c = b.vgpr(d)
    halves = [fma(split16(a, h).view(F16), split16(bb, h).view(F16), split16(c, h).view(F16)) for h in (0, 1)]
    b.write_vgpr32(d, pack16(*halves))


__all__ = ["vop3p_mods", "vop3p_word", "vop3p_halves", "split16", "pack16", "clamp01_nan0", "write_half", "pk16",
           "int_elems", "f16_half", "bf16_half", "neg_halves", "fdot2", "idot", "dot", "fma_to_odd"]
