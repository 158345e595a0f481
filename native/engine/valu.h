/* VALU operand plumbing: the fast path reads VGPR rows (or broadcast scalars) and writes under EXEC; the
 * general path (instructions with modifiers, or a MODE that flushes denormals) applies exactly what the
 * numpy readers()/make()/store32() do, in the same order. */
#ifndef PYHIP_VALU_H
#define PYHIP_VALU_H

#include "state.h"

/* NInst.a0 of VALU ops: per-source kinds (4 bits each: src0, src1, src2, result) for denormal flushing
 * and output modifiers.  0 integer / none, 1 f32, 2 f16, 3 f64. */
#define K_INT 0
#define K_F32 1
#define K_F16 2
#define K_F64 3
#define KIND_OF(in, i) (((in)->a0 >> (4 * (i))) & 0xF)
#define FLUSH_OUT(in) (((in)->a0 >> 16) & 1)   /* make(): the result is flushed by MODE too */

INLINE int flushing(const Wave* w) { return (w->mode & 0xF0) != 0xF0; }
INLINE int general(const Wave* w, const NInst* in) {
    return (in->flags & F_MODS) || (in->a0 && flushing(w));
}

static void dpp_move32(Ctx* c, const Wave* w, const ModInfo* mi, uint32_t* v) {
    uint32_t ALIGN64 tmp[LANES];
    uint64_t ex = exec_of(w);
    uint64_t invalid = 0;
#if defined(__AVX2__)
    /* 8 lanes per step: the source lane's index (negative: none, read as lane 0), its EXEC bit by a
     * variable shift of either EXEC half (counts of 32 and more shift to 0), the value by a gather */
    const __m256i exlo = _mm256_set1_epi32((int)(uint32_t)ex), exhi = _mm256_set1_epi32((int)(uint32_t)(ex >> 32));
    const __m256i one = _mm256_set1_epi32(1), k32 = _mm256_set1_epi32(32), zero = _mm256_setzero_si256();
    for (int l = 0; l < LANES; l += 8) {
        __m256i idx = _mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i*)(mi->dpp_src + l)));
        __m256i none = _mm256_cmpgt_epi32(zero, idx);
        __m256i s = _mm256_andnot_si256(none, idx);
        __m256i bit = _mm256_or_si256(_mm256_srlv_epi32(exlo, s), _mm256_srlv_epi32(exhi, _mm256_sub_epi32(s, k32)));
        __m256i ok = _mm256_andnot_si256(none, _mm256_cmpeq_epi32(_mm256_and_si256(bit, one), one));
        __m256i val = _mm256_i32gather_epi32((const int*)v, s, 4);
        if (mi->bound_zero) val = _mm256_and_si256(val, ok);
        _mm256_store_si256((__m256i*)(tmp + l), val);
        invalid |= (uint64_t)(~(uint32_t)_mm256_movemask_ps(_mm256_castsi256_ps(ok)) & 0xFF) << l;
    }
#else
    for (int l = 0; l < LANES; l++) {
        int s = mi->dpp_src[l];
        int ok = s >= 0 && (ex >> s & 1);
        tmp[l] = ok ? v[s] : (mi->bound_zero ? 0 : v[s >= 0 ? s : 0]);
        if (!ok) invalid |= 1ULL << l;
    }
#endif
    memcpy(v, tmp, sizeof tmp);
    if (!mi->bound_zero) {
        c->dpp_invalid = invalid;
        c->dpp_invalid_set = 1;
    }
}

