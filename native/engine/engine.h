/* pyhip native execution engine: shared definitions.
 *
 * A kernel's code is lowered once by Python (pyhip/emu/native/lower.py) into an array of NInst, one per
 * decoded instruction, in address order.  The compiled engine (pyhip/emu/jit) runs one wave at a time and
 * calls the handlers here (interp.h: step, pyhip_jit_step) for the instructions without a description
 * (memory, LDS, MFMA, control and system instructions; every ALU instruction has the record "described"
 * and no handler): 64 lanes as arrays of 64 32-bit words per VGPR, EXEC as a uint64 mask.  Waves of a
 * workgroup share one LDS buffer and run on one thread; workgroups are spread over a pool of threads.
 *
 * What the handlers compute mirrors the numpy reference engine (pyhip/emu/semantics) operation for
 * operation; tests/emu/test_native_diff.py holds the two together bit for bit.
 */
#ifndef PYHIP_ENGINE_H
#define PYHIP_ENGINE_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define LANES 64
#define NSGPR 128
#define VCC 106
#define M0 124
#define EXEC 126
#define FLAT_SCR 102

#define SHARED_APERTURE 0x0001000000000000ull
#define PRIVATE_APERTURE 0x0002000000000000ull
#define APERTURE_SIZE 0x100000000ull

#define LIKELY(x) __builtin_expect(!!(x), 1)
#define UNLIKELY(x) __builtin_expect(!!(x), 0)
#define INLINE static inline __attribute__((always_inline))
#define ALIGN64 __attribute__((aligned(64)))

/* ---- source operand descriptors (NInst.s[i]) ---------------------------------------------------------- */
#define SRC_V 0x0000      /* | VGPR row (AGPRs included, 0..1023) */
#define SRC_S 0x4000      /* | SGPR (0..127) */
#define SRC_K 0x8000      /* constant: NInst.k[i] (low) / NInst.khi[i] (high word of a 64-bit constant) */
#define SRC_SCC 0x8001
#define SRC_VCCZ 0x8002
#define SRC_EXECZ 0x8003
#define SRC_KIND(s) ((s) & 0xC000)
#define SRC_IDX(s) ((s) & 0x3FFF)

/* ---- NInst.flags ------------------------------------------------------------------------------------- */
#define F_BLOCK_END 1      /* the numpy engine ends a straight-line block after this instruction */
#define F_GLC 4            /* returning atomic / glc */

/* One lowered instruction (60 bytes).  Python builds these with a matching numpy dtype (checked at import
 * against pyhip_engine_layout()). */
typedef struct NInst {
    uint16_t op;          /* handler (enum Op) */
    uint16_t flags;
    uint32_t pc;          /* byte offset of the instruction from the start of the code */
    int32_t next;         /* instruction index at pc + size (-1: not an instruction) */
    int32_t target;       /* branch target index (-1: none / not an instruction) */
    uint16_t d;           /* destination: VGPR row, SGPR, or data register */
    uint16_t sd;          /* second destination (SDST / carry out / VCC) */
    uint16_t s[3];        /* source descriptors */
    uint8_t size;         /* bytes */
    uint8_t x;            /* small per-op parameter */
    uint32_t k[3];        /* constant low words */
    uint32_t khi[3];      /* constant high words */
    int32_t imm;          /* offset / simm16 / literal */
    uint32_t a0;          /* op-specific */
} NInst;

/* ---- memory ------------------------------------------------------------------------------------------ */
typedef struct Region {
    uint64_t start, end;  /* [start, end) device addresses */
    uint8_t* host;        /* host address of start */
} Region;

/* ---- faults (turned into GPUFault by pyhip/emu/native/engine.py) ------------------------------------ */
enum FaultKind {
    FK_NONE = 0, FK_MEM, FK_LDS_DS, FK_LDS_RANGE, FK_SCRATCH, FK_LDS_ATOMIC, FK_LDS_ATOMIC_ALIGN, FK_ATOMIC_ALIGN,
    FK_SATOMIC_ALIGN, FK_JUMP, FK_WATCHDOG, FK_TRAP, FK_MIXED_PRIVATE, FK_UNSUPPORTED, FK_BUF_FORMAT,
    FK_INTERNAL, FK_VGPR_INDEX, FK_IMAGE
};

typedef struct WaveDump {
    uint64_t pc, exec;
    uint32_t s[4];
    uint32_t v0, v1;
    int32_t wave, ip;
    uint32_t wg[3];
    uint32_t pad;
} WaveDump;

typedef struct Fault {
    int32_t kind;
    int32_t ip;           /* instruction index */
    int32_t wave;         /* wave in its workgroup */
    int32_t lane;         /* -1: not located */
    uint32_t wg[3];
    int32_t size;         /* access size in bytes */
    uint64_t address;
    int64_t arg;          /* LDS size, scratch size, ... */
    int32_t has_address;
    int32_t ndump;
    WaveDump dump[8];
} Fault;

