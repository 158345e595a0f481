/* Floating-point helpers, each the exact counterpart of what the numpy reference computes:
 * numpy's half-precision conversions (npy_floatbits_to_halfbits & co.: nearest even, NaN payloads kept
 * and never quieted), x86 NaN propagation of numpy's binary ops (the first NaN operand, quieted),
 * pyhip/emu/fp.py's fused multiply-adds (error-free transformations, rounding to odd) and the ISA's
 * min/max (fmax/fmin with -0 < +0, MODE.IEEE quieting a signaling NaN operand). */
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

INLINE uint16_t f64_to_f16(uint64_t d) {
    uint64_t d_exp = d & 0x7ff0000000000000ULL, d_sig;
    uint16_t h_sgn = (uint16_t)((d & 0x8000000000000000ULL) >> 48), h_exp, h_sig;
    if (d_exp >= 0x40f0000000000000ULL) {
        if (d_exp == 0x7ff0000000000000ULL) {
            d_sig = d & 0x000fffffffffffffULL;
            if (d_sig != 0) {
                uint16_t ret = (uint16_t)(0x7c00u + (d_sig >> 42));
                if (ret == 0x7c00u) ret++;
                return (uint16_t)(h_sgn + ret);
            }
            return (uint16_t)(h_sgn + 0x7c00u);
        }
        return (uint16_t)(h_sgn + 0x7c00u);
    }
    if (d_exp <= 0x3f00000000000000ULL) {
        if (d_exp < 0x3e60000000000000ULL) return h_sgn;
        d_exp >>= 52;
        d_sig = 0x0010000000000000ULL + (d & 0x000fffffffffffffULL);
        d_sig <<= (d_exp - 998);
        if ((d_sig & 0x003fffffffffffffULL) != 0x0010000000000000ULL) d_sig += 0x0010000000000000ULL;
        h_sig = (uint16_t)(d_sig >> 53);
        return (uint16_t)(h_sgn + h_sig);
    }
    h_exp = (uint16_t)((d_exp - 0x3f00000000000000ULL) >> 42);
    d_sig = d & 0x000fffffffffffffULL;
    if ((d_sig & 0x000007ffffffffffULL) != 0x0000020000000000ULL) d_sig += 0x0000020000000000ULL;
    h_sig = (uint16_t)(d_sig >> 42);
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

INLINE float h2f(uint32_t h) { return u2f(f16_to_f32((uint16_t)h)); }
INLINE double h2d(uint32_t h) { return u2d(f16_to_f64((uint16_t)h)); }
INLINE uint32_t f2h(float f) { return f32_to_f16(f2u(f)); }
INLINE uint32_t d2h(double d) { return f64_to_f16(d2u(d)); }

/* ---- NaN propagation as numpy's binary float ops produce it (x86: the first NaN operand, quieted) ----
 * Written on the bit patterns with integer compares and selects, so the per-lane loops vectorize. */
INLINE float qf(float a) { return u2f(f2u(a) | 0x00400000u); }
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
INLINE float subf(float a, float b) { return nan2f(a, b, a - b); }
INLINE float mulf(float a, float b) { return nan2f(a, b, a * b); }
INLINE float divf(float a, float b) { return nan2f(a, b, a / b); }
INLINE double addd(double a, double b) { return nan2d(a, b, a + b); }
INLINE double subd(double a, double b) { return nan2d(a, b, a - b); }
INLINE double muld(double a, double b) { return nan2d(a, b, a * b); }
INLINE double divd(double a, double b) { return nan2d(a, b, a / b); }

/* ldexpf / ldexp without the library call where the scaling is one exact multiplication: binary32 values
 * scaled by 2^k, |k| <= 300, stay inside binary64's normal range (one rounding, in the conversion back,
 * as ldexpf rounds once); a normal binary64 whose scaled exponent stays normal is scaled exactly */
INLINE float ldexp32(float x, int k) {
    if (LIKELY(k >= -300 && k <= 300)) return (float)((double)x * u2d((uint64_t)(k + 1023) << 52));
    return ldexpf(x, k);
}
INLINE double ldexp64(double x, int k) {
    int e = (int)((d2u(x) >> 52) & 0x7FF);
    if (LIKELY(e != 0 && e != 0x7FF && k >= -1022 && k <= 1023 && e + k >= 1 && e + k <= 2046))
        return x * u2d((uint64_t)(k + 1023) << 52);
    return ldexp(x, k);
}

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

/* fp.fma32: product exact in binary64, the sum rounded to odd, then to nearest binary32.  For finite
 * operands that is the correctly rounded a*b + c (53 >= 24 + 2 bits, no binary64 underflow or overflow),
 * which the host's fused multiply-add computes in one instruction; a non-finite result (only non-finite
 * operands or an overflow give one) takes the transcription. */
INLINE float fma32(float a, float b, float c) {
#if defined(__FMA__)
    float r = __builtin_fmaf(a, b, c);
    if (LIKELY(isfinite(r))) return r;
#endif
    double p = (double)a * (double)b;
    return (float)round_to_odd_sum(p, (double)c);
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

/* ---- min / max (fp.fmax / fp.fmin / *_mode) ----------------------------------------------------------- */
INLINE float fmaxn_f(float a, float b) {
    float r = (a != a) ? (b != b ? a : b) : (b != b) ? a : (a >= b ? a : b);
    if (r == 0 && a == 0 && b == 0) r = signbit(a) ? b : a;
    return r;
}
INLINE float fminn_f(float a, float b) {
    float r = (a != a) ? (b != b ? a : b) : (b != b) ? a : (a <= b ? a : b);
    if (r == 0 && a == 0 && b == 0) r = signbit(a) ? a : b;
    return r;
}
INLINE double fmaxn_d(double a, double b) {
    double r = (a != a) ? (b != b ? a : b) : (b != b) ? a : (a >= b ? a : b);
    if (r == 0 && a == 0 && b == 0) r = signbit(a) ? b : a;
    return r;
}
INLINE double fminn_d(double a, double b) {
    double r = (a != a) ? (b != b ? a : b) : (b != b) ? a : (a <= b ? a : b);
    if (r == 0 && a == 0 && b == 0) r = signbit(a) ? a : b;
    return r;
}
/* MODE.IEEE: a signaling NaN operand yields that NaN quieted (S0's when both are signaling) */
INLINE int snan_f(float x) { return x != x && !(f2u(x) & 0x00400000u); }
INLINE int snan_d(double x) { return x != x && !(d2u(x) & 0x0008000000000000ULL); }
INLINE float ieee_f(float a, float b, float r, uint32_t mode) {
    if (!(mode & 0x200)) return r;
    if (snan_f(a)) return qf(a);
    if (snan_f(b)) return qf(b);
    return r;
}
INLINE double ieee_d(double a, double b, double r, uint32_t mode) {
    if (!(mode & 0x200)) return r;
    if (snan_d(a)) return qd(a);
    if (snan_d(b)) return qd(b);
    return r;
}

/* f16 min/max on half bits (numpy's float16 fmax/fmin select one operand's bits) */
INLINE int h_isnan(uint32_t h) { return (h & 0x7c00) == 0x7c00 && (h & 0x3ff); }
INLINE uint32_t hmax(uint32_t a, uint32_t b, int is_max) {
    a &= 0xFFFF; b &= 0xFFFF;
    uint32_t r;
    if (h_isnan(a)) r = h_isnan(b) ? a : b;
    else if (h_isnan(b)) r = a;
    else {
        float fa = h2f(a), fb = h2f(b);
        r = is_max ? (fa >= fb ? a : b) : (fa <= fb ? a : b);
        if (fa == 0 && fb == 0) r = is_max ? ((a & 0x8000) ? b : a) : ((a & 0x8000) ? a : b);
    }
    return r;
}
INLINE uint32_t hmax_mode(uint32_t a, uint32_t b, int is_max, uint32_t mode) {
    uint32_t r = hmax(a, b, is_max);
    if (mode & 0x200) {
        a &= 0xFFFF; b &= 0xFFFF;
        if (h_isnan(a) && !(a & 0x200)) return a | 0x200;
        if (h_isnan(b) && !(b & 0x200)) return b | 0x200;
    }
    return r;
}

/* float -> integer conversions as numpy clips them (NaN -> 0, then clip, then cast) */
INLINE uint32_t cvt_u32_d(double t) {
    if (t != t) return 0;
    t = trunc(t);
    if (t < 0) return 0;
    if (t > 4294967295.0) return 0xFFFFFFFFu;
    return (uint32_t)t;
}
INLINE int32_t cvt_i32_d(double t) {
    if (t != t) return 0;
    t = trunc(t);
    if (t < -2147483648.0) return INT32_MIN;
    if (t > 2147483647.0) return INT32_MAX;
    return (int32_t)t;
}
INLINE int64_t clip_i64(double t, double lo, double hi) {
    if (t != t) return 0;
    if (t < lo) t = lo;
    if (t > hi) t = hi;
    return (int64_t)t;
}

/* frexp as numpy: mantissa in [0.5, 1), exponent; non-finite -> (x, 0) */
INLINE double frexp_m(double x) { int e; return isfinite(x) ? frexp(x, &e) : x; }
INLINE int frexp_e(double x) { int e = 0; if (isfinite(x)) frexp(x, &e); else e = 0; return e; }

/* denormal flushing of a value's bits: kind 1 f32, 2 f16 (low half), 3 f64 */
INLINE uint32_t flush32(uint32_t x) { return ((x & 0x7f800000u) == 0 && (x & 0x7fffffu)) ? (x & 0x80000000u) : x; }
INLINE uint32_t flush16(uint32_t x) { x &= 0xFFFF; return ((x & 0x7c00u) == 0 && (x & 0x3ffu)) ? (x & 0x8000u) : x; }
INLINE uint64_t flush64(uint64_t x) {
    return ((x & 0x7ff0000000000000ULL) == 0 && (x & 0x000fffffffffffffULL)) ? (x & 0x8000000000000000ULL) : x;
}

#endif
