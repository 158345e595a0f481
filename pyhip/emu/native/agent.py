"""The emulated device's native agent (native/engine/agent.h): kernel-dispatch packets run without Python.

The packet processor's native loop (pyhip/aql/processor.py, native/aql_processor.c) offers every kernel
dispatch to ``pyhip_agent_dispatch``.  That runs kernels this module registered and declines the rest, which
then take the full path (:meth:`EmulatedGPU.dispatch_kernel`).  A kernel is registered after a dispatch of it
ran natively through the full path: the Dispatch record built for that run is the kernel's template (what
its descriptor fixes), and the user SGPRs that change per dispatch are named.  Kernels whose code is a lone
``s_endpgm`` are registered as trivial when the agent starts or their program loads.

What makes a registration stale is watched here: the allocation holding the code freed or reused (every
memory table change reaches the agent's own table — one region added or removed, or a rebuilt table copied
whole — and kernels whose allocation changed are dropped), the
program unloaded, the watchdog changed.  Kernels that need the host while they run (hostcall / device printf),
that preload kernargs into SGPRs, or that run in the differential mode, never register.  A growable arena
(no up-front address space reservation) disables the agent: its raw pointers could move.

A packet that faulted natively comes back to Python with its Dispatch record; :meth:`AgentQueue.failure`
turns it into the same GPUFault the full path raises.
"""
from __future__ import annotations

import threading
import weakref

import numpy as np

from ...aql.native import ffi as aql_ffi
from .run import INSTRUCTIONS_PER_STEP, layout_for

# native/engine/agent.h: what each per-dispatch user SGPR holds
SLOT_KIND = {"dispatch_ptr": 0, "queue_ptr": 1, "kernarg": 2, "dispatch_id": 3, "private": 4}


