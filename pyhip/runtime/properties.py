"""Device properties (``hipDeviceProp_t`` of HIP 5.2) and ``hipDeviceGetAttribute`` for emulated GPUs."""
from __future__ import annotations

from dataclasses import dataclass, field, fields

from .._hip_enums import hipDeviceAttribute_t as A
from ..emu import clocks
from ..errors import HipError, hipError_t
from .images import MAX_1D, MAX_1D_LINEAR, MAX_2D, MAX_3D

# hipDeviceAttributeWallClockRate: added after HIP 5.2 (whose enum the table above is generated from) as the
# AMD-specific attribute following hipDeviceAttributeFineGrainSupport; programs built against later headers
# (hip-tests' LaunchDelayKernel) ask for it.  kHz of the clock s_memrealtime (wall_clock64) reads.
WALL_CLOCK_RATE_ATTR = 10017

ARCH_FLAGS = ("hasGlobalInt32Atomics", "hasGlobalFloatAtomicExch", "hasSharedInt32Atomics",
              "hasSharedFloatAtomicExch", "hasFloatAtomicAdd", "hasGlobalInt64Atomics",
              "hasSharedInt64Atomics", "hasDoubles", "hasWarpVote", "hasWarpBallot", "hasWarpShuffle",
              "hasFunnelShift", "hasThreadFenceSystem", "hasSyncThreadsExt", "hasSurfaceFuncs",
              "has3dGrid", "hasDynamicParallelism")

# processor -> (marketing name, CUs, ISA version (major, minor, stepping), engine clock MHz, L2 bytes)
# (name, compute units, gfx version, L2 bytes); the shader clock is the device's s_memtime rate (emu/clocks.py)
PRESETS = {
    "gfx90a": ("AMD Instinct MI210 (pyhip emulated)", 104, (9, 0, 10), 8 << 20),
    "gfx942": ("AMD Instinct MI300X (pyhip emulated)", 304, (9, 4, 2), 4 << 20),
    "gfx908": ("AMD Instinct MI100 (pyhip emulated)", 120, (9, 0, 8), 8 << 20),
    "gfx1100": ("AMD Radeon RX 7900 XTX (pyhip emulated)", 96, (11, 0, 0), 6 << 20),
    "gfx1030": ("AMD Radeon RX 6900 XT (pyhip emulated)", 80, (10, 3, 0), 4 << 20),
}
# GDDR6 boards: (memory bus width in bits, memory clock in kHz as HIP reports it); HBM boards keep the defaults
MEMORY = {"gfx1100": (384, 1250000), "gfx1030": (256, 1000000)}


@dataclass
class DeviceProp:
    name: str = ""
    totalGlobalMem: int = 0
    sharedMemPerBlock: int = 65536
    regsPerBlock: int = 65536
    warpSize: int = 64
    maxThreadsPerBlock: int = 1024
    maxThreadsDim: tuple = (1024, 1024, 1024)
    maxGridSize: tuple = (2147483647, 2147483647, 2147483647)
    clockRate: int = 0
    memoryClockRate: int = 1600000
    memoryBusWidth: int = 4096
    totalConstMem: int = 2147483647
    major: int = 9
    minor: int = 0
    multiProcessorCount: int = 0
    l2CacheSize: int = 0
    maxThreadsPerMultiProcessor: int = 2048
    computeMode: int = 0
    clockInstructionRate: int = 1000000      # hipamd: the device's timeStampFrequency_, a constant 1 GHz
    # as ROCclr reports them: no funnel shift, surface functions, __syncthreads_* extensions or dynamic parallelism
    arch: dict = field(default_factory=lambda: {f: 1 for f in ARCH_FLAGS} | {
        "hasDynamicParallelism": 0, "hasFunnelShift": 0, "hasSurfaceFuncs": 0, "hasSyncThreadsExt": 0})
    concurrentKernels: int = 1
    pciDomainID: int = 0
    pciBusID: int = 0
    pciDeviceID: int = 0
    maxSharedMemoryPerMultiProcessor: int = 65536
    isMultiGpuBoard: int = 0
    canMapHostMemory: int = 1
    gcnArch: int = 0
    gcnArchName: str = ""
    integrated: int = 0
    cooperativeLaunch: int = 1
    cooperativeMultiDeviceLaunch: int = 1
    maxTexture1DLinear: int = 0
    maxTexture1D: int = 0
    maxTexture2D: tuple = (0, 0)
    maxTexture3D: tuple = (0, 0, 0)
    hdpMemFlushCntl: int = 0
    hdpRegFlushCntl: int = 0
    memPitch: int = 2147483647
    textureAlignment: int = 256
    texturePitchAlignment: int = 256
    kernelExecTimeoutEnabled: int = 0
    ECCEnabled: int = 0
    tccDriver: int = 0
    cooperativeMultiDeviceUnmatchedFunc: int = 0
    cooperativeMultiDeviceUnmatchedGridDim: int = 0
    cooperativeMultiDeviceUnmatchedBlockDim: int = 0
    cooperativeMultiDeviceUnmatchedSharedMem: int = 0
    isLargeBar: int = 1
    asicRevision: int = 0
    managedMemory: int = 1                   # managed memory is host memory every device maps (coherent)
    directManagedMemAccessFromHost: int = 1
    concurrentManagedAccess: int = 1
    pageableMemoryAccess: int = 0
    pageableMemoryAccessUsesHostPageTables: int = 0

    def as_dict(self) -> dict:
        return {f.name: getattr(self, f.name) for f in fields(self)}


