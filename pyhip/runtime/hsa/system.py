"""The process's ROCr: hsa_init once, the agents and system memory pools, pinned host memory (one ROCr lock for
every GPU) and the system event handler that hears GPU memory faults."""
from __future__ import annotations

import threading

from ...errors import HipError, hipError_t
from ..backend import DeviceBackend  # (the HSA one: backend.HsaDeviceBackend)
from . import api
from .agents import Agent, AgentQueries
from .api import Hsa, ffi
from .errors import no_gpu



class HsaSystem:
    """hsa_init once per process, the agents, the system memory pools and the fault handler."""

    _instance = None
    _lock = threading.Lock()

    @classmethod
    def get(cls, thunk: str | None = None) -> "HsaSystem":
        with cls._lock:
            if cls._instance is None:
                cls._instance = cls(thunk)
            return cls._instance

    def __init__(self, thunk: str | None):
        self.hsa = Hsa.load(thunk)
        self.query = AgentQueries(self.hsa)
        lib = self.hsa.lib
        status = lib.hsa_init()
        if status != api.STATUS_SUCCESS:
            if thunk is None:                  # the system's KFD: most likely there is no AMD GPU at all
                raise no_gpu(f"hsa_init failed: {self.hsa.status_string(status).rstrip('.')}")
            self.hsa.check(status, "hsa_init")
        self.gpus: list[Agent] = []
        self.cpu = None
        self.kernarg_pool = self.fine_pool = None
        self.backends: dict[int, DeviceBackend] = {}
        self._host_allocs: set[int] = set()      # hipHostMalloc memory from ROCr's system pool
        self._locks: dict[int, list] = {}          # host start -> [lock count, agent address, size]
        handles = []

        @ffi.callback("hsa_status_t(hsa_agent_t, void*)")
        def each_agent(agent, _):
            handles.append(agent.handle)
            return api.STATUS_SUCCESS

        self.hsa.check(lib.hsa_iterate_agents(each_agent, ffi.NULL), "hsa_iterate_agents")
        for h in handles:
            a = ffi.new("hsa_agent_t*", {"handle": h})[0]
            kind = ffi.new("uint32_t*")
            lib.hsa_agent_get_info(a, api.AGENT_INFO_DEVICE, kind)
            pools = self.query.pools(a)
            if kind[0] == api.DEVICE_CPU and self.cpu is None:
                self.cpu = a
                for flags, pool, _ in pools:
                    if flags & api.FLAG_KERNARG_INIT and self.kernarg_pool is None:
                        self.kernarg_pool = pool
                    if flags & api.FLAG_FINE_GRAINED and self.fine_pool is None:
                        self.fine_pool = pool
            elif kind[0] == api.DEVICE_GPU:
                vram = [(p, size) for flags, p, size in pools if flags & api.FLAG_COARSE_GRAINED]
                if not vram:
                    continue
                self.gpus.append(Agent(h, self.query.string(a, api.AGENT_INFO_NAME), self.query.isa(a),
                                       self.query.u32(a, api.AMD_AGENT_INFO_DRIVER_NODE_ID),
                                       self.query.string(a, api.AMD_AGENT_INFO_PRODUCT_NAME),
                                       self.query.u32(a, api.AMD_AGENT_INFO_COMPUTE_UNIT_COUNT), vram[0][0], vram[0][1]))
                self.gpus[-1].info = self.query.info(a)
        if self.kernarg_pool is None:
            raise HipError(hipError_t.hipErrorNoDevice, "ROCr reports no kernarg memory pool")
        self._on_event = ffi.callback("hsa_status_t(const hsa_amd_event_t*, void*)", self._system_event)
        self.hsa.check(lib.hsa_amd_register_system_event_handler(self._on_event, ffi.NULL),
                       "hsa_amd_register_system_event_handler")
        import atexit
        atexit.register(self.shut_down)         # while Python still runs (ROCr's teardown calls the thunk)

    def shut_down(self) -> None:
        for b in self.backends.values():
            b.close_hostcalls()
            for q in list(b.queues):
                q.close()
            b.signals.destroy_all()
        self.hsa.lib.hsa_shut_down()

    # -- pinned host memory (one ROCr lock for every GPU; each device backend counts its use) ---------
    def lock_host(self, addr: int, size: int) -> int:
        """Lock [addr, +size) for every GPU; returns the address the GPUs reach it at — the host address
        with SVM, another one without (libhsakmt's userptr BO: PYHIP_THUNK_QUIRKS=no-svm)."""
        with self._lock:
            hit = self._locks.get(addr)
            if hit is not None:
                hit[0] += 1
                return hit[1]
            agents = ffi.new("hsa_agent_t[]", [g.struct for g in self.gpus])
            out = ffi.new("void**")
            self.hsa.check(self.hsa.lib.hsa_amd_memory_lock(ffi.cast("void*", addr), size, agents, len(self.gpus),
                                                            out), "hsa_amd_memory_lock")
            agent = int(ffi.cast("uintptr_t", out[0]))
            self._locks[addr] = [1, agent, size]
            return agent

    def unlock_host(self, addr: int) -> None:
        with self._lock:
            hit = self._locks.get(addr)
            if hit is not None and hit[0] > 1:
                hit[0] -= 1
                return
            self._locks.pop(addr, None)
            self.hsa.lib.hsa_amd_memory_unlock(ffi.cast("void*", addr))

    def alloc_host(self, size: int) -> int:
        """hipHostMalloc as AMD's HIP does it: ROCr's fine-grained system memory, accessible to every GPU at
        its host address (with or without SVM)."""
        pool = self.fine_pool or self.kernarg_pool
        out = ffi.new("void**")
        st = self.hsa.lib.hsa_amd_memory_pool_allocate(pool, size, 0, out)
        if st != 0:
            raise HipError(hipError_t.hipErrorOutOfMemory, f"{size} bytes of host memory: {self.hsa.status_string(st)}")
        agents = ffi.new("hsa_agent_t[]", [g.struct for g in self.gpus])
        st = self.hsa.lib.hsa_amd_agents_allow_access(len(self.gpus), agents, ffi.NULL, out[0])
        if st != 0:
            self.hsa.lib.hsa_amd_memory_pool_free(out[0])
            self.hsa.check(st, "hsa_amd_agents_allow_access")
        addr = int(ffi.cast("uintptr_t", out[0]))
        with self._lock:
            self._host_allocs.add(addr)
        return addr

    def free_host(self, addr: int) -> bool:
        """Free memory of :meth:`alloc_host`; False if ``addr`` is not such memory."""
        with self._lock:
            if addr not in self._host_allocs:
                return False
            self._host_allocs.discard(addr)
        self.hsa.lib.hsa_amd_memory_pool_free(ffi.cast("void*", addr))
        return True

    def agent_address(self, addr: int) -> int:
        """The GPUs' address of host address ``addr`` inside locked memory (``addr`` itself elsewhere)."""
        with self._lock:
            for start, (_, agent, size) in self._locks.items():
                if start <= addr < start + size:
                    return agent + (addr - start)
        return addr

    # -- faults --------------------------------------------------------------------------------------
    def _system_event(self, event, _):
        try:
            if event.event_type == api.GPU_MEMORY_FAULT_EVENT:
                f = event.memory_fault
                b = self.backends.get(f.agent.handle)
                if b is not None:
                    b.memory_fault(int(f.virtual_address), int(f.fault_reason_mask))
                    return api.STATUS_SUCCESS          # handled: ROCr does not abort the process
        except Exception:  # noqa: BLE001 - never unwind into ROCr
            pass
        return 0x1000
