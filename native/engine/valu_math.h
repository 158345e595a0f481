/* Per-lane math of the VALU handlers, each a transcription of the numpy reference expression named in its
 * comment (valu.py, valu16.py, valu_div.py, packed.py). */
#ifndef PYHIP_VALU_MATH_H
#define PYHIP_VALU_MATH_H

#include "util.h"

/* fp.fma32 / fp.fma64 with numpy's NaN propagation (the first NaN operand, quieted) */
INLINE float fma32n(float a, float b, float c) {
    if (UNLIKELY(a != a || b != b || c != c)) return (float)qd(a != a ? (double)a : b != b ? (double)b : (double)c);
    return fma32(a, b, c);
}
INLINE double fma64n(double a, double b, double c) {
    if (UNLIKELY(a != a || b != b || c != c)) return qd(a != a ? a : b != b ? b : c);
    return fma64(a, b, c);
}
/* the same for a lane known to be outside fma64's fast domain */
static double fma64_bm_n(double a, double b, double c) {
    if (a != a || b != b || c != c) return qd(a != a ? a : b != b ? b : c);
    return fma64_bm(a, b, c);
}

/* fma32n / fma64n over 64 lanes (R must not alias a source): the lanes run through the host's fused
 * multiply-add in one vectorised pass, and only lanes outside fma32 / fma64's fast domain (see fp.h: a
 * non-finite f32 result; the f64 operand and result ranges, which NaNs fail) are recomputed by the
 * scalar functions, which give the same bits inside that domain; lanes outside ``m`` (the lanes that may
 * be written: EXEC, or a subset) are left with the host's result. */
static inline void fma32_rows(const uint32_t* A, const uint32_t* B, const uint32_t* C, uint32_t* restrict R, uint64_t m) {
#if defined(__FMA__)
    uint32_t bad = 0;
    for (int l = 0; l < LANES; l++) {
        uint32_t u = f2u(__builtin_fmaf(u2f(A[l]), u2f(B[l]), u2f(C[l])));
        R[l] = u;
        bad |= (u & 0x7f800000u) == 0x7f800000u;
    }
    if (LIKELY(!bad)) return;
    for (int l = 0; l < LANES; l++)
        if ((m >> l & 1) && (R[l] & 0x7f800000u) == 0x7f800000u) R[l] = f2u(fma32n(u2f(A[l]), u2f(B[l]), u2f(C[l])));
#else
    for (int l = 0; l < LANES; l++) R[l] = f2u(fma32n(u2f(A[l]), u2f(B[l]), u2f(C[l])));
#endif
}
static inline void fma64_rows(const uint64_t* A, const uint64_t* B, const uint64_t* C, uint64_t* restrict R, uint64_t m) {
#if defined(__FMA__)
    int bad = 0;
    for (int l = 0; l < LANES; l++) {
        double a = u2d(A[l]), b = u2d(B[l]), cc = u2d(C[l]);
        double r = __builtin_fma(a, b, cc);
        R[l] = d2u(r);
        bad |= !fma64_fast_ok(a, b, cc, r);
    }
    if (LIKELY(!bad)) return;
    for (int l = 0; l < LANES; l++) {
        if (!(m >> l & 1)) continue;
        double a = u2d(A[l]), b = u2d(B[l]), cc = u2d(C[l]);
        if (!fma64_fast_ok(a, b, cc, u2d(R[l]))) R[l] = d2u(fma64_bm_n(a, b, cc));
    }
#else
    for (int l = 0; l < LANES; l++) R[l] = d2u(fma64n(u2d(A[l]), u2d(B[l]), u2d(C[l])));
#endif
}

/* valu.mad(F32): the product rounded to f32 (flushed when MODE flushes f32 output denormals), then the sum */
INLINE float mad32(float a, float b, float c, uint32_t mode) {
    float p = (float)muld((double)a, (double)b);
    if (!(mode >> 5 & 1) && fabsf(p) < 1.17549435e-38f && p != 0) p = copysignf(0.0f, p);
    return (float)addd((double)p, (double)c);
}
/* valu.mad(F16) on half bits (mode bit 7 for f16 output denormals) */
INLINE uint32_t mad16(uint32_t a, uint32_t b, uint32_t c, uint32_t mode) {
    uint32_t p = d2h(muld(h2d(a), h2d(b)));
    if (!(mode >> 7 & 1) && (p & 0x7c00) == 0 && (p & 0x3ff)) p &= 0x8000;
    return d2h(addd(h2d(p), h2d(c)));
}

