"""HSA signals: a 64-byte ``amd_signal_t`` in native memory (kind @0, value @8, start/end timestamps
@32/@40); the handle is its address.  Waits take a condition and a timeout and never spin for long:
waiters sleep on a condition variable that every update notifies."""
from __future__ import annotations

import threading
import time
import weakref

from .native import NativeBlock, lib

SIGNAL_SIZE = 64
KIND_USER = 1
COND_EQ, COND_NE, COND_LT, COND_GTE = range(4)
_ERR_OFFSET = 56            # reserved word: nonzero = the packet that completed this signal faulted

_registry: "weakref.WeakValueDictionary[int, Signal]" = weakref.WeakValueDictionary()
_registry_lock = threading.Lock()


def _test(cond: int, value: int, cmp: int) -> bool:
    if cond == COND_EQ:
        return value == cmp
    if cond == COND_NE:
        return value != cmp
    if cond == COND_LT:
        return value < cmp
    if cond == COND_GTE:
        return value >= cmp
    raise ValueError(f"bad signal condition {cond}")


class Signal:
    def __init__(self, initial: int = 0):
        self._mem = NativeBlock(SIGNAL_SIZE)
        self._value = self._mem.i64(8)
        self._cv = threading.Condition(threading.Lock())
        self.error = None                      # exception recorded by the packet processor
        lib.pyhip_store_release_i64(self._mem.i64(0), KIND_USER)
        lib.pyhip_store_release_i64(self._value, initial)
        self.handle = self._mem.address
        with _registry_lock:
            _registry[self.handle] = self

    @staticmethod
    def from_handle(handle: int) -> "Signal | None":
        with _registry_lock:
            return _registry.get(handle)

    # -- value -----------------------------------------------------------------------------------------
    def load(self) -> int:
        return lib.pyhip_load_acquire_i64(self._value)

    def store(self, value: int) -> None:
        lib.pyhip_store_release_i64(self._value, value)
        with self._cv:
            self._cv.notify_all()

    def store_max(self, value: int) -> None:
        """Raise the value to ``value`` if it is lower (doorbells rung by several producers)."""
        lib.pyhip_store_max_i64(self._value, value)
        with self._cv:
            self._cv.notify_all()

    def add(self, delta: int) -> int:
        v = lib.pyhip_add_fetch_i64(self._value, delta)
        with self._cv:
            self._cv.notify_all()
        return v

    def subtract(self, delta: int = 1) -> int:
        return self.add(-delta)

    def wait(self, cond: int, value: int, timeout: float | None = None) -> bool:
        """Block until ``load() cond value``; False if ``timeout`` seconds pass first."""
        if _test(cond, self.load(), value):
            return True
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cv:
            while not _test(cond, self.load(), value):
                if deadline is None:
                    self._cv.wait(0.05)
                else:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        return False
                    self._cv.wait(min(left, 0.05))
        return True

    # -- timestamps and errors (written by the packet processor) ----------------------------------------
    def set_times(self, start_ns: int | None = None, end_ns: int | None = None) -> None:
        if start_ns is not None:
            self._mem.u64(32)[0] = start_ns
        if end_ns is not None:
            self._mem.u64(40)[0] = end_ns

    @property
    def start_ns(self) -> int:
        return self._mem.u64(32)[0]

    @property
    def end_ns(self) -> int:
        return self._mem.u64(40)[0]

    def set_error(self, exc: BaseException | None) -> None:
        self.error = exc
        self._mem.u32(_ERR_OFFSET)[0] = 0 if exc is None else int(getattr(exc, "code", 999) or 999)

    @property
    def error_code(self) -> int:
        return self._mem.u32(_ERR_OFFSET)[0]


class SignalPool:
    """Completion signals handed out at 1 and taken back only once their completion (value 0) was
    observed — a signal is never reused while a packet may still decrement it."""

    def __init__(self):
        self._free: list[Signal] = []
        self._lock = threading.Lock()

    def acquire(self, initial: int = 1) -> Signal:
        with self._lock:
            s = self._free.pop() if self._free else None
        if s is None:
            s = Signal(initial)
        else:
            s.set_error(None)
            s.set_times(0, 0)
            s.store(initial)
        return s

    def release(self, s: Signal) -> None:
        if s.load() != 0:
            raise RuntimeError("signal released before its completion was observed")
        with self._lock:
            self._free.append(s)
