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

INLINE uint64_t exec_of(const Wave* w) {
    return ((uint64_t)w->s[EXEC] | (uint64_t)w->s[EXEC + 1] << 32) & w->lane_mask;
}
/* the wave's lanes: 32 or 64 */
INLINE int wave_lanes(const Wave* w) { return w->lane_mask == ~0ULL ? 64 : 32; }
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

/* an atomic's returned values (the low words, and with ``wide`` the high words into the next row) */
INLINE void wv_returned(Wave* w, int r, const uint64_t* res, uint64_t m, int wide) {
    uint32_t R[LANES];
    for (int l = 0; l < LANES; l++) R[l] = (uint32_t)res[l];
    wv(w, r, R, m);
    if (wide) {
        for (int l = 0; l < LANES; l++) R[l] = (uint32_t)(res[l] >> 32);
        wv(w, r + 1, R, m);
    }
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
/* the last region starting at or below a (sorted regions), or NULL */
static const Region* region_at(const Region* regions, int n, uint64_t a) {
    int lo = 0, hi = n - 1, r = -1;
    while (lo <= hi) {
        int mid = (lo + hi) >> 1;
        if (regions[mid].start <= a) { r = mid; lo = mid + 1; }
        else hi = mid - 1;
    }
    return r >= 0 ? &regions[r] : NULL;
}

static const Region* find_region(const Dispatch* d, uint64_t a) { return region_at(d->regions, d->nregions, a); }

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

/* the sanitizer's state and per-lane checks (pyhip/sanitizer, docs/check.md) */
#include "check.h"
#include "race.h"

/* all 64 lanes at consecutive ``size``-byte addresses from a[0] */
INLINE int contiguous(const uint64_t* a, uint64_t size, int nl) {
    uint64_t bad = 0, a0 = a[0];
    for (int l = 0; l < nl; l++) bad |= a[l] ^ (a0 + size * (uint64_t)l);
    return bad == 0;
}

INLINE uint32_t ld32(const uint8_t* p) { uint32_t v; memcpy(&v, p, 4); return v; }
INLINE uint64_t ld64(const uint8_t* p) { uint64_t v; memcpy(&v, p, 8); return v; }
INLINE void st32(uint8_t* p, uint32_t v) { memcpy(p, &v, 4); }
INLINE void st64(uint8_t* p, uint64_t v) { memcpy(p, &v, 8); }

/* ---- memory other host threads use at the same time (docs/memory-model.md) ---------------------------------
 * Global memory (and host memory mapped into the device) is shared by the workgroups every engine thread runs;
 * LDS, scratch and registers are not.  Every lane's access to shared memory goes through sh_load / sh_store:
 *  - a naturally aligned 1-, 2-, 4- or 8-byte access is one host access (single-copy atomic, as each lane's
 *    access is on the GPU); wider or misaligned accesses are made of the naturally aligned pieces of at most
 *    8 bytes they contain, in address order (a dwordx4 at an 8-byte boundary: two atomic 8-byte halves);
 *  - loads are acquire and stores release, so neither the C compiler nor a weakly ordered host moves one
 *    instruction's accesses across another's; x86 itself keeps loads in order and stores in order (TSO);
 *  - the one reordering TSO allows, a later load passing an earlier store still in the store buffer, is
 *    closed where the ISA closes it: s_waitcnt and the cache-control instructions (buffer_wbl2, buffer_inv,
 *    buffer_wbinvl1_vol, ...: __threadfence() and every seq_cst / acquire / release sequence contain one;
 *    lowered to the s_nop handler) run a full fence (mm_complete_stores) when the wave stored to memory
 *    since its last one (Wave.mm_pending), as the GPU completes the wave's stores there.  A wave's fence
 *    orders only its own accesses (as on the GPU): the stores of another wave of this thread that has not
 *    reached a fence of its own may still pass this wave's later loads, as they may on the hardware;
 *  - the whole-wave lane-consecutive paths (sh_load_rows / sh_store_rows for dwords, ..._rows2 / _rows4 for
 *    8-byte aligned dwordx2 / dwordx4) copy with vector moves: each aligned value (or 8-byte half) lies
 *    inside one vector access, which x86 performs whole for it.
 * Atomics are host atomic read-modify-writes (seq_cst, so also full fences) in lane order (util.h). */
INLINE void mm_stored(Wave* w) { w->mm_pending = 1; }
INLINE void mm_complete_stores(Wave* w) {
    if (UNLIKELY(w->mm_pending)) {
        __atomic_thread_fence(__ATOMIC_SEQ_CST);
        w->mm_pending = 0;
    }
}

/* one naturally aligned piece of k bytes (k = 1, 2, 4, 8) */
INLINE void sh_ld_piece(uint8_t* dst, const uint8_t* p, int k) {
    switch (k) {
    case 1: dst[0] = __atomic_load_n(p, __ATOMIC_ACQUIRE); return;
    case 2: { uint16_t v = __atomic_load_n((const uint16_t*)p, __ATOMIC_ACQUIRE); memcpy(dst, &v, 2); return; }
    case 4: { uint32_t v = __atomic_load_n((const uint32_t*)p, __ATOMIC_ACQUIRE); memcpy(dst, &v, 4); return; }
    default: { uint64_t v = __atomic_load_n((const uint64_t*)p, __ATOMIC_ACQUIRE); memcpy(dst, &v, 8); return; }
    }
}
INLINE void sh_st_piece(uint8_t* p, const uint8_t* src, int k) {
    switch (k) {
    case 1: __atomic_store_n(p, src[0], __ATOMIC_RELEASE); return;
    case 2: { uint16_t v; memcpy(&v, src, 2); __atomic_store_n((uint16_t*)p, v, __ATOMIC_RELEASE); return; }
    case 4: { uint32_t v; memcpy(&v, src, 4); __atomic_store_n((uint32_t*)p, v, __ATOMIC_RELEASE); return; }
    default: { uint64_t v; memcpy(&v, src, 8); __atomic_store_n((uint64_t*)p, v, __ATOMIC_RELEASE); return; }
    }
}
/* the largest naturally aligned piece (<= 8 bytes) at host address a with n bytes left */
INLINE int sh_piece(uintptr_t a, int n) {
    int k = 8;
    while (k > n || (a & (uintptr_t)(k - 1))) k >>= 1;
    return k;
}

/* one lane's access of ``size`` bytes (1..16) at host address p */
INLINE void sh_load(uint8_t* dst, const uint8_t* p, int size) {
    uintptr_t a = (uintptr_t)p;
    if (LIKELY((size == 4 || size == 8) && !(a & (uintptr_t)(size - 1)))) {
        sh_ld_piece(dst, p, size);
        return;
    }
    for (int i = 0; i < size;) {
        int k = sh_piece(a + (uintptr_t)i, size - i);
        sh_ld_piece(dst + i, p + i, k);
        i += k;
    }
}
INLINE void sh_store(uint8_t* p, const uint8_t* src, int size) {
    uintptr_t a = (uintptr_t)p;
    if (LIKELY((size == 4 || size == 8) && !(a & (uintptr_t)(size - 1)))) {
        sh_st_piece(p, src, size);
        return;
    }
    for (int i = 0; i < size;) {
        int k = sh_piece(a + (uintptr_t)i, size - i);
        sh_st_piece(p + i, src + i, k);
        i += k;
    }
}
/* One lane's dword / qword.  On x86-64 a single mov whatever the alignment: whole when naturally aligned,
 * and the hardware performs a misaligned one too (the GPU promises nothing for those), so no alignment test
 * per lane; elsewhere a misaligned address is split into its aligned pieces (sh_load). */
#if defined(__x86_64__)
#define SH_ANY_ALIGN 1
#else
#define SH_ANY_ALIGN 0
#endif
INLINE uint32_t sh_ld32(const uint8_t* p) {
    if (SH_ANY_ALIGN || LIKELY(!((uintptr_t)p & 3))) return __atomic_load_n((const uint32_t*)p, __ATOMIC_ACQUIRE);
    uint8_t b[16];
    sh_load(b, p, 4);
    return ld32(b);
}
INLINE uint64_t sh_ld64(const uint8_t* p) {
    if (SH_ANY_ALIGN || LIKELY(!((uintptr_t)p & 7))) return __atomic_load_n((const uint64_t*)p, __ATOMIC_ACQUIRE);
    uint8_t b[16];
    sh_load(b, p, 8);
    return ld64(b);
}
INLINE void sh_st32(uint8_t* p, uint32_t v) {
    if (SH_ANY_ALIGN || LIKELY(!((uintptr_t)p & 3))) {
        __atomic_store_n((uint32_t*)p, v, __ATOMIC_RELEASE);
        return;
    }
    uint8_t b[16];
    memcpy(b, &v, 4);
    sh_store(p, b, 4);
}
INLINE void sh_st64(uint8_t* p, uint64_t v) {
    if (SH_ANY_ALIGN || LIKELY(!((uintptr_t)p & 7))) {
        __atomic_store_n((uint64_t*)p, v, __ATOMIC_RELEASE);
        return;
    }
    uint8_t b[16];
    memcpy(b, &v, 8);
    sh_store(p, b, 8);
}

/* The whole-wave paths below read / write n consecutive bytes at p: the next waves (of this workgroup or the
 * next) usually go on where this one ended, and one wave's access is too short for the host's stream
 * prefetcher to run ahead of it between the instructions in between.  So the lines some way past the access
 * are requested now (a hint: never faults, even past the end of the mapping). */
INLINE void sh_prefetch_ahead(const uint8_t* p, size_t n, int write) {
    const uint8_t* q = p + (n < 512 ? 1024 : 2 * n);
    if (write)
        for (int i = 0; i < 8; i++) __builtin_prefetch(q + 64 * i, 1);
    else
        for (int i = 0; i < 8; i++) __builtin_prefetch(q + 64 * i, 0);
}

/* A whole wave's dwords at consecutive dword-aligned addresses (the coalesced path): vector moves at offsets
 * that are multiples of 4 from p, so every dword is read / written whole by one host access (a vector access
 * never splits an aligned dword across cache lines); the compiler barriers keep the copy between the
 * instruction's neighbours. */
INLINE void sh_load_rows(uint32_t* dst, const uint8_t* p, int nl) {
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    sh_prefetch_ahead(p, 4 * (size_t)nl, 0);
#if defined(__AVX2__)
    for (int i = 0; i < nl / 8; i++)
        _mm256_storeu_si256((__m256i*)(dst + 8 * i), _mm256_loadu_si256((const __m256i*)(p + 32 * i)));
#elif defined(__SSE2__)
    for (int i = 0; i < nl / 4; i++)
        _mm_storeu_si128((__m128i*)(dst + 4 * i), _mm_loadu_si128((const __m128i*)(p + 16 * i)));
#else
    for (int l = 0; l < nl; l++) dst[l] = __atomic_load_n((const uint32_t*)(p + 4 * l), __ATOMIC_RELAXED);
#endif
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
}
INLINE void sh_store_rows(uint8_t* p, const uint32_t* src, int nl) {
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    sh_prefetch_ahead(p, 4 * (size_t)nl, 1);
#if defined(__AVX2__)
    for (int i = 0; i < nl / 8; i++)
        _mm256_storeu_si256((__m256i*)(p + 32 * i), _mm256_loadu_si256((const __m256i*)(src + 8 * i)));
#elif defined(__SSE2__)
    for (int i = 0; i < nl / 4; i++)
        _mm_storeu_si128((__m128i*)(p + 16 * i), _mm_loadu_si128((const __m128i*)(src + 4 * i)));
#else
    for (int l = 0; l < nl; l++) __atomic_store_n((uint32_t*)(p + 4 * l), src[l], __ATOMIC_RELAXED);
#endif
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
}

/* The same for 64 lanes' 8-byte values at consecutive addresses from an 8-byte aligned p (dwordx2), as two
 * rows of low and high dwords: every aligned 8-byte value lies inside one vector access (whole), the rows
 * are (de)interleaved in registers. */
INLINE void sh_load_rows2(uint32_t* lo, uint32_t* hi, const uint8_t* p, int nl) {
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    sh_prefetch_ahead(p, 8 * (size_t)nl, 0);
#if defined(__AVX2__)
    for (int i = 0; i < nl / 8; i++) {       /* lanes 8i..8i+7 */
        __m256 a = _mm256_castsi256_ps(_mm256_loadu_si256((const __m256i*)(p + 64 * i)));
        __m256 b = _mm256_castsi256_ps(_mm256_loadu_si256((const __m256i*)(p + 64 * i + 32)));
        __m256i l = _mm256_castps_si256(_mm256_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0)));  /* 0 1 4 5 | 2 3 6 7 */
        __m256i h = _mm256_castps_si256(_mm256_shuffle_ps(a, b, _MM_SHUFFLE(3, 1, 3, 1)));
        _mm256_storeu_si256((__m256i*)(lo + 8 * i), _mm256_permute4x64_epi64(l, _MM_SHUFFLE(3, 1, 2, 0)));
        _mm256_storeu_si256((__m256i*)(hi + 8 * i), _mm256_permute4x64_epi64(h, _MM_SHUFFLE(3, 1, 2, 0)));
    }
