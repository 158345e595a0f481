"""Streams and events on AQL queues.

A stream owns one AQL queue (fed through :mod:`pyhip.runtime.backend`).  Every command it enqueues gets a
completion signal; the stream remembers the last one.  Ordering rules (HIP 5.2 legacy semantics):
the null stream first waits (barrier-AND packet) for the last command of every *blocking* stream of its
device, and a blocking stream's command first waits for the null stream; non-blocking streams never
synchronise with the null stream.  Events (runtime/event.py) are completion signals with timestamps.
"""
from __future__ import annotations

import threading

from ..aql.native import fault_epoch
from ..errors import HipError, hipError_t
from .handle import Handle

hipStreamDefault = 0
hipStreamNonBlocking = 1


# Another stream's last command, read by a submit that must wait for it, is pinned or found complete under
# this lock, and its owner gives its signal back to the pool under it too: a signal checked pending and
# released meanwhile would be reused by the next packet (often the barrier's own completion signal: a barrier
# waiting for itself, the queue stuck for good).
_WATCH_LOCK = threading.Lock()


def _watch(cmd: "Command | None"):
    """The signal of another stream's ``cmd`` pinned (never back to the pool while a barrier watches it), or
    None when there is nothing to wait for."""
    if cmd is None:
        return None
    with _WATCH_LOCK:
        if cmd.done():
            return None
        cmd.signal.pinned = True
        return cmd.signal


class Command:
    """One enqueued AQL packet's completion: wraps the backend signal plus what must live until then."""

    __slots__ = ("signal", "keep", "what", "_done")

    def __init__(self, signal, keep=None, what: str = ""):
        self.signal, self.keep, self.what, self._done = signal, keep, what, False

    def done(self) -> bool:
        if not self._done and self.signal.is_complete():
            self._done = True
        return self._done


