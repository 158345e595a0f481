"""The division helpers of the VALU: V_DIV_SCALE, V_DIV_FMAS and V_DIV_FIXUP (f32, f64, and the f16 fixups), the
pieces of LLVM's correctly rounded division sequence, and V_TRIG_PREOP_F64 (53-bit segments of 2/pi for large
argument reduction).  The f32/f64 helpers read their sources with the VOP3 modifiers but do not flush input
denormals and apply no output modifiers."""
from __future__ import annotations

from . import fpops
from .lang import (B1, F16, F32, F64, I32, U32, U64, Node, bitcast, const, copysign, fabs, fbits, fma,
                   is_denormal, isinf, isnan, maximum, nan_free, rare, select, signbit)
from .operands import VCC, Build, describe, valu

# per width: (float type, mantissa bits, exponent bias, div_scale "N/D near MAX" exponent gap, scale exponent,
#             "numerator tiny" exponent, div_fixup underflow exponent gap)
_W = {32: (F32, 23, 127, 96, 64, 23, -150), 64: (F64, 52, 1023, 768, 128, 53, -1075)}


def _exponent(x: Node) -> Node:
    """The biased exponent field of a float as I32."""
    ty, mb = (F32, 23) if x.ty is F32 else (F64, 52)
    e = (x.bits() >> mb) & (0xFF if ty is F32 else 0x7FF)
    return e.view(I32) if ty is F32 else e.trunc(U32).view(I32)


def _pow2(e: int, ty) -> Node:
    _, mb, bias = _W[ty.bits][:3]
    return fbits((e + bias) << mb, ty)


# ---- V_DIV_SCALE: VOP3B, the scaled value to D and the "post-scale" flag to the SDST lane mask ----------------------
def _div_scale(width: int):
    ty, _, _, big, sc, tiny_exp, _ = _W[width]
    kind = f"f{width}"

    def build(b: Build) -> None:
        """(ISA pseudocode) s0 the value to scale, s1 the denominator, s2 the numerator: scale by 2^+-64 (f32) /
        2^+-128 (f64) so that the reciprocal refinement avoids denormals; VCC tells V_DIV_FMAS to undo a quotient
        scaling.  When both 1/s1 and s2/s1 are denormal, the denominator is scaled down (the old semantics)."""
        s0, s1, s2 = b.srcs((kind,) * 3)
        e1, e2 = _exponent(s1), _exponent(s2)
        # 1/s1 is denormal exactly where s1 is finite and beyond 2^(bias - 1) in magnitude (the reciprocal of the
        # next value up already rounds below the smallest normal); the quotient is only classified, so its NaN
        # bits do not matter
        rcp_den = fpops.isfinite(s1) & (fabs(s1) > _pow2(_W[width][2] - 1, ty))
        # the quotient can only be denormal where the numerator is (or is 0), or where it is at least 2^(bias - 2)
        # times smaller than the denominator (else it is at least half of 2^(2 - bias), the smallest normal)
        maybe = (e2 - e1 < 2 - _W[width][2]) | e2.eq(0)
        with nan_free():
            quo_den = rare(maybe, is_denormal(s2 / s1), const(False, B1))
        up, down = fpops.ldexp(s0, const(sc, I32)), fpops.ldexp(s0, const(-sc, I32))
        zero = s2.eq(0.0) | s1.eq(0.0)
        c_big = ~zero & ((e2 - e1) >= big)
        rest = ~zero & ~c_big
        c_dden = rest & is_denormal(s1)
        rest = rest & ~c_dden
        c_both = rest & rcp_den & quo_den
        c_rcp = rest & ~c_both & rcp_den
        rest = rest & ~rcp_den
        c_quo = rest & quo_den
        c_tiny = rest & ~quo_den & (e2 <= tiny_exp)
        s0_is_s1, s0_is_s2 = s0.eq(s1), s0.eq(s2)
        scale_up = (c_big & s0_is_s1) | c_dden | (c_quo & s0_is_s2) | c_tiny
        scale_down = (c_both & s0_is_s1) | c_rcp
        res = select(scale_up, up, select(scale_down, down, s0))
        res = select(zero | isnan(s1) | isnan(s2), fbits(0x7FC00000 if width == 32 else 0x7FF8000000000000, ty), res)
        # the common case, decided on the exponent fields alone: s1 normal and below 2^(bias - 1) in magnitude,
        # s2 finite with its exponent above the "tiny" one, and the exponent difference in [2 - bias, big): no
        # class above applies (no zero, NaN, infinity, denormal s1, reciprocal or quotient near the denormals):
        # s0 unchanged, no flag.  The classification runs only where some lane is out of it.
        bias = _W[width][2]
        usual = (e1 >= 1) & (e1 <= 2 * bias - 2) & (e2 > tiny_exp) & (e2 <= 2 * bias) & \
            ((e2 - e1) < big) & ((e2 - e1) >= 2 - bias)
        b.write_d(rare(~usual, res, s0), kind)
        b.write_lanes(b.inst.fields["sdst"], rare(~usual, c_big | c_both | c_quo, const(False, B1)))
    return build


