/* The sanitizer's C side (pyhip/sanitizer, docs/check.md): memcheck going on after a bad access, initcheck's
 * shadows, synccheck (racecheck: race.h).  Included by state.h after the region lookup (xlate) it builds on. */
#ifndef PYHIP_CHECK_H
#define PYHIP_CHECK_H

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
    /* racecheck: the other access (its workgroup, wave in it, lane, and its code address - code) */
    uint32_t other_wg[3];
    int32_t other_wave, other_lane, pad2;
    int64_t other_delta;
    uint64_t kernel_code;           /* racecheck: the dispatch's entry (its kernel, when the access is in a function) */
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
    while (i < g_check.n && (g_check.hit[i].code != r->code || g_check.hit[i].pad != r->pad ||
                             g_check.hit[i].other_delta != r->other_delta)) i++;
    if (i < g_check.n) {
        uint64_t n = g_check.hit[i].count + r->count;
        if (check_before(r, &g_check.hit[i])) g_check.hit[i] = *r;
        g_check.hit[i].count = n;
    } else if (i < CHECK_SLOTS) g_check.hit[g_check.n++] = *r;
    else g_check.lost += r->count;
    __atomic_store_n(&g_check.lock, 0, __ATOMIC_RELEASE);
}

enum { CHECK_MEM = 0, CHECK_SYNC = 1, CHECK_LDS = 2, CHECK_INIT = 3, CHECK_RACE_LDS = 4, CHECK_RACE_GLOBAL = 7 };
/* (a race's record: CHECK_RACE_LDS / CHECK_RACE_GLOBAL + RACE_RAW / RACE_WAW / RACE_WAR) */

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

#endif
