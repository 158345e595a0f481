"""The emulated KFD behind pyhip's drop-in libhsakmt: one process's view of amdkfd — topology, memory,
queues, doorbells, and the hooks the emulated hardware uses to raise interrupts and VM faults.

Queue creation is validated the way amdkfd 6.x does (kfd_chardev.c set_queue_properties_from_user,
kfd_queue.c kfd_queue_acquire_buffers): percentage and priority ranges, a power-of-two ring of at least
1 KiB inside one GPU-mapped buffer, read/write pointers in GPU-mapped memory, and — what libhsakmt
computes and allocates for a compute queue — the EOP buffer of the node's size, the control stack of the
node's size and a context-save area at least the node's CWSR size (kfd_queue_ctx_save_restore_size()).
``create_queue_raw`` takes those buffers explicitly so tests can hand it wrong ones."""
from __future__ import annotations

import contextlib
import os
import threading
import time
from dataclasses import dataclass

import numpy as np

from ..emu.device import EmulatedGPU
from . import abi
from .cp import CommandProcessor
from .memory import PAGE, ProcessMemory, Vram, host_array, mmap_anon, munmap
from .quirks import Quirks
from .topology import Topology

KFD_VERSION = (1, 14)                 # the KFD ioctl interface of Linux 6.x
LDS_APERTURE = 1 << 48                # MAKE_LDS_APP_BASE_V9
SCRATCH_APERTURE = 2 << 48            # MAKE_SCRATCH_APP_BASE_V9
APERTURE_SIZE = 1 << 32
SVM_BASE, SVM_LIMIT = 0x10000, (1 << 47) - 1
DOORBELLS = 1024                      # per node and process, 8 bytes each on SOC15
MIN_RING = 1024                       # KFD_MIN_QUEUE_RING_SIZE


@dataclass
class KfdQueue:
    queue_id: int
    node: int
    ring: int
    ring_size: int
    read_ptr: int
    write_ptr: int
    doorbell: int
    percentage: int
    priority: int
    eop: int
    ctx_save: int
    ctx_save_size: int
    ctl_stack_size: int
    event_id: int = 0
    cu_mask: tuple = ()
    gws: int = 0
    cp: CommandProcessor | None = None
    evicted: bool = False             # stopped by a VM fault of the process on its node: never runs again

    @property
    def slots(self) -> int:
        return self.ring_size // 64

    @property
    def amd_queue(self) -> int:
        """ROCr's amd_queue_t: the read pointer is its read_dispatch_id (+128)."""
        return self.read_ptr - 128


