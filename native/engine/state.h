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

/* ---- sanitizer (pyhip/sanitizer, docs/check.md): memcheck going on after a bad access ----------------------
 * While memcheck is on (pyhip_check_set), the regions end at each allocation's exact end, and a lane whose
 * bytes do not translate is recorded here (one record per instruction address, with a count of lanes) instead
 * of faulting, and then done as the GPU would do it: inside the address space an arena allocation owns (its
 * whole fragments: pyhip/emu/memory.py) the access is performed, elsewhere a load reads 0 and a store is
 * dropped.  Python takes the records (pyhip_check_take) and names them. */
typedef struct CheckHit {
    uint64_t code;        /* absolute address of the instruction */
    uint64_t address;     /* the first bad lane's address */
    uint64_t count;       /* bad lanes seen at this instruction */
    int32_t wave, lane, size, write;
    uint32_t wg[3];
    int32_t pad;
    uint32_t lds_size, lds_alloc;   /* CHECK_LDS: the dispatch's group segment and the LDS allocated for it */
} CheckHit;

#define CHECK_SLOTS 1024
#define CHECK_ARENAS 16
static struct {
    int32_t on, lock, n, narenas;
    uint64_t lost;                                /* records that found no free slot */
    uint64_t start[CHECK_ARENAS], end[CHECK_ARENAS], fragment[CHECK_ARENAS];
    CheckHit hit[CHECK_SLOTS];
} g_check;
static __thread uint8_t g_check_sink[LANES][16];  /* where lanes that reach no memory load from / store to */

/* memcheck going on (on = 1) or off; the arenas: [start, end) device addresses and the fragment an allocation
 * of each owns at least */
__attribute__((visibility("default"))) int pyhip_check_set(int32_t on, const uint64_t* arenas, int32_t n) {
    if (n > CHECK_ARENAS) n = CHECK_ARENAS;
    for (int i = 0; i < n; i++) {
        g_check.start[i] = arenas[3 * i];
        g_check.end[i] = arenas[3 * i + 1];
        g_check.fragment[i] = arenas[3 * i + 2];
    }
    g_check.narenas = n;
    __atomic_store_n(&g_check.on, on, __ATOMIC_RELEASE);
    return CHECK_SLOTS;
}

/* the records so far into out (at most max), which are then forgotten; returns how many (*lost: records that
 * found no slot since the last call) */
__attribute__((visibility("default"))) int32_t pyhip_check_take(CheckHit* out, int32_t max, uint64_t* lost) {
    while (__atomic_exchange_n(&g_check.lock, 1, __ATOMIC_ACQUIRE)) {}
    int32_t n = g_check.n < max ? g_check.n : max;
    memcpy(out, g_check.hit, sizeof(CheckHit) * (size_t)n);
    g_check.n = 0;
    *lost = g_check.lost;
    g_check.lost = 0;
    __atomic_store_n(&g_check.lock, 0, __ATOMIC_RELEASE);
    return n;
}

/* whether record a names an earlier lane than b in dispatch order (workgroup z, y, x, wave, lane) */
static int check_before(const CheckHit* a, const CheckHit* b) {
    for (int k = 2; k >= 0; k--)
        if (a->wg[k] != b->wg[k]) return a->wg[k] < b->wg[k];
    if (a->wave != b->wave) return a->wave < b->wave;
    return a->lane < b->lane;
}

/* a record (kind: CHECK_MEM / CHECK_SYNC / ... in its pad field), counted into the one at the same code and
 * kind, which names the first lane in dispatch order (workgroups run on several threads: the numpy engine's
 * order, whatever the threads' timing) */
static void check_put(const CheckHit* r) {
    while (__atomic_exchange_n(&g_check.lock, 1, __ATOMIC_ACQUIRE)) {}
    int i = 0;
    while (i < g_check.n && (g_check.hit[i].code != r->code || g_check.hit[i].pad != r->pad)) i++;
    if (i < g_check.n) {
        uint64_t n = g_check.hit[i].count + r->count;
        if (check_before(r, &g_check.hit[i])) g_check.hit[i] = *r;
        g_check.hit[i].count = n;
    } else if (i < CHECK_SLOTS) g_check.hit[g_check.n++] = *r;
    else g_check.lost += r->count;
    __atomic_store_n(&g_check.lock, 0, __ATOMIC_RELEASE);
}

