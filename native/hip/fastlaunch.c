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

/* ---- copies and fills without Python ----------------------------------------------------------------------
 * Python hands C each device's address range and, when its arena never moves, the table of its allocations
 * (start, end, host address), again after every change (pyhip/capi/fastpath.py).  A hipMemcpy / hipMemset of
 * the calling thread's device while it is armed waits like a synchronize (pyhip_sync_native), then copies or
 * fills here when every address is either inside one allocation of that device or outside every device's
 * range (plain or pinned host memory).  Anything else — another device's memory, a range that is not inside
 * one allocation, two host addresses (the kind rules), a device without a table, not armed — goes to Python,
 * which checks and reports as before. */
typedef struct { uint64_t start, end, host; } pyhip_mem_span;
typedef struct {
    uint64_t lo, hi;             /* the device's address range (hi == 0: unknown) */
    pyhip_mem_span* spans;       /* sorted by start; NULL: no table (every address in range goes to Python) */
    size_t n, cap;
} pyhip_mem_table;
static pyhip_mem_table pyhip_mem[PYHIP_SYNC_DEVICES];
static pthread_mutex_t pyhip_mem_lock = PTHREAD_MUTEX_INITIALIZER;

/* spans: n (start, end, host) triples, sorted by start; NULL: the device has no table. */
int pyhip_mem_set(int device, uint64_t lo, uint64_t hi, const uint64_t* spans, size_t n) {
    if (device < 0 || device >= PYHIP_SYNC_DEVICES) return 0;
    pyhip_mem_span* copy = NULL;
    if (spans && n) {
        copy = malloc(n * sizeof *copy);
        if (!copy) return 0;
        memcpy(copy, spans, n * sizeof *copy);
    }
    pthread_mutex_lock(&pyhip_mem_lock);
    pyhip_mem_table* t = &pyhip_mem[device];
    free(t->spans);
    t->lo = lo;
    t->hi = hi;
    t->spans = spans ? (copy ? copy : malloc(sizeof *copy)) : NULL;     /* an empty table is not "no table" */
    t->n = spans ? n : 0;
    t->cap = spans ? (n ? n : 1) : 0;
    pthread_mutex_unlock(&pyhip_mem_lock);
    return 1;
}

/* Under pyhip_mem_lock: the index of the first span starting at or above addr (a binary search). */
static size_t pyhip_mem_lower(const pyhip_mem_table* t, uint64_t addr) {
    size_t lo = 0, hi = t->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (t->spans[mid].start < addr) lo = mid + 1; else hi = mid;
    }
    return lo;
}

/* One allocation added to / removed from a device's table (pyhip/capi/fastpath.py: a table change of one entry).
 * 0: the device has no table, or no memory for it (the caller then publishes the whole table). */
int pyhip_mem_insert(int device, uint64_t start, uint64_t end, uint64_t host) {
    if (device < 0 || device >= PYHIP_SYNC_DEVICES) return 0;
    int ok = 0;
    pthread_mutex_lock(&pyhip_mem_lock);
    pyhip_mem_table* t = &pyhip_mem[device];
    if (t->spans) {
        if (t->n == t->cap) {
            pyhip_mem_span* grown = realloc(t->spans, 2 * t->cap * sizeof *grown);
            if (grown) t->spans = grown, t->cap *= 2;
        }
        if (t->n < t->cap) {
            size_t i = pyhip_mem_lower(t, start);
            memmove(&t->spans[i + 1], &t->spans[i], (t->n - i) * sizeof *t->spans);
            t->spans[i] = (pyhip_mem_span){start, end, host};
            t->n++;
            ok = 1;
        }
    }
    pthread_mutex_unlock(&pyhip_mem_lock);
    return ok;
}

int pyhip_mem_remove(int device, uint64_t start) {
    if (device < 0 || device >= PYHIP_SYNC_DEVICES) return 0;
    int ok = 0;
    pthread_mutex_lock(&pyhip_mem_lock);
    pyhip_mem_table* t = &pyhip_mem[device];
    if (t->spans) {
        size_t i = pyhip_mem_lower(t, start);
        if (i < t->n && t->spans[i].start == start) {
            memmove(&t->spans[i], &t->spans[i + 1], (t->n - i - 1) * sizeof *t->spans);
            t->n--;
        }
        ok = 1;                                           /* (not there: nothing to do) */
    }
    pthread_mutex_unlock(&pyhip_mem_lock);
    return ok;
}

uint64_t pyhip_copy_hit_count(void) { return __atomic_load_n(&pyhip_copy_hits, __ATOMIC_RELAXED); }

/* Under pyhip_mem_lock: 1 = inside one allocation of `device` (*host set); 0 = outside every device's range
 * (host memory: *host = addr); -1 = anything else. */
