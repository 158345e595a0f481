"""Memory: pointer queries (attributes, address ranges, sizes), pinned host memory and its flags, managed and
flagged allocations, stream-ordered allocation (clr's hip_memory.cpp, hip_mempool.cpp). Pointers come as
addresses (ints, 0 for NULL); a stream as the runtime takes it (None, hipStreamPerThread or a Stream).
Allocations are returned as the runtime makes them (DevicePointer, HostPointer); each face wraps them."""
from __future__ import annotations

from ..errors import HipError, hipError_t
from ..runtime import ops, pointers, pools
from ..runtime.context import runtime
from ..runtime.memory import DevicePointer
from . import invalid

ATTACH_GLOBAL, ATTACH_HOST = 1, 2                    # hipMemAttachGlobal, hipMemAttachHost
MALLOC_SIGNAL_MEMORY = 2                             # hipExtMallocWithFlags: hipMallocSignalMemory
EXT_MALLOC_FLAGS = 0x3                               # hipDeviceMallocDefault 0 / Finegrained 1 / Signal 2


def attributes(addr: int) -> pointers.Attributes:
    """What the runtime knows of the memory at ``addr``; hipErrorInvalidValue for NULL or memory HIP did not
    allocate or register (hipPointerGetAttributes, hipMemPtrGetInfo, hipHostGetDevicePointer)."""
    a = pointers.attributes(addr) if addr else None
    if a is None:
        raise invalid(f"0x{addr:x} was not allocated or registered by HIP")
    return a


def ptr_size(addr: int) -> int:
    """hipMemPtrGetInfo: the size of the allocation ``addr`` lies in."""
    return attributes(addr).size


def address_range(addr: int) -> tuple[int, int]:
    """hipMemGetAddressRange: (base, size) of the allocation; hipErrorNotFound for memory HIP does not know."""
    a = pointers.attributes(addr) if addr else None
    if a is None:
        raise HipError(hipError_t.hipErrorNotFound, f"0x{addr:x} is not a HIP allocation")
    return a.start, a.size


def host_device_pointer(addr: int) -> int:
    """hipHostGetDevicePointer: the device address of pinned (or any HIP) memory."""
    return attributes(addr).devicePointer


def host_flags(addr: int) -> int:
    """hipHostGetFlags: the flags hipHostMalloc / hipHostRegister was given."""
    h = pointers.find_host(addr) if addr else None
    if h is None:
        raise invalid("not hipHostMalloc / hipHostRegister memory")
    return h.flags


def host_malloc(size, flags=0):
    """hipHostMalloc / hipMallocHost / hipHostAlloc: pinned host memory the devices address."""
    return ops.host_malloc(size, int(flags))


def malloc_managed(size, flags):
    if int(flags) not in (ATTACH_GLOBAL, ATTACH_HOST):
        raise invalid(f"flags {int(flags)}")
    return ops.managed_malloc(size)


def ext_malloc_with_flags(size, flags):
    """hipDeviceMallocDefault / hipDeviceMallocFinegrained: device memory; hipMallocSignalMemory (8 bytes):
    host memory the devices also see (ROCclr: an HSA signal's value), which hipFree frees."""
    flags, size = int(flags), int(size)
    if flags & ~EXT_MALLOC_FLAGS:
        raise invalid(f"flags {flags}")
    if flags == MALLOC_SIGNAL_MEMORY:
        if size != 8:
            raise invalid("signal memory is 8 bytes")
        return ops.host_malloc(size, 0)
    return ops.malloc(size)


def malloc_async(size, stream) -> DevicePointer:
    """hipMallocAsync: from the current pool of the stream's device, in the stream's order."""
    if int(size) == 0:
        raise invalid("size 0")
    st = runtime().resolve_stream(stream)
    return DevicePointer(pools.current_pool(st.device).malloc(size, stream), st.device, int(size))


def free_async(addr: int, stream) -> None:
    if not addr:
        raise invalid("null pointer")
    runtime().resolve_stream(stream)
    pools.free_async(addr, stream)
