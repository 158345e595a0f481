/* Register access, faults and memory translation shared by every instruction handler. */
#ifndef PYHIP_STATE_H
#define PYHIP_STATE_H

#include "engine.h"
#include "fp.h"
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

/* lane masks <-> arrays of 64 words (0 / 0xFFFFFFFF), in forms the compiler vectorizes */
static const uint32_t LANEBIT[LANES] = {
    1u << 0, 1u << 1, 1u << 2, 1u << 3, 1u << 4, 1u << 5, 1u << 6, 1u << 7, 1u << 8, 1u << 9, 1u << 10, 1u << 11,
    1u << 12, 1u << 13, 1u << 14, 1u << 15, 1u << 16, 1u << 17, 1u << 18, 1u << 19, 1u << 20, 1u << 21, 1u << 22,
    1u << 23, 1u << 24, 1u << 25, 1u << 26, 1u << 27, 1u << 28, 1u << 29, 1u << 30, 1u << 31,
    1u << 0, 1u << 1, 1u << 2, 1u << 3, 1u << 4, 1u << 5, 1u << 6, 1u << 7, 1u << 8, 1u << 9, 1u << 10, 1u << 11,
    1u << 12, 1u << 13, 1u << 14, 1u << 15, 1u << 16, 1u << 17, 1u << 18, 1u << 19, 1u << 20, 1u << 21, 1u << 22,
    1u << 23, 1u << 24, 1u << 25, 1u << 26, 1u << 27, 1u << 28, 1u << 29, 1u << 30, 1u << 31};

INLINE void unpack_mask(uint64_t m, uint32_t* out) {
    uint32_t lo = (uint32_t)m, hi = (uint32_t)(m >> 32);
    for (int l = 0; l < 32; l++) out[l] = (lo & LANEBIT[l]) ? 0xFFFFFFFFu : 0;
    for (int l = 32; l < LANES; l++) out[l] = (hi & LANEBIT[l]) ? 0xFFFFFFFFu : 0;
}

/* bit l set where b[l] != 0 */
INLINE uint64_t pack_mask(const uint32_t* b) {
    uint64_t m = 0;
#if defined(__AVX2__)
    for (int i = 0; i < 8; i++) {
        __m256i v = _mm256_loadu_si256((const __m256i*)(b + 8 * i));
        __m256i z = _mm256_cmpeq_epi32(v, _mm256_setzero_si256());
        m |= (uint64_t)(~_mm256_movemask_ps(_mm256_castsi256_ps(z)) & 0xFF) << (8 * i);
    }
#elif defined(__SSE2__)
    for (int i = 0; i < 16; i++) {
        __m128i v = _mm_loadu_si128((const __m128i*)(b + 4 * i));
        __m128i z = _mm_cmpeq_epi32(v, _mm_setzero_si128());
        m |= (uint64_t)(~_mm_movemask_ps(_mm_castsi128_ps(z)) & 0xF) << (4 * i);
    }
#else
    for (int l = 0; l < LANES; l++) m |= (uint64_t)(b[l] != 0) << l;
#endif
    return m;
}

INLINE uint64_t exec_of(const Wave* w) {
    return ((uint64_t)w->s[EXEC] | (uint64_t)w->s[EXEC + 1] << 32) & w->lane_mask;
}
INLINE uint64_t sreg64(const Wave* w, int r) { return (uint64_t)w->s[r] | (uint64_t)w->s[r + 1] << 32; }
INLINE uint32_t* vreg(const Wave* w, int r) { return w->v + (size_t)r * LANES; }

INLINE void write_s(Wave* w, int r, uint32_t v) {
    if (r == 125 || r >= NSGPR) return;
    w->s[r] = v;
}
INLINE void write_s64(Wave* w, int r, uint64_t v) {
    write_s(w, r, (uint32_t)v);
    write_s(w, r + 1, (uint32_t)(v >> 32));
}

/* an SGPR pair written as a lane mask (set_sgpr_mask: no null-register filtering) */
INLINE void set_mask(Wave* w, int r, uint64_t v) {
    w->s[r & 127] = (uint32_t)v;
    w->s[(r + 1) & 127] = (uint32_t)(v >> 32);
}

