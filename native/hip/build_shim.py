"""cffi embedding build of the drop-in ``libamdhip64.so.5``: the functions pyhip implements are declared
with ``embedding_api`` and implemented in Python (pyhip.capi); every other 5.2 export is a C stub that
returns hipErrorNotSupported (801) — or 0/NULL for the few non-hipError_t functions.  The linker version
script gives the exports the hip_4.2 … hip_5.2 version nodes."""
from __future__ import annotations

import hashlib
import sys
from pathlib import Path

import cffi

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from build_hiprtc import COMPILE_API as HIPRTC_API  # noqa: E402  (HIP 5.2 exports hiprtc from libamdhip64)

sys.path.pop(0)

TYPES = """
typedef struct { uint32_t x, y, z; } dim3;
typedef int hipError_t;
"""

# C prototypes of what pyhip implements (hip_runtime_api.h, ROCm 5.2; handles are pointers)
IMPLEMENTED = """
void** __hipRegisterFatBinary(const void* data);
void __hipRegisterFunction(void** modules, const void* hostFunction, char* deviceFunction, const char* deviceName,
                           unsigned int threadLimit, void* tid, void* bid, void* blockDim, void* gridDim, int* wSize);
void __hipRegisterVar(void** modules, void* var, char* hostVar, char* deviceVar, int ext, size_t size, int constant,
                      int global);
void __hipUnregisterFatBinary(void** modules);
hipError_t pyhip_slow_hipLaunchKernel(const void* function_address, dim3 numBlocks, dim3 dimBlocks, void** args,
                                      size_t sharedMemBytes, void* stream);
hipError_t hipLaunchKernel_spt(const void* function_address, dim3 numBlocks, dim3 dimBlocks, void** args,
                               size_t sharedMemBytes, void* stream);
hipError_t hipMalloc(void** ptr, size_t size);
hipError_t hipFree(void* ptr);
hipError_t hipHostMalloc(void** ptr, size_t size, unsigned int flags);
hipError_t hipHostFree(void* ptr);
hipError_t hipMemcpy(void* dst, const void* src, size_t sizeBytes, int kind);
hipError_t hipMemcpyAsync(void* dst, const void* src, size_t sizeBytes, int kind, void* stream);
hipError_t hipMemset(void* dst, int value, size_t sizeBytes);
hipError_t hipMemcpyToSymbol(const void* symbol, const void* src, size_t sizeBytes, size_t offset, int kind);
hipError_t hipMemcpyFromSymbol(void* dst, const void* symbol, size_t sizeBytes, size_t offset, int kind);
hipError_t hipGetDeviceCount(int* count);
hipError_t hipSetDevice(int deviceId);
hipError_t hipGetDevice(int* deviceId);
hipError_t hipDeviceSynchronize(void);
const char* hipGetErrorName(hipError_t hip_error);
const char* hipGetErrorString(hipError_t hip_error);
hipError_t hipStreamCreate(void** stream);
hipError_t hipStreamDestroy(void* stream);
hipError_t hipStreamSynchronize(void* stream);
hipError_t hipStreamCreateWithFlags(void** stream, unsigned int flags);
hipError_t hipStreamCreateWithPriority(void** stream, unsigned int flags, int priority);
hipError_t hipStreamQuery(void* stream);
hipError_t hipStreamWaitEvent(void* stream, void* event, unsigned int flags);
hipError_t hipStreamAddCallback(void* stream, void (*callback)(void*, hipError_t, void*), void* userData,
                                unsigned int flags);
hipError_t hipEventCreate(void** event);
hipError_t hipEventCreateWithFlags(void** event, unsigned flags);
hipError_t hipEventRecord(void* event, void* stream);
hipError_t hipEventSynchronize(void* event);
hipError_t hipEventQuery(void* event);
hipError_t hipEventElapsedTime(float* ms, void* start, void* stop);
hipError_t hipEventDestroy(void* event);
hipError_t hipInit(unsigned int flags);
hipError_t hipDriverGetVersion(int* driverVersion);
hipError_t hipRuntimeGetVersion(int* runtimeVersion);
hipError_t hipGetDeviceProperties(void* prop, int deviceId);
hipError_t hipDeviceGetAttribute(int* pi, int attr, int deviceId);
hipError_t hipDeviceReset(void);
hipError_t hipMemGetInfo(size_t* free, size_t* total);
hipError_t hipMemsetAsync(void* dst, int value, size_t sizeBytes, void* stream);
hipError_t hipMemsetD8(void* dest, unsigned char value, size_t count);
hipError_t hipMemsetD16(void* dest, unsigned short value, size_t count);
hipError_t hipMemsetD32(void* dest, int value, size_t count);
hipError_t hipMemcpyToSymbolAsync(const void* symbol, const void* src, size_t sizeBytes, size_t offset, int kind,
                                  void* stream);
hipError_t hipMemcpyFromSymbolAsync(void* dst, const void* symbol, size_t sizeBytes, size_t offset, int kind,
                                    void* stream);
hipError_t hipGetSymbolAddress(void** devPtr, const void* symbol);
hipError_t hipGetSymbolSize(size_t* size, const void* symbol);
hipError_t hipModuleLoad(void** module, const char* fname);
hipError_t hipModuleLoadData(void** module, const void* image);
hipError_t hipModuleUnload(void* module);
hipError_t hipModuleGetFunction(void** function, void* module, const char* kname);
hipError_t hipModuleGetGlobal(void** dptr, size_t* bytes, void* hmod, const char* name);
hipError_t hipModuleLaunchKernel(void* f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ,
                                 unsigned int blockDimX, unsigned int blockDimY, unsigned int blockDimZ,
                                 unsigned int sharedMemBytes, void* stream, void** kernelParams, void** extra);
void __hipRegisterManagedVar(void* hipModule, void** pointer, void* init_value, const char* name, size_t size,
                             unsigned align);
hipError_t hipMallocManaged(void** dev_ptr, size_t size, unsigned int flags);
hipError_t _Z24hipExtModuleLaunchKernelP18ihipModuleSymbol_tjjjjjjmP12ihipStream_tPPvS4_P11ihipEvent_tS6_j(
    void* f, uint32_t globalWorkSizeX, uint32_t globalWorkSizeY, uint32_t globalWorkSizeZ, uint32_t localWorkSizeX,
    uint32_t localWorkSizeY, uint32_t localWorkSizeZ, size_t sharedMemBytes, void* hStream, void** kernelParams,
    void** extra, void* startEvent, void* stopEvent, uint32_t flags);
hipError_t hipMallocHost(void** ptr, size_t size);
hipError_t hipMemsetD8Async(void* dest, unsigned char value, size_t count, void* stream);
hipError_t hipMemsetD16Async(void* dest, unsigned short value, size_t count, void* stream);
hipError_t hipMemsetD32Async(void* dest, int value, size_t count, void* stream);
hipError_t hipModuleLoadDataEx(void** module, const void* image, unsigned int numOptions, void* options,
                               void** optionValues);
hipError_t hipFuncGetAttributes(void* attr, const void* func);
hipError_t hipFuncGetAttribute(int* value, int attrib, void* hfunc);
hipError_t hipOccupancyMaxPotentialBlockSize(int* gridSize, int* blockSize, const void* f, size_t dynSharedMemPerBlk,
                                             int blockSizeLimit);
hipError_t hipOccupancyMaxActiveBlocksPerMultiprocessor(int* numBlocks, const void* f, int blockSize,
                                                        size_t dynSharedMemPerBlk);
hipError_t hipConfigureCall(dim3 gridDim, dim3 blockDim, size_t sharedMem, void* stream);
hipError_t hipSetupArgument(const void* arg, size_t size, size_t offset);
hipError_t hipLaunchByPtr(const void* func);
"""

