/* The emulated agent's native half: AQL kernel-dispatch packets run on the engine with no Python.
 *
 * The packet processor (native/aql_processor.c, pyhip/aql/processor.py) hands every kernel-dispatch packet
 * to pyhip_agent_dispatch first.  That runs it when its kernel object is in this agent's table, and says
 * "not mine" otherwise, before touching anything, so that Python's full path (pyhip/emu/device.py) takes it.
 *
 * Python fills the table (pyhip/emu/native/agent.py): after a dispatch of a kernel ran natively through the
 * full path, the Dispatch record Python built for it is the kernel's template — everything a kernel
 * descriptor fixes (code, entry, compiled function, register layout, MODE) — and the per-dispatch SGPR slots
 * are named.  Per packet this file fills in what the packet decides: geometry, LDS and private sizes, the
 * kernarg / dispatch / queue pointers, and copies the packet and the amd_queue_t to the queue's mirror in
 * device memory (what dispatch_ptr and queue_ptr point at).
 *
 * Anything unusual goes to Python untouched (return 1): an unknown kernel object, a zero or oversized
 * geometry, LDS above 64 KiB, a kernarg pointer outside every allocation.  A fault (return 2) leaves the
 * failed Dispatch in the queue's record; Python turns it into the GPUFault the full path would raise.
 *
 * Lifetimes: the memory table (regions) is copied in on every change; a dispatch takes the current copy
 * and older copies are freed once no dispatch runs (`inflight`).  Python keeps the arrays and compiled code
 * a removed kernel referred to until pyhip_agent_quiescent() says no dispatch that could use them runs.
 */

enum { SLOT_DISPATCH_PTR = 0, SLOT_QUEUE_PTR, SLOT_KERNARG, SLOT_DISPATCH_ID, SLOT_PRIVATE };
#define AGENT_MAX_SLOTS 8

typedef struct FastKernel {
    uint64_t kobj;
    uint32_t kernarg_size;
    uint32_t private_fixed;      /* the descriptor's private segment size */
    uint32_t private_extra;      /* added for a dynamic stack */
    int32_t trivial;             /* code is a lone s_endpgm: nothing to run */
    int32_t nslots;
    int32_t slot_kind[AGENT_MAX_SLOTS], slot_first[AGENT_MAX_SLOTS], slot_count[AGENT_MAX_SLOTS];
    Dispatch t;                  /* template */
} FastKernel;

typedef struct RegionSet {
    Region* r;
    int32_t n;
    struct RegionSet* next;      /* retired sets, freed when no dispatch runs */
} RegionSet;

typedef struct Agent {
    pthread_mutex_t mu;
    FastKernel** slots;          /* open addressing on kobj; NULL empty, TOMB removed */
    int32_t cap, used;
    RegionSet* regions;
    RegionSet* retired;
    int64_t inflight;
    int64_t max_steps;
    uint64_t dispatched, faults, declined;
} Agent;

typedef struct AgentQueue {
    Agent* agent;
    uint8_t* mirror_host;        /* 512 bytes of device memory: the packet @0, the amd_queue_t @256 */
    uint64_t mirror_dev;
    const uint8_t* amd_queue;    /* the queue's amd_queue_t (256 bytes) */
    uint64_t fault_kobj;         /* the packet that faulted (return 2) */
    Dispatch fault;              /* ... and its Dispatch, results included */
} AgentQueue;

#define AGENT_TOMB ((FastKernel*)(uintptr_t)1)

Agent* pyhip_agent_new(void) {
    Agent* a = calloc(1, sizeof *a);
    if (!a) return NULL;
    pthread_mutex_init(&a->mu, NULL);
    a->max_steps = 20000000;
    return a;
}

static void agent_free_retired(Agent* a);