INLINE float fract32(float a) {
    float x = subf(a, floorf(a));
    const float top = 0.99999994f;
    return x != x ? x : (x <= top ? x : top);
}
INLINE double fract64(double a) {
    double x = subd(a, floor(a));
    const double top = 0.9999999999999999;
    return x != x ? x : (x <= top ? x : top);
}
/* valu16 v_fract_f16: Inf -> NaN; else min(a - floor(a), largest half below 1) in half arithmetic */
INLINE uint32_t fract16(uint32_t a) {
    if ((a & 0x7fff) == 0x7c00) return 0x7e00;
    uint32_t fl = f2h(floorf(h2f(a)));
    uint32_t x = f2h(subf(h2f(a), h2f(fl)));
    if (h_isnan(x)) return x;
    return h2f(x) <= h2f(0x3BFF) ? x : 0x3BFF;
}
INLINE float frexpf_m(float a) { int e; return frexpf(a, &e); }

INLINE int32_t i24(uint32_t a) { return (int32_t)(a << 8) >> 8; }
INLINE uint32_t bfe_v(uint32_t a, uint32_t b, uint32_t c) {
    int64_t off = b & 31, width = c & 31;
    int64_t v = ((int64_t)a >> off) & ((1LL << width) - 1);
    int64_t sign = (v >> (width > 0 ? width - 1 : 0)) & 1;
    if (sign) v -= 1LL << width;
    return width == 0 ? 0 : (uint32_t)(int32_t)v;
}
INLINE uint32_t umax3(uint32_t a, uint32_t b, uint32_t c) { uint32_t m = a > b ? a : b; return m > c ? m : c; }
INLINE uint32_t umin3(uint32_t a, uint32_t b, uint32_t c) { uint32_t m = a < b ? a : b; return m < c ? m : c; }
INLINE uint32_t umed3(uint32_t a, uint32_t b, uint32_t c) {
    uint32_t lo = a < b ? a : b, hi = a > b ? a : b, t = hi < c ? hi : c;
    return lo > t ? lo : t;
}
INLINE int32_t smax3(int32_t a, int32_t b, int32_t c) { int32_t m = a > b ? a : b; return m > c ? m : c; }
INLINE int32_t smin3(int32_t a, int32_t b, int32_t c) { int32_t m = a < b ? a : b; return m < c ? m : c; }
INLINE int32_t smed3(int32_t a, int32_t b, int32_t c) {
    int32_t lo = a < b ? a : b, hi = a > b ? a : b, t = hi < c ? hi : c;
    return lo > t ? lo : t;
}
INLINE int32_t clamp_i(int32_t x, int32_t lo, int32_t hi) { return x < lo ? lo : x > hi ? hi : x; }

/* valu._perm */
INLINE uint32_t perm32(uint32_t a, uint32_t b, uint32_t c) {
    uint64_t data = ((uint64_t)a << 32) | b;
    uint32_t out = 0;
    for (int i = 0; i < 4; i++) {
        uint32_t sel = (c >> (8 * i)) & 0xFF, byte;
        if (sel < 8) byte = (uint32_t)((data >> (8 * (sel & 7))) & 0xFF);
        else if (sel < 12) byte = (uint32_t)((data >> (16 * (sel - 8) + 15)) & 1) * 0xFF;
        else if (sel == 12) byte = 0;
        else byte = 0xFF;
        out |= byte << (8 * i);
    }
    return out;
}

INLINE uint32_t sad8(uint32_t a, uint32_t b, int masked) {
    int32_t total = 0;
    for (int i = 0; i < 4; i++) {
        int32_t x = (a >> (8 * i)) & 0xFF, y = (b >> (8 * i)) & 0xFF, d = abs(x - y);
        total += (masked && y == 0) ? 0 : d;
    }
    return (uint32_t)total;
}
INLINE uint32_t lerp8(uint32_t a, uint32_t b, uint32_t c) {
    uint32_t out = 0;
    for (int i = 0; i < 4; i++) {
        int32_t x = (a >> (8 * i)) & 0xFF, y = (b >> (8 * i)) & 0xFF, z = (c >> (8 * i)) & 0xFF;
        out += (uint32_t)(((x + y + (z & 1)) >> 1) & 0xFF) << (8 * i);
    }
    return out;
}
INLINE uint64_t qsad(uint64_t a, uint32_t b, uint64_t c, int masked) {
    uint64_t out = 0;
    for (int i = 0; i < 4; i++) {
        uint32_t win = (uint32_t)(a >> (8 * i));
        uint32_t acc = (uint32_t)((c >> (16 * i)) & 0xFFFF);
        uint32_t v = sad8(win, b, masked) + acc;
        out |= (uint64_t)(v < 0xFFFF ? v : 0xFFFF) << (16 * i);
    }
    return out;
}
INLINE uint32_t sat_pk_u8(uint32_t a) {
    int32_t lo = (int16_t)(a & 0xFFFF), hi = (int16_t)(a >> 16);
    lo = clamp_i(lo, 0, 255);
    hi = clamp_i(hi, 0, 255);
    return (uint32_t)lo | ((uint32_t)hi << 8);
}
/* valu16._norm_i16 / _norm_u16 (float32 arithmetic, NaN -> 0) */
INLINE uint32_t norm_i16(float x) {
    float v = x != x ? x : (x < -1 ? -1.0f : x > 1 ? 1.0f : x);
    v = rintf(v * 32767.0f);
    return (uint32_t)(uint16_t)(int16_t)clip_i64(v, -32768, 32767);
}
INLINE uint32_t norm_u16(float x) {
    float v = x != x ? x : (x < 0 ? 0.0f : x > 1 ? 1.0f : x);
    v = rintf(v * 65535.0f);
    return (uint32_t)clip_i64(v, 0, 65535);
}
INLINE uint32_t u8_rint(double x) { return (uint32_t)clip_i64(rint(x), 0, 255); }

