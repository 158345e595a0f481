"""Host memory the devices address: hipHostMalloc'd and managed memory (pinned, mapped into every emulated
device at its own host address: device pointer == host pointer) and hipHostRegister'd ranges, recorded by
start as :class:`HostAlloc` (kind 'hostmalloc' | 'managed' | 'registered', size, flags, the device current
when it was made).  The runtime owns one :class:`HostAllocations` (``runtime().host``) and hands itself in:
this module reaches for no singleton."""
from __future__ import annotations

import bisect
import itertools
from dataclasses import dataclass

import numpy as np

from ..errors import HipError, hipError_t
from .memory import HostPointer, as_address
from .pinned import pin, unpin

HOST_MALLOC_FLAGS = 0x1 | 0x2 | 0x4 | 0x20000000 | 0x40000000 | 0x80000000

_BUFFER_IDS: dict[int, int] = {}
_NEXT_BUFFER_ID = itertools.count(1)


def buffer_id(start: int) -> int:
    """HIP_POINTER_ATTRIBUTE_BUFFER_ID: unique per allocation — a new allocation at a freed one's address
    gets a new id (numbered on first query; dropped when the allocation is freed)."""
    return _BUFFER_IDS.setdefault(start, next(_NEXT_BUFFER_ID))


def drop_buffer_id(start: int) -> None:
    _BUFFER_IDS.pop(start, None)


@dataclass
class HostAlloc:
    start: int
    size: int
    kind: str                 # 'hostmalloc' | 'managed' | 'registered'
    flags: int
    device: int
    array: object = None
    registrations: int = 1    # 'registered': the same range registered again counts (AMD's runtime accepts it)


class HostAllocations:
    """The process's host allocations; ``rt`` gives the devices (``devices``, ``device()``, ``current_index()``)."""

    def __init__(self, rt):
        self._rt = rt
        self.allocs: dict[int, HostAlloc] = {}

    def get(self, addr: int) -> HostAlloc | None:
        """The allocation starting at ``addr``."""
        return self.allocs.get(addr)

    def find(self, addr: int) -> HostAlloc | None:
        """The allocation holding ``addr``."""
        starts = sorted(self.allocs)
        i = bisect.bisect_right(starts, addr) - 1
        if i >= 0:
            a = self.allocs[starts[i]]
            if addr < a.start + a.size:
                return a
        return None

    def record(self, addr: int, size: int, kind: str, flags: int, array=None) -> None:
        self.allocs[addr] = HostAlloc(addr, size, kind, flags, self._rt.current_index(), array)

    def forget(self, addr: int) -> HostAlloc | None:
        drop_buffer_id(addr)
        return self.allocs.pop(addr, None)

    def malloc(self, size: int, flags: int = 0, kind: str = "hostmalloc") -> HostPointer:
        """Pinned host memory, mapped into every emulated device at its own host address."""
        size, flags = int(size), int(flags)
        if size < 0:
            raise HipError(hipError_t.hipErrorInvalidValue, "negative size")
        if flags & ~HOST_MALLOC_FLAGS or flags & 0xC0000000 == 0xC0000000:
            raise HipError(hipError_t.hipErrorInvalidValue, f"invalid hipHostMalloc flags 0x{flags:x}")
        rt = self._rt
        if size == 0:                                # as hipMalloc(0) and AMD's runtime: success, a null pointer
            return HostPointer(0, rt.device(), 0, np.zeros(0, np.uint8))
        addr, arr = pin(rt.devices, size, zero=False)
        self.record(addr, size, kind, flags, arr)
        return HostPointer(addr, rt.device(), size, arr)

    def managed(self, size: int) -> HostPointer:
        """Managed memory: host memory every device addresses alike (hipMallocManaged's, managed variables')."""
        return self.malloc(size, kind="managed")

    def free(self, ptr) -> None:
        """Free hipHostMalloc / hipMallocManaged memory (after the devices finished using it)."""
        addr = as_address(ptr)
        if addr == 0:
            return
        if addr is None:
            raise HipError(hipError_t.hipErrorInvalidValue, "not a host pointer")
        rt = self._rt
        a = self.allocs.get(addr)
        if a is None or a.kind == "registered":
            raise HipError(hipError_t.hipErrorInvalidValue, f"0x{addr:x} was not allocated by hipHostMalloc")
        for dev in rt.devices:
            dev.synchronize_quietly()
        unpin(rt.devices, addr)
        self.forget(addr)

    def map_into(self, devices) -> None:
        """A forked child's new devices: the host memory that survived the fork mapped into them."""
        for a in self.allocs.values():
            if a.array is not None:
                for dev in devices:
                    dev.backend.map_host(a.start, a.array)
