"""cffi embedding build of pyhip's drop-in ``libhsakmt.so.1`` (the ROCm 5.2 KFD thunk over the emulated GPU).

Every one of the 67 exports of AMD's libhsakmt.so.1 5.2.3 (``exports.txt``, version node HSAKMT_1 from
``libhsakmt.map``) is defined with its 5.2 prototype, plus the event-age waits of later libhsakmt
(``hsaKmtWaitOnEvent_Ext``, ``hsaKmtWaitOnMultipleEvents_Ext``; ``later`` in exports.txt):

* events, event waits and clock counters are C (``events.c``): ROCr blocks in them on its own threads;
* the rest of what ROCr 5.2 imports is a C wrapper (the KFD-open check) around a Python implementation
  (``pyhip_kfd_py_<name>``, ``embedding_api``) in ``pyhip.thunk``;
* the remaining exports (debugger, PMC, SPM, cross-process VM access) return HSAKMT_STATUS_NOT_SUPPORTED.

Structures are laid out by ``hsakmt_abi.h`` (4-byte packing, as the 5.2 hsakmttypes.h)."""
from __future__ import annotations

import hashlib
import re
from pathlib import Path

import cffi

HERE = Path(__file__).resolve().parent

# The 5.2 prototypes (hsakmt.h), by name: "<parameters>".  All return HSAKMT_STATUS.
PROTOTYPES = {
    "hsaKmtOpenKFD": "void",
    "hsaKmtCloseKFD": "void",
    "hsaKmtGetVersion": "HsaVersionInfo* VersionInfo",
    "hsaKmtAcquireSystemProperties": "HsaSystemProperties* SystemProperties",
    "hsaKmtReleaseSystemProperties": "void",
    "hsaKmtGetNodeProperties": "uint32_t NodeId, HsaNodeProperties* NodeProperties",
    "hsaKmtGetNodeMemoryProperties": "uint32_t NodeId, uint32_t NumBanks, HsaMemoryProperties* MemoryProperties",
    "hsaKmtGetNodeCacheProperties": "uint32_t NodeId, uint32_t ProcessorId, uint32_t NumCaches, "
                                    "HsaCacheProperties* CacheProperties",
    "hsaKmtGetNodeIoLinkProperties": "uint32_t NodeId, uint32_t NumIoLinks, HsaIoLinkProperties* IoLinkProperties",
    "hsaKmtCreateEvent": "HsaEventDescriptor* EventDesc, bool ManualReset, bool IsSignaled, HsaEvent** Event",
    "hsaKmtDestroyEvent": "HsaEvent* Event",
    "hsaKmtSetEvent": "HsaEvent* Event",
    "hsaKmtResetEvent": "HsaEvent* Event",
    "hsaKmtQueryEventState": "HsaEvent* Event",
    "hsaKmtWaitOnEvent": "HsaEvent* Event, uint32_t Milliseconds",
    "hsaKmtWaitOnMultipleEvents": "HsaEvent* Events[], uint32_t NumEvents, bool WaitOnAll, uint32_t Milliseconds",
    "hsaKmtWaitOnEvent_Ext": "HsaEvent* Event, uint32_t Milliseconds, uint64_t* event_age",
    "hsaKmtWaitOnMultipleEvents_Ext": "HsaEvent* Events[], uint32_t NumEvents, bool WaitOnAll, "
                                      "uint32_t Milliseconds, uint64_t* event_age",
    "hsaKmtCreateQueue": "uint32_t NodeId, uint32_t Type, uint32_t QueuePercentage, int32_t Priority, "
                         "void* QueueAddress, uint64_t QueueSizeInBytes, HsaEvent* Event, "
                         "HsaQueueResource* QueueResource",
    "hsaKmtUpdateQueue": "uint64_t QueueId, uint32_t QueuePercentage, int32_t Priority, void* QueueAddress, "
                         "uint64_t QueueSize, HsaEvent* Event",
    "hsaKmtDestroyQueue": "uint64_t QueueId",
    "hsaKmtSetQueueCUMask": "uint64_t QueueId, uint32_t CUMaskCount, uint32_t* QueueCUMask",
    "hsaKmtGetQueueInfo": "uint64_t QueueId, HsaQueueInfo* QueueInfo",
    "hsaKmtSetMemoryPolicy": "uint32_t Node, uint32_t DefaultPolicy, uint32_t AlternatePolicy, "
                             "void* MemoryAddressAlternate, uint64_t MemorySizeInBytes",
    "hsaKmtAllocMemory": "uint32_t PreferredNode, uint64_t SizeInBytes, HsaMemFlags MemFlags, void** MemoryAddress",
    "hsaKmtFreeMemory": "void* MemoryAddress, uint64_t SizeInBytes",
    "hsaKmtRegisterMemory": "void* MemoryAddress, uint64_t MemorySizeInBytes",
    "hsaKmtRegisterMemoryToNodes": "void* MemoryAddress, uint64_t MemorySizeInBytes, uint64_t NumberOfNodes, "
                                   "uint32_t* NodeArray",
    "hsaKmtRegisterMemoryWithFlags": "void* MemoryAddress, uint64_t MemorySizeInBytes, HsaMemFlags MemFlags",
    "hsaKmtRegisterGraphicsHandleToNodes": "uint64_t GraphicsResourceHandle, "
                                           "HsaGraphicsResourceInfo* GraphicsResourceInfo, uint64_t NumberOfNodes, "
                                           "uint32_t* NodeArray",
    "hsaKmtShareMemory": "void* MemoryAddress, uint64_t SizeInBytes, HsaSharedMemoryHandle* SharedMemoryHandle",
    "hsaKmtRegisterSharedHandle": "const HsaSharedMemoryHandle* SharedMemoryHandle, void** MemoryAddress, "
                                  "uint64_t* SizeInBytes",
    "hsaKmtRegisterSharedHandleToNodes": "const HsaSharedMemoryHandle* SharedMemoryHandle, void** MemoryAddress, "
                                         "uint64_t* SizeInBytes, uint64_t NumberOfNodes, uint32_t* NodeArray",
    "hsaKmtProcessVMRead": "uint32_t Pid, HsaMemoryRange* LocalMemoryArray, uint64_t LocalMemoryArrayCount, "
                           "HsaMemoryRange* RemoteMemoryArray, uint64_t RemoteMemoryArrayCount, uint64_t* SizeCopied",
    "hsaKmtProcessVMWrite": "uint32_t Pid, HsaMemoryRange* LocalMemoryArray, uint64_t LocalMemoryArrayCount, "
                            "HsaMemoryRange* RemoteMemoryArray, uint64_t RemoteMemoryArrayCount, "
                            "uint64_t* SizeCopied",
    "hsaKmtDeregisterMemory": "void* MemoryAddress",
    "hsaKmtMapMemoryToGPU": "void* MemoryAddress, uint64_t MemorySizeInBytes, uint64_t* AlternateVAGPU",
    "hsaKmtMapMemoryToGPUNodes": "void* MemoryAddress, uint64_t MemorySizeInBytes, uint64_t* AlternateVAGPU, "
                                 "HsaMemMapFlags MemMapFlags, uint64_t NumberOfNodes, uint32_t* NodeArray",
    "hsaKmtUnmapMemoryToGPU": "void* MemoryAddress",
    "hsaKmtMapGraphicHandle": "uint32_t NodeId, uint64_t GraphicDeviceHandle, uint64_t GraphicResourceHandle, "
                              "uint64_t GraphicResourceOffset, uint64_t GraphicResourceSize, "
                              "uint64_t* FlatMemoryAddress",
    "hsaKmtUnmapGraphicHandle": "uint32_t NodeId, uint64_t FlatMemoryAddress, uint64_t SizeInBytes",
    "hsaKmtAllocQueueGWS": "uint64_t QueueId, uint32_t nGWS, uint32_t* firstGWS",
    "hsaKmtDbgRegister": "uint32_t NodeId",
    "hsaKmtDbgUnregister": "uint32_t NodeId",
    "hsaKmtDbgWavefrontControl": "uint32_t NodeId, uint32_t Operand, uint32_t Mode, uint32_t TrapId, "
                                 "void* DbgWaveMsgRing",
    "hsaKmtDbgAddressWatch": "uint32_t NodeId, uint32_t NumWatchPoints, uint32_t* WatchMode, void** WatchAddress, "
                             "uint64_t* WatchMask, HsaEvent** WatchEvent",
    "hsaKmtRuntimeEnable": "void* rDebug, bool setupTtmp",
    "hsaKmtRuntimeDisable": "void",
    "hsaKmtGetKernelDebugTrapVersionInfo": "uint32_t* Major, uint32_t* Minor",
    "hsaKmtGetClockCounters": "uint32_t NodeId, HsaClockCounters* Counters",
    "hsaKmtPmcGetCounterProperties": "uint32_t NodeId, void** CounterProperties",
    "hsaKmtPmcRegisterTrace": "uint32_t NodeId, uint32_t NumberOfCounters, void* Counters, void* TraceRoot",
    "hsaKmtPmcUnregisterTrace": "uint32_t NodeId, uint64_t TraceId",
    "hsaKmtPmcAcquireTraceAccess": "uint32_t NodeId, uint64_t TraceId",
    "hsaKmtPmcReleaseTraceAccess": "uint32_t NodeId, uint64_t TraceId",
    "hsaKmtPmcStartTrace": "uint64_t TraceId, void* TraceBuffer, uint64_t TraceBufferSizeBytes",
    "hsaKmtPmcQueryTrace": "uint64_t TraceId",
    "hsaKmtPmcStopTrace": "uint64_t TraceId",
    "hsaKmtSetTrapHandler": "uint32_t NodeId, void* TrapHandlerBaseAddress, uint64_t TrapHandlerSizeInBytes, "
                            "void* TrapBufferBaseAddress, uint64_t TrapBufferSizeInBytes",
    "hsaKmtGetTileConfig": "uint32_t NodeId, HsaGpuTileConfig* config",
    "hsaKmtQueryPointerInfo": "const void* Pointer, HsaPointerInfo* PointerInfo",
    "hsaKmtSetMemoryUserData": "const void* Pointer, void* UserData",
    "hsaKmtSPMAcquire": "uint32_t PreferredNode",
    "hsaKmtSPMRelease": "uint32_t PreferredNode",
    "hsaKmtSPMSetDestBuffer": "uint32_t PreferredNode, uint32_t SizeInBytes, uint32_t* timeout, "
                              "uint32_t* SizeCopied, void* DestMemoryAddress, bool* isSPMDataLoss",
    "hsaKmtSVMSetAttr": "void* start_addr, uint64_t size, unsigned int nattr, HSA_SVM_ATTRIBUTE* attrs",
    "hsaKmtSVMGetAttr": "void* start_addr, uint64_t size, unsigned int nattr, HSA_SVM_ATTRIBUTE* attrs",
    "hsaKmtSetXNACKMode": "int32_t enable",
    "hsaKmtGetXNACKMode": "int32_t* enable",
}

