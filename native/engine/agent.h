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
 * Lifetimes: the memory table (regions) is the agent's own sorted array; a dispatch takes the current set
 * (its `refs`), and a change (one allocation added or removed, pyhip_agent_change_region) is made in place when
 * no dispatch holds it, else in a copy while the held set retires; a retired set is freed once no dispatch
 * holds it.  A rebuilt table is copied in whole (pyhip_agent_set_regions).  Python keeps the arrays and compiled code
 * a removed kernel referred to until pyhip_agent_quiescent() says no dispatch that could use them runs.
 */

#include <stdio.h>

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
    int32_t n, cap;
    int64_t refs;                /* dispatches (or copies) using it */
    struct RegionSet* next;      /* retired sets, freed when no dispatch holds them */
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
    Dispatch fault;              /* the Dispatch of the packet that faulted (return 2), results included */
    /* a KFD queue (ring owned by ROCr; pyhip_agent_cp_process): dispatch_ptr is the packet's own slot,
     * queue_ptr ROCr's amd_queue_t, dispatch_id the packet index; no mirror */
    int32_t foreign;
    uint32_t lds_bytes;          /* the node's LDS size (larger group segments are the CP's error) */
    uint8_t* ring;
    uint64_t ring_slots;
    const uint64_t* doorbell;    /* the last submitted index (ROCr stores it plainly) */
    uint64_t* read_ptr;          /* amd_queue_t.read_dispatch_id */
    const uint32_t* stop;        /* the CP is being stopped */
    const uint32_t* paused;      /* the queue is suspended (percentage 0) */
    uint64_t processed;
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

