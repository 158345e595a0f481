/* The sanitizer's C side (pyhip/sanitizer, docs/check.md): memcheck going on after a bad access, initcheck's
 * shadows, synccheck, racecheck.  Included by state.h after the region lookup (xlate) it builds on. */
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

/* ---- racecheck (pyhip/sanitizer/racecheck.py, globalrace.py: the rules; docs/check.md) --------------------
 * A dispatch with race_pc set runs in the numpy engine's schedule (lockstep 2: its batches, lowest PC first
 * with its fair turns; engine.c), one at a time (g_race.mu), so both engines see the accesses in one order and
 * report the same hazards, whatever the host threads do.  The handlers tell race_lds / race_global of every
 * lane's LDS / global access before making it (the compiled code's too: pyhip_jit_xlate refuses and lockstep
 * code has no inline LDS access).  race_pc holds per instruction what Python decided from the program: RC_SKIP_*
 * (the plain load that starts a compare-and-swap loop) and RC_ATOMIC (a coherent load or store, a publishing
 * store: an atomic to the check).
 * An access is named by a packed u32 (RW_*): instruction index (21 bits), wave in workgroup (5), lane (6).
 * LDS shadow: per byte of each batch workgroup's LDS, 16 bytes: last writer, last reader, a reader of another
 * wave than that one, and the workgroup's barrier epoch when they were set with two flags (the write changed the
 * byte, was an atomic) and whether any wave wrote it: a barrier only bumps the workgroup's epoch, entries of an
 * older epoch read as empty.
 * Global shadow: per byte the dispatch touched, in 4 KiB pages made on first touch (an open-addressed table of
 * pages), 3 slots (writer, reader, other reader) of (global wave, access, time: u32 each) and the writer's
 * flags: 37 bytes per byte.  Ordering: per wave the times of its atomics, per workgroup those of its waves'
 * atomics and of its barriers, per wave the latest atomic time its next access is ordered after (acq). */
enum { RACE_RAW = 0, RACE_WAW = 1, RACE_WAR = 2 };
enum { RC_SKIP_LDS = 1, RC_SKIP_GLOBAL = 2, RC_ATOMIC = 4 };
enum { RK_READ = 0, RK_WRITE = 1, RK_ATOMIC = 2 };
#define RW_NONE 0xFFFFFFFFu
#define RW(ip, wave, lane) (((uint32_t)(ip) << 11) | ((uint32_t)(wave) & 31) << 6 | ((uint32_t)(lane) & 63))
#define RW_IP(x) ((int32_t)((x) >> 11))
#define RW_WAVE(x) ((int)(((x) >> 6) & 31))
#define RW_LANE(x) ((int)((x) & 63))
#define RACE_ON(c) UNLIKELY((c)->d->race_pc != NULL)
enum { RF_CHANGED = 1, RF_ATOMIC = 2, RF_DEFINED = 4 };

typedef struct { uint32_t writer, reader, other, ef; } RaceLds;     /* ef: epoch << 3 | RF_* */
typedef struct { uint32_t* t; int32_t n, cap; } RaceVec;
#define RPAGE 4096
typedef struct {
    uint64_t page;                           /* page number + 1 (0: free) */
    uint32_t who[3][RPAGE], acc[3][RPAGE], at[3][RPAGE];
    uint8_t flags[RPAGE];
} RacePage;

static struct {
    pthread_mutex_t mu;
    /* the batch's LDS */
    RaceLds* lds;
    size_t lds_cap;
    int64_t row, ngroups;
    const Group* groups;
    uint32_t epoch[4096];
    /* global memory */
    RacePage** pages;
    RacePage* last;                          /* the page of the last look-up */
    uint64_t npages, cap;                    /* table slots: cap (a power of two) */
    int64_t waves, groups_total;
    RaceVec *atomics, *group_atomics, *barriers;
    int64_t* acq;
    uint32_t time;
} g_race = {PTHREAD_MUTEX_INITIALIZER};

static void rvec_push(RaceVec* v, uint32_t t) {
    if (v->n && v->t[v->n - 1] == t) return;
    if (v->n == v->cap) {
        v->cap = v->cap ? 2 * v->cap : 8;
        v->t = realloc(v->t, sizeof(uint32_t) * (size_t)v->cap);
    }
    v->t[v->n++] = t;
}
/* the first entry > t, or 2^40 (none) */
static int64_t rvec_after(const RaceVec* v, uint32_t t) {
    int lo = 0, hi = v->n;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (v->t[mid] <= t) lo = mid + 1; else hi = mid;
    }
    return lo < v->n ? (int64_t)v->t[lo] : (int64_t)1 << 40;
}

