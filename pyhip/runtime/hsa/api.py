"""The part of the HSA runtime API (ROCr, ``libhsa-runtime64.so.1``) the HSA backend uses, bound with cffi in
ABI mode — no compiler and no ROCm headers needed.  Enumeration values are those of ROCm's hsa.h /
hsa_ext_amd.h (checked against the installed headers by tests/runtime/test_hsa_backend.py)."""
from __future__ import annotations

import ctypes
import os
import threading

import cffi

from ...errors import HipError, hipError_t

CDEF = """
typedef int hsa_status_t;
typedef struct { uint64_t handle; } hsa_agent_t;
typedef struct { uint64_t handle; } hsa_signal_t;
typedef struct { uint64_t handle; } hsa_isa_t;
typedef struct { uint64_t handle; } hsa_amd_memory_pool_t;
typedef struct { uint64_t handle; } hsa_code_object_reader_t;
typedef struct { uint64_t handle; } hsa_executable_t;
typedef struct { uint64_t handle; } hsa_executable_symbol_t;
typedef struct { uint64_t handle; } hsa_loaded_code_object_t;
typedef int64_t hsa_signal_value_t;
typedef struct hsa_queue_s {
    uint32_t type, features;
    void* base_address;
    hsa_signal_t doorbell_signal;
    uint32_t size, reserved1;
    uint64_t id;
} hsa_queue_t;
typedef struct { uint64_t start, end; } hsa_amd_profiling_dispatch_time_t;
typedef struct {
    hsa_agent_t agent;
    uint64_t virtual_address;
    uint32_t fault_reason_mask;
} hsa_amd_gpu_memory_fault_info_t;
typedef struct {
    int event_type;
    hsa_amd_gpu_memory_fault_info_t memory_fault;
} hsa_amd_event_t;

hsa_status_t hsa_init(void);
hsa_status_t hsa_shut_down(void);
hsa_status_t hsa_status_string(hsa_status_t status, const char** string);
hsa_status_t hsa_iterate_agents(hsa_status_t (*callback)(hsa_agent_t agent, void* data), void* data);
hsa_status_t hsa_agent_get_info(hsa_agent_t agent, int attribute, void* value);
hsa_status_t hsa_agent_iterate_isas(hsa_agent_t agent, hsa_status_t (*callback)(hsa_isa_t isa, void* data),
                                    void* data);
hsa_status_t hsa_isa_get_info_alt(hsa_isa_t isa, int attribute, void* value);
hsa_status_t hsa_amd_agent_iterate_memory_pools(hsa_agent_t agent,
    hsa_status_t (*callback)(hsa_amd_memory_pool_t pool, void* data), void* data);
hsa_status_t hsa_amd_memory_pool_get_info(hsa_amd_memory_pool_t pool, int attribute, void* value);
hsa_status_t hsa_amd_agent_memory_pool_get_info(hsa_agent_t agent, hsa_amd_memory_pool_t pool, int attribute,
                                                void* value);
hsa_status_t hsa_amd_memory_pool_allocate(hsa_amd_memory_pool_t pool, size_t size, uint32_t flags, void** ptr);
hsa_status_t hsa_amd_memory_pool_free(void* ptr);
typedef struct { uint32_t handle[8]; } hsa_amd_ipc_memory_t;
hsa_status_t hsa_amd_ipc_memory_create(void* ptr, size_t len, hsa_amd_ipc_memory_t* handle);
hsa_status_t hsa_amd_ipc_memory_attach(const hsa_amd_ipc_memory_t* handle, size_t len, uint32_t num_agents,
                                       const hsa_agent_t* mapping_agents, void** mapped_ptr);
hsa_status_t hsa_amd_ipc_memory_detach(void* mapped_ptr);
hsa_status_t hsa_amd_agents_allow_access(uint32_t num_agents, const hsa_agent_t* agents, const uint32_t* flags,
                                         const void* ptr);
hsa_status_t hsa_amd_memory_lock(void* host_ptr, size_t size, hsa_agent_t* agents, int num_agent, void** agent_ptr);
hsa_status_t hsa_amd_memory_unlock(void* host_ptr);
hsa_status_t hsa_amd_memory_async_copy(void* dst, hsa_agent_t dst_agent, const void* src, hsa_agent_t src_agent,
                                       size_t size, uint32_t num_dep_signals, const hsa_signal_t* dep_signals,
                                       hsa_signal_t completion_signal);
hsa_status_t hsa_memory_copy(void* dst, const void* src, size_t size);
hsa_status_t hsa_amd_memory_fill(void* ptr, uint32_t value, size_t count);

hsa_status_t hsa_signal_create(hsa_signal_value_t initial_value, uint32_t num_consumers,
                               const hsa_agent_t* consumers, hsa_signal_t* signal);
hsa_status_t hsa_signal_destroy(hsa_signal_t signal);
hsa_signal_value_t hsa_signal_load_scacquire(hsa_signal_t signal);
void hsa_signal_store_screlease(hsa_signal_t signal, hsa_signal_value_t value);
void hsa_signal_store_relaxed(hsa_signal_t signal, hsa_signal_value_t value);
void hsa_signal_subtract_screlease(hsa_signal_t signal, hsa_signal_value_t value);
hsa_signal_value_t hsa_signal_wait_scacquire(hsa_signal_t signal, int condition, hsa_signal_value_t compare_value,
                                             uint64_t timeout_hint, int wait_state_hint);
hsa_status_t hsa_amd_signal_async_handler(hsa_signal_t signal, int cond, hsa_signal_value_t value,
                                          int (*handler)(hsa_signal_value_t value, void* arg), void* arg);

hsa_status_t hsa_queue_create(hsa_agent_t agent, uint32_t size, uint32_t type,
                              void (*callback)(hsa_status_t status, hsa_queue_t* source, void* data), void* data,
                              uint32_t private_segment_size, uint32_t group_segment_size, hsa_queue_t** queue);
hsa_status_t hsa_queue_destroy(hsa_queue_t* queue);
hsa_status_t hsa_amd_profiling_set_profiler_enabled(hsa_queue_t* queue, int enable);
hsa_status_t hsa_amd_profiling_get_dispatch_time(hsa_agent_t agent, hsa_signal_t signal,
                                                 hsa_amd_profiling_dispatch_time_t* time);

hsa_status_t hsa_code_object_reader_create_from_memory(const void* code_object, size_t size,
                                                       hsa_code_object_reader_t* code_object_reader);
hsa_status_t hsa_code_object_reader_destroy(hsa_code_object_reader_t code_object_reader);
hsa_status_t hsa_executable_create_alt(int profile, int default_float_rounding_mode, const char* options,
                                       hsa_executable_t* executable);
hsa_status_t hsa_executable_load_agent_code_object(hsa_executable_t executable, hsa_agent_t agent,
                                                   hsa_code_object_reader_t code_object_reader,
                                                   const char* options, hsa_loaded_code_object_t* loaded_code_object);
hsa_status_t hsa_executable_freeze(hsa_executable_t executable, const char* options);
hsa_status_t hsa_executable_destroy(hsa_executable_t executable);
hsa_status_t hsa_executable_get_symbol_by_name(hsa_executable_t executable, const char* symbol_name,
                                               const hsa_agent_t* agent, hsa_executable_symbol_t* symbol);
hsa_status_t hsa_executable_symbol_get_info(hsa_executable_symbol_t executable_symbol, int attribute, void* value);
hsa_status_t hsa_amd_register_system_event_handler(hsa_status_t (*callback)(const hsa_amd_event_t* event,
                                                                            void* data), void* data);
"""

