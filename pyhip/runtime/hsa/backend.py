"""The HSA backend: pyhip's runtime on a GPU driven through ROCr (``libhsa-runtime64.so.1``) — a real AMD GPU,
or pyhip's emulated one behind its drop-in libhsakmt.

What stays pyhip's own: the loader (it parses metadata, picks the code object for the agent's ISA and
names kernels), kernarg packing from metadata, and the AQL packets: kernel dispatch and barrier-AND packets
are written by pyhip into the ROCr queue's ring (``pyhip_foreign_submit``: a slot is reserved only when the
ring has room, body first, header last with a release store, then the doorbell through ROCr's
``hsa_signal_store_screlease``).  ROCr provides agents, memory pools, queues, signals (completion signals
come from a pool that takes a signal back only after its completion was observed), the code object loader
(``hsa_code_object_reader``/``hsa_executable``) and copies (``hsa_amd_memory_async_copy``).

Stream-ordered host work (copies to or from pageable host memory, callbacks) is a barrier-AND packet the
host waits on, then a packet-free completion signal the next packets wait on — ROCr's async handler runs
the host function between them.  A GPU memory fault arrives as ROCr's system event.  amdkfd has then
evicted every queue of the process on that GPU for good (and queues created there later never run), so
the device's context is lost: waiters on its unfinished commands — on every stream — return
``hipErrorIllegalAddress`` naming the kernel(s) that were running, and every later call that needs that
GPU fails at once with the same code instead of waiting on a queue that will never run."""
from __future__ import annotations

import bisect
import threading
import time

from ...aql.native import ffi as aql_ffi
from ...aql.native import lib as aql_lib
from ...aql.packets import TYPE_BARRIER_AND, BarrierPacket, KernelDispatchPacket
from ...emu.memory import host_range_mapped
from ...errors import HipError, hipError_t
from . import api, no_gpu
from .api import Hsa, ffi
from .signals import HsaCounter, HsaSignal, HsaSignalPool

_QUEUE_DESTROY_LOCK = threading.Lock()

QUEUE_SIZE = 1024
UINT32_MAX = 0xFFFFFFFF


