/* The packet processor's native loop (pyhip/aql/processor.py) and the registry of live signals.
 *
 * pyhip_queue_process consumes a queue's packets in order with no Python and no GIL, for as long as every
 * packet is one it can finish here:
 *   - kernel dispatch: handed to the agent's native function (an emulated device: native/engine/agent.h),
 *     which runs it or declines before doing anything;
 *   - barrier-AND / barrier-OR whose dependencies are live signals: waited for here (a spin, then sleeps on
 *     the sequence every signal update bumps; the stop word ends the wait and Python cancels the packet);
 *   - the vendor-specific agent-dispatch no-op, copies of process memory (AGENT_HOST_COPY: both addresses
 *     are host addresses, a memmove), and copies and fills the agent does natively (it declines what it
 *     would reject).
 * Each gets what the Python path gives a packet: its fences counted, start and end timestamps, error 0 and
 * the decrement on its completion signal, its slot retired.  Any other packet (a copy or fill the agent
 * declines, a host callback, a barrier-value packet, a barrier on a handle that is not a live signal, a
 * completion signal that is not a live signal, a kernel the agent declines or that faulted) stops the loop
 * with the packet still in place, for Python's path.  When the queue is empty
 * the loop spins `spin_ns` after the last packet (a producer in a launch loop publishes the next one within
 * microseconds), then sleeps on the doorbell's futex word until `timeout_ns` passes: an idle queue costs
 * nothing.
 *
 * Live signals: every Signal (pyhip/aql/signal.py) is registered when created and unregistered in the
 * destructor that frees it; a completion here happens under the registry's lock, so a signal handle that
 * names freed memory is never written.
 */
#include <pthread.h>

static pthread_mutex_t g_sig_mu = PTHREAD_MUTEX_INITIALIZER;
static uint64_t* g_sig_tab;            /* open addressing: 0 empty, 1 removed */
static size_t g_sig_cap, g_sig_used;

static inline size_t sig_hash(uint64_t h) { return (size_t)((h >> 6) * 0x9E3779B97F4A7C15ull); }

static int sig_find_locked(uint64_t h) {
    if (!g_sig_cap || h < 2) return -1;
    size_t m = g_sig_cap - 1;
    for (size_t i = sig_hash(h) & m, n = 0; n < g_sig_cap; i = (i + 1) & m, n++) {
        if (g_sig_tab[i] == 0) return -1;
        if (g_sig_tab[i] == h) return (int)i;
    }
    return -1;
}

static int sig_grow_locked(void) {
    size_t cap = g_sig_cap ? g_sig_cap * 2 : 1024;
    uint64_t* t = calloc(cap, sizeof *t);
    if (!t) return 0;
    size_t used = 0;
    for (size_t i = 0; i < g_sig_cap; i++) {
        uint64_t h = g_sig_tab[i];
        if (h < 2) continue;
        size_t j = sig_hash(h) & (cap - 1);
        while (t[j]) j = (j + 1) & (cap - 1);
        t[j] = h;
        used++;
    }
    free(g_sig_tab);
    g_sig_tab = t;
    g_sig_cap = cap;
    g_sig_used = used;
    return 1;
}

int pyhip_signal_register(void* sig) {
    uint64_t h = (uint64_t)(uintptr_t)sig;
    pthread_mutex_lock(&g_sig_mu);
    int ok = 1;
    if (sig_find_locked(h) < 0) {
        if ((g_sig_used + 1) * 2 > g_sig_cap) ok = sig_grow_locked();
        if (ok) {
            size_t m = g_sig_cap - 1, i = sig_hash(h) & m;
            while (g_sig_tab[i] >= 2) i = (i + 1) & m;
            if (g_sig_tab[i] == 0) g_sig_used++;
            g_sig_tab[i] = h;
        }
    }
    pthread_mutex_unlock(&g_sig_mu);
    return ok;
}

/* The destructor of a signal's memory: unregister, then free. */
void pyhip_signal_free(void* sig) {
    pthread_mutex_lock(&g_sig_mu);
    int i = sig_find_locked((uint64_t)(uintptr_t)sig);
    if (i >= 0) g_sig_tab[i] = 1;
    pthread_mutex_unlock(&g_sig_mu);
    free(sig);
}