describe("v_div_scale_f32")(_div_scale(32))
describe("v_div_scale_f64")(_div_scale(64))


def _vcc(b: Build) -> Node:
    """VCC as per-lane B1."""
    return b.lane_mask(VCC)


# ---- V_DIV_FMAS: fma, scaled by 2^+-64 (f32) / 2^+-128 (f64) where VCC is set, rounded once --------------------------
def _round_to_odd_sum(p: Node, c: Node) -> Node:
    """p + c in binary64 rounded to odd (an inexact sum gets an odd last bit), for finite p, c: the sum rounded to
    nearest, its exact error (Knuth's TwoSum), and one step toward the error where the sum's last bit is even."""
    s = p + c
    bb = s - p
    err = (p - (s - bb)) + (c - bb)
    sb = s.bits()
    fix = err.ne(0.0) & (sb & 1).eq(0)
    away = ~(signbit(err) ^ signbit(s))                 # the exact sum is farther from zero than s
    return bitcast(select(fix, select(away, sb + 1, sb - 1), sb), F64)


@describe("v_div_fmas_f32")
def _div_fmas_f32(b: Build) -> None:
    """fma(s0, s1, s2), times 2^64 (quotient estimate s2 >= 1) or 2^-64 (s2 < 1) in the lanes VCC sets, with one
    rounding: the exact product of binary64 operands plus s2, rounded to odd in binary64 and scaled exactly, rounds
    once to f32 (53 >= 24 + 2).  An infinite or NaN fma result is not scaled."""
    a, c, d = b.srcs(("f32",) * 3)
    r = fma(a, c, d)
    vcc = _vcc(b)
    k = select(_exponent(d) >= 127, _pow2(64, F64), _pow2(-64, F64))
    with nan_free():                    # taken only where the fma is finite: then no NaN arises on the way
        exact = (_round_to_odd_sum(a.to(F64) * c.to(F64), d.to(F64)) * k).to(F32)
    # where VCC is clear the unscaled exact sum rounds to r itself (round to odd in binary64, then to binary32,
    # is one correct rounding): only VCC's lanes need the binary64 work, and VCC is seldom set
    b.write_d(rare(vcc & fpops.isfinite(r), exact, r), "f32")


