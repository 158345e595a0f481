"""HSA signals: a 64-byte ``amd_signal_t`` in native memory; the handle is its address.

Layout (docs/code-object.md §8.4): kind i64 @0 (1 = user signal), value i64 @8, start_ts @32,
end_ts @40 (CLOCK_MONOTONIC ns, written by the packet processor).  pyhip's use of the reserved words:

    @28  u32  wake sequence: bumped by every update through this API (the futex word waiters sleep on)
    @56  u32  error code of the packet that completed the signal (0 = ok; see ERROR_* below)
    @60  u32  number of threads sleeping in a wait

All value updates are native atomics (acq/rel).  A wait spins for ``SPIN_NS`` then sleeps on a futex;
each sleep is capped at 20 ms inside C and each native call at ``_CHUNK_S`` seconds so Ctrl-C works
and writers that bypass this API (device code storing to the value) are still seen.  The Python-side
record of a failure is :attr:`Signal.error` (the exception); the word @56 is its code for native readers.
"""
from __future__ import annotations

import threading
import time
import weakref

from .native import NativeBlock, ffi, lib

SIGNAL_SIZE = 64
KIND_INVALID, KIND_USER = 0, 1
VALUE_OFF, SEQ_OFF, START_TS_OFF, END_TS_OFF, ERROR_OFF, WAITERS_OFF = 8, 28, 32, 40, 56, 60
COND_EQ, COND_NE, COND_LT, COND_GTE = range(4)

# error codes written @56 (HSA status values)
ERROR_NONE = 0
ERROR_EXCEPTION = 0x1016        # HSA_STATUS_ERROR_EXCEPTION: the agent / a host callback raised
ERROR_INVALID_PACKET = 0x1009   # HSA_STATUS_ERROR_INVALID_PACKET_FORMAT: undecodable packet, bad type
ERROR_INVALID_SIGNAL = 0x1006   # HSA_STATUS_ERROR_INVALID_SIGNAL: a dependency handle is not a signal
ERROR_ABORTED = 0x1007          # HSA_STATUS_ERROR_INVALID_QUEUE: cancelled because its queue was stopped

SPIN_NS = 20_000                # busy-wait budget before sleeping (GIL released while spinning; yields the CPU)
_CHUNK_S = 0.1
_CHUNK_NS = int(_CHUNK_S * 1e9)
_CONDS = (COND_EQ, COND_NE, COND_LT, COND_GTE)

_registry: "weakref.WeakValueDictionary[int, Signal]" = weakref.WeakValueDictionary()
_registry_lock = threading.Lock()


def error_code_of(exc: BaseException) -> int:
    """The code stored @56 for ``exc``: its integer ``code`` attribute (e.g. a HipError) or
    ERROR_EXCEPTION."""
    code = getattr(exc, "code", None)
    try:
        code = int(code)
    except (TypeError, ValueError):
        code = 0
    return code & 0xFFFFFFFF or ERROR_EXCEPTION


