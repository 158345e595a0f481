"""VALU operations RDNA added (GFX10.3, GFX11): the f16 FMA accumulate forms, the DX9-zero FMAC, the 16-bit
v_cndmask, and the dot products with 16-bit results or mixed-sign integer elements.  bf16 values are 16-bit
patterns: bf16 → f32 is the bits shifted up by 16, f32 → bf16 rounds to nearest even with integer operations."""
from __future__ import annotations

from . import fpops
from .lang import (F16, F32, F64, I32, I64, U16, U32, Node, clamp_int, const, fbits, fma, fptoint, isnan,
                   maximum, minimum, nan_free, select)
from .operands import DESCRIPTIONS, Build, describe, valu
from .vpacked import bf16_half, dot, f16_half, fdot2, int_elems, write_half


# ---- f16 FMA accumulate forms -------------------------------------------------------------------------------------
@describe("v_fmac_f16")
def _fmac16(b: Build) -> None:
    """D.f16 = fma(S0, S1, D.f16): the half of D that VOP3 OP_SEL[3] (or a GFX11 true16 .h destination) names is
    both the accumulator and the result, the other half kept; no denormal flushing, no output modifiers."""
    x, y = b.src(0, "f16", True), b.src(1, "f16", True)
    d = b.dst()
    hi = b.inst.fields.get("opsel", 0) >> 3 & 1
    acc = b.vgpr(d)
    acc = ((acc >> 16) if hi else acc).trunc(U16).view(F16)
    write_half(b, d, fma(x, y, acc), hi)


@describe("v_fmamk_f16 v_fmaak_f16")
def _fmak16(b: Build) -> None:
    """v_fmamk_f16 D = fma(S0, K, S1), v_fmaak_f16 D = fma(S0, S1, K) (K: the literal's low half); the result in
    the low half of D (the high half with a GFX11 true16 .h destination), the other half kept."""
    x, y = b.src(0, "f16", True), b.src(1, "f16", True)
    k = fbits(b.inst.literal & 0xFFFF, F16)
    r = fma(x, k, y) if "mk" in b.inst.name else fma(x, y, k)
    write_half(b, b.dst(), r, b.inst.fields.get("opsel", 0) >> 3 & 1 if b.inst.fields.get("t16") else 0)


# ---- DX9 zero rule ---------------------------------------------------------------------------------------------------
@describe("v_fmac_legacy_f32 v_fmac_dx9_zero_f32")
def _fmac_dx9(b: Build) -> None:
    """D = S0 * S1 + D, where a zero factor makes the product +0 whatever the other factor is (Inf and NaN too):
    the result is then D + 0.  No denormal flushing, no output modifiers."""
    x, y = b.src(0, "f32", True), b.src(1, "f32", True)
    d = b.dst()
    c = b.vgpr(d).view(F32)
    r = select(x.eq(0.0) | y.eq(0.0), c + const(0.0, F32), fma(x, y, c))
    b.write_vgpr32(d, r.bits())


# ---- 16-bit select ---------------------------------------------------------------------------------------------------
def lane_bits(b: Build, r: int) -> Node:
    """The lane mask in operand ``r`` (an SGPR (pair on wave64), or a constant mask word) as per-lane B1."""
    if r >= 256:
        raise NotImplementedError("a VGPR as a lane-mask operand")
    return b.mask_operand(r)


@describe("v_cndmask_b16")
def _cndmask16(b: Build) -> None:
    """VOP3: D.half = the lane's bit of the mask in S2 ? S1.half : S0.half (OP_SEL picks source halves and the
    destination half, the other half kept)."""
    x, y = b.src(0, "u16", False), b.src(1, "u16", False)
    r = select(lane_bits(b, b.inst.fields["src2"]), y, x)
    write_half(b, b.dst(), r, b.inst.fields.get("opsel", 0) >> 3 & 1)


# ---- dot products ----------------------------------------------------------------------------------------------------
dot("v_dot2_f32_bf16", fdot2(bf16_half), False, True)