class Kfd:
    """One open KFD (a process).  ``native`` provides the C side of the thunk: ``interrupt(event_id)``,
    ``memory_fault(node, va, failure, flags)`` and ``gpu_clock()`` (pyhip.thunk.entry binds it to the
    library; tests may pass their own)."""

    def __init__(self, native, device_spec: str | None = None, quirks: Quirks | None = None):
        self.native = native
        self.quirks = Quirks.from_environment() if quirks is None else quirks
        self.topology = Topology(device_spec or os.environ.get("PYHIP_DEVICES", "gfx90a:sramecc+:xnack-"),
                                 self.quirks)
        self.vram = {}
        self.gpus = {}
        for g in self.topology.gpus:
            v = self.vram[g.node_id] = Vram(g.board.vram, small_bar=self.quirks.small_bar)
            self.gpus[g.node_id] = EmulatedGPU(str(g.isa), g.board.vram, index=g.node_id, memory=v.memory)
            self.gpus[g.node_id].interrupt_hook = self.sq_interrupt
        self.memory = ProcessMemory(self.topology, self.gpus, no_svm=self.quirks.no_svm, vram=self.vram)
        self.memory.quiesce = self.quiesced        # an allocation's first export moves its pages
        strict_events = getattr(native, "set_strict_events", None)
        if strict_events is not None:
            strict_events(self.quirks.strict_events)
        event_page = getattr(native, "event_page", None)
        if event_page is not None:
            self.memory.map_event_page(*event_page())
        self.queues: dict[int, KfdQueue] = {}
        self._next_queue = 1
        self._doorbells: dict[int, tuple[int, list[bool]]] = {}
        self.xnack = int(any(g.isa.xnack for g in self.topology.gpus))
        self.trap_handlers: dict[int, tuple[int, int, int, int]] = {}
        self.lock = threading.RLock()
        self.faults = []                       # (node, address, failure, the GPUFault) of VM faults raised
        self.evicted: dict[int, int] = {}      # node -> VM-fault evictions of this process (qpd->evicted)
        # each GPU's MMIO remap page: its HDP flush registers (word 0: HDP_MEM_FLUSH_CNTL, word 1: _REG_)
        self.mmio = {g.node_id: mmap_anon(PAGE) for g in self.topology.gpus}
        if not all(self.mmio.values()):
            raise abi.KfdError(abi.NO_MEMORY, "cannot map the MMIO remap pages")
        self.hdp_flushes = {g.node_id: 0 for g in self.topology.gpus}

    # -- hooks for the hardware ---------------------------------------------------------------------
    def interrupt(self, event_id: int) -> None:
        self.native.interrupt(event_id)

    def sq_interrupt(self, data: int) -> None:
        """A wave's s_sendmsg(MSG_INTERRUPT): only M0[7:0] of the event id reaches the driver (ockl's signal
        update after it stored the full id in the mailbox).  amdkfd (kfd_signal_event_interrupt with a
        partial id) sets the event with those low bits whose slot is signalled, else scans the event page for
        every signalled slot; the thunk's interrupt takes the exact id, and any id it does not know scans."""
        if not self.native.interrupt(data):
            self.native.interrupt(0xFFFFFFFF)

    def memory_fault(self, node: int, address: int, failure: int, report=None) -> None:
        """A GPU VM fault as amdkfd handles it (event_interrupt_wq_v9): first kfd_dqm_evict_pasid — every queue
        of the process on that GPU is evicted (evict_process_queues_cpsch) and, qpd->evicted staying raised
        until the process ends, queues it creates there later are created evicted too (create_queue_cpsch:
        is_evicted = !!qpd->evicted) —, then kfd_signal_vm_fault_event: every memory event of the process is
        set with the faulting page's address (page_addr << PAGE_SHIFT) and the failure bits.  ``address``
        stays exact in ``faults`` for pyhip's own report."""
        self.faults.append((node, address, failure, report))
        self.evict_node(node)
        self.native.memory_fault(node, address & ~(PAGE - 1), failure, 1)   # HSA_EVENTID_MEMORY_FATAL_PROCESS

    def evict_node(self, node: int) -> None:
        with self.lock:
            self.evicted[node] = self.evicted.get(node, 0) + 1
            queues = [q for q in self.queues.values() if q.node == node]
        for q in queues:
            q.evicted = True
            q.cp.suspend()                 # later doorbells are ignored: the CP takes no more packets

    def gpu_clock(self) -> int:
        return self.native.gpu_clock()

    # -- apertures ---------------------------------------------------------------------------------
    def apertures(self, node: int):
        return ((LDS_APERTURE, APERTURE_SIZE), (SCRATCH_APERTURE, APERTURE_SIZE), (SVM_BASE, SVM_LIMIT - SVM_BASE + 1),
                (self.mmio.get(node, 0), PAGE))

    # -- HDP -----------------------------------------------------------------------------------------
    def hdp_flush_count(self, node: int) -> int:
        """HDP memory flushes of GPU ``node`` so far: a host store to its HDP_MEM_FLUSH_CNTL register (what
        AMD's HIP, and pyhip's HSA backend, write after host writes into VRAM through the CPU mapping) is taken
        (atomically swapped for 0) when this is asked; stores between two looks count once.  Host writes into
        VRAM reach the emulated GPU at once whether flushed or not (its VRAM is host memory)."""
        page = self.mmio[node]
        xchg = getattr(self.native, "xchg_u32", None)
        if xchg is not None:
            taken = xchg(page, 0)
        else:                                  # a stand-in native (tests): not atomic
            word = host_array(page, 4).view(np.uint32)
            taken, word[0] = int(word[0]), 0
        with self.lock:
            self.hdp_flushes[node] += bool(taken)
            return self.hdp_flushes[node]

    # -- doorbells ---------------------------------------------------------------------------------
    def _doorbell(self, node: int) -> int:
        page, used = self._doorbells.get(node, (0, None))
        if not page:
            page = mmap_anon(DOORBELLS * 8)
            if not page:
                raise abi.KfdError(abi.NO_MEMORY, "cannot map the doorbell page")
            used = [False] * DOORBELLS
            self._doorbells[node] = (page, used)
        for i, u in enumerate(used):
            if not u:
                used[i] = True
                host_array(page + 8 * i, 8)[:] = 0
                return page + 8 * i
        raise abi.KfdError(abi.OUT_OF_RESOURCES, "no free doorbell", "ENOSPC")

    def _release_doorbell(self, node: int, addr: int) -> None:
        page, used = self._doorbells[node]
        used[(addr - page) // 8] = False

    # -- queues ------------------------------------------------------------------------------------
    def create_queue(self, node: int, qtype: int, percentage: int, priority: int, ring: int, ring_size: int,
                     event_id: int, read_ptr: int, write_ptr: int) -> KfdQueue:
        """hsaKmtCreateQueue: libhsakmt's part (EOP buffer and context-save area sized for the node, the
        thunk priority mapped to KFD's) then KFD's."""
        if not abi.QUEUE_PRIORITY_MIN <= priority <= abi.QUEUE_PRIORITY_MAX:
            raise abi.KfdError(abi.INVALID_PARAMETER, f"queue priority {priority} is outside -3..3")
        g = self.topology.gpu(node)
        if g is None:
            raise abi.KfdError(abi.INVALID_NODE_UNIT, f"node {node} is not a GPU")
        if qtype in (abi.QUEUE_SDMA, abi.QUEUE_SDMA_XGMI):
            raise abi.KfdError(abi.ERROR, f"node {node} has no SDMA engines")
        if qtype == abi.QUEUE_COMPUTE:
            raise abi.KfdError(abi.ERROR, "PM4 compute queues are not emulated (only AQL)")
        if qtype != abi.QUEUE_COMPUTE_AQL:
            raise abi.KfdError(abi.INVALID_PARAMETER, f"queue type {qtype}")
        eop_size, ctl, cwsr = g.eop_buffer_size(), g.ctl_stack_size(), g.cwsr_size()
        eop = self.memory.alloc(node, PAGE, abi.pack_bits(abi.MEM_FLAGS, NonPaged=1, ExecuteAccess=1))
        ctx_total = (cwsr + g.debug_memory_size() + PAGE - 1) & ~(PAGE - 1)
        ctx = self.memory.alloc(0, ctx_total, abi.pack_bits(abi.MEM_FLAGS, HostAccess=1, ExecuteAccess=1))
        try:
            self.memory.map(eop, PAGE, [node])
            self.memory.map(ctx, ctx_total, [node])
            return self.create_queue_raw(node, percentage, abi.KFD_PRIORITY[priority + 3], ring, ring_size,
                                         read_ptr, write_ptr, eop, eop_size, ctx, cwsr, ctl, event_id)
        except BaseException:
            self.memory.free(eop)
            self.memory.free(ctx)
            raise

    def create_queue_raw(self, node, percentage, kfd_priority, ring, ring_size, read_ptr, write_ptr,
                         eop, eop_size, ctx, ctx_size, ctl_stack_size, event_id=0) -> KfdQueue:
        """AMDKFD_IOC_CREATE_QUEUE for an AQL compute queue, validated like amdkfd 6.x."""
        g = self.topology.gpu(node)
        if g is None:
            raise abi.KfdError(abi.INVALID_NODE_UNIT, f"node {node} is not a GPU")
        if percentage > 100:
            raise abi.KfdError(abi.ERROR, "queue percentage must be between 0 and 100")
        if not 0 <= kfd_priority <= 15:
            raise abi.KfdError(abi.ERROR, "queue priority must be between 0 and 15")
        if ring_size and ring_size & (ring_size - 1):
            raise abi.KfdError(abi.ERROR, f"ring size {ring_size} is not a power of two")
        ring_size = max(ring_size, MIN_RING)                  # clamped to KFD_MIN_QUEUE_RING_SIZE
        mem = self.memory
        if not ring or not mem.gpu_accessible(node, ring, ring_size):
            raise abi.KfdError(abi.ERROR, f"ring [0x{ring:x}, +{ring_size}) is not in memory mapped to node {node}")
        for name, p in (("read", read_ptr), ("write", write_ptr)):
            if not p or not mem.gpu_accessible(node, p, 8):
                raise abi.KfdError(abi.ERROR, f"{name} pointer 0x{p:x} is not in memory mapped to node {node}")
        if eop and eop_size != g.eop_buffer_size():
            raise abi.KfdError(abi.ERROR, f"EOP buffer size 0x{eop_size:x} is not the node's 0x{g.eop_buffer_size():x}")
        if eop and not mem.gpu_accessible(node, eop, eop_size):
            raise abi.KfdError(abi.ERROR, "EOP buffer is not mapped to the node")
        if ctl_stack_size != g.ctl_stack_size():
            raise abi.KfdError(abi.ERROR, f"control stack size 0x{ctl_stack_size:x} is not the node's "
                                          f"0x{g.ctl_stack_size():x}")
        if ctx_size < g.cwsr_size():
            raise abi.KfdError(abi.ERROR, f"context-save area 0x{ctx_size:x} is smaller than the node's CWSR "
                                          f"size 0x{g.cwsr_size():x}")
        total = (ctx_size + g.debug_memory_size() + PAGE - 1) & ~(PAGE - 1)
        if not ctx or not mem.gpu_accessible(node, ctx, total):
            raise abi.KfdError(abi.ERROR, "context-save area is not mapped to the node")
        with self.lock:
            qid = self._next_queue
            self._next_queue += 1
            q = KfdQueue(qid, node, ring, ring_size, read_ptr, write_ptr, self._doorbell(node), percentage,
                         kfd_priority, eop, ctx, ctx_size, ctl_stack_size, event_id,
                         evicted=bool(self.evicted.get(node)))
            self.queues[qid] = q
        q.cp = CommandProcessor(self, q)
        if q.evicted:
            q.cp.suspend()
        q.cp.start()
        return q

    def queue(self, qid: int) -> KfdQueue:
        q = self.queues.get(qid)
        if q is None:
            raise abi.KfdError(abi.INVALID_PARAMETER, f"queue {qid} does not exist")
        return q

    @contextlib.contextmanager
    def quiesced(self, timeout: float = 5.0):
        """The process's queues stopped between packets while the block runs, as amdkfd evicts a process's
        queues while it moves the process's memory (and restores them after): the packet a CP is running
        completes first.  A CP blocked longer than ``timeout`` (a barrier waiting for the host) is not waited
        for.  Queues stopped otherwise (UpdateQueue, errors, VM-fault eviction) stay stopped."""
        with self.lock:
            queues = list(self.queues.values())
        stopped = [q for q in queues if q.cp.active.is_set()]
        for q in stopped:
            q.cp.suspend()
        try:
            end = time.monotonic() + timeout
            for q in queues:
                if q.cp.thread.is_alive() and q.cp.thread is not threading.current_thread():
                    q.cp.idle.wait(max(0.0, end - time.monotonic()))
            yield
        finally:
            for q in stopped:
                if q.percentage and not q.evicted and not q.cp.error:
                    q.cp.resume()

    def update_queue(self, qid: int, percentage: int, priority: int, ring: int, ring_size: int) -> None:
        q = self.queue(qid)
        if percentage > 100 or not abi.QUEUE_PRIORITY_MIN <= priority <= abi.QUEUE_PRIORITY_MAX:
            raise abi.KfdError(abi.INVALID_PARAMETER, "queue percentage or priority out of range")
        if ring_size and ring_size & (ring_size - 1):
            raise abi.KfdError(abi.ERROR, f"ring size {ring_size} is not a power of two")
        q.percentage, q.priority = percentage, abi.KFD_PRIORITY[priority + 3]
        if ring and (ring, max(ring_size, MIN_RING)) != (q.ring, q.ring_size):
            raise abi.KfdError(abi.ERROR, "moving a live queue's ring is not supported")
        if percentage and not q.evicted:              # an evicted queue stays inactive (update_queue_cpsch)
            q.cp.resume()
        else:
            q.cp.suspend()

    def destroy_queue(self, qid: int) -> None:
        with self.lock:
            q = self.queue(qid)
            del self.queues[qid]
        q.cp.stop()
        self._release_doorbell(q.node, q.doorbell)
        for a in (q.eop, q.ctx_save):
            try:
                self.memory.free(a)
            except abi.KfdError:
                pass

    def set_cu_mask(self, qid: int, mask: list[int]) -> None:
        q = self.queue(qid)
        if not mask or len(mask) * 32 % 32:
            raise abi.KfdError(abi.INVALID_PARAMETER, "empty CU mask")
        q.cu_mask = tuple(mask)

    def alloc_gws(self, qid: int, n: int) -> int:
        q = self.queue(qid)
        g = self.topology.gpu(q.node)
        if not n or n > g.board.num_gws:
            raise abi.KfdError(abi.INVALID_PARAMETER, f"{n} GWS requested, the node has {g.board.num_gws}")
        if any(o.gws for o in self.queues.values() if o is not q and o.node == q.node):
            raise abi.KfdError(abi.ERROR, "the node's GWS belong to another queue", "EBUSY")
        q.gws = n
        return 0

    # -- process lifetime --------------------------------------------------------------------------
    def close(self) -> None:
        for qid in list(self.queues):
            self.destroy_queue(qid)
        self.memory.release_all()
        for page, _ in self._doorbells.values():
            munmap(page, DOORBELLS * 8)
        self._doorbells.clear()
        for v in self.vram.values():
            v.close()
        self.vram.clear()
        for page in self.mmio.values():
            munmap(page, PAGE)
        self.mmio.clear()