class Agent:
    def __init__(self, handle, name, isa, node, product, cus, vram_pool, vram_size):
        self.handle, self.name, self.isa, self.node, self.product = handle, name, isa, node, product
        self.cus, self.vram_pool, self.vram_size = cus, vram_pool, vram_size
        self.info: dict = {}           # what hipDeviceProp_t is made of (HsaSystem._agent_info)

    @property
    def struct(self):
        return ffi.new("hsa_agent_t*", {"handle": self.handle})[0]


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
        lib = self.hsa.lib
        status = lib.hsa_init()
        if status != api.STATUS_SUCCESS:
            if thunk is None:                  # the system's KFD: most likely there is no AMD GPU at all
                raise no_gpu(f"hsa_init failed: {self.hsa.status_string(status).rstrip('.')}")
            self.hsa.check(status, "hsa_init")
        self.gpus: list[Agent] = []
        self.cpu = None
        self.kernarg_pool = self.fine_pool = None
        self.backends: dict[int, "HsaDeviceBackend"] = {}
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
            pools = self._pools(a)
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
                self.gpus.append(Agent(h, self._string(a, api.AGENT_INFO_NAME), self._isa(a),
                                       self._u32(a, api.AMD_AGENT_INFO_DRIVER_NODE_ID),
                                       self._string(a, api.AMD_AGENT_INFO_PRODUCT_NAME),
                                       self._u32(a, api.AMD_AGENT_INFO_COMPUTE_UNIT_COUNT), vram[0][0], vram[0][1]))
                self.gpus[-1].info = self._agent_info(a)
        if self.kernarg_pool is None:
            raise HipError(hipError_t.hipErrorNoDevice, "ROCr reports no kernarg memory pool")
        self._on_event = ffi.callback("hsa_status_t(const hsa_amd_event_t*, void*)", self._system_event)
        self.hsa.check(lib.hsa_amd_register_system_event_handler(self._on_event, ffi.NULL),
                       "hsa_amd_register_system_event_handler")
        import atexit
        atexit.register(self.shut_down)         # while Python still runs (ROCr's teardown calls the thunk)

    def shut_down(self) -> None:
        for b in self.backends.values():
            for q in list(b.queues):
                q.close()
            b.signals.destroy_all()
        self.hsa.lib.hsa_shut_down()

    # -- agent queries -------------------------------------------------------------------------------
    def _string(self, a, attr) -> str:
        buf = ffi.new("char[64]")
        self.hsa.lib.hsa_agent_get_info(a, attr, buf)
        return ffi.string(buf).decode(errors="replace")

    def _u32(self, a, attr) -> int:
        v = ffi.new("uint32_t*")
        self.hsa.lib.hsa_agent_get_info(a, attr, v)
        return v[0]

    def _get(self, a, attr, ctype: str):
        v = ffi.new(ctype)
        self.hsa.check(self.hsa.lib.hsa_agent_get_info(a, attr, v), f"hsa_agent_get_info({attr:#x})")
        return v

    def _agent_info(self, a) -> dict:
        """The device's limits and sizes as ROCr reports them (what AMD's HIP builds hipDeviceProp_t from:
        ROCclr's rocdevice.cpp), the LDS size from the agent's group-segment pool."""
        dims, grid = self._get(a, api.AGENT_INFO_WORKGROUP_MAX_DIM, "uint16_t[3]"), \
            self._get(a, api.AGENT_INFO_GRID_MAX_DIM, "uint32_t[3]")
        caches = self._get(a, api.AGENT_INFO_CACHE_SIZE, "uint32_t[4]")
        lds = [size for seg, size in self._segment_sizes(a) if seg == api.SEGMENT_GROUP]
        return dict(wavefront=self._get(a, api.AGENT_INFO_WAVEFRONT_SIZE, "uint32_t*")[0],
                    block_dims=tuple(dims), max_block=self._get(a, api.AGENT_INFO_WORKGROUP_MAX_SIZE, "uint32_t*")[0],
                    grid_dims=tuple(grid), l2=caches[1],
                    clock_mhz=self._get(a, api.AMD_AGENT_INFO_MAX_CLOCK_FREQUENCY, "uint32_t*")[0],
                    memory_mhz=self._get(a, api.AMD_AGENT_INFO_MEMORY_MAX_FREQUENCY, "uint32_t*")[0],
                    memory_width=self._get(a, api.AMD_AGENT_INFO_MEMORY_WIDTH, "uint32_t*")[0],
                    waves_per_cu=self._get(a, api.AMD_AGENT_INFO_MAX_WAVES_PER_CU, "uint32_t*")[0],
                    bdf=self._get(a, api.AMD_AGENT_INFO_BDFID, "uint32_t*")[0],
                    domain=self._get(a, api.AMD_AGENT_INFO_DOMAIN, "uint32_t*")[0],
                    lds=lds[0] if lds else 0)

    def _segment_sizes(self, a) -> list:
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

    def _isa(self, a) -> str:
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

    def _pools(self, a) -> list:
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


class RingView:
    """The indices of a ROCr queue's ring (amd_queue_t: size @24, write_dispatch_id @56, read_dispatch_id @128),
    read the way pyhip's own Queue reports them."""

    def __init__(self, q):
        self._base = int(ffi.cast("uintptr_t", q))
        self.size = q.size

    @property
    def write_index(self) -> int:
        return aql_lib.pyhip_load_acquire_u64(aql_ffi.cast("uint64_t*", self._base + 56))

    @property
    def read_index(self) -> int:
        return aql_lib.pyhip_load_acquire_u64(aql_ffi.cast("uint64_t*", self._base + 128))