static void agent_free_retired(Agent* a) {   /* a->mu held (or the agent unreachable): those no dispatch holds */
    RegionSet** link = &a->retired;
    while (*link) {
        RegionSet* s = *link;
        if (s->refs) {
            link = &s->next;
            continue;
        }
        *link = s->next;
        free(s->r);
        free(s);
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

/* A set of n regions (room for a few more) copied from r. */
static RegionSet* region_set_new(const Region* r, int32_t n) {
    RegionSet* s = calloc(1, sizeof *s);
    if (!s) return NULL;
    s->cap = n + n / 2 + 16;
    s->r = malloc(sizeof(Region) * (size_t)s->cap);
    if (!s->r) { free(s); return NULL; }
    if (n > 0) memcpy(s->r, r, sizeof(Region) * (size_t)n);
    s->n = n;
    return s;
}

static void agent_install_regions(Agent* a, RegionSet* s) {   /* a->mu held */
    if (a->regions) {
        a->regions->next = a->retired;
        a->retired = a->regions;
    }
    a->regions = s;
    agent_free_retired(a);
}

/* The memory table (sorted, as Region records): copied. */
int pyhip_agent_set_regions(Agent* a, const Region* r, int32_t n) {
    RegionSet* s = region_set_new(r, n);
    if (!s) return 0;
    pthread_mutex_lock(&a->mu);
    agent_install_regions(a, s);
    pthread_mutex_unlock(&a->mu);
    return 1;
}

/* One change of the memory table (TableIndex.change, pyhip/emu/memindex.py): the region (start, end, host)
 * inserted at position i (add), or the one at position i, which starts at start, removed; n is the table's
 * size after it.  In place when no dispatch holds the current set and it has room; otherwise in a copy, and
 * the held set retires.  0 when the change does not fit the set the agent has (the caller then publishes the
 * whole table). */
int pyhip_agent_change_region(Agent* a, int32_t add, int32_t i, int32_t n, uint64_t start, uint64_t end,
                              uint64_t host) {
    pthread_mutex_lock(&a->mu);
    RegionSet* s = a->regions;
    int ok = s != NULL;
    if (ok && add)
        ok = s->n + 1 == n && i >= 0 && i <= s->n && (i == 0 || s->r[i - 1].start < start) &&
             (i == s->n || start < s->r[i].start) && start < end;
    else if (ok)
        ok = s->n - 1 == n && i >= 0 && i < s->n && s->r[i].start == start;
    if (ok && (s->refs || (add && s->n == s->cap))) {
        RegionSet* c = region_set_new(s->r, s->n);
        if (c)
            agent_install_regions(a, s = c);
        else
            ok = 0;
    }
    if (ok && add) {
        memmove(s->r + i + 1, s->r + i, sizeof(Region) * (size_t)(s->n - i));
        s->r[i].start = start;
        s->r[i].end = end;
        s->r[i].host = (uint8_t*)(uintptr_t)host;
        s->n++;
    } else if (ok) {
        memmove(s->r + i, s->r + i + 1, sizeof(Region) * (size_t)(s->n - i - 1));
        s->n--;
    }
    pthread_mutex_unlock(&a->mu);
    return ok;
}

/* The agent's memory table (tests compare it with the memory's index): up to cap regions copied to out;
 * returns how many there are. */
int32_t pyhip_agent_regions(Agent* a, Region* out, int32_t cap) {
    pthread_mutex_lock(&a->mu);
    int32_t n = a->regions ? a->regions->n : 0;
    if (n > 0 && cap > 0) memcpy(out, a->regions->r, sizeof(Region) * (size_t)(n < cap ? n : cap));
    pthread_mutex_unlock(&a->mu);
    return n;
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

/* a dispatch (or copy) takes the current regions (a->mu held) */
static RegionSet* agent_take(Agent* a) {
    a->regions->refs++;
    a->inflight++;
    return a->regions;
}

/* a dispatch (or copy) that took the regions `rs` is over; what it did is counted */
static void agent_release(Agent* a, RegionSet* rs, int ran, int failed, int declined) {
    pthread_mutex_lock(&a->mu);
    if (ran) a->dispatched++;
    if (failed) a->faults++;
    if (declined) a->declined++;
    a->inflight--;
    if (--rs->refs == 0 && a->retired) agent_free_retired(a);
    pthread_mutex_unlock(&a->mu);
}

/* The host address of [addr, addr + size) when it lies in one region, else NULL. */
static uint8_t* regions_host(const Region* r, int32_t n, uint64_t addr, uint64_t size) {
    const Region* g = region_at(r, n, addr);
    if (!g || addr + size < addr || addr + size > g->end) return NULL;
    return g->host + (addr - g->start);
}

/* The agent-dispatch copy (0x8001: dst, src, bytes) and fill (0x8002: dst, value, count, width) packets of
 * pyhip/aql/packets.py, as EmulatedGPU.copy / fill do them.  Anything those would reject (a range outside one
 * allocation, a value wider than the element, an empty range) is left to them (1). */
static int agent_copy_fill(AgentQueue* q, const uint8_t* pkt) {
    Agent* a = q->agent;
    uint16_t type;
    uint64_t arg[4];
    memcpy(&type, pkt + 2, 2);
    memcpy(arg, pkt + 16, sizeof arg);
    uint64_t width = type == 0x8002 ? arg[3] : 1, bytes = type == 0x8002 ? arg[2] * width : arg[2];
    if ((type != 0x8001 && type != 0x8002) || !bytes)
        return 1;
    if (type == 0x8002 && ((width != 1 && width != 2 && width != 4 && width != 8) || arg[2] > (UINT64_MAX >> 3) ||
                           (width < 8 && arg[1] >> (8 * width))))
        return 1;
    pthread_mutex_lock(&a->mu);
    if (!a->regions) {
        pthread_mutex_unlock(&a->mu);
        return 1;
    }
    RegionSet* rs = agent_take(a);
    const Region* regs = rs->r;
    int32_t nregs = rs->n;
    pthread_mutex_unlock(&a->mu);
    uint8_t* dst = regions_host(regs, nregs, arg[0], bytes);
    uint8_t* src = type == 0x8001 ? regions_host(regs, nregs, arg[1], bytes) : NULL;
    int r = 1;
    if (dst && (type == 0x8002 || src)) {
        if (type == 0x8001) {
            memmove(dst, src, bytes);
        } else if (width == 1) {
            memset(dst, (int)arg[1], bytes);
        } else {
            for (uint64_t i = 0; i < arg[2]; i++) memcpy(dst + i * width, &arg[1], width);   /* little endian */
        }
        if (INIT_ON()) {                         /* initcheck: the destination's bytes are written */
            uint8_t* sh = init_shadow(dst);
            if (sh) memset(sh, 1, bytes);
        }
        r = 0;
    }
    agent_release(a, rs, 0, 0, 0);
    return r;
}

/* The processor's agent function: 0 = ran (the caller completes the signal), 1 = not handled, nothing done,
 * 2 = faulted (q->fault holds the Dispatch; the packet is left to Python).  Kernel dispatches, and the
 * copy / fill agent-dispatch packets. */
int pyhip_agent_dispatch(void* ctx, const uint8_t* pkt, uint64_t index) {
    AgentQueue* q = ctx;
    Agent* a = q->agent;
    if (pkt[0] == 4) return q->foreign ? 1 : agent_copy_fill(q, pkt);
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
    RegionSet* rs = agent_take(a);
    const Region* regs = rs->r;
    int32_t nregs = rs->n;
    int64_t max_steps = a->max_steps;
    pthread_mutex_unlock(&a->mu);

    if (kernarg_size && !regions_host(regs, nregs, kernarg, 1)) {
        agent_release(a, rs, 0, 0, 1);
        return 1;
    }
    if (trivial) {
        agent_release(a, rs, 1, 0, 0);
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
    d.lds_alloc = (group_seg + d.lds_granule - 1) / d.lds_granule * d.lds_granule;   /* (the template's granule) */
    if (priv_seg > priv) priv = priv_seg;
    priv += extra;
    d.private_size = (priv + 15) / 16 * 16;
    uint64_t vals[5] = {q->mirror_dev, q->mirror_dev + 256, kernarg, 0, d.private_size};
    if (q->foreign) {
        vals[0] = (uint64_t)(uintptr_t)(q->ring + (index % q->ring_slots) * 64);
        vals[1] = (uint64_t)(uintptr_t)q->amd_queue;
        vals[3] = index;
    }
    for (int i = 0; i < nslots; i++) {
        uint64_t v = vals[skind[i]];
        d.sgpr_init[sfirst[i]] = (uint32_t)v;
        if (scount[i] > 1) d.sgpr_init[sfirst[i] + 1] = (uint32_t)(v >> 32);
    }
    if (!q->foreign) {
        memcpy(q->mirror_host, pkt, 64);
        memcpy(q->mirror_host + 256, q->amd_queue, 256);
    }
    d.regions = regs;
    d.nregions = nregs;
    d.lockstep = 0;
    d.capture = 0;
    d.capture_buf = NULL;
    d.nthreads = 0;
    d.batch_groups = 0;
    d.max_steps = max_steps;
    int failed = pyhip_engine_run(&d);
    if (failed) q->fault = d;
    agent_release(a, rs, 1, failed, 0);
    return failed ? 2 : 0;

decline_unlocked:
    pthread_mutex_lock(&a->mu);
    a->declined++;
    pthread_mutex_unlock(&a->mu);
    return 1;
}

/* ---- the command processor of a KFD queue (pyhip/thunk/cp.py): ROCr's rings without Python ----------------
 * What pyhip/thunk/cp.py does per packet, for the packets it can finish here: a kernel dispatch of a kernel
 * in the agent's table (dispatch_ptr = the packet's slot, queue_ptr = ROCr's amd_queue_t, dispatch_id = the
 * index), a barrier-AND/OR whose dependencies are already satisfied.  Completion: the signal's value
 * decremented, and when it has an event mailbox the event id stored there and the KFD interrupt raised.
 * With profiling on (queue_properties bit 3, as HIP's queues have it) start/end timestamps are written in the
 * GPU clock.  Anything else — a packet the CP must check and may reject (bad geometry, LDS over the node's
 * size, no kernel object), scratch to negotiate, barriers that must wait, PM4 and vendor packets, a
 * signal outside GPU-mapped memory, a kernel the agent declines — returns with the packet in place for
 * Python; a fault returns with its Dispatch record (AgentQueue.fault).  ROCr rings the doorbell with a plain
 * store: an idle ring is polled with sleeps that grow from 10 µs to 1 ms. */
typedef int (*kfd_interrupt_fn)(uint32_t);
typedef uint64_t (*kfd_clock_fn)(void);
static kfd_interrupt_fn g_kfd_interrupt;
static kfd_clock_fn g_kfd_clock;

/* the thunk's C functions: raise a KFD interrupt for an event id; the GPU clock (profiling timestamps) */
void pyhip_agent_set_kfd_fns(void* interrupt, void* clock) {
    g_kfd_interrupt = (kfd_interrupt_fn)interrupt;
    g_kfd_clock = (kfd_clock_fn)clock;
}

static int agent_accessible(Agent* a, uint64_t addr, uint64_t size) {
    pthread_mutex_lock(&a->mu);
    int ok = a->regions && regions_host(a->regions->r, a->regions->n, addr, size) != NULL;
    pthread_mutex_unlock(&a->mu);
    return ok;
}

static inline void cpu_pause(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

static inline int64_t cp_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* the packet at index is submitted: header not INVALID and the doorbell reached it */
static int cp_ready(const AgentQueue* q, uint64_t index) {
    const uint16_t* h = (const uint16_t*)(q->ring + (index % q->ring_slots) * 64);
    return (__atomic_load_n(h, __ATOMIC_ACQUIRE) & 0xFF) != 1 &&
           __atomic_load_n(q->doorbell, __ATOMIC_ACQUIRE) + 1 > index;
}

static void cp_complete(uint64_t sig, int profiling) {
    if (!sig) return;
    if (profiling) *(uint64_t*)(uintptr_t)(sig + 40) = g_kfd_clock();
    __atomic_add_fetch((int64_t*)(uintptr_t)(sig + 8), -1, __ATOMIC_ACQ_REL);
    uint64_t mailbox = __atomic_load_n((uint64_t*)(uintptr_t)(sig + 16), __ATOMIC_ACQUIRE);
    if (mailbox) {
        uint32_t event_id = *(uint32_t*)(uintptr_t)(sig + 24);
        __atomic_store_n((uint64_t*)(uintptr_t)mailbox, (uint64_t)event_id, __ATOMIC_RELEASE);
        if (g_kfd_interrupt) g_kfd_interrupt(event_id);
    }
}

enum { CP_IDLE = 0, CP_PYTHON = 1, CP_FAULT = 2, CP_STOPPED = 3 };

/* PYHIP_CP_STATS=1: how many packets the KFD queues' command processors finished here, printed at exit */
static uint64_t g_cp_native_packets;

__attribute__((destructor)) static void cp_report(void) {
    const char* v = getenv("PYHIP_CP_STATS");
    if (v && *v && *v != '0' && g_cp_native_packets)
        fprintf(stderr, "pyhip: KFD command processors: %llu packets in native code\n",
                (unsigned long long)g_cp_native_packets);
}

int64_t pyhip_agent_cp_process(AgentQueue* q, int64_t timeout_ns, int32_t* status) {
    Agent* a = q->agent;
    int64_t done = 0, start = cp_now(), nap = 10000;
    *status = CP_IDLE;
    for (;;) {
        if (__atomic_load_n(q->stop, __ATOMIC_ACQUIRE) || __atomic_load_n(q->paused, __ATOMIC_ACQUIRE)) {
            *status = CP_STOPPED;
            return done;
        }
        uint64_t index = __atomic_load_n(q->read_ptr, __ATOMIC_ACQUIRE);
        if (!cp_ready(q, index)) {
            int64_t now = cp_now();
            if (timeout_ns >= 0 && now - start >= timeout_ns) return done;
            if (now - start < 200000) { for (int i = 0; i < 32; ++i) cpu_pause(); continue; }
            struct timespec ts = {0, (long)nap};
            nanosleep(&ts, NULL);
            nap = nap * 2 > 1000000 ? 1000000 : nap * 2;
            continue;
        }
        uint8_t* slot = q->ring + (index % q->ring_slots) * 64;
        uint8_t pkt[64];
        memcpy(pkt, slot, 64);
        int type = pkt[0];
        uint64_t sig;
        memcpy(&sig, pkt + 56, 8);
        uint32_t props = *(const uint32_t*)(q->amd_queue + 180);
        int profiling = (props & (1u << 3)) && g_kfd_clock;           /* start/end timestamps, GPU clock */
        if ((props & (1u << 3)) && !g_kfd_clock) { *status = CP_PYTHON; return done; }
        if (sig && !agent_accessible(a, sig, 64)) { *status = CP_PYTHON; return done; }
        if (type == 2) {
            uint16_t setup, wg[3];
            uint32_t grid[3], priv, group;
            uint64_t kobj;
            memcpy(&setup, pkt + 2, 2);
            memcpy(wg, pkt + 4, 6);
            memcpy(grid, pkt + 12, 12);
            memcpy(&priv, pkt + 24, 4);
            memcpy(&group, pkt + 28, 4);
            memcpy(&kobj, pkt + 32, 8);
            int dims = setup & 3;
            if (dims < 1 || !wg[0] || !wg[1] || !wg[2] || !grid[0] || !grid[1] || !grid[2] ||
                (uint32_t)wg[0] * wg[1] * wg[2] > 1024u || group > q->lds_bytes || !kobj || priv) {
                *status = CP_PYTHON;
                return done;
            }
            if (sig && profiling) *(uint64_t*)(uintptr_t)(sig + 32) = g_kfd_clock();
            int r = pyhip_agent_dispatch(q, pkt, index);
            if (r == 1) { *status = CP_PYTHON; return done; }
            if (r == 2) { *status = CP_FAULT; return done; }
        } else if (type == 3 || type == 5) {
            uint64_t deps[5];
            memcpy(deps, pkt + 8, sizeof deps);
            int n = 0, zero = 0;
            for (int i = 0; i < 5; i++) {
                if (!deps[i]) continue;
                if (!agent_accessible(a, deps[i], 64)) { *status = CP_PYTHON; return done; }
                n++;
                if (__atomic_load_n((int64_t*)(uintptr_t)(deps[i] + 8), __ATOMIC_ACQUIRE) == 0) zero++;
            }
            int ok = type == 3 ? zero == n : (n == 0 || zero > 0);
            if (!ok) { *status = CP_PYTHON; return done; }
            if (sig && profiling) *(uint64_t*)(uintptr_t)(sig + 32) = g_kfd_clock();
        } else {
            *status = CP_PYTHON;
            return done;
        }
        cp_complete(sig, profiling);
        __atomic_store_n((uint16_t*)slot, (uint16_t)1, __ATOMIC_RELEASE);
        __atomic_store_n(q->read_ptr, index + 1, __ATOMIC_RELEASE);
        __atomic_fetch_add(&q->processed, 1, __ATOMIC_RELAXED);
        __atomic_fetch_add(&g_cp_native_packets, 1, __ATOMIC_RELAXED);
        ++done;
        start = cp_now();
        nap = 10000;
    }
}

/* The agent function's address, for the packet processor (a function of another extension module). */
void* pyhip_agent_dispatch_fn(void) { return (void*)pyhip_agent_dispatch; }
