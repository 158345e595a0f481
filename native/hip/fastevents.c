/* The drop-in libamdhip64's events without Python (one translation unit with fastlaunch.c and fastcopy.c:
 * build_shim.py concatenates them in that order). */

/* ---- events without Python --------------------------------------------------------------------------------
 * Every event made through the C ABI has its own signal (Python's, never pooled) and a state block Python
 * reads: [0] native records so far, [1] 1 while the latest record is a native one.  Python registers both here
 * (pyhip/capi/fastpath.py).  hipEventRecord on the granted stream of an armed device publishes, in that
 * stream's queue, a barrier packet (barrier bit: after everything before it) completing the event's signal
 * (+1 first: an earlier record still in flight completes before it, in order), then one completing the
 * stream's counter (+1, counted as a native launch: a synchronize of the armed device waits for the event
 * too).  The processor writes the signal's end timestamp when the packet completes: hipEventElapsedTime reads
 * it.  On an armed device with no grant (idle) a record of the null stream completes at once (timestamps now).
 * hipEventQuery / hipEventSynchronize / hipEventElapsedTime of events whose latest record is native are answered
 * here; anything else (never recorded, recorded through Python, other devices, timing disabled, not
 * armed) goes to Python, which adopts the native record first (runtime/stream.py, Event).  Locks: pyhip_event_lock,
 * then pyhip_fast_lock, then pyhip_sync_lock. */
#define PYHIP_EVENT_BARRIER_HEADER (3u | 1u << 8 | 2u << 9 | 2u << 11)   /* barrier-AND, barrier, system fences */
#define PYHIP_EVENT_DISABLE_TIMING 2u
typedef struct {
    uintptr_t handle;            /* 0: empty, 1: removed */
    int device;
    uint32_t flags;
    void* signal;
    uint64_t* state;
} pyhip_event_slot;
static pyhip_event_slot* pyhip_events;
static size_t pyhip_event_cap, pyhip_event_used;    /* used: slots not empty (removed ones included) */
static pthread_mutex_t pyhip_event_lock = PTHREAD_MUTEX_INITIALIZER;

static size_t pyhip_event_hash(uintptr_t h, size_t cap) { return (size_t)((h >> 4) * 0x9E3779B97F4A7C15ull) & (cap - 1); }

/* Under pyhip_event_lock: the slot of `handle`, or NULL. */
static pyhip_event_slot* pyhip_event_find(uintptr_t handle) {
    if (!pyhip_event_cap || handle <= 1) return NULL;
    for (size_t i = pyhip_event_hash(handle, pyhip_event_cap);; i = (i + 1) & (pyhip_event_cap - 1)) {
        if (pyhip_events[i].handle == handle) return &pyhip_events[i];
        if (!pyhip_events[i].handle) return NULL;
    }
}

static int pyhip_event_insert(pyhip_event_slot* table, size_t cap, const pyhip_event_slot* e) {
    size_t i = pyhip_event_hash(e->handle, cap);
    while (table[i].handle > 1) i = (i + 1) & (cap - 1);
    int fresh = table[i].handle == 0;
    table[i] = *e;
    return fresh;
}

/* signal NULL: forget `handle` (hipEventDestroy).  0: no room (the event stays with Python). */
int pyhip_event_register(void* handle, int device, uint32_t flags, void* signal, uint64_t* state) {
    uintptr_t h = (uintptr_t)handle;
    if (h <= 1) return 0;
    pthread_mutex_lock(&pyhip_event_lock);
    pyhip_event_slot* old = pyhip_event_find(h);
    if (old) old->handle = 1;
    int ok = 1;
    if (signal) {
        if ((pyhip_event_used + 1) * 2 > pyhip_event_cap) {            /* rebuild at most half full */
            size_t live = 0;
            for (size_t i = 0; i < pyhip_event_cap; i++) live += pyhip_events[i].handle > 1;
            size_t cap = 64;
            while (cap < (live + 1) * 4) cap *= 2;
            pyhip_event_slot* table = calloc(cap, sizeof *table);
            if (!table) ok = 0;
            else {
                for (size_t i = 0; i < pyhip_event_cap; i++)
                    if (pyhip_events[i].handle > 1) pyhip_event_insert(table, cap, &pyhip_events[i]);
                free(pyhip_events);
                pyhip_events = table;
                pyhip_event_cap = cap;
                pyhip_event_used = live;
            }
        }
        if (ok) {
            pyhip_event_slot e = {h, device, flags, signal, state};
            pyhip_event_used += pyhip_event_insert(pyhip_events, pyhip_event_cap, &e);
        }
    }
    pthread_mutex_unlock(&pyhip_event_lock);
    return ok;
}

uint64_t pyhip_event_hit_count(void) { return __atomic_load_n(&pyhip_event_hits, __ATOMIC_RELAXED); }

/* A copy of `handle`'s slot whose latest record is native (`recorded`: 1) or any registered one (0). */
static int pyhip_event_get(void* handle, pyhip_event_slot* out, int recorded) {
    pthread_mutex_lock(&pyhip_event_lock);
    pyhip_event_slot* e = pyhip_event_find((uintptr_t)handle);
    int ok = e && (!recorded || __atomic_load_n(&e->state[1], __ATOMIC_ACQUIRE));
    if (ok) *out = *e;
    pthread_mutex_unlock(&pyhip_event_lock);
    return ok;
}

static int64_t pyhip_signal_value(void* sig) { return __atomic_load_n((int64_t*)((char*)sig + 8), __ATOMIC_ACQUIRE); }
static uint64_t pyhip_signal_end_ns(void* sig) { return __atomic_load_n((uint64_t*)((char*)sig + 40), __ATOMIC_ACQUIRE); }