class HsaQueueBackend:
    """One ROCr AQL queue fed with pyhip's packets (the stream's queue on the HSA backend)."""

    def __init__(self, backend: "HsaDeviceBackend"):
        self.backend, self.agent = backend, backend.agent
        self.hsa = backend.hsa
        self.pool = backend.signals
        self.dead: HipError | None = None
        self._deps: list = []              # (signal, the barrier that waits for it, signals freed with it)
        self._fast = None
        self._handlers = set()             # live async-handler callbacks
        self._on_error = ffi.callback("void(hsa_status_t, hsa_queue_t*, void*)", self._queue_error)
        out = ffi.new("hsa_queue_t**")
        self.hsa.check(self.hsa.lib.hsa_queue_create(self.agent.struct, QUEUE_SIZE, api.QUEUE_TYPE_MULTI,
                                                     self._on_error, ffi.NULL, UINT32_MAX, UINT32_MAX, out),
                       "hsa_queue_create")
        self.q = out[0]
        self.queue = RingView(self.q)
        self._qptr = aql_ffi.cast("void*", int(ffi.cast("uintptr_t", self.q)))
        self.hsa.lib.hsa_amd_profiling_set_profiler_enabled(self.q, 1)
        self._doorbell_fn = aql_ffi.cast("void*", int(ffi.cast("uintptr_t", self.hsa.lib.hsa_signal_store_screlease)))
        backend.queues.add(self)

    def _queue_error(self, status, queue, data) -> None:
        self.backend.lose_queues([self], HipError(api.hip_error(status),
                                                  f"queue error: {self.hsa.status_string(status)}"))

    def _submit(self, packet: bytes) -> None:
        if self.dead is not None:
            raise self.dead
        if aql_lib.pyhip_foreign_submit(self._qptr, packet, self._doorbell_fn, -1) < 0:
            raise HipError(hipError_t.hipErrorLaunchFailure, "ROCr queue stayed full")

    def _signal(self) -> HsaSignal:
        self._recycle()
        return self.pool.acquire(self)

    def _order_after(self, s: HsaSignal, *also: HsaSignal) -> None:
        """Later packets of this queue wait for ``s`` (completed off the queue: a copy or host work).  ``s`` and
        the signals in ``also`` return to the pool only once that barrier has run and the stream let go of
        ``s`` — a recycled signal must never be a pending packet's dependency."""
        s.internal = True
        b = self.pool.acquire(self)
        self._submit(BarrierPacket((s.handle,), b.handle, kind=TYPE_BARRIER_AND).pack())
        self._deps.append((s, b, also))

    def _recycle(self) -> None:
        if not self._deps:
            return
        load, keep = self.hsa.lib.hsa_signal_load_scacquire, []
        for s, b, also in self._deps:
            if s._released and load(b.sig) <= 0:
                for x in (s, b) + also:
                    self.pool.give_back(x)
            else:
                keep.append((s, b, also))
        self._deps = keep

    # -- commands (the QueueBackend interface) ---------------------------------------------------------
    def dispatch(self, kernel_object, kernarg_address, grid_items, block, group_segment, private_segment):
        s = self._signal()
        s.kernel = kernel_object
        dims = 3 if grid_items[2] > 1 or block[2] > 1 else (2 if grid_items[1] > 1 or block[1] > 1 else 1)
        self._submit(KernelDispatchPacket(dims, tuple(block), tuple(grid_items), private_segment, group_segment,
                                          kernel_object, kernarg_address, s.handle).pack())
        return s

    def barrier_and(self, signals):
        s = self._signal()
        self._submit(BarrierPacket(tuple(x.handle for x in signals), s.handle, kind=TYPE_BARRIER_AND).pack())
        return s

    def _drained(self) -> HsaSignal:
        """A signal that becomes 0 once everything submitted so far has completed (a barrier packet)."""
        ready = self._signal()
        self._submit(BarrierPacket((), ready.handle, kind=TYPE_BARRIER_AND).pack())
        return ready

    def callback(self, fn):
        """``fn()`` on a host thread once everything before it in the queue is done; later packets wait."""
        ready = self._drained()
        done = self.pool.acquire(self)

        def run(value, arg):
            try:
                fn()
            except BaseException as exc:  # noqa: BLE001 - reported on the command
                done._error = exc if isinstance(exc, HipError) else HipError(
                    hipError_t.hipErrorLaunchFailure, f"{type(exc).__name__}: {exc}")
            done._host_end = time.monotonic()
            self.hsa.lib.hsa_signal_store_screlease(done.sig, 0)
            self._handlers.discard(handler)
            return 0                       # do not re-arm

        handler = ffi.callback("int(hsa_signal_value_t, void*)", run)
        self._handlers.add(handler)
        self.hsa.check(self.hsa.lib.hsa_amd_signal_async_handler(ready.sig, api.COND_LT, 1, handler, ffi.NULL),
                       "hsa_amd_signal_async_handler")
        self._order_after(done, ready)
        return done

    def copy(self, dst, src, size):
        ready = self._drained()
        s = self.pool.acquire(self)
        deps = ffi.new("hsa_signal_t[1]", [ready.sig])
        a = self.agent.struct
        dst, src = self.backend.device_address(dst), self.backend.device_address(src)
        self.hsa.check(self.hsa.lib.hsa_amd_memory_async_copy(ffi.cast("void*", dst), a, ffi.cast("void*", src), a,
                                                               size, 1, deps, s.sig), "hsa_amd_memory_async_copy")
        self._order_after(s, ready)
        return s

    def fill(self, dst, value, count, width):
        return self.callback(lambda: self.backend.fill(dst, value, count, width))

    def fast_state(self) -> "HsaFastLaunchState":
        if self._fast is None:
            self._fast = HsaFastLaunchState(self)
        return self._fast

    def close(self) -> None:
        self.backend.queues.discard(self)
        if self._fast is not None:
            self._fast.close()
        if self.q is not None:
            # one destroy at a time: ROCr's queue destructor and the async-events thread hand the queues'
            # inactive signals over ONE auto-reset KFD event, and with two destructors waiting on it the
            # wake-up meant for one can be consumed by the other (both then block forever)
            with _QUEUE_DESTROY_LOCK:
                self.hsa.lib.hsa_queue_destroy(self.q)
            self.q = None


