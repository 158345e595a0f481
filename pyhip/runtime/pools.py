"""Stream-ordered allocation: memory pools, hipMallocAsync / hipFreeAsync.

A pool belongs to a device; allocations are valid for work enqueued after the call, in any stream.
hipFreeAsync hands the block back to the pool at once: later work in the same stream may reuse it
immediately (stream order protects it), other streams once the stream has reached the free (when
opportunistic reuse is allowed); at a synchronize, freed blocks beyond the release threshold go back to the
device, and hipMemPoolTrimTo releases more.
Attributes as HIP 5.2 names them: the reuse policies (booleans, recorded), the release threshold, and the
reserved/used current and high-water marks (bytes, tracked).  Each device has a default pool; the current
pool (hipDeviceSetMemPool) is what hipMallocAsync draws from.
"""
from __future__ import annotations

import threading

from ..errors import HipError, hipError_t
from .context import runtime
from .hostmem import drop_buffer_id

REUSE_FOLLOW_EVENTS, REUSE_OPPORTUNISTIC, REUSE_INTERNAL_DEPS, RELEASE_THRESHOLD, RESERVED_CURRENT, \
    RESERVED_HIGH, USED_CURRENT, USED_HIGH = range(1, 9)
ACCESS_NONE, ACCESS_READ, ACCESS_READWRITE = 0, 1, 3


def invalid(msg: str) -> HipError:
    return HipError(hipError_t.hipErrorInvalidValue, msg)


class _Block:
    """Memory a hipFreeAsync gave back to its pool: reusable at once by later work in the freeing stream
    (stream order protects it), by any stream once the stream has reached the free (``done``) if the pool
    allows opportunistic reuse; released to the device beyond the release threshold or by a trim."""
    __slots__ = ("addr", "size", "stream", "done")

    def __init__(self, addr: int, size: int, stream):
        self.addr, self.size, self.stream, self.done = addr, size, stream, False


class MemPool:
    def __init__(self, device, default: bool = False):
        self.device = device
        self.default = default
        self.attrs = {REUSE_FOLLOW_EVENTS: 1, REUSE_OPPORTUNISTIC: 1, REUSE_INTERNAL_DEPS: 1, RELEASE_THRESHOLD: 0}
        self.allocs: dict[int, int] = {}          # address -> size asked for
        self.caps: dict[int, int] = {}            # address -> bytes the allocation holds (a reused block's)
        self.cached: list[_Block] = []            # freed, not yet released to the device
        self.used = self.used_high = 0
        self.reserved = 0                         # bytes the pool holds: live allocations' blocks + cached
        self.reserved_high = 0
        self.access: dict[int, int] = {device.index: ACCESS_READWRITE}
        self.destroyed = False
        self.lock = threading.Lock()
        device.pools.add(self)

    def _take_block(self, size: int, st):
        """The smallest cached block this stream may reuse for ``size`` bytes (at most twice as large)."""
        best = None
        for b in self.cached:
            if size <= b.size <= 2 * size and (b.stream is st or (b.done and self.attrs[REUSE_OPPORTUNISTIC])):
                if best is None or b.size < best.size:
                    best = b
        if best is not None:
            self.cached.remove(best)
        return best

    def malloc(self, size: int, stream) -> int:
        size = int(size)
        if size <= 0:
            raise invalid("size must be positive")
        rt = runtime()
        st = rt.resolve_stream(stream)
        if st.device is not self.device and st.device.index not in self.access:
            raise invalid("the stream's device cannot access the pool")
        with self.lock:
            blk = self._take_block(size, st)
        if blk is not None:
            a, cap = blk.addr, blk.size
        else:
            a, cap = self.device.backend.alloc(size), size
        with self.lock:
            self.allocs[a], self.caps[a] = size, cap
            self.used += size
            self.used_high = max(self.used_high, self.used)
            if blk is None:
                self.reserved += cap
                self.reserved_high = max(self.reserved_high, self.reserved)
        rt.pool_of[a] = self
        return a

    def free_async(self, addr: int, stream) -> None:
        st = runtime().resolve_stream(stream)
        with self.lock:
            size = self.allocs.pop(addr, None)
            cap = self.caps.pop(addr, None)
            if size is None:
                return
            self.used -= size
            blk = _Block(addr, cap, st)
            self.cached.append(blk)
        runtime().pool_of.pop(addr, None)

        def reached():                     # the stream got here: the block is free for everyone
            blk.done = True
            if self.destroyed:
                self._release(0)
        st.host_op(reached, "free async")

    def trim_to_threshold(self) -> None:
        """What a synchronize gives back (Device.trim_pools): blocks beyond the release threshold."""
        self._release(self.attrs[RELEASE_THRESHOLD])

    def _release(self, keep: int) -> None:
        """Give blocks whose free the stream has reached back to the device until at most ``keep`` bytes
        are reserved."""
        out = []
        with self.lock:
            for b in list(self.cached):
                if self.reserved <= keep:
                    break
                if b.done:
                    self.cached.remove(b)
                    self.reserved -= b.size
                    out.append(b.addr)
        for a in out:
            self.device.backend.free(a)
            drop_buffer_id(a)

    def forget(self, addr: int) -> None:
        """A hipFree of a pool allocation (memory already returned to the device)."""
        with self.lock:
            size = self.allocs.pop(addr, None)
            cap = self.caps.pop(addr, None)
            if size is not None:
                self.used -= size
                self.reserved -= cap

    def get(self, attr: int) -> int:
        if attr in self.attrs:
            return self.attrs[attr]
        with self.lock:
            if attr == USED_CURRENT:
                return self.used
            if attr == USED_HIGH:
                return self.used_high
            if attr == RESERVED_CURRENT:
                return self.reserved
            if attr == RESERVED_HIGH:
                return self.reserved_high
        raise invalid(f"pool attribute {attr}")

    def set(self, attr: int, value: int) -> None:
        if attr in (REUSE_FOLLOW_EVENTS, REUSE_OPPORTUNISTIC, REUSE_INTERNAL_DEPS, RELEASE_THRESHOLD):
            self.attrs[attr] = int(value)
        elif attr in (RESERVED_HIGH, USED_HIGH):
            if int(value) != 0:
                raise invalid("high-water marks can only be reset to 0")
            with self.lock:
                if attr == USED_HIGH:
                    self.used_high = self.used
                else:
                    self.reserved_high = self.reserved
        else:
            raise invalid(f"pool attribute {attr} cannot be set")

    def trim(self, keep: int) -> None:
        """Release freed blocks (those whose free the stream has reached) down to ``keep`` reserved bytes."""
        self._release(int(keep))

    def destroy(self) -> None:
        """Cached memory goes back to the device now; live allocations stay valid until they are freed
        (hipFreeAsync still works on them), as AMD's runtime defers a busy pool's destruction."""
        if self.default:
            raise invalid("the default pool cannot be destroyed")
        self.destroyed = True
        self._release(0)


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