enum { CHECK_MEM = 0, CHECK_SYNC = 1, CHECK_LDS = 2, CHECK_INIT = 3 };

/* ---- initcheck (pyhip/sanitizer/initcheck.py): the arenas' shadows, one byte per byte, 1 where something wrote
 * since the allocation.  While it is on, the handlers mark the bytes their stores and atomics reach and look at
 * those their loads read, lane by lane (the whole-wave fast paths step aside, and the compiled code's own
 * accesses too: pyhip_jit_xlate refuses every translation, so they call the handlers).  A load of a byte
 * nothing wrote is recorded (CHECK_INIT, one record per instruction with a count of lanes; lds_alloc holds
 * the first such lane's unwritten byte count) and performed. */
static struct {
    int32_t on, n;
    uint8_t *lo[CHECK_ARENAS], *hi[CHECK_ARENAS], *shadow[CHECK_ARENAS];
} g_init;
#define INIT_ON() UNLIKELY(__atomic_load_n(&g_init.on, __ATOMIC_RELAXED))

/* initcheck on (1) or off; per arena: its host address, its end, its shadow's host address */
__attribute__((visibility("default"))) void pyhip_initcheck_set(int32_t on, const uint64_t* arenas, int32_t n) {
    __atomic_store_n(&g_init.on, 0, __ATOMIC_RELEASE);
    if (n > CHECK_ARENAS) n = CHECK_ARENAS;
    for (int i = 0; i < n; i++) {
        g_init.lo[i] = (uint8_t*)(uintptr_t)arenas[3 * i];
        g_init.hi[i] = (uint8_t*)(uintptr_t)arenas[3 * i + 1];
        g_init.shadow[i] = (uint8_t*)(uintptr_t)arenas[3 * i + 2];
    }
    g_init.n = n;
    __atomic_store_n(&g_init.on, on && n > 0, __ATOMIC_RELEASE);
}

/* the shadow of host address p, or NULL outside the arenas (LDS, private memory, host-mapped allocations) */
INLINE uint8_t* init_shadow(const uint8_t* p) {
    for (int i = 0; i < g_init.n; i++)
        if (p >= g_init.lo[i] && p < g_init.hi[i]) return g_init.shadow[i] + (p - g_init.lo[i]);
    return NULL;
}

/* the active lanes m of an access of ``size`` bytes at device addresses addr (NULL: the one address a0, lane -1:
 * a scalar access) and host pointers ptr: a store's bytes marked, a load's looked at */
static void init_lanes(Ctx* c, const Wave* w, const uint64_t* addr, uint64_t a0, uint8_t* const* ptr, uint64_t m,
                       int size, int write) {
    int first = -1, unwritten = 0;
    uint64_t count = 0;
    for (int l = 0; l < LANES; l++) {
        if (!(m >> l & 1)) continue;
        uint8_t* s = init_shadow(ptr[l]);
        if (!s) continue;
        if (write) {
            memset(s, 1, (size_t)size);
            continue;
        }
        int u = 0;
        for (int i = 0; i < size; i++) u += !s[i];
        if (!u) continue;
        if (first < 0) first = l, unwritten = u;
        count++;
    }
    if (!count) return;
    const Dispatch* d = c->d;
    CheckHit h;
    memset(&h, 0, sizeof h);
    h.pad = CHECK_INIT;
    h.code = d->code_base + (c->cur_ip >= 0 && c->cur_ip < d->ncode ? d->code[c->cur_ip].pc : 0);
    h.address = addr ? addr[first] : a0;
    h.count = count;
    h.wave = w ? w->wave : 0;
    h.lane = addr ? first : -1;
    h.size = size;
    h.lds_alloc = (uint32_t)unwritten;
    if (w && w->g) memcpy(h.wg, w->g->id, sizeof h.wg);
    check_put(&h);
}

