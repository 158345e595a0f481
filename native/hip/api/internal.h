/* not HIP exports: what the shim's C calls in Python (declared like the exports, defined by pyhip/capi) */
hipError_t pyhip_slow_hipLaunchKernel(const void* function_address, dim3 numBlocks, dim3 dimBlocks, void** args,
                                      size_t sharedMemBytes, void* stream);