class HsaFastLaunchState:
    """What the C ABI's native launch path (native/hip/fastlaunch.c) needs to publish into this ROCr queue:
    a kernarg buffer per ring slot (kernarg pool memory, CPU-written), the ring, and a counter signal (+1 per
    native launch from the host, -1 per completed dispatch by the CP) — the same contract as the emulator
    backend's FastLaunchState, with ROCr's queue and signal underneath."""

    SLOT = 2048
    publish_functions = ("pyhip_foreign_reserve", "pyhip_foreign_publish", "pyhip_raw_signal_add")

    def __init__(self, qb: HsaQueueBackend):
        from ...aql.native import NativeBlock

        self.qb = qb
        self.queue = qb.queue
        self.queue.address = qb.queue._base
        self.ring_address = qb.backend.alloc(qb.queue.size * self.SLOT, kind="kernarg")
        self.signal = qb.pool.acquire(qb, 0)           # with its queue: a wait sees the queue die (a fault)
        self.signal.pinned = True                      # never back to the pool: the C path counts on it
        self.counter = HsaCounter(self.signal)
        self.launches = NativeBlock(8)
        aql_lib.pyhip_foreign_set_doorbell(qb._doorbell_fn)

    def launch_count(self) -> int:
        return int(self.launches.u64(0)[0])

    def close(self) -> None:
        pass                                            # the kernarg ring lives as long as the device


