/* Atomics for pyhip's AQL core: acquire/release loads and stores, fetch-add and compare-exchange on
 * memory shared by producer threads and the packet processor (queue indices, packet headers, signal
 * values), plus 64-byte aligned allocation for rings, queues and signals. Built with cffi (API mode). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void* pyhip_alloc64(size_t size) {
    void* p = NULL;
    if (posix_memalign(&p, 64, size ? size : 64) != 0) return NULL;
    memset(p, 0, size ? size : 64);
    return p;
}
void pyhip_free(void* p) { free(p); }

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

/* Write a packet body (bytes 4..63) then publish header+setup with one 32-bit release store. */
void pyhip_publish_packet(uint8_t* slot, const uint8_t* packet64) {
    memcpy(slot + 4, packet64 + 4, 60);
    uint32_t hs;
    memcpy(&hs, packet64, 4);
    __atomic_store_n((uint32_t*)slot, hs, __ATOMIC_RELEASE);
}
/* Consumer: copy a published packet out (after an acquire load of its header). */
uint32_t pyhip_take_packet(const uint8_t* slot, uint8_t* out64) {
    uint32_t hs = __atomic_load_n((const uint32_t*)slot, __ATOMIC_ACQUIRE);
    memcpy(out64, &hs, 4);
    memcpy(out64 + 4, slot + 4, 60);
    return hs;
}

/* Doorbell ring from several producers: the value only ever grows. */
void pyhip_store_max_i64(int64_t* p, int64_t v) {
    int64_t cur = __atomic_load_n(p, __ATOMIC_ACQUIRE);
    while (cur < v && !__atomic_compare_exchange_n(p, &cur, v, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {}
}
