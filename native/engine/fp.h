/* Floating-point helpers of the memory atomics and the MFMA handler, each the exact counterpart of what the
 * numpy reference computes: numpy's half-precision conversions (npy_floatbits_to_halfbits & co.: nearest
 * even, NaN payloads kept and never quieted), x86 NaN propagation of numpy's binary ops (the first NaN
 * operand, quieted) and pyhip/emu/fp.py's fused multiply-add (error-free transformations, rounding to odd). */
#ifndef PYHIP_FP_H
#define PYHIP_FP_H

#include "engine.h"

INLINE float u2f(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
INLINE uint32_t f2u(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
INLINE double u2d(uint64_t u) { double f; memcpy(&f, &u, 8); return f; }
INLINE uint64_t d2u(double f) { uint64_t u; memcpy(&u, &f, 8); return u; }

/* ---- half precision (numpy's conversions) ----------------------------------------------------------- */
INLINE uint16_t f32_to_f16(uint32_t f) {
    uint32_t f_exp = f & 0x7f800000u, f_sig;
    uint16_t h_sgn = (uint16_t)((f & 0x80000000u) >> 16), h_exp, h_sig;
    if (f_exp >= 0x47800000u) {
        if (f_exp == 0x7f800000u) {
            f_sig = f & 0x007fffffu;
            if (f_sig != 0) {
                uint16_t ret = (uint16_t)(0x7c00u + (f_sig >> 13));
                if (ret == 0x7c00u) ret++;
                return (uint16_t)(h_sgn + ret);
            }
            return (uint16_t)(h_sgn + 0x7c00u);
        }
        return (uint16_t)(h_sgn + 0x7c00u);
    }
    if (f_exp <= 0x38000000u) {
        if (f_exp < 0x33000000u) return h_sgn;
        f_exp >>= 23;
        f_sig = 0x00800000u + (f & 0x007fffffu);
        f_sig >>= (113 - f_exp);
        if (((f_sig & 0x00003fffu) != 0x00001000u) || (f & 0x000007ffu)) f_sig += 0x00001000u;
        h_sig = (uint16_t)(f_sig >> 13);
        return (uint16_t)(h_sgn + h_sig);
    }
    h_exp = (uint16_t)((f_exp - 0x38000000u) >> 13);
    f_sig = f & 0x007fffffu;
    if ((f_sig & 0x00003fffu) != 0x00001000u) f_sig += 0x00001000u;
    h_sig = (uint16_t)(f_sig >> 13);
    return (uint16_t)(h_sgn + h_exp + h_sig);
}

INLINE uint32_t f16_to_f32(uint16_t h) {
    uint16_t h_exp = h & 0x7c00u, h_sig;
    uint32_t f_sgn = ((uint32_t)h & 0x8000u) << 16, f_exp, f_sig;
    switch (h_exp) {
    case 0x0000u:
        h_sig = h & 0x03ffu;
        if (h_sig == 0) return f_sgn;
        h_sig <<= 1;
        while ((h_sig & 0x0400u) == 0) { h_sig <<= 1; h_exp++; }
        f_exp = ((uint32_t)(127 - 15 - h_exp)) << 23;
        f_sig = ((uint32_t)(h_sig & 0x03ffu)) << 13;
        return f_sgn + f_exp + f_sig;
    case 0x7c00u:
        return f_sgn + 0x7f800000u + (((uint32_t)(h & 0x03ffu)) << 13);
    default:
        return f_sgn + (((uint32_t)(h & 0x7fffu) + 0x1c000u) << 13);
    }
}

INLINE uint64_t f16_to_f64(uint16_t h) {
    uint16_t h_exp = h & 0x7c00u, h_sig;
    uint64_t d_sgn = ((uint64_t)h & 0x8000u) << 48, d_exp, d_sig;
    switch (h_exp) {
    case 0x0000u:
        h_sig = h & 0x03ffu;
        if (h_sig == 0) return d_sgn;
        h_sig <<= 1;
        while ((h_sig & 0x0400u) == 0) { h_sig <<= 1; h_exp++; }
        d_exp = ((uint64_t)(1023 - 15 - h_exp)) << 52;
        d_sig = ((uint64_t)(h_sig & 0x03ffu)) << 42;
        return d_sgn + d_exp + d_sig;
    case 0x7c00u:
        return d_sgn + 0x7ff0000000000000ULL + (((uint64_t)(h & 0x03ffu)) << 42);
    default:
        return d_sgn + (((uint64_t)(h & 0x7fffu) + 0xfc000u) << 42);
    }
}

/* binary64 -> binary16, rounded to nearest even once (numpy's astype(float16)); a NaN keeps the top ten bits
 * of its significand (at least one set) */
INLINE uint16_t f64_to_f16(uint64_t d) {
    uint16_t sign = (uint16_t)(d >> 48) & 0x8000;
    uint64_t a = d & 0x7FFFFFFFFFFFFFFFULL;
    if (a >= 0x7FF0000000000000ULL) {
        if (a == 0x7FF0000000000000ULL) return sign | 0x7C00;
        uint16_t h = (uint16_t)(0x7C00 | (a >> 42 & 0x3FF));
        return sign | (h == 0x7C00 ? 0x7C01 : h);
    }
    int e = (int)(a >> 52) - 1023;
    if (e >= 16) return sign | 0x7C00;
    uint64_t m = (a & 0xFFFFFFFFFFFFFULL) | (a >> 52 ? 1ULL << 52 : 0);
    int shift = e >= -14 ? 42 : 42 + (-14 - e);          /* below 2^-14: a subnormal half */
    if (shift > 54) return sign;                          /* under half the smallest subnormal */
    uint64_t q = m >> shift, r = m & ((1ULL << shift) - 1), halfway = 1ULL << (shift - 1);
    if (r > halfway || (r == halfway && (q & 1))) q++;
    uint32_t h = e >= -14 ? (uint32_t)((e + 15) << 10) + (uint32_t)q - 0x400 : (uint32_t)q;
    return sign | (uint16_t)(h > 0x7C00 ? 0x7C00 : h);
}
INLINE float h2f(uint32_t h) { return u2f(f16_to_f32((uint16_t)h)); }
INLINE double h2d(uint32_t h) { return u2d(f16_to_f64((uint16_t)h)); }
INLINE uint32_t f2h(float f) { return f32_to_f16(f2u(f)); }

/* ---- NaN propagation as numpy's binary float ops produce it (x86: the first NaN operand, quieted) ----
 * Written on the bit patterns with integer compares and selects, so the per-lane loops vectorize. */
INLINE double qd(double a) { return u2d(d2u(a) | 0x0008000000000000ULL); }
INLINE uint32_t isnan32(uint32_t u) { return (int32_t)(u & 0x7fffffffu) > (int32_t)0x7f800000; }
INLINE uint64_t isnan64(uint64_t u) { return (int64_t)(u & 0x7fffffffffffffffULL) > (int64_t)0x7ff0000000000000LL; }
INLINE float nan2f(float a, float b, float r) {
    uint32_t ua = f2u(a), ub = f2u(b);
    uint32_t q = isnan32(ua) ? (ua | 0x00400000u) : (ub | 0x00400000u);
    return (isnan32(ua) | isnan32(ub)) ? u2f(q) : r;
}
INLINE double nan2d(double a, double b, double r) {
    uint64_t ua = d2u(a), ub = d2u(b);
    uint64_t q = isnan64(ua) ? (ua | 0x0008000000000000ULL) : (ub | 0x0008000000000000ULL);
    return (isnan64(ua) | isnan64(ub)) ? u2d(q) : r;
}
INLINE float addf(float a, float b) { return nan2f(a, b, a + b); }
INLINE double addd(double a, double b) { return nan2d(a, b, a + b); }

/* ---- fused multiply-add (pyhip/emu/fp.py) ----------------------------------------------------------- */
INLINE void two_sum(double a, double b, double* s, double* e) {
    double x = a + b;
    double bb = x - a;
    *e = (a - (x - bb)) + (b - bb);
    *s = x;
}

INLINE double round_to_odd_sum(double x, double y) {
    double s, e;
    two_sum(x, y, &s, &e);
    uint64_t bits = d2u(s);
    int inexact = (e != 0) && isfinite(s);
    if (inexact && (bits & 1) == 0) {
        int64_t toward = ((e > 0) == (s > 0)) ? 1 : -1;
        if (s == 0) toward = e > 0 ? 1 : -1;
        bits = (uint64_t)((int64_t)bits + toward);
        s = u2d(bits);
    }
    return s;
}

#define SPLIT 134217729.0
INLINE void two_prod(double a, double b, double* p, double* e) {
    double x = a * b;
    double ca = SPLIT * a, ah = ca - (ca - a), al = a - ah;
    double cb = SPLIT * b, bh = cb - (cb - b), bl = b - bh;
    *e = ((ah * bh - x) + ah * bl + al * bh) + al * bl;
    *p = x;
}

/* fp.fma64: Boldo-Melquiond; lanes the error-free transformations cannot hold are either IEEE a*b+c
 * (non-finite inputs) or correctly rounded (fp.fma_exact: glibc's fma is correctly rounded) */
static __attribute__((noinline)) double fma64_bm(double a, double b, double c) {
    double uh, ul, th, tl, vh, vl;
    two_prod(a, b, &uh, &ul);
    two_sum(c, ul, &th, &tl);
    two_sum(uh, th, &vh, &vl);
    double z = round_to_odd_sum(tl, vl);
    double r = vh + z;
    double naive = a * b + c;
    int bad = !isfinite(r) || !isfinite(uh) || fabs(a) > 1e300 || fabs(b) > 1e300 || (fabs(uh) < 1e-290 && uh != 0);
    if (!bad) return r;
    if (isfinite(a) && isfinite(b) && isfinite(c)) {
        if (a == 0 || b == 0) {
            /* an exact zero result keeps the signed-zero rules of a*b + c; otherwise fma rounds once */
            double v = fma(a, b, c);
            return v == 0 ? naive : v;
        }
        /* glibc's fma is correctly rounded: +0 for an exact cancellation, and a non-zero sum too small
         * for a subnormal keeps its sign (the reference's exact rational rounds to -0 as well) */
        return fma(a, b, c);
    }
    return naive;
}

/* Inside the domain below Boldo-Melquiond's algorithm provably returns the correctly rounded a*b + c (no
 * overflow, every partial product of Dekker's split a normal number, a non-zero result far from the
 * subnormals), which is what the host's fused multiply-add computes in one instruction, as it does for an
 * exact zero product and a finite non-zero c (both give c); comparisons fail for NaNs, so those and every
 * other case take the transcription above.  test_isa_ops.py::test_fma_f64_around_the_fast_domain checks
 * operands on both sides of every edge against exact rationals. */
INLINE int fma64_fast_ok(double a, double b, double c, double r) {
    double fa = fabs(a), fb = fabs(b), fc = fabs(c);
    /* or an exact zero product of finite operands and a finite non-zero c: both give c */
    /* (bitwise & and |: no branches, so lane loops vectorise) */
    return ((fa <= 0x1p500) & (fa >= 0x1p-400) & (fb <= 0x1p500) & (fb >= 0x1p-400) & (fc <= 0x1p900) &
            (fabs(r) >= 0x1p-800)) |
           (((fa == 0) | (fb == 0)) & (fa <= 0x1.fffffffffffffp1023) & (fb <= 0x1.fffffffffffffp1023) & (fc != 0) &
            (fc <= 0x1.fffffffffffffp1023));
}
INLINE double fma64(double a, double b, double c) {
#if defined(__FMA__)
    double r = __builtin_fma(a, b, c);
    if (fma64_fast_ok(a, b, c, r)) return r;
#endif
    return fma64_bm(a, b, c);
}

#endif
