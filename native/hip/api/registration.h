/* registration (ELF constructors of hipcc-built programs) and the launch entry points: pyhip/capi/registration.py */
void** __hipRegisterFatBinary(const void* data);
void __hipRegisterFunction(void** modules, const void* hostFunction, char* deviceFunction, const char* deviceName,
                           unsigned int threadLimit, void* tid, void* bid, void* blockDim, void* gridDim, int* wSize);
void __hipRegisterVar(void** modules, void* var, char* hostVar, char* deviceVar, int ext, size_t size, int constant,
                      int global);
void __hipRegisterManagedVar(void* hipModule, void** pointer, void* init_value, const char* name, size_t size,
                             unsigned align);
void __hipUnregisterFatBinary(void** modules);
hipError_t pyhip_slow_hipLaunchKernel(const void* function_address, dim3 numBlocks, dim3 dimBlocks, void** args,
                                      size_t sharedMemBytes, void* stream);
hipError_t hipLaunchKernel_spt(const void* function_address, dim3 numBlocks, dim3 dimBlocks, void** args,
                               size_t sharedMemBytes, void* stream);
hipError_t hipConfigureCall(dim3 gridDim, dim3 blockDim, size_t sharedMem, void* stream);
hipError_t hipSetupArgument(const void* arg, size_t size, size_t offset);
hipError_t hipLaunchByPtr(const void* func);
