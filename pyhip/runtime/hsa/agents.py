"""GPU agents as ROCr reports them: what the HSA backend asks of an agent (name, ISA, pools, the limits and sizes
hipDeviceProp_t is made of) and the device properties AMD's HIP builds from them."""
from __future__ import annotations

from . import api
from .api import ffi


class Agent:
    def __init__(self, handle, name, isa, node, product, cus, vram_pool, vram_size):
        self.handle, self.name, self.isa, self.node, self.product = handle, name, isa, node, product
        self.cus, self.vram_pool, self.vram_size = cus, vram_pool, vram_size
        self.info: dict = {}           # what hipDeviceProp_t is made of (HsaSystem._agent_info)

    @property
    def struct(self):
        return ffi.new("hsa_agent_t*", {"handle": self.handle})[0]



class AgentQueries:
    """hsa_agent_get_info and the agent's ISA and memory pools, through one loaded ROCr."""

    def __init__(self, hsa):
        self.hsa = hsa

    def string(self, a, attr) -> str:
        buf = ffi.new("char[64]")
        self.hsa.lib.hsa_agent_get_info(a, attr, buf)
        return ffi.string(buf).decode(errors="replace")

    def u32(self, a, attr) -> int:
        v = ffi.new("uint32_t*")
        self.hsa.lib.hsa_agent_get_info(a, attr, v)
        return v[0]

    def get(self, a, attr, ctype: str):
        v = ffi.new(ctype)
        self.hsa.check(self.hsa.lib.hsa_agent_get_info(a, attr, v), f"hsa_agent_get_info({attr:#x})")
        return v

    def info(self, a) -> dict:
        """The device's limits and sizes as ROCr reports them (what AMD's HIP builds hipDeviceProp_t from:
        ROCclr's rocdevice.cpp), the LDS size from the agent's group-segment pool."""
        dims, grid = self.get(a, api.AGENT_INFO_WORKGROUP_MAX_DIM, "uint16_t[3]"), \
            self.get(a, api.AGENT_INFO_GRID_MAX_DIM, "uint32_t[3]")
        caches = self.get(a, api.AGENT_INFO_CACHE_SIZE, "uint32_t[4]")
        lds = [size for seg, size in self.segment_sizes(a) if seg == api.SEGMENT_GROUP]
        return dict(wavefront=self.get(a, api.AGENT_INFO_WAVEFRONT_SIZE, "uint32_t*")[0],
                    block_dims=tuple(dims), max_block=self.get(a, api.AGENT_INFO_WORKGROUP_MAX_SIZE, "uint32_t*")[0],
                    grid_dims=tuple(grid), l2=caches[1],
                    clock_mhz=self.get(a, api.AMD_AGENT_INFO_MAX_CLOCK_FREQUENCY, "uint32_t*")[0],
                    memory_mhz=self.get(a, api.AMD_AGENT_INFO_MEMORY_MAX_FREQUENCY, "uint32_t*")[0],
                    memory_width=self.get(a, api.AMD_AGENT_INFO_MEMORY_WIDTH, "uint32_t*")[0],
                    waves_per_cu=self.get(a, api.AMD_AGENT_INFO_MAX_WAVES_PER_CU, "uint32_t*")[0],
                    bdf=self.get(a, api.AMD_AGENT_INFO_BDFID, "uint32_t*")[0],
                    domain=self.get(a, api.AMD_AGENT_INFO_DOMAIN, "uint32_t*")[0],
                    lds=lds[0] if lds else 0,
                    hdp_mem_flush=self.hdp_flush(a))

    def hdp_flush(self, a) -> int:
        """The address of the agent's HDP_MEM_FLUSH_CNTL register (HSA_AMD_AGENT_INFO_HDP_FLUSH, from the KFD's
        MMIO remap page), 0 if ROCr has none for it."""
        regs = ffi.new("uint64_t[2]")
        if self.hsa.lib.hsa_agent_get_info(a, api.AMD_AGENT_INFO_HDP_FLUSH, regs) != api.STATUS_SUCCESS:
            return 0
        return int(regs[0])

    def segment_sizes(self, a) -> list:
        out = []
        lib = self.hsa.lib

        @ffi.callback("hsa_status_t(hsa_amd_memory_pool_t, void*)")
        def each_pool(pool, _):
            seg, size = ffi.new("uint32_t*"), ffi.new("size_t*")
            lib.hsa_amd_memory_pool_get_info(pool, api.POOL_INFO_SEGMENT, seg)
            lib.hsa_amd_memory_pool_get_info(pool, api.POOL_INFO_SIZE, size)
            out.append((seg[0], size[0]))
            return api.STATUS_SUCCESS

        lib.hsa_amd_agent_iterate_memory_pools(a, each_pool, ffi.NULL)
        return out

    def isa(self, a) -> str:
        names = []

        @ffi.callback("hsa_status_t(hsa_isa_t, void*)")
        def each_isa(isa, _):
            n = ffi.new("uint32_t*")
            self.hsa.lib.hsa_isa_get_info_alt(isa, api.ISA_INFO_NAME_LENGTH, n)
            buf = ffi.new("char[]", n[0] + 1)
            self.hsa.lib.hsa_isa_get_info_alt(isa, api.ISA_INFO_NAME, buf)
            names.append(ffi.string(buf).decode())
            return api.STATUS_INFO_BREAK

        self.hsa.lib.hsa_agent_iterate_isas(a, each_isa, ffi.NULL)
        return names[0].split("--")[-1] if names else "unknown"

    def pools(self, a) -> list:
        out = []
        lib = self.hsa.lib

        @ffi.callback("hsa_status_t(hsa_amd_memory_pool_t, void*)")
        def each_pool(pool, _):
            seg, flags, size, ok = (ffi.new("uint32_t*"), ffi.new("uint32_t*"), ffi.new("size_t*"),
                                    ffi.new("bool*"))
            lib.hsa_amd_memory_pool_get_info(pool, api.POOL_INFO_SEGMENT, seg)
            lib.hsa_amd_memory_pool_get_info(pool, api.POOL_INFO_ALLOC_ALLOWED, ok)
            if seg[0] == api.SEGMENT_GLOBAL and ok[0]:
                lib.hsa_amd_memory_pool_get_info(pool, api.POOL_INFO_GLOBAL_FLAGS, flags)
                lib.hsa_amd_memory_pool_get_info(pool, api.POOL_INFO_SIZE, size)
                out.append((flags[0], ffi.new("hsa_amd_memory_pool_t*", {"handle": pool.handle})[0], size[0]))
            return api.STATUS_SUCCESS

        lib.hsa_amd_agent_iterate_memory_pools(a, each_pool, ffi.NULL)
        return out