#else
    for (int l = 0; l < nl; l++) {
        uint64_t v = __atomic_load_n((const uint64_t*)(p + 8 * l), __ATOMIC_RELAXED);
        lo[l] = (uint32_t)v;
        hi[l] = (uint32_t)(v >> 32);
    }
#endif
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
}
INLINE void sh_store_rows2(uint8_t* p, const uint32_t* lo, const uint32_t* hi, int nl) {
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    sh_prefetch_ahead(p, 8 * (size_t)nl, 1);
#if defined(__AVX2__)
    for (int i = 0; i < nl / 8; i++) {
        __m256i l = _mm256_permute4x64_epi64(_mm256_loadu_si256((const __m256i*)(lo + 8 * i)), _MM_SHUFFLE(3, 1, 2, 0));
        __m256i h = _mm256_permute4x64_epi64(_mm256_loadu_si256((const __m256i*)(hi + 8 * i)), _MM_SHUFFLE(3, 1, 2, 0));
        _mm256_storeu_si256((__m256i*)(p + 64 * i), _mm256_unpacklo_epi32(l, h));        /* lanes 8i..8i+3 */
        _mm256_storeu_si256((__m256i*)(p + 64 * i + 32), _mm256_unpackhi_epi32(l, h));   /* lanes 8i+4..8i+7 */
    }
#else
    for (int l = 0; l < nl; l++)
        __atomic_store_n((uint64_t*)(p + 8 * l), (uint64_t)lo[l] | (uint64_t)hi[l] << 32, __ATOMIC_RELAXED);
#endif
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
}
/* 16-byte values (dwordx4) at an 8-byte aligned p: each lane's value one 16-byte access (its two aligned
 * 8-byte halves whole), four lanes transposed into the four rows at a time */