/* a dispatch starts (lock taken) / ends */
static void race_begin(const Dispatch* d) {
    pthread_mutex_lock(&g_race.mu);
    g_race.waves = d->total_groups * d->waves_per_group;
    g_race.groups_total = d->total_groups;
    g_race.atomics = calloc((size_t)g_race.waves, sizeof(RaceVec));
    g_race.group_atomics = calloc((size_t)g_race.groups_total, sizeof(RaceVec));
    g_race.barriers = calloc((size_t)g_race.groups_total, sizeof(RaceVec));
    g_race.acq = malloc(sizeof(int64_t) * (size_t)g_race.waves);
    for (int64_t i = 0; i < g_race.waves; i++) g_race.acq[i] = -1;
    g_race.time = 0;
    g_race.npages = 0;
    g_race.cap = 0;
    g_race.pages = NULL;
    g_race.last = NULL;
}
static void race_end(void) {
    for (uint64_t i = 0; i < g_race.cap; i++) free(g_race.pages[i]);
    free(g_race.pages);
    for (int64_t i = 0; i < g_race.waves; i++) free(g_race.atomics[i].t);
    for (int64_t i = 0; i < g_race.groups_total; i++) {
        free(g_race.group_atomics[i].t);
        free(g_race.barriers[i].t);
    }
    free(g_race.atomics);
    free(g_race.group_atomics);
    free(g_race.barriers);
    free(g_race.acq);
    free(g_race.lds);
    g_race.lds = NULL;
    g_race.lds_cap = 0;
    g_race.pages = NULL;
    g_race.last = NULL;
    g_race.cap = 0;
    pthread_mutex_unlock(&g_race.mu);
}
/* a batch of ng workgroups starts: their LDS shadows empty */
static void race_batch(const Dispatch* d, const Group* groups, int64_t ng) {
    g_race.row = d->lds_alloc;
    g_race.groups = groups;
    g_race.ngroups = ng;
    size_t need = (size_t)(ng * g_race.row);
    if (need > g_race.lds_cap) {
        free(g_race.lds);
        g_race.lds = malloc(sizeof(RaceLds) * (need ? need : 1));
        g_race.lds_cap = need;
    }
    memset(g_race.lds, 0, sizeof(RaceLds) * need);
    for (int64_t i = 0; i < ng && i < 4096; i++) g_race.epoch[i] = 1;
}
/* one step of the schedule (the instruction the waves at the lowest PC run together): the accesses' time */
INLINE void race_tick(void) { g_race.time++; }

/* workgroup g passes a barrier (race_tick first: the barrier's time): a new LDS epoch; its waves' later accesses
 * are ordered after every atomic any of them made (globalrace.Shadow.barrier) */
static void race_barrier(const Dispatch* d, const Group* g) {
    int64_t gi = g - g_race.groups;
    if (gi >= 0 && gi < 4096) g_race.epoch[gi]++;
    int64_t flat = g->flat, wpg = d->waves_per_group;
    rvec_push(&g_race.barriers[flat], g_race.time);
    int64_t top = -1;
    for (int64_t k = 0; k < wpg; k++) if (g_race.acq[flat * wpg + k] > top) top = g_race.acq[flat * wpg + k];
    if (top >= 0)
        for (int64_t k = 0; k < wpg; k++) g_race.acq[flat * wpg + k] = top;
}

static void race_record(Ctx* c, const Wave* w, int kind, int access, int lane, uint64_t address, int size,
                        uint64_t count, uint32_t other, int64_t other_wave_global) {
    const Dispatch* d = c->d;
    CheckHit h;
    memset(&h, 0, sizeof h);
    h.pad = kind;
    int32_t ip = c->cur_ip, oip = RW_IP(other);
    h.code = d->code_base + (uint64_t)(int64_t)(int32_t)d->code[ip].pc;
    h.other_delta = (int64_t)(int32_t)d->code[oip].pc - (int64_t)(int32_t)d->code[ip].pc;
    h.kernel_code = d->code_base + (uint64_t)(int64_t)(int32_t)d->code[d->entry].pc;
    h.address = address;
    h.count = count;
    h.wave = w->wave;
    h.lane = lane;
    h.size = size;
    h.write = access;
    h.lds_size = d->lds_size;
    memcpy(h.wg, w->g->id, sizeof h.wg);
    h.other_wave = RW_WAVE(other);
    h.other_lane = RW_LANE(other);
    if (other_wave_global < 0) memcpy(h.other_wg, w->g->id, sizeof h.other_wg);
    else {
        int64_t og = other_wave_global / d->waves_per_group;
        h.other_wg[0] = (uint32_t)(og % d->counts[0]);
        h.other_wg[1] = (uint32_t)((og / d->counts[0]) % d->counts[1]);
        h.other_wg[2] = (uint32_t)(og / ((int64_t)d->counts[0] * d->counts[1]));
    }
    check_put(&h);
}

