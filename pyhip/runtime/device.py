"""Devices: one emulated GPU each, with its memory, null stream, streams, kernarg pool and fault log."""
from __future__ import annotations

import threading
import weakref

from ..aql.native import NativeBlock, fault_epoch, lib as _aql
from ..errors import HipError, hipError_t
from ..loader.targetid import DeviceISA
from .backend import DeviceBackend
from .properties import make_properties
from .stream import Stream

KERNARG_CHUNK = 4096
STACK_SIZE = 1024                   # hipLimitStackSize: bytes per work-item, ROCclr's default
MAX_STACK_SIZE = 64 << 10           # what a dispatch may ask per work-item (COMPUTE_TMPRING_SIZE's reach)
HEAP_STATE_SIZE = 128 << 10         # code object V5's hidden_heap_v1: ROCclr's HiddenHeapAlloc size
ARMED_SPIN_NS = 20_000            # a synchronize spins this long before sleeping (as the C ABI's does)
ARMED_WAIT_CHUNK_NS = 100_000_000


_IDLE = []


def _idle_counter():
    """A signal that stays 0: the counter of a device armed while no stream holds the native launch grant."""
    if not _IDLE:
        from ..aql.signal import Signal
        _IDLE.append(Signal(0))
    return _IDLE[0]


class Device:
    def __init__(self, index: int, isa: DeviceISA, memory_size: int, backend=None):
        self.index = index
        self.isa = isa
        self.backend = backend or DeviceBackend(isa, memory_size, index)
        self.props = make_properties(isa, index, memory_size)
        own = getattr(self.backend, "device_properties", None)
        if own is not None:                         # a GPU that reports its own (the HSA backend: ROCr's agent)
            own(self.props)
        self._lock = threading.RLock()
        self._streams: "weakref.WeakSet[Stream]" = weakref.WeakSet()
        self.null_stream = Stream(self, null=True)
        self.fast_stream: Stream | None = None      # the stream allowed native launches (C ABI fast path)
        self.revoking = 0                           # Stream.disable_fast calls under way (no grant meanwhile)
        self.fast_invalidate = None                 # fn(stream): drop its native launch entries (set by the C ABI)
        self.fast_sync_arm = None                   # fn(device, stream, counter signal, epoch) / fn(device, None, ..)
        self._armed = None                          # (stream, its native launch state, fault epoch): see arm_sync
        self.submitting = 0                         # Stream._submit calls under way (arm_sync waits for none)
        self.generation_word = NativeBlock(16)      # launch_generation and the native launches in progress
        self._errors: list[HipError] = []
        self._kernarg_free: dict[int, list[int]] = {}
        self._kernarg_busy: list[tuple[int, int, object]] = []
        self._kernarg_scanned = 0           # length of the busy list after its last full scan
        self._hostcalls: dict[int, object] = {}     # hostcall buffer address -> HostcallBuffer
        self._heap_state = 0                        # device malloc's heap state of V5 code (hidden_heap_v1)
        self.pools: weakref.WeakSet = weakref.WeakSet()   # its memory pools (runtime/pools.py's MemPool adds itself)
        self.flags = 0                              # hipSetDeviceFlags scheduling mode
        self.stack_size = STACK_SIZE                # hipLimitStackSize
        self.cache_config = 0                       # hipDeviceSetCacheConfig
        gpu = self.backend.emulated_gpu
        if gpu is not None and not hasattr(type(self.backend), "hostcalls"):
            gpu.sleep_hook = self._serve_hostcalls  # pyhip's emulator: hostcall buffers are served on s_sleep
        if hasattr(self.backend, "on_queue_lost"):    # a backend whose queues a fault stops (HSA)
            self.backend.on_queue_lost = self.drop_native_launches

    def __repr__(self) -> str:
        return f"<Device {self.index} {self.isa}>"

    def private_segment_size(self, kernel) -> int:
        """Scratch per work-item a dispatch of ``kernel`` asks for, as AMD's runtime sizes it (clr
        rocvirtual.cpp): the fixed size, and for a kernel with a dynamic call stack (recursion, indirect
        calls) at least the device's stack size limit.  Nothing is added beyond that: a deeper stack overflows
        its scratch as on hardware."""
        fixed = kernel.private_segment_fixed_size
        return max(self.stack_size, fixed) if kernel.uses_dynamic_stack else fixed

    def set_stack_size(self, size: int) -> None:
        """hipDeviceSetLimit(hipLimitStackSize): ROCclr's UpdateStackSize refuses more than the maximum."""
        if not 0 < int(size) <= MAX_STACK_SIZE:
            raise HipError(hipError_t.hipErrorInvalidValue, f"stack size {int(size)}: 1..{MAX_STACK_SIZE} bytes")
        self.stack_size = int(size)

    @property
    def launch_generation(self) -> int:
        """Moves on whenever Python's repeat-launch entries (runtime/fastlaunch.py) go stale."""
        return int(self.generation_word.u64(0)[0])

    @launch_generation.setter
    def launch_generation(self, value: int) -> None:
        """Returns once no native launch through an older entry is still being published (aql_launch.c)."""
        _aql.pyhip_launch_quiesce(self.generation_word.u64(0), value)

    # -- streams -----------------------------------------------------------------------------------
    def new_stream(self, flags: int = 0, priority: int = 0, per_thread: bool = False) -> Stream:
        s = Stream(self, flags, priority, per_thread=per_thread)
        with self._lock:
            self._streams.add(s)
        return s

    def streams_snapshot(self) -> list[Stream]:
        with self._lock:
            return [s for s in self._streams if not s.destroyed]

    def synchronize(self) -> None:
        """hipDeviceSynchronize: the null stream (which waits for blocking streams) and every stream; the
        first fault found (or recorded earlier) is raised once the device is idle."""
        if self.sync_if_armed():
            return
        epoch = fault_epoch()
        first = None
        for s in [self.null_stream] + self.streams_snapshot():
            try:
                s.synchronize()
            except HipError as exc:
                if s.destroyed and not s.is_null:
                    continue            # destroyed by another thread meanwhile: destroy() synchronised it
                first = first or exc
        # a backend whose context a fault lost (HSA: amdkfd keeps the queues evicted) reports it at every
        # synchronize, as HIP's sticky error does, even with nothing left pending
        first = first or self.take_error() or getattr(self.backend, "lost", None)
        if first is not None:
            raise first
        self.arm_sync(epoch)

    # -- synchronizing on native launches only ---------------------------------------------------------------
    def arm_sync(self, epoch: int) -> None:
        """After a synchronize that found no fault (``epoch``: the fault epoch read before it began): when the
        device is idle with nothing left to report, its work is from now on exactly what the native launch
        counter of the stream holding the grant counts (none when no stream holds it), so a synchronize may
        just wait for the counter (:meth:`wait_armed`), here and in the C ABI (``fast_sync_arm``), and a
        synchronous copy or fill may be done at once (runtime/idlecopy.py), until anything else happens
        (:meth:`disarm_sync`)."""
        st = self.fast_stream
        fs = st._fast if st is not None else None
        if (st is not None and (fs is None or st.destroyed)) or getattr(self.backend, "kind", "") != "emu":
            return
        with self._lock:                            # no submit (Stream._submit) nor grant between checks and arming
            streams = [self.null_stream] + self.streams_snapshot()
            if self.submitting or self._errors or any(s._errors for s in streams) or self.pools_hold_freed() or \
                    not all(s.query_own() for s in streams) or self.fast_stream is not st:
                return
            self._armed = (st, fs, epoch)
            hook = self.fast_sync_arm
            if hook is not None:                    # no grant: the C ABI waits on a counter that stays 0
                hook(self, st or self.null_stream, fs.signal if fs is not None else _idle_counter(), epoch)

    def wait_armed(self, armed, timeout_ns: int = -1) -> bool:
        """Wait for the armed stream's counter (one native call: native/aql_atomics.c), at most ``timeout_ns``
        when given; True if it reached 0 and nothing else happened meanwhile (no fault anywhere, still armed),
        else the caller takes the full path."""
        fs, epoch = armed[1], armed[2]
        if fs is None:                                  # armed with no native launch grant: idle, while no grant
            return self._armed is armed and self.fast_stream is None and fault_epoch() == epoch
        counter = fs.signal.ptr
        while True:
            r = _aql.pyhip_armed_wait(counter, epoch, ARMED_WAIT_CHUNK_NS if timeout_ns < 0 else timeout_ns,
                                      ARMED_SPIN_NS if timeout_ns < 0 else 0)
            if r or timeout_ns >= 0:                    # 0: a chunk passed (Ctrl-C is seen between chunks)
                return r == 1 and self._armed is armed

    def sync_if_armed(self, stream=None) -> bool:
        """A synchronize of the device (``stream`` None) or of ``stream`` done by :meth:`wait_armed` alone: True
        when the device was armed (with the grant held by that stream, or by none) and its native launches
        finished without a fault; False: the caller takes the full path, which reports what happened."""
        armed = self._armed
        if armed is None or (stream is not None and armed[0] is not None and armed[0] is not stream):
            return False
        return self.wait_armed(armed)

    def idle_if_armed(self) -> bool:
        """Like :meth:`sync_if_armed` for the whole device, without waiting: True when it is armed and idle."""
        armed = self._armed
        return armed is not None and self.wait_armed(armed, 0)

    def drop_native_launches(self) -> None:
        """A queue of this device stopped for good (a fault): no native launch may be published into it any
        more — the next launch goes through Python, which moves its stream to a new queue."""
        self.disarm_sync()
        self.launch_generation += 1
        hook = self.fast_invalidate
        if hook is not None:
            hook(None)

    def disarm_sync(self) -> None:
        """Anything but a native launch happens on this device: a synchronize must go through Python again."""
        if self._armed is not None:
            with self._lock:                        # ordered with arm_sync (the C ABI's mirror too)
                self._armed = None
                hook = self.fast_sync_arm
                if hook is not None:
                    hook(self, None, None, 0)

    def idle(self) -> bool:
        """No stream of this device has unfinished work (native launches included)."""
        return all(s.query_own() for s in [self.null_stream] + self.streams_snapshot())

    # -- errors ------------------------------------------------------------------------------------
    def record_error(self, err: HipError) -> None:
        self.disarm_sync()
        with self._lock:
            self._errors.append(err)

    def take_error(self) -> HipError | None:
        with self._lock:
            return self._errors.pop(0) if self._errors else None

    # -- device malloc's heap state (code object V5) ------------------------------------------------
    def heap_state(self) -> int:
        """Address of the state of ockl's device-malloc heap that V5 kernels get as ``hidden_heap_v1``: one per
        device, made on first need, zeroed (no initial slabs: every slab comes through the SERVICE_DEVMEM
        hostcall), as ROCclr's ``HiddenHeapAlloc``.  V4 code keeps this state in its own code object."""
        with self._lock:
            if not self._heap_state:
                addr = self.backend.alloc(HEAP_STATE_SIZE, kind="heap")
                self.backend.fill(addr, 0, HEAP_STATE_SIZE, 1)
                self._heap_state = addr
            return self._heap_state

    # -- memory pools ----------------------------------------------------------------------------------
    def pools_hold_freed(self) -> bool:
        """Some pool of the device holds freed blocks (a synchronize may give memory back)."""
        return any(p.cached for p in list(self.pools))

    def trim_pools(self) -> None:
        """At a synchronize: the device's pools give back what they hold beyond their release thresholds
        (blocks whose free has completed), as AMD's runtime does at synchronization points."""
        for p in list(self.pools):
            if p.cached:
                p.trim_to_threshold()

    # -- hostcalls (device printf) ---------------------------------------------------------------------
    def new_hostcall_buffer(self):
        from .hostcall import HostcallBuffer

        listener = getattr(self.backend, "hostcalls", None)    # a backend that serves them as a real GPU (HSA)
        buf = HostcallBuffer(self, listener.doorbell if listener is not None else 0)
        with self._lock:
            self._hostcalls[buf.address] = buf
        if listener is not None:
            listener.add(buf)
        return buf

    def drop_hostcall_buffer(self, buf) -> None:
        with self._lock:
            self._hostcalls.pop(buf.address, None)
        listener = getattr(self.backend, "hostcalls", None)
        if listener is not None:
            listener.remove(buf)
        buf.close()

    def _serve_hostcalls(self, dispatch) -> None:
        """The emulator's s_sleep hook: serve the hostcall buffer of the dispatch this thread runs."""
        if dispatch is None:
            return
        buf = getattr(dispatch, "hostcall", None)
        if buf is None:
            buf = False
            for a in getattr(dispatch.kernel, "hidden_args", ()):
                if a.value_kind == "hidden_hostcall_buffer":
                    addr = int.from_bytes(self.backend.read(dispatch.kernarg + a.offset, 8), "little")
                    buf = self._hostcalls.get(addr, False)
            dispatch.hostcall = buf
        if buf:
            buf.service()

    # -- kernarg buffers ---------------------------------------------------------------------------
    def kernarg_alloc(self, size: int) -> int:
        chunk = max(KERNARG_CHUNK, 1 << (max(size, 1) - 1).bit_length())
        with self._lock:
            free = self._kernarg_free.setdefault(chunk, [])
            if not free:
                self._reclaim_kernargs()
            if free:
                return free.pop()
        return self.backend.alloc(chunk, kind="kernarg")

    def kernarg_free_after(self, addr: int, command) -> None:
        chunk = self.backend.allocation_size(addr)
        with self._lock:
            self._kernarg_busy.append((addr, chunk, command))

    def _reclaim_kernargs(self) -> None:
        """Free the kernarg chunks of completed commands.  Commands mostly complete in the order they were
        enqueued: take the completed ones from the front; scan the whole list only when it has doubled since
        the last full scan (a long command on one stream must not pin every other stream's chunks), so a launch
        costs O(1) amortised however deep the queues are."""
        busy = self._kernarg_busy
        k = 0
        while k < len(busy) and busy[k][2].done():
            k += 1
        for addr, chunk, _ in busy[:k]:
            self._kernarg_free.setdefault(chunk, []).append(addr)
        del busy[:k]
        if len(busy) >= 2 * max(self._kernarg_scanned, 32):
            still = []
            for addr, chunk, cmd in busy:
                if cmd.done():
                    self._kernarg_free.setdefault(chunk, []).append(addr)
                else:
                    still.append((addr, chunk, cmd))
            busy[:] = still
            self._kernarg_scanned = len(busy)

    def reset(self) -> None:
        """hipDeviceReset: wait for work, destroy streams, free everything allocated by the user."""
        self.disarm_sync()
        try:
            self.synchronize()
        except HipError:
            pass
        for s in self.streams_snapshot():
            s.destroy()
        with self._lock:
            self._errors.clear()
        self.backend.free_all_user()
        if self._heap_state:            # its slabs were user memory, freed with the rest: an empty heap again
            self.backend.fill(self._heap_state, 0, HEAP_STATE_SIZE, 1)

    def synchronize_quietly(self) -> None:
        """Wait for all work; a fault found on the way stays recorded for the next synchronising call."""
        try:
            self.synchronize()
        except HipError as exc:
            self.record_error(exc)