/* an atomic's lanes in lane order, each reading its bytes (recorded when nothing wrote them) and then writing
 * them: a later lane at the same address reads what the earlier one wrote, as the lanes apply one after another */
static void init_atomic_lanes(Ctx* c, const Wave* w, const uint64_t* addr, uint8_t* const* ptr, uint64_t m, int size) {
    uint8_t* one[LANES];
    for (int l = 0; l < LANES; l++) {
        if (!(m >> l & 1)) continue;
        one[l] = ptr[l];
        init_lanes(c, w, addr, 0, one, 1ULL << l, size, 0);
        init_lanes(c, w, addr, 0, one, 1ULL << l, size, 1);
    }
}

/* a scalar access of ``size`` bytes at a (host pointer p) */
static void init_scalar(Ctx* c, const Wave* w, uint64_t a, uint8_t* p, int size, int write) {
    uint8_t* ptr[LANES];
    ptr[0] = p;
    init_lanes(c, w, NULL, a, ptr, 1, size, write);
}

/* a record of kind (CHECK_MEM, CHECK_LDS) at the current instruction: the first bad lane, its address */
static void check_record(Ctx* c, const Wave* w, int kind, int lane, uint64_t address, int size, int write,
                         uint64_t count) {
    const Dispatch* d = c->d;
    CheckHit h;
    memset(&h, 0, sizeof h);
    h.pad = kind;
    h.lds_size = d->lds_size;
    h.lds_alloc = d->lds_alloc;
    h.code = d->code_base + (c->cur_ip >= 0 && c->cur_ip < d->ncode ? d->code[c->cur_ip].pc : 0);
    h.address = address;
    h.count = count;
    h.wave = w ? w->wave : 0;
    h.lane = lane;
    h.size = size;
    h.write = write;
    if (w && w->g) memcpy(h.wg, w->g->id, sizeof h.wg);
    check_put(&h);
}

static void check_hit(Ctx* c, const Wave* w, int lane, uint64_t address, int size, int write, uint64_t count) {
    check_record(c, w, CHECK_MEM, lane, address, size, write, count);
}

/* The lanes of m whose LDS bytes [a[l], a[l] + size) the hardware accesses: those inside the LDS it allocated
 * the workgroup (lds_alloc, the group segment rounded up to the target's granule); beyond it a read returns 0
 * and a write is dropped, without a fault (ISA).  Lanes past the exact group segment are recorded for memcheck
 * while it is on (CHECK_LDS: the first such lane's LDS offset, a count of lanes), performed or not. */
static uint64_t lds_lanes(Ctx* c, const Wave* w, const uint32_t* a, int size, uint64_t m, int write) {
    int64_t lim = c->d->lds_size, alloc = c->d->lds_alloc;
    uint64_t keep = m, over = 0;
    int first = -1;
    for (int l = 0; l < LANES; l++) {
        if (!(m >> l & 1) || (int64_t)a[l] + size <= lim) continue;
        if (first < 0) first = l;
        over++;
        if ((int64_t)a[l] + size > alloc) keep &= ~(1ULL << l);
    }
    if (over && __atomic_load_n(&g_check.on, __ATOMIC_ACQUIRE))
        check_record(c, w, CHECK_LDS, first, a[first], size, write, over);
    return keep;
}

/* ---- synccheck: an s_barrier reached by only some waves of a workgroup (others ended, or wait at another
 * s_barrier).  Execution is unchanged (waves that ended do not count, any s_barrier releases the others, as
 * on hardware); each such pair is recorded at the waiting wave's barrier: wave, the other wave (size), how
 * the other is (write: 1 ended, 2 at another barrier) and the other's PC (address). */
static int32_t g_sync_on;
__attribute__((visibility("default"))) void pyhip_check_sync(int32_t on) {
    __atomic_store_n(&g_sync_on, on, __ATOMIC_RELEASE);
}
static __thread struct { const void* g; int32_t ip; } g_sync_at[64];  /* each wave's last barrier / s_endpgm */

static int32_t sync_barrier_ip(const Wave* w) {
    int k = w->wave & 63;
    return g_sync_at[k].g == (const void*)w->g ? g_sync_at[k].ip : -1;
}

