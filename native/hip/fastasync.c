/* The drop-in libamdhip64's asynchronous copies and fills without Python (one translation unit with
 * fastlaunch.c, fastcopy.c and fastevents.c: build_shim.py concatenates them in that order). */

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
