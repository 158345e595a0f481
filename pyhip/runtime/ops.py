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


def check_host_address(addr: int) -> None:
    """Refuse to dereference NULL or an address in an emulated device's range (e.g. a freed device pointer)
    on the host."""
    if addr == 0:
        raise HipError(hipError_t.hipErrorInvalidValue, "null host pointer")
    for dev in runtime().devices:
        if dev.backend.in_device_range(addr):
            raise HipError(hipError_t.hipErrorInvalidValue, f"0x{addr:x} is device memory, not a host address")


def _raw_host(addr: int, nbytes: int) -> memoryview:
    """A raw host address (C callers pass these) as a writable byte view."""
    check_host_address(addr)
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
    if ddev is None and sdev is None and int(kind) not in (hipMemcpyKind.hipMemcpyHostToHost,
                                                           hipMemcpyKind.hipMemcpyDefault):
        raise HipError(hipError_t.hipErrorInvalidValue,
                       f"{hipMemcpyKind(int(kind)).name} between two host buffers (ROCm infers the direction "
                       "from the pointers; host to host needs hipMemcpyHostToHost or hipMemcpyDefault)")
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
