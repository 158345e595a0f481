"""The C ABI's other device functions: hipChooseDevice, names, PCI bus ids, total memory, compute
capability, UUIDs, limits, cache and shared-memory configuration, device flags, stream priorities, peer
access between emulated devices, P2P attributes and link types, the primary-context and (deprecated)
context API over the devices, profiler/activity hooks and build information.  Validation and results
follow clr's hip_device_runtime.cpp / hip_device.cpp / hip_peer.cpp / hip_context.cpp."""
from __future__ import annotations

import re

from ..errors import HipError, hipError_t
from .common import invalid
from .device import PROP_SIZE, unpack_properties

LIMIT_STACK, LIMIT_PRINTF_FIFO, LIMIT_MALLOC_HEAP = 0, 1, 2
SCHEDULE_MASK, MAP_HOST, LMEM_RESIZE = 0x7, 0x8, 0x16
STACK_SIZE = 1024                    # per work-item, as ROCclr's default
CHOOSE_FIELDS = ("major", "minor", "totalGlobalMem", "sharedMemPerBlock", "maxThreadsPerBlock", "totalConstMem",
                 "multiProcessorCount", "maxThreadsPerMultiProcessor", "memoryClockRate", "memoryBusWidth",
                 "l2CacheSize", "regsPerBlock", "maxSharedMemoryPerMultiProcessor", "warpSize")