@describe("v_div_fmas_f64")
def _div_fmas_f64(b: Build) -> None:
    """fma(s0, s1, s2), times 2^128 (s2 >= 1) or 2^-128 (s2 < 1) in the lanes VCC sets.  Scaling the rounded fma
    is exact unless the result is denormal; there (only reachable scaling down) it is rounded once:

    * in a space scaled up by 2^600 (s2 and the smaller factor scaled, exactly) the fma r1 = RN(2^600 x) has its
      full 53 bits, and RN(r1 * 2^-728) is the correctly rounded result unless r1 * 2^-728 falls exactly halfway
      between two denormals: then the sign of the fma's error x - r1 decides;
    * that sign comes from Boldo and Muller's ErrFma (the exact error r2 + r3 of an fma: TwoMult, two TwoSums);
      the scaling keeps its no-underflow condition, except for a product below 2^-900, which then only acts as a
      sticky bit of the sign of the product."""
    a, c, d = b.srcs(("f64",) * 3)
    r = fma(a, c, d)
    vcc = _vcc(b)
    up = _exponent(d) >= 1023
    scaled = r * select(up, _pow2(128, F64), _pow2(-128, F64))
    fix = (fabs(scaled) < _pow2(-1022, F64)) & r.ne(0.0) & fpops.isfinite(r)
    # the denormal results, rounded once
    small_a = fabs(a) <= fabs(c)
    big = _pow2(600, F64)
    A, B, Y = select(small_a, a * big, a), select(small_a, c, c * big), d * big
    r1 = fma(A, B, Y)
    hs = r1 * _pow2(-728, F64)
    diff = r1 - hs * _pow2(728, F64)                    # exact: where r1 lies from hs
    mid = fabs(diff).eq(_pow2(-347, F64))                # halfway between two denormals (2^-1075 scaled)
    u1 = A * B
    u2 = fma(A, B, -u1)
    a1 = Y + u2
    z = a1 - Y
    a2 = (Y - (a1 - z)) + (u2 - z)
    b1 = u1 + a1
    z = b1 - u1
    b2 = (u1 - (b1 - z)) + (a1 - z)
    err = ((b1 - r1) + b2) + a2                         # RN(r2 + r3): the sign of x - r1, 0 when exact
    tiny = fabs(u1) < _pow2(-900, F64)
    err_neg = select(tiny, signbit(A) ^ signbit(B), signbit(err))
    err_nz = select(tiny, A.ne(0.0) & B.ne(0.0), err.ne(0.0))
    beyond = mid & err_nz & ~(err_neg ^ signbit(diff))
    fixed = select(beyond, hs + copysign(fbits(1, F64), diff), hs)
    b.write_d(select(vcc, select(fix, fixed, scaled), r), "f64")


# ---- V_DIV_FIXUP: the special cases of n/d, else the quotient's magnitude with the sign of n/d -----------------------
def _fixup_special(d: Node, n: Node) -> Node:
    return isnan(d) | isnan(n) | d.eq(0.0) | isinf(d) | isinf(n) | n.eq(0.0)


def _div_fixup(width: int):
    ty, _, _, _, _, _, under_gap = _W[width]
    kind = f"f{width}"

    def build(b: Build) -> None:
        """s0 the quotient estimate, s1 the denominator, s2 the numerator.  Zero, infinite and NaN operands give
        IEEE n/d; an exponent difference below the denormal range underflows to a signed zero; otherwise a NaN
        estimate (an overflow in the refinement) becomes a signed infinity, any other the estimate's magnitude
        with the quotient's sign."""
        q, d, n = b.srcs((kind,) * 3)
        special = _fixup_special(d, n)
        neg = signbit(n) ^ signbit(d)

        def signed(x):
            return select(neg, -x, x)
        under = (_exponent(n) - _exponent(d)) < under_gap
        inf = const(float("inf"), ty)
        r = select(under, signed(const(0.0, ty)), select(isnan(q), signed(inf), signed(fabs(q))))
        b.write_d(rare(special, n / d, r), kind)
    return build


describe("v_div_fixup_f32")(_div_fixup(32))
describe("v_div_fixup_f64")(_div_fixup(64))