class NativeAgent:
    """One per EmulatedGPU (created with the first queue that asks for it)."""

    def __init__(self, gpu, nat):
        self.gpu, self.nat = gpu, nat
        self.ffi, self.lib = nat.ffi, nat.lib
        self.ptr = self.ffi.gc(self.lib.pyhip_agent_new(), self.lib.pyhip_agent_free)
        if self.ptr == self.ffi.NULL:
            raise MemoryError("cannot allocate the native agent")
        self.fn = aql_ffi.cast("void*", int(self.ffi.cast("uintptr_t", self.lib.pyhip_agent_dispatch_fn())))
        self._lock = threading.Lock()
        self._kernels: dict[int, tuple] = {}   # kernel object -> (program, serial of its allocation, keep-alive)
        self._graveyard: list = []             # what removed kernels referred to, until no dispatch runs
        self._steps = None
        self.table_updates = {"changed": 0, "copied": 0}   # memory table changes sent as one region / whole
        mem = gpu.memory
        ref = weakref.ref(self)
        with mem.lock:                         # no table change between the whole copy and the first update
            mem.on_reindex.append(lambda index, ref=ref: (lambda a: a and a._reindexed(index))(ref()))
            self._publish_regions()
        self.sync_watchdog()
        for k in gpu.trivial_kernels:
            self.add_trivial(k)

    # -- what the agent sees ----------------------------------------------------------------------------
    def _publish_regions(self) -> None:
        self.table_updates["copied"] += 1
        reg, ptr = self.nat.regions()
        self.lib.pyhip_agent_set_regions(self.ptr, ptr, len(reg))

    def _reindexed(self, index) -> None:
        """The memory table changed (memory.lock held): the agent's table updated in place for one allocation
        added or removed (else copied whole); kernels whose code went away dropped."""
        change = index.change
        if change is not None and self._change_region(index, change):
            self.table_updates["changed"] += 1
        else:
            self._publish_regions()
        serials = self.gpu.memory.serials
        with self._lock:
            gone = [k for k, (p, serial, _) in self._kernels.items() if serials.get(p.base) != serial]
        for k in gone:
            self.remove(k)

    def _change_region(self, index, change) -> bool:
        n = len(index[0])
        if change[0] == "add":
            i = change[1]
            start, end, _, host = index.rows[:, i].tolist()
            return bool(self.lib.pyhip_agent_change_region(self.ptr, 1, i, n, start, end, host))
        _, i, start = change
        return bool(self.lib.pyhip_agent_change_region(self.ptr, 0, i, n, start, 0, 0))

    def regions(self):
        """The agent's memory table as (start, end, host address) rows (what the tests compare with the index)."""
        n = self.lib.pyhip_agent_regions(self.ptr, self.ffi.NULL, 0)
        buf = self.ffi.new("Region[]", max(n, 1))
        n = min(n, self.lib.pyhip_agent_regions(self.ptr, buf, n))
        return np.frombuffer(self.ffi.buffer(buf), dtype=np.uint64)[:3 * n].reshape(n, 3).copy()

    def sync_watchdog(self) -> None:
        steps = self.gpu.watchdog_steps
        if steps != self._steps:
            self._steps = steps
            self.lib.pyhip_agent_set_max_steps(self.ptr, steps * INSTRUCTIONS_PER_STEP)

    # -- the kernel table -----------------------------------------------------------------------------------
    def add(self, d, nprog, c) -> bool:
        """After ``d`` (an engine.Dispatch) ran natively with the record ``c``: register its kernel."""
        lay = layout_for(d)
        if lay.preload is not None or self.nat._hostcall(d.kernel):
            return False
        serial = self.gpu.memory.serials.get(d.program.base)
        if serial is None:
            return False
        kinds = [SLOT_KIND[attr] for attr, _, _ in lay.slots]
        firsts = [first for _, first, _ in lay.slots]
        counts = [count for _, _, count in lay.slots]
        kd = d.kd
        # no private memory beyond the packet's and the fixed size: the runtime sized a dynamic stack
        # (runtime/device.Device.private_segment_size), as engine.Dispatch takes it
        ok = self.lib.pyhip_agent_add_kernel(self.ptr, d.kernel_object, c, kd.kernarg_size,
                                             kd.private_segment_fixed_size, 0, 0, len(kinds),
                                             self.ffi.new("int32_t[]", kinds or [0]),
                                             self.ffi.new("int32_t[]", firsts or [0]),
                                             self.ffi.new("int32_t[]", counts or [0]))
        if ok:
            self._keep(d.kernel_object, d.program, serial, (nprog, nprog.pointers))
        return bool(ok)

    def add_trivial(self, kernel_object: int) -> None:
        program, kernel = self.gpu._find(kernel_object)
        serial = self.gpu.memory.serials.get(program.base) if program is not None else None
        if serial is None:
            return
        from ...loader.descriptor import KD_SIZE, KernelDescriptor
        kd = KernelDescriptor.from_bytes(self.gpu.memory.read(kernel_object, KD_SIZE), program.code_object.processor)
        zero = self.ffi.new("int32_t[1]")
        if self.lib.pyhip_agent_add_kernel(self.ptr, kernel_object, self.ffi.NULL, kd.kernarg_size, 0, 0, 1, 0,
                                           zero, zero, zero):
            self._keep(kernel_object, program, serial, None)

    def _keep(self, kernel_object, program, serial, keep) -> None:
        with self._lock:
            old = self._kernels.get(kernel_object)
            if old is not None:
                self._graveyard.append(old)
            self._kernels[kernel_object] = (program, serial, keep)
            self._bury()

    def remove(self, kernel_object: int) -> None:
        self.lib.pyhip_agent_remove_kernel(self.ptr, kernel_object)
        with self._lock:
            old = self._kernels.pop(kernel_object, None)
            if old is not None:
                self._graveyard.append(old)
            self._bury()

    def forget(self, program) -> None:
        """A program unloaded: its kernels leave the table."""
        with self._lock:
            mine = [k for k, (p, _, _) in self._kernels.items() if p is program]
        for k in mine:
            self.remove(k)

    def clear(self) -> None:
        self.lib.pyhip_agent_clear(self.ptr)
        with self._lock:
            self._graveyard.extend(self._kernels.values())
            self._kernels.clear()
            self._bury()

    def _bury(self) -> None:            # self._lock held
        if self._graveyard and self.lib.pyhip_agent_quiescent(self.ptr):
            self._graveyard.clear()

    def registered(self, kernel_object: int) -> bool:
        return bool(self.lib.pyhip_agent_has_kernel(self.ptr, kernel_object))

    def counts(self) -> dict:
        out = self.ffi.new("uint64_t[3]")
        self.lib.pyhip_agent_counts(self.ptr, out)
        return {"dispatched": int(out[0]), "faults": int(out[1]), "declined": int(out[2])}

    # -- queues ------------------------------------------------------------------------------------------------
    def queue(self, queue, mirror: int) -> "AgentQueue":
        return AgentQueue(self, queue, mirror)

    def kfd_queue(self, kq, stop, paused, lds_bytes: int, interrupt: int, clock: int) -> "KfdAgentQueue":
        return KfdAgentQueue(self, kq, stop, paused, lds_bytes, interrupt, clock)


