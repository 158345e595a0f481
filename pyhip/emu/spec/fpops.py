"""The ISA's floating-point rules, written in the semantics language: min/max with their NaN and signed-zero
rules, denormal flushing by MODE, output modifiers, and the exactly-rounded helpers the manuals' pseudocode
leaves to the hardware (transcendentals evaluated in binary64 and rounded once)."""
from __future__ import annotations

import math

from .lang import fmaxnum, fminnum, nan_free, rare
from .lang import (B1, F16, F32, F64, I32, U16, U32, U64, Node, bitcast, const, copysign, fabs, fbits, floor,
                   fptoint, is_denormal, is_snan, isinf, isnan, quiet, rint, select, signbit, sqrt, EXP_MASK, MANT_BITS,
                   EXP_BIAS)

DEFAULT_NAN64 = 0xFFF8000000000000          # the default NaN of an invalid operation (lang.py's contract)

# MODE register bits (the descriptor's FLOAT_MODE and friends)
MODE_DENORM_F32_IN, MODE_DENORM_F32_OUT = 1 << 4, 1 << 5
MODE_DENORM_F64_IN, MODE_DENORM_F64_OUT = 1 << 6, 1 << 7      # also f16
MODE_DX10_CLAMP, MODE_IEEE = 1 << 8, 1 << 9


def mode_allows(mode, bit: int):
    """Whether MODE has ``bit`` set: a Python bool for a known mode, a B1 node for a mode read at run time."""
    if isinstance(mode, int):
        return bool(mode & bit)
    return (mode & bit).ne(0)


def when(cond, yes: Node, no: Node) -> Node:
    """select() that takes a Python bool as well (a condition known when the instruction is built)."""
    if isinstance(cond, bool):
        return yes if cond else no
    return select(cond, yes, no)


def flush(x: Node, mode, output: bool) -> Node:
    """MODE.FP_DENORM: a denormal input (or result) becomes a zero of its sign unless the mode allows it;
    bits 4/5 rule f32, bits 6/7 f64 and f16."""
    if not x.ty.is_float:
        return x
    bit = (MODE_DENORM_F32_IN if x.ty is F32 else MODE_DENORM_F64_IN) << int(output)
    allowed = mode_allows(mode, bit)
    if allowed is True:
        return x
    flushed = select(is_denormal(x), copysign(const(0.0, x.ty), x), x)
    return when(allowed, x, flushed)


def fmin(a: Node, b: Node, mode=0) -> Node:
    """V_MIN_*: IEEE minNum with -0 < +0 (lang's fminnum); MODE.IEEE quiets a signaling NaN operand."""
    ieee = mode_allows(mode, MODE_IEEE)
    if isinstance(ieee, bool):
        return fminnum(a, b, ieee)
    return select(ieee, fminnum(a, b, True), fminnum(a, b, False))


def fmax(a: Node, b: Node, mode=0) -> Node:
    """V_MAX_*: IEEE maxNum with -0 < +0 (lang's fmaxnum); MODE.IEEE quiets a signaling NaN operand."""
    ieee = mode_allows(mode, MODE_IEEE)
    if isinstance(ieee, bool):
        return fmaxnum(a, b, ieee)
    return select(ieee, fmaxnum(a, b, True), fmaxnum(a, b, False))


def fmin3(a, b, c, mode=0):
    return fmin(fmin(a, b, mode), c, mode)


def fmax3(a, b, c, mode=0):
    return fmax(fmax(a, b, mode), c, mode)


def fmed3(a, b, c, mode=0):
    return fmax(fmin(a, b, mode), fmin(fmax(a, b, mode), c, mode), mode)


OMOD_SCALE = {0: None, 1: 2.0, 2: 4.0, 3: 0.5}


def output_modifiers(x: Node, omod: int, clamp: int, mode) -> Node:
    """VOP3/SDWA output modifiers on a float result: OMOD scales, CLAMP to [0, 1]; a clamped NaN becomes
    0 under MODE.DX10_CLAMP, else passes through."""
    if omod and OMOD_SCALE[omod] is not None:
        x = x * const(OMOD_SCALE[omod], x.ty)
    if clamp:
        zero, one = const(0.0, x.ty), const(1.0, x.ty)
        clipped = select(x < zero, zero, select(x > one, one, x))
        nan_to = when(mode_allows(mode, MODE_DX10_CLAMP), zero, x)
        x = select(isnan(x), nan_to, clipped)
    return x


# ---- exact helpers ------------------------------------------------------------------------------------------------
def widen(x: Node) -> Node:
    return x.to(F64) if x.ty is not F64 else x


