"""Completion signals of the HSA backend: ROCr signals the runtime's streams wait on (``CommandSignal``'s
contract), their pool (reused only after their completion was observed) and the counter the C ABI's native
launches complete through."""
from __future__ import annotations

import platform
import threading
import time

from ...aql.native import ffi as aql_ffi
from ...aql.native import lib as aql_lib
from ...errors import HipError
from . import api
from .api import ffi

_PLAIN_LOADS_ACQUIRE = platform.machine().lower() in ("x86_64", "amd64")   # TSO: every load is an acquire
WAIT_CHUNK_NS = 50_000_000


class HsaSignal:
    """A completion signal (``CommandSignal`` interface) backed by an HSA signal."""

    __slots__ = ("sig", "handle", "pool", "queue", "pinned", "internal", "_released", "_error", "_host_end", "_vp",
                 "kernel")

    def __init__(self, sig, pool):
        self.sig, self.handle, self.pool = sig, sig.handle, pool
        self._vp = aql_ffi.cast("int64_t*", self.handle + 8)
        self.queue, self.pinned, self._released, self._error, self._host_end = None, False, False, None, None
        self.internal = False          # a later packet of its queue depends on it: the queue recycles it
        self.kernel = 0                # the kernel object when it completes a dispatch (a fault names it)

    def _lib(self):
        return self.pool.hsa.lib

    def value(self) -> int:
        """The signal's value: an acquire load of amd_signal_t.value (what hsa_signal_load_scacquire does for
        ROCr's memory-backed signals), without a call into ROCr.  On x86-64 an aligned 8-byte load is atomic and
        already has acquire ordering, so it is read in place: a call into the native helper would release the
        GIL (cffi does around every call) and cost a GIL hand-off per poll while the device runs."""
        if _PLAIN_LOADS_ACQUIRE:
            return self._vp[0]
        return aql_lib.pyhip_load_acquire_i64(self._vp)

    def is_complete(self) -> bool:
        if self.value() <= 0:
            return True
        q = self.queue
        return q is not None and q.dead is not None

    def wait(self, timeout: float | None = None) -> bool:
        lib = self._lib()
        deadline = None if timeout is None else time.monotonic() + max(timeout, 0.0)
        while True:
            left = WAIT_CHUNK_NS if deadline is None else min(WAIT_CHUNK_NS, int((deadline - time.monotonic()) * 1e9))
            if lib.hsa_signal_wait_scacquire(self.sig, api.COND_LT, 1, max(left, 0), api.WAIT_BLOCKED) <= 0:
                return True
            q = self.queue
            if q is not None and q.dead is not None:
                return True
            if deadline is not None and time.monotonic() >= deadline:
                return False

    def error(self) -> HipError | None:
        if self._error is not None:
            return self._error
        q = self.queue
        if q is not None and q.dead is not None and self.value() > 0:
            return q.dead
        return None

    def end_time(self) -> float:
        if self._host_end is not None:
            return self._host_end
        t = ffi.new("hsa_amd_profiling_dispatch_time_t*")
        q = self.queue
        if q is not None and self._lib().hsa_amd_profiling_get_dispatch_time(q.agent.struct, self.sig, t) == 0 \
                and t.end:
            return t.end / 1e9
        return time.monotonic()

    def release(self) -> None:
        if not self._released and not self.pinned and self.value() <= 0:
            self._released = True
            if not self.internal:
                self.pool.give_back(self)


class HsaSignalPool:
    """Completion signals reused only once their completion (value 0) was observed."""

    def __init__(self, hsa):
        self.hsa = hsa
        self._free: list[HsaSignal] = []
        self._all: list[HsaSignal] = []     # every signal made: destroyed at shutdown
        self._lock = threading.Lock()

    def acquire(self, queue, initial: int = 1) -> HsaSignal:
        with self._lock:
            s = self._free.pop() if self._free else None
        if s is None:
            out = ffi.new("hsa_signal_t*")
            self.hsa.check(self.hsa.lib.hsa_signal_create(initial, 0, ffi.NULL, out), "hsa_signal_create")
            s = HsaSignal(out[0], self)
            with self._lock:
                self._all.append(s)
        else:
            self.hsa.lib.hsa_signal_store_relaxed(s.sig, initial)
            s._released, s._error, s._host_end, s.pinned, s.internal = False, None, None, False, False
            s.kernel = 0
        s.queue = queue
        return s

    def live(self) -> list[HsaSignal]:
        """Every signal made and not in the free list (cold paths: a fault)."""
        with self._lock:
            free = set(map(id, self._free))
            return [s for s in self._all if id(s) not in free]

    def destroy_all(self) -> None:
        """At shutdown, after the queues are gone: every signal back to ROCr."""
        with self._lock:
            everything, self._all, self._free = self._all, [], []
        for s in everything:
            self.hsa.lib.hsa_signal_destroy(s.sig)

    def give_back(self, s: HsaSignal) -> None:
        with self._lock:
            self._free.append(s)


class HsaCounter:
    """The native launches' completion as the stream sees it (CounterSignal's contract): complete at 0 — or
    once its queue died (a fault: the dispatches still counted never complete) —, never pooled; the queue's
    error is reported once."""

    __slots__ = ("sig", "pinned", "_reported")

    def __init__(self, sig: HsaSignal):
        self.sig, self.pinned, self._reported = sig, True, False

    @property
    def handle(self) -> int:
        return self.sig.handle

    def is_complete(self) -> bool:
        return self.sig.is_complete()

    def wait(self, timeout: float | None = None) -> bool:
        return self.sig.wait(timeout)

    def error(self):
        if self._reported:
            return None
        err = self.sig.error()
        self._reported = err is not None
        return err

    def end_time(self) -> float:
        return time.monotonic()

    def release(self) -> None:
        pass
