/* HIP 5.2's structs as the shim's C code and pyhip/capi see them (transcribed from hip_runtime_api.h and
 * driver_types.h; handles are void*, enums int — same sizes and alignment, so the same layout). */
typedef struct { uint32_t x, y, z; } dim3;
typedef int hipError_t;
typedef struct { void* ptr; size_t pitch; size_t xsize; size_t ysize; } hipPitchedPtr;
typedef struct { size_t width; size_t height; size_t depth; } hipExtent;
typedef struct { size_t x; size_t y; size_t z; } hipPos;
typedef struct {
    void* srcArray; hipPos srcPos; hipPitchedPtr srcPtr;
    void* dstArray; hipPos dstPos; hipPitchedPtr dstPtr;
    hipExtent extent; int kind;
} hipMemcpy3DParms;
typedef struct {
    unsigned int srcXInBytes, srcY, srcZ, srcLOD; int srcMemoryType;
    const void* srcHost; void* srcDevice; void* srcArray; unsigned int srcPitch, srcHeight;
    unsigned int dstXInBytes, dstY, dstZ, dstLOD; int dstMemoryType;
    void* dstHost; void* dstDevice; void* dstArray; unsigned int dstPitch, dstHeight;
    unsigned int WidthInBytes, Height, Depth;
} HIP_MEMCPY3D;
typedef struct {
    size_t srcXInBytes; size_t srcY; int srcMemoryType; const void* srcHost; void* srcDevice; void* srcArray;
    size_t srcPitch;
    size_t dstXInBytes; size_t dstY; int dstMemoryType; void* dstHost; void* dstDevice; void* dstArray;
    size_t dstPitch;
    size_t WidthInBytes; size_t Height;
} hip_Memcpy2D;
typedef struct {
    int memoryType; int device; void* devicePointer; void* hostPointer; int isManaged; unsigned allocationFlags;
} hipPointerAttribute_t;
typedef struct { char reserved[64]; } hipIpcMemHandle_t;
typedef struct { char reserved[64]; } hipIpcEventHandle_t;
typedef struct { char bytes[16]; } hipUUID;
typedef struct { void* func; dim3 gridDim; dim3 blockDim; void** args; size_t sharedMem; void* stream; } hipLaunchParams;
typedef struct { int type; int id; } hipMemLocation;
typedef struct { hipMemLocation location; int flags; } hipMemAccessDesc;
typedef struct {
    int allocType; int handleTypes; hipMemLocation location; void* win32SecurityAttributes;
    unsigned char reserved[64];
} hipMemPoolProps;
typedef struct { unsigned char reserved[64]; } hipMemPoolPtrExportData;
typedef struct { void (*fn)(void*); void* userData; } hipHostNodeParams;
typedef struct {
    dim3 blockDim; void** extra; void* func; dim3 gridDim; void** kernelParams; unsigned int sharedMemBytes;
} hipKernelNodeParams;
typedef struct {
    void* dst; unsigned int elementSize; size_t height; size_t pitch; unsigned int value; size_t width;
} hipMemsetParams;
typedef struct { int x; int y; int z; int w; int f; } hipChannelFormatDesc;
