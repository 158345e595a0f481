/* f64 VALU arithmetic straight on the two 32-bit rows of each operand (AVX2 + FMA builds).
 *
 * The general handlers pack each 64-bit operand from its lo/hi rows into a uint64 array, compute, and
 * unpack the result (src64 / prep64 / wv64).  Here 8 lanes at a time are interleaved into two vectors of
 * doubles in registers (lanes 0,1,4,5 and 2,3,6,7: unpacklo/hi of the lo and hi words), computed, and
 * split back into lo/hi words.  A scalar or constant operand is one broadcast value.
 *
 * Each lane's host result is kept only where it provably has the general path's bits: a cheap test per
 * 8 lanes on the high words (exponent fields), and every other lane is recomputed by the scalar function
 * the general handler uses (fixup), with the same operands.  So the results are those of the general path
 * for every input; the tests hold both sides of each boundary (tests/emu/test_isa_f64rows.py).
 *
 * Applies when the operands carry at most abs/neg (f64 sign masks in the high word), no clamp/omod, and
 * MODE keeps f64 denormals (no flushing); otherwise the general handler runs. */
#ifndef PYHIP_ROWS64_H
#define PYHIP_ROWS64_H

#include "valu.h"
#include "valu_math.h"

#if defined(__AVX2__) && defined(__FMA__)
#define ROWS64 1

typedef struct Op64 {
    const uint32_t* lo;      /* the operand's rows (a scalar or constant: broadcast into the caller's rows) */
    const uint32_t* hi;
    uint32_t am, nm;         /* abs / neg: high word AND ~am, XOR nm */
} Op64;

/* scratch rows for broadcast operands */
typedef struct Rows64Buf { uint32_t ALIGN64 lo[3][LANES], hi[3][LANES]; } Rows64Buf;

/* the operands of an f64 instruction as Op64 (1: the fast path applies; *mods: some operand has abs/neg) */
static inline int op64_init(Ctx* c, const Wave* w, const NInst* in, int n, Op64* o, Rows64Buf* buf, int* mods) {
    const ModInfo* mi = NULL;
    if (in->flags & F_MODS) {
        mi = &c->mods[in->mods];
        if (mi->dpp || mi->clamp || mi->omod) return 0;
    }
    if (in->a0 && (w->mode & 0xC0) != 0xC0) return 0;   /* f64 denormals flushed */
    *mods = 0;
    for (int i = 0; i < n; i++) {
        uint64_t am = mi ? mi->absm[i] : 0, nm = mi ? mi->negm[i] : 0;
        if ((am | nm) & 0xFFFFFFFFull) return 0;
        uint16_t s = in->s[i];
        if (SRC_KIND(s) == SRC_V) {
            o[i].lo = vreg(w, s);
            o[i].hi = vreg(w, s + 1);
            o[i].am = (uint32_t)(am >> 32);
            o[i].nm = (uint32_t)(nm >> 32);
            *mods |= (am | nm) != 0;
        } else {
            uint64_t k = (ssrc64(w, in, i) & ~am) ^ nm;
            uint32_t kl = (uint32_t)k, kh = (uint32_t)(k >> 32);
            for (int l = 0; l < LANES; l++) buf->lo[i][l] = kl;
            for (int l = 0; l < LANES; l++) buf->hi[i][l] = kh;
            o[i].lo = buf->lo[i];
            o[i].hi = buf->hi[i];
            o[i].am = o[i].nm = 0;
        }
    }
    return 1;
}

/* one lane's operand value (the fixups) */
INLINE double op64_lane(const Op64* o, int l) {
    return u2d((uint64_t)o->lo[l] | (uint64_t)((o->hi[l] & ~o->am) ^ o->nm) << 32);
}

/* lanes i..i+7: the high words (modifiers applied; the exponent tests read them) and the doubles of lanes
 * i+{0,1,4,5} (x0) and i+{2,3,6,7} (x1) */