int pyhip_signal_live(uint64_t handle) {
    pthread_mutex_lock(&g_sig_mu);
    int r = sig_find_locked(handle) >= 0;
    pthread_mutex_unlock(&g_sig_mu);
    return r;
}

/* ---- the loop -------------------------------------------------------------------------------------------- */
typedef int (*pyhip_agent_fn)(void* ctx, const uint8_t* packet64, uint64_t index);

enum { PROC_IDLE = 0, PROC_PYTHON = 1, PROC_FAULT = 2, PROC_CLOSED = 3, PROC_MAX = 4 };
/* counters[]: [0, 16) fences (acquire scope * 4 + release scope); then per kind of packet handled */
enum { CNT_KERNEL = 16, CNT_BARRIER_AND, CNT_BARRIER_OR, CNT_AGENT_NOP, CNT_BARRIER_BIT, CNT_N };

#define PKT_KERNEL 2
#define PKT_BARRIER_AND 3
#define PKT_AGENT 4
#define PKT_BARRIER_OR 5
#define AGENT_NOP_TYPE 0x8000
#define AGENT_COPY_TYPE 0x8001
#define AGENT_FILL_TYPE 0x8002
#define AGENT_HOST_COPY_TYPE 0x8004

/* A completion: under the registry's lock, so a signal being freed is never written.  0 = not a live signal. */
static int complete_live(uint64_t handle, uint32_t code) {
    if (!handle) return 1;
    pthread_mutex_lock(&g_sig_mu);
    int live = sig_find_locked(handle) >= 0;
    if (live) pyhip_signal_complete((void*)(uintptr_t)handle, code);
    pthread_mutex_unlock(&g_sig_mu);
    return live;
}

/* barrier-AND/OR: 1 = every (any) live dependency is 0 now; 0 = not yet; -1 = a dependency is not a live
 * signal (Python reports it) */
static int barrier_state(const uint8_t* pkt, int all) {
    uint64_t deps[5];
    memcpy(deps, pkt + 8, sizeof deps);
    int any = 0, n = 0, pending = 0;
    pthread_mutex_lock(&g_sig_mu);
    for (int i = 0; i < 5; i++) {
        if (!deps[i]) continue;
        if (sig_find_locked(deps[i]) < 0) { pthread_mutex_unlock(&g_sig_mu); return -1; }
        n++;
        if (pyhip_signal_load((void*)(uintptr_t)deps[i]) == 0) any = 1;
        else pending = 1;
    }
    pthread_mutex_unlock(&g_sig_mu);
    if (n == 0) return 1;
    return all ? !pending : any;
}

/* Block until the barrier is satisfied (spin `spin_ns`, then sleep on the sequence every signal update
 * bumps).  1 = satisfied; 0 = go to Python: a dependency is not live, or the stop word was set (an abort
 * cancels the wait there). */
static int barrier_wait(const uint8_t* pkt, int all, int64_t spin_ns, const uint32_t* stop) {
    int64_t spin_end = pyhip_now_ns() + spin_ns;
    int registered = 0, r;
    for (;;) {
        uint32_t s = __atomic_load_n(&g_any_seq, __ATOMIC_SEQ_CST);
        r = barrier_state(pkt, all);
        if (r != 0) break;
        if (stop && __atomic_load_n(stop, __ATOMIC_ACQUIRE)) break;
        if (pyhip_now_ns() < spin_end) { spin_step(); continue; }
        if (!registered) {
            __atomic_fetch_add(&g_any_waiters, 1, __ATOMIC_SEQ_CST);   /* register, then look again */
            registered = 1;
            continue;
        }
        futex_sleep(&g_any_seq, s, PYHIP_MAX_SLEEP_NS);
    }
    if (registered) __atomic_fetch_sub(&g_any_waiters, 1, __ATOMIC_SEQ_CST);
    return r == 1;
}

