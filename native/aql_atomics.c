/* Native half of pyhip's AQL core (pyhip/aql/): every store a producer, the packet processor or a waiter
 * makes to memory shared between threads (queue indices, packet headers, signal values) is an atomic
 * here, with the ordering HSA asks for.  Built with cffi (API mode) by native/build_aql.py into
 * pyhip._native_aql.
 *
 * Layouts (docs/code-object.md §8):
 *   amd_signal_t (64 B): kind i64 @0, value i64 @8, event_mailbox_ptr @16, event_id u32 @24,
 *     start_ts @32, end_ts @40, queue_ptr @48, reserved u32[2] @56.
 *     pyhip uses the reserved words:  @28 wake sequence (futex word), @56 error code (0 = ok),
 *     @60 number of sleeping waiters.
 *   amd_queue_t (256 B): hsa_queue_t @0 (base_address @8, doorbell_signal @16, size u32 @24),
 *     write_dispatch_id @56, read_dispatch_id @128.  pyhip uses reserved4[] @200..:  @200 retire
 *     sequence (futex word), @204 producers sleeping on a full queue, @208 closed flag.
 *
 * Waiting = a short spin (GIL released: cffi drops it around every call), then futex sleeps on a sequence
 * word that every update bumps; a sleep never lasts longer than PYHIP_MAX_SLEEP_NS so that writers that do
 * not bump the sequence (e.g. device code storing to a signal directly) are still seen, and every timeout
 * is honoured.  Nobody busy-burns a CPU for longer than the spin budget.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <sched.h>
#include <limits.h>
#include <linux/futex.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define SIG_KIND 0
#define SIG_VALUE 8
#define SIG_SEQ 28
#define SIG_START_TS 32
#define SIG_END_TS 40
#define SIG_ERROR 56
#define SIG_WAITERS 60

#define Q_BASE 8
#define Q_DOORBELL 16
#define Q_SIZE 24
#define Q_WRITE 56
#define Q_READ 128
#define Q_RETIRE_SEQ 200
#define Q_SPACE_WAITERS 204
#define Q_CLOSED 208

#define PKT_INVALID 1u
#define RESERVE_SPIN_NS 50000LL /* a producer finding the queue full spins this long before sleeping */
#define PYHIP_MAX_SLEEP_NS 20000000LL /* 20 ms */

#define AT(p, off, T) ((T*)((char*)(p) + (off)))

/* Multi-signal waits (barrier-AND/OR) sleep on this global sequence, bumped by every signal update. */
static uint32_t g_any_seq, g_any_waiters;

int64_t pyhip_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

/* One step of a spin-wait: a few pause instructions, then the CPU to any other runnable thread (on a machine
 * with more busy threads than cores, the thread we wait for may be the one waiting for this core). */
static inline void spin_step(void) {
    for (int i = 0; i < 32; ++i) cpu_relax();
    sched_yield();
}

static void futex_sleep(uint32_t* word, uint32_t expected, int64_t ns) {
    if (ns <= 0) return;
    if (ns > PYHIP_MAX_SLEEP_NS) ns = PYHIP_MAX_SLEEP_NS;
    struct timespec ts = {(time_t)(ns / 1000000000LL), (long)(ns % 1000000000LL)};
    syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, expected, &ts, NULL, 0);
}