def device_properties(a: Agent, p) -> None:
    """hipDeviceProp_t from the agent, as AMD's HIP makes it (ROCclr rocdevice.cpp / hipamd
    hip_device.cpp), over the emulator-preset defaults: a partitioned card, an MI300A or any board pyhip
    has no preset for reports what it is, and cooperative launches are sized from its real CU count."""
    i = a.info
    rdna = a.isa.startswith("gfx1")
    p.name = a.product or p.name
    p.multiProcessorCount = a.cus // 2 if rdna else a.cus       # WGP mode on RDNA: a WGP is one processor
    p.totalGlobalMem = a.vram_size
    if not i:
        return
    p.warpSize = i["wavefront"]
    p.maxThreadsPerBlock = i["max_block"]
    p.maxThreadsDim = tuple(int(d) for d in i["block_dims"])
    p.maxGridSize = tuple(min(int(d), 0x7FFFFFFF) for d in i["grid_dims"])
    p.clockRate = i["clock_mhz"] * 1000
    p.memoryClockRate = i["memory_mhz"] * 1000
    p.memoryBusWidth = i["memory_width"]
    p.l2CacheSize = i["l2"]
    p.maxThreadsPerMultiProcessor = i["waves_per_cu"] * i["wavefront"]
    if i["lds"]:
        p.sharedMemPerBlock = p.maxSharedMemoryPerMultiProcessor = i["lds"]
    p.pciBusID, p.pciDeviceID, p.pciDomainID = (i["bdf"] >> 8) & 0xFF, (i["bdf"] >> 3) & 0x1F, i["domain"]
