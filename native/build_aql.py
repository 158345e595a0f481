"""cffi (API mode) build of pyhip._native_aql from native/aql_atomics.c.  Used by setup.py
(``cffi_modules``) and, when the package was not built (e.g. a source checkout), on first import."""
from pathlib import Path

import cffi

HERE = Path(__file__).resolve().parent
CDEF = """
void* pyhip_alloc64(size_t size);
void pyhip_free(void* p);
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
void pyhip_publish_packet(uint8_t* slot, const uint8_t* packet64);
uint32_t pyhip_take_packet(const uint8_t* slot, uint8_t* out64);
void pyhip_store_max_i64(int64_t* p, int64_t v);
"""

ffibuilder = cffi.FFI()
ffibuilder.cdef(CDEF)
ffibuilder.set_source("pyhip._native_aql", (HERE / "aql_atomics.c").read_text(),
                      extra_compile_args=["-O2", "-std=gnu11"])

if __name__ == "__main__":
    ffibuilder.compile(verbose=True)