def f32_to_bf16_bits(x: Node) -> Node:
    """binary64 → bf16 bits (U32, bits 15:0): through f32 (nearest even), then the f32 bits rounded to nearest even
    at bit 16; NaN → 0x7FC0."""
    with nan_free():                    # a NaN x is replaced below
        u = x.to(F32).bits()
    r = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16) & 0xFFFF
    return select(isnan(x), const(0x7FC0, U32), r)


def _dot2_16(bf16: bool):
    """GFX11 VOP3 v_dot2_f16_f16 / v_dot2_bf16_bf16: D.16 = S0.lo*S1.lo + S0.hi*S1.hi + S2.16, the exact products
    summed in binary64 and rounded once; OP_SEL[2] picks the half of S2, OP_SEL[3] the half of D (the other kept).
    The sources are raw 32-bit words (no abs/neg, no CLAMP)."""
    conv = bf16_half if bf16 else f16_half

    def build(b: Build) -> None:
        opsel = b.inst.fields.get("opsel", 0)
        a, bb, c = b.raw(0, "b32"), b.raw(1, "b32"), b.raw(2, "b32")
        r = const(0.0, F64) + conv(a, 0) * conv(bb, 0)
        r = r + conv(a, 16) * conv(bb, 16)
        r = r + conv(c, 16 if opsel >> 2 & 1 else 0)
        bits = f32_to_bf16_bits(r) if bf16 else r.to(F16).bits()
        write_half(b, b.dst(), bits, opsel >> 3 & 1)
    return build


describe("v_dot2_f16_f16")(_dot2_16(False))
describe("v_dot2_bf16_bf16")(_dot2_16(True))


def _idot_iu(bits: int):
    """v_dot4_i32_iu8 / v_dot8_i32_iu4: D = S2 + the products of the elements, NEG[0] / NEG[1] saying whether S0's
    / S1's elements are signed; CLAMP saturates the exact sum to the i32 range, else it wraps."""
    def build(b: Build) -> None:
        f = b.inst.fields
        sa, sb = f.get("neg", 0) & 1, f.get("neg", 0) >> 1 & 1
        a, bb, c = b.raw(0, "b32"), b.raw(1, "b32"), b.raw(2, "b32")
        ty = I64 if f.get("clamp", 0) else I32
        acc = c.view(I32).sext(ty) if ty is I64 else c.view(I32)
        for x, y in zip(int_elems(a, bits, bool(sa), ty), int_elems(bb, bits, bool(sb), ty)):
            acc = acc + x * y
        if ty is I64:
            acc = select(acc < -2 ** 31, const(-2 ** 31, I64), select(acc > 2 ** 31 - 1, const(2 ** 31 - 1, I64), acc))
            acc = acc.trunc(I32)
        b.write_vgpr32(b.dst(), acc.bits())
    return build


describe("v_dot4_i32_iu8")(_idot_iu(8))
describe("v_dot8_i32_iu4")(_idot_iu(4))


# ---- other VALU operations RDNA added (plain: typed sources, MODE flushing, output modifiers) ------------------------
def _dx9_fma(a, b, c):
    """DX9 rule: a zero factor (after input flushing) makes the product +0, whatever the other one is."""
    return select(a.eq(0.0) | b.eq(0.0), c + const(0.0, a.ty), fma(a, b, c))


def _sat16(x: Node, lo: int, hi: int) -> Node:
    """f32 → 16-bit integer bits (U32): toward zero, saturated to [lo, hi], NaN → 0."""
    return clamp_int(fptoint(x, I32), lo, hi).view(U32) & 0xFFFF