class Stream(Handle):
    def __init__(self, device, flags: int = hipStreamDefault, priority: int = 0, null: bool = False,
                 per_thread: bool = False):
        if flags not in (hipStreamDefault, hipStreamNonBlocking):
            raise HipError(hipError_t.hipErrorInvalidValue, f"invalid stream flags {flags}")
        self.device = device
        self.flags = flags
        self.priority = priority
        self.is_null = null
        self.per_thread = per_thread
        self.destroyed = False
        self._lock = threading.RLock()
        self._queue = None                      # created lazily on first use
        self._last: Command | None = None
        self._pending: list[Command] = []       # commands whose signals are not yet released
        self._errors: list = []                 # faults not yet reported
        self._fast = None                       # native launch state (C ABI fast path), see fast_state()
        self._fast_seen = 0
        self._hostcall = None                   # hostcall buffer (device printf), made on first need
        self.capture = None                     # the graph capture this stream takes part in (runtime/graph.py)
        self.handle = id(self)

    @property
    def blocking(self) -> bool:
        return self.flags == hipStreamDefault

    def _q(self):
        q = self._queue
        if q is not None and getattr(q, "dead", None) is not None:
            q.close()                           # a queue the GPU gave up on (a fault): continue on a new one
            q = None
            self._fast = None                   # its native launch state went with it
        if q is None:
            q = self._queue = self.device.backend.new_queue()
        return q

    def _check(self):
        if self.destroyed:
            raise HipError(hipError_t.hipErrorContextIsDestroyed, "stream was destroyed")

    def _implicit_deps(self) -> list:
        """Signals this stream must wait for before its next command (legacy null-stream rules), pinned."""
        if self.is_null:
            deps = [_watch(s._last) for s in self.device.streams_snapshot() if s is not self and s.blocking]
            return [d for d in deps if d is not None]
        if self.blocking:
            d = _watch(self.device.null_stream._last)
            if d is not None:
                return [d]
        return []

    def _submit(self, make, keep=None, what: str = "", deps=(), pin: bool = False) -> Command:
        dev = self.device
        with dev._lock:                         # arm_sync refuses while a submit is under way (Device.submitting)
            dev.disarm_sync()                   # the C ABI's native synchronize only knows native launches
            dev.submitting += 1
        try:
            return self._submit_unarmed(make, keep, what, deps, pin)
        finally:
            with dev._lock:
                dev.submitting -= 1

    def _submit_unarmed(self, make, keep, what, deps, pin) -> Command:
        self._check()
        owner = self.device.fast_stream
        if owner is not None and owner is not self:
            owner.disable_fast()                # its native launches must become visible to our ordering
        with self._lock:
            self.absorb_fast()                  # native launches so far come before this command
            q = self._q()
            wait_on = list(deps) + self._implicit_deps()
            if wait_on:
                for sig in wait_on:
                    sig.pinned = True                      # never recycled while a barrier watches it
                for i in range(0, len(wait_on), 5):        # barrier-AND holds five dependencies
                    chunk = wait_on[i:i + 5]
                    self._track(Command(q.barrier_and(chunk), keep=chunk, what="barrier"))
            cmd = Command(make(q), keep, what)
            cmd.signal.pinned = pin
            self._track(cmd)
        return cmd

    def _track(self, cmd: Command) -> None:
        self._last = cmd
        self._pending.append(cmd)
        if len(self._pending) > 64:
            self._reap_completed_front()

    def _reap_completed_front(self) -> None:
        """Release the signals of the completed commands at the front (a stream completes in order): O(1)
        amortised per command, however many are queued."""
        pending = self._pending
        k = 0
        while k < len(pending) and pending[k].done():
            self._retire(pending[k])
            k += 1
        del pending[:k]

    def _retire(self, c: Command) -> None:
        """A completed command: keep its fault for the next synchronising call, give its signal back."""
        err = c.signal.error()
        if err is not None:
            self._errors.append(err)
        with _WATCH_LOCK:                       # not while another stream's submit is pinning it (_watch)
            c.signal.release()

    def _reap(self, raise_errors: bool) -> None:
        """Release completed commands' signals; a fault is kept on this stream until a synchronising call
        reports it (once)."""
        still = []
        for c in self._pending:
            if c.done():
                self._retire(c)
            else:
                still.append(c)
        self._pending = still
        if raise_errors and self._errors:
            err = self._errors[0]
            self._errors.clear()
            raise err

    # -- commands ------------------------------------------------------------------------------------
    def launch(self, kernel_object: int, kernarg: bytes, grid_items, block, group_segment: int,
               private_segment: int, what: str = "kernel") -> Command:
        dev = self.device
        kaddr = dev.kernarg_alloc(len(kernarg))
        dev.backend.write(kaddr, kernarg)
        cmd = self._submit(lambda q: q.dispatch(kernel_object, kaddr, grid_items, block, group_segment,
                                                private_segment), keep=None, what=what)
        dev.kernarg_free_after(kaddr, cmd)
        return cmd

    def host_op(self, fn, what: str, keep=None) -> Command:
        """A host-side operation (copy to/from host memory, fill, callback) in stream order; while the stream
        captures, a host node of the capture's graph."""
        if self.capture is not None:
            return self.capture.record(self, "host", {"fn": fn})
        return self._submit(lambda q: q.callback(fn), keep=keep, what=what)

    def wait_event(self, ev) -> None:
        """hipStreamWaitEvent: later work waits for ``ev``.  An event recorded by a capture makes this stream
        join that capture (its next operation depends on the recorded point)."""
        cap = getattr(ev, "capture", None)
        if cap is not None and ev.capture_nodes is not None and cap.origin.capture is cap:
            cap.join(self, ev.capture_nodes)
            return
        if self.capture is not None:
            self.capture.add(self, "event_wait", {"event": ev})
            return
        shared = getattr(ev, "shared", None)
        if shared is not None:                      # IPC event: its records may be another process's
            target = shared.latest()
            self.host_op(lambda: shared.wait(target), what="wait IPC event")
            return
        if ev.command is not None and not ev.command.done():
            self.wait_signal(ev.command.signal)

    def check_not_capturing(self) -> None:
        """Synchronous operations are not allowed while the stream captures."""
        if self.capture is not None:
            self.capture.invalidated = True
            raise HipError(hipError_t.hipErrorStreamCaptureUnsupported, "synchronous operation on a capturing stream")

    def device_copy(self, dst: int, src: int, size: int) -> Command:
        return self._submit(lambda q: q.copy(dst, src, size), what="copy")

    def pinned_copy(self, dst: int, src: int, size: int, to_host: bool, keep=None) -> Command:
        """A DMA copy between pinned host memory and this stream's device memory (``to_host``: the pinned side
        is the destination) on a backend that copies it so (HsaDeviceBackend.DMA_PINNED), in stream order."""
        host = (True, False) if to_host else (False, True)
        return self._submit(lambda q: q.copy(dst, src, size, host=host), keep=keep, what="memcpy")

    def host_copy(self, dst: int, src: int, size: int, keep=None) -> Command:
        """A copy between host addresses of this process (``keep``: what owns them), done by the packet
        processor in native code."""
        return self._submit(lambda q: q.host_copy(dst, src, size), keep=keep, what="memcpy")

    def fill(self, dst: int, value: int, count: int, width: int) -> Command:
        return self._submit(lambda q: q.fill(dst, value, count, width), what="fill")

    def marker(self, deps=(), pin: bool = False) -> Command:
        return self._submit(lambda q: q.barrier_and([]), what="marker", deps=deps, pin=pin)

    def wait_signal(self, signal) -> None:
        """hipStreamWaitEvent: a barrier-AND packet on the event's signal."""
        # the command keeps the signal alive until the barrier packet completed (the event may be destroyed
        # right after this call; a freed signal would be a dangling dependency)
        signal.pinned = True
        self._submit(lambda q: q.barrier_and([signal]), keep=[signal], what="wait event")

    def hostcall_buffer(self):
        with self._lock:
            if self._hostcall is None:
                self._hostcall = self.device.new_hostcall_buffer()
            return self._hostcall

    # -- native launches (the C ABI's fast path, native/hip/fastlaunch.c) ---------------------------------
    def fast_state(self):
        """This stream's native launch state, or None when it may not take native launches now.  Those
        bypass the implicit null-stream ordering, so one stream per device at a time may have them, and
        only while no other stream of the device has unfinished work (nor while it captures a graph)."""
        if self.capture is not None:
            return None
        dev = self.device
        with dev._lock:
            if dev.revoking or (dev.fast_stream is not None and dev.fast_stream is not self):
                return None                     # another stream's grant, or a grant being taken back
            for s in [dev.null_stream] + dev.streams_snapshot():
                if s is not self and s._last is not None and not s._last.done():
                    return None
            granted = dev.fast_stream is None
            dev.fast_stream = self
            if granted:                         # armed without a grant: native launches would go uncounted
                dev.disarm_sync()
        with self._lock:
            self._check()
            if self._fast is None:
                self._fast = self._q().fast_state()
                self._fast_seen = self._fast.launch_count()
            return self._fast

    def absorb_fast(self) -> None:
        """Fold native launches made since the last look into this stream's last command."""
        fs = self._fast
        if fs is None:
            return
        n = fs.launch_count()
        if n != self._fast_seen:
            self._fast_seen = n
            self._track(Command(fs.counter, what="native launches"))

    def disable_fast(self) -> None:
        """No more native launches on this stream (until fast_state() is granted again)."""
        dev = self.device
        with dev._lock:                         # no grant (fast_state) until it is over: an entry made meanwhile
            dev.revoking += 1                   # would read the new generation and outlive the grant
        try:
            dev.disarm_sync()
            dev.launch_generation += 1          # Python's repeat-launch entries (runtime/fastlaunch.py)
            hook = dev.fast_invalidate
            if hook is not None:
                hook(self)                      # returns once no native launch is in progress
            with self._lock:
                self.absorb_fast()
        finally:
            with dev._lock:
                if dev.fast_stream is self:
                    dev.fast_stream = None
                dev.revoking -= 1

    # -- synchronisation ------------------------------------------------------------------------------
    def query(self) -> bool:
        """True when nothing is pending that the stream's next command would wait for: its own commands, for
        the null stream those of every blocking stream, for a blocking stream those of the null stream."""
        self._check()
        if self.is_null:
            for s in self.device.streams_snapshot():
                if s.blocking and s is not self and not s.query():
                    return False
        elif self.blocking and not self.device.null_stream.query_own():
            return False                        # its next command would wait for the null stream's work
        return self.query_own()

    def query_own(self) -> bool:
        """True when this stream's own commands are complete."""
        with self._lock:
            self.absorb_fast()
            return self._last is None or self._last.done()

    def synchronize(self, timeout: float | None = None) -> None:
        self._check()
        dev = self.device
        if timeout is None and dev.sync_if_armed(self):
            return                              # only native launches since an idle point: wait for them
        epoch = fault_epoch()
        if self.is_null:
            # the legacy null stream is ordered after every blocking stream of its device (hipStreamPerThread
            # included): synchronising it waits for their work too, as ROCclr does
            for s in self.device.streams_snapshot():
                if s.blocking and s is not self:
                    s.wait_quietly(timeout)
        with self._lock:
            self.absorb_fast()
            last = self._last
        if last is not None:
            if not last.signal.wait(timeout):
                raise HipError(hipError_t.hipErrorLaunchTimeOut, f"stream did not finish within {timeout}s")
        self.device.trim_pools()
        with self._lock:
            self._reap(raise_errors=True)
        if dev.fast_stream is self or dev.fast_stream is None:
            dev.arm_sync(epoch)

    def wait_quietly(self, timeout: float | None = None) -> None:
        """Wait for this stream's work without reporting its faults (they stay for its own sync)."""
        with self._lock:
            self.absorb_fast()
            last = self._last
        if last is not None:
            last.signal.wait(timeout)

    def destroy(self) -> None:
        if self.destroyed:
            return
        if self._fast is not None:
            self.disable_fast()
        try:
            self.synchronize()
        finally:
            self.destroyed = True
            if self._queue is not None:
                self._queue.close()
                self._queue = None
            if self._hostcall is not None:
                self.device.drop_hostcall_buffer(self._hostcall)
                self._hostcall = None
