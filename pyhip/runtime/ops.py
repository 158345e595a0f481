"""Memory operations of the runtime, in stream order: allocation, copies in every direction, fills."""
from __future__ import annotations

from ..errors import HipError, hipError_t
from .backend import owner_of
from .context import runtime
from .copies import copy, fill3d
from .hostmem import drop_buffer_id
from .idlecopy import fill_now
from .memory import DevicePointer, HostPointer, as_address


def malloc(size: int) -> DevicePointer:
    size = int(size)
    if size < 0:
        raise HipError(hipError_t.hipErrorInvalidValue, "negative size")
    dev = runtime().device()
    if size == 0:
        return DevicePointer(0, dev, 0)
    return DevicePointer(dev.backend.alloc(size), dev, size)


def owner(addr: int):
    """The device whose memory holds ``addr``, or None for host memory."""
    return owner_of(runtime().devices, addr)


def free(ptr) -> None:
    addr = as_address(ptr)
    if addr is None:
        raise HipError(hipError_t.hipErrorInvalidValue, "not a device pointer")
    if addr == 0:
        return
    host = runtime().host.get(addr)
    if host is not None and host.kind != "registered":   # hipMallocManaged / hipHostMalloc memory
        host_free(addr)
        return
    dev = owner(addr)
    if dev is None:
        raise HipError(hipError_t.hipErrorInvalidValue, f"0x{addr:x} is not a device allocation")
    dev.synchronize_quietly()          # hipFree is synchronous
    dev.backend.free(addr)
    drop_buffer_id(addr)
    rt = runtime()
    rt.pitched.forget(addr)
    pool = rt.pool_of.pop(addr, None)
    if pool is not None:
        pool.forget(addr)


def host_malloc(size: int, flags: int = 0, kind: str = "hostmalloc") -> HostPointer:
    """Pinned host memory, mapped into every emulated device at its own host address (runtime/hostmem.py)."""
    return runtime().host.malloc(size, flags, kind)


def managed_malloc(size: int) -> HostPointer:
    """hipMallocManaged: memory host and every device address alike (pinned host memory mapped into each
    emulated device).  Larger than a device's memory: hipErrorOutOfMemory, as on a GPU."""
    size = int(size)
    if size <= 0:
        raise HipError(hipError_t.hipErrorInvalidValue, "size must be positive")
    if size > runtime().device().props.totalGlobalMem:
        raise HipError(hipError_t.hipErrorOutOfMemory, f"{size} bytes exceed the device's memory")
    return runtime().host.managed(size)


def host_free(ptr) -> None:
    """Free hipHostMalloc / hipMallocManaged memory (runtime/hostmem.py)."""
    runtime().host.free(ptr)


def memcpy(dst, src, nbytes: int, kind: int, stream=None, sync: bool = True) -> None:
    """1-D copy in stream order; the direction comes from the pointers (runtime/copies.py)."""
    copy(dst, src, nbytes, stream, sync, kind)


def memset(dst, value: int, count: int, width: int = 1, stream=None, sync: bool = True) -> None:
    """Fill ``count`` elements of ``width`` bytes (device or pinned host memory)."""

    count = int(count)
    if count < 0:
        raise HipError(hipError_t.hipErrorInvalidValue, "negative count")
    if not fill_now(dst, value, count, width, stream, sync):      # an idle stream: done here
        fill3d(dst, count * width, count * width, value, count * width, 1, 1, width, stream, sync)


def mem_get_info() -> tuple[int, int]:
    """(free, total) of the current device: what user allocations left (the runtime's own code objects,
    kernarg buffers and queue mirrors do not count, as on a GPU where they live outside the heap)."""
    return runtime().device().backend.mem_info()
