"""The C ABI's pointer queries and host memory registration: hipPointerGetAttributes / hipPointerGetAttribute /
hipDrvPointerGetAttributes, hipMemPtrGetInfo, hipMemGetAddressRange, hipHostRegister / Unregister /
GetDevicePointer / GetFlags, hipMemAllocHost, hipExtMallocWithFlags, the managed-memory hints (advise,
prefetch, range attributes, attach) and IPC memory handles.  Behaviour follows clr's
hip_memory.cpp (what is reported for memory the runtime does not know, which attributes are unsupported)."""
from __future__ import annotations

import struct

from .._hip_enums import hipMemoryType
from ..errors import HipError, hipError_t
from ..hipapi import ipc, memory as api
from ..runtime import pointers
from ..runtime.advice import ADVISE_SET_COARSE, ADVISE_UNSET_COARSE
from ..runtime.hostmem import buffer_id
from .common import c, export, invalid


A_CONTEXT, A_MEMORY_TYPE, A_DEVICE_POINTER, A_HOST_POINTER, A_P2P_TOKENS, A_SYNC_MEMOPS, A_BUFFER_ID, \
    A_IS_MANAGED, A_DEVICE_ORDINAL, A_IS_LEGACY_IPC, A_RANGE_START, A_RANGE_SIZE, A_MAPPED, A_HANDLE_TYPES, \
    A_RDMA, A_ACCESS_FLAGS, A_MEMPOOL = range(1, 18)


# AMD's extensions: hipMemAdviseSetCoarseGrain / UnsetCoarseGrain, hipMemRangeAttributeCoherencyMode
# (hipMemRangeCoherencyModeFineGrain 0, CoarseGrain 1), hipHostMallocNonCoherent
ATTR_COHERENCY_MODE = 100
HOST_MALLOC_NON_COHERENT = 0x80000000


@export
def hipPointerGetAttributes(attrs, ptr):
    if attrs == c.ffi.NULL or ptr == c.ffi.NULL:
        raise invalid("null pointer")
    c.ffi.memmove(attrs, bytes(c.ffi.sizeof("hipPointerAttribute_t")), c.ffi.sizeof("hipPointerAttribute_t"))
    a = api.attributes(c.addr(ptr))
    attrs.memoryType, attrs.device = a.memoryType, a.device
    attrs.devicePointer = c.ffi.cast("void*", a.devicePointer)
    attrs.hostPointer = c.ffi.cast("void*", a.hostPointer)
    attrs.isManaged, attrs.allocationFlags = a.isManaged, a.allocationFlags


def attribute(data, attr, p):
    """One attribute into ``data`` (clr: the type written depends on the attribute)."""
    a = pointers.attributes(p)
    attr = int(attr)

    def put(fmt, value):
        c.ffi.memmove(data, struct.pack("<" + fmt, value), struct.calcsize(fmt))
    if attr in (A_CONTEXT, A_P2P_TOKENS, A_IS_LEGACY_IPC, A_HANDLE_TYPES, A_RDMA, A_MEMPOOL):
        raise HipError(hipError_t.hipErrorNotSupported, f"pointer attribute {attr}")
    if attr == A_SYNC_MEMOPS:
        return put("?", True)
    if attr == A_ACCESS_FLAGS:
        return put("I", a.allocationFlags if a else 0)
    if a is None:
        put({A_DEVICE_ORDINAL: "i"}.get(attr, "Q" if attr in (A_DEVICE_POINTER, A_HOST_POINTER, A_RANGE_START)
                                      else "?" if attr in (A_IS_MANAGED, A_MAPPED) else "I"),
            -2 if attr == A_DEVICE_ORDINAL else 0)
        if attr not in range(1, 18):
            raise invalid(f"pointer attribute {attr}")
        raise invalid(f"0x{p:x} was not allocated by HIP")
    if attr == A_MEMORY_TYPE:
        return put("I", a.memoryType)
    if attr == A_DEVICE_POINTER:
        return put("Q", a.devicePointer)
    if attr == A_HOST_POINTER:
        if not a.hostPointer:
            put("Q", 0)
            raise invalid("device memory has no host pointer")
        return put("Q", a.hostPointer)
    if attr == A_BUFFER_ID:
        return put("I", buffer_id(a.start))
    if attr == A_IS_MANAGED:
        return put("?", bool(a.isManaged))
    if attr == A_DEVICE_ORDINAL:
        return put("i", a.device)
    if attr == A_RANGE_START:
        return put("Q", a.start)
    if attr == A_RANGE_SIZE:
        return put("I", a.size & 0xFFFFFFFF)
    if attr == A_MAPPED:
        return put("?", True)
    raise invalid(f"pointer attribute {attr}")


@export
def hipPointerGetAttribute(data, attr, ptr):
    if data == c.ffi.NULL or ptr == c.ffi.NULL:
        raise invalid("null pointer")
    attribute(data, attr, c.addr(ptr))


@export
def hipDrvPointerGetAttributes(n, attrs, data, ptr):
    if attrs == c.ffi.NULL or data == c.ffi.NULL or ptr == c.ffi.NULL or int(n) == 0:
        raise invalid("null pointer or no attributes")
    # as hipamd 5.2: each attribute's own status is ignored (an attribute with no value for this pointer,
    # e.g. the host pointer of device memory, gets its default: 0 / NULL); always hipSuccess
    for i in range(int(n)):
        if data[i] == c.ffi.NULL:
            continue                          # (AMD's would write through it)
        try:
            attribute(data[i], attrs[i], c.addr(ptr))
        except HipError:
            pass


@export
def hipMemPtrGetInfo(ptr, size):
    c.need(size)
    size[0] = api.ptr_size(c.addr(ptr))