INLINE void op64_load(const uint32_t* lo_, const uint32_t* hi_, int mods, __m256i am, __m256i nm, int i,
                      __m256i* hw, __m256d* x0, __m256d* x1) {
    __m256i lo = _mm256_loadu_si256((const __m256i*)(lo_ + i));
    __m256i hi = _mm256_loadu_si256((const __m256i*)(hi_ + i));
    if (mods) hi = _mm256_xor_si256(_mm256_andnot_si256(am, hi), nm);
    *hw = hi;
    *x0 = _mm256_castsi256_pd(_mm256_unpacklo_epi32(lo, hi));
    *x1 = _mm256_castsi256_pd(_mm256_unpackhi_epi32(lo, hi));
}

/* the exponent field (high word bits 30..20, kept in place: a non-negative int32) against bounds */
INLINE __m256i f64exp(__m256i hw) { return _mm256_and_si256(hw, _mm256_set1_epi32(0x7ff00000)); }
INLINE __m256i f64exp_above(__m256i e, int lo) { return _mm256_cmpgt_epi32(e, _mm256_set1_epi32(lo << 20)); }
INLINE __m256i f64exp_below(__m256i e, int hi) { return _mm256_cmpgt_epi32(_mm256_set1_epi32(hi << 20), e); }

enum { R64_FMA = 0, R64_ADD, R64_MUL };

/* D = A*B + C (fma64n), A + B (addd), A * B (muld) into rows d, d+1 under the lane mask m.
 *
 * FMA: a host fused multiply-add is kept where the biased exponents are 623..1522 for A and B (|x| in
 * [2^-400, 2^500)), at most 1922 for C (|c| < 2^900, zero and subnormals included) and at least 223 for
 * the result (|r| >= 2^-800): inside fma64_fast_ok's proven domain (fp.h), where fma64n returns the host's
 * result.  Or the same operand ranges and a host result of +0: an exact cancellation (a*b is a non-zero
 * multiple of 2^-904 of magnitude >= 2^-800, so a c that comes near cancelling it is a multiple of 2^-853 and
 * a non-zero a*b + c is >= 2^-904 in magnitude: the host rounds to zero only an exact zero), where IEEE gives
 * +0 and so does Boldo-Melquiond: every error-free transformation is exact there, uh + th = -tl, so
 * vh = -tl, vl = +0, z = tl (+0 if tl is a zero) and vh + z = +0 (checked on 29.6 M such triples, OCML's
 * f64 math has many).  Other lanes take fma64_rows' per-lane path (fma64_fast_ok, else Boldo-Melquiond).
 * ADD / MUL: a result that is not Inf or NaN came from finite operands, and then the IEEE sum / product
 * is what addd / muld return whatever the operand order; Inf / NaN lanes are recomputed by addd / muld
 * (numpy's NaN propagation). */