/* general 32-bit source i: OP_SEL high half, SDWA select, DPP move (src0), abs/neg, denormal flush */
static const uint32_t* prep32(Ctx* c, const Wave* w, const NInst* in, int i, uint32_t* tmp) {
    const uint32_t* s = src32(w, in, i, tmp);
    if (s != tmp) memcpy(tmp, s, 256);
    if (in->flags & F_MODS) {
        const ModInfo* mi = &c->mods[in->mods];
        if (mi->hi[i])
            for (int l = 0; l < LANES; l++) tmp[l] >>= 16;
        int sel = mi->sel[i];
        if (sel != 6) {
            static const uint8_t SH[6] = {0, 8, 16, 24, 0, 16}, WD[6] = {8, 8, 8, 8, 16, 16};
            int sh = SH[sel], wd = WD[sel];
            uint32_t mask = (1u << wd) - 1;
            for (int l = 0; l < LANES; l++) {
                uint32_t v = (tmp[l] >> sh) & mask;
                if (mi->sext[i]) v = (uint32_t)(((int32_t)(v << (32 - wd))) >> (32 - wd));
                tmp[l] = v;
            }
        }
        if (i == 0 && mi->dpp) dpp_move32(c, w, mi, tmp);
        uint32_t am = (uint32_t)mi->absm[i], nm = (uint32_t)mi->negm[i];
        if (am || nm)
            for (int l = 0; l < LANES; l++) tmp[l] = (tmp[l] & ~am) ^ nm;
    }
    if (flushing(w)) {
        int k = KIND_OF(in, i);
        if (k == K_F32 && !(w->mode >> 4 & 1))
            for (int l = 0; l < LANES; l++) tmp[l] = flush32(tmp[l]);
        else if (k == K_F16 && !(w->mode >> 6 & 1))
            for (int l = 0; l < LANES; l++) tmp[l] = flush16(tmp[l]) | (tmp[l] & 0xFFFF0000u);
    }
    return tmp;
}

static const uint64_t* prep64(Ctx* c, const Wave* w, const NInst* in, int i, uint64_t* tmp) {
    src64(w, in, i, tmp);
    if (in->flags & F_MODS) {
        const ModInfo* mi = &c->mods[in->mods];
        uint64_t am = mi->absm[i], nm = mi->negm[i];
        if (am || nm)
            for (int l = 0; l < LANES; l++) tmp[l] = (tmp[l] & ~am) ^ nm;
    }
    if (flushing(w) && KIND_OF(in, i) == K_F64 && !(w->mode >> 6 & 1))
        for (int l = 0; l < LANES; l++) tmp[l] = flush64(tmp[l]);
    return tmp;
}

/* output modifiers on float results (output_mods: omod then clamp), then the output denormal flush */
static void post32(const Wave* w, const NInst* in, const ModInfo* mi, uint32_t* r) {
    int k = KIND_OF(in, 3);
    if (mi && (mi->omod || mi->clamp) && (k == K_F32 || k == K_F16)) {
        static const float SC[4] = {1.0f, 2.0f, 4.0f, 0.5f};
        for (int l = 0; l < LANES; l++) {
            if (k == K_F32) {
                float x = u2f(r[l]);
                if (mi->omod) x = mulf(x, SC[mi->omod]);
                if (mi->clamp) x = (x != x) ? ((w->mode & 0x100) ? 0.0f : x) : (x < 0 ? 0.0f : x > 1 ? 1.0f : x);
                r[l] = f2u(x);
            } else {
                /* float16 arithmetic (numpy computes half ops through float32 and rounds back) */
                uint32_t h = r[l] & 0xFFFF;
                float x = h2f(h);
                if (mi->omod) h = f2h(mulf(x, SC[mi->omod])), x = h2f(h);
                if (mi->clamp) h = (x != x) ? ((w->mode & 0x100) ? 0 : h) : (x < 0 ? 0 : x > 1 ? 0x3C00 : h);
                r[l] = h;
            }
        }
    }
    if (FLUSH_OUT(in) && flushing(w)) {
        if (k == K_F32 && !(w->mode >> 5 & 1))
            for (int l = 0; l < LANES; l++) r[l] = flush32(r[l]);
        else if (k == K_F16 && !(w->mode >> 7 & 1))
            for (int l = 0; l < LANES; l++) r[l] = flush16(r[l]);
    }
}

static void post64(const Wave* w, const NInst* in, const ModInfo* mi, uint64_t* r) {
    if (KIND_OF(in, 3) != K_F64) return;
    if (mi && (mi->omod || mi->clamp)) {
        static const double SC[4] = {1.0, 2.0, 4.0, 0.5};
        for (int l = 0; l < LANES; l++) {
            double x = u2d(r[l]);
            if (mi->omod) x = muld(x, SC[mi->omod]);
            if (mi->clamp) x = (x != x) ? ((w->mode & 0x100) ? 0.0 : x) : (x < 0 ? 0.0 : x > 1 ? 1.0 : x);
            r[l] = d2u(x);
        }
    }
    if (FLUSH_OUT(in) && flushing(w) && !(w->mode >> 7 & 1))
        for (int l = 0; l < LANES; l++) r[l] = flush64(r[l]);
}

