"""The packet processor: one consumer thread per queue (started lazily by the first submit, or by
:meth:`PacketProcessor.start`), processing packets strictly in order.

Per packet (index i):

1. wait until slot i is published (futex on the doorbell; no busy loop), copy it out;
2. barrier bit set → wait until every earlier packet has completed.  The agent protocol is synchronous
   (a dispatch returns when its grid is done), so in this single in-order processor nothing is ever still
   in flight at that point; the wait is modelled explicitly (``_inflight``) and counted
   (``stats["barrier_bit"]``) so an asynchronous agent could be slotted in later;
3. acquire fence scope recorded (``fences[(acquire, release)]``; memory is coherent in the emulator) and
   the optional ``agent.acquire_fence(scope)`` hook called; completion signal ``start_ts`` written;
4. execute: kernel dispatch → ``agent.dispatch_kernel``; barrier-AND/OR → wait for all/any dependency
   signal to be 0 (0 handles ignored; none at all = satisfied); agent dispatch → copy / fill / host
   callback / host-memory copy / no-op (codes in :mod:`pyhip.aql.packets`); AMD barrier-value → wait for
   ``(signal & mask) cond value``;
5. release fence recorded (optional ``agent.release_fence(scope)``), then the completion signal gets
   end_ts, its error code (@56, 0 = ok) and an atomic decrement (native, waking waiters);
6. the slot is marked INVALID and the read index advanced.

Errors: any exception while executing a packet (an agent fault, a raising host callback, an undecodable
packet, an unknown dependency signal) is a *fault*: the exception is stored on the completion signal
(``Signal.error``, code ``error_code_of(exc)`` @56 — a HipError's ``code`` or 0x1016) and appended to
:attr:`PacketProcessor.faults` as a :class:`Fault` with the packet, index, type, signal and traceback.
The signal is still decremented, the thread keeps running and the queue stays usable.

Shutdown (:meth:`stop`): closes the queue (new submits raise QueueClosed), then either drains what was
submitted (``drain=True``, up to ``timeout`` s) or aborts: a barrier wait in progress and every packet
not yet executed is *cancelled* — its completion signal gets ERROR_ABORTED and is decremented, so no
waiter hangs — and recorded in :attr:`cancelled`.  An agent call or host callback that never returns
cannot be interrupted; ``stop`` then returns False after its timeout (the thread is a daemon).
"""
from __future__ import annotations

import collections
import itertools
import os
import sys
import struct
import threading
import time
import traceback
from dataclasses import dataclass, field

from . import packets as P
from .native import NativeBlock, ffi, lib, now_ns
from .queue import Queue
from .signal import (ERROR_ABORTED, ERROR_EXCEPTION, ERROR_INVALID_PACKET, ERROR_INVALID_SIGNAL, Signal,
                     error_code_of, wait_multi)

_LOG_FAULTS = os.environ.get("PYHIP_LOG_FAULTS", "") not in ("", "0")
_POLL_S = 0.05          # how often blocking waits look at the abort flag
DRAIN_SPIN_NS = 200_000  # after a packet, the native loop keeps watching for the next one this long
NATIVE_LOOP = os.environ.get("PYHIP_NATIVE_AQL", "1") != "0"
# pyhip_queue_process's status and counters (native/aql_processor.c)
PROC_IDLE, PROC_PYTHON, PROC_FAULT, PROC_CLOSED, PROC_MAX = range(5)
_COUNTER_NAMES = ("KernelDispatchPacket", "BarrierPacket", "BarrierPacket", "AgentDispatchPacket", "barrier_bit")
_N_COUNTERS = 16 + len(_COUNTER_NAMES)


class PacketError(RuntimeError):
    """A packet the processor cannot execute (bad type, unknown signal or callback)."""

    def __init__(self, message: str, code: int = ERROR_INVALID_PACKET):
        super().__init__(message)
        self.code = code


class Aborted(RuntimeError):
    """The packet was cancelled because its queue's processor was stopped without draining."""
    code = ERROR_ABORTED


@dataclass
class Fault:
    index: int                      # packet index in the queue
    packet: object                  # decoded packet (raw bytes if it could not be decoded)
    error: BaseException
    packet_type: int = 0
    signal: int = 0                 # completion signal handle (0 = none)
    code: int = ERROR_EXCEPTION     # what was written to the signal's error word
    time_ns: int = 0
    traceback: str = field(default="", repr=False)


