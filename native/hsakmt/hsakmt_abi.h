/* The libhsakmt 5.2 ABI as pyhip's drop-in thunk uses it: every structure ROCr passes across the
 * hsaKmt* interface, laid out like the ROCm 5.2 hsakmttypes.h (4-byte packing; bit-field unions are
 * plain 32-bit words here, their bits are named in pyhip/thunk/abi.py).  tests/thunk/test_abi.py compiles
 * a program against Debian's hsakmttypes.h and checks every size and offset against this file. */
#pragma pack(push, 4)

typedef int HSAKMT_STATUS;
typedef uint64_t HSA_QUEUEID;

typedef struct { uint32_t KernelInterfaceMajorVersion, KernelInterfaceMinorVersion; } HsaVersionInfo;

typedef struct { uint32_t NumNodes, PlatformOem, PlatformId, PlatformRev; } HsaSystemProperties;

typedef struct {
    uint32_t NumCPUCores, NumFComputeCores, NumMemoryBanks, NumCaches, NumIOLinks;
    uint32_t CComputeIdLo, FComputeIdLo;
    uint32_t Capability;                  /* HSA_CAPABILITY bits */
    uint32_t MaxWavesPerSIMD, LDSSizeInKB, GDSSizeInKB, WaveFrontSize, NumShaderBanks, NumArrays;
    uint32_t NumCUPerArray, NumSIMDPerCU, MaxSlotsScratchCU;
    uint32_t EngineId;                    /* HSA_ENGINE_ID: uCode:10 Major:6 Minor:8 Stepping:8 */
    uint16_t VendorId, DeviceId;
    uint32_t LocationId;
    uint64_t LocalMemSize;
    uint32_t MaxEngineClockMhzFCompute, MaxEngineClockMhzCCompute;
    int32_t DrmRenderMinor;
    uint16_t MarketingName[64];
    uint8_t AMDName[64];
    uint32_t uCodeEngineVersions;
    uint64_t DebugProperties;
    uint64_t HiveID;
    uint32_t NumSdmaEngines, NumSdmaXgmiEngines;
    uint8_t NumSdmaQueuesPerEngine, NumCpQueues, NumGws, Reserved2;
    uint32_t Domain;
    uint64_t UniqueID;
    uint32_t VGPRSizePerCU, SGPRSizePerCU;
    uint8_t Reserved[12];
} HsaNodeProperties;

typedef struct {
    uint32_t HeapType;
    uint64_t SizeInBytes;
    uint32_t Flags;
    uint32_t Width, MemoryClockMax;
    uint64_t VirtualBaseAddress;
} HsaMemoryProperties;

typedef struct {
    uint32_t ProcessorIdLow, CacheLevel, CacheSize, CacheLineSize, CacheLinesPerTag, CacheAssociativity;
    uint32_t CacheLatency;
    uint32_t CacheType;                   /* Data:1 Instruction:1 CPU:1 HSACU:1 */
    uint32_t SiblingMap[256];
} HsaCacheProperties;

typedef struct {
    uint32_t IoLinkType, VersionMajor, VersionMinor, NodeFrom, NodeTo, Weight;
    uint32_t MinimumLatency, MaximumLatency, MinimumBandwidth, MaximumBandwidth, RecTransferSize;
    uint32_t Flags;
} HsaIoLinkProperties;

typedef struct { uint32_t Value; } HsaMemFlags;       /* bit names in pyhip/thunk/abi.py */
typedef struct { uint32_t Value; } HsaMemMapFlags;

typedef struct {
    void* MemoryAddress;
    uint64_t SizeInBytes;
    const void* Metadata;
    uint32_t MetadataSizeInBytes, Reserved;
} HsaGraphicsResourceInfo;

typedef struct {
    uint64_t QueueId;
    uint64_t QueueDoorBell;               /* Queue_DoorBell / Queue_DoorBell_aql */
    uint64_t QueueWptrValue;              /* Queue_write_ptr_aql */
    uint64_t QueueRptrValue;              /* Queue_read_ptr_aql */
    int64_t* ErrorReason;
} HsaQueueResource;

typedef struct {
    uint32_t ControlStackOffset, ControlStackSize, WaveStateOffset, WaveStateSize, DebugOffset, DebugSize;
    int64_t* ErrorReason;
    uint32_t ErrorEventId, Reserved1;
} HsaUserContextSaveAreaHeader;

typedef struct {
    uint32_t QueueDetailError, QueueTypeExtended, NumCUAssigned;
    uint32_t* CUMaskInfo;
    uint32_t* UserContextSaveArea;
    uint64_t SaveAreaSizeInBytes;
    uint32_t* ControlStackTop;
    uint64_t ControlStackUsedInBytes;
    HsaUserContextSaveAreaHeader* SaveAreaHeader;
    uint64_t Reserved2;
} HsaQueueInfo;

typedef struct { void* SyncVar; uint64_t SyncVarSize; } HsaSyncVar;   /* SyncVar: a union of pointer and u64 there */

typedef struct {
    uint32_t NodeId;
    uint64_t VirtualAddress;
    uint32_t Failure;                     /* NotPresent:1 ReadOnly:1 NoExecute:1 GpuAccess:1 ECC:1 Imprecise:1 ErrorType:3 */
    uint32_t Flags;
} HsaMemoryAccessFault;

typedef struct { uint32_t NodeId, Device, Flags; } HsaDeviceStateChange;

typedef union {
    HsaSyncVar SyncVar;
    uint32_t NodeChangeState;
    HsaDeviceStateChange DeviceState;
    HsaMemoryAccessFault MemoryAccessFault;
} HsaEventPayload;

typedef struct {
    uint32_t EventType;
    HsaEventPayload EventData;
    uint64_t HWData1, HWData2;
    uint32_t HWData3;
} HsaEventData;

typedef struct {
    uint32_t EventType, NodeId;
    HsaSyncVar SyncVar;
} HsaEventDescriptor;

typedef struct { uint32_t EventId; HsaEventData EventData; } HsaEvent;

typedef struct {
    uint64_t GPUClockCounter, CPUClockCounter, SystemClockCounter, SystemClockFrequencyHz;
} HsaClockCounters;

typedef struct {
    uint32_t* TileConfig;
    uint32_t* MacroTileConfig;
    uint32_t NumTileConfigs, NumMacroTileConfigs, GbAddrConfig, NumBanks, NumRanks;
    uint32_t Reserved[7];
} HsaGpuTileConfig;

typedef struct {
    uint32_t Type, Node;
    HsaMemFlags MemFlags;
    void* CPUAddress;
    uint64_t GPUAddress, SizeInBytes;
    uint32_t NRegisteredNodes, NMappedNodes;
    const uint32_t* RegisteredNodes;
    const uint32_t* MappedNodes;
    void* UserData;
} HsaPointerInfo;

typedef struct { uint32_t Handle[8]; } HsaSharedMemoryHandle;
typedef struct { void* MemoryAddress; uint64_t SizeInBytes; } HsaMemoryRange;
typedef struct { uint32_t type, value; } HSA_SVM_ATTRIBUTE;

#pragma pack(pop)