# implemented in C (events.c)
C_IMPLEMENTED = {"hsaKmtCreateEvent", "hsaKmtDestroyEvent", "hsaKmtSetEvent", "hsaKmtResetEvent",
                 "hsaKmtQueryEventState", "hsaKmtWaitOnEvent", "hsaKmtWaitOnMultipleEvents",
                 "hsaKmtWaitOnEvent_Ext", "hsaKmtWaitOnMultipleEvents_Ext",
                 "hsaKmtGetClockCounters"}
# implemented in C around the KFD-open count, with Python behind (the first OpenKFD starts Python)
OPEN_CLOSE = {"hsaKmtOpenKFD", "hsaKmtCloseKFD"}
# not supported by this KFD (exported, HSAKMT_STATUS_NOT_SUPPORTED): nothing ROCr 5.2 imports
NOT_SUPPORTED = {"hsaKmtDbgRegister", "hsaKmtDbgUnregister", "hsaKmtDbgWavefrontControl", "hsaKmtDbgAddressWatch",
                 "hsaKmtGetKernelDebugTrapVersionInfo", "hsaKmtPmcGetCounterProperties", "hsaKmtPmcRegisterTrace",
                 "hsaKmtPmcUnregisterTrace", "hsaKmtPmcAcquireTraceAccess", "hsaKmtPmcReleaseTraceAccess",
                 "hsaKmtPmcStartTrace", "hsaKmtPmcQueryTrace", "hsaKmtPmcStopTrace", "hsaKmtSPMAcquire",
                 "hsaKmtSPMRelease", "hsaKmtSPMSetDestBuffer", "hsaKmtProcessVMRead", "hsaKmtProcessVMWrite",
                 "hsaKmtMapGraphicHandle",
                 "hsaKmtUnmapGraphicHandle", "hsaKmtGetQueueInfo"}