static void sync_hit(Ctx* c, const Wave* waiting, int32_t ip, const Wave* other, int32_t other_ip, int how) {
    const Dispatch* d = c->d;
    CheckHit h;
    memset(&h, 0, sizeof h);
    h.pad = CHECK_SYNC;
    h.code = d->code_base + (ip >= 0 && ip < d->ncode ? d->code[ip].pc : 0);
    h.address = d->code_base + (other_ip >= 0 && other_ip < d->ncode ? d->code[other_ip].pc : 0);
    h.count = 1;
    h.wave = waiting->wave;
    h.lane = -1;
    h.size = other->wave;
    h.write = how;
    if (waiting->g) memcpy(h.wg, waiting->g->id, sizeof h.wg);
    check_put(&h);
}

/* the check at w's s_barrier (at_barrier) or s_endpgm, the instruction c->cur_ip */
static void sync_check(Ctx* c, Wave* w, int at_barrier) {
    if (!__atomic_load_n(&g_sync_on, __ATOMIC_ACQUIRE) || !w->g) return;
    Group* g = w->g;
    g_sync_at[w->wave & 63].g = g;
    g_sync_at[w->wave & 63].ip = c->cur_ip;
    for (int k = 0; k < g->nw; k++) {
        Wave* o = &g->w[k];
        if (o == w) continue;
        if (at_barrier && o->state == WS_DONE) sync_hit(c, w, c->cur_ip, o, sync_barrier_ip(o), 1);
        else if (o->state == WS_BARRIER) {
            int32_t oip = sync_barrier_ip(o);           /* -1: not known here (the test schedule) */
            if (!at_barrier) sync_hit(c, o, oip, w, c->cur_ip, 1);
            else if (oip >= 0 && oip != c->cur_ip) {              /* each wave's side: both barriers named */
                sync_hit(c, w, c->cur_ip, o, oip, 2);
                sync_hit(c, o, oip, w, c->cur_ip, 2);
            }
        }
    }
}

/* where the GPU would access [a, a + size): inside the fragments of the arena allocation below it, or NULL */
static uint8_t* check_mapped(const Ctx* c, uint64_t a, uint32_t size) {
    const Region* r = find_region(c->d, a);
    if (!r) return NULL;
    for (int i = 0; i < g_check.narenas; i++) {
        if (r->start < g_check.start[i] || r->start >= g_check.end[i]) continue;
        uint64_t f = g_check.fragment[i];
        uint64_t end = r->start + (r->end - r->start + f - 1) / f * f;
        return a + size <= end && a + size >= a ? r->host + (a - r->start) : NULL;
    }
    return NULL;
}

/* memcheck's translation of the lanes of m after xlate_lanes found a bad one: every bad lane recorded (one
 * record, counted per lane), each lane's pointer where the GPU would access (a sink when nowhere) */
static void check_lanes(Ctx* c, const Wave* w, const uint64_t* a, uint64_t m, uint32_t size, uint8_t** ptr, int write) {
    int first = -1;
    uint64_t nbad = 0;
    for (int l = 0; l < LANES; l++) {
        if (!(m >> l & 1)) continue;
        uint8_t* p = xlate(c, a[l], size);
        if (!p) {
            if (first < 0) first = l;
            nbad++;
            p = check_mapped(c, a[l], size);
            if (!p) {
                memset(g_check_sink[l], 0, sizeof g_check_sink[l]);
                p = g_check_sink[l];
            }
        }
        ptr[l] = p;
    }
    if (first >= 0) check_hit(c, w, first, a[first], (int)size, write, nbad);
}

/* a bad lane of a global access: ST_CONT when memcheck goes on (the pointers then set), else the fault */
static int bad_lanes(Ctx* c, Wave* w, const uint64_t* a, uint64_t m, int size, uint8_t** ptr, int write, int bad) {
    if (__atomic_load_n(&g_check.on, __ATOMIC_ACQUIRE)) {
        check_lanes(c, w, a, m, (uint32_t)size, ptr, write);
        return ST_CONT;
    }
    return raise_fault(c, w, FK_MEM, bad, a[bad], 1, size, 0);
}

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
