/* Helpers of the packed / dot / mix handlers and the compares (packed.py, vcmp.py). */
#ifndef PYHIP_PACKED_MATH_H
#define PYHIP_PACKED_MATH_H

#include "valu.h"
#include "valu_math.h"

/* a result clamp of f16 (NaN -> 0, clip to [0, 1]) */
INLINE uint32_t hclamp(uint32_t h) {
    h &= 0xFFFF;
    if (h_isnan(h)) return 0;
    float x = h2f(h);
    return x < 0 ? 0 : x > 1 ? 0x3C00 : h;
}

enum { PK_ADD_F16 = 0, PK_MUL_F16, PK_FMA_F16, PK_MAX_F16, PK_MIN_F16, PK_ADD_U16, PK_ADD_I16, PK_SUB_U16, PK_SUB_I16,
       PK_MUL_LO_U16, PK_LSHLREV_B16, PK_LSHRREV_B16, PK_ASHRREV_I16, PK_MAX_U16, PK_MIN_U16, PK_MAX_I16, PK_MIN_I16,
       PK_MAD_U16, PK_MAD_I16 };

INLINE int pk16_nsrc(int op) { return (op == PK_FMA_F16 || op == PK_MAD_U16 || op == PK_MAD_I16) ? 3 : 2; }
INLINE int pk16_is_f16(int op) { return op <= PK_MIN_F16; }
INLINE uint32_t pk16_op(int op, uint32_t a, uint32_t b, uint32_t c) {
    switch (op) {
    case PK_ADD_F16: return d2h(addd(h2d(a), h2d(b)));
    case PK_MUL_F16: return d2h(muld(h2d(a), h2d(b)));
    case PK_FMA_F16: return d2h(addd(muld(h2d(a), h2d(b)), h2d(c)));
    case PK_MAX_F16: return hmax(a, b, 1);
    case PK_MIN_F16: return hmax(a, b, 0);
    case PK_ADD_U16: case PK_ADD_I16: return (a + b) & 0xFFFF;
    case PK_SUB_U16: case PK_SUB_I16: return (a - b) & 0xFFFF;
    case PK_MUL_LO_U16: return (a * b) & 0xFFFF;
    case PK_LSHLREV_B16: return (b << (a & 15)) & 0xFFFF;
    case PK_LSHRREV_B16: return b >> (a & 15);
    case PK_ASHRREV_I16: return (uint32_t)((int32_t)(int16_t)b >> (a & 15)) & 0xFFFF;
    case PK_MAX_U16: return a > b ? a : b;
    case PK_MIN_U16: return a < b ? a : b;
    case PK_MAX_I16: return (int16_t)a > (int16_t)b ? a : b;
    case PK_MIN_I16: return (int16_t)a < (int16_t)b ? a : b;
    case PK_MAD_U16: return (a * b + c) & 0xFFFF;
    default: return (uint32_t)((int32_t)(int16_t)a * (int16_t)b + (int16_t)c) & 0xFFFF;
    }
}

/* valu._pk: the second register of a source pair (VGPR r+1, SGPR s+1 below 102, else the same operand) */
INLINE const uint32_t* src32_next(const Wave* w, const NInst* in, int i, uint32_t* tmp) {
    uint16_t s = in->s[i];
    if (SRC_KIND(s) == SRC_V) return vreg(w, s + 1);
    if (SRC_KIND(s) == SRC_S && SRC_IDX(s) < 102) {
        uint32_t v = w->s[SRC_IDX(s) + 1];
        for (int l = 0; l < LANES; l++) tmp[l] = v;
        return tmp;
    }
    return src32(w, in, i, tmp);
}

