/* The native launch path of the drop-in libamdhip64.so.5 (compiled into the cffi embedding shim).
 *
 * hipLaunchKernel(handle, grid, block, args, shared, stream) is the hot call of every hipcc-built
 * program.  The first launch of a configuration (handle, stream, grid, block, shared memory) goes
 * through Python (pyhip_slow_hipLaunchKernel: argument checks, lazy loading, kernarg layout from the
 * code object's metadata).  Python then registers a *fast entry* for it: the complete kernarg segment
 * with every hidden argument filled, the explicit arguments' offsets and sizes, and the AQL packet.
 * Later launches of that configuration never enter Python: copy the template into this packet slot's
 * kernarg buffer, copy the explicit arguments over it, reserve a queue slot, publish the packet (body,
 * then header with a release store, then the doorbell — the AQL core's own native functions).
 *
 * Kernarg buffers: one per queue slot (ring of size × slot_size bytes, host memory mapped into the
 * device's address space by Python).  Slot i's buffer is reused only by packet i + size, which cannot be
 * reserved before packet i was retired, i.e. after its dispatch finished.
 *
 * Completion: the fast packets of a stream share one counter signal: +1 before publishing, -1 by the
 * packet processor when the dispatch is done; the stream (Python) folds them into its last command when
 * it synchronises.  Entries are dropped by Python whenever that bookkeeping could be wrong (another
 * stream of the device gets work, the stream or module goes away).
 *
 * The thread's last error (hipGetLastError / hipPeekAtLastError) lives here, in C thread-local storage:
 * Python's implementations set it after every call, the fast path sets it to hipSuccess.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define PYHIP_FAST_MAX 64
#define PYHIP_FAST_MAX_ARGS 64
#define PYHIP_FAST_MAX_KERNARG 2048

typedef struct {
    const void* handle;
    void* stream;
    uint32_t grid[3], block[3];
    uint64_t shared;
    uint32_t nargs;
    uint32_t kernarg_size;
    uint16_t arg_offset[PYHIP_FAST_MAX_ARGS];
    uint16_t arg_size[PYHIP_FAST_MAX_ARGS];
    uint8_t kernarg[PYHIP_FAST_MAX_KERNARG];
    uint8_t packet[64];
    void* queue;                 /* amd_queue_t */
    uint8_t* ring;               /* kernarg buffers: host address == device address */
    uint64_t slot_size;
    uint64_t queue_mask;
    void* counter;               /* the stream's counter signal */
    uint64_t* launches;          /* the stream's count of fast launches */
    int device;                  /* for the null stream: the device it means (the thread's current one) */
} pyhip_fast_entry;

typedef int64_t (*pyhip_reserve_fn)(void*, int64_t);
typedef void (*pyhip_publish_fn)(void*, uint64_t, const uint8_t*);
typedef int64_t (*pyhip_sigadd_fn)(void*, int64_t);

static pyhip_fast_entry pyhip_fast_table[PYHIP_FAST_MAX];
static int pyhip_fast_count, pyhip_fast_next;
static pthread_mutex_t pyhip_fast_lock = PTHREAD_MUTEX_INITIALIZER;
static pyhip_reserve_fn pyhip_q_reserve;
static pyhip_publish_fn pyhip_q_publish;
static pyhip_sigadd_fn pyhip_sig_add;
static __thread int pyhip_tls_last_error;
static __thread int pyhip_tls_device;          /* mirrors the runtime's per-thread current device */
static uint64_t pyhip_fast_hits, pyhip_fast_misses;
static uint64_t pyhip_sync_hits;              /* synchronizes that waited in C (see the end of this file) */
static uint64_t pyhip_copy_hits;              /* copies and fills done in C (the end of this file) */
static uint64_t pyhip_event_hits;             /* event calls answered in C (the end of this file) */

