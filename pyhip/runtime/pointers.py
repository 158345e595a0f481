"""What the runtime knows about an address: pointer attributes (hipPointerGetAttributes and friends) and
host memory made visible to the devices (hipHostMalloc, hipMallocManaged, hipHostRegister).

Host allocations are the runtime's ``host`` (runtime/hostmem.py), each mapped into every emulated device at
its own address (unified addressing: device pointer == host pointer).  Device allocations are the devices'
own memory tables.
"""
from __future__ import annotations

import ctypes
from dataclasses import dataclass

import numpy as np

from ..emu.memory import host_range_mapped
from .._hip_enums import hipMemoryType
from ..errors import HipError, hipError_t
from .context import runtime
from .hostmem import HostAlloc

HOST_REGISTER_FLAGS = 0x1 | 0x2 | 0x4 | 0x8


@dataclass
class Attributes:
    """hipPointerAttribute_t plus the range of the allocation."""
    memoryType: int
    device: int
    devicePointer: int
    hostPointer: int
    isManaged: int
    allocationFlags: int
    start: int
    size: int


def check_host_address(addr: int) -> None:
    """Refuse to dereference NULL or an address in an emulated device's range (e.g. a freed device pointer)
    on the host."""
    if addr == 0:
        raise HipError(hipError_t.hipErrorInvalidValue, "null host pointer")
    for dev in runtime().devices:
        if dev.backend.in_device_range(addr):
            raise HipError(hipError_t.hipErrorInvalidValue, f"0x{addr:x} is device memory, not a host address")


def find_host(addr: int) -> HostAlloc | None:
    return runtime().host.find(addr)


def attributes(addr: int) -> Attributes | None:
    """None for memory the runtime does not know (pageable host memory, garbage)."""
    h = find_host(addr)
    if h is not None:
        translate = getattr(runtime().devices[h.device].backend, "device_address", None)   # pinned without SVM
        device = translate(addr) if translate is not None else addr
        return Attributes(int(hipMemoryType.hipMemoryTypeHost), h.device, device, addr, int(h.kind == "managed"),
                          h.flags, h.start, h.size)
    for dev in runtime().devices:
        hit = dev.backend.find(addr)
        if hit is not None and hit[2] in ("user", "ipc"):     # (ipc: another process's, opened here)
            return Attributes(int(hipMemoryType.hipMemoryTypeDevice), dev.index, addr, 0, 0, 0, hit[0],
                              hit[1] - hit[0])
    return None


def host_register(addr: int, size: int, flags: int) -> None:
    """Pin ``size`` bytes of the caller's memory at ``addr``: every device maps them at the same address."""
    size, flags = int(size), int(flags)
    if addr == 0 or size <= 0 or flags & ~HOST_REGISTER_FLAGS:
        raise HipError(hipError_t.hipErrorInvalidValue, "hipHostRegister needs a pointer, a size and valid flags")
    host = runtime().host
    same = host.get(addr)
    if same is not None and same.kind == "registered" and same.size == size:
        # AMD's runtime registers the same range again (libhsakmt counts it): one more hipHostUnregister
        same.registrations += 1
        same.flags = flags
        return
    for a in list(host.allocs.values()):
        if a.start < addr + size and addr < a.start + a.size:
            raise HipError(hipError_t.hipErrorHostMemoryAlreadyRegistered, f"0x{addr:x} is already pinned")
    if not host_range_mapped(addr, size):
        raise HipError(hipError_t.hipErrorInvalidValue, f"0x{addr:x}..0x{addr + size:x} is not mapped memory")
    arr = np.ctypeslib.as_array((ctypes.c_ubyte * size).from_address(addr))
    for dev in runtime().devices:
        dev.backend.map_host(addr, arr)
    host.record(addr, size, "registered", flags, arr)


def host_unregister(addr: int) -> None:
    a = runtime().host.get(addr)
    if addr == 0:
        raise HipError(hipError_t.hipErrorInvalidValue, "null pointer")
    if a is None or a.kind != "registered":
        raise HipError(hipError_t.hipErrorHostMemoryNotRegistered, f"0x{addr:x} was not registered")
    a.registrations -= 1
    if a.registrations > 0:
        return
    for dev in runtime().devices:
        dev.synchronize_quietly()
        dev.backend.unmap_host(addr)
    runtime().host.forget(addr)