class Signal:
    """A user signal (kind 1).  ``Signal.from_handle(h)`` finds a live signal by its address."""

    __slots__ = ("_mem", "_p", "handle", "error", "sticky", "__weakref__")

    def __init__(self, initial: int = 0):
        self._mem = NativeBlock(SIGNAL_SIZE, lib.pyhip_signal_free)    # unregisters the live signal, then frees
        self._p = ffi.cast("void*", self._mem.ptr)
        self.handle: int = self._mem.address
        self.error: BaseException | None = None          # exception recorded by the packet processor
        self.sticky = False              # shared by many packets: a later success does not clear an error
        lib.pyhip_store_release_i64(self._mem.i64(0), KIND_USER)
        lib.pyhip_signal_store(self._p, initial)
        with _registry_lock:
            _registry[self.handle] = self
        if not lib.pyhip_signal_register(self._p):      # native readers (the packet processor's loop) ask it
            raise MemoryError("cannot register a signal")

    def __repr__(self) -> str:
        return f"<Signal 0x{self.handle:x} value={self.load()}{' error' if self.error else ''}>"

    @staticmethod
    def from_handle(handle: int) -> "Signal | None":
        with _registry_lock:
            return _registry.get(handle)

    @property
    def ptr(self):
        """``void*`` to the amd_signal_t (for native callers)."""
        return self._p

    # -- value ------------------------------------------------------------------------------------------
    def load(self) -> int:
        return lib.pyhip_signal_load(self._p)

    def store(self, value: int) -> None:
        lib.pyhip_signal_store(self._p, value)

    def add(self, delta: int) -> int:
        """Atomic add; returns the new value."""
        return lib.pyhip_signal_add(self._p, delta)

    def subtract(self, delta: int = 1) -> int:
        return lib.pyhip_signal_add(self._p, -delta)

    def exchange(self, value: int) -> int:
        return lib.pyhip_signal_exchange(self._p, value)

    def cas(self, expected: int, desired: int) -> int:
        """Compare-and-swap; returns the value observed (== expected on success)."""
        return lib.pyhip_signal_cas(self._p, expected, desired)

    def store_max(self, value: int) -> None:
        """Raise the value to ``value`` if it is lower (doorbells rung by several producers)."""
        lib.pyhip_signal_store_max(self._p, value)

    def wait(self, cond: int, value: int, timeout: float | None = None, mask: int = -1) -> bool:
        """Block until ``(load() & mask) cond value``; False if ``timeout`` seconds pass first."""
        if timeout is None and cond in _CONDS:          # the common case, one native call when satisfied soon
            spin = SPIN_NS
            while not lib.pyhip_signal_wait(self._p, cond, value, mask, _CHUNK_NS, spin, ffi.NULL):
                spin = 0
            return True
        return self.wait_value(cond, value, timeout, mask)[0]

    def wait_value(self, cond: int, value: int, timeout: float | None = None,
                   mask: int = -1) -> tuple[bool, int]:
        """Like :meth:`wait`, also returning the last value read."""
        if cond not in (COND_EQ, COND_NE, COND_LT, COND_GTE):
            raise ValueError(f"bad signal condition {cond}")
        out = ffi.new("int64_t*")
        deadline = None if timeout is None else time.monotonic() + max(timeout, 0.0)
        spin = SPIN_NS
        while True:
            left = _CHUNK_S if deadline is None else min(_CHUNK_S, deadline - time.monotonic())
            r = lib.pyhip_signal_wait(self._p, cond, value, mask, max(int(left * 1e9), 0), spin, out)
            if r == 1:
                return True, out[0]
            if deadline is not None and time.monotonic() >= deadline:
                return False, out[0]
            spin = 0

    # -- timestamps and errors (written by the packet processor) ---------------------------------------
    def set_times(self, start_ns: int | None = None, end_ns: int | None = None) -> None:
        if start_ns is not None:
            lib.pyhip_store_release_u64(self._mem.u64(START_TS_OFF), start_ns)
        if end_ns is not None:
            lib.pyhip_store_release_u64(self._mem.u64(END_TS_OFF), end_ns)

    @property
    def start_ns(self) -> int:
        return lib.pyhip_load_acquire_u64(self._mem.u64(START_TS_OFF))

    @property
    def end_ns(self) -> int:
        return lib.pyhip_load_acquire_u64(self._mem.u64(END_TS_OFF))

    def set_error(self, exc: BaseException | None, code: int | None = None) -> None:
        self.error = exc
        c = 0 if exc is None else (code if code is not None else error_code_of(exc))
        lib.pyhip_store_release_u32(self._mem.u32(ERROR_OFF), c)

    @property
    def error_code(self) -> int:
        return lib.pyhip_load_acquire_u32(self._mem.u32(ERROR_OFF))

    def raw(self) -> bytes:
        """The 64 bytes of the amd_signal_t."""
        return bytes(self._mem.buffer())


def wait_multi(signals: "list[Signal]", all_of: bool, timeout: float | None = None) -> bool:
    """Barrier semantics: True when every (``all_of``) or any signal is 0; an empty list is satisfied."""
    arr = ffi.new("void*[]", [s.ptr for s in signals]) if signals else ffi.NULL
    deadline = None if timeout is None else time.monotonic() + max(timeout, 0.0)
    spin = SPIN_NS
    while True:
        left = _CHUNK_S if deadline is None else min(_CHUNK_S, deadline - time.monotonic())
        if lib.pyhip_signal_wait_multi(arr, len(signals), int(all_of), max(int(left * 1e9), 0), spin):
            return True
        if deadline is not None and time.monotonic() >= deadline:
            return False
        spin = 0


class SignalPool:
    """Completion signals handed out (value ``initial``, error cleared, timestamps 0) and taken back only
    once their completion was observed: :meth:`release` refuses a signal whose value is not 0, a signal
    this pool did not hand out, or one released twice — so a signal is never reused while a packet may
    still decrement it."""

    def __init__(self, max_free: int = 4096):
        self._free: list[Signal] = []
        self._out: set[int] = set()
        self._lock = threading.Lock()
        self.max_free = max_free

    def acquire(self, initial: int = 1) -> Signal:
        with self._lock:
            s = self._free.pop() if self._free else None
        if s is None:
            s = Signal(initial)
        else:
            s.set_error(None)
            s.set_times(0, 0)
            s.store(initial)
        with self._lock:
            self._out.add(s.handle)
        return s

    def release(self, s: Signal) -> None:
        v = s.load()
        if v != 0:
            raise RuntimeError(f"signal 0x{s.handle:x} released before its completion was observed (value {v})")
        with self._lock:
            if s.handle not in self._out:
                raise RuntimeError(f"signal 0x{s.handle:x} was not handed out by this pool (or released twice)")
            self._out.discard(s.handle)
            if len(self._free) < self.max_free:
                self._free.append(s)

    @property
    def outstanding(self) -> int:
        with self._lock:
            return len(self._out)