static int pyhip_mem_translate(int device, uint64_t addr, uint64_t n, uint64_t* host) {
    for (int d = 0; d < PYHIP_SYNC_DEVICES; d++) {
        const pyhip_mem_table* t = &pyhip_mem[d];
        if (!t->hi || addr < t->lo || addr >= t->hi) continue;
        if (d != device || !t->spans) return -1;
        size_t lo = 0, hi = t->n;                         /* the last span starting at or below addr */
        while (lo < hi) {
            size_t mid = (lo + hi) / 2;
            if (t->spans[mid].start <= addr) lo = mid + 1; else hi = mid;
        }
        if (lo == 0) return -1;
        const pyhip_mem_span* s = &t->spans[lo - 1];
        if (addr + n < addr || addr + n > s->end) return -1;
        *host = s->host + (addr - s->start);
        return 1;
    }
    *host = addr;
    return 0;
}

/* `fill`: 0 a copy of n bytes; 1, 2 or 4: a fill of n bytes with `value` in elements of that many bytes. */
static void pyhip_fill_elements(uint8_t* d, size_t n, int width, uint32_t value) {
    if (width == 1) { memset(d, (int)(value & 0xFF), n); return; }
    for (size_t i = 0; i < n; i += (size_t)width) memcpy(d + i, &value, (size_t)width);     /* little-endian */
}

static int pyhip_copy_native(int device, void* dst, const void* src, size_t n, int fill, uint32_t value) {
    if (!n || !dst || (!fill && !src) || device < 0 || device >= PYHIP_SYNC_DEVICES) return 0;
    if (!__atomic_load_n(&pyhip_mem[device].hi, __ATOMIC_RELAXED)) return 0;
    if (!pyhip_sync_wait_armed(device)) return 0;
    uint64_t hd, hs = 0;
    pthread_mutex_lock(&pyhip_mem_lock);
    int kd = pyhip_mem_translate(device, (uint64_t)(uintptr_t)dst, n, &hd);
    int ks = fill ? 1 : pyhip_mem_translate(device, (uint64_t)(uintptr_t)src, n, &hs);
    int ok = kd >= 0 && ks >= 0 && (fill ? kd == 1 : (kd == 1 || ks == 1));
    if (ok) {
        if (fill) pyhip_fill_elements((uint8_t*)(uintptr_t)hd, n, fill, value);
        else memmove((void*)(uintptr_t)hd, (const void*)(uintptr_t)hs, n);
    }
    pthread_mutex_unlock(&pyhip_mem_lock);       /* held while copying: a table change waits for it */
    if (ok) __atomic_fetch_add(&pyhip_copy_hits, 1, __ATOMIC_RELAXED);
    return ok;
}

int hipMemcpy(void* dst, const void* src, size_t sizeBytes, int kind) {
    if (kind >= 0 && kind <= 4 && pyhip_copy_native(pyhip_tls_device, dst, src, sizeBytes, 0, 0))
        return pyhip_tls_last_error = 0;
    return pyhip_slow_hipMemcpy(dst, src, sizeBytes, kind);
}

int hipMemset(void* dst, int value, size_t sizeBytes) {
    if (pyhip_copy_native(pyhip_tls_device, dst, NULL, sizeBytes, 1, value & 0xFF)) return pyhip_tls_last_error = 0;
    return pyhip_slow_hipMemset(dst, value, sizeBytes);
}

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

/* ---- asynchronous copies and fills without Python -----------------------------------------------------------
 * hipMemcpyAsync / hipMemsetAsync on the granted stream of an armed device (or the null stream of the thread's
 * armed device), for ranges inside one allocation of that device: a device-to-device copy or a fill is an agent
 * packet in that stream's queue (AGENT_COPY / AGENT_FILL, the processor's native copies and fills; barrier bit:
 * after every earlier launch), counted on the stream's counter like a native launch.  A copy with host memory on
 * one side is done at once after the device's work (pyhip_copy_native), as Python does it (pageable memory:
 * the caller may reuse the buffer when the call returns).  Anything else goes to Python. */
#define PYHIP_AGENT_HEADER (4u | 1u << 8 | 2u << 9 | 2u << 11)     /* agent dispatch, barrier, system fences */

/* The device whose armed, granted stream `stream` is (NULL: the thread's device), or -1. */
static int pyhip_armed_device_of(void* stream) {
    if (!stream) return pyhip_tls_device >= 0 && pyhip_tls_device < PYHIP_SYNC_DEVICES ? pyhip_tls_device : -1;
    for (int d = 0; d < PYHIP_SYNC_DEVICES; d++)
        if (__atomic_load_n(&pyhip_sync[d].stream, __ATOMIC_RELAXED) == stream) return d;
    return -1;
}

/* Publish agent packet `type` (args a0..a3) on device d's granted stream `stream`, counted on its counter.
 * 1: published; 0: not armed with that grant (the caller decides). */