valu("v_xor3_b32", ("u32", "u32", "u32"), "u32", lambda a, b, c: a ^ b ^ c)
valu("v_fma_legacy_f32 v_fma_dx9_zero_f32", ("f32", "f32", "f32"), "f32", _dx9_fma)
valu("v_maxmin_f32", ("f32", "f32", "f32"), "f32", lambda a, b, c: fpops.fmin(fpops.fmax(a, b), c))
valu("v_minmax_f32", ("f32", "f32", "f32"), "f32", lambda a, b, c: fpops.fmax(fpops.fmin(a, b), c))
valu("v_maxmin_f16", ("f16", "f16", "f16"), "f16", lambda a, b, c: fpops.fmin(fpops.fmax(a, b), c))
valu("v_minmax_f16", ("f16", "f16", "f16"), "f16", lambda a, b, c: fpops.fmax(fpops.fmin(a, b), c))
valu("v_maxmin_i32", ("i32", "i32", "i32"), "i32", lambda a, b, c: minimum(maximum(a, b), c))
valu("v_minmax_i32", ("i32", "i32", "i32"), "i32", lambda a, b, c: maximum(minimum(a, b), c))
valu("v_maxmin_u32", ("u32", "u32", "u32"), "u32", lambda a, b, c: minimum(maximum(a, b), c))
valu("v_minmax_u32", ("u32", "u32", "u32"), "u32", lambda a, b, c: maximum(minimum(a, b), c))
valu("v_and_b16", ("u16", "u16"), "u16", lambda a, b: a & b)
valu("v_or_b16", ("u16", "u16"), "u16", lambda a, b: a | b)
valu("v_xor_b16", ("u16", "u16"), "u16", lambda a, b: a ^ b)
valu("v_not_b16", ("u16",), "u16", lambda a: ~a)
valu("v_mov_b16", ("u16",), "u16", lambda a: a)
valu("v_cvt_i32_i16", ("i16",), "i32", lambda a: a.to(I32))
valu("v_cvt_u32_u16", ("u16",), "u32", lambda a: a.to(U32))
valu("v_cvt_pk_i16_f32", ("f32", "f32"), "u32",
     lambda a, b: _sat16(a, -32768, 32767) | (_sat16(b, -32768, 32767) << 16))
valu("v_cvt_pk_u16_f32", ("f32", "f32"), "u32", lambda a, b: _sat16(a, 0, 65535) | (_sat16(b, 0, 65535) << 16))

# ---- RDNA names of GFX9 operations ----------------------------------------------------------------------------------
# (the hand-written semantics' rdna.ALIASES, VALU part): each new name runs the description of the old one, looked up
# when an instruction is built (the old name's module may be imported after this one); the instruction keeps its own
# name, as it did when the hand-written semantics registered one factory under both names.  A module describing the
# new name itself takes precedence.
VALU_ALIASES = {
    "v_sub_nc_u32": "v_sub_u32", "v_subrev_nc_u32": "v_subrev_u32", "v_add_nc_i32": "v_add_i32",
    "v_sub_nc_i32": "v_sub_i32", "v_add_nc_u16": "v_add_u16", "v_sub_nc_u16": "v_sub_u16", "v_add_nc_i16": "v_add_i16",
    "v_sub_nc_i16": "v_sub_i16", "v_mul_dx9_zero_f32": "v_mul_legacy_f32",
    "v_cvt_pk_rtz_f16_f32": "v_cvt_pkrtz_f16_f32", "v_cvt_pk_norm_i16_f32": "v_cvt_pknorm_i16_f32",
    "v_cvt_pk_norm_u16_f32": "v_cvt_pknorm_u16_f32", "v_cvt_pk_norm_i16_f16": "v_cvt_pknorm_i16_f16",
    "v_cvt_pk_norm_u16_f16": "v_cvt_pknorm_u16_f16", "v_cvt_floor_i32_f32": "v_cvt_flr_i32_f32",
    "v_cvt_nearest_i32_f32": "v_cvt_rpi_i32_f32", "v_clz_i32_u32": "v_ffbh_u32", "v_ctz_i32_b32": "v_ffbl_b32",
    "v_cls_i32": "v_ffbh_i32",
}


def _alias(new: str, old: str) -> None:
    def build(b: Build) -> None:
        DESCRIPTIONS[old](b)
    build.alias_of = old
    if new not in DESCRIPTIONS:
        describe(new)(build)


for _new, _old in VALU_ALIASES.items():
    _alias(_new, _old)