# C helpers the Python side calls (events.c)
C_API = """
uint64_t pyhip_kfd_gpu_clock(void);
int pyhip_kfd_is_open(void);
void pyhip_kfd_set_open(int open);
int pyhip_kfd_interrupt(uint32_t event_id);
int pyhip_kfd_memory_fault(uint32_t node_id, uint64_t va, uint32_t failure, uint32_t flags);
int pyhip_kfd_event_count(void);
void pyhip_kfd_set_strict_events(int strict);
void* pyhip_kfd_event_page(void);
void* pyhip_kfd_mmap(uint64_t size, int prot, uint64_t fixed);
int pyhip_kfd_munmap(void* addr, uint64_t size);
int pyhip_kfd_mprotect(void* addr, uint64_t size, int prot);
uint32_t pyhip_kfd_xchg_u32(uint64_t addr, uint32_t value);
"""

MMAP_C = r"""
#include <sys/mman.h>
/* Anonymous mappings for the thunk's memory: GPU virtual address = host address.  fixed != 0 maps exactly
 * there (MAP_FIXED_NOREPLACE: fails rather than clobbering a mapping).  Returns NULL on failure. */
void* pyhip_kfd_mmap(uint64_t size, int prot, uint64_t fixed) {
    int flags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE;
#ifdef MAP_FIXED_NOREPLACE
    if (fixed) flags |= MAP_FIXED_NOREPLACE;
#endif
    void* p = mmap(fixed ? (void*)(uintptr_t)fixed : NULL, size, prot, flags, -1, 0);
    if (p == MAP_FAILED) return NULL;
    if (fixed && (uint64_t)(uintptr_t)p != fixed) { munmap(p, size); return NULL; }
    return p;
}
int pyhip_kfd_munmap(void* addr, uint64_t size) { return munmap(addr, size); }
int pyhip_kfd_mprotect(void* addr, uint64_t size, int prot) { return mprotect(addr, size, prot); }
/* An atomic exchange of a 32-bit word (the HDP flush register: taking its value never loses a write). */
uint32_t pyhip_kfd_xchg_u32(uint64_t addr, uint32_t value) {
    return __atomic_exchange_n((uint32_t*)(uintptr_t)addr, value, __ATOMIC_ACQ_REL);
}
"""