/* a VGPR row written under a lane mask */
INLINE void wv(Wave* w, int r, const uint32_t* val, uint64_t m) {
    uint32_t* d = vreg(w, r);
    if (LIKELY(m == ~0ULL)) {
        memcpy(d, val, 256);
        return;
    }
    uint32_t mk[LANES];
    unpack_mask(m, mk);
    for (int l = 0; l < LANES; l++) d[l] = (val[l] & mk[l]) | (d[l] & ~mk[l]);
}
INLINE void wv64(Wave* w, int r, const uint64_t* val, uint64_t m) {
    uint32_t* lo = vreg(w, r);
    uint32_t* hi = vreg(w, r + 1);
    if (LIKELY(m == ~0ULL)) {
        for (int l = 0; l < LANES; l++) lo[l] = (uint32_t)val[l];
        for (int l = 0; l < LANES; l++) hi[l] = (uint32_t)(val[l] >> 32);
        return;
    }
    uint32_t mk[LANES];
    unpack_mask(m, mk);
    for (int l = 0; l < LANES; l++) lo[l] = ((uint32_t)val[l] & mk[l]) | (lo[l] & ~mk[l]);
    for (int l = 0; l < LANES; l++) hi[l] = ((uint32_t)(val[l] >> 32) & mk[l]) | (hi[l] & ~mk[l]);
}

/* ---- scalar sources ------------------------------------------------------------------------------------ */
INLINE uint32_t ssrc(const Wave* w, const NInst* in, int i) {
    uint16_t s = in->s[i];
    if (LIKELY(SRC_KIND(s) == SRC_S)) return w->s[SRC_IDX(s)];
    if (s == SRC_K) return in->k[i];
    if (s == SRC_SCC) return w->scc;
    if (s == SRC_VCCZ) return (w->s[VCC] | w->s[VCC + 1]) == 0;
    if (s == SRC_EXECZ) return (w->s[EXEC] | w->s[EXEC + 1]) == 0;
    return w->s[SRC_IDX(s) & 127];
}
INLINE uint64_t ssrc64(const Wave* w, const NInst* in, int i) {
    uint16_t s = in->s[i];
    if (LIKELY(SRC_KIND(s) == SRC_S)) return sreg64(w, SRC_IDX(s));
    if (s == SRC_K) return (uint64_t)in->k[i] | (uint64_t)in->khi[i] << 32;
    return ssrc(w, in, i);
}

/* ---- vector sources: a VGPR row, or a scalar broadcast into tmp --------------------------------------- */
INLINE const uint32_t* src32(const Wave* w, const NInst* in, int i, uint32_t* tmp) {
    uint16_t s = in->s[i];
    if (LIKELY(SRC_KIND(s) == SRC_V)) return vreg(w, s);
    uint32_t v = ssrc(w, in, i);
    for (int l = 0; l < LANES; l++) tmp[l] = v;
    return tmp;
}
INLINE const uint64_t* src64(const Wave* w, const NInst* in, int i, uint64_t* tmp) {
    uint16_t s = in->s[i];
    if (LIKELY(SRC_KIND(s) == SRC_V)) {
        const uint32_t* lo = vreg(w, s);
        const uint32_t* hi = vreg(w, s + 1);
        for (int l = 0; l < LANES; l++) tmp[l] = (uint64_t)lo[l] | (uint64_t)hi[l] << 32;
        return tmp;
    }
    uint64_t v = ssrc64(w, in, i);
    for (int l = 0; l < LANES; l++) tmp[l] = v;
    return tmp;
}

/* ---- faults ---------------------------------------------------------------------------------------------- */
static int raise_fault(Ctx* c, const Wave* w, int kind, int lane, uint64_t address, int has_address, int size,
                       int64_t arg) {
    Dispatch* d = c->d;
    if (__atomic_exchange_n(&d->failed, 1, __ATOMIC_ACQ_REL) == 0) {
        Fault* f = &d->fault;
        f->kind = kind;
        f->ip = c->cur_ip;
        f->wave = w ? w->wave : 0;
        f->lane = lane;
        if (w && w->g) memcpy(f->wg, w->g->id, sizeof f->wg);
        f->size = size;
        f->address = address;
        f->has_address = has_address;
        f->arg = arg;
    }
    __atomic_store_n(&d->abort_flag, 1, __ATOMIC_RELEASE);
    return ST_FAULT;
}