static void pyhip_event_barrier(void* queue, int64_t idx, void* completion) {
    uint8_t pkt[64] = {0};
    uint16_t h = PYHIP_EVENT_BARRIER_HEADER;
    uint64_t sig = (uint64_t)(uintptr_t)completion;
    memcpy(pkt, &h, 2);
    memcpy(pkt + 56, &sig, 8);
    pyhip_q_publish(queue, (uint64_t)idx, pkt);
}

/* 1: recorded natively; 0: Python records it. */
static int pyhip_event_record_native(void* event, void* stream) {
    if (!pyhip_sig_wait) return 0;
    pthread_mutex_lock(&pyhip_event_lock);      /* held throughout: hipEventDestroy waits for the record */
    pyhip_event_slot* e = pyhip_event_find((uintptr_t)event);
    int d = e ? e->device : -1;
    if (d < 0 || d >= PYHIP_SYNC_DEVICES || (!stream && d != pyhip_tls_device)) {
        pthread_mutex_unlock(&pyhip_event_lock);
        return 0;
    }
    pyhip_event_slot ev = *e;
    int done = 0;
    pthread_mutex_lock(&pyhip_fast_lock);       /* as a native launch: pyhip_fast_invalidate waits for it */
    pthread_mutex_lock(&pyhip_sync_lock);
    pyhip_sync_state s = pyhip_sync[d];
    pthread_mutex_unlock(&pyhip_sync_lock);
    if (s.counter && !s.queue && s.stream == stream && pyhip_signal_value(ev.signal) == 0 &&
        pyhip_signal_value(s.counter) == 0) {
        /* armed with no grant: the device is idle, the event completes now (Event.record's idle case) */
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        uint64_t now = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
        __atomic_store_n((uint64_t*)((char*)ev.signal + 32), now, __ATOMIC_RELAXED);
        __atomic_store_n((uint64_t*)((char*)ev.signal + 40), now, __ATOMIC_RELEASE);
        __atomic_add_fetch(&ev.state[0], 1, __ATOMIC_RELEASE);
        __atomic_store_n(&ev.state[1], 1, __ATOMIC_RELEASE);
        done = 1;
    } else if (s.counter && s.queue && s.stream == stream) {
        int64_t a = pyhip_q_reserve(s.queue, -1), b = a < 0 ? -1 : pyhip_q_reserve(s.queue, -1);
        if (b >= 0) {
            pyhip_sig_add(ev.signal, 1);
            __atomic_add_fetch(&ev.state[0], 1, __ATOMIC_RELEASE);
            __atomic_store_n(&ev.state[1], 1, __ATOMIC_RELEASE);
            pyhip_event_barrier(s.queue, a, ev.signal);
            pyhip_sig_add(s.counter, 1);
            __atomic_fetch_add(s.launches, 1, __ATOMIC_RELAXED);
            pyhip_event_barrier(s.queue, b, s.counter);
            done = 1;
        } else if (a >= 0) {                     /* closed in between: the reserved slot must still complete */
            pyhip_sig_add(s.counter, 1);
            __atomic_fetch_add(s.launches, 1, __ATOMIC_RELAXED);
            pyhip_event_barrier(s.queue, a, s.counter);
        }
    }
    pthread_mutex_unlock(&pyhip_fast_lock);
    pthread_mutex_unlock(&pyhip_event_lock);
    return done;
}


int hipEventRecord(void* event, void* stream) {
    if (pyhip_event_record_native(event, stream)) {
        __atomic_fetch_add(&pyhip_event_hits, 1, __ATOMIC_RELAXED);
        return pyhip_tls_last_error = 0;
    }
    return pyhip_slow_hipEventRecord(event, stream);
}

int hipEventQuery(void* event) {
    pyhip_event_slot ev;
    if (pyhip_event_get(event, &ev, 1)) {
        __atomic_fetch_add(&pyhip_event_hits, 1, __ATOMIC_RELAXED);
        return pyhip_tls_last_error = pyhip_signal_value(ev.signal) == 0 ? 0 : 600;     /* hipErrorNotReady */
    }
    return pyhip_slow_hipEventQuery(event);
}

int hipEventSynchronize(void* event) {
    pyhip_event_slot ev;
    if (pyhip_event_get(event, &ev, 1)) {
        int64_t seen = 0;
        while (pyhip_sig_wait(ev.signal, 0 /* EQ */, 0, -1, 100000000LL, 20000LL, &seen) != 1) {}
        __atomic_fetch_add(&pyhip_event_hits, 1, __ATOMIC_RELAXED);
        return pyhip_tls_last_error = 0;
    }
    return pyhip_slow_hipEventSynchronize(event);
}

int hipEventElapsedTime(float* ms, void* start, void* stop) {
    pyhip_event_slot a, b;
    if (ms && pyhip_event_get(start, &a, 1) && pyhip_event_get(stop, &b, 1) && a.device == b.device &&
        !((a.flags | b.flags) & PYHIP_EVENT_DISABLE_TIMING) && pyhip_signal_value(a.signal) == 0 &&
        pyhip_signal_value(b.signal) == 0) {
        /* Event.elapsed_ms's arithmetic: (end seconds - start seconds) * 1000 */
        *ms = (float)(((double)pyhip_signal_end_ns(b.signal) / 1e9 - (double)pyhip_signal_end_ns(a.signal) / 1e9) * 1000.0);
        __atomic_fetch_add(&pyhip_event_hits, 1, __ATOMIC_RELAXED);
        return pyhip_tls_last_error = 0;
    }
    return pyhip_slow_hipEventElapsedTime(ms, start, stop);
}

