"""cffi (API mode) build of ``pyhip._native_engine`` from native/engine/ (the native execution engine).

Used by setup.py (``cffi_modules``, so ``pip install .`` compiles it once, at install time) and, in a source
checkout that was never built, by pyhip/emu/native/__init__.py on first use.  ``python native/build_engine.py``
builds it in place.  The structs are declared with ``...;`` so cffi takes their layout from the C compiler:
the Python side builds its numpy record types from ``ffi.offsetof``, one layout for both."""
from pathlib import Path

import cffi

HERE = Path(__file__).resolve().parent
SRC = HERE / "engine"

CDEF = """
typedef struct NInst {
    uint16_t op; uint16_t flags; uint32_t pc; int32_t next; int32_t target; uint16_t d; uint16_t sd;
    uint16_t s[3]; uint8_t size; uint8_t x; uint32_t k[3]; uint32_t khi[3]; int32_t imm; uint32_t a0; ...;
} NInst;
typedef struct Region { uint64_t start; uint64_t end; uint8_t* host; } Region;
typedef struct WaveDump { uint64_t pc; uint64_t exec; uint32_t s[4]; uint32_t v0; uint32_t v1; int32_t wave;
                          int32_t ip; uint32_t wg[3]; ...; } WaveDump;
typedef struct Fault {
    int32_t kind; int32_t ip; int32_t wave; int32_t lane; uint32_t wg[3]; int32_t size; uint64_t address;
    int64_t arg; int32_t has_address; int32_t ndump; WaveDump dump[8]; ...;
} Fault;
typedef struct Dispatch {
    const NInst* code; const int32_t* addr_index; const int32_t* aux; uint64_t code_base; uint64_t code_size;
    int32_t ncode; int32_t entry; uint32_t grid[3]; uint32_t wg[3]; uint32_t counts[3]; int32_t waves_per_group;
    int32_t nvgpr; uint32_t lds_size; uint32_t lds_alloc; uint32_t lds_granule; uint32_t private_size; uint32_t sgpr_init[128]; int32_t wgid_sgpr[3];
    int32_t wginfo_sgpr; int32_t vgpr_ids; int32_t wid; uint32_t mode; int32_t is_gfx94x;
    uint32_t private_vsharp_base; const Region* regions; int32_t nregions; int32_t lockstep; int32_t capture;
    int32_t nthreads; int64_t max_steps; int64_t batch_groups; uint8_t* capture_buf; int64_t capture_stride;
    int64_t wave_instructions; int64_t steps; int32_t failed; Fault fault; void* jit_fn; int32_t lanes; const uint8_t* race_pc; ...;
} Dispatch;
typedef struct Group { uint8_t* lds; ...; } Group;
typedef struct Wave {
    uint32_t s[128]; uint32_t* v; uint8_t* priv; uint32_t priv_hw; uint32_t scc; uint32_t mode; uint32_t trap_sts;
    int32_t ip; int32_t state; int32_t wave; int64_t count; Group* g; uint64_t lane_mask; int32_t mm_pending; ...;
} Wave;
typedef struct Ctx { Dispatch* d; int64_t jit_limit; int32_t cur_ip; ...; } Ctx;
int pyhip_jit_step(Ctx* c, Wave* w, int32_t ip);
uint8_t* pyhip_jit_xlate(Ctx* c, int32_t ip, uint64_t a, uint32_t size);
int pyhip_jit_fault(Ctx* c, Wave* w, int32_t ip, int32_t kind, uint64_t address, int32_t has_address);
int pyhip_llvm_enter(void);
void pyhip_llvm_leave(void);
void pyhip_llvm_after_fork(void);

int pyhip_engine_abi(void);
int pyhip_engine_op_count(void);
const char* pyhip_engine_op_name(int i);
int pyhip_engine_run(Dispatch* d);
int pyhip_engine_threads(void);
void pyhip_engine_set_threads(int n);
void pyhip_engine_set_fp8(const double* fp8, const double* bf8);

typedef struct Agent Agent;
typedef struct AgentQueue {
    Agent* agent; uint8_t* mirror_host; uint64_t mirror_dev; const uint8_t* amd_queue;
    Dispatch fault; int32_t foreign; uint32_t lds_bytes; uint8_t* ring; uint64_t ring_slots;
    const uint64_t* doorbell; uint64_t* read_ptr; const uint32_t* stop; const uint32_t* paused; uint64_t processed;
    ...;
} AgentQueue;
Agent* pyhip_agent_new(void);
void pyhip_agent_free(Agent* a);
int pyhip_agent_add_kernel(Agent* a, uint64_t kobj, const Dispatch* t, uint32_t kernarg_size, uint32_t private_fixed,
                           uint32_t private_extra, int trivial, int nslots, const int32_t* kind, const int32_t* first,
                           const int32_t* count);
int pyhip_agent_remove_kernel(Agent* a, uint64_t kobj);
int pyhip_agent_has_kernel(Agent* a, uint64_t kobj);
void pyhip_agent_clear(Agent* a);
int pyhip_agent_set_regions(Agent* a, const Region* r, int32_t n);
int pyhip_agent_change_region(Agent* a, int32_t add, int32_t i, int32_t n, uint64_t start, uint64_t end,
                              uint64_t host);
int32_t pyhip_agent_regions(Agent* a, Region* out, int32_t cap);
void pyhip_agent_set_max_steps(Agent* a, int64_t steps);
int pyhip_agent_quiescent(Agent* a);
void pyhip_agent_counts(Agent* a, uint64_t* out3);
int pyhip_agent_dispatch(void* ctx, const uint8_t* pkt, uint64_t index);
void* pyhip_agent_dispatch_fn(void);
void pyhip_agent_set_kfd_fns(void* interrupt, void* clock);
int64_t pyhip_agent_cp_process(AgentQueue* q, int64_t timeout_ns, int32_t* status);
"""



