"""The runtime's view of one device: the emulated GPU's memory and programs, fed through AQL queues.

Streams submit packets here: kernel dispatches, barrier-AND packets, and agent-dispatch packets for
copies, fills and host callbacks.  Each returns a :class:`CommandSignal` (an AQL completion signal from a
pool that only takes signals back once their completion was observed)."""
from __future__ import annotations

import numpy as np

from ..aql import (AGENT_CALLBACK, AGENT_COPY, AGENT_FILL, AGENT_HOST_COPY, AgentDispatchPacket, BarrierPacket, COND_EQ,
                   KernelDispatchPacket, PacketProcessor, Queue, SignalPool)
from ..aql.native import NativeBlock, now_ns
from ..aql.packets import TYPE_BARRIER_AND
from ..aql.signal import Signal
from ..emu.device import DEVICE_STRIDE, EmulatedGPU
from ..errors import HipError, hipError_t

QUEUE_SIZE = 1024


class CommandSignal:
    """A completion signal handed to one packet.  ``pinned`` signals (watched by events or by barrier
    packets of other queues) never go back to the pool; they live as long as their watchers."""

    __slots__ = ("sig", "pool", "_released", "pinned")

    def __init__(self, sig, pool):
        self.sig, self.pool, self._released, self.pinned = sig, pool, False, False

    @property
    def handle(self) -> int:
        return self.sig.handle

    def is_complete(self) -> bool:
        # released: it was complete, and the pooled signal may already serve another packet
        return self._released or self.sig.load() == 0

    def wait(self, timeout: float | None = None) -> bool:
        return self._released or self.sig.wait(COND_EQ, 0, timeout)

    def error(self) -> HipError | None:
        e = self.sig.error
        if e is None or isinstance(e, HipError):
            return e
        return HipError(hipError_t.hipErrorLaunchFailure, f"{type(e).__name__}: {e}")

    def end_time(self) -> float:
        return self.sig.end_ns / 1e9

    def release(self) -> None:
        if not self._released and not self.pinned and self.is_complete():
            self._released = True
            self.pool.release(self.sig)


class CounterSignal(CommandSignal):
    """The completion of a stream's native launches (native/hip/fastlaunch.c): +1 per launch, -1 per
    completed dispatch, so 0 = all done.  Never pooled; faults on them stick to the signal until reported
    once."""

    __slots__ = ()

    def __init__(self, sig):
        super().__init__(sig, None)

    def error(self) -> HipError | None:
        e = super().error()
        self.sig.error = None
        return e

    def release(self) -> None:
        pass


class FastLaunchState:
    """What the native launch path needs for one queue: a kernarg buffer per queue slot (host memory mapped
    at its own address into the device), the counter signal and the count of native launches."""

    SLOT = 2048

    def __init__(self, qb: "QueueBackend"):
        self.queue = qb.queue
        size = qb.queue.size
        self._raw = np.zeros(size * self.SLOT + 256, dtype=np.uint8)
        off = -self._raw.ctypes.data % 256
        self.ring = self._raw[off:off + size * self.SLOT]
        self.ring_address = self.ring.ctypes.data
        qb.backend.map_host(self.ring_address, self.ring)
        self.signal = Signal(0)
        self.signal.sticky = True
        self.counter = CounterSignal(self.signal)
        self.launches = NativeBlock(8)
        self._backend = qb.backend

    def launch_count(self) -> int:
        return int(self.launches.u64(0)[0])

    def close(self) -> None:
        self._backend.unmap_host(self.ring_address)


class QueueBackend:
    def __init__(self, backend: "DeviceBackend"):
        self.backend = backend
        self.queue = Queue(QUEUE_SIZE)
        self.processor = PacketProcessor(self.queue, backend.gpu)
        self.processor.start()
        self.pool = backend.signals
        self._fast: FastLaunchState | None = None

    def _signal(self) -> CommandSignal:
        return CommandSignal(self.pool.acquire(1), self.pool)

    def dispatch(self, kernel_object, kernarg_address, grid_items, block, group_segment, private_segment):
        s = self._signal()
        dims = 3 if grid_items[2] > 1 or block[2] > 1 else (2 if grid_items[1] > 1 or block[1] > 1 else 1)
        pkt = KernelDispatchPacket(dims, tuple(block), tuple(grid_items), private_segment, group_segment,
                                   kernel_object, kernarg_address, s.handle)
        self.queue.submit(pkt.pack())
        return s

    def completed(self):
        """A signal already complete (value 0, start and end time now): a marker on an idle device."""
        sig = self.pool.acquire(0)
        t = now_ns()
        sig.set_times(t, t)
        return CommandSignal(sig, self.pool)

    def barrier_and(self, signals):
        s = self._signal()
        self.queue.submit(BarrierPacket(tuple(x.handle for x in signals), s.handle, kind=TYPE_BARRIER_AND).pack())
        return s

    def callback(self, fn):
        s = self._signal()
        cid = self.processor.register_callback(fn)
        self.queue.submit(AgentDispatchPacket(AGENT_CALLBACK, (cid, 0, 0, 0), completion_signal=s.handle).pack())
        return s

    def copy(self, dst, src, size):
        s = self._signal()
        self.queue.submit(AgentDispatchPacket(AGENT_COPY, (dst, src, size, 0), completion_signal=s.handle).pack())
        return s

    def host_copy(self, dst, src, size):
        """A copy between two host addresses of this process (the processor does it: AGENT_HOST_COPY)."""
        s = self._signal()
        self.queue.submit(AgentDispatchPacket(AGENT_HOST_COPY, (dst, src, size, 0), completion_signal=s.handle).pack())
        return s

    def fill(self, dst, value, count, width):
        s = self._signal()
        self.queue.submit(AgentDispatchPacket(AGENT_FILL, (dst, value, count, width), completion_signal=s.handle).pack())
        return s

    def fast_state(self) -> FastLaunchState:
        if self._fast is None:
            self._fast = FastLaunchState(self)
        return self._fast

    def close(self) -> None:
        self.processor.stop()
        self.backend.gpu.release_queue(self.queue)
        if self._fast is not None:
            self._fast.close()


