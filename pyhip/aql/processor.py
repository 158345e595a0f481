"""The packet processor: one consumer thread per queue, processing packets strictly in order.

Kernel dispatches go to the agent; barrier-AND/OR wait on their dependency signals; agent-dispatch
packets carry copies, fills and host callbacks so stream order covers them; the vendor barrier-value
packet waits on a masked condition.  At the end of each packet the completion signal gets its end
timestamp and is decremented.  An exception (a kernel fault, a bad copy, a raising callback) is
recorded on that signal and in :attr:`PacketProcessor.faults`; the processor keeps running.
"""
from __future__ import annotations

import itertools
import threading
import time
from dataclasses import dataclass

from . import packets as P
from .queue import Queue
from .signal import COND_EQ, COND_GTE, COND_LT, COND_NE, Signal


class PacketError(RuntimeError):
    pass


@dataclass
class Fault:
    index: int
    packet: object
    error: BaseException


class PacketProcessor:
    def __init__(self, queue: Queue, agent, name: str = ""):
        self.queue = queue
        self.agent = agent
        self.name = name or f"pyhip-aql-{queue.id}"
        self.faults: list[Fault] = []
        self.processed = 0
        self.fences: dict[tuple[int, int], int] = {}
        self._callbacks: dict[int, object] = {}
        self._cb_ids = itertools.count(1)
        self._cb_lock = threading.Lock()
        self._stop = False
        self._thread: threading.Thread | None = None
        self._start_lock = threading.Lock()

    # -- lifecycle ---------------------------------------------------------------------------------
    def start(self) -> None:
        with self._start_lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name=self.name, daemon=True)
                self._thread.start()

    def stop(self, timeout: float = 10.0) -> bool:
        """Finish what was published, then stop.  Returns False if the thread did not end in time."""
        self._stop = True
        self.queue.doorbell.store_max(self.queue.doorbell.load())
        if self._thread is not None:
            self._thread.join(timeout)
            return not self._thread.is_alive()
        return True

    def register_callback(self, fn) -> int:
        with self._cb_lock:
            cid = next(self._cb_ids)
            self._callbacks[cid] = fn
            return cid

    # -- the loop ----------------------------------------------------------------------------------------
    def _run(self) -> None:
        q = self.queue
        index = q.read_index
        while True:
            raw = q.peek(index)
            if raw is None:
                if self._stop and q.write_index <= index:
                    return
                q.wait_doorbell(index, 0.05)
                continue
            self._process(raw, index)
            q.retire(index)
            self.processed += 1
            index += 1

    def _process(self, raw: bytes, index: int) -> None:
        ptype, barrier, acquire, release = P.header_fields(raw[0] | raw[1] << 8)
        self.fences[(acquire, release)] = self.fences.get((acquire, release), 0) + 1
        try:
            pkt = P.decode(raw)
        except ValueError as exc:
            self.faults.append(Fault(index, raw, exc))
            return
        signal = Signal.from_handle(pkt.completion_signal) if pkt.completion_signal else None
        if pkt.completion_signal and signal is None:
            self.faults.append(Fault(index, pkt, PacketError("unknown completion signal handle")))
        if signal is not None:
            signal.set_times(start_ns=time.monotonic_ns())
        error = None
        try:
            if ptype == P.TYPE_KERNEL_DISPATCH:
                self.agent.dispatch_kernel(pkt, self.queue.slot_address(index), self.queue)
            elif ptype in (P.TYPE_BARRIER_AND, P.TYPE_BARRIER_OR):
                self._barrier(pkt, ptype == P.TYPE_BARRIER_AND)
            elif ptype == P.TYPE_AGENT_DISPATCH:
                self._agent_packet(pkt)
            elif ptype == P.TYPE_VENDOR:
                self._barrier_value(pkt)
        except BaseException as exc:   # a fault never kills the processor
            error = exc
            self.faults.append(Fault(index, pkt, exc))
        if signal is not None:
            signal.set_error(error)
            signal.set_times(end_ns=time.monotonic_ns())
            signal.subtract(1)

    def _deps(self, handles) -> list[Signal]:
        out = []
        for h in handles:
            if h:
                s = Signal.from_handle(h)
                if s is None:
                    raise PacketError(f"barrier depends on unknown signal 0x{h:x}")
                out.append(s)
        return out

    def _barrier(self, pkt, all_of: bool) -> None:
        deps = self._deps(pkt.dep_signals)
        if not deps:
            return
        while True:
            done = [s.load() == 0 for s in deps]
            if all(done) if all_of else any(done):
                return
            waiting = next(s for s, d in zip(deps, done) if not d)
            waiting.wait(COND_EQ, 0, 0.05)

    def _barrier_value(self, pkt) -> None:
        s = Signal.from_handle(pkt.signal)
        if s is None:
            raise PacketError(f"barrier-value on unknown signal 0x{pkt.signal:x}")
        conds = {P.BV_EQ: lambda v: v == pkt.value, P.BV_NE: lambda v: v != pkt.value,
                 P.BV_LT: lambda v: v < pkt.value, P.BV_GTE: lambda v: v >= pkt.value}
        test = conds[pkt.condition]
        while not test(s.load() & pkt.mask):
            s.wait(COND_NE, s.load(), 0.05)

    def _agent_packet(self, pkt) -> None:
        a0, a1, a2, a3 = pkt.args
        if pkt.type == P.AGENT_COPY:
            self.agent.copy(a0, a1, a2)
        elif pkt.type == P.AGENT_FILL:
            self.agent.fill(a0, a1, a2, a3)
        elif pkt.type == P.AGENT_CALLBACK:
            with self._cb_lock:
                fn = self._callbacks.pop(a0, None)
            if fn is None:
                raise PacketError(f"unknown host callback {a0}")
            fn()
        else:
            raise PacketError(f"unsupported agent-dispatch type 0x{pkt.type:x}")
