/* The drop-in libamdhip64's copies and fills without Python (compiled into the cffi embedding shim after
 * fastlaunch.c, in one translation unit: build_shim.py concatenates them; the counters live there). */

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