/* Python drops the agent only when no queue can reach it any more (its queue hooks hold it). */
void pyhip_agent_free(Agent* a) {
    if (!a) return;
    for (int32_t i = 0; i < a->cap; i++)
        if (a->slots[i] && a->slots[i] != AGENT_TOMB) free(a->slots[i]);
    free(a->slots);
    if (a->regions) {
        a->regions->next = a->retired;
        a->retired = a->regions;
    }
    agent_free_retired(a);
    pthread_mutex_destroy(&a->mu);
    free(a);
}

static void agent_free_retired(Agent* a) {   /* a->mu held (or the agent unreachable), no dispatch in flight */
    RegionSet* s = a->retired;
    a->retired = NULL;
    while (s) {
        RegionSet* n = s->next;
        free(s->r);
        free(s);
        s = n;
    }
}

static uint64_t agent_hash(uint64_t k) { return (k >> 6) * 0x9E3779B97F4A7C15ull; }

static FastKernel* agent_find(Agent* a, uint64_t kobj) {
    if (!a->cap) return NULL;
    uint64_t m = (uint64_t)a->cap - 1;
    for (uint64_t i = agent_hash(kobj) & m, n = 0; n < (uint64_t)a->cap; i = (i + 1) & m, n++) {
        FastKernel* k = a->slots[i];
        if (!k) return NULL;
        if (k != AGENT_TOMB && k->kobj == kobj) return k;
    }
    return NULL;
}

static int agent_remove_locked(Agent* a, uint64_t kobj) {
    if (!a->cap) return 0;
    uint64_t m = (uint64_t)a->cap - 1;
    for (uint64_t i = agent_hash(kobj) & m, n = 0; n < (uint64_t)a->cap; i = (i + 1) & m, n++) {
        FastKernel* k = a->slots[i];
        if (!k) return 0;
        if (k != AGENT_TOMB && k->kobj == kobj) {
            free(k);
            a->slots[i] = AGENT_TOMB;
            return 1;
        }
    }
    return 0;
}

static int agent_insert_locked(Agent* a, FastKernel* k) {
    agent_remove_locked(a, k->kobj);
    if ((a->used + 1) * 2 > a->cap) {                /* grow (tombstones dropped) */
        int32_t cap = a->cap ? a->cap * 2 : 64;
        FastKernel** s = calloc((size_t)cap, sizeof *s);
        if (!s) return 0;
        int32_t used = 0;
        for (int32_t i = 0; i < a->cap; i++) {
            FastKernel* o = a->slots[i];
            if (!o || o == AGENT_TOMB) continue;
            uint64_t j = agent_hash(o->kobj) & (uint64_t)(cap - 1);
            while (s[j]) j = (j + 1) & (uint64_t)(cap - 1);
            s[j] = o;
            used++;
        }
        free(a->slots);
        a->slots = s;
        a->cap = cap;
        a->used = used;
    }
    uint64_t m = (uint64_t)a->cap - 1, i = agent_hash(k->kobj) & m;
    while (a->slots[i] && a->slots[i] != AGENT_TOMB) i = (i + 1) & m;
    if (!a->slots[i]) a->used++;
    a->slots[i] = k;
    return 1;
}

/* Register (or replace) a kernel: `t` is a Dispatch that ran it; slots name the per-dispatch user SGPRs. */
int pyhip_agent_add_kernel(Agent* a, uint64_t kobj, const Dispatch* t, uint32_t kernarg_size, uint32_t private_fixed,
                           uint32_t private_extra, int trivial, int nslots, const int32_t* kind, const int32_t* first,
                           const int32_t* count) {
    if (nslots < 0 || nslots > AGENT_MAX_SLOTS) return 0;
    FastKernel* k = calloc(1, sizeof *k);
    if (!k) return 0;
    k->kobj = kobj;
    k->kernarg_size = kernarg_size;
    k->private_fixed = private_fixed;
    k->private_extra = private_extra;
    k->trivial = trivial;
    k->nslots = nslots;
    for (int i = 0; i < nslots; i++) {
        k->slot_kind[i] = kind[i];
        k->slot_first[i] = first[i];
        k->slot_count[i] = count[i];
    }
    if (t) k->t = *t;
    memset(&k->t.fault, 0, sizeof k->t.fault);
    pthread_mutex_lock(&a->mu);
    int ok = agent_insert_locked(a, k);
    pthread_mutex_unlock(&a->mu);
    if (!ok) free(k);
    return ok;
}