class HsaProgram:
    """A code object loaded through ROCr's loader; pyhip's loader already chose it and knows its kernels."""

    def __init__(self, backend, co):
        self.backend, self.co = backend, co
        hsa, lib = backend.hsa, backend.hsa.lib
        self._image = ffi.from_buffer(co.data)
        self.reader = ffi.new("hsa_code_object_reader_t*")
        hsa.check(lib.hsa_code_object_reader_create_from_memory(self._image, len(self._image), self.reader),
                  "hsa_code_object_reader_create_from_memory")
        self.exe = ffi.new("hsa_executable_t*")
        hsa.check(lib.hsa_executable_create_alt(api.PROFILE_FULL, api.ROUNDING_DEFAULT, ffi.NULL, self.exe),
                  "hsa_executable_create_alt")
        agent = ffi.new("hsa_agent_t*", {"handle": backend.agent.handle})
        self._agent = agent
        hsa.check(lib.hsa_executable_load_agent_code_object(self.exe[0], agent[0], self.reader[0], ffi.NULL, ffi.NULL),
                  "hsa_executable_load_agent_code_object")
        hsa.check(lib.hsa_executable_freeze(self.exe[0], ffi.NULL), "hsa_executable_freeze")
        self._objects: dict[str, int] = {}
        self._globals: set[int] = set()

    def _symbol(self, name: str):
        sym = ffi.new("hsa_executable_symbol_t*")
        st = self.backend.hsa.lib.hsa_executable_get_symbol_by_name(self.exe[0], name.encode(), self._agent, sym)
        if st != 0:
            raise HipError(hipError_t.hipErrorNotFound, f"symbol {name!r}: {self.backend.hsa.status_string(st)}")
        return sym[0]

    def kernel_object(self, name) -> int:
        k = self.co.find_kernel(name)
        obj = self._objects.get(k.symbol)
        if obj is None:
            v = ffi.new("uint64_t*")
            self.backend.hsa.check(self.backend.hsa.lib.hsa_executable_symbol_get_info(
                self._symbol(k.symbol), api.SYMBOL_INFO_KERNEL_OBJECT, v), "kernel object")
            obj = self._objects[k.symbol] = v[0]
            self.backend.kernel_names[obj] = k.name
        return obj

    def global_address(self, name: str) -> int:
        v = ffi.new("uint64_t*")
        self.backend.hsa.check(self.backend.hsa.lib.hsa_executable_symbol_get_info(
            self._symbol(name), api.SYMBOL_INFO_VARIABLE_ADDRESS, v), "variable address")
        size = next((g.size for g in self.co.globals if g.name == name), 0)
        if size and v[0] not in self._globals:
            self._globals.add(v[0])
            self.backend.track(v[0], size, "global")   # device memory ROCr's loader placed: copies see it
        return v[0]

    def unload(self) -> None:
        for a in self._globals:
            self.backend.untrack(a)
        lib = self.backend.hsa.lib
        lib.hsa_executable_destroy(self.exe[0])
        lib.hsa_code_object_reader_destroy(self.reader[0])