/* ---- a dispatch, as Python describes it ------------------------------------------------------------- */
typedef struct Dispatch {
    const NInst* code;
    const int32_t* addr_index;   /* (address - code_base) / 4 -> instruction index, -1 */
    const int32_t* aux;          /* per-program tables (MFMA layouts) */
    uint64_t code_base;          /* absolute address of code[...].pc == 0 */
    uint64_t code_size;
    int32_t ncode;
    int32_t entry;               /* first instruction index */
    uint32_t grid[3], wg[3], counts[3];
    int32_t waves_per_group;
    int32_t nvgpr;               /* VGPR rows per wave (arch + AGPRs + 8, as the numpy engine allocates) */
    uint32_t lds_size;           /* the group segment, bytes (memcheck's bound: accesses past it are recorded) */
    uint32_t lds_alloc;          /* the LDS the hardware allocates it (rounded up to lds_granule; the buffer at
                                  * least 4): an access beyond reads 0 / is dropped, no fault (lds_lanes) */
    uint32_t lds_granule;        /* the target's LDS allocation unit (pyhip/emu/engine.py lds_granule) */
    uint32_t private_size;       /* bytes per lane */
    uint32_t sgpr_init[NSGPR];   /* SGPRs common to every wave (user SGPRs) */
    int32_t wgid_sgpr[3];        /* SGPR of workgroup id x/y/z, or -1 */
    int32_t wginfo_sgpr;         /* SGPR of workgroup info, or -1 */
    int32_t vgpr_ids;            /* 0: v0=x, v1=y, v2=z (up to wid); 1: packed x | y << 10 | z << 20 */
    int32_t wid;                 /* enable_vgpr_workitem_id */
    uint32_t mode;               /* initial MODE register */
    int32_t is_gfx94x;
    uint32_t private_vsharp_base;
    const Region* regions;
    int32_t nregions;
    int32_t lockstep;            /* 1: schedule exactly like the numpy engine (tests) */
    int32_t capture;             /* 1: record every wave's final registers into capture_buf */
    int32_t nthreads;            /* 0: the pool's size */
    int64_t max_steps;
    int64_t batch_groups;        /* lockstep: workgroups per batch (as the numpy engine batches) */
    uint8_t* capture_buf;        /* per wave: NSGPR words, scc, mode, pc (u64), then nvgpr*64 words */
    int64_t capture_stride;
    /* results */
    int64_t wave_instructions;
    int64_t steps;
    int32_t failed;
    int32_t pad;
    Fault fault;
    /* internal */
    int64_t next_group;
    int64_t total_groups;
    int32_t abort_flag;
    int32_t pad2;
    uint8_t* pattern;            /* per wave of a whole workgroup: EXEC (8 bytes), then v0, v1, v2 */
    void* jit_fn;                /* the kernel compiled by pyhip/emu/jit (int fn(Wave*, Ctx*)), or NULL */
    int32_t lanes;               /* the wave size: 64, or 32 (RDNA wave32: lanes 32-63 never active) */
    const uint8_t* race_pc;      /* racecheck (race.h): per instruction RC_* flags, NULL: off */
} Dispatch;

#define PATTERN_STRIDE (8 + 3 * LANES * 4)

/* ---- per-wave and per-workgroup state --------------------------------------------------------------- */
struct Group;
typedef struct Wave {
    uint32_t s[NSGPR];
    uint32_t* v;             /* nvgpr rows of 64 lanes */
    uint8_t* priv;           /* 64 lanes x private_size, lanes interleaved in 16-byte chunks (private_mem.h priv_ptr), or NULL */
    uint32_t priv_hw;        /* bytes of each lane's private area that may be non-zero */
    uint32_t scc;
    uint32_t mode;
    uint32_t trap_sts;
    int32_t ip;
    int32_t state;           /* WS_RUN, WS_BARRIER, WS_DONE */
    int32_t wave;            /* wave in its workgroup */
    int32_t pad;
    int64_t count;           /* instructions executed */
    struct Group* g;
    uint64_t lane_mask;      /* the lanes of the wave size (EXEC_HI is not part of EXEC in wave32) */
    int32_t mm_pending;      /* the wave stored to memory since its last s_waitcnt's full fence (state.h) */
} Wave;

enum { WS_RUN = 0, WS_BARRIER = 1, WS_DONE = 2 };

typedef struct Group {
    uint32_t id[3];
    int64_t flat;
    uint8_t* lds;
    Wave* w;
    int nw;
} Group;

/* Execution context: one per thread per dispatch. */
typedef struct Ctx {
    Dispatch* d;
    const NInst* code;
    const Region* last;      /* the region of the last global access (when rcache is NULL) */
    const Region** rcache;   /* per instruction: the region it accessed last (ncode entries), or NULL */
    int64_t ninst;           /* instructions executed by this thread */
    int32_t cur_ip;          /* the instruction being executed */
    int32_t dpp_invalid_set;
    uint64_t dpp_invalid;
    int64_t jit_limit;       /* compiled code: the wave's instruction count at which it yields (ST_SLICE) */
} Ctx;

/* the interpreter's stop reasons */
enum { ST_CONT = 0, ST_DONE, ST_BARRIER, ST_FAULT, ST_SLICE };

#endif
