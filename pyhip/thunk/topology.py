"""The KFD topology the drop-in thunk reports: node 0 is the host CPU, then one GPU node per emulated device
(``PYHIP_DEVICES``, e.g. ``gfx90a:sramecc+:xnack-,gfx942``), with the node, memory-bank, cache and IO-link
properties amdkfd publishes in /sys/class/kfd/kfd/topology for an MI210 / MI300X, as libhsakmt 5.2 turns them
into HsaNodeProperties (array_count -> NumShaderBanks, simd_arrays_per_engine -> NumArrays, fw_version ->
EngineId.uCode, gfx_target_version -> EngineId major/minor/stepping, HSA_OVERRIDE_GFX_VERSION honoured).

No SDMA engines are reported, so ROCr copies with its own blit kernels, which run on the emulated GPU."""
from __future__ import annotations

import os
from dataclasses import dataclass, field

from ..loader.targetid import DeviceISA
from ..emu import clocks
from ..runtime.properties import PRESETS
from . import abi
from .quirks import Quirks

CPU_NODE = 0


@dataclass(frozen=True)
class Board:
    """What amdkfd knows about a board beyond pyhip's device presets (runtime/properties.py)."""
    device_id: int
    shader_engines: int
    vram: int                   # bytes
    fw_version: int             # MEC firmware (EngineId.uCode)
    gfx_target_version: int     # e.g. 90010
    vgpr_size_per_cu: int       # kfd_queue.c: 0x80000 on gfx90a/gfx942
    l3: int = 0                 # bytes (MI300's Infinity Cache)
    num_gws: int = 64


BOARDS = {
    "gfx90a": Board(0x740F, 8, 64 << 30, 78, 90010, 0x80000),                  # Instinct MI210
    "gfx942": Board(0x74A1, 32, 192 << 30, 0x98, 90402, 0x80000, l3=256 << 20),  # Instinct MI300X
}


@dataclass
class GpuNode:
    node_id: int
    gpu_id: int                 # KFD's gpu_id (a hash in real KFD; stable small numbers here)
    isa: DeviceISA
    board: Board
    name: str
    cus: int
    clock_mhz: int
    l2: int
    engine: tuple[int, int, int]
    links: list = field(default_factory=list)     # [(to_node, type, weight)]

    @property
    def simd_count(self) -> int:
        return self.cus * 4

    @property
    def array_count(self) -> int:
        return self.board.shader_engines          # one shader array per engine on CDNA2/3

    @property
    def lds_bytes(self) -> int:
        return 64 << 10

    # kfd_queue.c: kfd_queue_ctx_save_restore_size() — what queue creation is validated against
    def ctl_stack_size(self) -> int:
        waves = min(self.cus * 40, self.array_count * 512)
        return _page_align(40 + waves * 8 + 8)

    def debug_memory_size(self) -> int:
        waves = min(self.cus * 40, self.array_count * 512)
        return (waves * 32 + 63) // 64 * 64

    def cwsr_size(self) -> int:
        wg_data = _page_align(self.cus * (self.board.vgpr_size_per_cu + 0x4000 + 0x10000 + 0x1000))
        return self.ctl_stack_size() + wg_data

    def eop_buffer_size(self) -> int:
        return 4096


def _page_align(n: int) -> int:
    return (n + 4095) & ~4095


def _engine_override(default: tuple[int, int, int]) -> tuple[int, int, int]:
    """HSA_OVERRIDE_GFX_VERSION=major.minor.stepping, as libhsakmt applies it."""
    text = os.environ.get("HSA_OVERRIDE_GFX_VERSION")
    if not text:
        return default
    try:
        major, minor, step = (int(x) for x in text.split("."))
    except ValueError:
        raise abi.KfdError(abi.ERROR, f"HSA_OVERRIDE_GFX_VERSION {text} is invalid") from None
    if major > 63 or minor > 255 or step > 255:
        raise abi.KfdError(abi.ERROR, f"HSA_OVERRIDE_GFX_VERSION {text} is invalid")
    return major, minor, step


def _size(text: str) -> int:
    text = text.strip().upper()
    mult = {"K": 1, "M": 1024, "G": 1 << 20}.get(text[-1:], None)
    return int(text[:-1]) * mult if mult else int(text) >> 10