def image_support(processor: str) -> bool:
    """Whether the emulated device runs image instructions: the decoder knows MIMG for the processor and
    the semantics execute its image_sample (gfx90a, gfx1030, gfx1100; gfx94x has no image instructions)."""
    from ..emu.isa.families import opcodes
    from ..emu.semantics import SEMANTICS, load_all

    table = opcodes(processor)
    load_all()
    return any(e[0] == "image_sample" for e in table.get("MIMG", {}).values()) and "image_sample" in SEMANTICS


def make_properties(isa, index: int, total_mem: int) -> DeviceProp:

    proc = isa.processor
    name, cus, (major, minor, step), l2 = PRESETS.get(proc, (f"{proc} (pyhip emulated)", 64, (9, 0, 0), 4 << 20))
    rdna = proc.startswith("gfx1")
    wave = 32 if rdna else 64
    images = image_support(proc)
    # RDNA: the HIP runtime runs the device in WGP mode (GPU_ENABLE_WGP_MODE) and counts a work-group
    # processor (two CUs sharing their LDS) as one multiprocessor
    mps = cus // 2 if rdna else cus
    bus, mclk = MEMORY.get(proc, (4096, 1600000))
    p = DeviceProp(name=name, totalGlobalMem=total_mem, warpSize=wave, clockRate=clocks.core_khz(proc),
                   major=major, minor=minor, multiProcessorCount=mps, l2CacheSize=l2,
                   gcnArch=major * 100 + minor * 10 + step, gcnArchName=str(isa), memoryBusWidth=bus,
                   memoryClockRate=mclk, pciBusID=index + 1, maxThreadsPerMultiProcessor=2048)
    if images:          # texture limits as HIP 5.2 derives them from ROCr's image tables (GFX9 and GFX10/11 alike)
        p.maxTexture1DLinear, p.maxTexture1D, p.maxTexture2D, p.maxTexture3D = MAX_1D_LINEAR, MAX_1D, MAX_2D, MAX_3D
    # arch.hasSurfaceFuncs stays 0 even with images: hipamd 5.2 hard-codes it (hip_device.cpp), and AMD's
    # conformance tests compare against that; image support is hipDeviceAttributeImageSupport
    return p