/* the first hazard of one kind of an access: lanes counted, the first lane's first byte named */
typedef struct { int lane, n; uint64_t address; uint32_t other; int64_t ogw; } RaceHit;
INLINE void race_note(RaceHit* r, int lane, uint64_t address, uint32_t other, int64_t ogw, int* counted) {
    if (r->lane < 0) { r->lane = lane; r->address = address; r->other = other; r->ogw = ogw; }
    if (!*counted) { r->n++; *counted = 1; }
}

/* LDS entry of byte b of workgroup gi, its older epoch's accesses forgotten */
INLINE RaceLds* race_lds_at(int64_t gi, uint32_t b) {
    RaceLds* e = &g_race.lds[gi * g_race.row + b];
    uint32_t ep = g_race.epoch[gi];
    if (e->ef >> 3 != ep) {
        e->writer = e->reader = e->other = RW_NONE;
        e->ef = ep << 3 | (e->ef & RF_DEFINED);
    }
    return e;
}

/* racecheck.access: the lanes m of wave w accessing [a[l], a[l] + size) of its workgroup's LDS (kind RK_*; data:
 * a write's bytes per lane), before the access is made */
static void race_lds(Ctx* c, const Wave* w, const uint32_t* a, int size, uint64_t m, int kind,
                     const uint8_t (*data)[16]) {
    const Dispatch* d = c->d;
    if (d->waves_per_group < 2 || !m) return;
    if (kind == RK_READ && (d->race_pc[c->cur_ip] & RC_SKIP_LDS)) return;
    int64_t gi = w->g - g_race.groups;
    if (gi < 0 || gi >= g_race.ngroups || gi >= 4096) return;
    const uint8_t* lds = w->g->lds;
    int me = w->wave;
    uint32_t who = RW(c->cur_ip, me, 0);
    RaceHit hit[3] = {{-1, 0, 0, 0, 0}, {-1, 0, 0, 0, 0}, {-1, 0, 0, 0, 0}}, war2 = {-1, 0, 0, 0, 0};
    uint8_t chg[LANES][16];
    for (int l = 0; l < LANES; l++) {                    /* against the state before the access */
        if (!(m >> l & 1) || (int64_t)a[l] + size > (int64_t)g_race.row) continue;
        int c0 = 0, c1 = 0, c2 = 0, c3 = 0;
        for (int i = 0; i < size; i++) {
            uint32_t b = a[l] + (uint32_t)i;
            RaceLds* e = race_lds_at(gi, b);
            uint32_t wr = e->writer;
            int other = wr != RW_NONE && RW_WAVE(wr) != me;
            if (kind == RK_READ) {
                if (other && (e->ef & RF_CHANGED)) race_note(&hit[RACE_RAW], l, b, wr, -1, &c0);
                continue;
            }
            int changes = chg[l][i] = kind == RK_ATOMIC || !(e->ef & RF_DEFINED) || data[l][i] != lds[b];
            if (kind == RK_ATOMIC && (e->ef & RF_ATOMIC)) other = 0;
            if (changes && other) race_note(&hit[RACE_WAW], l, b, wr, -1, &c1);
            if (changes && e->reader != RW_NONE && RW_WAVE(e->reader) != me)
                race_note(&hit[RACE_WAR], l, b, e->reader, -1, &c2);
            if (changes && e->other != RW_NONE && RW_WAVE(e->other) != me)
                race_note(&war2, l, b, e->other, -1, &c3);
        }
    }
    for (int l = 0; l < LANES; l++) {                    /* then the shadow updated, lane by lane */
        if (!(m >> l & 1) || (int64_t)a[l] + size > (int64_t)g_race.row) continue;
        uint32_t mine = who | (uint32_t)l;
        for (int i = 0; i < size; i++) {
            uint32_t b = a[l] + (uint32_t)i;
            RaceLds* e = race_lds_at(gi, b);
            if (kind == RK_READ) {
                if (e->reader != RW_NONE && RW_WAVE(e->reader) != me) e->other = e->reader;
                e->reader = mine;
                continue;
            }
            int changes = chg[l][i];
            if (e->writer == RW_NONE || changes) {
                e->writer = mine;
                e->ef = (e->ef & ~(uint32_t)(RF_CHANGED | RF_ATOMIC)) | (changes ? RF_CHANGED : 0) |
                        (kind == RK_ATOMIC ? RF_ATOMIC : 0);
            }
            e->ef |= RF_DEFINED;
        }
    }
    if (hit[RACE_WAR].lane < 0) hit[RACE_WAR] = war2;
    for (int k = 0; k < 3; k++)
        if (hit[k].lane >= 0)
            race_record(c, w, CHECK_RACE_LDS + k, kind, hit[k].lane, hit[k].address, size, (uint64_t)hit[k].n,
                        hit[k].other, -1);
}

