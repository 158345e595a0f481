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
from ..runtime.hostmem import buffer_id
from .common import invalid

A_CONTEXT, A_MEMORY_TYPE, A_DEVICE_POINTER, A_HOST_POINTER, A_P2P_TOKENS, A_SYNC_MEMOPS, A_BUFFER_ID, \
    A_IS_MANAGED, A_DEVICE_ORDINAL, A_IS_LEGACY_IPC, A_RANGE_START, A_RANGE_SIZE, A_MAPPED, A_HANDLE_TYPES, \
    A_RDMA, A_ACCESS_FLAGS, A_MEMPOOL = range(1, 18)


# AMD's extensions: hipMemAdviseSetCoarseGrain / UnsetCoarseGrain, hipMemRangeAttributeCoherencyMode
# (hipMemRangeCoherencyModeFineGrain 0, CoarseGrain 1), hipHostMallocNonCoherent
ADVISE_SET_COARSE, ADVISE_UNSET_COARSE, ATTR_COHERENCY_MODE = 100, 101, 100
HOST_MALLOC_NON_COHERENT = 0x80000000


def install(c) -> None:
    ffi, rt = c.ffi, c.rt
    addr = c.addr

    @c.export
    def hipPointerGetAttributes(attrs, ptr):
        if attrs == ffi.NULL or ptr == ffi.NULL:
            raise invalid("null pointer")
        ffi.memmove(attrs, bytes(ffi.sizeof("hipPointerAttribute_t")), ffi.sizeof("hipPointerAttribute_t"))
        a = api.attributes(addr(ptr))
        attrs.memoryType, attrs.device = a.memoryType, a.device
        attrs.devicePointer = ffi.cast("void*", a.devicePointer)
        attrs.hostPointer = ffi.cast("void*", a.hostPointer)
        attrs.isManaged, attrs.allocationFlags = a.isManaged, a.allocationFlags

    def attribute(data, attr, p):
        """One attribute into ``data`` (clr: the type written depends on the attribute)."""
        a = pointers.attributes(p)
        attr = int(attr)

        def put(fmt, value):
            ffi.memmove(data, struct.pack("<" + fmt, value), struct.calcsize(fmt))
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

    @c.export
    def hipPointerGetAttribute(data, attr, ptr):
        if data == ffi.NULL or ptr == ffi.NULL:
            raise invalid("null pointer")
        attribute(data, attr, addr(ptr))

    @c.export
    def hipDrvPointerGetAttributes(n, attrs, data, ptr):
        if attrs == ffi.NULL or data == ffi.NULL or ptr == ffi.NULL or int(n) == 0:
            raise invalid("null pointer or no attributes")
        # as hipamd 5.2: each attribute's own status is ignored (an attribute with no value for this pointer,
        # e.g. the host pointer of device memory, gets its default: 0 / NULL); always hipSuccess
        for i in range(int(n)):
            if data[i] == ffi.NULL:
                continue                          # (AMD's would write through it)
            try:
                attribute(data[i], attrs[i], addr(ptr))
            except HipError:
                pass

    @c.export
    def hipMemPtrGetInfo(ptr, size):
        c.need(size)
        size[0] = api.ptr_size(addr(ptr))

    @c.export
    def hipMemGetAddressRange(base, size, ptr):
        start, length = api.address_range(addr(ptr))
        if base != ffi.NULL:
            base[0] = ffi.cast("void*", start)
        if size != ffi.NULL:
            size[0] = length

    # -- host memory ------------------------------------------------------------------------------------------
    @c.export
    def hipHostRegister(ptr, size, flags):
        pointers.host_register(addr(ptr), size, flags)

    @c.export
    def hipHostUnregister(ptr):
        pointers.host_unregister(addr(ptr))

    @c.export
    def hipHostGetDevicePointer(dev_ptr, host_ptr, flags):
        c.need(dev_ptr)
        dev_ptr[0] = ffi.cast("void*", api.host_device_pointer(addr(host_ptr)))

    @c.export
    def hipHostGetFlags(flags, host_ptr):
        c.need(flags)
        flags[0] = api.host_flags(addr(host_ptr))

    @c.export
    def hipMemAllocHost(ptr, size):
        c.need(ptr)
        hp = api.host_malloc(size)
        c.keep[int(hp)] = hp
        ptr[0] = ffi.cast("void*", int(hp))

    @c.export
    def hipExtMallocWithFlags(ptr, size, flags):
        c.need(ptr)
        ptr[0] = ffi.cast("void*", int(api.ext_malloc_with_flags(size, flags)))

    # -- managed memory hints (memory is coherent already: checked, then nothing to do) -----------------------------
    def managed_range(p, count):
        if p == ffi.NULL or int(count) == 0:
            raise invalid("null pointer or empty range")
        a = pointers.attributes(addr(p))
        if a is None or addr(p) + int(count) > a.start + a.size:
            raise invalid("not a HIP allocation or the range overruns it")
        return a

    def device_or_cpu(d):
        if int(d) != -1:                         # hipCpuDeviceId = -1
            rt.device(int(d))

    @c.export
    def hipMemAdvise(p, count, advice, device):
        managed_range(p, count)
        advice = int(advice)
        if not (1 <= advice <= 6 or advice in (ADVISE_SET_COARSE, ADVISE_UNSET_COARSE)):
            raise invalid(f"advice {advice}")
        device_or_cpu(device)
        hints = rt.advice.setdefault(addr(p), {})
        # hipMemAdviseSet/Unset pairs: ReadMostly 1/2, PreferredLocation 3/4, AccessedBy 5/6 (a set of
        # devices), AMD's CoarseGrain 100/101; recorded per range (the memory itself never migrates)
        if advice == 5:
            devs = hints.setdefault(5, [])
            if int(device) not in devs:
                devs.append(int(device))
        elif advice == 6:
            if int(device) in hints.get(5, []):
                hints[5].remove(int(device))
        elif advice in (1, 3, ADVISE_SET_COARSE):
            hints[advice] = int(device)
        else:
            hints.pop({2: 1, 4: 3, ADVISE_UNSET_COARSE: ADVISE_SET_COARSE}[advice], None)

    @c.export
    def hipMemPrefetchAsync(p, count, device, stream):
        managed_range(p, count)
        device_or_cpu(device)
        c.stream(stream)
        rt.advice.setdefault(addr(p), {})["prefetch"] = int(device)    # (no migration: the data stays put)

    @c.export
    def hipMemRangeGetAttribute(data, data_size, attr, p, count):
        if data == ffi.NULL or int(data_size) == 0:
            raise invalid("null data")
        a = managed_range(p, count)
        attr, size = int(attr), int(data_size)
        if attr == 3 and size % 4 or attr != 3 and size != 4:
            raise invalid(f"data size {size} for range attribute {attr}")   # one int, or a whole int list
        if attr != ATTR_COHERENCY_MODE and not a.isManaged:
            raise invalid("range attributes other than the coherency mode describe managed memory only")
        hints = rt.advice.get(addr(p), {})
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
        ffi.memmove(data, value[:size], min(size, len(value)))

    @c.export
    def hipMemRangeGetAttributes(data, sizes, attrs, n, p, count):
        if data == ffi.NULL or sizes == ffi.NULL or attrs == ffi.NULL or int(n) == 0:
            raise invalid("null arrays")
        for i in range(int(n)):
            r = hipMemRangeGetAttribute(data[i], sizes[i], attrs[i], p, count)
            if r:
                return r

    @c.export
    def hipStreamAttachMemAsync(stream, p, length, flags):
        c.stream(stream)
        if p == ffi.NULL or int(flags) not in (1, 2, 4):
            raise invalid("null pointer or flags")

    # -- IPC: device memory shared with other processes (pyhip/hipapi/ipc.py)
    @c.export
    def hipIpcGetMemHandle(handle, dev_ptr):
        if handle == ffi.NULL:
            raise invalid("null pointer")
        ffi.memmove(handle, ipc.get_mem_handle(addr(dev_ptr)), ipc.HANDLE_SIZE)

    @c.export
    def hipIpcOpenMemHandle(dev_ptr, handle, flags):
        c.need(dev_ptr)
        got = ipc.open_mem_handle(bytes(ffi.buffer(ffi.addressof(handle), ipc.HANDLE_SIZE)), flags)
        dev_ptr[0] = ffi.cast("void*", got)

    @c.export
    def hipIpcCloseMemHandle(dev_ptr):
        ipc.close_mem_handle(addr(dev_ptr))
