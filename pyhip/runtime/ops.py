"""Memory operations of the runtime, in stream order: allocation, copies in every direction, fills."""
from __future__ import annotations

import ctypes

import numpy as np

from .._hip_enums import hipMemcpyKind
from ..errors import HipError, hipError_t
from .context import runtime
from .memory import DevicePointer, HostPointer, as_address, classify_copy, host_view


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
    for dev in runtime().devices:
        if dev.backend.owns(addr):
            return dev
    return None


def free(ptr) -> None:
    addr = as_address(ptr)
    if addr is None:
        raise HipError(hipError_t.hipErrorInvalidValue, "not a device pointer")
    if addr == 0:
        return
    dev = owner(addr)
    if dev is None:
        raise HipError(hipError_t.hipErrorInvalidValue, f"0x{addr:x} is not a device allocation")
    dev.synchronize_quietly()          # hipFree is synchronous
    dev.backend.free(addr)


def host_malloc(size: int, flags: int = 0) -> HostPointer:
    """Pinned host memory, mapped into every emulated device at its own host address."""
    size = int(size)
    if size <= 0:
        raise HipError(hipError_t.hipErrorInvalidValue, "size must be positive")
    arr = np.zeros(size + 4096, dtype=np.uint8)
    base = arr.ctypes.data
    start = (-base) % 4096
    arr = arr[start:start + size]
    addr = arr.ctypes.data
    rt = runtime()
    for dev in rt.devices:
        dev.backend.map_host(addr, arr)
    return HostPointer(addr, rt.device(), size, arr)


def managed_malloc(size: int) -> HostPointer:
    """hipMallocManaged: memory host and every device address alike (pinned host memory mapped into each
    emulated device).  Larger than a device's memory: hipErrorOutOfMemory, as on a GPU."""
    size = int(size)
    if size <= 0:
        raise HipError(hipError_t.hipErrorInvalidValue, "size must be positive")
    if size > runtime().device().props.totalGlobalMem:
        raise HipError(hipError_t.hipErrorOutOfMemory, f"{size} bytes exceed the device's memory")
    return host_malloc(size)


def host_free(ptr) -> None:
    addr = as_address(ptr)
    if addr is None or addr == 0:
        if addr == 0:
            return
        raise HipError(hipError_t.hipErrorInvalidValue, "not a host pointer")
    rt = runtime()
    found = False
    for dev in rt.devices:
        dev.synchronize_quietly()
        found |= dev.backend.unmap_host(addr)
    if not found:
        raise HipError(hipError_t.hipErrorInvalidValue, f"0x{addr:x} was not allocated by hipHostMalloc")


def _raw_host(addr: int, nbytes: int) -> memoryview:
    """A raw host address (C callers pass these) as a writable byte view."""
    if addr == 0:
        raise HipError(hipError_t.hipErrorInvalidValue, "null host pointer")
    return memoryview((ctypes.c_ubyte * nbytes).from_address(addr)).cast("B")


def memcpy(dst, src, nbytes: int, kind: int, stream=None, sync: bool = True) -> None:
    nbytes = int(nbytes)
    if nbytes < 0:
        raise HipError(hipError_t.hipErrorInvalidValue, "negative size")
    d, s = classify_copy(dst, src, kind)
    if nbytes == 0:
        return
    rt = runtime()
    st = rt.resolve_stream(stream)
    ddev = owner(d) if d is not None else None
    sdev = owner(s) if s is not None else None
    k = hipMemcpyKind(int(kind))
    if d is not None and ddev is None and k in (hipMemcpyKind.hipMemcpyHostToDevice, hipMemcpyKind.hipMemcpyDeviceToDevice):
        raise HipError(hipError_t.hipErrorInvalidValue, f"destination 0x{d:x} is not device memory")
    if s is not None and sdev is None and k in (hipMemcpyKind.hipMemcpyDeviceToHost, hipMemcpyKind.hipMemcpyDeviceToDevice):
        raise HipError(hipError_t.hipErrorInvalidValue, f"source 0x{s:x} is not device memory")
    for dev, addr in ((ddev, d), (sdev, s)):
        if dev is not None:
            dev.backend.check_range(addr, nbytes)
    if ddev is not None and sdev is not None and ddev is sdev is st.device:
        cmd = st.device_copy(d, s, nbytes)
    else:
        if sdev is None:
            src_view = _raw_host(s, nbytes) if s is not None else host_view(src, nbytes, writable=False)
            payload = bytes(src_view)              # host data is captured at enqueue time
            read = lambda: payload                 # noqa: E731
        else:
            read = lambda: sdev.backend.read(s, nbytes)  # noqa: E731
        if ddev is None:
            dst_view = _raw_host(d, nbytes) if d is not None else host_view(dst, nbytes, writable=True)

            def op():
                dst_view[:] = read()
        else:
            def op():
                ddev.backend.write(d, read())
        cmd = st.host_op(op, "memcpy", keep=(dst, src))
    if sync:
        cmd.signal.wait(None)
        st.synchronize()


def memset(dst, value: int, count: int, width: int = 1, stream=None, sync: bool = True) -> None:
    addr = as_address(dst)
    count = int(count)
    if addr is None or count < 0:
        raise HipError(hipError_t.hipErrorInvalidValue, "memset needs a device pointer and a count >= 0")
    if count == 0:
        return
    dev = owner(addr)
    if dev is None:
        raise HipError(hipError_t.hipErrorInvalidValue, f"0x{addr:x} is not device memory")
    dev.backend.check_range(addr, count * width)
    st = runtime().resolve_stream(stream)
    value = int(value) & ((1 << (8 * width)) - 1)
    if st.device is dev:
        cmd = st.fill(addr, value, count, width)
    else:
        cmd = st.host_op(lambda: dev.backend.fill(addr, value, count, width), "memset")
    if sync:
        cmd.signal.wait(None)
        st.synchronize()


def mem_get_info() -> tuple[int, int]:
    return runtime().device().backend.mem_info()