class _NoAgent:
    """An agent without a native dispatch function: kernels go to Python, the rest may stay native."""
    fn = ffi.NULL
    ctx = ffi.NULL


class PacketProcessor:
    def __init__(self, queue: Queue, agent, name: str = "", *, lazy: bool = True, on_fault=None):
        self.queue = queue
        self.agent = agent
        self.name = name or f"pyhip-aql-{queue.id}"
        self.on_fault = on_fault                  # optional fn(Fault), called on the processor thread
        self.faults: list[Fault] = []
        self.cancelled: list[int] = []            # indices of packets cancelled by stop(drain=False)
        self._processed = 0
        self._fences: collections.Counter = collections.Counter()   # (acquire, release) scope pairs
        self._stats: collections.Counter = collections.Counter()    # per packet type name, "barrier_bit"
        self._counters = None                     # the native loop's counts (read live: see the properties)
        self._acquire_hook = getattr(agent, "acquire_fence", None)
        self._release_hook = getattr(agent, "release_fence", None)
        self._callbacks: dict[int, tuple[object, bool]] = {}
        self._cb_ids = itertools.count(1)
        self._cb_lock = threading.Lock()
        self._inflight = 0
        self._stop_word = None                    # set to 1 to make the native loop return (abort)
        self._stopping = False
        self._abort = False
        self._thread: threading.Thread | None = None
        self._start_lock = threading.Lock()
        if lazy:
            queue._on_submit = self._lazy_start

    # -- lifecycle -------------------------------------------------------------------------------------
    def start(self) -> None:
        with self._start_lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name=self.name, daemon=True)
                self._thread.start()
            if self.queue._on_submit == self._lazy_start:
                self.queue._on_submit = None

    def _lazy_start(self) -> None:
        if self._thread is None:
            self.start()

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def stop(self, timeout: float = 10.0, drain: bool = True) -> bool:
        """Close the queue, finish (``drain``) or cancel what was submitted, end the thread.  After
        ``timeout`` s of draining the rest is cancelled.  True if the thread ended."""
        self.queue.close()
        self._stopping = True
        if not drain:
            self._set_abort()
        if self._thread is None:
            if self.queue.write_index == self.queue.read_index:
                return True
            self.start()                          # packets were submitted without a consumer
        self.queue.kick()
        self._thread.join(timeout)
        if self._thread.is_alive():
            self._set_abort()
            self.queue.kick()
            self._thread.join(min(2.0, max(timeout, 0.2)))
        return not self._thread.is_alive()

    # -- statistics: the Python path's counts plus the native loop's (written before each completion) --------
    @property
    def processed(self) -> int:
        c = self._counters
        return self._processed + (sum(c[16:16 + 4]) if c is not None else 0)

    @property
    def fences(self) -> collections.Counter:
        out = collections.Counter(self._fences)
        c = self._counters
        if c is not None:
            for i in range(16):
                if c[i]:
                    out[(i >> 2, i & 3)] += c[i]
        return out

    @property
    def stats(self) -> collections.Counter:
        out = collections.Counter(self._stats)
        c = self._counters
        if c is not None:
            for i, name in enumerate(_COUNTER_NAMES):
                if c[16 + i]:
                    out[name] += c[16 + i]
        return out

    def _set_abort(self) -> None:
        self._abort = True
        word = self._stop_word
        if word is not None:
            lib.pyhip_store_release_u32(word.u32(0), 1)

    def register_callback(self, fn, once: bool = True) -> int:
        """An id for an AGENT_CALLBACK packet (arg0); ``fn()`` runs on the processor thread in stream
        order.  ``once`` ids are forgotten after they ran (or were cancelled)."""
        with self._cb_lock:
            cid = next(self._cb_ids)
            self._callbacks[cid] = (fn, once)
            return cid

    # -- the loop ----------------------------------------------------------------------------------------
    def _run(self) -> None:
        q = self.queue
        index = q.read_index
        native = self._native_loop()
        while not self._abort:
            failure = None
            if native is not None:
                status = self._drain_native(native)
                index = q.read_index
                if status in (PROC_IDLE, PROC_CLOSED, PROC_MAX):
                    if status == PROC_CLOSED and q.write_index <= index:
                        if self._stopping:
                            return
                        time.sleep(_POLL_S)            # closed by someone else: nothing can come any more
                    continue
                if status == PROC_FAULT:
                    failure = native.failure(q.peek(index))
            raw = q.wait_packet(index, _POLL_S)
            if raw is None:
                if self._stopping and q.write_index <= index:
                    return
                continue
            try:
                self._process(raw, index, failure)
            except BaseException as exc:          # a bug in the processor itself: record, go on
                self._record(index, raw, exc, 0, 0, ERROR_EXCEPTION)
            q.retire(index)
            self._processed += 1
            index += 1
        self._cancel_from(index)

    def _native_loop(self):
        """The agent's native hook for this queue (``agent.native_queue(queue)``: an object with ``fn``, the
        agent's dispatch function as ``void*``, ``ctx``, and ``failure(raw)``: the exception of a packet that
        faulted), or a hook without an agent function (barriers and no-ops are still retired natively).  None
        when PYHIP_NATIVE_AQL=0 or the agent has fence hooks: every packet goes through :meth:`_process`."""
        if not NATIVE_LOOP or self._acquire_hook is not None or self._release_hook is not None:
            return None                          # fence hooks are Python: every packet must reach them
        hook = getattr(self.agent, "native_queue", None)
        native = hook(self.queue) if hook is not None else None
        if native is None:
            native = _NoAgent()
        self._stop_word = NativeBlock(8)
        if self._abort:
            lib.pyhip_store_release_u32(self._stop_word.u32(0), 1)
        self._status = ffi.new("int32_t[1]")
        self._counters = ffi.new(f"uint64_t[{_N_COUNTERS}]")
        return native

    def _drain_native(self, native) -> int:
        """Retire in native code every packet the loop can finish (see native/aql_processor.c); returns why
        it stopped.  Its counts show in :attr:`stats`, :attr:`fences` and :attr:`processed`."""
        lib.pyhip_queue_process(self.queue._q, native.fn, native.ctx, 1 << 62, int(_POLL_S * 1e9), DRAIN_SPIN_NS,
                                self._stop_word.u32(0), self._status, self._counters)
        return self._status[0]

    def _cancel_from(self, index: int) -> None:
        """Abort: complete every packet still in the (closed) queue with ERROR_ABORTED."""
        q = self.queue
        while index < q.write_index:
            raw = q.wait_packet(index, 1.0)       # a reserved slot is published right after reservation
            if raw is not None:
                sig = Signal.from_handle(struct.unpack_from("<Q", raw, 56)[0])
                if raw[0] == P.TYPE_AGENT_DISPATCH and raw[2] | raw[3] << 8 == P.AGENT_CALLBACK:
                    with self._cb_lock:
                        self._callbacks.pop(struct.unpack_from("<Q", raw, 16)[0], None)
                if sig is not None:
                    sig.error = Aborted(f"packet {index} cancelled: queue {q.id} stopped")
                    lib.pyhip_signal_complete(sig.ptr, ERROR_ABORTED)
                self.cancelled.append(index)
            q.retire(index)
            index += 1

    def _record(self, index, pkt, exc, ptype, handle, code) -> None:
        f = Fault(index, pkt, exc, ptype, handle, code, now_ns(),
                  "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)))
        self.faults.append(f)
        if _LOG_FAULTS:                           # C programs only see error codes: PYHIP_LOG_FAULTS=1 shows why
            print(f"pyhip: packet {index} on queue {self.queue.id} failed: {exc}", file=sys.stderr, flush=True)
        if self.on_fault is not None:
            try:
                self.on_fault(f)
            except BaseException:  # noqa: BLE001 - a bad hook must not kill the processor
                pass

    def _process(self, raw: bytes, index: int, failure: BaseException | None = None) -> None:
        ptype, barrier, acquire, release = P.header_fields(raw[0] | raw[1] << 8)
        self._fences[(acquire, release)] += 1
        handle = struct.unpack_from("<Q", raw, 56)[0]   # completion_signal: +56 in every packet format
        sig = Signal.from_handle(handle) if handle else None
        if handle and sig is None:
            self._record(index, raw, PacketError(f"unknown completion signal 0x{handle:x}", ERROR_INVALID_SIGNAL),
                         ptype, handle, ERROR_INVALID_SIGNAL)
        if barrier:
            self._stats["barrier_bit"] += 1
            self._wait_idle()
        if acquire and self._acquire_hook is not None:
            self._acquire_hook(acquire)
        if sig is not None:
            lib.pyhip_signal_set_start(sig.ptr)
        error, code, pkt = None, 0, raw
        self._inflight += 1
        try:
            try:
                pkt = P.decode(raw)
            except ValueError as exc:
                raise PacketError(str(exc)) from exc
            self._stats[type(pkt).__name__] += 1
            if failure is not None:               # the native loop ran it and it faulted
                raise failure
            self._execute(ptype, pkt, index)
        except Aborted as exc:
            error, code = exc, ERROR_ABORTED
            self.cancelled.append(index)
        except BaseException as exc:            # a fault never kills the processor
            error, code = exc, error_code_of(exc)
            self._record(index, pkt, exc, ptype, handle, code)
        finally:
            self._inflight -= 1
        if release and self._release_hook is not None:
            try:
                self._release_hook(release)
            except BaseException as exc:  # noqa: BLE001
                self._record(index, pkt, exc, ptype, handle, error_code_of(exc))
        if sig is not None:
            if error is not None or not sig.sticky:
                sig.error = error               # Python-side record first, then the native decrement
            lib.pyhip_signal_complete(sig.ptr, code)

    def _wait_idle(self) -> None:
        # Synchronous agent: every earlier packet completed before this one was taken (see module doc).
        if self._inflight:
            raise PacketError("barrier bit: earlier packets still in flight")

    def _execute(self, ptype: int, pkt, index: int) -> None:
        if ptype == P.TYPE_KERNEL_DISPATCH:
            self.agent.dispatch_kernel(pkt, self.queue.slot_address(index), self.queue)
        elif ptype in (P.TYPE_BARRIER_AND, P.TYPE_BARRIER_OR):
            self._barrier(pkt, ptype == P.TYPE_BARRIER_AND)
        elif ptype == P.TYPE_AGENT_DISPATCH:
            self._agent_packet(pkt)
        elif ptype == P.TYPE_VENDOR:
            self._barrier_value(pkt)
        else:
            raise PacketError(f"unsupported packet type {ptype}")

    def _signal(self, handle: int) -> Signal:
        s = Signal.from_handle(handle)
        if s is None:
            raise PacketError(f"dependency 0x{handle:x} is not a live signal", ERROR_INVALID_SIGNAL)
        return s

    def _barrier(self, pkt: P.BarrierPacket, all_of: bool) -> None:
        deps = [self._signal(h) for h in pkt.dep_signals if h]
        while not wait_multi(deps, all_of, _POLL_S):
            if self._abort:
                raise Aborted("barrier wait cancelled: queue stopped")

    def _barrier_value(self, pkt: P.BarrierValuePacket) -> None:
        if pkt.condition not in (P.BV_EQ, P.BV_NE, P.BV_LT, P.BV_GTE):
            raise PacketError(f"barrier-value condition {pkt.condition}")
        s = self._signal(pkt.signal)
        while not s.wait(pkt.condition, pkt.value, _POLL_S, pkt.mask):
            if self._abort:
                raise Aborted("barrier-value wait cancelled: queue stopped")

    def _agent_packet(self, pkt: P.AgentDispatchPacket) -> None:
        a0, a1, a2, a3 = pkt.args
        if pkt.type == P.AGENT_COPY:
            self.agent.copy(a0, a1, a2)
        elif pkt.type == P.AGENT_FILL:
            if a3 not in (1, 2, 4, 8):
                raise PacketError(f"fill element width {a3}")
            self.agent.fill(a0, a1, a2, a3)
        elif pkt.type == P.AGENT_CALLBACK:
            with self._cb_lock:
                entry = self._callbacks.get(a0)
                if entry is not None and entry[1]:
                    del self._callbacks[a0]
            if entry is None:
                raise PacketError(f"unknown host callback id {a0}")
            entry[0]()
        elif pkt.type == P.AGENT_HOST_COPY:
            lib.pyhip_copy_bytes(ffi.cast("void*", a0), ffi.cast("void*", a1), a2)
        elif pkt.type == P.AGENT_NOP:
            pass
        else:
            raise PacketError(f"unsupported agent-dispatch type 0x{pkt.type:x}")