@export
def hipMemGetAddressRange(base, size, ptr):
    start, length = api.address_range(c.addr(ptr))
    if base != c.ffi.NULL:
        base[0] = c.ffi.cast("void*", start)
    if size != c.ffi.NULL:
        size[0] = length


# -- host memory ------------------------------------------------------------------------------------------
@export
def hipHostRegister(ptr, size, flags):
    pointers.host_register(c.addr(ptr), size, flags)


@export
def hipHostUnregister(ptr):
    pointers.host_unregister(c.addr(ptr))


@export
def hipHostGetDevicePointer(dev_ptr, host_ptr, flags):
    c.need(dev_ptr)
    dev_ptr[0] = c.ffi.cast("void*", api.host_device_pointer(c.addr(host_ptr)))


@export
def hipHostGetFlags(flags, host_ptr):
    c.need(flags)
    flags[0] = api.host_flags(c.addr(host_ptr))


@export
def hipMemAllocHost(ptr, size):
    c.need(ptr)
    hp = api.host_malloc(size)
    c.keep[int(hp)] = hp
    ptr[0] = c.ffi.cast("void*", int(hp))


@export
def hipExtMallocWithFlags(ptr, size, flags):
    c.need(ptr)
    ptr[0] = c.ffi.cast("void*", int(api.ext_malloc_with_flags(size, flags)))


# -- managed memory hints (memory is coherent already: checked, then nothing to do) -----------------------------
def managed_range(p, count):
    if p == c.ffi.NULL or int(count) == 0:
        raise invalid("null pointer or empty range")
    a = pointers.attributes(c.addr(p))
    if a is None or c.addr(p) + int(count) > a.start + a.size:
        raise invalid("not a HIP allocation or the range overruns it")
    return a


def device_or_cpu(d):
    if int(d) != -1:                         # hipCpuDeviceId = -1
        c.rt.device(int(d))


@export
def hipMemAdvise(p, count, advice, device):
    managed_range(p, count)
    advice = int(advice)
    if not (1 <= advice <= 6 or advice in (ADVISE_SET_COARSE, ADVISE_UNSET_COARSE)):
        raise invalid(f"advice {advice}")
    device_or_cpu(device)
    c.rt.advice.advise(c.addr(p), advice, int(device))     # recorded per range (runtime/advice.py)


@export
def hipMemPrefetchAsync(p, count, device, stream):
    managed_range(p, count)
    device_or_cpu(device)
    c.stream(stream)
    c.rt.advice.prefetch(c.addr(p), int(device))


@export
def hipMemRangeGetAttribute(data, data_size, attr, p, count):
    if data == c.ffi.NULL or int(data_size) == 0:
        raise invalid("null data")
    a = managed_range(p, count)
    attr, size = int(attr), int(data_size)
    if attr == 3 and size % 4 or attr != 3 and size != 4:
        raise invalid(f"data size {size} for range attribute {attr}")   # one int, or a whole int list
    if attr != ATTR_COHERENCY_MODE and not a.isManaged:
        raise invalid("range attributes other than the coherency mode describe managed memory only")
    hints = c.rt.advice.hints(c.addr(p))
    if attr == ATTR_COHERENCY_MODE:           # AMD's: device memory is coarse grained, host memory
        coarse = a.memoryType == int(hipMemoryType.hipMemoryTypeDevice) or ADVISE_SET_COARSE in hints or \
            bool(a.allocationFlags & HOST_MALLOC_NON_COHERENT)    # fine unless advised or non-coherent
        value = struct.pack("<I", 1 if coarse else 0)
    elif attr == 1:                            # read mostly
        value = struct.pack("<i", int(1 in hints))
    elif attr == 2:                          # preferred location
        value = struct.pack("<i", hints.get(3, -2))
    elif attr == 3:                          # accessed by: the devices, then -2 (hipInvalidDeviceId)
        devs = hints.get(5, [])[:size // 4]
        value = struct.pack(f"<{size // 4}i", *devs, *[-2] * (size // 4 - len(devs)))
    elif attr == 4:                          # last prefetch location
        value = struct.pack("<i", hints.get("prefetch", -2))
    else:
        raise invalid(f"range attribute {attr}")
    c.ffi.memmove(data, value[:size], min(size, len(value)))


@export
def hipMemRangeGetAttributes(data, sizes, attrs, n, p, count):
    if data == c.ffi.NULL or sizes == c.ffi.NULL or attrs == c.ffi.NULL or int(n) == 0:
        raise invalid("null arrays")
    for i in range(int(n)):
        r = hipMemRangeGetAttribute(data[i], sizes[i], attrs[i], p, count)
        if r:
            return r


@export
def hipStreamAttachMemAsync(stream, p, length, flags):
    c.stream(stream)
    if p == c.ffi.NULL or int(flags) not in (1, 2, 4):
        raise invalid("null pointer or flags")


# -- IPC: device memory shared with other processes (pyhip/hipapi/ipc.py)
@export
def hipIpcGetMemHandle(handle, dev_ptr):
    if handle == c.ffi.NULL:
        raise invalid("null pointer")
    c.ffi.memmove(handle, ipc.get_mem_handle(c.addr(dev_ptr)), ipc.HANDLE_SIZE)


@export
def hipIpcOpenMemHandle(dev_ptr, handle, flags):
    c.need(dev_ptr)
    got = ipc.open_mem_handle(bytes(c.ffi.buffer(c.ffi.addressof(handle), ipc.HANDLE_SIZE)), flags)
    dev_ptr[0] = c.ffi.cast("void*", got)


@export
def hipIpcCloseMemHandle(dev_ptr):
    ipc.close_mem_handle(c.addr(dev_ptr))