/* valu16 cube coordinates: which = 0 id, 1 sc, 2 tc, 3 ma */
INLINE float cube(float x, float y, float z, int which) {
    float ax = fabsf(x), ay = fabsf(y), az = fabsf(z);
    int zm = az >= ax && az >= ay, ym = !zm && ay >= ax;
    switch (which) {
    case 0: return zm ? (z < 0 ? 5.0f : 4.0f) : ym ? (y < 0 ? 3.0f : 2.0f) : (x < 0 ? 1.0f : 0.0f);
    case 1: return zm ? (z < 0 ? -x : x) : ym ? x : (x < 0 ? z : -z);
    case 2: return zm ? -y : ym ? (y < 0 ? -z : z) : -y;
    default: return mulf(2.0f, zm ? z : ym ? y : x);
    }
}

/* the 256 values of the FNUZ 8-bit floats (Python supplies them: mfma.FP8_VALUES / BF8_VALUES) */
static double g_fp8[256], g_bf8[256];

/* ---- V_TRIG_PREOP_F64: 53-bit segments of the 2/pi bit string Python supplies (valu16._two_over_pi_bits) ---- */
static uint32_t* g_two_over_pi = NULL;   /* little-endian 32-bit words of floor(2/pi * 2^1201) */
static int g_two_over_pi_bits = 0;
INLINE uint64_t top_bit(int i) {
    if (i < 0 || i >= g_two_over_pi_bits) return 0;
    return (g_two_over_pi[i >> 5] >> (i & 31)) & 1;
}
static double trig_preop(uint64_t abits, uint32_t b) {
    int64_t e = (int64_t)((abits >> 52) & 0x7FF);
    int64_t shift = (int64_t)(b & 31) * 53 + (e - 1077 > 0 ? e - 1077 : 0);
    int64_t k = 1148 - shift;
    uint64_t seg = 0;
    for (int i = 52; i >= 0; i--) seg = (seg << 1) | top_bit((int)(k + i));
    double out = ldexp((double)seg, (int)(-53 - shift));
    return e >= 1968 ? ldexp(out, 128) : out;
}

/* ---- division helpers (valu_div.py) ------------------------------------------------------------------- */
INLINE int exp32(float x) { return (int)((f2u(x) >> 23) & 0xFF); }
INLINE int exp64(double x) { return (int)((d2u(x) >> 52) & 0x7FF); }
INLINE int denorm32(float x) { return x != 0 && fabsf(x) < 1.17549435e-38f; }
INLINE int denorm64(double x) { return x != 0 && fabs(x) < 2.2250738585072014e-308; }