class AgentQueue:
    """The packet processor's hook for one queue: ``fn`` and ``ctx`` for pyhip_queue_process, ``failure``."""

    def __init__(self, agent: NativeAgent, queue, mirror: int):
        ffi = agent.ffi
        self.agent = agent
        self.mirror = mirror
        self.c = ffi.new("AgentQueue*")
        self.c.agent = agent.ptr
        self.c.mirror_host = ffi.cast("uint8_t*", agent.gpu.memory.host_address(mirror, 512))
        self.c.mirror_dev = mirror
        self.c.amd_queue = ffi.cast("const uint8_t*", queue.amd_queue.address)
        self._queue = queue
        self.fn = agent.fn
        self.ctx = aql_ffi.cast("void*", int(ffi.cast("uintptr_t", self.c)))

    def failure(self, raw: bytes) -> BaseException:
        """The GPUFault of the packet that faulted in native code (its Dispatch is in the record)."""
        return _failure(self.agent, self.c, raw, self.mirror, self.mirror + 256, 0)


class KfdAgentQueue:
    """The native half of a KFD queue's command processor (pyhip/thunk/cp.py): ROCr's ring consumed by
    ``pyhip_agent_cp_process`` (native/engine/agent.h) while its packets are ones it can finish."""

    IDLE, PYTHON, FAULT, STOPPED = range(4)

    def __init__(self, agent: NativeAgent, kq, stop, paused, lds_bytes: int, interrupt: int, clock: int):
        ffi, lib = agent.ffi, agent.lib
        self.agent, self.kq = agent, kq
        lib.pyhip_agent_set_kfd_fns(ffi.cast("void*", interrupt), ffi.cast("void*", clock))
        c = self.c = ffi.new("AgentQueue*")
        c.agent = agent.ptr
        c.foreign = 1
        c.lds_bytes = lds_bytes
        c.amd_queue = ffi.cast("const uint8_t*", kq.amd_queue)
        c.ring = ffi.cast("uint8_t*", kq.ring)
        c.ring_slots = kq.slots
        c.doorbell = ffi.cast("const uint64_t*", kq.doorbell)
        c.read_ptr = ffi.cast("uint64_t*", kq.read_ptr)
        c.stop = ffi.cast("const uint32_t*", stop)
        c.paused = ffi.cast("const uint32_t*", paused)
        self._status = ffi.new("int32_t*")
        self._keep = (stop, paused)

    def process(self, timeout_ns: int) -> int:
        """Packets until one needs Python (PYTHON, FAULT: the packet at the read index), the queue stops or
        pauses (STOPPED) or ``timeout_ns`` pass idle (IDLE)."""
        self.agent.lib.pyhip_agent_cp_process(self.c, timeout_ns, self._status)
        return self._status[0]

    @property
    def processed(self) -> int:
        return int(self.c.processed)

    def failure(self, raw: bytes, index: int) -> BaseException:
        """The GPUFault of the packet at ``index`` that faulted in native code."""
        return _failure(self.agent, self.c, raw, self.kq.ring + (index % self.kq.slots) * 64, self.kq.amd_queue, index)


def _failure(agent: NativeAgent, c, raw: bytes, dispatch_ptr: int, queue_ptr: int, dispatch_id: int) -> BaseException:
    """The GPUFault of a kernel dispatch packet that faulted in native code: the full path's record of the
    dispatch (kernel, geometry) with the failed native Dispatch (``c.fault``), recorded on the device."""
    from ...aql.packets import KernelDispatchPacket
    gpu, nat = agent.gpu, agent.nat
    pkt = KernelDispatchPacket.unpack(raw)
    d = gpu.dispatch_record(kernel_object=pkt.kernel_object, kernarg_address=pkt.kernarg_address,
                            grid_size=pkt.grid_size, workgroup_size=pkt.workgroup_size,
                            group_segment_size=pkt.group_segment_size, private_segment_size=pkt.private_segment_size,
                            dispatch_ptr=dispatch_ptr, queue_ptr=queue_ptr, dispatch_id=dispatch_id)
    exc = nat.fault(agent.ffi.addressof(c[0], "fault"), d, nat.program(d.program, d.K))
    gpu.faults.append(exc)
    return exc