def exports() -> list[tuple[str, bool]]:
    out = []
    for line in (HERE / "exports.txt").read_text().splitlines():
        if line and not line.startswith("#"):
            name, who = line.split()
            out.append((name, who == "rocr"))
    return out


def python_implemented() -> list[str]:
    return [n for n, _ in exports() if n not in C_IMPLEMENTED | NOT_SUPPORTED | OPEN_CLOSE]


def _args(params: str) -> str:
    """Parameter names of a prototype, for the forwarding call."""
    if params == "void":
        return ""
    return ", ".join(re.sub(r"\[\]$", "", p.strip().split()[-1]).lstrip("*") for p in params.split(","))


def abi_types() -> str:
    """hsakmt_abi.h for cffi's cdef: without preprocessor lines, and every structure open ("...;") so cffi
    takes the packed layout from the C compiler."""
    text = "\n".join(l for l in (HERE / "hsakmt_abi.h").read_text().splitlines() if not l.startswith("#"))
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return re.sub(r"\}\s*(\w+);", r"...; } \1;", text)


def _source() -> str:
    names = [n for n, _ in exports()]
    missing = set(names) - set(PROTOTYPES)
    if missing:
        raise RuntimeError(f"no prototype for {sorted(missing)}")
    out = ["#include <stdbool.h>", "#include <stdint.h>", "#include <stddef.h>",
           (HERE / "hsakmt_abi.h").read_text(), (HERE / "events.c").read_text(), MMAP_C]
    out.append("/* the Python implementations (embedding_api, defined by cffi further down) */")
    out.append(embedding_api())
    out.append("/* generated: the KFD-open check around each Python implementation */")
    for n in python_implemented():
        p = PROTOTYPES[n]
        out.append(f"HSAKMT_STATUS {n}({p}) {{ if (!pyhip_kfd_is_open()) return 20; "
                   f"return pyhip_kfd_py_{n[6:]}({_args(p)}); }}")
    out.append("HSAKMT_STATUS hsaKmtOpenKFD(void) { return pyhip_kfd_py_OpenKFD(); }")
    out.append("HSAKMT_STATUS hsaKmtCloseKFD(void) { if (!pyhip_kfd_is_open()) return 20; "
               "return pyhip_kfd_py_CloseKFD(); }")
    out.append("/* generated: exports this KFD does not support */")
    for n in sorted(NOT_SUPPORTED):
        out.append(f"HSAKMT_STATUS {n}({PROTOTYPES[n]}) {{ return pyhip_kfd_is_open() ? 11 : 20; }}")
    return "\n".join(out) + "\n"