static int pyhip_async_publish(int d, void* stream, uint16_t type, uint64_t a0, uint64_t a1, uint64_t a2, uint64_t a3) {
    int done = 0;
    pthread_mutex_lock(&pyhip_fast_lock);       /* as a native launch: pyhip_fast_invalidate waits for it */
    pthread_mutex_lock(&pyhip_sync_lock);
    pyhip_sync_state s = pyhip_sync[d];
    pthread_mutex_unlock(&pyhip_sync_lock);
    if (s.counter && s.queue && s.stream == stream) {
        int64_t idx = pyhip_q_reserve(s.queue, -1);
        if (idx >= 0) {
            uint8_t pkt[64] = {0};
            uint16_t h = PYHIP_AGENT_HEADER;
            uint64_t args[4] = {a0, a1, a2, a3}, sig = (uint64_t)(uintptr_t)s.counter;
            memcpy(pkt, &h, 2);
            memcpy(pkt + 2, &type, 2);
            memcpy(pkt + 16, args, 32);
            memcpy(pkt + 56, &sig, 8);
            pyhip_sig_add(s.counter, 1);
            __atomic_fetch_add(s.launches, 1, __ATOMIC_RELAXED);
            pyhip_q_publish(s.queue, (uint64_t)idx, pkt);
            done = 1;
        }
    }
    pthread_mutex_unlock(&pyhip_fast_lock);
    return done;
}

/* 1: done or queued natively; 0: Python. */
static int pyhip_async_native(void* stream, void* dst, const void* src, size_t n, int fill, uint32_t value) {
    int d = pyhip_armed_device_of(stream);
    if (d < 0 || !n || !dst || (!fill && !src) || !__atomic_load_n(&pyhip_mem[d].hi, __ATOMIC_RELAXED)) return 0;
    pthread_mutex_lock(&pyhip_sync_lock);
    pyhip_sync_state s = pyhip_sync[d];
    pthread_mutex_unlock(&pyhip_sync_lock);
    if (!s.counter || s.stream != stream) return 0;
    uint64_t hd, hs = 0;
    pthread_mutex_lock(&pyhip_mem_lock);
    int kd = pyhip_mem_translate(d, (uint64_t)(uintptr_t)dst, n, &hd);
    int ks = fill ? 1 : pyhip_mem_translate(d, (uint64_t)(uintptr_t)src, n, &hs);
    pthread_mutex_unlock(&pyhip_mem_lock);
    if (kd == 1 && ks == 1 && s.queue) {          /* device memory only: in stream order, asynchronously */
        int ok = fill ? pyhip_async_publish(d, stream, 0x8002, (uint64_t)(uintptr_t)dst, value, n / (size_t)fill,
                                            (uint64_t)fill)
                      : pyhip_async_publish(d, stream, 0x8001, (uint64_t)(uintptr_t)dst, (uint64_t)(uintptr_t)src, n, 0);
        if (ok) __atomic_fetch_add(&pyhip_copy_hits, 1, __ATOMIC_RELAXED);
        return ok;
    }
    return pyhip_copy_native(d, dst, src, n, fill, value);     /* host memory on one side: at once, after the work */
}

int hipMemcpyAsync(void* dst, const void* src, size_t sizeBytes, int kind, void* stream) {
    if (kind >= 0 && kind <= 4 && pyhip_async_native(stream, dst, src, sizeBytes, 0, 0)) return pyhip_tls_last_error = 0;
    return pyhip_slow_hipMemcpyAsync(dst, src, sizeBytes, kind, stream);
}

int hipMemsetAsync(void* dst, int value, size_t sizeBytes, void* stream) {
    if (pyhip_async_native(stream, dst, NULL, sizeBytes, 1, value & 0xFF)) return pyhip_tls_last_error = 0;
    return pyhip_slow_hipMemsetAsync(dst, value, sizeBytes, stream);
}

/* hipMemsetD8/D16/D32 (+Async): fills of `count` elements, as hipMemset / hipMemsetAsync do them (a count whose
 * byte size overflows goes to Python, which reports it). */
#define PYHIP_MEMSET_D(bits, vtype)                                                                                \
    int hipMemsetD##bits(void* dst, vtype value, size_t count) {                                                   \
        if (count <= SIZE_MAX / (bits / 8) &&                                                                      \
            pyhip_copy_native(pyhip_tls_device, dst, NULL, count * (bits / 8), bits / 8, (uint32_t)value))         \
            return pyhip_tls_last_error = 0;                                                                       \
        return pyhip_slow_hipMemsetD##bits(dst, value, count);                                                     \
    }                                                                                                              \
    int hipMemsetD##bits##Async(void* dst, vtype value, size_t count, void* stream) {                              \
        if (count <= SIZE_MAX / (bits / 8) &&                                                                      \
            pyhip_async_native(stream, dst, NULL, count * (bits / 8), bits / 8, (uint32_t)value))                  \
            return pyhip_tls_last_error = 0;                                                                       \
        return pyhip_slow_hipMemsetD##bits##Async(dst, value, count, stream);                                      \
    }
PYHIP_MEMSET_D(8, unsigned char)
PYHIP_MEMSET_D(16, unsigned short)
PYHIP_MEMSET_D(32, int)
