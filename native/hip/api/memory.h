/* 1-D memory: pyhip/capi/memory.py */
hipError_t hipMalloc(void** ptr, size_t size);
hipError_t hipFree(void* ptr);
hipError_t hipMallocManaged(void** dev_ptr, size_t size, unsigned int flags);
hipError_t hipHostMalloc(void** ptr, size_t size, unsigned int flags);
hipError_t hipMallocHost(void** ptr, size_t size);
hipError_t hipHostAlloc(void** ptr, size_t size, unsigned int flags);
hipError_t hipHostFree(void* ptr);
hipError_t hipFreeHost(void* ptr);
hipError_t hipMemcpy(void* dst, const void* src, size_t sizeBytes, int kind);
hipError_t hipMemcpyAsync(void* dst, const void* src, size_t sizeBytes, int kind, void* stream);
hipError_t hipMemset(void* dst, int value, size_t sizeBytes);
hipError_t hipMemsetAsync(void* dst, int value, size_t sizeBytes, void* stream);
hipError_t hipMemsetD8(void* dest, unsigned char value, size_t count);
hipError_t hipMemsetD16(void* dest, unsigned short value, size_t count);
hipError_t hipMemsetD32(void* dest, int value, size_t count);
hipError_t hipMemsetD8Async(void* dest, unsigned char value, size_t count, void* stream);
hipError_t hipMemsetD16Async(void* dest, unsigned short value, size_t count, void* stream);
hipError_t hipMemsetD32Async(void* dest, int value, size_t count, void* stream);
hipError_t hipMemGetInfo(size_t* free, size_t* total);
hipError_t hipMemcpyToSymbol(const void* symbol, const void* src, size_t sizeBytes, size_t offset, int kind);
hipError_t hipMemcpyFromSymbol(void* dst, const void* symbol, size_t sizeBytes, size_t offset, int kind);
hipError_t hipMemcpyToSymbolAsync(const void* symbol, const void* src, size_t sizeBytes, size_t offset, int kind,
                                  void* stream);
hipError_t hipMemcpyFromSymbolAsync(void* dst, const void* symbol, size_t sizeBytes, size_t offset, int kind,
                                    void* stream);
hipError_t hipGetSymbolAddress(void** devPtr, const void* symbol);
hipError_t hipGetSymbolSize(size_t* size, const void* symbol);