def source_hash() -> str:
    """The digest a build records (engine_source.py: computed without cffi)."""
    import sys
    sys.path.insert(0, str(HERE))
    try:
        from engine_source import source_hash as digest
    finally:
        sys.path.pop(0)
    return digest()


# -ffp-contract=off: a*b+c must round twice where the ISA (and the numpy reference) rounds twice
FLAGS = ["-O3", "-std=gnu11", "-ffp-contract=off", "-fno-trapping-math", "-fno-strict-aliasing", "-Wno-unused-function",
         "-Wno-misleading-indentation"]
# the x86-64-v3 build (AVX2, FMA, BMI2): 8 lanes per vector operation; chosen at import when the CPU has them
VARIANTS = {"": [], "_v3": ["-march=x86-64-v3", "-mtune=generic"]}


def builder(variant: str = "") -> cffi.FFI:
    ffi = cffi.FFI()
    ffi.cdef(CDEF)
    ffi.set_source(f"pyhip._native_engine{variant}", '#include "engine.c"', include_dirs=[str(SRC)],
                   depends=sorted(str(p) for p in SRC.iterdir()), extra_compile_args=FLAGS + VARIANTS[variant],
                   libraries=["m", "pthread"])
    return ffi


def cpu_variant() -> str:
    """The best variant this machine runs ("_v3" needs avx2, fma, bmi2; Linux /proc/cpuinfo)."""
    import platform
    if platform.machine() not in ("x86_64", "AMD64"):
        return ""
    try:
        flags = next((ln.split(":", 1)[1].split() for ln in open("/proc/cpuinfo") if ln.startswith("flags")), [])
    except OSError:
        return ""
    return "_v3" if {"avx2", "fma", "bmi2"} <= set(flags) else ""


ffibuilder = builder("")              # setup.py builds both; either alone is a complete engine
ffibuilder_v3 = builder("_v3")

if __name__ == "__main__":
    builder(cpu_variant()).compile(tmpdir=str(HERE.parent), verbose=True)