void pyhip_set_last_error(int code) { pyhip_tls_last_error = code; }
void pyhip_set_current_device(int device) { pyhip_tls_device = device; }
int hipGetLastError(void) { int e = pyhip_tls_last_error; pyhip_tls_last_error = 0; return e; }
int hipPeekAtLastError(void) { return pyhip_tls_last_error; }
uint64_t pyhip_fast_hit_count(void) { return __atomic_load_n(&pyhip_fast_hits, __ATOMIC_RELAXED); }

void pyhip_fast_set_fns(void* reserve, void* publish, void* sigadd) {
    pyhip_q_reserve = (pyhip_reserve_fn)reserve;
    pyhip_q_publish = (pyhip_publish_fn)publish;
    pyhip_sig_add = (pyhip_sigadd_fn)sigadd;
}

static int pyhip_fast_same(const pyhip_fast_entry* e, const void* handle, void* stream, const uint32_t* g,
                           const uint32_t* b, uint64_t shared, int device) {
    return e->handle == handle && e->stream == stream && (stream || e->device == device) &&
           e->grid[0] == g[0] && e->grid[1] == g[1] &&
           e->grid[2] == g[2] && e->block[0] == b[0] && e->block[1] == b[1] && e->block[2] == b[2] &&
           e->shared == shared;
}

/* Add or replace the entry for e's configuration (the oldest entry makes room when the table is full). */
int pyhip_fast_register(const pyhip_fast_entry* e) {
    if (e->nargs > PYHIP_FAST_MAX_ARGS || e->kernarg_size > PYHIP_FAST_MAX_KERNARG ||
        e->kernarg_size > e->slot_size || !pyhip_q_reserve)
        return 0;
    pthread_mutex_lock(&pyhip_fast_lock);
    int i;
    for (i = 0; i < pyhip_fast_count; ++i)
        if (pyhip_fast_same(&pyhip_fast_table[i], e->handle, e->stream, e->grid, e->block, e->shared, e->device))
            break;
    if (i == pyhip_fast_count) {
        if (pyhip_fast_count < PYHIP_FAST_MAX) pyhip_fast_count++;
        else { i = pyhip_fast_next; pyhip_fast_next = (pyhip_fast_next + 1) % PYHIP_FAST_MAX; }
    }
    pyhip_fast_table[i] = *e;
    pthread_mutex_unlock(&pyhip_fast_lock);
    return 1;
}

/* Drop every entry of `stream` (NULL: every entry).  Returns after no launch uses them any more. */
void pyhip_fast_invalidate(void* stream) {
    pthread_mutex_lock(&pyhip_fast_lock);
    int j = 0;
    for (int i = 0; i < pyhip_fast_count; ++i)
        if (stream && pyhip_fast_table[i].stream != stream) pyhip_fast_table[j++] = pyhip_fast_table[i];
    pyhip_fast_count = j;
    pyhip_fast_next = 0;
    pthread_mutex_unlock(&pyhip_fast_lock);
}

/* 1 = launched natively, 0 = not a known configuration (or the queue refused): take the Python path. */
static int pyhip_fast_launch(const void* handle, const uint32_t* g, const uint32_t* b, void** args,
                             uint64_t shared, void* stream) {
    int done = 0;
    pthread_mutex_lock(&pyhip_fast_lock);
    for (int i = 0; i < pyhip_fast_count; ++i) {
        pyhip_fast_entry* e = &pyhip_fast_table[i];
        if (!pyhip_fast_same(e, handle, stream, g, b, shared, pyhip_tls_device)) continue;
        for (uint32_t a = 0; a < e->nargs; ++a)
            if (!args || !args[a]) goto out;                  /* let Python report the bad argument */
        int64_t idx = pyhip_q_reserve(e->queue, -1);          /* waits while the queue is full */
        if (idx < 0) goto out;                                /* closed: Python reports it */
        uint8_t* ka = e->ring + ((uint64_t)idx & e->queue_mask) * e->slot_size;
        memcpy(ka, e->kernarg, e->kernarg_size);
        for (uint32_t a = 0; a < e->nargs; ++a) memcpy(ka + e->arg_offset[a], args[a], e->arg_size[a]);
        uint8_t pkt[64];
        memcpy(pkt, e->packet, 64);
        uint64_t kaddr = (uint64_t)(uintptr_t)ka;
        memcpy(pkt + 40, &kaddr, 8);
        pyhip_sig_add(e->counter, 1);
        ++*e->launches;
        pyhip_q_publish(e->queue, (uint64_t)idx, pkt);
        done = 1;
        break;
    }
out:
    pthread_mutex_unlock(&pyhip_fast_lock);
    return done;
}