/* ---- global memory ---------------------------------------------------------------------------------------- */
static const Region* find_region(const Dispatch* d, uint64_t a) {
    int lo = 0, hi = d->nregions - 1, r = -1;
    while (lo <= hi) {
        int mid = (lo + hi) >> 1;
        if (d->regions[mid].start <= a) { r = mid; lo = mid + 1; }
        else hi = mid - 1;
    }
    return r >= 0 ? &d->regions[r] : NULL;
}

/* host address of [a, a + size) inside one allocation, or NULL */
/* the region cache slot of the instruction being executed: each memory instruction usually stays in one
 * allocation, while a kernel's instructions touch several (kernarg segment, inputs, output) */
INLINE const Region** rslot(Ctx* c) { return c->rcache ? &c->rcache[c->cur_ip] : &c->last; }

INLINE uint8_t* xlate(Ctx* c, uint64_t a, uint32_t size) {
    const Region** slot = rslot(c);
    const Region* r = *slot;
    uint64_t e = a + size;
    if (LIKELY(r && a >= r->start && e <= r->end && e >= a)) return r->host + (a - r->start);
    r = find_region(c->d, a);
    if (!r || e > r->end || e < a) return NULL;
    *slot = r;
    return r->host + (a - r->start);
}

/* Translate the lanes of m: on success ptr[l] holds each active lane's host address.  On failure returns
 * the first bad lane (lane order), else -1. */
static int xlate_lanes(Ctx* c, const uint64_t* a, uint64_t m, uint32_t size, uint8_t** ptr) {
    if (!m) return -1;
    uint64_t lo = ~0ULL, hi = 0;
    if (m == ~0ULL) {
        for (int l = 0; l < LANES; l++) {
            uint64_t x = a[l];
            lo = x < lo ? x : lo;
            hi = x > hi ? x : hi;
        }
    } else {
        for (int l = 0; l < LANES; l++) {
            if (m >> l & 1) {
                uint64_t x = a[l];
                lo = x < lo ? x : lo;
                hi = x > hi ? x : hi;
            }
        }
    }
    const Region** slot = rslot(c);
    const Region* r = *slot;
    if (!(r && lo >= r->start && hi + size <= r->end && hi + size >= hi)) {
        r = find_region(c->d, lo);
        if (r && hi + size <= r->end && hi + size >= hi) *slot = r;
        else r = NULL;
    }
    if (LIKELY(r != NULL)) {
        uintptr_t base = (uintptr_t)r->host - (uintptr_t)r->start;
        for (int l = 0; l < LANES; l++) ptr[l] = (uint8_t*)(base + (uintptr_t)a[l]);
        return -1;
    }
    for (int l = 0; l < LANES; l++) {
        if (!(m >> l & 1)) continue;
        uint8_t* p = xlate(c, a[l], size);
        if (!p) return l;
        ptr[l] = p;
    }
    return -1;
}

/* all 64 lanes at consecutive ``size``-byte addresses from a[0] */
INLINE int contiguous(const uint64_t* a, uint64_t size) {
    uint64_t bad = 0, a0 = a[0];
    for (int l = 0; l < LANES; l++) bad |= a[l] ^ (a0 + size * (uint64_t)l);
    return bad == 0;
}

INLINE uint32_t ld32(const uint8_t* p) { uint32_t v; memcpy(&v, p, 4); return v; }
INLINE uint64_t ld64(const uint8_t* p) { uint64_t v; memcpy(&v, p, 8); return v; }
INLINE void st32(uint8_t* p, uint32_t v) { memcpy(p, &v, 4); }
INLINE void st64(uint8_t* p, uint64_t v) { memcpy(p, &v, 8); }

#endif
