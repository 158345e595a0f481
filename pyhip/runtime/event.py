"""Events: markers in a stream, completion signals with timestamps (hipEventRecord, hipEventSynchronize,
hipEventElapsedTime), recorded by Python or natively by the C ABI (native/hip/fastevents.c), and recorded
into a stream capture as graph nodes."""
from __future__ import annotations

from ..aql.native import now_ns
from ..errors import HipError, hipError_t
from .context import runtime
from .handle import Handle
from .stream import Command, Stream

hipEventDefault, hipEventBlockingSync, hipEventDisableTiming, hipEventInterprocess = 0, 1, 2, 4
hipEventReleaseToDevice, hipEventReleaseToSystem = 0x40000000, 0x80000000
EVENT_FLAGS = hipEventBlockingSync | hipEventDisableTiming | hipEventInterprocess | hipEventReleaseToDevice | \
    hipEventReleaseToSystem


class Event(Handle):
    """A marker in a stream.  It belongs to the device current when it was created (ROCclr: recording it
    on another device's stream is hipErrorInvalidHandle).  Flags as ROCclr accepts them: at most one
    release scope, hipEventInterprocess only with hipEventDisableTiming."""

    def __init__(self, flags: int = hipEventDefault, device=None):
        release = flags & (hipEventReleaseToDevice | hipEventReleaseToSystem)
        if flags & ~EVENT_FLAGS or release == (hipEventReleaseToDevice | hipEventReleaseToSystem) or \
                (flags & hipEventInterprocess and not flags & hipEventDisableTiming):
            raise HipError(hipError_t.hipErrorInvalidValue, f"invalid event flags 0x{flags:x}")
        if device is None:
            device = runtime().device()
        self.flags = flags
        self.device = device
        self._command: Command | None = None
        self.native = None                          # (signal, state) when C may record it: see attach_native
        self._native_seen = 0
        self._idle: Command | None = None           # the command of an idle record (complete, its signal our own)
        self.stream = None
        self.destroyed = False
        self.capture = self.capture_nodes = None    # set when recorded into a stream capture
        self.handle = id(self)
        self.shared = None                          # IPC: the state shared with other processes (runtime/ipc.py)

    def attach_native(self, signal, state) -> None:
        """Let the C ABI record this event natively (native/hip/fastevents.c): ``signal`` is the event's own
        (never pooled), completed by every native record's packet; ``state`` words: [0] native records so far,
        [1] 1 while the latest record is a native one.  Python adopts such a record before looking at the
        event (:attr:`command`)."""
        self.native = (signal, state)

    @property
    def command(self) -> Command | None:
        n = self.native
        if n is not None:
            state = n[1]
            seq = state[0]
            if seq != self._native_seen and state[1]:
                from .backend import CounterSignal
                self._native_seen = seq
                self._command = Command(CounterSignal(n[0]), what="marker")
                self.capture = self.capture_nodes = None
        return self._command

    @command.setter
    def command(self, cmd: Command | None) -> None:
        if self.native is not None:
            self.native[1][1] = 0                   # the latest record is this one (Python's)
        self._command = cmd

    def record(self, stream: Stream) -> None:
        self._check()
        if stream.device is not self.device:
            raise HipError(hipError_t.hipErrorInvalidHandle, f"event of device {self.device.index} recorded on a "
                           f"stream of device {stream.device.index}")
        if stream.capture is not None:              # recorded into the capture: other streams may join there
            self.capture = stream.capture
            self.capture_nodes = list(stream.capture.frontier.get(id(stream), []))
            stream.capture.add(stream, "event_record", {"event": self})
            return
        self.capture = self.capture_nodes = None
        stream._check()
        if stream.device.idle_if_armed():           # nothing to wait for: complete now, nothing queued
            cmd = self.command
            if cmd is not None and cmd is self._idle:   # the last record was one of these: its signal stamped again
                t = now_ns()
                cmd.signal.sig.set_times(t, t)
            else:
                self.command = self._idle = Command(stream._q().completed(), what="marker")
                self._idle.signal.pinned = True
        else:
            self.command = stream.marker(pin=True)  # the event keeps its own signal
        self.stream = stream
        shared = self.shared
        if shared is not None:                      # other processes see the record complete in stream order
            seq = shared.begin()
            stream.host_op(lambda: shared.complete(seq), what="IPC event")

    def _check(self):
        if self.destroyed:
            raise HipError(hipError_t.hipErrorInvalidHandle, "event was destroyed")

    def query(self) -> bool:
        self._check()
        if self.shared is not None:
            return self.shared.done()
        return self.command is None or self.command.done()

    def synchronize(self) -> None:
        self._check()
        if self.shared is not None:
            return self.shared.wait()
        if self.command is not None:
            self.command.signal.wait(None)

    def timestamp(self) -> float:
        """Completion time in seconds (host monotonic clock, stamped by the packet processor)."""
        if self.command is None:
            raise HipError(hipError_t.hipErrorInvalidHandle, "event was never recorded")
        if not self.command.done():
            raise HipError(hipError_t.hipErrorNotReady, "event has not completed")
        return self.command.signal.end_time()

    def elapsed_ms(self, end: "Event") -> float:
        """ROCclr's order of checks: other device, never recorded, timing disabled, not complete."""
        for e in (self, end):
            e._check()
        if self.device is not end.device:
            raise HipError(hipError_t.hipErrorInvalidHandle, "events of different devices")
        if self.command is None or end.command is None:
            raise HipError(hipError_t.hipErrorInvalidHandle, "event was never recorded")
        if (self.flags | end.flags) & hipEventDisableTiming:
            raise HipError(hipError_t.hipErrorInvalidHandle, "event created with hipEventDisableTiming")
        if not self.command.done() or not end.command.done():
            raise HipError(hipError_t.hipErrorNotReady, "event has not completed")
        return (end.timestamp() - self.timestamp()) * 1000.0