int hipLaunchKernel(const void* function_address, dim3 numBlocks, dim3 dimBlocks, void** args,
                    size_t sharedMemBytes, void* stream) {
    uint32_t g[3] = {numBlocks.x, numBlocks.y, numBlocks.z}, b[3] = {dimBlocks.x, dimBlocks.y, dimBlocks.z};
    if (pyhip_fast_count && pyhip_fast_launch(function_address, g, b, args, sharedMemBytes, stream)) {
        __atomic_fetch_add(&pyhip_fast_hits, 1, __ATOMIC_RELAXED);
        pyhip_tls_last_error = 0;
        return 0;
    }
    __atomic_fetch_add(&pyhip_fast_misses, 1, __ATOMIC_RELAXED);
    return pyhip_slow_hipLaunchKernel(function_address, numBlocks, dimBlocks, args, sharedMemBytes, stream);
}

/* hip_impl::hipLaunchKernelGGLImpl(uintptr_t, const dim3&, const dim3&, uint32_t, hipStream_t, void**), the
 * entry point of old hipLaunchKernelGGL headers (references are pointers in the ABI).  As hipamd 5.2's
 * hip_platform.cpp: it returns void, `kernarg` is an `extra`-style config array ({HIP_LAUNCH_PARAM_BUFFER_POINTER,
 * packed arguments, HIP_LAUNCH_PARAM_BUFFER_SIZE, &size, HIP_LAUNCH_PARAM_END}) handed to hipModuleLaunchKernel,
 * and failures only show in the thread's last error (Python's pyhip_launch_config sets it). */
void _ZN8hip_impl22hipLaunchKernelGGLImplEmRK4dim3S2_jP12ihipStream_tPPv(uintptr_t function_address,
        const dim3* numBlocks, const dim3* dimBlocks, uint32_t sharedMemBytes, void* stream, void** kernarg) {
    if (!numBlocks || !dimBlocks) {                                   /* AMD's would crash */
        pyhip_tls_last_error = 1;                                     /* hipErrorInvalidValue */
        return;
    }
    pyhip_launch_config(function_address, numBlocks, dimBlocks, sharedMemBytes, stream, kernarg);
}

/* hip-clang's launch sequence: the call site pushes <<<grid, block, shared, stream>>>, the kernel's host
 * stub pops it and calls hipLaunchKernel.  A per-thread stack in C; a push that does not fit (nesting
 * deeper than any real program does) fails and leaves the stack as it was. */
#define PYHIP_CONFIG_DEPTH 64
typedef struct { dim3 grid, block; size_t shared; void* stream; } pyhip_call_config;
static __thread pyhip_call_config pyhip_config_stack[PYHIP_CONFIG_DEPTH];
static __thread int pyhip_config_depth;

int __hipPushCallConfiguration(dim3 gridDim, dim3 blockDim, size_t sharedMem, void* stream) {
    if (pyhip_config_depth >= PYHIP_CONFIG_DEPTH) return pyhip_tls_last_error = 9;   /* hipErrorInvalidConfiguration */
    pyhip_call_config* c = &pyhip_config_stack[pyhip_config_depth++];
    c->grid = gridDim;
    c->block = blockDim;
    c->shared = sharedMem;
    c->stream = stream;
    return pyhip_tls_last_error = 0;
}

