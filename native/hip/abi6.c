/* pyhip's libamdhip64 as clients built against HIP >= 6 headers see it (Triton's launcher, driver.c).

   Such a client asks hipDriverGetVersion for a version >= 6 and then resolves every function it calls through
   hipGetProcAddress, getting the HIP 6 variant of the ones whose ABI changed (hipGetDeviceProperties fills
   a hipDeviceProp_tR0600).  pyhip's libamdhip64.so.5 has HIP 5.2's ABI, so this small library sits in front:
   it reports the version of the headers it was compiled against, converts the device properties to the
   R0600 layout, and hands out the 5.2 shim's own functions for the names listed in SAME_ABI (checked to take
   and return the same types in both ABIs).  Every other name is "not found", as a HIP runtime answers for a
   symbol it does not have.  Compiled by pyhip.capi.abi6 with -I<headers> -DPYHIP_SHIM_PATH="<.so.5>". */
#define __HIP_PLATFORM_AMD__
#include <hip/hip_runtime_api.h>
#include <hip/hip_deprecated.h> /* hipDeviceProp_tR0000: the pre-6.0 (HIP 5.x) layout */
#include <dlfcn.h>
#include <stddef.h>
#include <string.h>

#ifndef PYHIP_SHIM_PATH
#error "PYHIP_SHIM_PATH (pyhip's libamdhip64.so.5) must be defined"
#endif

/* HIP 5.2's hipDeviceProp_t, which pyhip's shim fills (native/hip/types.h, pyhip/capi/device.py) */
_Static_assert(sizeof(hipDeviceProp_tR0000) == 792, "hipDeviceProp_tR0000 is not HIP 5.2's 792-byte layout");

static void *shim_handle(void) {
  static void *h;
  if (!h)
    h = dlopen(PYHIP_SHIM_PATH, RTLD_NOW | RTLD_LOCAL);
  return h;
}

static void *shim_symbol(const char *name) {
  void *h = shim_handle();
  return h ? dlsym(h, name) : NULL;
}

/* Functions whose C signature is the same in HIP 5.2 and HIP 6/7 (and whose enums keep their values). */
static const char *const SAME_ABI[] = {
    "hipGetLastError", "hipPeekAtLastError", "hipGetErrorString", "hipGetErrorName",
    "hipGetDeviceCount", "hipGetDevice", "hipSetDevice", "hipDeviceGetAttribute",
    "hipDeviceSynchronize", "hipModuleLoadData", "hipModuleLoadDataEx", "hipModuleUnload",
    "hipModuleGetFunction", "hipModuleGetGlobal", "hipFuncGetAttribute", "hipModuleLaunchKernel",
    "hipPointerGetAttribute", "hipMalloc", "hipFree", "hipMemcpy", "hipMemcpyAsync", "hipMemset",
    "hipMemsetAsync", "hipStreamCreate", "hipStreamDestroy", "hipStreamSynchronize",
    "hipEventCreate", "hipEventDestroy", "hipEventRecord", "hipEventSynchronize", "hipEventElapsedTime",
    NULL};

typedef hipError_t (*props52_fn)(hipDeviceProp_tR0000 *, int);

/* hipGetDeviceProperties of HIP >= 6: the 5.2 shim's properties, field by field, in the R0600 layout.
   Fields HIP 5.2 does not have stay zero, except the few derived below. */
