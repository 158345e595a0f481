/* module API, function attributes, occupancy: pyhip/capi/module.py */
hipError_t hipModuleLoad(void** module, const char* fname);
hipError_t hipModuleLoadData(void** module, const void* image);
hipError_t hipModuleLoadDataEx(void** module, const void* image, unsigned int numOptions, void* options,
                               void** optionValues);
hipError_t hipModuleUnload(void* module);
hipError_t hipModuleGetFunction(void** function, void* module, const char* kname);
hipError_t hipModuleGetGlobal(void** dptr, size_t* bytes, void* hmod, const char* name);
hipError_t hipModuleLaunchKernel(void* f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ,
                                 unsigned int blockDimX, unsigned int blockDimY, unsigned int blockDimZ,
                                 unsigned int sharedMemBytes, void* stream, void** kernelParams, void** extra);
hipError_t _Z24hipExtModuleLaunchKernelP18ihipModuleSymbol_tjjjjjjmP12ihipStream_tPPvS4_P11ihipEvent_tS6_j(
    void* f, uint32_t globalWorkSizeX, uint32_t globalWorkSizeY, uint32_t globalWorkSizeZ, uint32_t localWorkSizeX,
    uint32_t localWorkSizeY, uint32_t localWorkSizeZ, size_t sharedMemBytes, void* hStream, void** kernelParams,
    void** extra, void* startEvent, void* stopEvent, uint32_t flags);
hipError_t hipFuncGetAttributes(void* attr, const void* func);
hipError_t hipFuncGetAttribute(int* value, int attrib, void* hfunc);
hipError_t hipOccupancyMaxPotentialBlockSize(int* gridSize, int* blockSize, const void* f, size_t dynSharedMemPerBlk,
                                             int blockSizeLimit);
hipError_t hipOccupancyMaxActiveBlocksPerMultiprocessor(int* numBlocks, const void* f, int blockSize,
                                                        size_t dynSharedMemPerBlk);