int __hipPopCallConfiguration(dim3* gridDim, dim3* blockDim, size_t* sharedMem, void** stream) {
    if (pyhip_config_depth <= 0) return pyhip_tls_last_error = 52;                   /* hipErrorMissingConfiguration */
    pyhip_call_config* c = &pyhip_config_stack[--pyhip_config_depth];
    if (gridDim) *gridDim = c->grid;
    if (blockDim) *blockDim = c->block;
    if (sharedMem) *sharedMem = c->shared;
    if (stream) *stream = c->stream;
    return pyhip_tls_last_error = 0;
}

int pyhip_call_config_depth(void) { return pyhip_config_depth; }

/* The legacy launch API (hipConfigureCall ... hipLaunchByPtr) uses the same per-thread stack, as hipamd's
 * configureCall does: Python pushes and pops through these. */
int pyhip_call_config_push(const uint32_t* grid, const uint32_t* block, size_t shared, void* stream) {
    dim3 g = {grid[0], grid[1], grid[2]}, b = {block[0], block[1], block[2]};
    return __hipPushCallConfiguration(g, b, shared, stream);
}

int pyhip_call_config_pop(uint32_t* grid, uint32_t* block, size_t* shared, void** stream) {
    dim3 g, b;
    int e = __hipPopCallConfiguration(&g, &b, shared, stream);
    if (e == 0) {
        grid[0] = g.x; grid[1] = g.y; grid[2] = g.z;
        block[0] = b.x; block[1] = b.y; block[2] = b.z;
    }
    return e;
}

/* PYHIP_SHIM_STATS=1: how many launches took each path, printed when the program exits. */
__attribute__((destructor)) static void pyhip_fast_report(void) {
    const char* v = getenv("PYHIP_SHIM_STATS");
    if (v && *v && *v != '0')
        fprintf(stderr, "pyhip shim: %llu native launches, %llu through Python, %llu native synchronizes, "
                "%llu native copies and fills, %llu native event calls\n", (unsigned long long)pyhip_fast_hits,
                (unsigned long long)pyhip_fast_misses, (unsigned long long)pyhip_sync_hits,
                (unsigned long long)pyhip_copy_hits, (unsigned long long)pyhip_event_hits);
}

/* ---- synchronizing without Python ----------------------------------------------------------------------
 * After a synchronize went through Python and left a device idle with one stream granted native launches
 * (fastpath.py), Python *arms* the device: from then on, while nothing but native launches reached it, the
 * device's work is exactly what that stream's counter signal counts.  hipDeviceSynchronize (and
 * hipStreamSynchronize of that stream) then waits for the counter to reach 0 in C and returns.  Python
 * disarms the device whenever anything else happens on it (any command through Python, an error recorded,
 * the grant ending, a reset); a completion with an error anywhere moves the fault epoch, and a wait that
 * saw the epoch move (or the device disarmed meanwhile) goes to Python, which reports the fault. */
#define PYHIP_SYNC_DEVICES 64
typedef struct {
    void* counter;               /* NULL: not armed */
    void* stream;                /* the granted stream's handle (NULL: the null stream) */
    uint64_t epoch;              /* the fault epoch when armed */
    uint64_t generation;         /* bumped by every arm and disarm */
    void* queue;                 /* the granted stream's queue (NULL: no grant; events go to Python) */
    uint64_t* launches;          /* its count of native launches */
} pyhip_sync_state;

typedef int (*pyhip_sigwait_fn)(void*, int, int64_t, int64_t, int64_t, int64_t, int64_t*);
typedef uint64_t (*pyhip_epoch_fn)(void);
static pyhip_sync_state pyhip_sync[PYHIP_SYNC_DEVICES];
static pthread_mutex_t pyhip_sync_lock = PTHREAD_MUTEX_INITIALIZER;
static pyhip_sigwait_fn pyhip_sig_wait;
static pyhip_epoch_fn pyhip_fault_epoch_now;