static float div_scale32(float s0, float s1, float s2, int* vcc) {
    int e1 = exp32(s1), e2 = exp32(s2);
    int rcp_den = denorm32(divf(1.0f, s1)), quo_den = denorm32(divf(s2, s1));
    float up = ldexp32(s0, 64), down = ldexp32(s0, -64);
    int zero = (s2 == 0) || (s1 == 0);
    int c_big = !zero && (e2 - e1 >= 96);
    int c_dden = !zero && !c_big && denorm32(s1);
    int c_both = !zero && !c_big && !c_dden && rcp_den && quo_den;
    int c_rcp = !zero && !c_big && !c_dden && !c_both && rcp_den;
    int c_quo = !zero && !c_big && !c_dden && !c_both && !c_rcp && quo_den;
    int c_tiny = !zero && !c_big && !c_dden && !c_both && !c_rcp && !c_quo && (e2 <= 23);
    float res = s0;
    if (c_big && s0 == s1) res = up;
    if (c_dden) res = up;
    if (c_both && s0 == s1) res = down;
    if (c_rcp) res = down;
    if (c_quo && s0 == s2) res = up;
    if (c_tiny) res = up;
    if (zero || s1 != s1 || s2 != s2) res = u2f(0x7fc00000u);
    *vcc = c_big || c_both || c_quo;
    return res;
}
static double div_scale64(double s0, double s1, double s2, int* vcc) {
    int e1 = exp64(s1), e2 = exp64(s2);
    int rcp_den = denorm64(divd(1.0, s1)), quo_den = denorm64(divd(s2, s1));
    double up = ldexp64(s0, 128), down = ldexp64(s0, -128);
    int zero = (s2 == 0) || (s1 == 0);
    int c_big = !zero && (e2 - e1 >= 768);
    int c_dden = !zero && !c_big && denorm64(s1);
    int c_both = !zero && !c_big && !c_dden && rcp_den && quo_den;
    int c_rcp = !zero && !c_big && !c_dden && !c_both && rcp_den;
    int c_quo = !zero && !c_big && !c_dden && !c_both && !c_rcp && quo_den;
    int c_tiny = !zero && !c_big && !c_dden && !c_both && !c_rcp && !c_quo && (e2 <= 53);
    double res = s0;
    if (c_big && s0 == s1) res = up;
    if (c_dden) res = up;
    if (c_both && s0 == s1) res = down;
    if (c_rcp) res = down;
    if (c_quo && s0 == s2) res = up;
    if (c_tiny) res = up;
    if (zero || s1 != s1 || s2 != s2) res = u2d(0x7ff8000000000000ULL);
    *vcc = c_big || c_both || c_quo;
    return res;
}

/* fma(a, b, c) * 2^k rounded once to f32: the f64 product is exact, the sum an exact pair, scaling exact */
static float scaled_fma32_exact(float a, float b, float c, int k) {
    if (!isfinite(a) || !isfinite(b) || !isfinite(c)) return (float)ldexp64(fma64((double)a, (double)b, (double)c), k);
    double p = (double)a * (double)b, s, e;
    two_sum(p, (double)c, &s, &e);
    return (float)round_to_odd_sum(ldexp64(s, k), ldexp64(e, k));
}
double scaled_fma64_exact(double a, double b, double c, int k);   /* bignum.c */

static float div_fmas32(float a, float b, float c, int v) {
    float r = fma32n(a, b, c);
    if (!v) return r;
    int k = exp32(c) >= 127 ? 64 : -64;
    float scaled = ldexp32(r, k);
    if (fabsf(scaled) < 1.17549435e-38f && r != 0 && isfinite(r)) scaled = scaled_fma32_exact(a, b, c, k);
    return scaled;
}
static double div_fmas64(double a, double b, double c, int v) {
    double r = fma64n(a, b, c);
    if (!v) return r;
    int k = exp64(c) >= 1023 ? 128 : -128;
    double scaled = ldexp64(r, k);
    if (fabs(scaled) < 2.2250738585072014e-308 && r != 0 && isfinite(r)) scaled = scaled_fma64_exact(a, b, c, k);
    return scaled;
}

static float div_fixup32(float q, float d, float n) {
    float exact = divf(n, d);
    int special = d != d || n != n || d == 0 || isinf(d) || isinf(n) || n == 0;
    int sign = (signbit(n) != 0) ^ (signbit(d) != 0);
    if (special) return exact;
    int under = exp32(n) - exp32(d) < -150;
    if (under) return sign ? -0.0f : 0.0f;
    if (q != q) return sign ? -INFINITY : INFINITY;
    return copysignf(fabsf(q), sign ? -1.0f : 1.0f);
}
static double div_fixup64(double q, double d, double n) {
    double exact = divd(n, d);
    int special = d != d || n != n || d == 0 || isinf(d) || isinf(n) || n == 0;
    int sign = (signbit(n) != 0) ^ (signbit(d) != 0);
    if (special) return exact;
    int under = exp64(n) - exp64(d) < -1075;
    if (under) return sign ? -0.0 : 0.0;
    if (q != q) return sign ? -INFINITY : INFINITY;
    return copysign(fabs(q), sign ? -1.0 : 1.0);
}
/* valu16 v_div_fixup_f16 on half bits */
static uint32_t div_fixup16(uint32_t q, uint32_t d, uint32_t n) {
    float df = h2f(d), nf = h2f(n);
    int special = df != df || nf != nf || df == 0 || isinf(df) || isinf(nf) || nf == 0;
    if (special) return f2h(divf(nf, df));
    int sign = ((n ^ d) >> 15) & 1;
    return (q & 0x7FFF) | (sign ? 0x8000 : 0);
}

#endif