def narrow(x: Node, ty) -> Node:
    """A binary64 value rounded once to ``ty`` (f16 through round-to-odd binary32, so only one rounding
    shows)."""
    if ty is F64:
        return x
    if ty is F32:
        return x.to(F32)
    return f64_to_f16(x)


def f64_to_f16(x: Node) -> Node:
    """binary64 → binary16 rounded to nearest even: truncate to binary32 with sticky (round to odd), then
    round to f16 once (24 >= 11 + 2 bits makes the double rounding innocuous)."""
    r = x.to(F32)
    back = r.to(F64)
    # round to odd: where the nearest f32 is farther from zero than x, step one ulp toward zero, then set the
    # last bit when inexact
    rb = r.bits()
    over = fabs(back) > fabs(x)
    rb = select(over & isfinite_f64(x), rb - 1, rb)
    inexact = back.ne(x) & isfinite_f64(x) & (back.eq(back))
    rb = select(inexact, rb | 1, rb)
    return bitcast(rb, F32).to(F16)


def isfinite_f64(x: Node) -> Node:
    return fabs(x).bits() < EXP_MASK[64]


def ldexp(x: Node, e: Node) -> Node:
    """x * 2**e rounded once to x's type (e an I32).  Narrow types are scaled exactly in binary64 and rounded
    at the end; binary64 is scaled as musl's scalbn does (large steps first, so only the last multiply can
    round)."""
    ty = x.ty
    if ty is not F64:
        lim = 400                               # beyond it every f32/f16 result has saturated or flushed
        n = select(e < -lim, const(-lim, I32), select(e > lim, const(lim, I32), e))
        wide = narrow(x.to(F64) * _pow2(n), ty)
        if ty is not F32:
            return wide
        # binary32 with 2**e a normal binary32 (-126 <= e <= 127): one binary32 multiply by the exact power of
        # two is the same correctly rounded product (and the same quieted NaN) as the binary64 product rounded
        # once; tests/emu/test_ldexp_f32.py holds the two together
        if e.is_const:
            k = e.value()
            return x * fbits((k + 127) << 23, F32) if -126 <= k <= 127 else wide
        inside = (e >= -126) & (e <= 127)
        p2 = bitcast((select(inside, e, const(0, I32)) + 127).view(U32) << 23, F32)
        return rare(~inside, wide, x * p2)
    y = x
    n = select(e < -3000, const(-3000, I32), select(e > 3000, const(3000, I32), e))
    for _ in range(2):
        up = n > 1023
        y = select(up, y * fbits(0x7FE0000000000000, F64), y)          # 2**1023
        n = select(up, n - 1023, n)
        down = n < -1022
        y = select(down, y * fbits(0x0360000000000000, F64), y)        # 2**-969 = 2**-1022 * 2**53
        n = select(down, n + 969, n)
    n = select(n > 1023, const(1023, I32), select(n < -1022, const(-1022, I32), n))
    return y * _pow2(n)


def _pow2(e: Node) -> Node:
    """2**e as binary64 for an I32 -1022 <= e <= 1023."""
    return bitcast(((e + 1023).zext(U64) << 52), F64)


def frexp_exp(x: Node) -> Node:
    """The exponent e of x = m * 2**e with 0.5 <= |m| < 1 (I32); 0 for zeros, infinities and NaNs."""
    from .lang import ctlz
    ty = x.ty
    b = fabs(x).bits()
    mb, bias = MANT_BITS[ty.bits], EXP_BIAS[ty.bits]
    field = (b >> mb).to(I32) if ty.bits < 32 else (b >> mb).trunc(U32).view(I32)
    # a denormal's leading bit at position p (from bit 0): value 2**(p - mb + 1 - bias), exponent p - mb + 2 - bias
    lead = ctlz(b).zext(U32).view(I32) if ty.bits < 64 else ctlz(b).trunc(U32).view(I32)
    p = const(ty.bits - 1, I32) - lead
    e = select(field.eq(0), p - (mb - 2 + bias), field - (bias - 1))
    special = b.eq(0) | (b >= EXP_MASK[ty.bits])
    return select(special, const(0, I32), e)


def frexp_mant(x: Node) -> Node:
    """The significand m of x = m * 2**e, 0.5 <= |m| < 1 (x itself for 0, inf and NaN)."""
    special = x.eq(0) | ~isfinite(x)
    return select(special, x, ldexp(x, -frexp_exp(x)))


def isfinite(x: Node) -> Node:
    return fabs(x).bits() < EXP_MASK[x.ty.bits]