void pyhip_sync_set_fns(void* sigwait, void* epoch) {
    pyhip_sig_wait = (pyhip_sigwait_fn)sigwait;
    pyhip_fault_epoch_now = (pyhip_epoch_fn)epoch;
}

/* counter NULL: disarm.  `epoch` is the fault epoch Python saw before it checked the device for errors.
 * `queue` / `launches`: the granted stream's (NULL: no grant).  Native event records, copies and fills publish
 * into that queue under pyhip_fast_lock, as native launches do: Python's invalidation (pyhip_fast_invalidate),
 * which follows every disarm that can precede the queue going away, waits for them. */
void pyhip_sync_arm(int device, void* stream, void* counter, uint64_t epoch, void* queue, uint64_t* launches) {
    if (device < 0 || device >= PYHIP_SYNC_DEVICES) return;
    pthread_mutex_lock(&pyhip_sync_lock);
    pyhip_sync_state* s = &pyhip_sync[device];
    s->counter = pyhip_sig_wait ? counter : NULL;
    s->stream = stream;
    s->epoch = epoch;
    s->queue = s->counter ? queue : NULL;
    s->launches = s->counter ? launches : NULL;
    __atomic_add_fetch(&s->generation, 1, __ATOMIC_SEQ_CST);
    pthread_mutex_unlock(&pyhip_sync_lock);
}

uint64_t pyhip_sync_hit_count(void) { return __atomic_load_n(&pyhip_sync_hits, __ATOMIC_RELAXED); }

/* 1 = the device's work is done and nothing failed; 0 = ask Python.  `stream_given`: only that stream's work
 * is asked for (it must be the granted stream). */
static int pyhip_sync_wait(int device, int stream_given, void* stream) {
    if (device < 0 || device >= PYHIP_SYNC_DEVICES || !pyhip_sig_wait) return 0;
    pthread_mutex_lock(&pyhip_sync_lock);
    pyhip_sync_state s = pyhip_sync[device];
    pthread_mutex_unlock(&pyhip_sync_lock);
    if (!s.counter || (stream_given && stream != s.stream)) return 0;
    int64_t seen = 0;
    int r;
    while ((r = pyhip_sig_wait(s.counter, 0 /* EQ */, 0, -1, 100000000LL, 20000LL, &seen)) == 0) {}
    if (r != 1) return 0;
    pthread_mutex_lock(&pyhip_sync_lock);
    int ok = pyhip_sync[device].generation == s.generation;
    pthread_mutex_unlock(&pyhip_sync_lock);
    return ok && pyhip_fault_epoch_now() == s.epoch;
}

static int pyhip_sync_native(int device, int stream_given, void* stream) {
    if (!pyhip_sync_wait(device, stream_given, stream)) return 0;
    __atomic_fetch_add(&pyhip_sync_hits, 1, __ATOMIC_RELAXED);
    return 1;
}

/* The device is armed and its work done (copies and fills below). */
static int pyhip_sync_wait_armed(int device) { return pyhip_sync_wait(device, 0, NULL); }

int hipDeviceSynchronize(void) {
    if (pyhip_sync_native(pyhip_tls_device, 0, NULL)) return pyhip_tls_last_error = 0;
    return pyhip_slow_hipDeviceSynchronize();
}

int hipStreamSynchronize(void* stream) {
    /* the null stream means the calling thread's current device; any other handle is checked by Python */
    if (!stream && pyhip_sync_native(pyhip_tls_device, 1, NULL)) return pyhip_tls_last_error = 0;
    if (stream) {
        for (int d = 0; d < PYHIP_SYNC_DEVICES; d++) {
            if (__atomic_load_n(&pyhip_sync[d].stream, __ATOMIC_RELAXED) != stream) continue;
            if (pyhip_sync_native(d, 1, stream)) return pyhip_tls_last_error = 0;
            break;
        }
    }
    return pyhip_slow_hipStreamSynchronize(stream);
}