static inline __attribute__((always_inline)) void rows64_op(int op, int mods, const Op64* A, const Op64* B,
                                                            const Op64* C, uint32_t* dlo, uint32_t* dhi, uint64_t m) {
    const __m256i bits = _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128);
    const uint32_t *alo = A->lo, *ahi = A->hi, *blo = B->lo, *bhi = B->hi;
    const uint32_t *clo = op == R64_FMA ? C->lo : NULL, *chi = op == R64_FMA ? C->hi : NULL;
    const __m256i aam = _mm256_set1_epi32((int)A->am), anm = _mm256_set1_epi32((int)A->nm);
    const __m256i bam = _mm256_set1_epi32((int)B->am), bnm = _mm256_set1_epi32((int)B->nm);
    const __m256i cam = _mm256_set1_epi32(op == R64_FMA ? (int)C->am : 0);
    const __m256i cnm = _mm256_set1_epi32(op == R64_FMA ? (int)C->nm : 0);
    for (int i = 0; i < LANES; i += 8) {
        uint32_t m8 = (uint32_t)(m >> i) & 0xFF;
        if (!m8) continue;
        __m256i ha, hb, hc, ok;
        __m256d a0, a1, b0, b1, c0, c1, r0, r1;
        op64_load(alo, ahi, mods, aam, anm, i, &ha, &a0, &a1);
        op64_load(blo, bhi, mods, bam, bnm, i, &hb, &b0, &b1);
        if (op == R64_FMA) {
            op64_load(clo, chi, mods, cam, cnm, i, &hc, &c0, &c1);
            r0 = _mm256_fmadd_pd(a0, b0, c0);
            r1 = _mm256_fmadd_pd(a1, b1, c1);
        } else if (op == R64_ADD) {
            r0 = _mm256_add_pd(a0, b0);
            r1 = _mm256_add_pd(a1, b1);
        } else {
            r0 = _mm256_mul_pd(a0, b0);
            r1 = _mm256_mul_pd(a1, b1);
        }
        /* back to lo / hi words: [l0 l1 h0 h1 | l4 l5 h4 h5] and [l2 l3 h2 h3 | l6 l7 h6 h7] */
        __m256i p0 = _mm256_shuffle_epi32(_mm256_castpd_si256(r0), _MM_SHUFFLE(3, 1, 2, 0));
        __m256i p1 = _mm256_shuffle_epi32(_mm256_castpd_si256(r1), _MM_SHUFFLE(3, 1, 2, 0));
        __m256i rlo = _mm256_unpacklo_epi64(p0, p1), rhi = _mm256_unpackhi_epi64(p0, p1);
        uint32_t bad;
        if (op == R64_FMA) {
            __m256i ea = f64exp(ha), eb = f64exp(hb);
            ok = _mm256_and_si256(_mm256_and_si256(f64exp_above(ea, 622), f64exp_below(ea, 1523)),
                                  _mm256_and_si256(f64exp_above(eb, 622), f64exp_below(eb, 1523)));
            __m256i rzero = _mm256_cmpeq_epi32(_mm256_or_si256(rlo, rhi), _mm256_setzero_si256());
            ok = _mm256_and_si256(ok, _mm256_and_si256(f64exp_below(f64exp(hc), 1923),
                                                       _mm256_or_si256(f64exp_above(f64exp(rhi), 222), rzero)));
            bad = ~(uint32_t)_mm256_movemask_ps(_mm256_castsi256_ps(ok)) & m8;
        } else {
            __m256i inf = _mm256_cmpeq_epi32(f64exp(rhi), _mm256_set1_epi32(0x7ff00000));
            bad = (uint32_t)_mm256_movemask_ps(_mm256_castsi256_ps(inf)) & m8;
        }
        if (UNLIKELY(bad)) {
            uint32_t ALIGN64 tlo[8], thi[8];
            _mm256_store_si256((__m256i*)tlo, rlo);
            _mm256_store_si256((__m256i*)thi, rhi);
            for (int j = 0; j < 8; j++) {
                if (!(bad >> j & 1)) continue;
                int l = i + j;
                double a = op64_lane(A, l), b = op64_lane(B, l), r;
                if (op == R64_FMA) {
                    double cc = op64_lane(C, l);
                    r = u2d((uint64_t)tlo[j] | (uint64_t)thi[j] << 32);
                    if (!fma64_fast_ok(a, b, cc, r)) r = fma64_bm_n(a, b, cc);
                } else if (op == R64_ADD) {
                    r = addd(a, b);
                } else {
                    r = muld(a, b);
                }
                tlo[j] = (uint32_t)d2u(r);
                thi[j] = (uint32_t)(d2u(r) >> 32);
            }
            rlo = _mm256_load_si256((const __m256i*)tlo);
            rhi = _mm256_load_si256((const __m256i*)thi);
        }
        if (m8 == 0xFF) {
            _mm256_storeu_si256((__m256i*)(dlo + i), rlo);
            _mm256_storeu_si256((__m256i*)(dhi + i), rhi);
        } else {
            __m256i wm = _mm256_cmpeq_epi32(_mm256_and_si256(_mm256_set1_epi32((int)m8), bits), bits);
            _mm256_maskstore_epi32((int*)(dlo + i), wm, rlo);
            _mm256_maskstore_epi32((int*)(dhi + i), wm, rhi);
        }
    }
}
#endif

#endif
