"""The division helpers of the VALU: V_DIV_SCALE, V_DIV_FMAS and V_DIV_FIXUP (f32 and f64), the pieces of
LLVM's correctly rounded division sequence, as the ISA pseudocode defines them."""
from __future__ import annotations

import numpy as np

from .. import fp
from . import register
from .common import F32, F64, U32, U64, readers, store32, store64
from .valu import ERR


def _exponent(x, width):
    """The biased exponent field of each float."""
    if width == 64:
        return ((x.view(U64) >> U64(52)) & U64(0x7FF)).astype(np.int64)
    return ((x.view(U32) >> U32(23)) & U32(0xFF)).astype(np.int64)


def _is_denorm(x, width):
    tiny = 2.0 ** -1022 if width == 64 else 2.0 ** -126
    return (x != 0) & (np.abs(x) < tiny)


def _div_scale(width):
    """V_DIV_SCALE (ISA pseudocode): scale numerator or denominator by 2^±128 (f64) / 2^±64 (f32) so
    the reciprocal refinement stays in range; VCC tells V_DIV_FMAS to undo a quotient scaling."""
    def factory(inst, K):
        rds = readers(inst, 3, (width,) * 3, is_float=True)
        sdst = inst.fields["sdst"]
        ft, ut = (F64, U64) if width == 64 else (F32, U32)
        big, sc, tiny_exp = (768, 128, 53) if width == 64 else (96, 64, 23)

        def run(st, w):
            m = st.exec_mask(w)
            s0, s1, s2 = (r(st, w).view(ft) for r in rds)   # s0 = value to scale; s1 = denominator; s2 = numerator
            with ERR:
                e1, e2 = _exponent(s1, width), _exponent(s2, width)
                rcp_den = _is_denorm(ft(1.0) / s1, width)
                quo_den = _is_denorm(s2 / s1, width)
                up, down = np.ldexp(s0, sc).astype(ft), np.ldexp(s0, -sc).astype(ft)
                zero = (s2 == 0) | (s1 == 0)
                c_big = ~zero & (e2 - e1 >= big)
                c_dden = ~zero & ~c_big & _is_denorm(s1, width)
                c_both = ~zero & ~c_big & ~c_dden & rcp_den & quo_den
                c_rcp = ~zero & ~c_big & ~c_dden & ~c_both & rcp_den
                c_quo = ~zero & ~c_big & ~c_dden & ~c_both & ~c_rcp & quo_den
                c_tiny = ~zero & ~c_big & ~c_dden & ~c_both & ~c_rcp & ~c_quo & (e2 <= tiny_exp)
                res = s0.copy()
                res = np.where(c_big & (s0 == s1), up, res)
                res = np.where(c_dden, up, res)
                res = np.where(c_both & (s0 == s1), down, res)
                res = np.where(c_rcp, down, res)
                res = np.where(c_quo & (s0 == s2), up, res)
                res = np.where(c_tiny, up, res)
                res = np.where(zero | np.isnan(s1) | np.isnan(s2), ft(np.nan), res)
                vcc = c_big | c_both | c_quo
            (store64 if width == 64 else store32)(inst, st, w, res.astype(ft).view(ut), m)
            st.set_sgpr_mask(w, sdst, vcc & m)
        return run
    return factory


register("v_div_scale_f32", _div_scale(32))
register("v_div_scale_f64", _div_scale(64))


def _scaled_fma_exact(a, b, c, k, ft):
    """Correctly rounded fma(a, b, c) * 2^k for a few lanes (denormal results: one rounding, not two)."""
    from fractions import Fraction

    out = np.empty(len(a), dtype=ft)
    for i in range(len(a)):
        x, y, z = float(a[i]), float(b[i]), float(c[i])
        if not all(np.isfinite(v) for v in (x, y, z)):
            out[i] = ft(np.ldexp(fp.fma64(np.array([x]), np.array([y]), np.array([z]))[0], int(k[i])))
            continue
        v = (Fraction(x) * Fraction(y) + Fraction(z)) * Fraction(2) ** int(k[i])
        out[i] = _round_fraction(v, ft)
    return out


