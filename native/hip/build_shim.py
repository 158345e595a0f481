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

# arrays, array copies, texture/surface objects, texture references (pyhip.capi.textures)
TEXTURE_API = """
hipError_t pyhip_hipMalloc3DArray(void** array, const void* desc, const void* extent, unsigned int flags);
hipError_t hipMallocArray(void** array, const void* desc, size_t width, size_t height, unsigned int flags);
hipError_t hipArrayCreate(void** pHandle, const void* pAllocateArray);
hipError_t hipArray3DCreate(void** array, const void* pAllocateArray);
hipError_t hipArrayDestroy(void* array);
hipError_t hipFreeArray(void* array);
hipError_t hipGetChannelDesc(void* desc, const void* array);
hipError_t pyhip_hipMallocMipmappedArray(void** mipmappedArray, const void* desc, const void* extent,
                                         unsigned int numLevels, unsigned int flags);
hipError_t hipFreeMipmappedArray(void* mipmappedArray);
hipError_t hipGetMipmappedArrayLevel(void** levelArray, const void* mipmappedArray, unsigned int level);
hipError_t hipMipmappedArrayCreate(void** pHandle, void* pMipmappedArrayDesc, unsigned int numMipmapLevels);
hipError_t hipMipmappedArrayDestroy(void* hMipmappedArray);
hipError_t hipMipmappedArrayGetLevel(void** pLevelArray, void* hMipMappedArray, unsigned int level);
hipError_t hipMemcpy2DToArray(void* dst, size_t wOffset, size_t hOffset, const void* src, size_t spitch,
                              size_t width, size_t height, int kind);
hipError_t hipMemcpy2DToArray_spt(void* dst, size_t wOffset, size_t hOffset, const void* src, size_t spitch,
                                  size_t width, size_t height, int kind);
hipError_t hipMemcpy2DToArrayAsync(void* dst, size_t wOffset, size_t hOffset, const void* src, size_t spitch,
                                   size_t width, size_t height, int kind, void* stream);
hipError_t hipMemcpy2DFromArray(void* dst, size_t dpitch, const void* src, size_t wOffset, size_t hOffset,
                                size_t width, size_t height, int kind);
hipError_t hipMemcpy2DFromArray_spt(void* dst, size_t dpitch, const void* src, size_t wOffset, size_t hOffset,
                                    size_t width, size_t height, int kind);
hipError_t hipMemcpy2DFromArrayAsync(void* dst, size_t dpitch, const void* src, size_t wOffset, size_t hOffset,
                                     size_t width, size_t height, int kind, void* stream);
hipError_t hipMemcpyToArray(void* dst, size_t wOffset, size_t hOffset, const void* src, size_t count, int kind);
hipError_t hipMemcpyFromArray(void* dst, const void* srcArray, size_t wOffset, size_t hOffset, size_t count,
                              int kind);
hipError_t hipMemcpyAtoH(void* dst, void* srcArray, size_t srcOffset, size_t count);
hipError_t hipMemcpyHtoA(void* dstArray, size_t dstOffset, const void* srcHost, size_t count);
hipError_t hipMemcpy3D(const void* p);
hipError_t hipMemcpy3D_spt(const void* p);
hipError_t hipMemcpy3DAsync(const void* p, void* stream);
hipError_t hipCreateTextureObject(void** pTexObject, const void* pResDesc, const void* pTexDesc,
                                  const void* pResViewDesc);
hipError_t hipDestroyTextureObject(void* textureObject);
hipError_t hipGetTextureObjectResourceDesc(void* pResDesc, void* textureObject);
hipError_t hipGetTextureObjectResourceViewDesc(void* pResViewDesc, void* textureObject);
hipError_t hipGetTextureObjectTextureDesc(void* pTexDesc, void* textureObject);
hipError_t hipTexObjectCreate(void** pTexObject, const void* pResDesc, const void* pTexDesc, const void* pResViewDesc);
hipError_t hipTexObjectDestroy(void* texObject);
hipError_t hipTexObjectGetResourceDesc(void* pResDesc, void* texObject);
hipError_t hipTexObjectGetResourceViewDesc(void* pResViewDesc, void* texObject);
hipError_t hipTexObjectGetTextureDesc(void* pTexDesc, void* texObject);
hipError_t _Z22hipCreateSurfaceObjectPP13__hip_surfacePK15hipResourceDesc(void** pSurfObject, const void* pResDesc);
hipError_t _Z23hipDestroySurfaceObjectP13__hip_surface(void* surfaceObject);
void __hipRegisterTexture(void** modules, void* var, char* hostVar, char* deviceVar, int type, int norm, int ext);
void __hipRegisterSurface(void** modules, void* var, char* hostVar, char* deviceVar, int type, int ext);
hipError_t hipBindTexture(size_t* offset, const void* tex, const void* devPtr, const void* desc, size_t size);
hipError_t hipBindTexture2D(size_t* offset, const void* tex, const void* devPtr, const void* desc, size_t width,
                            size_t height, size_t pitch);
hipError_t hipBindTextureToArray(const void* tex, const void* array, const void* desc);
hipError_t hipBindTextureToMipmappedArray(const void* tex, const void* mipmappedArray, const void* desc);
hipError_t hipUnbindTexture(const void* tex);
hipError_t hipGetTextureReference(const void** texref, const void* symbol);
hipError_t hipGetTextureAlignmentOffset(size_t* offset, const void* texref);
hipError_t hipModuleGetTexRef(void** texRef, void* hmod, const char* name);
hipError_t hipTexRefSetArray(void* tex, const void* array, unsigned int flags);
hipError_t hipTexRefSetAddress(size_t* ByteOffset, void* texRef, void* dptr, size_t bytes);
hipError_t hipTexRefSetAddress2D(void* texRef, const void* desc, void* dptr, size_t Pitch);
hipError_t hipTexRefSetAddressMode(void* texRef, int dim, int am);
hipError_t hipTexRefSetFilterMode(void* texRef, int fm);
hipError_t hipTexRefSetFlags(void* texRef, unsigned int Flags);
hipError_t hipTexRefSetFormat(void* texRef, int fmt, int NumPackedComponents);
hipError_t hipTexRefGetAddress(void** dev_ptr, const void* texRef);
hipError_t hipTexRefGetAddressMode(int* pam, const void* texRef, int dim);
hipError_t hipTexRefGetFilterMode(int* pfm, const void* texRef);
hipError_t hipTexRefGetFlags(unsigned int* pFlags, const void* texRef);
hipError_t hipTexRefGetFormat(int* pFormat, int* pNumChannels, const void* texRef);
"""
# in C (textures.c): the entry points that take or return structs by value
TEXTURE_C = {"hipCreateChannelDesc", "hipMalloc3DArray", "hipMallocMipmappedArray"}

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
    return (set(re.findall(r"\b(\w+)\s*\(", IMPLEMENTED + HIPRTC_API + TEXTURE_API)) - {"void", "dim3"}) | \
        C_IMPLEMENTED | TEXTURE_C


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
    ffibuilder.embedding_api(IMPLEMENTED + HIPRTC_API + TEXTURE_API)
    source = ("#include <stdint.h>\n#include <stddef.h>\n" + TYPES + SLOW_DECL + (HERE / "fastlaunch.c").read_text()
              + (HERE / "textures.c").read_text() + stubs_source())
    ffibuilder.set_source("_pyhip_hip_shim", source,
                          extra_compile_args=["-O2", "-Wno-builtin-declaration-mismatch"],
                          extra_link_args=[f"-Wl,--version-script={HERE / 'libamdhip64.map'}",
                                           "-Wl,-soname,libamdhip64.so.5", "-lpthread"])
    ffibuilder.embedding_init_code("from pyhip.capi.impl import install\ninstall()\n")
    return ffibuilder


def fingerprint() -> str:
    h = hashlib.sha256()
    for p in (HERE / "exports.txt", HERE / "libamdhip64.map", HERE / "fastlaunch.c", HERE / "textures.c",
              Path(__file__), HERE / "build_hiprtc.py"):
        h.update(p.read_bytes())
    return h.hexdigest()[:16]


def build(out_dir: Path) -> Path:
    out_dir.mkdir(parents=True, exist_ok=True)
    target = out_dir / "libamdhip64.so.5"
    make_builder().compile(tmpdir=str(out_dir / "build"), target=str(target))
    return target
