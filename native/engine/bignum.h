/* Exact a*b + c scaled by 2^k, rounded once to binary64 (nearest, ties to even): the cold path of
 * V_DIV_FMAS_F64 when the scaled result is denormal (valu_div._scaled_fma_exact uses Fractions). */
#ifndef PYHIP_BIGNUM_H
#define PYHIP_BIGNUM_H

#include "fp.h"

#define BN_LIMBS 72            /* 4608 bits: every exponent gap of finite doubles (and their products) */

typedef struct { uint64_t w[BN_LIMBS]; } Big;

static void bn_add_shifted(Big* x, unsigned __int128 m, int shift) {
    /* x += m << shift */
    int limb = shift / 64, bit = shift % 64;
    unsigned __int128 carry = 0;
    uint64_t parts[4] = {0, 0, 0, 0};
    uint64_t lo = (uint64_t)m, hi = (uint64_t)(m >> 64);
    parts[0] = bit ? lo << bit : lo;
    parts[1] = bit ? (hi << bit) | (lo >> (64 - bit)) : hi;
    parts[2] = bit ? hi >> (64 - bit) : 0;
    for (int i = limb; i < BN_LIMBS; i++) {
        unsigned __int128 s = (unsigned __int128)x->w[i] + (i - limb < 3 ? parts[i - limb] : 0) + carry;
        x->w[i] = (uint64_t)s;
        carry = s >> 64;
        if (i - limb >= 3 && carry == 0) break;
    }
}
static void bn_sub_shifted(Big* x, unsigned __int128 m, int shift) {
    /* x -= m << shift (x >= m << shift) */
    int limb = shift / 64, bit = shift % 64;
    uint64_t lo = (uint64_t)m, hi = (uint64_t)(m >> 64);
    uint64_t parts[3];
    parts[0] = bit ? lo << bit : lo;
    parts[1] = bit ? (hi << bit) | (lo >> (64 - bit)) : hi;
    parts[2] = bit ? hi >> (64 - bit) : 0;
    uint64_t borrow = 0;
    for (int i = limb; i < BN_LIMBS; i++) {
        uint64_t sub = (i - limb < 3 ? parts[i - limb] : 0);
        uint64_t v = x->w[i];
        uint64_t r = v - sub - borrow;
        borrow = (v < sub) || (v - sub < borrow);
        x->w[i] = r;
        if (i - limb >= 3 && !borrow) break;
    }
}
static int bn_cmp(const Big* a, const Big* b) {
    for (int i = BN_LIMBS - 1; i >= 0; i--)
        if (a->w[i] != b->w[i]) return a->w[i] < b->w[i] ? -1 : 1;
    return 0;
}
static int bn_top(const Big* x) {
    for (int i = BN_LIMBS - 1; i >= 0; i--)
        if (x->w[i]) return i * 64 + 63 - __builtin_clzll(x->w[i]);
    return -1;
}
static int bn_bit(const Big* x, int i) { return i < 0 ? 0 : (int)((x->w[i / 64] >> (i % 64)) & 1); }
static int bn_any_below(const Big* x, int i) {
    /* any bit set strictly below position i */
    if (i <= 0) return 0;
    for (int j = 0; j < i / 64; j++)
        if (x->w[j]) return 1;
    int r = i % 64;
    return r ? (x->w[i / 64] & ((1ULL << r) - 1)) != 0 : 0;
}

/* (mantissa, exponent) of a finite double: x = m * 2^e, m < 2^53 */
static void decompose(double x, uint64_t* m, int* e) {
    uint64_t b = d2u(x);
    int ex = (int)((b >> 52) & 0x7FF);
    uint64_t f = b & 0xFFFFFFFFFFFFFULL;
    if (ex == 0) { *m = f; *e = -1074; }
    else { *m = f | (1ULL << 52); *e = ex - 1075; }
}

double scaled_fma64_exact(double a, double b, double c, int k) {
    if (!isfinite(a) || !isfinite(b) || !isfinite(c)) return ldexp(fma64(a, b, c), k);
    uint64_t ma, mb, mc;
    int ea, eb, ec;
    decompose(a, &ma, &ea);
    decompose(b, &mb, &eb);
    decompose(c, &mc, &ec);
    int sp = (signbit(a) != 0) ^ (signbit(b) != 0), sc = signbit(c) != 0;
    unsigned __int128 pm = (unsigned __int128)ma * mb;
    int pe = ea + eb;
    if (pm == 0 && mc == 0) return ldexp(a * b + c, k);
    int e0 = pm ? (mc ? (pe < ec ? pe : ec) : pe) : ec;
    Big P, C;
    memset(&P, 0, sizeof P);
    memset(&C, 0, sizeof C);
    if (pm) bn_add_shifted(&P, pm, pe - e0);
    if (mc) bn_add_shifted(&C, mc, ec - e0);
    Big S;
    int sign;
    if (sp == sc || !pm || !mc) {
        S = P;
        if (mc) {
            for (int i = 0; i < BN_LIMBS; i++) S.w[i] = 0;
            S = P;
            /* S = P + C */
            unsigned __int128 carry = 0;
            for (int i = 0; i < BN_LIMBS; i++) {
                unsigned __int128 s = (unsigned __int128)S.w[i] + C.w[i] + carry;
                S.w[i] = (uint64_t)s;
                carry = s >> 64;
            }
        }
        sign = pm ? sp : sc;
    } else {
        int cmp = bn_cmp(&P, &C);
        if (cmp == 0) return 0.0;            /* exact cancellation: +0 in round-to-nearest */
        if (cmp > 0) { S = P; uint64_t borrow = 0; for (int i = 0; i < BN_LIMBS; i++) { uint64_t v = S.w[i], s = C.w[i]; S.w[i] = v - s - borrow; borrow = (v < s) || (v - s < borrow); } sign = sp; }
        else { S = C; uint64_t borrow = 0; for (int i = 0; i < BN_LIMBS; i++) { uint64_t v = S.w[i], s = P.w[i]; S.w[i] = v - s - borrow; borrow = (v < s) || (v - s < borrow); } sign = sc; }
    }
    (void)bn_sub_shifted;
    int top = bn_top(&S);
    if (top < 0) return 0.0;
    int E = e0 + k;                         /* value = S * 2^E; its leading bit has weight 2^(top + E) */
    int lead = top + E;
    if (lead > 1023) return sign ? -INFINITY : INFINITY;
    /* keep 53 bits, or fewer when the result is denormal (the lowest kept bit has weight >= 2^-1074) */
    int low = top - 52;                     /* position of the last kept bit */
    if (low + E < -1074) low = -1074 - E;
    uint64_t mant = 0;
    for (int i = top; i >= low; i--) mant = (mant << 1) | (uint64_t)bn_bit(&S, i);
    int guard = bn_bit(&S, low - 1), sticky = bn_any_below(&S, low - 1);
    if (guard && (sticky || (mant & 1))) mant++;
    double r = ldexp((double)mant, low + E);
    return sign ? -r : r;
}

#endif