/* the page of global byte address a (made on first touch) */
static RacePage* race_page(uint64_t a) {
    uint64_t key = (a >> 12) + 1;
    if (g_race.last && g_race.last->page == key) return g_race.last;
    if (2 * (g_race.npages + 1) > g_race.cap) {
        uint64_t cap = g_race.cap ? 2 * g_race.cap : 64;
        RacePage** t = calloc(cap, sizeof(RacePage*));
        for (uint64_t i = 0; i < g_race.cap; i++) {
            RacePage* p = g_race.pages[i];
            if (!p) continue;
            uint64_t h = (p->page * 0x9E3779B97F4A7C15ull) & (cap - 1);
            while (t[h]) h = (h + 1) & (cap - 1);
            t[h] = p;
        }
        free(g_race.pages);
        g_race.pages = t;
        g_race.cap = cap;
    }
    uint64_t h = (key * 0x9E3779B97F4A7C15ull) & (g_race.cap - 1);
    while (g_race.pages[h]) {
        if (g_race.pages[h]->page == key) return g_race.last = g_race.pages[h];
        h = (h + 1) & (g_race.cap - 1);
    }
    RacePage* p = malloc(sizeof(RacePage));
    memset(p->who, 0xFF, sizeof p->who);
    memset(p->acc, 0, sizeof p->acc);
    memset(p->at, 0, sizeof p->at);
    memset(p->flags, 0, sizeof p->flags);
    p->page = key;
    g_race.pages[h] = p;
    g_race.npages++;
    return g_race.last = p;
}

/* globalrace.Shadow.unordered: the earlier access of wave u (global; RW_NONE: none) at time t and one of wave v now */
static int race_unordered(const Dispatch* d, uint32_t u, uint32_t t, int64_t v) {
    if (u == RW_NONE || (int64_t)u == v) return 0;
    int64_t wpg = d->waves_per_group, g = u / wpg;
    const RaceVec* bars = &g_race.barriers[g];
    if (g == v / wpg && bars->n && bars->t[bars->n - 1] > t) return 0;
    int64_t best = rvec_after(&g_race.atomics[u], t);
    int64_t b = rvec_after(bars, t);
    if (b < ((int64_t)1 << 40)) {
        int64_t x = rvec_after(&g_race.group_atomics[g], (uint32_t)b);
        if (x < best) best = x;
    }
    return !(best <= g_race.acq[v]);
}

/* globalrace.access: lanes m of wave w accessing global memory at a[l] (kind RK_*; data: a write's bytes per
 * lane; the bytes there now at ptr), before the access is made */