int64_t pyhip_queue_process(void* q, void* agent_fn, void* agent_ctx, int64_t max, int64_t timeout_ns,
                            int64_t spin_ns, const uint32_t* stop, int32_t* status, uint64_t* counters) {
    pyhip_agent_fn fn = (pyhip_agent_fn)agent_fn;
    int64_t done = 0;
    int64_t now = pyhip_now_ns();
    int64_t deadline = timeout_ns < 0 ? INT64_MAX : now + timeout_ns;
    int64_t spin_end = now + spin_ns;
    *status = PROC_IDLE;
    while (done < max) {
        if (stop && __atomic_load_n(stop, __ATOMIC_ACQUIRE)) return done;
        uint64_t ri = __atomic_load_n(AT(q, Q_READ, uint64_t), __ATOMIC_ACQUIRE);
        int got = await_slot(q, ri, spin_end, deadline);
        if (got <= 0) {
            *status = got < 0 ? PROC_CLOSED : PROC_IDLE;
            return done;
        }
        const uint8_t* slot = slot_of(q, ri);
        uint8_t pkt[64];
        uint32_t hs = __atomic_load_n((const uint32_t*)slot, __ATOMIC_ACQUIRE);
        memcpy(pkt, &hs, 4);
        memcpy(pkt + 4, slot + 4, 60);
        uint16_t header = (uint16_t)hs;
        int type = header & 0xFF, barrier = (header >> 8) & 1;
        int acquire = (header >> 9) & 3, release = (header >> 11) & 3;
        uint64_t sig;
        memcpy(&sig, pkt + 56, 8);
        if (sig && !pyhip_signal_live(sig)) { *status = PROC_PYTHON; return done; }
        int counter;
        if (type == PKT_KERNEL) {
            if (!fn) { *status = PROC_PYTHON; return done; }
            if (sig) pyhip_signal_set_start((void*)(uintptr_t)sig);
            int r = fn(agent_ctx, pkt, ri);
            if (r == 1) { *status = PROC_PYTHON; return done; }
            if (r == 2) { *status = PROC_FAULT; return done; }
            counter = CNT_KERNEL;
        } else if (type == PKT_BARRIER_AND || type == PKT_BARRIER_OR) {
            if (sig) pyhip_signal_set_start((void*)(uintptr_t)sig);
            if (!barrier_wait(pkt, type == PKT_BARRIER_AND, spin_ns, stop)) { *status = PROC_PYTHON; return done; }
            counter = type == PKT_BARRIER_AND ? CNT_BARRIER_AND : CNT_BARRIER_OR;
        } else if (type == PKT_AGENT && (pkt[2] | pkt[3] << 8) == AGENT_HOST_COPY_TYPE) {
            uint64_t a[3];
            memcpy(a, pkt + 16, sizeof a);
            if (sig) pyhip_signal_set_start((void*)(uintptr_t)sig);
            memmove((void*)(uintptr_t)a[0], (const void*)(uintptr_t)a[1], (size_t)a[2]);
            counter = CNT_AGENT_NOP;
        } else if (type == PKT_AGENT && (pkt[2] | pkt[3] << 8) == AGENT_NOP_TYPE) {
            if (sig) pyhip_signal_set_start((void*)(uintptr_t)sig);
            counter = CNT_AGENT_NOP;
        } else if (type == PKT_AGENT && fn && ((pkt[2] | pkt[3] << 8) == AGENT_COPY_TYPE ||
                                               (pkt[2] | pkt[3] << 8) == AGENT_FILL_TYPE)) {
            if (sig) pyhip_signal_set_start((void*)(uintptr_t)sig);
            if (fn(agent_ctx, pkt, ri) != 0) { *status = PROC_PYTHON; return done; }
            counter = CNT_AGENT_NOP;
        } else {
            *status = PROC_PYTHON;
            return done;
        }
        counters[acquire * 4 + release]++;
        counters[counter]++;
        if (barrier) counters[CNT_BARRIER_BIT]++;
        complete_live(sig, 0);
        pyhip_queue_retire(q, ri);
        ++done;
        now = pyhip_now_ns();
        spin_end = now + spin_ns;                        /* work keeps the call going; idleness ends it */
        deadline = timeout_ns < 0 ? INT64_MAX : now + timeout_ns;
        if (stop && __atomic_load_n(stop, __ATOMIC_ACQUIRE)) break;
    }
    *status = PROC_MAX;
    return done;
}