def fract(x: Node, below_one_bits: int) -> Node:
    """x - floor(x), at most the largest value below 1 (infinities give NaN through the subtraction)."""
    r = x - floor(x)
    lim = fbits(below_one_bits, x.ty)
    return select(r < lim, r, select(isnan(r), r, lim))


# ---- transcendentals: binary64 evaluation, rounded once to the operand's type --------------------------------------
# Each polynomial is evaluated with plain binary64 multiplies and adds in a fixed order, so both backends compute the
# same bits; the accuracy (about 1e-16 relative) makes the final rounding to f32/f16 correct except within ~2^-29 of a
# rounding boundary (the hardware itself is only within 1 ulp).
_EXP2_COEF = [1.0 / math.factorial(k) * math.log(2) ** k for k in range(14)]
_RINT_SHIFTER = 6755399441055744.0          # 1.5 * 2**52: x + it - it is rint(x) for |x| < 2**51
_EXP2_NARROW_TERMS = 12          # degree 11: truncation error (ln2 / 2)^12 / 12! < 6.4e-15 relative (2^-47)


def _estrin(f: Node, coef: list) -> Node:
    """sum(coef[k] * f**k) by Estrin's scheme: pairs c0 + c1 f, then pairs of those times f^2, f^4, ... (a
    dependency chain of about 2 log2(len) operations instead of Horner's 2 len, which the host overlaps)."""
    terms = [const(c, F64) for c in coef]
    power = f
    while len(terms) > 1:
        nxt = [terms[i] + terms[i + 1] * power for i in range(0, len(terms) - 1, 2)]
        if len(terms) % 2:
            nxt.append(terms[-1])
        terms = nxt
        if len(terms) > 1:
            power = power * power
    return terms[0]


def exp2_f64(x: Node, narrowed: bool = False) -> Node:
    """2**x in binary64 for an f64 x (about 1e-16 relative error), with IEEE special cases.  ``narrowed``: the
    caller rounds the result to binary32 or binary16, so x is clamped to [-200, 200] (2**200 overflows and
    2**-200 rounds to zero in either, as every value beyond does) and 2**n stays a normal binary64: one
    multiply instead of the general scaling; and the polynomial is of degree 11, by Estrin's scheme (relative
    error below 2^-46, so the one rounding to binary32 is the correct one except within 2^-22 ulp of a
    rounding boundary)."""
    if narrowed:
        xc = select(isnan(x), const(0.0, F64), select(x > 200.0, const(200.0, F64),
                                                       select(x < -200.0, const(-200.0, F64), x)))
    else:
        big = x > 1100.0
        small = x < -1100.0
        xc = select(big | small | isnan(x), const(0.0, F64), x)
    with nan_free():                                  # no NaN reaches these
        if narrowed:
            r = _exp2_clamped(xc)
        else:
            n = rint(xc)
            f = xc - n                                # exact, |f| <= 0.5
            p = const(_EXP2_COEF[-1], F64)
            for c in reversed(_EXP2_COEF[:-1]):
                p = p * f + c
            r = ldexp(p, fptoint(n, I32))
    if not narrowed:
        r = select(big, const(math.inf, F64), select(small, const(0.0, F64), r))
    return select(isnan(x), quiet(x), r)


def _exp2_clamped(xc: Node) -> Node:
    """2**xc in binary64 for an f64 -200 <= xc <= 200 (exp2_f64's narrowed evaluation).  Adding 1.5 * 2**52
    rounds xc to an integer n (ties to even, as rint) that lands in the sum's low mantissa bits, the sum's
    exponent being fixed; so n is the sum minus the shifter (exact), and 2**n is those low bits moved into the
    exponent field plus the bias."""
    t = xc + _RINT_SHIFTER
    n = t - _RINT_SHIFTER
    f = xc - n                                        # exact, |f| <= 0.5
    p2 = bitcast((t.bits() << 52) + const(1023 << 52, U64), F64)
    return _estrin(f, _EXP2_COEF[:_EXP2_NARROW_TERMS]) * p2


def exp2_f32(a: Node) -> Node:
    """2**a rounded once to binary32 for an f32 ``a`` (V_EXP_F32): exp2_f64(a widened, narrowed=True) rounded
    to binary32, with the clamp and the NaN rule done in binary32 instead — the same values (±200 are binary32
    values, the comparisons are exact, and a binary32 NaN widened, quieted and rounded back is that NaN
    quieted) on one vector of lanes where binary64 takes two."""
    nan = isnan(a)
    ac = select(nan, const(0.0, F32), select(a > 200.0, const(200.0, F32), select(a < -200.0, const(-200.0, F32), a)))
    with nan_free():                                  # no NaN reaches these
        r = _exp2_clamped(ac.to(F64)).to(F32)
    return select(nan, quiet(a), r)