# hsa.h / hsa_ext_amd.h
STATUS_SUCCESS, STATUS_INFO_BREAK = 0, 1
AGENT_INFO_NAME, AGENT_INFO_DEVICE, AGENT_INFO_QUEUE_MAX_SIZE = 0, 17, 14
AGENT_INFO_WAVEFRONT_SIZE, AGENT_INFO_WORKGROUP_MAX_DIM, AGENT_INFO_WORKGROUP_MAX_SIZE = 6, 7, 8
AGENT_INFO_GRID_MAX_DIM, AGENT_INFO_CACHE_SIZE = 9, 18
AMD_AGENT_INFO_PRODUCT_NAME, AMD_AGENT_INFO_COMPUTE_UNIT_COUNT, AMD_AGENT_INFO_DRIVER_NODE_ID = 40969, 40962, 40964
AMD_AGENT_INFO_MAX_CLOCK_FREQUENCY, AMD_AGENT_INFO_BDFID, AMD_AGENT_INFO_MEMORY_WIDTH = 0xA003, 0xA006, 0xA007
AMD_AGENT_INFO_MEMORY_MAX_FREQUENCY, AMD_AGENT_INFO_MAX_WAVES_PER_CU, AMD_AGENT_INFO_DOMAIN = 0xA008, 0xA00A, 0xA00F
AMD_AGENT_INFO_HDP_FLUSH = 0xA00E       # hsa_amd_hdp_flush_t: {uint32_t* HDP_MEM_FLUSH_CNTL, *HDP_REG_FLUSH_CNTL}
SEGMENT_GROUP = 3
ISA_INFO_NAME_LENGTH, ISA_INFO_NAME = 0, 1
POOL_INFO_SEGMENT, POOL_INFO_GLOBAL_FLAGS, POOL_INFO_SIZE, POOL_INFO_ALLOC_ALLOWED = 0, 1, 2, 5
AGENT_POOL_INFO_ACCESS, POOL_ACCESS_NEVER_ALLOWED = 0, 0
SEGMENT_GLOBAL = 0
FLAG_KERNARG_INIT, FLAG_FINE_GRAINED, FLAG_COARSE_GRAINED = 1, 2, 4
SYMBOL_INFO_KERNEL_OBJECT, SYMBOL_INFO_VARIABLE_ADDRESS, SYMBOL_INFO_VARIABLE_SIZE = 22, 21, 9
DEVICE_CPU, DEVICE_GPU = 0, 1
QUEUE_TYPE_MULTI = 0
COND_EQ, COND_NE, COND_LT, COND_GTE = 0, 1, 2, 3
WAIT_BLOCKED, WAIT_ACTIVE = 0, 1
GPU_MEMORY_FAULT_EVENT = 0
# hsa_amd_memory_fault_reason_t (what ROCr's VM-fault handler makes of KFD's failure bits)
FAULT_PAGE_NOT_PRESENT, FAULT_READ_ONLY, FAULT_NX, FAULT_HOST_ONLY = 1, 2, 4, 8
FAULT_DRAMECC, FAULT_IMPRECISE, FAULT_SRAMECC, FAULT_HANG = 16, 32, 64, 1 << 31
FAULT_REASONS = ((FAULT_PAGE_NOT_PRESENT, "page not present or supervisor privilege"),
                 (FAULT_READ_ONLY, "write to a read-only page"), (FAULT_NX, "execute on a no-execute page"),
                 (FAULT_HOST_ONLY, "host-only memory"), (FAULT_DRAMECC, "DRAM ECC"),
                 (FAULT_IMPRECISE, "imprecise"), (FAULT_SRAMECC, "SRAM ECC"), (FAULT_HANG, "GPU hang"))
