"""``pyhip.hip``: copies with a stream, driver-style and peer copies, pointer attributes, host registration,
managed, stream-ordered and flagged allocations (the work is runtime/copies.py, pointers.py, pools.py, peer.py's,
shared with the C ABI)."""
from __future__ import annotations

from .._hip_enums import hipError_t
from ..errors import HipError
from ..runtime import copies, ops, pointers, pools
from ..runtime.context import runtime
from ..runtime.memory import DevicePointer, as_address
from ._api import hip_api, invalid


def _addr(p) -> int:
    """A pointer's address; a host buffer (numpy array, bytearray...) gives the address of its bytes."""
    a = as_address(p)
    if a is None:
        import numpy as np
        try:
            a = np.frombuffer(memoryview(p).cast("B"), dtype=np.uint8).ctypes.data
        except (TypeError, ValueError):
            raise invalid(f"{type(p).__name__} is neither a pointer nor a buffer") from None
    return int(a)


# -- driver-style, stream and peer copies ------------------------------------------------------------------------
def _bind_copy(name, kind):
    def sync_copy(dst, src, sizeBytes):
        copies.copy(dst, src, sizeBytes, None, True, kind)

    def async_copy(dst, src, sizeBytes, stream):
        copies.copy(dst, src, sizeBytes, stream, False, kind)
    sync_copy.__name__, async_copy.__name__ = f"hipMemcpy{name}", f"hipMemcpy{name}Async"
    sync_copy.__qualname__, async_copy.__qualname__ = sync_copy.__name__, async_copy.__name__
    globals()[sync_copy.__name__] = hip_api()(sync_copy)
    globals()[async_copy.__name__] = hip_api()(async_copy)


for _name, _kind in (("HtoD", 1), ("DtoH", 2), ("DtoD", 3)):
    _bind_copy(_name, _kind)


@hip_api()
def hipMemcpyWithStream(dst, src, sizeBytes, kind, stream):
    copies.copy(dst, src, sizeBytes, stream, True, int(kind))


@hip_api()
def hipMemcpyPeer(dst, dstDeviceId, src, srcDeviceId, sizeBytes):
    runtime().device(int(dstDeviceId)), runtime().device(int(srcDeviceId))
    copies.copy(dst, src, sizeBytes, None, True, 3)


@hip_api()
def hipMemcpyPeerAsync(dst, dstDeviceId, src, srcDevice, sizeBytes, stream):
    runtime().device(int(dstDeviceId)), runtime().device(int(srcDevice))
    copies.copy(dst, src, sizeBytes, stream, False, 3)


# -- pointers, host registration, managed and stream-ordered memory -------------------------------------------
def _attrs(ptr) -> pointers.Attributes:
    a = pointers.attributes(_addr(ptr)) if ptr is not None and _addr(ptr) else None
    if a is None:
        raise invalid("not memory HIP allocated or registered")
    return a


@hip_api(1)
def hipMemPtrGetInfo(ptr):
    return _attrs(ptr).size


@hip_api(2)
def hipMemGetAddressRange(dptr):
    try:
        a = _attrs(dptr)
    except HipError:
        raise HipError(hipError_t.hipErrorNotFound, "not a HIP allocation") from None
    return DevicePointer(a.start), a.size


@hip_api()
def hipPointerGetAttributes(attributes, ptr):
    """Fills ``attributes`` (a hipPointerAttribute_t) in place."""
    a = _attrs(ptr)
    for name in ("memoryType", "type"):
        if hasattr(attributes, name):
            setattr(attributes, name, a.memoryType)
    attributes.device = a.device
    attributes.devicePointer = DevicePointer(a.devicePointer) if a.devicePointer else 0
    attributes.hostPointer = a.hostPointer
    attributes.isManaged = a.isManaged
    attributes.allocationFlags = a.allocationFlags


@hip_api()
def hipHostRegister(hostPtr, sizeBytes, flags):
    pointers.host_register(_addr(hostPtr), sizeBytes, flags)


@hip_api()
def hipHostUnregister(hostPtr):
    pointers.host_unregister(_addr(hostPtr))


@hip_api(1)
def hipHostGetDevicePointer(hstPtr, flags):
    return DevicePointer(_attrs(hstPtr).devicePointer)


@hip_api(1)
def hipHostGetFlags(hostPtr):
    h = pointers.find_host(_addr(hostPtr))
    if h is None:
        raise invalid("not hipHostMalloc / hipHostRegister memory")
    return h.flags


@hip_api(1)
def hipMallocManaged(size, flags):
    """A DeviceArray of ``size`` bytes (as hip-python returns it) over memory the host and every device address."""
    if int(flags) not in (1, 2):
        raise invalid(f"flags {int(flags)}")
    from .pointers import DeviceArray
    return DeviceArray.from_allocation(ops.managed_malloc(size))


@hip_api(1)
def hipMallocAsync(size, stream):
    if int(size) == 0:
        raise invalid("size 0")
    from .pointers import DeviceArray
    st = runtime().resolve_stream(stream)
    return DeviceArray.from_allocation(DevicePointer(pools.current_pool(st.device).malloc(size, stream), st.device,
                                                     int(size)))


@hip_api()
def hipFreeAsync(dev_ptr, stream):
    if not _addr(dev_ptr):
        raise invalid("null pointer")
    pools.free_async(_addr(dev_ptr), stream)


@hip_api(1)
def hipExtMallocWithFlags(sizeBytes, flags):
    """hipDeviceMallocDefault / hipDeviceMallocFinegrained: device memory; hipMallocSignalMemory (8 bytes):
    host memory the devices see."""
    from .pointers import DeviceArray
    if flags & ~0x3:
        raise HipError(hipError_t.hipErrorInvalidValue, f"flags {flags}")
    if flags == 2:
        if sizeBytes != 8:
            raise HipError(hipError_t.hipErrorInvalidValue, "signal memory is 8 bytes")
        return DeviceArray.from_allocation(ops.host_malloc(8, 0))
    p = ops.malloc(sizeBytes)
    return DeviceArray.from_allocation(p) if int(p) else None


__all__ = [n for n in dir() if n.startswith("hip")]
