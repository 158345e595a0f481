/* not HIP exports: what the shim's C calls in Python (declared like the exports, defined by pyhip/capi) */
hipError_t pyhip_slow_hipLaunchKernel(const void* function_address, dim3 numBlocks, dim3 dimBlocks, void** args,
                                      size_t sharedMemBytes, void* stream);
hipError_t pyhip_launch_config(uintptr_t function_address, const dim3* numBlocks, const dim3* dimBlocks,
                               uint32_t sharedMemBytes, void* stream, void** config);
hipError_t pyhip_slow_hipDeviceSynchronize(void);
hipError_t pyhip_slow_hipStreamSynchronize(void* stream);
hipError_t pyhip_slow_hipMemcpy(void* dst, const void* src, size_t sizeBytes, int kind);
hipError_t pyhip_slow_hipMemset(void* dst, int value, size_t sizeBytes);
hipError_t pyhip_slow_hipEventRecord(void* event, void* stream);
hipError_t pyhip_slow_hipEventQuery(void* event);
hipError_t pyhip_slow_hipEventSynchronize(void* event);
hipError_t pyhip_slow_hipEventElapsedTime(float* ms, void* start, void* stop);
hipError_t pyhip_slow_hipMemcpyAsync(void* dst, const void* src, size_t sizeBytes, int kind, void* stream);
hipError_t pyhip_slow_hipMemsetAsync(void* dst, int value, size_t sizeBytes, void* stream);
hipError_t pyhip_slow_hipMemsetD8(void* dst, unsigned char value, size_t count);
hipError_t pyhip_slow_hipMemsetD16(void* dst, unsigned short value, size_t count);
hipError_t pyhip_slow_hipMemsetD32(void* dst, int value, size_t count);
hipError_t pyhip_slow_hipMemsetD8Async(void* dst, unsigned char value, size_t count, void* stream);
hipError_t pyhip_slow_hipMemsetD16Async(void* dst, unsigned short value, size_t count, void* stream);
hipError_t pyhip_slow_hipMemsetD32Async(void* dst, int value, size_t count, void* stream);