# implemented in C (fastlaunch.c): the native launch path and the thread's last error
C_IMPLEMENTED = {"hipLaunchKernel", "hipGetLastError", "hipPeekAtLastError", "__hipPushCallConfiguration",
                 "__hipPopCallConfiguration", "_ZN8hip_impl22hipLaunchKernelGGLImplEmRK4dim3S2_jP12ihipStream_tPPv"}
# what Python calls in the shim (fastlaunch.c)
C_API = """
typedef struct {
    const void* handle;
    void* stream;
    uint32_t grid[3], block[3];
    uint64_t shared;
    uint32_t nargs;
    uint32_t kernarg_size;
    uint16_t arg_offset[64];
    uint16_t arg_size[64];
    uint8_t kernarg[2048];
    uint8_t packet[64];
    void* queue;
    uint8_t* ring;
    uint64_t slot_size;
    uint64_t queue_mask;
    void* counter;
    uint64_t* launches;
    int device;
} pyhip_fast_entry;
void pyhip_set_last_error(int code);
void pyhip_set_current_device(int device);
void pyhip_fast_set_fns(void* reserve, void* publish, void* sigadd);
int pyhip_fast_register(const pyhip_fast_entry* e);
void pyhip_fast_invalidate(void* stream);
uint64_t pyhip_fast_hit_count(void);
int pyhip_call_config_depth(void);
"""
SLOW_DECL = ("int pyhip_slow_hipLaunchKernel(const void* function_address, dim3 numBlocks, dim3 dimBlocks, "
             "void** args, size_t sharedMemBytes, void* stream);\n")