class DeviceBackend:
    kind = "emu"

    def __init__(self, isa, memory_size: int, index: int = 0):
        self.gpu = EmulatedGPU(str(isa), memory_size, index=index)
        self.memory = self.gpu.memory
        self.signals = SignalPool()

    def describe(self) -> str:
        return "emulator (in process)"

    @property
    def emulated_gpu(self):
        """The EmulatedGPU behind this device (None on real hardware)."""
        return self.gpu

    def in_device_range(self, addr: int) -> bool:
        """Whether ``addr`` is in this device's address range (allocated or not): never host memory."""
        return self.memory.base <= addr < self.memory.base + DEVICE_STRIDE

    def find(self, addr: int):
        """``(start, end, kind)`` of the allocation of this device's address space holding ``addr``
        (kind: user, host, peer, …), or None."""
        return self.memory.find(addr)

    def new_queue(self) -> QueueBackend:
        return QueueBackend(self)

    # -- memory ----------------------------------------------------------------------------------------
    def alloc(self, size: int, kind: str = "user") -> int:
        return self.memory.alloc(size, kind=kind)

    def free(self, addr: int) -> None:
        hit = self.memory.find(addr)
        if hit is None or hit[0] != addr or hit[2] != "user":
            raise HipError(hipError_t.hipErrorInvalidValue, f"0x{addr:x} is not the start of a hipMalloc allocation")
        self.memory.free(addr)

    def allocation_size(self, addr: int) -> int:
        return self.memory.allocation_size(addr)

    def owns(self, addr: int) -> bool:
        hit = self.memory.find(addr)
        return hit is not None and hit[2] not in ("host", "peer")

    def check_range(self, addr: int, size: int) -> None:
        hit = self.memory.find(addr)
        if hit is None or addr + size > hit[1]:
            raise HipError(hipError_t.hipErrorInvalidValue,
                           f"[0x{addr:x}, +{size}) is not inside one device allocation")

    def read(self, addr: int, size: int) -> bytes:
        return self.memory.read(addr, size)

    def write(self, addr: int, data) -> None:
        self.memory.write(addr, data)

    def fill(self, addr: int, value: int, count: int, width: int) -> None:
        self.memory.fill(addr, value, count, width)

    def zero_fresh(self, addr: int, size: int) -> None:
        """Zero bytes the runtime just allocated for its own reasons (an array's texels): not a write of the
        program's, so initcheck still reports a kernel reading them (AMD's hipMallocArray leaves them undefined)."""
        self.memory.fill(addr, 0, size, 1)
        if self.memory.shadow is not None:
            self.memory.shadow.unwritten(addr - self.memory.base, size)

    def host_view(self, addr: int, size: int) -> memoryview:
        return self.memory.view(addr, size)

    def host_wrote(self, addr: int, size: int) -> None:
        """The host finished writing [addr, addr + size) of device memory through ``host_view``: the emulated
        device reads the same bytes, nothing to flush (the HSA backend flushes the GPU's HDP)."""

    def mem_info(self) -> tuple[int, int]:
        used = sum(size for _, size, kind, ext in list(self.memory.table.values()) if kind == "user")
        return self.memory.capacity - used, self.memory.capacity

    def map_host(self, addr: int, array: np.ndarray) -> None:
        self.memory.map_host(addr, array)

    def unmap_host(self, addr: int) -> bool:
        return self.memory.unmap_host(addr)

    def free_all_user(self) -> None:
        for a in self.memory.user_allocations():
            self.memory.free(a)

    def peer_reachable(self, other: "DeviceBackend") -> bool:
        """Emulated devices sit on one XGMI hive: each may map every other's memory."""
        return True

    def map_peer(self, other: "DeviceBackend") -> None:
        """Peer access: ``other``'s memory becomes addressable by this device's kernels at its own addresses."""
        self.memory.map_peer(other.memory)

    def unmap_peer(self, other: "DeviceBackend") -> None:
        self.memory.unmap_peer(other.memory)

    # -- programs --------------------------------------------------------------------------------------------
    def load_program(self, co):
        return self.gpu.load_program(co)

    def unload_program(self, p) -> None:
        self.gpu.unload_program(p)


def owner_of(devices, addr: int):
    """The device of ``devices`` whose memory holds ``addr``, or None for host memory."""
    for dev in devices:
        if dev.backend.owns(addr):
            return dev
    return None