int pyhip_agent_remove_kernel(Agent* a, uint64_t kobj) {
    pthread_mutex_lock(&a->mu);
    int r = agent_remove_locked(a, kobj);
    pthread_mutex_unlock(&a->mu);
    return r;
}

int pyhip_agent_has_kernel(Agent* a, uint64_t kobj) {
    pthread_mutex_lock(&a->mu);
    int r = agent_find(a, kobj) != NULL;
    pthread_mutex_unlock(&a->mu);
    return r;
}

void pyhip_agent_clear(Agent* a) {
    pthread_mutex_lock(&a->mu);
    for (int32_t i = 0; i < a->cap; i++) {
        if (a->slots[i] && a->slots[i] != AGENT_TOMB) free(a->slots[i]);
        a->slots[i] = NULL;
    }
    a->used = 0;
    pthread_mutex_unlock(&a->mu);
}

/* The memory table (sorted, as Region records): copied. */
int pyhip_agent_set_regions(Agent* a, const Region* r, int32_t n) {
    RegionSet* s = calloc(1, sizeof *s);
    if (!s) return 0;
    s->r = malloc(sizeof(Region) * (size_t)(n > 0 ? n : 1));
    if (!s->r) { free(s); return 0; }
    if (n > 0) memcpy(s->r, r, sizeof(Region) * (size_t)n);
    s->n = n;
    pthread_mutex_lock(&a->mu);
    if (a->regions) {
        a->regions->next = a->retired;
        a->retired = a->regions;
    }
    a->regions = s;
    if (!a->inflight) agent_free_retired(a);
    pthread_mutex_unlock(&a->mu);
    return 1;
}

void pyhip_agent_set_max_steps(Agent* a, int64_t steps) {
    pthread_mutex_lock(&a->mu);
    a->max_steps = steps;
    pthread_mutex_unlock(&a->mu);
}

/* 1 when no dispatch of this agent runs (what Python kept alive for removed kernels may go). */
int pyhip_agent_quiescent(Agent* a) {
    pthread_mutex_lock(&a->mu);
    int r = a->inflight == 0;
    pthread_mutex_unlock(&a->mu);
    return r;
}

/* dispatched, faults, declined (packets left to Python) */
void pyhip_agent_counts(Agent* a, uint64_t* out3) {
    pthread_mutex_lock(&a->mu);
    out3[0] = a->dispatched;
    out3[1] = a->faults;
    out3[2] = a->declined;
    pthread_mutex_unlock(&a->mu);
}

static int regions_hold(const Region* r, int32_t n, uint64_t addr) {
    int32_t lo = 0, hi = n;                        /* the last region starting at or below addr */
    while (lo < hi) {
        int32_t mid = (lo + hi) / 2;
        if (r[mid].start <= addr) lo = mid + 1; else hi = mid;
    }
    return lo > 0 && addr < r[lo - 1].end;
}

static void agent_release(Agent* a, int ran, int failed) {
    pthread_mutex_lock(&a->mu);
    if (ran) a->dispatched++;
    if (failed) a->faults++;
    if (--a->inflight == 0 && a->retired) agent_free_retired(a);
    pthread_mutex_unlock(&a->mu);
}

/* The processor's agent function: 0 = ran (the caller completes the signal), 1 = not handled, nothing done,
 * 2 = faulted (q->fault holds the Dispatch; the packet is left to Python). */