def cpu_caches() -> list[dict]:
    """CPU 0's caches from sysfs (as libhsakmt reports the CPU node's caches), sizes in KiB."""
    out, root = [], "/sys/devices/system/cpu/cpu0/cache"
    try:
        entries = sorted(e for e in os.listdir(root) if e.startswith("index"))
    except OSError:
        entries = []
    for e in entries:
        def get(name, default="0"):
            try:
                with open(f"{root}/{e}/{name}") as f:
                    return f.read().strip()
            except OSError:
                return default
        kind = get("type", "Unified")
        ctype = abi.pack_bits(abi.CACHE_TYPE, Data=int(kind != "Instruction"), Instruction=int(kind != "Data"), CPU=1)
        siblings = [0] * 256
        for part in get("shared_cpu_list", "0").split(","):
            lo, _, hi = part.partition("-")
            if lo.isdigit():
                for c in range(int(lo), int(hi or lo) + 1):
                    if c < 256 * 32:
                        siblings[c // 32] |= 1 << (c % 32)
        out.append(dict(ProcessorIdLow=0, CacheLevel=int(get("level", "1")), CacheSize=_size(get("size", "32K")),
                        CacheLineSize=int(get("coherency_line_size", "64")), CacheLinesPerTag=1,
                        CacheAssociativity=int(get("ways_of_associativity", "8") or 8), CacheLatency=0,
                        CacheType=ctype, SiblingMap=siblings))
    if not out:          # no sysfs: one L1 data cache, what ROCr needs for the cache-line size
        out.append(dict(ProcessorIdLow=0, CacheLevel=1, CacheSize=32, CacheLineSize=64, CacheLinesPerTag=1,
                        CacheAssociativity=8, CacheLatency=0,
                        CacheType=abi.pack_bits(abi.CACHE_TYPE, Data=1, CPU=1), SiblingMap=[1] + [0] * 255))
    return out


def cpu_model_name() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "CPU"


class Topology:
    def __init__(self, device_spec: str, quirks: Quirks = Quirks()):
        self.gpus: list[GpuNode] = []
        self.quirks = quirks
        for i, text in enumerate(t.strip() for t in device_spec.split(",") if t.strip()):
            isa = DeviceISA.parse(text)
            if isa.processor not in BOARDS:
                raise abi.KfdError(abi.ERROR, f"the emulated KFD has no board for {isa.processor}")
            name, cus, engine, l2 = PRESETS[isa.processor]
            cus = quirks.cus or cus
            mhz = clocks.core_khz(isa.processor) // 1000
            self.gpus.append(GpuNode(i + 1, 0x1000 + i, isa, BOARDS[isa.processor], name, cus, mhz, l2,
                                     _engine_override(engine)))
        for g in self.gpus:              # PCIe to the CPU, and peer-to-peer PCIe links between GPUs (unless no-p2p)
            g.links = [(CPU_NODE, abi.IOLINK_PCIE, 20)] + [(o.node_id, abi.IOLINK_PCIE, 40) for o in self.gpus
                                                          if o is not g and not quirks.no_p2p]
        self.cpu_cores = os.cpu_count() or 1
        self.system_ram = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")

    @property
    def num_nodes(self) -> int:
        return 1 + len(self.gpus)

    def gpu(self, node_id: int) -> GpuNode | None:
        return self.gpus[node_id - 1] if 1 <= node_id <= len(self.gpus) else None

    def check_node(self, node_id: int) -> None:
        if not 0 <= node_id < self.num_nodes:
            raise abi.KfdError(abi.INVALID_NODE_UNIT, f"node {node_id} does not exist", "EINVAL")

    # -- HsaNodeProperties -------------------------------------------------------------------------
    def node_properties(self, node_id: int) -> dict:
        self.check_node(node_id)
        if node_id == CPU_NODE:
            return dict(NumCPUCores=self.cpu_cores, NumMemoryBanks=1, NumIOLinks=len(self.gpus),
                        NumCaches=len(cpu_caches()),
                        MaxEngineClockMhzCCompute=3000, MarketingName=cpu_model_name(), AMDName="")
        g = self.gpu(node_id)
        b = g.board
        cap = abi.pack_bits(abi.CAPABILITY, WatchPointsSupported=1, WatchPointsTotalBits=2, DoorbellType=2,
                            Mem_EDCSupport=1, RASEventNotify=1, SRAM_EDCSupport=int(bool(g.isa.sramecc)),
                            SVMAPISupported=int(not self.quirks.no_svm))
        major, minor, step = g.engine
        engine = abi.pack_bits(abi.ENGINE_ID, uCode=b.fw_version & 0x3FF, Major=major, Minor=minor, Stepping=step)
        return dict(
            NumFComputeCores=g.simd_count,
            NumMemoryBanks=1 + 3 + 1,              # VRAM, the LDS, scratch and SVM apertures libhsakmt adds, and
                                                   # its MMIO remap page (the HDP flush registers)
            NumCaches=2 + (1 if b.l3 else 0), NumIOLinks=len(g.links), FComputeIdLo=0x80001000 + 0x100 * g.node_id,
            Capability=cap, MaxWavesPerSIMD=8, LDSSizeInKB=g.lds_bytes >> 10, GDSSizeInKB=0, WaveFrontSize=64,
            NumShaderBanks=g.array_count, NumArrays=1, NumCUPerArray=-(-g.cus // g.array_count), NumSIMDPerCU=4,
            MaxSlotsScratchCU=32, EngineId=engine, VendorId=0x1002, DeviceId=b.device_id,
            LocationId=(0x03 + g.node_id) << 8, LocalMemSize=b.vram, MaxEngineClockMhzFCompute=g.clock_mhz,
            MaxEngineClockMhzCCompute=3000, DrmRenderMinor=127 + g.node_id, MarketingName=g.name,
            AMDName=f"GFX{(major << 16) | (minor << 8) | step:06x}",
            HiveID=0, NumSdmaEngines=0, NumSdmaXgmiEngines=0, NumSdmaQueuesPerEngine=0, NumCpQueues=24,
            NumGws=b.num_gws, Domain=0, UniqueID=0x5059484950000000 | g.node_id,
            VGPRSizePerCU=b.vgpr_size_per_cu, SGPRSizePerCU=0x4000)

    # -- HsaMemoryProperties ------------------------------------------------------------------------
    def memory_banks(self, node_id: int, apertures) -> list[dict]:
        """``apertures``: the process's (lds, scratch, svm, mmio) (base, size) of a GPU node."""
        self.check_node(node_id)
        if node_id == CPU_NODE:
            return [dict(HeapType=abi.HEAP_SYSTEM, SizeInBytes=self.system_ram, Width=64, MemoryClockMax=3200)]
        g = self.gpu(node_id)
        (lds, _), (scratch, scratch_size), (svm, svm_size), (mmio, mmio_size) = apertures
        # small BAR: the CPU cannot map VRAM — amdkfd reports the frame buffer as private (not host-visible)
        vram = abi.HEAP_FB_PRIVATE if self.quirks.small_bar else abi.HEAP_FB_PUBLIC
        return [dict(HeapType=vram, SizeInBytes=g.board.vram, Width=4096, MemoryClockMax=1600),
                dict(HeapType=abi.HEAP_LDS, SizeInBytes=g.lds_bytes, VirtualBaseAddress=lds),
                dict(HeapType=abi.HEAP_SCRATCH, SizeInBytes=scratch_size, VirtualBaseAddress=scratch),
                dict(HeapType=abi.HEAP_SVM, SizeInBytes=svm_size, VirtualBaseAddress=svm),
                # libhsakmt's MMIO aperture: the page amdkfd remaps the GPU's HDP flush registers into
                # (KFD_MMIO_REMAP_HDP_MEM_FLUSH_CNTL at 0, _HDP_REG_FLUSH_CNTL at 4); ROCr reads it as
                # HSA_AMD_AGENT_INFO_HDP_FLUSH
                dict(HeapType=abi.HEAP_MMIO, SizeInBytes=mmio_size, VirtualBaseAddress=mmio)]

    # -- HsaCacheProperties -------------------------------------------------------------------------
    def caches(self, node_id: int) -> list[dict]:
        self.check_node(node_id)
        if node_id == CPU_NODE:
            return cpu_caches()
        g = self.gpu(node_id)
        gpu_data = abi.pack_bits(abi.CACHE_TYPE, Data=1, HSACU=1)
        out = [dict(CacheLevel=1, CacheSize=16, CacheLineSize=64, CacheLinesPerTag=1, CacheAssociativity=64,
                    CacheLatency=0, CacheType=gpu_data),
               dict(CacheLevel=2, CacheSize=g.l2 >> 10, CacheLineSize=128, CacheLinesPerTag=1,
                    CacheAssociativity=16, CacheLatency=0, CacheType=gpu_data)]
        if g.board.l3:
            out.append(dict(CacheLevel=3, CacheSize=g.board.l3 >> 10, CacheLineSize=64, CacheLinesPerTag=1,
                            CacheAssociativity=16, CacheLatency=0, CacheType=gpu_data))
        first = self.node_properties(node_id)["FComputeIdLo"]
        for c in out:
            c["ProcessorIdLow"] = first
        return out

    # -- HsaIoLinkProperties ------------------------------------------------------------------------
    def io_links(self, node_id: int) -> list[dict]:
        self.check_node(node_id)
        if node_id == CPU_NODE:
            links = [(g.node_id, abi.IOLINK_PCIE, 20) for g in self.gpus]
        else:
            links = self.gpu(node_id).links
        return [dict(IoLinkType=t, VersionMajor=4, VersionMinor=0, NodeFrom=node_id, NodeTo=to, Weight=w,
                     MinimumLatency=0, MaximumLatency=0, MinimumBandwidth=0, MaximumBandwidth=32000,
                     RecTransferSize=0, Flags=0) for to, t, w in links]
