"""The HSA backend's queues: ROCr AQL queues fed with pyhip's packets (a stream's queue), and the state the C ABI's
native launch path publishes into them with."""
from __future__ import annotations

import threading
import time

from ...aql.native import ffi as aql_ffi
from ...aql.native import lib as aql_lib
from ...aql.packets import TYPE_BARRIER_AND, BarrierPacket, KernelDispatchPacket
from ...errors import HipError, hipError_t
from ..backend import DeviceBackend  # (the HSA one: backend.HsaDeviceBackend)
from . import api
from .api import ffi
from .signals import HsaCounter, HsaSignal


_QUEUE_DESTROY_LOCK = threading.Lock()

QUEUE_SIZE = 1024
UINT32_MAX = 0xFFFFFFFF


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

    def __init__(self, backend: DeviceBackend):
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

    def copy(self, dst, src, size, host=(False, False)):
        """DMA of ``size`` bytes in queue order; ``host``: whether dst, src are pinned host memory (ROCr is told
        the CPU agent owns those: a host-to-device or device-to-host copy, as AMD's runtime asks for one)."""
        ready = self._drained()
        s = self.pool.acquire(self)
        deps = ffi.new("hsa_signal_t[1]", [ready.sig])
        gpu, cpu = self.agent.struct, self.backend.system.cpu
        da, sa = (cpu if host[0] else gpu), (cpu if host[1] else gpu)
        dst, src = self.backend.device_address(dst), self.backend.device_address(src)
        self.hsa.check(self.hsa.lib.hsa_amd_memory_async_copy(ffi.cast("void*", dst), da, ffi.cast("void*", src), sa,
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