int pyhip_agent_dispatch(void* ctx, const uint8_t* pkt, uint64_t index) {
    (void)index;
    AgentQueue* q = ctx;
    Agent* a = q->agent;
    uint16_t wg[3];
    uint32_t grid[3], priv_seg, group_seg;
    uint64_t kobj, kernarg;
    memcpy(wg, pkt + 4, 6);
    memcpy(grid, pkt + 12, 12);
    memcpy(&priv_seg, pkt + 24, 4);
    memcpy(&group_seg, pkt + 28, 4);
    memcpy(&kobj, pkt + 32, 8);
    memcpy(&kernarg, pkt + 40, 8);
    if (!wg[0] || !wg[1] || !wg[2] || !grid[0] || !grid[1] || !grid[2] ||
        (uint32_t)wg[0] * wg[1] * wg[2] > 1024u || group_seg > 65536u)
        goto decline_unlocked;

    pthread_mutex_lock(&a->mu);
    FastKernel* k = agent_find(a, kobj);
    if (!k || !a->regions) {
        a->declined++;
        pthread_mutex_unlock(&a->mu);
        return 1;
    }
    Dispatch d = k->t;
    uint32_t kernarg_size = k->kernarg_size, priv = k->private_fixed, extra = k->private_extra;
    int trivial = k->trivial, nslots = k->nslots;
    int32_t skind[AGENT_MAX_SLOTS], sfirst[AGENT_MAX_SLOTS], scount[AGENT_MAX_SLOTS];
    memcpy(skind, k->slot_kind, sizeof skind);
    memcpy(sfirst, k->slot_first, sizeof sfirst);
    memcpy(scount, k->slot_count, sizeof scount);
    const Region* regs = a->regions->r;
    int32_t nregs = a->regions->n;
    int64_t max_steps = a->max_steps;
    a->inflight++;
    pthread_mutex_unlock(&a->mu);

    if (kernarg_size && !regions_hold(regs, nregs, kernarg)) {
        pthread_mutex_lock(&a->mu);
        a->declined++;
        if (--a->inflight == 0 && a->retired) agent_free_retired(a);
        pthread_mutex_unlock(&a->mu);
        return 1;
    }
    if (trivial) {
        agent_release(a, 1, 0);
        return 0;
    }
    for (int i = 0; i < 3; i++) {
        d.grid[i] = grid[i];
        d.wg[i] = wg[i];
        d.counts[i] = (grid[i] + wg[i] - 1) / wg[i];
    }
    uint32_t items = (uint32_t)wg[0] * wg[1] * wg[2];
    d.waves_per_group = (int32_t)((items + (uint32_t)d.lanes - 1) / (uint32_t)d.lanes);
    d.lds_size = group_seg;
    if (priv_seg > priv) priv = priv_seg;
    priv += extra;
    d.private_size = (priv + 15) / 16 * 16;
    uint64_t vals[5] = {q->mirror_dev, q->mirror_dev + 256, kernarg, 0, d.private_size};
    for (int i = 0; i < nslots; i++) {
        uint64_t v = vals[skind[i]];
        d.sgpr_init[sfirst[i]] = (uint32_t)v;
        if (scount[i] > 1) d.sgpr_init[sfirst[i] + 1] = (uint32_t)(v >> 32);
    }
    memcpy(q->mirror_host, pkt, 64);
    memcpy(q->mirror_host + 256, q->amd_queue, 256);
    d.regions = regs;
    d.nregions = nregs;
    d.lockstep = 0;
    d.capture = 0;
    d.capture_buf = NULL;
    d.nthreads = 0;
    d.batch_groups = 0;
    d.max_steps = max_steps;
    int failed = pyhip_engine_run(&d);
    if (failed) {
        q->fault_kobj = kobj;
        q->fault = d;
    }
    agent_release(a, 1, failed);
    return failed ? 2 : 0;

decline_unlocked:
    pthread_mutex_lock(&a->mu);
    a->declined++;
    pthread_mutex_unlock(&a->mu);
    return 1;
}

/* The agent function's address, for the packet processor (a function of another extension module). */
void* pyhip_agent_dispatch_fn(void) { return (void*)pyhip_agent_dispatch; }