def device_attribute(props: DeviceProp, attr: int) -> int:
    """``hipDeviceGetAttribute`` values derived from the properties."""
    p = props
    table = {
        A.hipDeviceAttributeEccEnabled: p.ECCEnabled, A.hipDeviceAttributeAsyncEngineCount: 1,
        A.hipDeviceAttributeCanMapHostMemory: p.canMapHostMemory, A.hipDeviceAttributeClockRate: p.clockRate,
        A.hipDeviceAttributeComputeMode: p.computeMode, A.hipDeviceAttributeConcurrentKernels: p.concurrentKernels,
        A.hipDeviceAttributeConcurrentManagedAccess: p.concurrentManagedAccess,
        A.hipDeviceAttributeCooperativeLaunch: p.cooperativeLaunch,
        A.hipDeviceAttributeCooperativeMultiDeviceLaunch: p.cooperativeMultiDeviceLaunch,
        A.hipDeviceAttributeIntegrated: p.integrated, A.hipDeviceAttributeIsMultiGpuBoard: p.isMultiGpuBoard,
        A.hipDeviceAttributeKernelExecTimeout: p.kernelExecTimeoutEnabled,
        A.hipDeviceAttributeL2CacheSize: p.l2CacheSize,
        A.hipDeviceAttributeComputeCapabilityMajor: p.major, A.hipDeviceAttributeComputeCapabilityMinor: p.minor,
        A.hipDeviceAttributeManagedMemory: p.managedMemory,
        A.hipDeviceAttributeMaxBlockDimX: p.maxThreadsDim[0], A.hipDeviceAttributeMaxBlockDimY: p.maxThreadsDim[1],
        A.hipDeviceAttributeMaxBlockDimZ: p.maxThreadsDim[2], A.hipDeviceAttributeMaxGridDimX: p.maxGridSize[0],
        A.hipDeviceAttributeMaxGridDimY: p.maxGridSize[1], A.hipDeviceAttributeMaxGridDimZ: p.maxGridSize[2],
        A.hipDeviceAttributeMaxThreadsPerBlock: p.maxThreadsPerBlock,
        A.hipDeviceAttributeMaxThreadsPerMultiProcessor: p.maxThreadsPerMultiProcessor,
        A.hipDeviceAttributeMaxPitch: p.memPitch, A.hipDeviceAttributeMemoryBusWidth: p.memoryBusWidth,
        A.hipDeviceAttributeMemoryClockRate: p.memoryClockRate,
        A.hipDeviceAttributeMultiprocessorCount: p.multiProcessorCount,
        A.hipDeviceAttributePciBusId: p.pciBusID, A.hipDeviceAttributePciDeviceId: p.pciDeviceID,
        A.hipDeviceAttributePciDomainID: p.pciDomainID,
        A.hipDeviceAttributeMaxRegistersPerBlock: p.regsPerBlock,
        A.hipDeviceAttributeMaxRegistersPerMultiprocessor: p.regsPerBlock,
        A.hipDeviceAttributeMaxSharedMemoryPerBlock: p.sharedMemPerBlock,
        A.hipDeviceAttributeSharedMemPerBlockOptin: p.sharedMemPerBlock,
        A.hipDeviceAttributeSharedMemPerMultiprocessor: p.maxSharedMemoryPerMultiProcessor,
        A.hipDeviceAttributeStreamPrioritiesSupported: 1, A.hipDeviceAttributeTccDriver: p.tccDriver,
        A.hipDeviceAttributeTextureAlignment: p.textureAlignment,
        A.hipDeviceAttributeMaxTexture1DWidth: p.maxTexture1D,
        A.hipDeviceAttributeMaxTexture1DLinear: p.maxTexture1DLinear,
        A.hipDeviceAttributeMaxTexture2DWidth: p.maxTexture2D[0],
        A.hipDeviceAttributeMaxTexture2DHeight: p.maxTexture2D[1],
        A.hipDeviceAttributeMaxTexture3DWidth: p.maxTexture3D[0],
        A.hipDeviceAttributeMaxTexture3DHeight: p.maxTexture3D[1],
        A.hipDeviceAttributeMaxTexture3DDepth: p.maxTexture3D[2],
        A.hipDeviceAttributeTexturePitchAlignment: p.texturePitchAlignment,
        A.hipDeviceAttributeTotalConstantMemory: p.totalConstMem,
        A.hipDeviceAttributeTotalGlobalMem: p.totalGlobalMem, A.hipDeviceAttributeUnifiedAddressing: 1,
        A.hipDeviceAttributeWarpSize: p.warpSize,
        A.hipDeviceAttributeClockInstructionRate: p.clockInstructionRate,
        A.hipDeviceAttributeMaxSharedMemoryPerMultiprocessor: p.maxSharedMemoryPerMultiProcessor,
        A.hipDeviceAttributeGcnArch: p.gcnArch, A.hipDeviceAttributeIsLargeBar: p.isLargeBar,
        A.hipDeviceAttributeAsicRevision: p.asicRevision,
        A.hipDeviceAttributeDirectManagedMemAccessFromHost: p.directManagedMemAccessFromHost,
        A.hipDeviceAttributePageableMemoryAccess: p.pageableMemoryAccess,
        A.hipDeviceAttributePageableMemoryAccessUsesHostPageTables: p.pageableMemoryAccessUsesHostPageTables,
        A.hipDeviceAttributeHostNativeAtomicSupported: 1, A.hipDeviceAttributeGlobalL1CacheSupported: 1,
        A.hipDeviceAttributeLocalL1CacheSupported: 1, A.hipDeviceAttributeMaxBlocksPerMultiProcessor: 32,
        A.hipDeviceAttributeImageSupport: int(p.maxTexture1D > 0),
        A.hipDeviceAttributePhysicalMultiProcessorCount: p.multiProcessorCount,
        A.hipDeviceAttributeFineGrainSupport: 1, A.hipDeviceAttributeCanUseStreamWaitValue: 1,
        A.hipDeviceAttributeMemoryPoolsSupported: 1, A.hipDeviceAttributeSingleToDoublePrecisionPerfRatio: 2,
    }
    if int(attr) == WALL_CLOCK_RATE_ATTR:
        return clocks.realtime_khz(props.gcnArchName.split(":")[0])
    try:
        key = A(int(attr))
    except ValueError:
        raise HipError(hipError_t.hipErrorInvalidValue, f"unknown device attribute {attr}") from None
    if key not in table:
        raise HipError(hipError_t.hipErrorInvalidValue, f"device attribute {key.name} is not supported")
    return int(table[key])
