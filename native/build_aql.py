"""cffi (API mode) build of ``pyhip._native_aql`` from native/aql_atomics.c, native/aql_processor.c and native/aql_launch.c.

Used by setup.py (``cffi_modules=["native/build_aql.py:ffibuilder"]``, so ``pip install -e .`` builds it)
and, when the package was not built (a bare source checkout), by pyhip/aql/native.py on first import.
``python native/build_aql.py`` builds it in place."""
from pathlib import Path

import cffi

HERE = Path(__file__).resolve().parent
CDEF = """
int64_t pyhip_now_ns(void);
void* pyhip_alloc64(size_t size);
void pyhip_free(void* p);
void pyhip_copy_bytes(void* dst, const void* src, size_t n);
void pyhip_fill_bytes(void* dst, uint64_t value, size_t count, int width);

uint64_t pyhip_load_acquire_u64(const uint64_t* p);
void pyhip_store_release_u64(uint64_t* p, uint64_t v);
uint64_t pyhip_fetch_add_u64(uint64_t* p, uint64_t v);
int pyhip_cas_u64(uint64_t* p, uint64_t expected, uint64_t desired);
int64_t pyhip_load_acquire_i64(const int64_t* p);
void pyhip_store_release_i64(int64_t* p, int64_t v);
int64_t pyhip_add_fetch_i64(int64_t* p, int64_t v);
uint32_t pyhip_load_acquire_u32(const uint32_t* p);
void pyhip_store_release_u32(uint32_t* p, uint32_t v);
uint16_t pyhip_load_acquire_u16(const uint16_t* p);

void pyhip_signal_notify(void* sig);
int64_t pyhip_signal_load(void* sig);
void pyhip_signal_store(void* sig, int64_t v);
int64_t pyhip_signal_add(void* sig, int64_t delta);
int64_t pyhip_signal_exchange(void* sig, int64_t v);
int64_t pyhip_signal_cas(void* sig, int64_t expected, int64_t desired);
void pyhip_signal_store_max(void* sig, int64_t v);
int pyhip_signal_wait(void* sig, int cond, int64_t cmp, int64_t mask, int64_t timeout_ns, int64_t spin_ns,
                      int64_t* out);
int pyhip_signal_wait_multi(void* const* sigs, int n, int all, int64_t timeout_ns, int64_t spin_ns);
void pyhip_signal_set_start(void* sig);
int64_t pyhip_signal_complete(void* sig, uint32_t error_code);
uint64_t pyhip_fault_epoch(void);
int pyhip_armed_wait(void* counter, uint64_t epoch, int64_t timeout_ns, int64_t spin_ns);

int64_t pyhip_queue_reserve(void* q, int64_t timeout_ns);
void pyhip_queue_publish(void* q, uint64_t index, const uint8_t* packet64);
int pyhip_queue_wait_packet(void* q, uint64_t index, uint8_t* out64, int64_t timeout_ns, int64_t spin_ns);
void pyhip_queue_retire(void* q, uint64_t index);
void pyhip_queue_close(void* q);
void pyhip_queue_kick(void* q);

int pyhip_raw_wait_value(const int64_t* value, int cond, int64_t cmp, int64_t mask, int64_t timeout_ns);
int pyhip_raw_wait_multi(int64_t* const* values, int n, int all, int64_t timeout_ns);
int pyhip_cp_wait_packet(const uint16_t* header, const uint64_t* doorbell, uint64_t index, const uint32_t* stop,
                         int64_t timeout_ns);
void pyhip_store_release_u16(uint16_t* p, uint16_t v);
int64_t pyhip_foreign_submit(void* q, const uint8_t* packet64, void* doorbell_fn, int64_t timeout_ns);
void pyhip_foreign_set_doorbell(void* fn);
int64_t pyhip_foreign_reserve(void* q, int64_t timeout_ns);
void pyhip_foreign_publish(void* q, uint64_t index, const uint8_t* packet64);
int64_t pyhip_raw_signal_add(void* sig, int64_t delta);

typedef struct {
    uint16_t offset;
    uint16_t size;
    uint8_t code;
    uint8_t read;
    uint8_t read_size;
    void* type;
    void* conv;
} pyhip_launch_arg;
typedef struct {
    uint32_t nargs;
    uint32_t kernarg_size;
    uint32_t explicit_size;
    pyhip_launch_arg arg[64];
    uint8_t kernarg[2048];
    uint8_t packet[64];
    void* queue;
    uint8_t* ring;
    uint64_t slot_size;
    uint64_t queue_mask;
    void* counter;
    uint64_t* launches;
    uint64_t hits;
    uint64_t* generation_word;
    uint64_t generation;
    uint32_t foreign;
    int32_t device;
    uint32_t kind;
    uint32_t whole;
    void* tls;
    uint32_t has_conv;
} pyhip_launch_entry;
int pyhip_launch_publish(pyhip_launch_entry* e, const uint8_t* args, uint32_t nbytes);
int pyhip_launch_publish_config(pyhip_launch_entry* e, const void* const* cfg, int whole);
void pyhip_launch_quiesce(uint64_t* word, uint64_t generation);
void* pyhip_launch_functions(void);

int pyhip_signal_register(void* sig);
void pyhip_signal_free(void* sig);
int pyhip_signal_live(uint64_t handle);
int64_t pyhip_queue_process(void* q, void* agent_fn, void* agent_ctx, int64_t max, int64_t timeout_ns,
                            int64_t spin_ns, const uint32_t* stop, int32_t* status, uint64_t* counters);
"""

ffibuilder = cffi.FFI()
ffibuilder.cdef(CDEF)
SOURCES = ("aql_atomics.c", "aql_processor.c", "aql_launch.c")
ffibuilder.set_source("pyhip._native_aql", "".join(f'#include "{f}"\n' for f in SOURCES),
                      include_dirs=[str(HERE)], depends=[str(HERE / f) for f in SOURCES],
                      extra_compile_args=["-O2", "-std=gnu11"], libraries=["pthread"],
                      # the full C API: aql_launch.c reads ctypes values through the buffer protocol
                      define_macros=[("_CFFI_NO_LIMITED_API", None)])

if __name__ == "__main__":
    ffibuilder.compile(tmpdir=str(HERE.parent), verbose=True)