def embedding_api() -> str:
    lines = [f"HSAKMT_STATUS pyhip_kfd_py_{n[6:]}({PROTOTYPES[n]});" for n in python_implemented()]
    lines += ["HSAKMT_STATUS pyhip_kfd_py_OpenKFD(void);", "HSAKMT_STATUS pyhip_kfd_py_CloseKFD(void);"]
    return "\n".join(lines) + "\n"


def make_builder(init_code: str) -> cffi.FFI:
    ffibuilder = cffi.FFI()
    ffibuilder.cdef(abi_types())
    ffibuilder.cdef(C_API)
    ffibuilder.embedding_api(embedding_api().replace("HsaEvent* Events[]", "HsaEvent** Events"))
    ffibuilder.set_source("_pyhip_thunk", _source(),
                          extra_compile_args=["-O2", "-Wno-unused-function"],
                          extra_link_args=[f"-Wl,--version-script={HERE / 'libhsakmt.map'}",
                                           "-Wl,-soname,libhsakmt.so.1", "-lpthread"])
    ffibuilder.embedding_init_code(init_code)
    return ffibuilder


def fingerprint(extra: str = "") -> str:
    h = hashlib.sha256(extra.encode())
    for p in sorted(HERE.iterdir()):
        if p.suffix in (".c", ".h", ".txt", ".map", ".py"):
            h.update(p.name.encode() + p.read_bytes())
    return h.hexdigest()[:16]


def build(out_dir: Path, init_code: str) -> Path:
    out_dir.mkdir(parents=True, exist_ok=True)
    target = out_dir / "libhsakmt.so.1"
    make_builder(init_code).compile(tmpdir=str(out_dir / "build"), target=str(target))
    return target