static void race_global(Ctx* c, const Wave* w, const uint64_t* a, uint8_t* const* ptr, int size, uint64_t m,
                        int kind, const uint8_t (*data)[16]) {
    const Dispatch* d = c->d;
    if (!m) return;
    uint8_t pf = d->race_pc[c->cur_ip];
    if (kind == RK_READ && (pf & RC_SKIP_GLOBAL)) return;
    int atomic = kind == RK_ATOMIC || (pf & RC_ATOMIC);
    int64_t v = w->g->flat * d->waves_per_group + w->wave;
    uint32_t now = g_race.time, acc = (uint32_t)c->cur_ip << 6;
    RaceHit hit[3] = {{-1, 0, 0, 0, 0}, {-1, 0, 0, 0, 0}, {-1, 0, 0, 0, 0}}, war2 = {-1, 0, 0, 0, 0};
    uint8_t chg[LANES][16];
    for (int l = 0; l < LANES; l++) {
        if (!(m >> l & 1)) continue;
        int c0 = 0, c1 = 0, c2 = 0, c3 = 0;
        for (int i = 0; i < size; i++) {
            uint64_t ab = a[l] + (uint64_t)i;
            RacePage* p = race_page(ab);
            int o = (int)(ab & (RPAGE - 1));
            uint8_t f = p->flags[o];
            uint32_t wr = p->who[0][o];
            if (kind == RK_READ) {
                if ((f & RF_CHANGED) && !(atomic && (f & RF_ATOMIC)) && race_unordered(d, wr, p->at[0][o], v))
                    race_note(&hit[RACE_RAW], l, ab, RW(p->acc[0][o] >> 6, wr % d->waves_per_group, p->acc[0][o]), wr,
                              &c0);
                continue;
            }
            int changes = chg[l][i] = kind == RK_ATOMIC || data[l][i] != ptr[l][i];
            if (!changes) continue;
            if (!(atomic && (f & RF_ATOMIC)) && race_unordered(d, wr, p->at[0][o], v))
                race_note(&hit[RACE_WAW], l, ab, RW(p->acc[0][o] >> 6, wr % d->waves_per_group, p->acc[0][o]), wr, &c1);
            for (int s = 1; s <= 2; s++) {
                uint32_t r = p->who[s][o];
                if (race_unordered(d, r, p->at[s][o], v))
                    race_note(s == 1 ? &hit[RACE_WAR] : &war2, l, ab,
                              RW(p->acc[s][o] >> 6, r % d->waves_per_group, p->acc[s][o]), r, s == 1 ? &c2 : &c3);
            }
        }
    }
    for (int l = 0; l < LANES; l++) {
        if (!(m >> l & 1)) continue;
        for (int i = 0; i < size; i++) {
            uint64_t ab = a[l] + (uint64_t)i;
            RacePage* p = race_page(ab);
            int o = (int)(ab & (RPAGE - 1));
            if (kind == RK_READ) {
                if (atomic) continue;
                uint32_t r = p->who[1][o];
                if (r != RW_NONE && (int64_t)r != v) {
                    p->who[2][o] = r;
                    p->acc[2][o] = p->acc[1][o];
                    p->at[2][o] = p->at[1][o];
                }
                p->who[1][o] = (uint32_t)v;
                p->acc[1][o] = acc | (uint32_t)l;
                p->at[1][o] = now;
                continue;
            }
            int changes = chg[l][i];
            if (p->who[0][o] == RW_NONE || changes) {
                p->who[0][o] = (uint32_t)v;
                p->acc[0][o] = acc | (uint32_t)l;
                p->at[0][o] = now;
                p->flags[o] = (uint8_t)((changes ? RF_CHANGED : 0) | (atomic ? RF_ATOMIC : 0));
            }
        }
    }
    if (atomic) {
        int64_t g = w->g->flat;
        rvec_push(&g_race.atomics[v], now);
        rvec_push(&g_race.group_atomics[g], now);
        g_race.acq[v] = now;
    }
    if (hit[RACE_WAR].lane < 0) hit[RACE_WAR] = war2;
    for (int k = 0; k < 3; k++)
        if (hit[k].lane >= 0)
            race_record(c, w, CHECK_RACE_GLOBAL + k, kind, hit[k].lane, hit[k].address, size, (uint64_t)hit[k].n,
                        hit[k].other, hit[k].ogw);
}

/* racecheck: a scalar access (s_load, s_store, s_atomic: one per wave) of ``size`` bytes at a (host pointer p;
 * data: a store's bytes) as the lanes of a vector access, one dword each (lane i: bytes 4i..4i+3), which is how
 * the numpy engine tells globalrace of it (semantics/smem.py): both engines count and name the same dwords */
static void race_scalar(Ctx* c, const Wave* w, uint64_t a, uint8_t* p, int size, int kind, const uint8_t* data) {
    uint64_t addr[LANES];
    uint8_t* ptr[LANES];
    uint8_t raw[LANES][16];
    int n = size / 4;
    if (n < 1 || n > LANES) return;
    for (int i = 0; i < n; i++) {
        addr[i] = a + 4 * (uint64_t)i;
        ptr[i] = p + 4 * i;
        if (data) memcpy(raw[i], data + 4 * i, 4);
    }
    race_global(c, w, addr, ptr, 4, n == 64 ? ~0ull : (1ull << n) - 1, kind, data ? (const uint8_t(*)[16])raw : NULL);
}

#endif