INLINE void sh_load_rows4(uint32_t* const r[4], const uint8_t* p, int nl) {
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    sh_prefetch_ahead(p, 16 * (size_t)nl, 0);
    for (int l = 0; l < nl; l += 4) {
        __m128 a = _mm_castsi128_ps(_mm_loadu_si128((const __m128i*)(p + 16 * l)));
        __m128 b = _mm_castsi128_ps(_mm_loadu_si128((const __m128i*)(p + 16 * l + 16)));
        __m128 c = _mm_castsi128_ps(_mm_loadu_si128((const __m128i*)(p + 16 * l + 32)));
        __m128 d = _mm_castsi128_ps(_mm_loadu_si128((const __m128i*)(p + 16 * l + 48)));
        _MM_TRANSPOSE4_PS(a, b, c, d);
        _mm_storeu_ps((float*)(r[0] + l), a);
        _mm_storeu_ps((float*)(r[1] + l), b);
        _mm_storeu_ps((float*)(r[2] + l), c);
        _mm_storeu_ps((float*)(r[3] + l), d);
    }
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
}
INLINE void sh_store_rows4(uint8_t* p, const uint32_t* const r[4], int nl) {
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    sh_prefetch_ahead(p, 16 * (size_t)nl, 1);
    for (int l = 0; l < nl; l += 4) {
        __m128 a = _mm_loadu_ps((const float*)(r[0] + l)), b = _mm_loadu_ps((const float*)(r[1] + l));
        __m128 c = _mm_loadu_ps((const float*)(r[2] + l)), d = _mm_loadu_ps((const float*)(r[3] + l));
        _MM_TRANSPOSE4_PS(a, b, c, d);
        _mm_storeu_si128((__m128i*)(p + 16 * l), _mm_castps_si128(a));
        _mm_storeu_si128((__m128i*)(p + 16 * l + 16), _mm_castps_si128(b));
        _mm_storeu_si128((__m128i*)(p + 16 * l + 32), _mm_castps_si128(c));
        _mm_storeu_si128((__m128i*)(p + 16 * l + 48), _mm_castps_si128(d));
    }
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
}

/* memcheck going on at a scalar load of n dwords from a (s_load, after its translation failed): each dword
 * read where the GPU would read it (0 from nowhere), the bad ones recorded (lane -1: a scalar access) */
static int check_s_load(Ctx* c, Wave* w, uint64_t a, int n, int d) {
    uint64_t first = 0, nbad = 0;
    for (int i = 0; i < n; i++) {
        uint64_t x = a + 4 * (uint64_t)i;
        const uint8_t* p = xlate(c, x, 4);
        if (!p) {
            if (!nbad++) first = x;
            p = check_mapped(c, x, 4);
        }
        uint32_t v = p ? sh_ld32(p) : 0;
        if (d + i < 106) w->s[d + i] = v;
    }
    check_hit(c, w, -1, first, 4, 0, 1);
    return ST_CONT;
}

#endif