def _div_fixup_f16(q, d, n):
    """The f16 fixup: the special cases as the f32 quotient of n and d rounded to f16, otherwise the estimate's
    magnitude with the quotient's sign (no underflow or overflow rules)."""
    neg = signbit(n) ^ signbit(d)
    mag = fabs(q)
    return rare(_fixup_special(d, n), (n.to(F32) / d.to(F32)).to(F16), select(neg, -mag, mag))


valu("v_div_fixup_f16 v_div_fixup_legacy_f16", ("f16", "f16", "f16"), "f16", _div_fixup_f16)


# ---- V_TRIG_PREOP_F64 ------------------------------------------------------------------------------------------------
def _two_over_pi_bits(nbits: int) -> int:
    """floor(2/pi * 2^nbits), from Machin's formula in integer arithmetic with 64 guard bits."""
    g = nbits + 64
    one = 1 << g

    def arctan_inv(x):
        total, term, k, sign = 0, one // x, 1, 1
        while term:
            total += sign * (term // k)
            term //= x * x
            k += 2
            sign = -sign
        return total
    pi_scaled = 4 * (4 * arctan_inv(5) - arctan_inv(239))          # pi * 2^g
    return (2 << (nbits + g)) // pi_scaled


# bit 1200 of the integer is the 2^-1 bit of 2/pi = 0.1010001...b (the ISA's b_1200 .. b_0).  As 64-bit words with
# a zero word below bit 0 (so windows that start up to 64 bits below b_0 read zeros): word j holds bits
# [64 (j - 1), 64 j) of the integer.
_TWO_OVER_PI = _two_over_pi_bits(1201)
_WORDS = [0] + [(_TWO_OVER_PI >> (64 * j)) & ((1 << 64) - 1) for j in range((1201 + 63) // 64)]


def _pick(words, bits) -> Node:
    """words[j] for the index whose bits (B1, least significant first) are ``bits``: a tree of selects."""
    level = [const(w, U64) for w in words]
    for c in bits:
        if len(level) == 1:
            break
        level = [select(c, level[i + 1], level[i]) if i + 1 < len(level) else level[i] for i in range(0, len(level), 2)]
    return level[0]


def _trig_preop(a: Node, b: Node) -> Node:
    """(ISA pseudocode) shift = S1[4:0] * 53, plus exponent(S0) - 1077 when that is positive; the 53 bits
    b_(1200 - shift) .. b_(1148 - shift) of 2/pi (zeros below b_0) as an integer, times 2^(-53 - shift), times
    2^128 more for exponent(S0) >= 1968, rounded once."""
    e = _exponent(a)
    shift = (b & 31).view(I32) * 53 + maximum(e - 1077, 0)
    k = const(1148 + 64, I32) - shift                   # the window's lowest bit, counted from the zero word
    valid = k >= 0
    kk = select(valid, k, const(0, I32)).view(U32)
    j, off = kk >> 6, (kk & 63).zext(U64)
    nbits = max(1, (len(_WORDS) - 1).bit_length())
    sel = [((j >> i) & 1).eq(1) for i in range(nbits)]
    lo = _pick(_WORDS, sel)
    hi = _pick(_WORDS[1:] + [0], sel)
    seg = ((lo >> off) | ((hi << 1) << (63 - off))) & ((1 << 53) - 1)
    seg = select(valid, seg, const(0, U64)).to(F64)
    scale = const(-53, I32) - shift + select(e >= 1968, const(128, I32), const(0, I32))
    # seg * 2^scale rounded once (seg < 2^53): below 2^-1130 every result rounds to 0; a scale under -1022 is split
    # into an exact 2^-200 step and a second, rounding, multiply by a normal power of two
    scale = maximum(scale, -1130)
    deep = scale < -1022
    p2 = bitcast((select(deep, scale + 200, scale) + 1023).view(U32).zext(U64) << 52, F64)
    return select(deep, seg * _pow2(-200, F64), seg) * p2


valu("v_trig_preop_f64", ("f64", "u32"), "f64", _trig_preop)

__all__ = ["_two_over_pi_bits"]
