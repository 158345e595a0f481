"""Exact floating-point helpers the ISA needs and numpy lacks: correctly rounded fused multiply-add for
f32 and f64 (error-free transformations and rounding to odd), applied element-wise on arrays."""
from __future__ import annotations

import numpy as np

_SPLIT = 134217729.0   # 2^27 + 1 (Veltkamp split for binary64)


def two_sum(a, b):
    s = a + b
    bb = s - a
    err = (a - (s - bb)) + (b - bb)
    return s, err


def two_prod(a, b):
    p = a * b
    ca = _SPLIT * a
    ah = ca - (ca - a)
    al = a - ah
    cb = _SPLIT * b
    bh = cb - (cb - b)
    bl = b - bh
    err = ((ah * bh - p) + ah * bl + al * bh) + al * bl
    return p, err


def _round_to_odd_sum(x, y):
    """x + y rounded to odd (binary64): inexact results get an odd last mantissa bit."""
    s, e = two_sum(x, y)
    bits = s.view(np.int64)
    inexact = (e != 0) & np.isfinite(s)
    even = (bits & 1) == 0
    fix = inexact & even
    if fix.any():
        # move one ulp towards the exact value (direction of e relative to s's sign)
        toward = np.where((e > 0) == (s > 0), 1, -1)
        toward = np.where(s == 0, np.where(e > 0, 1, -1), toward)
        bits = bits.copy()
        bits[fix] += toward[fix] if s.ndim else toward
        s = bits.view(np.float64)
    return s


round_to_odd_sum = _round_to_odd_sum


def fma64(a, b, c):
    """Correctly rounded a*b+c for float64 arrays (Boldo–Melquiond with rounding to odd)."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    c = np.asarray(c, dtype=np.float64)
    with np.errstate(all="ignore"):
        uh, ul = two_prod(a, b)
        th, tl = two_sum(c, ul)
        vh, vl = two_sum(uh, th)
        z = _round_to_odd_sum(tl, vl)
        r = vh + z
        naive = a * b + c
        # special values, overflow of the split, and results where the EFTs do not hold (a product that
        # underflowed to zero still carries its sign into a*b + c: exact path); an exactly zero product
        # (a or b zero) makes a*b + c exact: IEEE's signed-zero rules through ``naive``
        zero = (a == 0) | (b == 0)
        bad = ~np.isfinite(r) | ~np.isfinite(uh) | (np.abs(a) > 1e300) | (np.abs(b) > 1e300) \
            | (np.abs(uh) < 1e-290) & ((uh != 0) | ~zero) | zero
        if bad.any():
            # a finite product (exact, whatever its size) plus an infinite c is c
            naive = np.where(np.isinf(c) & np.isfinite(a) & np.isfinite(b), c, naive)
            r = np.where(bad, naive, r)
            bad &= ~zero
            # extreme exponents (the splits overflow or the error terms underflow): exact rational
            # arithmetic for those few finite lanes; non-finite inputs follow IEEE through ``naive``
            slow = bad & np.isfinite(a) & np.isfinite(b) & np.isfinite(c)
            if slow.any():
                r = np.array(r, dtype=np.float64, copy=True)
                r[slow] = fma_exact(a[slow] if a.ndim else a, b[slow] if b.ndim else b,
                                    c[slow] if c.ndim else c, np.broadcast_to(naive, slow.shape)[slow])
    return r


def round_fraction64(v) -> float:
    """Nearest binary64 (ties to even) of an exact rational; CPython's int/int division rounds correctly."""
    try:
        return float(v)
    except OverflowError:
        return float("inf") if v > 0 else float("-inf")


def fma_exact(a, b, c, naive):
    """Correctly rounded a*b+c for finite float64 values, one lane at a time (a cold path: only lanes
    whose exponents defeat the error-free transformations come here)."""
    from fractions import Fraction

    a, b, c = np.broadcast_arrays(np.atleast_1d(a), np.atleast_1d(b), np.atleast_1d(c))
    naive = np.broadcast_to(np.atleast_1d(naive), a.shape)
    out = np.empty(a.shape, dtype=np.float64)
    for i in range(a.size):
        x, y, z = float(a.flat[i]), float(b.flat[i]), float(c.flat[i])
        v = Fraction(x) * Fraction(y) + Fraction(z)
        if v == 0:
            # exact zero: signed-zero rules of x*y + z (x*y exactly zero) or +0 for a cancellation
            out.flat[i] = naive.flat[i] if x == 0 or y == 0 else 0.0
        else:
            out.flat[i] = round_fraction64(v)
    return out


def fma32(a, b, c):
    """Correctly rounded a*b+c for float32 arrays: the product is exact in binary64, the sum is rounded
    to odd in binary64 and then to nearest binary32 (53 >= 24 + 2 makes this exact)."""
    a64 = np.asarray(a, dtype=np.float32).astype(np.float64)
    b64 = np.asarray(b, dtype=np.float32).astype(np.float64)
    c64 = np.asarray(c, dtype=np.float32).astype(np.float64)
    with np.errstate(all="ignore"):
        p = a64 * b64
        s = _round_to_odd_sum(p, c64)
        return s.astype(np.float32)


def _minmax(a, b, pick, keep_negative_zero):
    """``pick`` (np.fmax / np.fmin: a NaN operand yields the other), with -0 < +0 as the ISA orders zeros."""
    r = pick(a, b)
    z = r == 0
    if z.any():
        neg = np.signbit(a)
        both = z & (a == 0) & (b == 0)
        r = np.where(both, np.where(neg == keep_negative_zero, a, b), r)
    return r


def fmax(a, b):
    """IEEE maxNum as the ISA defines V_MAX_*: a NaN operand yields the other; -0 < +0."""
    return _minmax(a, b, np.fmax, False)


def fmin(a, b):
    """IEEE minNum as the ISA defines V_MIN_*: a NaN operand yields the other; -0 < +0."""
    return _minmax(a, b, np.fmin, True)

_QUIET = {np.dtype(np.float16): (np.uint16, 0x0200), np.dtype(np.float32): (np.uint32, 0x00400000),
          np.dtype(np.float64): (np.uint64, 0x0008000000000000)}


def _snan_quieted(a, b, r):
    """MODE.IEEE: a signaling NaN operand of V_MIN/V_MAX yields that NaN quieted instead of the other
    operand."""
    nan_in = np.isnan(a) | np.isnan(b)
    if not nan_in.any():
        return r
    ut, q = _QUIET[np.asarray(r).dtype]
    out = np.array(r, copy=True)
    for x in (b, a):                                  # S0's NaN wins when both are signaling
        xb = np.broadcast_to(np.asarray(x), out.shape)
        bits = np.ascontiguousarray(xb).view(ut)
        snan = np.isnan(xb) & ((bits & ut(q)) == 0)
        if snan.any():
            out = np.where(snan, (bits | ut(q)).view(out.dtype), out)
    return out


def fmax_mode(a, b, mode=0x200):
    r = fmax(a, b)
    return _snan_quieted(a, b, r) if mode & 0x200 else r


def fmin_mode(a, b, mode=0x200):
    r = fmin(a, b)
    return _snan_quieted(a, b, r) if mode & 0x200 else r


fmax_mode.mode_aware = fmin_mode.mode_aware = True