STUB_RETURN = {"hipError_t": "return 801;", "hiprtcResult": "return 11;", "pointer": "return 0;",
               "int": "return 0;", "void": "", "float": "return 0.0f;"}
STUB_TYPE = {"hipError_t": "int", "hiprtcResult": "int", "pointer": "void*", "int": "int", "void": "void",
             "float": "float"}


def implemented_names() -> set[str]:
    import re
    return (set(re.findall(r"\b(\w+)\s*\(", IMPLEMENTED + HIPRTC_API)) - {"void", "dim3"}) | C_IMPLEMENTED


def stubs_source() -> str:
    done = implemented_names()
    out = ["/* hipErrorNotSupported stubs for the 5.2 exports pyhip does not implement (generated at build) */"]
    for line in (HERE / "exports.txt").read_text().splitlines():
        if line.startswith("#") or not line.strip():
            continue
        _, name, kind = line.split()
        if name in done:
            continue
        out.append(f"{STUB_TYPE[kind]} {name}() {{ {STUB_RETURN[kind]} }}")
    return "\n".join(out) + "\n"


def make_builder() -> cffi.FFI:
    ffibuilder = cffi.FFI()
    ffibuilder.cdef(TYPES + C_API)
    ffibuilder.embedding_api(IMPLEMENTED + HIPRTC_API)
    source = ("#include <stdint.h>\n#include <stddef.h>\n" + TYPES + SLOW_DECL + (HERE / "fastlaunch.c").read_text()
              + stubs_source())
    ffibuilder.set_source("_pyhip_hip_shim", source,
                          extra_compile_args=["-O2", "-Wno-builtin-declaration-mismatch"],
                          extra_link_args=[f"-Wl,--version-script={HERE / 'libamdhip64.map'}",
                                           "-Wl,-soname,libamdhip64.so.5", "-lpthread"])
    ffibuilder.embedding_init_code("from pyhip.capi.impl import install\ninstall()\n")
    return ffibuilder


def fingerprint() -> str:
    h = hashlib.sha256()
    for p in (HERE / "exports.txt", HERE / "libamdhip64.map", HERE / "fastlaunch.c", Path(__file__),
              HERE / "build_hiprtc.py"):
        h.update(p.read_bytes())
    return h.hexdigest()[:16]


def build(out_dir: Path) -> Path:
    out_dir.mkdir(parents=True, exist_ok=True)
    target = out_dir / "libamdhip64.so.5"
    make_builder().compile(tmpdir=str(out_dir / "build"), target=str(target))
    return target
