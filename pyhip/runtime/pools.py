"""Stream-ordered allocation: memory pools, hipMallocAsync / hipFreeAsync.

A pool belongs to a device; allocations come from the device heap at once (valid for work enqueued
after the call, in any stream), and hipFreeAsync returns the memory when the stream reaches the free.
Attributes as HIP 5.2 names them: the reuse policies (booleans, recorded), the release threshold, and the
reserved/used current and high-water marks (bytes, tracked).  Each device has a default pool; the current
pool (hipDeviceSetMemPool) is what hipMallocAsync draws from.
"""
from __future__ import annotations

import threading

from ..errors import HipError, hipError_t
from .context import runtime

REUSE_FOLLOW_EVENTS, REUSE_OPPORTUNISTIC, REUSE_INTERNAL_DEPS, RELEASE_THRESHOLD, RESERVED_CURRENT, \
    RESERVED_HIGH, USED_CURRENT, USED_HIGH = range(1, 9)
ACCESS_NONE, ACCESS_READ, ACCESS_READWRITE = 0, 1, 3


def invalid(msg: str) -> HipError:
    return HipError(hipError_t.hipErrorInvalidValue, msg)


class MemPool:
    def __init__(self, device, default: bool = False):
        self.device = device
        self.default = default
        self.attrs = {REUSE_FOLLOW_EVENTS: 1, REUSE_OPPORTUNISTIC: 1, REUSE_INTERNAL_DEPS: 1, RELEASE_THRESHOLD: 0}
        self.allocs: dict[int, int] = {}          # address -> size
        self.used = self.used_high = 0
        self.access: dict[int, int] = {device.index: ACCESS_READWRITE}
        self.destroyed = False
        self.lock = threading.Lock()

    def malloc(self, size: int, stream) -> int:
        size = int(size)
        if size <= 0:
            raise invalid("size must be positive")
        rt = runtime()
        st = rt.resolve_stream(stream)
        if st.device is not self.device and st.device.index not in self.access:
            raise invalid("the stream's device cannot access the pool")
        a = self.device.backend.alloc(size)
        with self.lock:
            self.allocs[a] = size
            self.used += size
            self.used_high = max(self.used_high, self.used)
        rt.pool_of[a] = self
        return a

    def free_async(self, addr: int, stream) -> None:
        st = runtime().resolve_stream(stream)

        def release():
            with self.lock:
                size = self.allocs.pop(addr, None)
                if size is not None:
                    self.used -= size
            if size is not None:
                self.device.backend.free(addr)
        runtime().pool_of.pop(addr, None)
        st.host_op(release, "free async")

    def forget(self, addr: int) -> None:
        """A hipFree of a pool allocation (memory already returned to the device)."""
        with self.lock:
            size = self.allocs.pop(addr, None)
            if size is not None:
                self.used -= size

    def get(self, attr: int) -> int:
        if attr in self.attrs:
            return self.attrs[attr]
        if attr in (RESERVED_CURRENT, USED_CURRENT):
            return self.used
        if attr in (RESERVED_HIGH, USED_HIGH):
            return self.used_high
        raise invalid(f"pool attribute {attr}")

    def set(self, attr: int, value: int) -> None:
        if attr in (REUSE_FOLLOW_EVENTS, REUSE_OPPORTUNISTIC, REUSE_INTERNAL_DEPS, RELEASE_THRESHOLD):
            self.attrs[attr] = int(value)
        elif attr in (RESERVED_HIGH, USED_HIGH):
            if int(value) != 0:
                raise invalid("high-water marks can only be reset to 0")
            self.used_high = self.used
        else:
            raise invalid(f"pool attribute {attr} cannot be set")

    def trim(self, keep: int) -> None:
        """Nothing is cached beyond live allocations: trimming releases nothing more."""

    def destroy(self) -> None:
        if self.default:
            raise invalid("the default pool cannot be destroyed")
        self.device.synchronize_quietly()
        with self.lock:
            for a in list(self.allocs):
                self.device.backend.free(a)
                runtime().pool_of.pop(a, None)
            self.allocs.clear()
        self.destroyed = True


def default_pool(device) -> MemPool:
    rt = runtime()
    with rt._lock:
        p = rt.default_pools.get(device.index)
        if p is None:
            p = rt.default_pools[device.index] = MemPool(device, default=True)
        return p


def current_pool(device) -> MemPool:
    return runtime().current_pools.get(device.index) or default_pool(device)


def free_async(addr: int, stream) -> None:
    rt = runtime()
    pool = rt.pool_of.get(addr)
    if pool is None:
        raise invalid(f"0x{addr:x} was not allocated by hipMallocAsync")
    pool.free_async(addr, stream)