/* the lanes a VALU result may be written to: EXEC, restricted by DPP row/bank masks and invalid sources */
INLINE uint64_t write_mask(Ctx* c, const Wave* w, const NInst* in) {
    uint64_t m = exec_of(w);
    if (in->flags & F_MODS) {
        const ModInfo* mi = &c->mods[in->mods];
        if (mi->dpp) {
            m &= mi->write_mask;
            if (c->dpp_invalid_set) m &= ~c->dpp_invalid;
        }
    }
    c->dpp_invalid_set = 0;
    return m;
}

/* store32 of the numpy engine (general path): output modifiers, 16-bit half keep, SDWA dst, DPP masks */
static void vstore_gen(Ctx* c, Wave* w, const NInst* in, uint32_t* r) {
    const ModInfo* mi = (in->flags & F_MODS) ? &c->mods[in->mods] : NULL;
    post32(w, in, mi, r);
    uint32_t* old = vreg(w, in->d);
    if (mi && mi->half_keep) {
        for (int l = 0; l < LANES; l++)
            r[l] = mi->half_keep == 2 ? ((old[l] & 0xFFFFu) | (r[l] << 16)) : ((old[l] & 0xFFFF0000u) | (r[l] & 0xFFFFu));
    }
    if (mi && mi->sdwa_dst && mi->dst_sel != 6) {
        static const uint8_t SH[6] = {0, 8, 16, 24, 0, 16}, WD[6] = {8, 8, 8, 8, 16, 16};
        int sh = SH[mi->dst_sel], wd = WD[mi->dst_sel];
        uint32_t mask = (uint32_t)((1ULL << wd) - 1);
        for (int l = 0; l < LANES; l++) {
            uint32_t v = r[l] & mask;
            if (mi->dst_unused == 2) v = (old[l] & ~(mask << sh)) | (v << sh);
            else {
                if (mi->dst_unused == 1) v = (uint32_t)(((int32_t)(v << (32 - wd))) >> (32 - wd));
                v <<= sh;
            }
            r[l] = v;
        }
    }
    wv(w, in->d, r, write_mask(c, w, in));
}

static void vstore64_gen(Ctx* c, Wave* w, const NInst* in, uint64_t* r) {
    const ModInfo* mi = (in->flags & F_MODS) ? &c->mods[in->mods] : NULL;
    post64(w, in, mi, r);
    wv64(w, in->d, r, write_mask(c, w, in));
}

/* lane masks: pack 64 booleans into a uint64 */
INLINE uint64_t pack_bits(const uint8_t* b) {
    uint64_t m = 0;
    for (int l = 0; l < LANES; l++) m |= (uint64_t)(b[l] & 1) << l;
    return m;
}

/* ---- handler scaffolding ---------------------------------------------------------------------------------- */
#define VSETUP                                                                  \
    uint32_t ALIGN64 t0[LANES], t1[LANES], t2[LANES], R[LANES];                 \
    uint64_t ALIGN64 q0[LANES], q1[LANES], q2[LANES], Q[LANES];                 \
    int gen = general(w, in);                                                   \
    uint32_t* OUT = R;                                                          \
    (void)t0; (void)t1; (void)t2; (void)q0; (void)q1; (void)q2; (void)R; (void)Q; (void)OUT;
/* the one-liners compute straight into the destination row when nothing else is written under EXEC */
#define DIRECT() do { if (!gen && exec_of(w) == ~0ULL) OUT = vreg(w, in->d); } while (0)
#define G32(i) (gen ? prep32(c, w, in, i, t##i) : src32(w, in, i, t##i))
#define G64(i) (gen ? prep64(c, w, in, i, q##i) : src64(w, in, i, q##i))
#define END32()                                    \
    do {                                           \
        if (OUT != R) break;                       \
        if (!gen) wv(w, in->d, R, exec_of(w));     \
        else vstore_gen(c, w, in, R);              \
    } while (0)
#define END64()                                    \
    do {                                           \
        if (!gen) wv64(w, in->d, Q, exec_of(w));   \
        else vstore64_gen(c, w, in, Q);            \
    } while (0)