_LN2_HI = math.log(2)


def log2_f64(x: Node) -> Node:
    """log2(x) in binary64 for an f64 x: -inf at ±0, NaN below zero, +inf at +inf."""
    xs = select(isnan(x) | (x <= 0.0) | isinf(x), const(1.0, F64), x)
    with nan_free():                        # the special cases are selected below
        e = frexp_exp(xs)
        m = frexp_mant(xs)                  # [0.5, 1)
        adj = m < math.sqrt(0.5)
        m = select(adj, m * 2.0, m)
        e = select(adj, e - 1, e)
        s = (m - 1.0) / (m + 1.0)          # |s| <= 0.1716
        s2 = s * s
        # atanh series: log(m) = 2 (s + s^3/3 + s^5/5 + ...)
        p = const(1.0 / 41, F64)
        for k in range(39, 0, -2):
            p = p * s2 + 1.0 / k
        lnm = (s * 2.0) * p
        r = lnm * (1.0 / _LN2_HI) + e.to(F64)
    zero = x.eq(0.0)
    r = select(zero, const(-math.inf, F64), r)
    r = select(x < 0.0, fbits(DEFAULT_NAN64, F64), r)
    r = select(isinf(x) & ~signbit(x), const(math.inf, F64), r)
    return select(isnan(x), quiet(x), r)


def _horner_odd(t: Node, t2: Node) -> Node:
    coef = [((-1) ** j) / math.factorial(2 * j + 1) for j in range(12)]
    p = const(coef[-1], F64)
    for c in reversed(coef[:-1]):
        p = p * t2 + c
    return t * p


def _cos_poly(r: Node) -> Node:
    t = r * (2 * math.pi)
    t2 = t * t
    coef = [((-1) ** j) / math.factorial(2 * j) for j in range(12)]
    p = const(coef[-1], F64)
    for c in reversed(coef[:-1]):
        p = p * t2 + c
    return p


def sin_turns(x: Node) -> Node:
    """sin(2*pi*x) in binary64 for an f64 x (V_SIN_*: the argument in revolutions)."""
    xr = select(isinf(x) | isnan(x), const(0.0, F64), x)
    with nan_free():                                # special inputs are selected below
        r = xr - rint(xr)                               # [-0.5, 0.5], exact
        q = rint(r * 4.0)                               # quadrant -2..2
        f = r - q * 0.25                                # [-0.125, 0.125]
        qi = fptoint(q, I32) & 3
        s, c = _horner_odd(f * (2 * math.pi), (f * (2 * math.pi)) * (f * (2 * math.pi))), _cos_poly(f)
        res = select(qi.eq(0), s, select(qi.eq(1), c, select(qi.eq(2), -s, -c)))
        # sin of an exact integer or half-integer turn is a zero of the argument's sign
        res = select(f.eq(0.0) & (qi.eq(0) | qi.eq(2)), copysign(const(0.0, F64), select(qi.eq(0), x, -x)), res)
    bad = isinf(x) | isnan(x)
    return select(bad, select(isnan(x), quiet(x), fbits(DEFAULT_NAN64, F64)), res)


def cos_turns(x: Node) -> Node:
    """cos(2*pi*x) in binary64."""
    xr = select(isinf(x) | isnan(x), const(0.0, F64), x)
    with nan_free():                                # special inputs are selected below
        r = xr - rint(xr)
        q = rint(r * 4.0)
        f = r - q * 0.25
        qi = fptoint(q, I32) & 3
        s, c = _horner_odd(f * (2 * math.pi), (f * (2 * math.pi)) * (f * (2 * math.pi))), _cos_poly(f)
        res = select(qi.eq(0), c, select(qi.eq(1), -s, select(qi.eq(2), -c, s)))
    bad = isinf(x) | isnan(x)
    return select(bad, select(isnan(x), quiet(x), fbits(DEFAULT_NAN64, F64)), res)


def rsqrt_f64(x: Node) -> Node:
    return const(1.0, F64) / sqrt(x)


__all__ = ["flush", "fmin", "fmax", "fmin3", "fmax3", "fmed3", "output_modifiers", "ldexp", "frexp_exp", "frexp_mant",
           "exp2_f64", "exp2_f32", "log2_f64", "sin_turns", "cos_turns", "narrow", "widen", "f64_to_f16", "when", "mode_allows",
           "fract", "rsqrt_f64", "B1", "F16", "F32", "F64", "I32", "U16", "U32", "U64", "fptoint"]