PROFILE_FULL, ROUNDING_DEFAULT = 1, 0

ffi = cffi.FFI()
ffi.cdef(CDEF)

# HSA status -> HIP error (what AMD's HIP reports for the same ROCr failures)
_HIP_OF_STATUS = {
    0x1001: hipError_t.hipErrorInvalidValue,       # HSA_STATUS_ERROR_INVALID_ARGUMENT
    0x1002: hipError_t.hipErrorOutOfMemory,        # INVALID_QUEUE_CREATION
    0x1003: hipError_t.hipErrorOutOfMemory,        # INVALID_ALLOCATION
    0x1008: hipError_t.hipErrorOutOfMemory,        # OUT_OF_RESOURCES
    0x1009: hipError_t.hipErrorLaunchFailure,      # INVALID_PACKET_FORMAT
    0x100D: hipError_t.hipErrorInvalidConfiguration,   # INCOMPATIBLE_ARGUMENTS (a packet the CP refuses)
    0x100F: hipError_t.hipErrorNoBinaryForGpu,     # INVALID_ISA
    0x1010: hipError_t.hipErrorInvalidImage,       # INVALID_CODE_OBJECT
    0x1011: hipError_t.hipErrorInvalidImage,       # INVALID_EXECUTABLE
    0x1013: hipError_t.hipErrorNotFound,           # INVALID_SYMBOL_NAME
    0x1016: hipError_t.hipErrorLaunchFailure,      # EXCEPTION
    41: hipError_t.hipErrorIllegalAddress,         # MEMORY_APERTURE_VIOLATION
    42: hipError_t.hipErrorLaunchFailure,          # ILLEGAL_INSTRUCTION
    43: hipError_t.hipErrorIllegalAddress,         # MEMORY_FAULT
}


