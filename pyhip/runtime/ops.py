"""Memory operations of the runtime, in stream order: allocation, copies in every direction, fills."""
from __future__ import annotations

import numpy as np

from ..errors import HipError, hipError_t
from .backend import owner_of
from .context import runtime
from .copies import copy, fill3d
from .idlecopy import fill_now
from .memory import DevicePointer, HostPointer, as_address
from .pinned import pin, unpin


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
    from .pointers import drop_buffer_id

    addr = as_address(ptr)
    if addr is None:
        raise HipError(hipError_t.hipErrorInvalidValue, "not a device pointer")
    if addr == 0:
        return
    host = runtime().host_allocs.get(addr)
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
    rt.pitched.pop(addr, None)
    pool = rt.pool_of.pop(addr, None)
    if pool is not None:
        pool.forget(addr)


def host_malloc(size: int, flags: int = 0, kind: str = "hostmalloc") -> HostPointer:
    """Pinned host memory, mapped into every emulated device at its own host address."""
    from .pointers import HOST_MALLOC_FLAGS, record

    size, flags = int(size), int(flags)
    if size < 0:
        raise HipError(hipError_t.hipErrorInvalidValue, "negative size")
    if flags & ~HOST_MALLOC_FLAGS or flags & 0xC0000000 == 0xC0000000:
        raise HipError(hipError_t.hipErrorInvalidValue, f"invalid hipHostMalloc flags 0x{flags:x}")
    if size == 0:                                    # as hipMalloc(0) and AMD's runtime: success, a null pointer
        return HostPointer(0, runtime().device(), 0, np.zeros(0, np.uint8))
    rt = runtime()
    addr, arr = pin(rt.devices, size, zero=False)
    record(addr, size, kind, flags, arr)
    return HostPointer(addr, rt.device(), size, arr)


def managed_malloc(size: int) -> HostPointer:
    """hipMallocManaged: memory host and every device address alike (pinned host memory mapped into each
    emulated device).  Larger than a device's memory: hipErrorOutOfMemory, as on a GPU."""
    size = int(size)
    if size <= 0:
        raise HipError(hipError_t.hipErrorInvalidValue, "size must be positive")
    if size > runtime().device().props.totalGlobalMem:
        raise HipError(hipError_t.hipErrorOutOfMemory, f"{size} bytes exceed the device's memory")
    return host_malloc(size, kind="managed")


def host_free(ptr) -> None:
    """Free hipHostMalloc / hipMallocManaged memory (after the devices finished using it)."""
    from .pointers import forget

    addr = as_address(ptr)
    if addr == 0:
        return
    if addr is None:
        raise HipError(hipError_t.hipErrorInvalidValue, "not a host pointer")
    rt = runtime()
    a = rt.host_allocs.get(addr)
    if a is None or a.kind == "registered":
        raise HipError(hipError_t.hipErrorInvalidValue, f"0x{addr:x} was not allocated by hipHostMalloc")
    for dev in rt.devices:
        dev.synchronize_quietly()
    unpin(rt.devices, addr)
    forget(addr)


def check_host_address(addr: int) -> None:
    """Refuse to dereference NULL or an address in an emulated device's range (e.g. a freed device pointer)
    on the host."""
    if addr == 0:
        raise HipError(hipError_t.hipErrorInvalidValue, "null host pointer")
    for dev in runtime().devices:
        if dev.backend.in_device_range(addr):
            raise HipError(hipError_t.hipErrorInvalidValue, f"0x{addr:x} is device memory, not a host address")


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


def device_heap_service(dev, addr: int, size: int) -> int:
    """ROCclr's SERVICE_DEVMEM hostcall, made by ockl's ``__ockl_devmem_request(addr, size)`` when device
    malloc's heap needs another slab: a nonzero ``size`` asks for that many bytes of device memory (the
    address is returned, 0 when the device is out of memory, which device malloc reports as NULL); a zero
    ``size`` frees ``addr`` and returns 0. Runs on the hostcall thread while the kernel waits, so it neither
    synchronizes the device nor raises."""
    if size:
        try:
            return int(dev.backend.alloc(int(size)))
        except HipError:
            return 0
    if addr:
        try:
            dev.backend.free(int(addr))
        except HipError:
            pass
    return 0
