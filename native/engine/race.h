/* The sanitizer's racecheck (C side): LDS and global-memory hazards between waves and workgroups.  Included by
 * state.h after check.h (the reports' records and the region lookup it builds on). */
#ifndef PYHIP_RACE_H
#define PYHIP_RACE_H

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