/* no cross-lane dependences: the destination row may be a source row (each lane reads, then writes) */
#define LOOP _Pragma("GCC ivdep") for (int l = 0; l < LANES; l++)

/* one-liners: VOPn with 32-bit sources and a 32-bit result */
#define V1(EXPR) { VSETUP DIRECT(); const uint32_t* A = G32(0); LOOP { uint32_t a = A[l]; OUT[l] = (EXPR); } END32(); }
/* (a scalar or constant src0 without modifiers, the usual VOP2 form, stays in a register: no broadcast row) */
#define SCALAR0() (!gen && SRC_KIND(in->s[0]) != SRC_V)
#define V2(EXPR) { VSETUP DIRECT(); \
    if (SCALAR0()) { const uint32_t a = ssrc(w, in, 0); const uint32_t* B = src32(w, in, 1, t1); \
        LOOP { uint32_t b = B[l]; OUT[l] = (EXPR); } } \
    else { const uint32_t* A = G32(0); const uint32_t* B = G32(1); \
        LOOP { uint32_t a = A[l], b = B[l]; OUT[l] = (EXPR); } } END32(); }
#define V3(EXPR) { VSETUP DIRECT(); const uint32_t* A = G32(0); const uint32_t* B = G32(1); const uint32_t* C_ = G32(2); \
    LOOP { uint32_t a = A[l], b = B[l], cc = C_[l]; OUT[l] = (EXPR); } END32(); }
/* float views */
#define F1(EXPR) V1(f2u((EXPR)))
#define F2(EXPR) { VSETUP DIRECT(); \
    if (SCALAR0()) { const float a = u2f(ssrc(w, in, 0)); const uint32_t* B = src32(w, in, 1, t1); \
        LOOP { float b = u2f(B[l]); OUT[l] = f2u(EXPR); } } \
    else { const uint32_t* A = G32(0); const uint32_t* B = G32(1); \
        LOOP { float a = u2f(A[l]), b = u2f(B[l]); OUT[l] = f2u(EXPR); } } END32(); }
#define F3(EXPR) { VSETUP DIRECT(); const uint32_t* A = G32(0); const uint32_t* B = G32(1); const uint32_t* C_ = G32(2); \
    LOOP { float a = u2f(A[l]), b = u2f(B[l]), cc = u2f(C_[l]); OUT[l] = f2u(EXPR); } END32(); }
/* 64-bit sources and result */
#define D1(EXPR) { VSETUP const uint64_t* A = G64(0); LOOP { double a = u2d(A[l]); Q[l] = d2u(EXPR); } END64(); }
#define D2(EXPR) { VSETUP const uint64_t* A = G64(0); const uint64_t* B = G64(1); \
    LOOP { double a = u2d(A[l]), b = u2d(B[l]); Q[l] = d2u(EXPR); } END64(); }
#define D3(EXPR) { VSETUP const uint64_t* A = G64(0); const uint64_t* B = G64(1); const uint64_t* C_ = G64(2); \
    LOOP { double a = u2d(A[l]), b = u2d(B[l]), cc = u2d(C_[l]); Q[l] = d2u(EXPR); } END64(); }
/* half views (low 16 bits; results as zero-extended half bits) */
#define H1(EXPR) { VSETUP DIRECT(); const uint32_t* A = G32(0); LOOP { uint32_t a = A[l] & 0xFFFF; OUT[l] = (EXPR) & 0xFFFF; } END32(); }
#define H2(EXPR) { VSETUP DIRECT(); const uint32_t* A = G32(0); const uint32_t* B = G32(1); \
    LOOP { uint32_t a = A[l] & 0xFFFF, b = B[l] & 0xFFFF; OUT[l] = (EXPR) & 0xFFFF; } END32(); }
#define H3(EXPR) { VSETUP DIRECT(); const uint32_t* A = G32(0); const uint32_t* B = G32(1); const uint32_t* C_ = G32(2); \
    LOOP { uint32_t a = A[l] & 0xFFFF, b = B[l] & 0xFFFF, cc = C_[l] & 0xFFFF; OUT[l] = (EXPR) & 0xFFFF; } END32(); }

#endif
