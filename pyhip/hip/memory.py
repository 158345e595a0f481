"""``pyhip.hip``: copies with a stream, driver-style and peer copies, pointer attributes, host registration,
managed, stream-ordered and flagged allocations (the work is runtime/copies.py, pointers.py, pools.py, peer.py's,
shared with the C ABI)."""
from __future__ import annotations

from ..hipapi import memory as api
from ..errors import HipError
from ..runtime import copies, pointers
from ..runtime.context import runtime
from ..runtime.memory import DevicePointer, as_address
from ._api import hip_api, invalid
from .pointers import DeviceArray


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
def _queried(p) -> int:
    """The address a pointer query asks about; 0 (which no allocation has) for what is not a pointer."""
    try:
        return _addr(p)
    except HipError:
        return 0


@hip_api(1)
def hipMemPtrGetInfo(ptr):
    return api.ptr_size(_queried(ptr))


@hip_api(2)
def hipMemGetAddressRange(dptr):
    start, size = api.address_range(_queried(dptr))
    return DevicePointer(start), size


@hip_api()
def hipPointerGetAttributes(attributes, ptr):
    """Fills ``attributes`` (a hipPointerAttribute_t) in place."""
    a = api.attributes(_queried(ptr))
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
    return DevicePointer(api.host_device_pointer(_queried(hstPtr)))


@hip_api(1)
def hipHostGetFlags(hostPtr):
    return api.host_flags(_addr(hostPtr))


@hip_api(1)
def hipMallocManaged(size, flags):
    """A DeviceArray of ``size`` bytes (as hip-python returns it) over memory the host and every device address."""
    return DeviceArray.from_allocation(api.malloc_managed(size, flags))


@hip_api(1)
def hipMallocAsync(size, stream):
    return DeviceArray.from_allocation(api.malloc_async(size, stream))


@hip_api()
def hipFreeAsync(dev_ptr, stream):
    api.free_async(_addr(dev_ptr), stream)


@hip_api(1)
def hipExtMallocWithFlags(sizeBytes, flags):
    """hipDeviceMallocDefault / hipDeviceMallocFinegrained: device memory; hipMallocSignalMemory (8 bytes):
    host memory the devices see."""
    p = api.ext_malloc_with_flags(sizeBytes, flags)
    return DeviceArray.from_allocation(p) if int(p) else None


__all__ = [n for n in dir() if n.startswith("hip")]
