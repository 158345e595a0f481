"""The HSA backend: pyhip's runtime on a GPU driven through ROCr (``libhsa-runtime64.so.1``) — a real AMD GPU,
or pyhip's emulated one behind its drop-in libhsakmt.

What stays pyhip's own: the loader (it parses metadata, picks the code object for the agent's ISA and
names kernels), kernarg packing from metadata, and the AQL packets: kernel dispatch and barrier-AND packets
are written by pyhip into the ROCr queue's ring (``pyhip_foreign_submit``: a slot is reserved only when the
ring has room, body first, header last with a release store, then the doorbell through ROCr's
``hsa_signal_store_screlease``).  ROCr provides agents, memory pools, queues, signals (completion signals
come from a pool that takes a signal back only after its completion was observed), the code object loader
(``hsa_code_object_reader``/``hsa_executable``) and copies (``hsa_amd_memory_async_copy``).

Copies between pageable host memory and device memory go through pinned staging buffers and DMA
(staging.py), in stream order.  Stream-ordered host work (those staged copies, strided host copies,
callbacks) is a barrier-AND packet the host waits on, then a packet-free completion signal the next packets
wait on — ROCr's async handler runs the host function between them.  A GPU memory fault arrives as ROCr's system event.  amdkfd has then
evicted every queue of the process on that GPU for good (and queues created there later never run), so
the device's context is lost: waiters on its unfinished commands — on every stream — return
``hipErrorIllegalAddress`` naming the kernel(s) that were running, and every later call that needs that
GPU fails at once with the same code instead of waiting on a queue that will never run.

The parts live by domain: system.py (hsa_init, agents, pinned host memory, the fault event), agents.py (what
an agent reports, hipDeviceProp_t from it), queues.py (ROCr queues fed with pyhip's packets, the C ABI's
native launch state), signals.py (completion signals), hostcalls.py (the listener serving device printf and
malloc), staging.py (copies of pageable host memory through pinned staging buffers), memory.py (device
memory), programs.py (code objects); this module is the device backend that ties them together and its fault handling."""
from __future__ import annotations

import threading

from ...errors import HipError, hipError_t
from . import api
from .agents import Agent, device_properties
from .hostcalls import HostcallListener
from .memory import DeviceMemory
from .programs import HsaProgram
from .queues import HsaFastLaunchState, HsaQueueBackend  # noqa: F401 - HsaFastLaunchState: the C ABI imports it here
from .signals import HsaSignalPool
from .staging import Staging
from .system import HsaSystem


class HsaDeviceBackend(DeviceMemory):
    """The runtime's view of one GPU agent (the ``DeviceBackend`` interface of the emulator backend)."""

    kind = "hsa"
    DMA_PINNED = True          # copies with pinned host memory are ROCr DMA in stream order (runtime/copies.py)

    def __init__(self, system: HsaSystem, agent: Agent):
        self.system, self.agent, self.hsa = system, agent, system.hsa
        self.signals = HsaSignalPool(self.hsa)
        self.queues: set[HsaQueueBackend] = set()
        self._allocs: dict[int, tuple[int, str]] = {}
        self._starts: list[int] = []             # sorted allocation starts
        self._locked: dict[int, int] = {}
        self._host_visible: set[int] = set()     # starts of allocations the CPU accesses directly
        self._host_hidden: set[int] = set()      # starts of VRAM allocations it cannot (a small BAR)
        self.peers: list = []                    # backends of GPUs allowed to access this one's VRAM
        self._lock = threading.Lock()
        self._slab = (0, 0)                      # kernarg slab: next free address, end
        self.used = 0
        self.on_queue_lost = None                # set by the runtime's Device: drops its native launch entries
        self.lost: HipError | None = None        # the fault that cost this GPU its queues (amdkfd evicted them)
        self.kernel_names: dict[int, str] = {}   # kernel object -> name (a fault names what was running)
        self._hostcalls: HostcallListener | None = None
        self.staging = Staging(self)
        system.backends[agent.handle] = self

    def describe(self) -> str:
        return f"hsa ({self.agent.product}, ROCr node {self.agent.node})"

    def device_properties(self, p) -> None:
        """hipDeviceProp_t from the agent, as AMD's HIP makes it (agents.device_properties)."""
        device_properties(self.agent, p)

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

    # -- hostcalls (device printf, malloc) -------------------------------------------------------------
    @property
    def hostcalls(self) -> HostcallListener:
        """The device's hostcall listener (made on first need): its signal is every hostcall buffer's doorbell."""
        with self._lock:
            if self._hostcalls is None:
                self._hostcalls = HostcallListener(self.hsa, self.agent.name)
            return self._hostcalls

    def close_hostcalls(self) -> None:
        if self._hostcalls is not None:
            self._hostcalls.close()
        self.staging.close()

    # -- copies of pageable host memory (staging.py) ----------------------------------------------------
    def staged_copy(self, dst: int, src: int, size: int, to_device: bool) -> None:
        """Pageable host memory to (``to_device``) or from this device's memory through pinned staging buffers
        and DMA; runs at once (the caller orders it in its stream)."""
        self.check_usable()
        if to_device:
            self.staging.to_device(dst, src, size)
        else:
            self.staging.to_host(dst, src, size)

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
