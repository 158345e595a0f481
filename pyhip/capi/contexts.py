"""The C ABI's primary contexts and the (deprecated) context API over the devices: a context is its device
(clr's hip_context.cpp)."""
from __future__ import annotations

import threading

from ..errors import HipError, hipError_t
from .common import invalid
from .device_config import SCHEDULE_MASK


def install(c) -> None:
    ffi, lib, rt = c.ffi, c.lib, c.rt
    ctx_stack = c.ctx_stack = threading.local()

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
        c.device(d)
        if flags == ffi.NULL or active == ffi.NULL:
            raise invalid("null pointer")
        flags[0], active[0] = rt.devices[int(d)].flags, int(int(d) in rt.primary_active)

    @c.export
    def hipDevicePrimaryCtxRetain(out, d):
        c.device(d)
        c.need(out)
        rt.primary_active.add(int(d))
        out[0] = ctx_handle(int(d))

    @c.export
    def hipDevicePrimaryCtxRelease(d):
        c.device(d)
        rt.primary_active.discard(int(d))

    @c.export
    def hipDevicePrimaryCtxReset(d):
        dev = c.device(d)
        dev.reset()
        rt.primary_active.discard(int(d))

    @c.export
    def hipDevicePrimaryCtxSetFlags(d, flags):
        c.device(d)
        if int(d) in rt.primary_active:
            raise HipError(hipError_t.hipErrorContextAlreadyInUse, "the primary context is active")
        rt.devices[int(d)].flags = int(flags) & SCHEDULE_MASK

    @c.export
    def hipCtxCreate(out, flags, d):
        c.device(d)
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

