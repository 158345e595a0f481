"""Numbers of the libhsakmt 5.2 ABI (hsakmttypes.h) that pyhip's drop-in thunk needs: status codes, the bit
fields that native/hsakmt/hsakmt_abi.h keeps as plain 32-bit words, heap/event/queue/pointer types."""
from __future__ import annotations

# HSAKMT_STATUS
SUCCESS, ERROR, DRIVER_MISMATCH, INVALID_PARAMETER, INVALID_HANDLE, INVALID_NODE_UNIT = 0, 1, 2, 3, 4, 5
NO_MEMORY, BUFFER_TOO_SMALL, NOT_IMPLEMENTED, NOT_SUPPORTED, UNAVAILABLE, OUT_OF_RESOURCES = 6, 7, 10, 11, 12, 13
KERNEL_IO_CHANNEL_NOT_OPENED, KERNEL_COMMUNICATION_ERROR, KERNEL_ALREADY_OPENED = 20, 21, 22
WAIT_FAILURE, WAIT_TIMEOUT = 30, 31
MEMORY_ALREADY_REGISTERED, MEMORY_NOT_REGISTERED, MEMORY_ALIGNMENT = 35, 36, 37


class KfdError(Exception):
    """A KFD call that fails: ``status`` is the HSAKMT_STATUS the thunk returns, ``errno`` what the
    kernel driver's ioctl would have set (for the log)."""

    def __init__(self, status: int, message: str, errno: str = "EINVAL"):
        super().__init__(message)
        self.status = status
        self.errno = errno


def bits(value: int, layout: dict[str, tuple[int, int]]) -> dict[str, int]:
    """Decode a bit-field word: ``layout`` maps name -> (first bit, width)."""
    return {k: value >> lo & ((1 << w) - 1) for k, (lo, w) in layout.items()}


def pack_bits(layout: dict[str, tuple[int, int]], **fields: int) -> int:
    v = 0
    for k, x in fields.items():
        lo, w = layout[k]
        if x >> w:
            raise ValueError(f"{k}={x} does not fit in {w} bits")
        v |= x << lo
    return v


# HSA_CAPABILITY (HsaNodeProperties.Capability)
CAPABILITY = {
    "HotPluggable": (0, 1), "HSAMMUPresent": (1, 1), "SharedWithGraphics": (2, 1), "QueueSizePowerOfTwo": (3, 1),
    "QueueSize32bit": (4, 1), "QueueIdleEvent": (5, 1), "VALimit": (6, 1), "WatchPointsSupported": (7, 1),
    "WatchPointsTotalBits": (8, 4), "DoorbellType": (12, 2), "AQLQueueDoubleMap": (14, 1),
    "DebugTrapSupported": (15, 1), "WaveLaunchTrapOverrideSupported": (16, 1), "WaveLaunchModeSupported": (17, 1),
    "PreciseMemoryOperationsSupported": (18, 1), "DEPRECATED_SRAM_EDCSupport": (19, 1), "Mem_EDCSupport": (20, 1),
    "RASEventNotify": (21, 1), "ASICRevision": (22, 4), "SRAM_EDCSupport": (26, 1), "SVMAPISupported": (27, 1),
    "CoherentHostAccess": (28, 1), "DebugSupportedFirmware": (29, 1),
}
# HSA_ENGINE_ID
ENGINE_ID = {"uCode": (0, 10), "Major": (10, 6), "Minor": (16, 8), "Stepping": (24, 8)}
# HsaMemFlags
MEM_FLAGS = {
    "NonPaged": (0, 1), "CachePolicy": (1, 2), "ReadOnly": (3, 1), "PageSize": (4, 2), "HostAccess": (6, 1),
    "NoSubstitute": (7, 1), "GDSMemory": (8, 1), "Scratch": (9, 1), "AtomicAccessFull": (10, 1),
    "AtomicAccessPartial": (11, 1), "ExecuteAccess": (12, 1), "CoarseGrain": (13, 1), "AQLQueueMemory": (14, 1),
    "FixedAddress": (15, 1), "NoNUMABind": (16, 1), "Uncached": (17, 1),
}
# HsaMemMapFlags
MEM_MAP_FLAGS = {"CachePolicy": (1, 2), "ReadOnly": (3, 1), "PageSize": (4, 2), "HostAccess": (6, 1),
                 "Migrate": (7, 1), "Probe": (8, 1)}
# HsaCacheType
CACHE_TYPE = {"Data": (0, 1), "Instruction": (1, 1), "CPU": (2, 1), "HSACU": (3, 1)}
# HsaAccessAttributeFailure
FAULT = {"NotPresent": (0, 1), "ReadOnly": (1, 1), "NoExecute": (2, 1), "GpuAccess": (3, 1), "ECC": (4, 1),
         "Imprecise": (5, 1), "ErrorType": (6, 3)}

PAGE_SIZES = (4096, 64 << 10, 2 << 20, 1 << 30)    # HSA_PAGE_SIZE_4KB .. _1GB
SIGNAL_EVENT_LIMIT = 4096                          # amdkfd's KFD_SIGNAL_EVENT_LIMIT: u64 mailboxes of the event page

# HSA_HEAPTYPE
HEAP_SYSTEM, HEAP_FB_PUBLIC, HEAP_FB_PRIVATE, HEAP_GDS, HEAP_LDS, HEAP_SCRATCH, HEAP_SVM, HEAP_MMIO = range(8)
# HSA_IOLINKTYPE
IOLINK_PCIE, IOLINK_XGMI = 2, 11
# HSA_QUEUE_TYPE
QUEUE_COMPUTE, QUEUE_SDMA, QUEUE_SDMA_XGMI, QUEUE_COMPUTE_AQL = 1, 2, 5, 21
QUEUE_PRIORITY_MIN, QUEUE_PRIORITY_MAX = -3, 3
KFD_PRIORITY = (0, 3, 5, 7, 9, 11, 15)               # thunk priority -3..3 -> KFD 0..15
# HSA_EVENTTYPE
EVENT_SIGNAL, EVENT_HW_EXCEPTION, EVENT_DEBUG, EVENT_MEMORY = 0, 3, 5, 8
# HSA_POINTER_TYPE
PTR_UNKNOWN, PTR_ALLOCATED, PTR_REGISTERED_USER, PTR_REGISTERED_GRAPHICS, PTR_REGISTERED_SHARED = range(5)
# HSA_SVM_ATTR_TYPE
SVM_PREFERRED_LOC, SVM_PREFETCH_LOC, SVM_ACCESS, SVM_ACCESS_IN_PLACE, SVM_NO_ACCESS, SVM_SET_FLAGS, \
    SVM_CLR_FLAGS, SVM_GRANULARITY = range(8)

PROT_NONE, PROT_READ, PROT_WRITE = 0, 1, 2