class HsaDeviceBackend:
    """The runtime's view of one GPU agent (the ``DeviceBackend`` interface of the emulator backend)."""

    kind = "hsa"

    def __init__(self, system: HsaSystem, agent: Agent):
        self.system, self.agent, self.hsa = system, agent, system.hsa
        self.signals = HsaSignalPool(self.hsa)
        self.queues: set[HsaQueueBackend] = set()
        self._allocs: dict[int, tuple[int, str]] = {}
        self._starts: list[int] = []             # sorted allocation starts
        self._locked: dict[int, int] = {}
        self._host_visible: set[int] = set()     # starts of allocations the CPU accesses directly
        self._host_hidden: set[int] = set()      # starts of VRAM allocations it cannot (a small BAR)
        self._lock = threading.Lock()
        self._slab = (0, 0)                      # kernarg slab: next free address, end
        self.used = 0
        self.on_queue_lost = None                # set by the runtime's Device: drops its native launch entries
        self.lost: HipError | None = None        # the fault that cost this GPU its queues (amdkfd evicted them)
        self.kernel_names: dict[int, str] = {}   # kernel object -> name (a fault names what was running)
        system.backends[agent.handle] = self

    def describe(self) -> str:
        return f"hsa ({self.agent.product}, ROCr node {self.agent.node})"

    def device_properties(self, p) -> None:
        """hipDeviceProp_t from the agent, as AMD's HIP makes it (ROCclr rocdevice.cpp / hipamd
        hip_device.cpp), over the emulator-preset defaults: a partitioned card, an MI300A or any board pyhip
        has no preset for reports what it is, and cooperative launches are sized from its real CU count."""
        a, i = self.agent, self.agent.info
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

    @property
    def emulated_gpu(self):
        """pyhip's EmulatedGPU behind the agent when ROCr runs over pyhip's libhsakmt in this process (None on
        real hardware)."""
        try:
            from ...thunk.entry import current
        except ImportError:
            return None
        kfd = current()
        return kfd.gpus.get(self.agent.node) if kfd is not None else None

    def new_queue(self) -> HsaQueueBackend:
        self.check_usable()
        return HsaQueueBackend(self)

    # -- faults ----------------------------------------------------------------------------------------
    def check_usable(self) -> None:
        """After a VM fault amdkfd keeps this process's queues on the GPU evicted (kfd_dqm_evict_pasid raises
        qpd->evicted for the process's lifetime; create_queue_cpsch makes later queues evicted too), and
        ROCr's own blit queues are among them: anything that needs the GPU would wait forever."""
        if self.lost is not None:
            raise HipError(hipError_t.hipErrorIllegalAddress,
                           f"{self.agent.product or self.agent.name} lost its context to an earlier GPU memory "
                           "fault (amdkfd keeps the process's queues on it evicted); restart the process")

    def memory_fault(self, address: int, reason: int) -> None:
        """ROCr's HSA_AMD_GPU_MEMORY_FAULT_EVENT for this agent (ROCr 5.2 reports only the process's first)."""
        running = self._running_kernels()
        where = f" while {', '.join(running)} ran" if running else ""
        reasons = ", ".join(n for bit, n in api.FAULT_REASONS if reason & bit) or f"reason mask 0x{reason:x}"
        err = HipError(hipError_t.hipErrorIllegalAddress,
                       f"GPU memory fault at page 0x{address:x} ({reasons}){where}")
        report = _emulator_report(address)
        if report is not None:
            err = HipError(hipError_t.hipErrorIllegalAddress, f"{report.message}{where and ';' + where}")
        self.lost = err
        self.lose_queues(list(self.queues), err)

    def _running_kernels(self) -> list[str]:
        """The kernels of the device's unfinished dispatches: one of them faulted (ROCr's event names the
        page, not the dispatch)."""
        queues = set(self.queues)
        names = []
        for s in self.signals.live():
            if s.queue in queues and s.kernel and s.value() > 0:
                name = self.kernel_names.get(s.kernel, f"kernel object 0x{s.kernel:x}")
                if name not in names:
                    names.append(name)
        return names

    def lose_queues(self, queues, err: HipError) -> None:
        """``queues`` stopped for good: native launches stop publishing into them first (the runtime's hook),
        then waiters on their unfinished commands return with ``err``; each stream moves to a new queue."""
        hook = self.on_queue_lost
        if hook is not None:
            try:
                hook()
            except Exception:  # noqa: BLE001 - called from ROCr's threads: never unwind into them
                pass
        for q in queues:
            if q.dead is None:
                q.dead = err

    # -- memory --------------------------------------------------------------------------------------
    KERNARG_SLAB = 1 << 20

    def alloc(self, size: int, kind: str = "user") -> int:
        if size <= 0:
            raise HipError(hipError_t.hipErrorInvalidValue, "allocation size must be positive")
        if kind == "kernarg" and size <= self.KERNARG_SLAB // 4:
            return self._kernarg_from_slab(size)
        return self._pool_alloc(size, kind)

    def _kernarg_from_slab(self, size: int) -> int:
        """Kernarg buffers are carved from 1 MiB slabs of the kernarg pool (one ROCr allocation and one
        allow-access per slab, not per launch); the runtime recycles them per size once their command completed."""
        size = (size + 4095) & ~4095
        with self._lock:
            nxt, end = self._slab
            if nxt + size <= end:
                self._slab = (nxt + size, end)
                self._allocs[nxt] = (size, "kernarg")
                bisect.insort(self._starts, nxt)
                self._host_visible.add(nxt)
                return nxt
        base = self._pool_alloc(self.KERNARG_SLAB, "kernarg-slab")
        with self._lock:
            del self._allocs[base]                 # the slab itself is not an allocation: its pieces are
            self._starts.remove(base)
            self._allocs[base] = (size, "kernarg")
            bisect.insort(self._starts, base)
            self._slab = (base + size, base + self.KERNARG_SLAB)
        return base

    def _pool_alloc(self, size: int, kind: str) -> int:
        host = kind.startswith("kernarg")
        pool = self.system.kernarg_pool if host else self.agent.vram_pool
        out = ffi.new("void**")
        st = self.hsa.lib.hsa_amd_memory_pool_allocate(pool, size, 0, out)
        if st != 0:
            raise HipError(hipError_t.hipErrorOutOfMemory, f"{size} bytes: {self.hsa.status_string(st)}")
        addr = int(ffi.cast("uintptr_t", out[0]))
        if host:
            a = ffi.new("hsa_agent_t[1]", [self.agent.struct])
            self.hsa.check(self.hsa.lib.hsa_amd_agents_allow_access(1, a, ffi.NULL, out[0]), "allow access")
            self._host_visible.add(addr)
        with self._lock:
            self._allocs[addr] = (size, kind)
            bisect.insort(self._starts, addr)
            self.used += size
        return addr

    def track(self, addr: int, size: int, kind: str) -> None:
        """Device memory this backend did not allocate (variables of loaded code objects)."""
        with self._lock:
            if addr not in self._allocs:
                self._allocs[addr] = (size, kind)
                bisect.insort(self._starts, addr)

    def untrack(self, addr: int) -> None:
        with self._lock:
            if self._allocs.pop(addr, None) is not None:
                self._starts.remove(addr)

    def free(self, addr: int) -> None:
        with self._lock:
            entry = self._allocs.get(addr)
            if entry is None or entry[1] != "user":
                raise HipError(hipError_t.hipErrorInvalidValue, f"0x{addr:x} is not the start of a hipMalloc allocation")
            del self._allocs[addr]
            self._starts.remove(addr)
            self._host_visible.discard(addr)
            self._host_hidden.discard(addr)
            self.used -= entry[0]
        self.hsa.lib.hsa_amd_memory_pool_free(ffi.cast("void*", addr))

    def allocation_size(self, addr: int) -> int:
        return self._allocs[addr][0]

    def _find(self, addr: int):
        with self._lock:
            i = bisect.bisect_right(self._starts, addr) - 1
            if i >= 0:
                start = self._starts[i]
                size, kind = self._allocs[start]
                if addr < start + size:
                    return start, size, kind
        return None

    def find(self, addr: int):
        """``(start, end, kind)`` of this device's allocation holding ``addr``, or None (as the emulator
        backend's)."""
        hit = self._find(addr)
        return None if hit is None else (hit[0], hit[0] + hit[1], hit[2])

    def owns(self, addr: int) -> bool:
        return self._find(addr) is not None

    def in_device_range(self, addr: int) -> bool:
        hit = self._find(addr)
        return hit is not None and hit[2] == "user"

    def check_range(self, addr: int, size: int) -> None:
        hit = self._find(addr)
        if hit is None or addr + size > hit[0] + hit[1]:
            raise HipError(hipError_t.hipErrorInvalidValue, f"[0x{addr:x}, +{size}) is not inside one device allocation")

    def read(self, addr: int, size: int) -> bytes:
        self.check_usable()                     # hsa_memory_copy runs ROCr's blit kernels on the GPU
        buf = bytearray(size)
        self.hsa.check(self.hsa.lib.hsa_memory_copy(ffi.from_buffer(buf), ffi.cast("void*", addr), size), "read")
        return bytes(buf)

    def write(self, addr: int, data) -> None:
        self.check_usable()
        data = bytes(data)
        if addr in self._host_visible:          # kernargs, CPU-visible VRAM: written directly
            ffi.memmove(ffi.cast("void*", addr), data, len(data))
            return
        self.hsa.check(self.hsa.lib.hsa_memory_copy(ffi.cast("void*", addr), ffi.from_buffer(data), len(data)),
                       "write")

    def fill(self, addr: int, value: int, count: int, width: int) -> None:
        pattern = int(value).to_bytes(width, "little")
        if width < 4:
            pattern = pattern * (4 // width)
        nbytes = count * width
        word = int.from_bytes(pattern[:4], "little")
        head = (-addr) % 4 if width < 4 else 0
        head = min(head, nbytes)
        body = (nbytes - head) // 4 * 4
        if head:
            self.write(addr, (pattern * 4)[(addr % 4):(addr % 4) + head])
        if body and width <= 4 and (addr + head) % 4 == 0:
            self.hsa.check(self.hsa.lib.hsa_amd_memory_fill(ffi.cast("void*", addr + head), word, body // 4),
                           "hsa_amd_memory_fill")
        elif body:
            self.write(addr + head, (pattern * ((body // len(pattern)) + 1))[:body])
        tail = nbytes - head - body
        if tail:
            off = (head + body) % len(pattern)
            self.write(addr + head + body, (pattern * 2)[off:off + tail])

    def host_view(self, addr: int, size: int):
        """Device memory the CPU can access directly (system memory; VRAM once the CPU agent is allowed to,
        which needs a large BAR) as a writable view; otherwise a read-only snapshot.  ROCr 5.2 allows the CPU
        agent on VRAM whatever the BAR, so whether the CPU really has the allocation mapped is checked too
        (behind a small BAR it has not: host access goes through copies)."""
        hit = self._find(addr)
        if hit is None:
            raise HipError(hipError_t.hipErrorInvalidValue, f"0x{addr:x} is not device memory")
        start = hit[0]
        if start not in self._host_visible and start not in self._host_hidden and hit[2] == "user":
            cpu = ffi.new("hsa_agent_t[1]", [self.system.cpu])
            if self.hsa.lib.hsa_amd_agents_allow_access(1, cpu, ffi.NULL, ffi.cast("void*", start)) == 0 \
                    and host_range_mapped(start, hit[1]):
                self._host_visible.add(start)
            else:
                self._host_hidden.add(start)
        if start in self._host_visible:
            return memoryview(ffi.buffer(ffi.cast("void*", addr), size))
        return memoryview(self.read(addr, size))

    def mem_info(self) -> tuple[int, int]:
        return self.agent.vram_size - self.used, self.agent.vram_size

    def map_host(self, addr: int, array) -> None:
        self.system.lock_host(addr, array.nbytes)
        self._locked[addr] = array.nbytes

    def alloc_host(self, size: int) -> int:
        return self.system.alloc_host(size)

    def free_host(self, addr: int) -> bool:
        return self.system.free_host(addr)

    def device_address(self, addr: int) -> int:
        """Where kernels and copies reach host address ``addr`` of pinned memory (ROCr's agent pointer)."""
        return self.system.agent_address(addr)

    def unmap_host(self, addr: int) -> bool:
        if self._locked.pop(addr, None) is None:
            return False
        self.system.unlock_host(addr)
        return True

    def free_all_user(self) -> None:
        for a in [a for a, (_, k) in self._allocs.items() if k == "user"]:
            self.free(a)

    # -- programs ------------------------------------------------------------------------------------
    def load_program(self, co):
        return HsaProgram(self, co)

    def unload_program(self, p) -> None:
        p.unload()


def _emulator_report(address: int) -> HipError | None:
    """When the GPU is pyhip's emulated one behind the drop-in thunk (same process), its fault (a GPUFault:
    kernel, workgroup, wave, lane, PC, instruction, address)."""
    try:
        from ...thunk.entry import current
    except ImportError:
        return None
    kfd = current()
    if kfd is None or not kfd.faults:
        return None
    for node, addr, _, report in reversed(kfd.faults):
        if addr & ~0xFFF == address & ~0xFFF:         # amdkfd reports the faulting page
            return report
    return None