static hipError_t props_r0600(hipDeviceProp_tR0600 *out, int device) {
  props52_fn get = (props52_fn)shim_symbol("hipGetDeviceProperties");
  if (!get)
    return hipErrorSharedObjectInitFailed;
  if (!out)
    return hipErrorInvalidValue;
  hipDeviceProp_tR0000 p;
  hipError_t err = get(&p, device);
  if (err != hipSuccess)
    return err;
  memset(out, 0, sizeof(*out));
#define SAME(f) memcpy(&out->f, &p.f, sizeof(p.f));
  SAME(name) SAME(totalGlobalMem) SAME(sharedMemPerBlock) SAME(regsPerBlock) SAME(warpSize) SAME(memPitch)
  SAME(maxThreadsPerBlock) SAME(maxThreadsDim) SAME(maxGridSize) SAME(clockRate) SAME(totalConstMem)
  SAME(major) SAME(minor) SAME(textureAlignment) SAME(texturePitchAlignment) SAME(multiProcessorCount)
  SAME(kernelExecTimeoutEnabled) SAME(integrated) SAME(canMapHostMemory) SAME(computeMode) SAME(maxTexture1D)
  SAME(maxTexture1DLinear) SAME(maxTexture2D) SAME(maxTexture3D) SAME(concurrentKernels) SAME(ECCEnabled)
  SAME(pciBusID) SAME(pciDeviceID) SAME(pciDomainID) SAME(tccDriver) SAME(memoryClockRate) SAME(memoryBusWidth)
  SAME(l2CacheSize) SAME(maxThreadsPerMultiProcessor) SAME(managedMemory) SAME(isMultiGpuBoard)
  SAME(pageableMemoryAccess) SAME(concurrentManagedAccess) SAME(cooperativeLaunch)
  SAME(cooperativeMultiDeviceLaunch) SAME(pageableMemoryAccessUsesHostPageTables)
  SAME(directManagedMemAccessFromHost) SAME(gcnArchName) SAME(maxSharedMemoryPerMultiProcessor)
  SAME(clockInstructionRate) SAME(arch) SAME(hdpMemFlushCntl) SAME(hdpRegFlushCntl)
  SAME(cooperativeMultiDeviceUnmatchedFunc) SAME(cooperativeMultiDeviceUnmatchedGridDim)
  SAME(cooperativeMultiDeviceUnmatchedBlockDim) SAME(cooperativeMultiDeviceUnmatchedSharedMem) SAME(isLargeBar)
  SAME(asicRevision)
#undef SAME
  out->sharedMemPerMultiprocessor = p.maxSharedMemoryPerMultiProcessor;
  out->sharedMemPerBlockOptin = p.sharedMemPerBlock;
  out->unifiedAddressing = 1;
  out->deviceOverlap = 1;
  return hipSuccess;
}

/* HIP 5.2 has no module-level cooperative launch: pyhip reports it unsupported rather than launching a
   grid without the co-residency it promises. */
static hipError_t module_cooperative(hipFunction_t f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                                     unsigned by, unsigned bz, unsigned shared, hipStream_t stream,
                                     void **params, void **extra) {
  (void)f, (void)gx, (void)gy, (void)gz, (void)bx, (void)by, (void)bz, (void)shared, (void)stream;
  (void)params, (void)extra;
  return hipErrorNotSupported;
}

static hipError_t version(int *out) {
  if (!out)
    return hipErrorInvalidValue;
  *out = HIP_VERSION;
  return hipSuccess;
}

hipError_t hipDriverGetVersion(int *out) { return version(out); }

hipError_t hipRuntimeGetVersion(int *out) { return version(out); }

hipError_t hipGetProcAddress(const char *symbol, void **pfn, int hipVersion, uint64_t flags,
                             hipDriverProcAddressQueryResult *status) {
  (void)flags;
  if (!symbol || !pfn)
    return hipErrorInvalidValue;
  void *fn = NULL;
  if (hipVersion > HIP_VERSION) {
    if (status)
      *status = HIP_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT;
    *pfn = NULL;
    return hipErrorNotFound;
  }
  if (!strcmp(symbol, "hipGetDeviceProperties") || !strcmp(symbol, "hipGetDevicePropertiesR0600"))
    fn = (void *)props_r0600;
  else if (!strcmp(symbol, "hipModuleLaunchCooperativeKernel"))
    fn = (void *)module_cooperative;
  else if (!strcmp(symbol, "hipDriverGetVersion") || !strcmp(symbol, "hipRuntimeGetVersion"))
    fn = (void *)version;
  else
    for (const char *const *n = SAME_ABI; *n; ++n)
      if (!strcmp(symbol, *n)) {
        fn = shim_symbol(symbol);
        break;
      }
  *pfn = fn;
  if (status)
    *status = fn ? HIP_GET_PROC_ADDRESS_SUCCESS : HIP_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  return fn ? hipSuccess : hipErrorNotFound;
}