def _round_fraction(v, ft):
    from fractions import Fraction

    f = ft(float(v))
    best = None
    for cand in (np.nextafter(f, ft(-np.inf)), f, np.nextafter(f, ft(np.inf))):
        if not np.isfinite(cand):
            continue
        d = abs(Fraction(float(cand)) - v)
        even = int(np.array([cand], dtype=ft).view(U64 if ft is F64 else U32)[0]) & 1 == 0
        if best is None or d < best[0] or (d == best[0] and even):
            best = (d, cand)
    return best[1] if best is not None else f


def _div_fmas(width):
    """V_DIV_FMAS: fma, scaled by 2^+128 (quotient estimate S2 >= 1) or 2^-128 (S2 < 1) where VCC is set
    (f32: 2^±64) with a single rounding."""
    def factory(inst, K):
        rds = readers(inst, 3, (width,) * 3, is_float=True)
        ft, ut = (F64, U64) if width == 64 else (F32, U32)
        fma = fp.fma64 if width == 64 else fp.fma32
        sc, bias = (128, 1023) if width == 64 else (64, 127)
        tiny = 2.0 ** -1022 if width == 64 else 2.0 ** -126

        def run(st, w):
            m = st.exec_mask(w)
            a, b, c = (r(st, w).view(ft) for r in rds)
            with ERR:
                r = fma(a, b, c)
                v = st.vcc_mask(w) & m
                if v.any():
                    k = np.where(_exponent(c, width) >= bias, sc, -sc)
                    scaled = np.ldexp(r, k).astype(ft)
                    fix = v & (np.abs(scaled) < tiny) & (r != 0) & np.isfinite(r)    # denormal: round once
                    if fix.any():
                        scaled[fix] = _scaled_fma_exact(a[fix], b[fix], c[fix], k[fix], ft)
                    r = np.where(v, scaled, r)
            (store64 if width == 64 else store32)(inst, st, w, r.view(ut), m)
        return run
    return factory


register("v_div_fmas_f32", _div_fmas(32))
register("v_div_fmas_f64", _div_fmas(64))


def _div_fixup(width):
    """V_DIV_FIXUP (ISA pseudocode): special cases of n/d from the numerator and denominator, otherwise
    the quotient's magnitude with the sign of n/d."""
    def factory(inst, K):
        rds = readers(inst, 3, (width,) * 3, is_float=True)
        ft, ut = (F64, U64) if width == 64 else (F32, U32)

        def run(st, w):
            m = st.exec_mask(w)
            q, d, n = (r(st, w).view(ft) for r in rds)     # s0 quotient estimate, s1 denominator, s2 numerator
            with ERR:
                exact = n / d                                 # IEEE division: the special cases fixup handles
                special = np.isnan(d) | np.isnan(n) | (d == 0) | np.isinf(d) | np.isinf(n) | (n == 0)
                r = np.where(special, exact, q)
                sign = np.signbit(n) ^ np.signbit(d)
                r = np.where(~special, np.copysign(np.abs(q), np.where(sign, -1.0, 1.0)).astype(ft), r)
                # exponent(n) - exponent(d) below the denormal range: the quotient underflows to zero;
                # otherwise a NaN estimate from finite, nonzero operands is an overflow in the refinement
                under = ~special & (_exponent(n, width) - _exponent(d, width) < (-1075 if width == 64 else -150))
                r = np.where(~special & ~under & np.isnan(q), np.where(sign, ft(-np.inf), ft(np.inf)), r)
                r = np.where(under, np.where(sign, ft(-0.0), ft(0.0)), r)
            (store64 if width == 64 else store32)(inst, st, w, r.view(ut), m)
        return run
    return factory


register("v_div_fixup_f32", _div_fixup(32))
register("v_div_fixup_f64", _div_fixup(64))