def install(c) -> None:
    ffi, lib, rt = c.ffi, c.lib, c.rt
    from ..runtime import peer

    def device(d):
        d = int(d)
        if not 0 <= d < len(rt.devices):
            raise HipError(hipError_t.hipErrorInvalidDevice, f"device {d}")
        return rt.devices[d]

    @c.export
    def hipChooseDevice(out, prop):
        if out == ffi.NULL or prop == ffi.NULL:
            raise invalid("null pointer")
        want = unpack_properties(bytes(ffi.buffer(prop, PROP_SIZE)))
        best, best_count = 0, 0
        for d in rt.devices:
            asked = [f for f in CHOOSE_FIELDS if want[f]]
            matched = [f for f in asked if getattr(d.props, f) >= want[f]]
            if len(asked) == len(matched) and len(matched) > best_count:
                best, best_count = d.index, len(matched)
        out[0] = best

    @c.export
    def hipDeviceComputeCapability(major, minor, d):
        dev = device(d)
        c.need(major, minor)
        major[0], minor[0] = dev.props.major, dev.props.minor

    @c.export
    def hipDeviceGet(out, d):
        c.need(out)
        out[0] = device(d).index

    def bus_id(dev) -> str:
        p = dev.props
        return f"{p.pciDomainID:04x}:{p.pciBusID:02x}:{p.pciDeviceID:02x}.0"

    @c.export
    def hipDeviceGetPCIBusId(buf, length, d):
        dev = device(d)
        if buf == ffi.NULL or int(length) <= 12:
            raise invalid("the buffer must hold 13 characters")
        text = bus_id(dev).encode()[:int(length) - 1] + b"\0"
        ffi.memmove(buf, text, len(text))

    @c.export
    def hipDeviceGetByPCIBusId(out, text):
        if out == ffi.NULL or text == ffi.NULL:
            raise invalid("null pointer")
        m = re.match(r"\s*([0-9a-fA-F]+):([0-9a-fA-F]+):([0-9a-fA-F]+)", ffi.string(text).decode(errors="replace"))
        if m is None:
            raise invalid("not a PCI bus id")
        dom, bus, dev_id = (int(x, 16) for x in m.groups())
        for d in rt.devices:
            p = d.props
            if (p.pciDomainID, p.pciBusID, p.pciDeviceID) == (dom, bus, dev_id):
                out[0] = d.index
                return
        raise invalid("no device at that PCI bus id")

    @c.export
    def hipDeviceGetName(buf, length, d):
        dev = device(d)
        if buf == ffi.NULL or int(length) <= 0:
            raise invalid("null buffer")
        name = dev.props.name.encode()[:int(length) - 1] + b"\0"
        ffi.memmove(buf, name, len(name))

    @c.export
    def hipDeviceTotalMem(out, d):
        dev = device(d)
        c.need(out)
        out[0] = dev.props.totalGlobalMem

    @c.export
    def hipDeviceGetUuid(out, d):
        dev = device(d)
        c.need(out)
        uuid = f"GPU-pyhip{dev.index:07x}".encode()[:16]
        ffi.memmove(out, uuid.ljust(16, b"\0"), 16)

    # -- limits and configuration -------------------------------------------------------------------------
    @c.export
    def hipDeviceGetLimit(out, limit):
        if out == ffi.NULL or not 0 <= int(limit) <= 2:
            raise invalid("null pointer or unknown limit")
        limit = int(limit)
        if limit == LIMIT_MALLOC_HEAP:
            out[0] = rt.device().props.totalGlobalMem
        elif limit == LIMIT_STACK:
            out[0] = STACK_SIZE
        else:
            raise HipError(hipError_t.hipErrorUnsupportedLimit, "hipLimitPrintfFifoSize")

    def config_get(out, value):
        c.need(out)
        out[0] = value

    @c.export
    def hipDeviceGetCacheConfig(out):
        config_get(out, rt.device().cache_config)

    @c.export
    def hipDeviceSetCacheConfig(cfg):
        if not 0 <= int(cfg) <= 3:
            raise invalid(f"cache config {int(cfg)}")
        rt.device().cache_config = int(cfg)

    @c.export
    def hipDeviceGetSharedMemConfig(out):
        config_get(out, 1)                       # hipSharedMemBankSizeFourByte, as ROCclr

    @c.export
    def hipDeviceSetSharedMemConfig(cfg):
        if not 0 <= int(cfg) <= 2:
            raise invalid(f"shared memory config {int(cfg)}")

    @c.export
    def hipCtxGetCacheConfig(out):
        return hipDeviceGetCacheConfig(out)

    @c.export
    def hipCtxSetCacheConfig(cfg):
        return hipDeviceSetCacheConfig(cfg)

    @c.export
    def hipCtxGetSharedMemConfig(out):
        return hipDeviceGetSharedMemConfig(out)

    @c.export
    def hipCtxSetSharedMemConfig(cfg):
        return hipDeviceSetSharedMemConfig(cfg)

    @c.export
    def hipGetDeviceFlags(out):
        config_get(out, rt.device().flags)

    @c.export
    def hipSetDeviceFlags(flags):
        flags = int(flags)
        sched = flags & SCHEDULE_MASK
        if sched not in (0, 1, 2, 4) or flags & ~(SCHEDULE_MASK | MAP_HOST | LMEM_RESIZE):
            raise invalid(f"device flags 0x{flags:x}")
        rt.device().flags = sched

    @c.export
    def hipDeviceGetStreamPriorityRange(least, greatest):
        if least != ffi.NULL:
            least[0] = 1                         # ROCclr: Priority::Low = 1, High = -1
        if greatest != ffi.NULL:
            greatest[0] = -1

    # -- peer access ------------------------------------------------------------------------------------------
    @c.export
    def hipDeviceCanAccessPeer(out, d, p):
        c.need(out)
        out[0] = peer.can_access(int(d), int(p))

    @c.export
    def hipDeviceEnablePeerAccess(p, flags):
        if int(flags) != 0:
            raise invalid("flags must be 0")
        peer.enable(rt.current_index(), int(p))

    @c.export
    def hipDeviceDisablePeerAccess(p):
        peer.disable(rt.current_index(), int(p))

    @c.export
    def hipCtxEnablePeerAccess(ctx, flags):
        return None

    @c.export
    def hipCtxDisablePeerAccess(ctx):
        return None

    @c.export
    def hipDeviceGetP2PAttribute(out, attr, src, dst):
        c.need(out)
        src, dst, attr = int(src), int(dst), int(attr)
        if src == dst or not 0 <= src < len(rt.devices) or not 0 <= dst < len(rt.devices):
            raise HipError(hipError_t.hipErrorInvalidDevice, "two different devices")
        if attr == 0:                              # performance rank: the link type (XGMI = 4 between them)
            out[0] = peer.LINK_TYPE
        elif attr == 1:
            out[0] = peer.can_access(src, dst)
        elif attr == 2:
            out[0] = 1
        elif attr == 3:
            same = rt.devices[src].props.gcnArch == rt.devices[dst].props.gcnArch
            out[0] = peer.can_access(src, dst) if same else 0
        else:
            raise invalid(f"P2P attribute {attr}")

    @c.export
    def hipExtGetLinkTypeAndHopCount(d1, d2, link, hops):
        d1, d2 = int(d1), int(d2)
        if link == ffi.NULL or hops == ffi.NULL or d1 == d2 or d1 < 0 or d2 < 0:
            raise invalid("bad arguments")
        device(d1), device(d2)
        link[0], hops[0] = peer.LINK_TYPE, 1

    # -- primary contexts and the context API (a context is its device) ----------------------------------------------
    ctx_stack = c.ctx_stack = __import__("threading").local()

    def ctx_handle(index: int):
        return ffi.cast("void*", 0x1000 + index)          # stable, never 0

    def ctx_device(handle) -> int:
        i = c.addr(handle) - 0x1000
        if not 0 <= i < len(rt.devices):
            raise HipError(hipError_t.hipErrorInvalidContext, "not a context")
        return i

    def set_current(i: int) -> None:
        rt.set_device(i)
        lib.pyhip_set_current_device(i)

    @c.export
    def hipDevicePrimaryCtxGetState(d, flags, active):
        device(d)
        if flags == ffi.NULL or active == ffi.NULL:
            raise invalid("null pointer")
        flags[0], active[0] = rt.devices[int(d)].flags, int(int(d) in rt.primary_active)

    @c.export
    def hipDevicePrimaryCtxRetain(out, d):
        device(d)
        c.need(out)
        rt.primary_active.add(int(d))
        out[0] = ctx_handle(int(d))

    @c.export
    def hipDevicePrimaryCtxRelease(d):
        device(d)
        rt.primary_active.discard(int(d))

    @c.export
    def hipDevicePrimaryCtxReset(d):
        dev = device(d)
        dev.reset()
        rt.primary_active.discard(int(d))

    @c.export
    def hipDevicePrimaryCtxSetFlags(d, flags):
        device(d)
        if int(d) in rt.primary_active:
            raise HipError(hipError_t.hipErrorContextAlreadyInUse, "the primary context is active")
        rt.devices[int(d)].flags = int(flags) & SCHEDULE_MASK

    @c.export
    def hipCtxCreate(out, flags, d):
        device(d)
        c.need(out)
        set_current(int(d))
        out[0] = ctx_handle(int(d))

    @c.export
    def hipCtxDestroy(ctx):
        if ctx == ffi.NULL:
            raise HipError(hipError_t.hipErrorInvalidValue, "null context")
        rt.devices[ctx_device(ctx)].synchronize_quietly()

    @c.export
    def hipCtxGetCurrent(out):
        c.need(out)
        out[0] = ctx_handle(rt.current_index())

    @c.export
    def hipCtxSetCurrent(ctx):
        if ctx != ffi.NULL:
            set_current(ctx_device(ctx))

    @c.export
    def hipCtxPushCurrent(ctx):
        i = ctx_device(ctx)
        stack = getattr(ctx_stack, "s", None) or []
        stack.append(rt.current_index())
        ctx_stack.s = stack
        set_current(i)

    @c.export
    def hipCtxPopCurrent(out):
        stack = getattr(ctx_stack, "s", None) or []
        if out != ffi.NULL:
            out[0] = ctx_handle(rt.current_index())
        if stack:
            set_current(stack.pop())

    @c.export
    def hipCtxGetDevice(out):
        c.need(out)
        out[0] = rt.current_index()

    @c.export
    def hipCtxGetApiVersion(ctx, out):
        c.need(out)
        out[0] = 4000                              # HIP_VERSION_MAJOR * 1000, as ROCclr

    @c.export
    def hipCtxSynchronize():
        rt.device().synchronize()

    @c.export
    def hipCtxGetFlags(out):
        c.need(out)
        out[0] = rt.device().flags

    # -- profiling hooks and build information (no tracer is attached) -------------------------------------------
    @c.export
    def hipProfilerStart():
        return None

    @c.export
    def hipProfilerStop():
        return None

    @c.export_raw("hipApiName")
    def api_name(op):
        return c.cstring("unknown")

    @c.export_raw("hipGetCmdName")
    def cmd_name(op):
        return c.cstring("unknown")

    @c.export_raw("hipEnableActivityCallback")
    def enable_activity(op, enable):
        return False

    @c.export_raw("hipInitActivityCallback")
    def init_activity(id_cb, op_cb, arg):
        return None

    @c.export_raw("amd_dbgapi_get_build_id")
    def build_id():
        return 0

    @c.export_raw("amd_dbgapi_get_build_name")
    def build_name():
        return c.cstring("pyhip")

    @c.export_raw("amd_dbgapi_get_git_hash")
    def git_hash():
        return c.cstring("pyhip")

    @c.export_raw("__hipGetPCH")
    def get_pch(pch, size):
        if pch != ffi.NULL:
            pch[0] = ffi.NULL
        if size != ffi.NULL:
            size[0] = 0