static void bump(uint32_t* seq, uint32_t* waiters) {
    __atomic_fetch_add(seq, 1, __ATOMIC_SEQ_CST);
    if (__atomic_load_n(waiters, __ATOMIC_SEQ_CST))
        syscall(SYS_futex, seq, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

/* ---- memory --------------------------------------------------------------------------------------- */
void* pyhip_alloc64(size_t size) {
    void* p = NULL;
    if (size == 0) size = 64;
    size = (size + 63) & ~(size_t)63;
    if (posix_memalign(&p, 64, size) != 0) return NULL;
    memset(p, 0, size);
    return p;
}
void pyhip_free(void* p) { free(p); }

/* Copies and fills of process memory (runtime/idlecopy.py, the packet processor's host copies). */
void pyhip_copy_bytes(void* dst, const void* src, size_t n) { memmove(dst, src, n); }

void pyhip_fill_bytes(void* dst, uint64_t value, size_t count, int width) {
    uint8_t* d = dst;
    if (width == 1) { memset(d, (int)(value & 0xFF), count); return; }
    for (size_t i = 0; i < count; i++) memcpy(d + i * (size_t)width, &value, (size_t)width);   /* little-endian */
}

/* ---- plain atomics (for anyone sharing native words between threads) -------------------------------- */
uint64_t pyhip_load_acquire_u64(const uint64_t* p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
void pyhip_store_release_u64(uint64_t* p, uint64_t v) { __atomic_store_n(p, v, __ATOMIC_RELEASE); }
uint64_t pyhip_fetch_add_u64(uint64_t* p, uint64_t v) { return __atomic_fetch_add(p, v, __ATOMIC_ACQ_REL); }
int pyhip_cas_u64(uint64_t* p, uint64_t expected, uint64_t desired) {
    return __atomic_compare_exchange_n(p, &expected, desired, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
}
int64_t pyhip_load_acquire_i64(const int64_t* p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
void pyhip_store_release_i64(int64_t* p, int64_t v) { __atomic_store_n(p, v, __ATOMIC_RELEASE); }
int64_t pyhip_add_fetch_i64(int64_t* p, int64_t v) { return __atomic_add_fetch(p, v, __ATOMIC_ACQ_REL); }
uint32_t pyhip_load_acquire_u32(const uint32_t* p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
void pyhip_store_release_u32(uint32_t* p, uint32_t v) { __atomic_store_n(p, v, __ATOMIC_RELEASE); }
uint16_t pyhip_load_acquire_u16(const uint16_t* p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }

/* ---- signals ---------------------------------------------------------------------------------------- */
void pyhip_signal_notify(void* sig) {
    bump(AT(sig, SIG_SEQ, uint32_t), AT(sig, SIG_WAITERS, uint32_t));
    bump(&g_any_seq, &g_any_waiters);
}
int64_t pyhip_signal_load(void* sig) { return __atomic_load_n(AT(sig, SIG_VALUE, int64_t), __ATOMIC_ACQUIRE); }
void pyhip_signal_store(void* sig, int64_t v) {
    __atomic_store_n(AT(sig, SIG_VALUE, int64_t), v, __ATOMIC_RELEASE);
    pyhip_signal_notify(sig);
}
int64_t pyhip_signal_add(void* sig, int64_t delta) { /* returns the new value */
    int64_t v = __atomic_add_fetch(AT(sig, SIG_VALUE, int64_t), delta, __ATOMIC_ACQ_REL);
    pyhip_signal_notify(sig);
    return v;
}
int64_t pyhip_signal_exchange(void* sig, int64_t v) {
    int64_t old = __atomic_exchange_n(AT(sig, SIG_VALUE, int64_t), v, __ATOMIC_ACQ_REL);
    pyhip_signal_notify(sig);
    return old;
}
int64_t pyhip_signal_cas(void* sig, int64_t expected, int64_t desired) { /* returns the observed value */
    int64_t e = expected;
    if (__atomic_compare_exchange_n(AT(sig, SIG_VALUE, int64_t), &e, desired, 0, __ATOMIC_ACQ_REL,
                                    __ATOMIC_ACQUIRE))
        pyhip_signal_notify(sig);
    return e;
}
void pyhip_signal_store_max(void* sig, int64_t v) { /* value = max(value, v) */
    int64_t* p = AT(sig, SIG_VALUE, int64_t);
    int64_t cur = __atomic_load_n(p, __ATOMIC_ACQUIRE);
    while (cur < v && !__atomic_compare_exchange_n(p, &cur, v, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {}
    pyhip_signal_notify(sig);
}

static inline int cond_ok(int64_t v, int cond, int64_t cmp) {
    switch (cond) {
    case 0: return v == cmp;
    case 1: return v != cmp;
    case 2: return v < cmp;
    case 3: return v >= cmp;
    }
    return 0;
}

/* Wait until ((value & mask) cond cmp).  cond: 0 EQ, 1 NE, 2 LT, 3 GTE.  timeout_ns < 0 = no limit.
 * Returns 1 when satisfied, 0 on timeout, -1 for a bad condition; *out (unless NULL) = the last value read. */
int pyhip_signal_wait(void* sig, int cond, int64_t cmp, int64_t mask, int64_t timeout_ns, int64_t spin_ns,
                      int64_t* out) {
    if (cond < 0 || cond > 3) return -1;
    int64_t* val = AT(sig, SIG_VALUE, int64_t);
    int64_t v = __atomic_load_n(val, __ATOMIC_ACQUIRE);
    if (out) *out = v;
    if (cond_ok(v & mask, cond, cmp)) return 1;
    int64_t start = pyhip_now_ns(), now = start;
    int64_t deadline = timeout_ns < 0 ? INT64_MAX : start + timeout_ns;
    int64_t spin_end = start + spin_ns < deadline ? start + spin_ns : deadline;
    while (now < spin_end) {
        spin_step();
        v = __atomic_load_n(val, __ATOMIC_ACQUIRE);
        if (cond_ok(v & mask, cond, cmp)) { if (out) *out = v; return 1; }
        now = pyhip_now_ns();
    }
    uint32_t* seq = AT(sig, SIG_SEQ, uint32_t);
    uint32_t* waiters = AT(sig, SIG_WAITERS, uint32_t);
    int r = 0;
    __atomic_fetch_add(waiters, 1, __ATOMIC_SEQ_CST);
    for (;;) {
        uint32_t s = __atomic_load_n(seq, __ATOMIC_SEQ_CST);
        v = __atomic_load_n(val, __ATOMIC_ACQUIRE);
        if (cond_ok(v & mask, cond, cmp)) { r = 1; break; }
        now = pyhip_now_ns();
        if (now >= deadline) break;
        futex_sleep(seq, s, deadline - now);
    }
    __atomic_fetch_sub(waiters, 1, __ATOMIC_SEQ_CST);
    if (out) *out = v;
    return r;
}

/* Barrier-AND (all = 1: every signal is 0) / barrier-OR (all = 0: any signal is 0).  n == 0 is satisfied.
 * Returns 1 when satisfied, 0 on timeout. */
static int multi_ok(void* const* sigs, int n, int all) {
    if (n == 0) return 1;
    int zero = 0;
    for (int i = 0; i < n; ++i) zero += __atomic_load_n(AT(sigs[i], SIG_VALUE, int64_t), __ATOMIC_ACQUIRE) == 0;
    return all ? zero == n : zero > 0;
}
int pyhip_signal_wait_multi(void* const* sigs, int n, int all, int64_t timeout_ns, int64_t spin_ns) {
    if (multi_ok(sigs, n, all)) return 1;
    int64_t start = pyhip_now_ns(), now = start;
    int64_t deadline = timeout_ns < 0 ? INT64_MAX : start + timeout_ns;
    int64_t spin_end = start + spin_ns < deadline ? start + spin_ns : deadline;
    while (now < spin_end) {
        spin_step();
        if (multi_ok(sigs, n, all)) return 1;
        now = pyhip_now_ns();
    }
    int r = 0;
    __atomic_fetch_add(&g_any_waiters, 1, __ATOMIC_SEQ_CST);
    for (;;) {
        uint32_t s = __atomic_load_n(&g_any_seq, __ATOMIC_SEQ_CST);
        if (multi_ok(sigs, n, all)) { r = 1; break; }
        now = pyhip_now_ns();
        if (now >= deadline) break;
        futex_sleep(&g_any_seq, s, deadline - now);
    }
    __atomic_fetch_sub(&g_any_waiters, 1, __ATOMIC_SEQ_CST);
    return r;
}

void pyhip_signal_set_start(void* sig) { __atomic_store_n(AT(sig, SIG_START_TS, uint64_t), (uint64_t)pyhip_now_ns(), __ATOMIC_RELEASE); }

/* Packet completion: end_ts, error code, then the atomic decrement (last write), then wake waiters.  A
 * completion with an error moves the fault epoch on first (the C ABI's native synchronize watches it). */
static uint64_t g_fault_epoch;     /* completions with an error so far, process-wide */

uint64_t pyhip_fault_epoch(void) { return __atomic_load_n(&g_fault_epoch, __ATOMIC_ACQUIRE); }

int64_t pyhip_signal_complete(void* sig, uint32_t error_code) {
    if (error_code) __atomic_fetch_add(&g_fault_epoch, 1, __ATOMIC_ACQ_REL);   /* before the decrement */
    __atomic_store_n(AT(sig, SIG_END_TS, uint64_t), (uint64_t)pyhip_now_ns(), __ATOMIC_RELAXED);
    __atomic_store_n(AT(sig, SIG_ERROR, uint32_t), error_code, __ATOMIC_RELAXED);
    return pyhip_signal_add(sig, -1);
}

/* The synchronize of an armed device (runtime/device.py, Device.arm_sync): wait until its counter signal is 0.
 * 1 = reached and no completion failed since `epoch`; 2 = reached, but the fault epoch moved; 0 = timed out. */
int pyhip_armed_wait(void* counter, uint64_t epoch, int64_t timeout_ns, int64_t spin_ns) {
    if (pyhip_signal_wait(counter, 0, 0, -1, timeout_ns, spin_ns, NULL) != 1) return 0;
    return pyhip_fault_epoch() == epoch ? 1 : 2;
}

/* ---- queues ------------------------------------------------------------------------------------------ */
static inline uint8_t* slot_of(void* q, uint64_t index) {
    uint64_t base = *AT(q, Q_BASE, uint64_t);
    uint32_t size = *AT(q, Q_SIZE, uint32_t);
    return (uint8_t*)(uintptr_t)(base + (index & (uint64_t)(size - 1)) * 64u);
}

/* Producer: reserve one slot (CAS on the write index, only when the slot is free: a timeout never leaves
 * a hole).  Sleeps while the queue is full.  Returns the index, -1 on timeout, -2 if the queue is closed. */
int64_t pyhip_queue_reserve(void* q, int64_t timeout_ns) {
    uint64_t* w = AT(q, Q_WRITE, uint64_t);
    uint64_t* rd = AT(q, Q_READ, uint64_t);
    uint64_t size = *AT(q, Q_SIZE, uint32_t);
    uint32_t* seq = AT(q, Q_RETIRE_SEQ, uint32_t);
    uint32_t* waiters = AT(q, Q_SPACE_WAITERS, uint32_t);
    uint32_t* closed = AT(q, Q_CLOSED, uint32_t);
    int64_t deadline = -1, res, spin_until = 0;
    int registered = 0;
    for (;;) {
        if (__atomic_load_n(closed, __ATOMIC_ACQUIRE)) { res = -2; break; }
        uint32_t s = __atomic_load_n(seq, __ATOMIC_SEQ_CST);
        uint64_t wi = __atomic_load_n(w, __ATOMIC_ACQUIRE);
        uint64_t ri = __atomic_load_n(rd, __ATOMIC_ACQUIRE);
        if ((int64_t)(wi - ri) < (int64_t)size) {
            if (__atomic_compare_exchange_n(w, &wi, wi + 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
                res = (int64_t)wi;
                break;
            }
            continue;
        }
        if (!registered) {
            /* full: the consumer retires a packet every few microseconds; spin a little before sleeping, or
             * every retire becomes a futex wake and a context switch (a launch loop's ping-pong) */
            int64_t now = pyhip_now_ns();
            if (spin_until == 0)
                spin_until = now + (timeout_ns >= 0 && timeout_ns < RESERVE_SPIN_NS ? timeout_ns : RESERVE_SPIN_NS);
            if (now < spin_until) {
                spin_step();
                continue;
            }
            __atomic_fetch_add(waiters, 1, __ATOMIC_SEQ_CST);    /* register, then re-check before sleeping */
            registered = 1;
            continue;
        }
        int64_t now = pyhip_now_ns();
        if (deadline < 0) deadline = timeout_ns < 0 ? INT64_MAX : now + timeout_ns;
        if (now >= deadline) { res = -1; break; }
        futex_sleep(seq, s, deadline - now);
    }
    if (registered) __atomic_fetch_sub(waiters, 1, __ATOMIC_SEQ_CST);
    return res;
}

/* Producer: body first, then header+setup with ONE 32-bit release store, then ring the doorbell. */
void pyhip_queue_publish(void* q, uint64_t index, const uint8_t* packet64) {
    uint8_t* slot = slot_of(q, index);
    uint32_t hs;
    memcpy(slot + 4, packet64 + 4, 60);
    memcpy(&hs, packet64, 4);
    __atomic_store_n((uint32_t*)slot, hs, __ATOMIC_RELEASE);
    void* doorbell = (void*)(uintptr_t)*AT(q, Q_DOORBELL, uint64_t);
    pyhip_signal_store_max(doorbell, (int64_t)index);
}

/* Wait for the packet at `index` (spin until spin_end, then futex sleeps until deadline).  1 = published,
 * 0 = deadline passed, -1 = the queue was closed with nothing there. */
static int await_slot(void* q, uint64_t index, int64_t spin_end, int64_t deadline) {
    const uint32_t* slot = (const uint32_t*)slot_of(q, index);
    if ((__atomic_load_n(slot, __ATOMIC_ACQUIRE) & 0xFF) != PKT_INVALID) return 1;
    void* doorbell = (void*)(uintptr_t)*AT(q, Q_DOORBELL, uint64_t);
    uint32_t* seq = AT(doorbell, SIG_SEQ, uint32_t);
    uint32_t* waiters = AT(doorbell, SIG_WAITERS, uint32_t);
    int64_t now = pyhip_now_ns();
    while (now < spin_end && now < deadline) {
        spin_step();
        if ((__atomic_load_n(slot, __ATOMIC_ACQUIRE) & 0xFF) != PKT_INVALID) return 1;
        now = pyhip_now_ns();
    }
    int r = 0;
    __atomic_fetch_add(waiters, 1, __ATOMIC_SEQ_CST);
    for (;;) {
        uint32_t s = __atomic_load_n(seq, __ATOMIC_SEQ_CST);
        if ((__atomic_load_n(slot, __ATOMIC_ACQUIRE) & 0xFF) != PKT_INVALID) { r = 1; break; }
        if (__atomic_load_n(AT(q, Q_CLOSED, uint32_t), __ATOMIC_ACQUIRE)) { r = -1; break; }
        now = pyhip_now_ns();
        if (now >= deadline) break;
        futex_sleep(seq, s, deadline - now);
    }
    __atomic_fetch_sub(waiters, 1, __ATOMIC_SEQ_CST);
    return r;
}

/* Consumer: wait until the packet at `index` is published, copy it to out64.  1 = got it, 0 = timeout (or the
 * queue was closed with nothing there). */
int pyhip_queue_wait_packet(void* q, uint64_t index, uint8_t* out64, int64_t timeout_ns, int64_t spin_ns) {
    int64_t start = pyhip_now_ns();
    int64_t deadline = timeout_ns < 0 ? INT64_MAX : start + timeout_ns;
    if (await_slot(q, index, start + spin_ns, deadline) <= 0) return 0;
    const uint8_t* slot = slot_of(q, index);
    uint32_t hs = __atomic_load_n((const uint32_t*)slot, __ATOMIC_ACQUIRE);
    memcpy(out64, &hs, 4);
    memcpy(out64 + 4, slot + 4, 60);
    return 1;
}

/* Consumer: mark the slot INVALID, advance the read index past it (release), wake full-queue waiters. */
void pyhip_queue_retire(void* q, uint64_t index) {
    __atomic_store_n((uint32_t*)slot_of(q, index), PKT_INVALID, __ATOMIC_RELEASE);
    __atomic_store_n(AT(q, Q_READ, uint64_t), index + 1, __ATOMIC_RELEASE);
    bump(AT(q, Q_RETIRE_SEQ, uint32_t), AT(q, Q_SPACE_WAITERS, uint32_t));
}

/* No more reservations; wakes producers sleeping on a full queue (they get -2) and the consumer. */
void pyhip_queue_close(void* q) {
    __atomic_store_n(AT(q, Q_CLOSED, uint32_t), 1, __ATOMIC_RELEASE);
    bump(AT(q, Q_RETIRE_SEQ, uint32_t), AT(q, Q_SPACE_WAITERS, uint32_t));
    pyhip_signal_notify((void*)(uintptr_t)*AT(q, Q_DOORBELL, uint64_t));
}

/* Wake the consumer without publishing anything (used to make it look at its stop flag). */
void pyhip_queue_kick(void* q) { pyhip_signal_notify((void*)(uintptr_t)*AT(q, Q_DOORBELL, uint64_t)); }

/* ---- memory written by producers that bump no futex word (ROCr's queues and signals) -------------------
 * Nothing wakes us when ROCr stores to its own amd_signal_t or rings a hardware doorbell with a plain store,
 * so these waits poll: a short spin, then sleeps that double from 10 us up to 1 ms (4 ms once idle for
 * 100 ms).  An idle queue costs a few hundred wake-ups a second, not a core; the first packet after a long
 * idle period is seen within 4 ms. */
static void poll_sleep(int64_t start, int64_t* nap) {
    int64_t idle = pyhip_now_ns() - start;
    int64_t cap = idle > 100000000LL ? 4000000LL : 1000000LL;
    struct timespec ts = {0, (long)*nap};
    nanosleep(&ts, NULL);
    *nap = *nap * 2 > cap ? cap : *nap * 2;
}

#define POLL_SPIN_NS 20000LL

/* Wait until ((*value & mask) cond cmp) (cond: 0 EQ, 1 NE, 2 LT, 3 GTE).  1 = satisfied, 0 = timeout. */
int pyhip_raw_wait_value(const int64_t* value, int cond, int64_t cmp, int64_t mask, int64_t timeout_ns) {
    if (cond < 0 || cond > 3) return -1;
    int64_t start = pyhip_now_ns(), nap = 10000;
    for (;;) {
        if (cond_ok(__atomic_load_n(value, __ATOMIC_ACQUIRE) & mask, cond, cmp)) return 1;
        int64_t now = pyhip_now_ns();
        if (timeout_ns >= 0 && now - start >= timeout_ns) return 0;
        if (now - start < POLL_SPIN_NS) { spin_step(); continue; }
        poll_sleep(start, &nap);
    }
}

/* Barrier-AND (all = 1) / barrier-OR (all = 0) over signal values (each a pointer to amd_signal_t.value). */
int pyhip_raw_wait_multi(int64_t* const* values, int n, int all, int64_t timeout_ns) {
    int64_t start = pyhip_now_ns(), nap = 10000;
    for (;;) {
        int zero = 0;
        for (int i = 0; i < n; ++i) zero += __atomic_load_n(values[i], __ATOMIC_ACQUIRE) == 0;
        if (n == 0 || (all ? zero == n : zero > 0)) return 1;
        int64_t now = pyhip_now_ns();
        if (timeout_ns >= 0 && now - start >= timeout_ns) return 0;
        if (now - start < POLL_SPIN_NS) { spin_step(); continue; }
        poll_sleep(start, &nap);
    }
}

/* The command processor of a hardware-style AQL queue: wait until packet `index` is submitted — its
 * header type is not INVALID and the doorbell (the last submitted index) has reached it — or *stop
 * becomes non-zero or the timeout passes.  1 = ready, 0 = not yet. */
int pyhip_cp_wait_packet(const uint16_t* header, const uint64_t* doorbell, uint64_t index, const uint32_t* stop,
                         int64_t timeout_ns) {
    int64_t start = pyhip_now_ns(), nap = 10000;
    for (;;) {
        if ((__atomic_load_n(header, __ATOMIC_ACQUIRE) & 0xFF) != PKT_INVALID &&
            __atomic_load_n(doorbell, __ATOMIC_ACQUIRE) + 1 > index)
            return 1;
        if (__atomic_load_n(stop, __ATOMIC_ACQUIRE)) return 0;
        int64_t now = pyhip_now_ns();
        if (timeout_ns >= 0 && now - start >= timeout_ns) return 0;
        if (now - start < POLL_SPIN_NS) { spin_step(); continue; }
        poll_sleep(start, &nap);
    }
}

void pyhip_store_release_u16(uint16_t* p, uint16_t v) { __atomic_store_n(p, v, __ATOMIC_RELEASE); }

/* ---- queues another runtime owns (ROCr's hsa_queue_t/amd_queue_t; ABI offsets of amd_hsa_queue.h) -------
 * Reserve a slot only when write - read < size (a full queue waits, never overwrites), write the body, then
 * header+setup with one release store, then ring the doorbell through the runtime's own
 * hsa_signal_store_screlease (its doorbell signal knows the hardware doorbell).  Returns the packet index,
 * or -1 if the queue stayed full for timeout_ns. */
typedef void (*pyhip_doorbell_fn)(uint64_t signal, int64_t value);

int64_t pyhip_foreign_submit(void* q, const uint8_t* packet64, void* doorbell_fn, int64_t timeout_ns) {
    uint64_t* w = AT(q, Q_WRITE, uint64_t);
    uint64_t* rd = AT(q, Q_READ, uint64_t);
    uint64_t size = *AT(q, Q_SIZE, uint32_t);
    int64_t start = -1, nap = 10000;
    uint64_t wi;
    for (;;) {
        wi = __atomic_load_n(w, __ATOMIC_ACQUIRE);
        uint64_t ri = __atomic_load_n(rd, __ATOMIC_ACQUIRE);
        if (wi - ri < size) {
            if (__atomic_compare_exchange_n(w, &wi, wi + 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) break;
            continue;
        }
        int64_t now = pyhip_now_ns();
        if (start < 0) start = now;
        if (timeout_ns >= 0 && now - start >= timeout_ns) return -1;
        if (now - start < POLL_SPIN_NS) { spin_step(); continue; }
        poll_sleep(start, &nap);
    }
    uint8_t* slot = slot_of(q, wi);
    uint32_t hs;
    memcpy(slot + 4, packet64 + 4, 60);
    memcpy(&hs, packet64, 4);
    __atomic_store_n((uint32_t*)slot, hs, __ATOMIC_RELEASE);
    ((pyhip_doorbell_fn)doorbell_fn)(*AT(q, Q_DOORBELL, uint64_t), (int64_t)wi);
    return (int64_t)wi;
}

/* The same split into reserve / publish the C ABI's native launch path uses for pyhip's own queues
 * (pyhip_queue_reserve / pyhip_queue_publish), for a queue another runtime owns: the doorbell is rung
 * through that runtime's function, set once with pyhip_foreign_set_doorbell. */
static pyhip_doorbell_fn g_foreign_doorbell;

void pyhip_foreign_set_doorbell(void* fn) { g_foreign_doorbell = (pyhip_doorbell_fn)fn; }

int64_t pyhip_foreign_reserve(void* q, int64_t timeout_ns) {
    uint64_t* w = AT(q, Q_WRITE, uint64_t);
    uint64_t* rd = AT(q, Q_READ, uint64_t);
    uint64_t size = *AT(q, Q_SIZE, uint32_t);
    int64_t start = -1, nap = 10000;
    for (;;) {
        uint64_t wi = __atomic_load_n(w, __ATOMIC_ACQUIRE);
        if (wi - __atomic_load_n(rd, __ATOMIC_ACQUIRE) < size) {
            if (__atomic_compare_exchange_n(w, &wi, wi + 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) return (int64_t)wi;
            continue;
        }
        int64_t now = pyhip_now_ns();
        if (start < 0) start = now;
        if (timeout_ns >= 0 && now - start >= timeout_ns) return -1;
        if (now - start < POLL_SPIN_NS) { spin_step(); continue; }
        poll_sleep(start, &nap);
    }
}

void pyhip_foreign_publish(void* q, uint64_t index, const uint8_t* packet64) {
    uint8_t* slot = slot_of(q, index);
    uint32_t hs;
    memcpy(slot + 4, packet64 + 4, 60);
    memcpy(&hs, packet64, 4);
    __atomic_store_n((uint32_t*)slot, hs, __ATOMIC_RELEASE);
    g_foreign_doorbell(*AT(q, Q_DOORBELL, uint64_t), (int64_t)index);
}

/* Add to a signal that belongs to another runtime (its value word only; returns the new value). */
int64_t pyhip_raw_signal_add(void* sig, int64_t delta) {
    return __atomic_add_fetch(AT(sig, SIG_VALUE, int64_t), delta, __ATOMIC_ACQ_REL);
}