INLINE uint32_t dot_op(int op, uint32_t a, uint32_t b, uint32_t c) {
    if (op == 0) {
        double p0 = muld(h2d(a & 0xFFFF), h2d(b & 0xFFFF)), p1 = muld(h2d(a >> 16), h2d(b >> 16));
        return f2u((float)addd(addd(p0, p1), (double)u2f(c)));
    }
    static const uint8_t BITS[7] = {0, 16, 16, 8, 8, 4, 4};
    int bits = BITS[op], sgn = op & 1;
    int64_t acc = sgn ? (int64_t)(int32_t)c : (int64_t)c;
    uint32_t mask = (1u << bits) - 1;
    for (int i = 0; i < 32 / bits; i++) {
        int64_t x = (a >> (bits * i)) & mask, y = (b >> (bits * i)) & mask;
        if (sgn) {
            if (x >= (1LL << (bits - 1))) x -= 1LL << bits;
            if (y >= (1LL << (bits - 1))) y -= 1LL << bits;
        }
        acc += x * y;
    }
    return (uint32_t)acc;
}

/* packed._fma_nudged: a*b + c as a float64 that rounds to f32/f16 like the exact result */
INLINE double fma_nudged(double a, double b, double c) {
    double p = muld(a, b);
    double s = addd(p, c);
    double bb = subd(s, p);
    double err = addd(subd(p, subd(s, bb)), subd(c, bb));
    if (err == 0) return s;
    return nextafter(s, err > 0 ? INFINITY : -INFINITY);
}

/* float compares (VOPC opcode order): f lt eq le gt lg ge o u nge nlg ngt nle neq nlt tru */
INLINE int fcmp(int cond, double a, double b) {
    switch (cond) {
    case 0: return 0;
    case 1: return a < b;
    case 2: return a == b;
    case 3: return a <= b;
    case 4: return a > b;
    case 5: return a < b || a > b;
    case 6: return a >= b;
    case 7: return a == a && b == b;
    case 8: return !(a == a && b == b);
    case 9: return !(a >= b);
    case 10: return !(a < b || a > b);
    case 11: return !(a > b);
    case 12: return !(a <= b);
    case 13: return !(a == b);
    case 14: return !(a < b);
    default: return 1;
    }
}
#define dcmp fcmp
/* integer compares: f lt eq le gt ne ge t */
INLINE int icmp(int cond, int64_t a, int64_t b) {
    switch (cond) {
    case 0: return 0;
    case 1: return a < b;
    case 2: return a == b;
    case 3: return a <= b;
    case 4: return a > b;
    case 5: return a != b;
    case 6: return a >= b;
    default: return 1;
    }
}
#define icmp64s icmp
INLINE int icmp64u(int cond, uint64_t a, uint64_t b) {
    switch (cond) {
    case 0: return 0;
    case 1: return a < b;
    case 2: return a == b;
    case 3: return a <= b;
    case 4: return a > b;
    case 5: return a != b;
    case 6: return a >= b;
    default: return 1;
    }
}

/* v_cmp_class: 0 sNaN 1 qNaN 2 -Inf 3 -normal 4 -denormal 5 -0 6 +0 7 +denormal 8 +normal 9 +Inf */
INLINE int class32(uint32_t x) {
    int neg = x >> 31;
    uint32_t e = (x >> 23) & 0xFF, m = x & 0x7FFFFF;
    if (e == 0xFF) return m ? ((m & 0x400000) ? 1 : 0) : (neg ? 2 : 9);
    if (e == 0) return m ? (neg ? 4 : 7) : (neg ? 5 : 6);
    return neg ? 3 : 8;
}
INLINE int class64(uint64_t x) {
    int neg = (int)(x >> 63);
    uint64_t e = (x >> 52) & 0x7FF, m = x & 0xFFFFFFFFFFFFFULL;
    if (e == 0x7FF) return m ? ((m & 0x8000000000000ULL) ? 1 : 0) : (neg ? 2 : 9);
    if (e == 0) return m ? (neg ? 4 : 7) : (neg ? 5 : 6);
    return neg ? 3 : 8;
}

INLINE void cmp_result(Ctx* c, Wave* w, const NInst* in, uint64_t r) {
    r &= exec_of(w);
    c->dpp_invalid_set = 0;
    set_mask(w, in->sd, r);
    if (in->x & 16) set_mask(w, EXEC, r);
}

#endif