def hip_error(status: int) -> int:
    return int(_HIP_OF_STATUS.get(status, hipError_t.hipErrorUnknown))


class Hsa:
    """The loaded runtime.  ``Hsa.load()`` finds ``libhsa-runtime64.so.1`` the way ROCm installs it
    (``PYHIP_HSA_LIBRARY``, ``$ROCM_PATH/lib``, /opt/rocm/lib, then the loader's search path).  With
    ``thunk`` (a path to a libhsakmt.so.1, e.g. pyhip's drop-in) that library is loaded first, globally, so
    ROCr binds to it instead of the system's."""

    _instance = None
    _lock = threading.Lock()

    def __init__(self, lib, path: str):
        self.lib, self.path = lib, path
        self.ffi = ffi

    @classmethod
    def load(cls, thunk: str | None = None) -> "Hsa":
        with cls._lock:
            if cls._instance is None:
                if thunk:
                    ctypes.CDLL(thunk, mode=ctypes.RTLD_GLOBAL)       # ROCr's DT_NEEDED libhsakmt.so.1 binds here
                last = None
                for path in library_candidates():
                    try:
                        lib = ffi.dlopen(path, ffi.RTLD_GLOBAL | ffi.RTLD_NOW)
                    except OSError as exc:
                        last = exc
                        continue
                    cls._instance = cls(lib, path)
                    break
                else:
                    raise HipError(hipError_t.hipErrorNoDevice,
                                   f"PYHIP_BACKEND=hsa needs ROCr (libhsa-runtime64.so.1), not found: {last}; "
                                   "PYHIP_BACKEND=emu (or auto) runs on pyhip's emulated GPU without it")
            return cls._instance

    def check(self, status: int, what: str) -> None:
        if status != STATUS_SUCCESS:
            raise HipError(hip_error(status), f"{what}: {self.status_string(status)}")

    def status_string(self, status: int) -> str:
        s = ffi.new("const char**")
        if self.lib.hsa_status_string(status, s) == STATUS_SUCCESS and s[0] != ffi.NULL:
            return ffi.string(s[0]).decode(errors="replace")
        return f"HSA status 0x{status:x}"


def library_candidates() -> list[str]:
    out = []
    if os.environ.get("PYHIP_HSA_LIBRARY"):
        out.append(os.environ["PYHIP_HSA_LIBRARY"])
    for root in (os.environ.get("ROCM_PATH"), "/opt/rocm"):
        if root:
            out.append(os.path.join(root, "lib", "libhsa-runtime64.so.1"))
    out.append("libhsa-runtime64.so.1")
    return [p for p in out if "/" not in p or os.path.exists(p)]
