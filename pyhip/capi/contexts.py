"""The C ABI's primary contexts and the (deprecated) context API over the devices: a context is its device
(clr's hip_context.cpp)."""
from __future__ import annotations

import threading

from ..errors import HipError, hipError_t
from .common import c, export, invalid
from .device_config import SCHEDULE_MASK


ctx_stack = threading.local()                # hipCtxPushCurrent's stack, per thread


def ctx_handle(index: int):
    return c.ffi.cast("void*", 0x1000 + index)          # stable, never 0


def ctx_device(handle) -> int:
    i = c.addr(handle) - 0x1000
    if not 0 <= i < len(c.rt.devices):
        raise HipError(hipError_t.hipErrorInvalidContext, "not a context")
    return i


def set_current(i: int) -> None:
    c.rt.set_device(i)
    c.lib.pyhip_set_current_device(i)


@export
def hipDevicePrimaryCtxGetState(d, flags, active):
    c.device(d)
    if flags == c.ffi.NULL or active == c.ffi.NULL:
        raise invalid("null pointer")
    flags[0], active[0] = c.rt.devices[int(d)].flags, int(int(d) in c.rt.primary_active)


@export
def hipDevicePrimaryCtxRetain(out, d):
    c.device(d)
    c.need(out)
    c.rt.primary_active.add(int(d))
    out[0] = ctx_handle(int(d))


@export
def hipDevicePrimaryCtxRelease(d):
    c.device(d)
    c.rt.primary_active.discard(int(d))


@export
def hipDevicePrimaryCtxReset(d):
    dev = c.device(d)
    dev.reset()
    c.rt.primary_active.discard(int(d))


@export
def hipDevicePrimaryCtxSetFlags(d, flags):
    c.device(d)
    if int(d) in c.rt.primary_active:
        raise HipError(hipError_t.hipErrorContextAlreadyInUse, "the primary context is active")
    c.rt.devices[int(d)].flags = int(flags) & SCHEDULE_MASK


@export
def hipCtxCreate(out, flags, d):
    c.device(d)
    c.need(out)
    set_current(int(d))
    out[0] = ctx_handle(int(d))


@export
def hipCtxDestroy(ctx):
    if ctx == c.ffi.NULL:
        raise HipError(hipError_t.hipErrorInvalidValue, "null context")
    c.rt.devices[ctx_device(ctx)].synchronize_quietly()


@export
def hipCtxGetCurrent(out):
    c.need(out)
    out[0] = ctx_handle(c.rt.current_index())


@export
def hipCtxSetCurrent(ctx):
    if ctx != c.ffi.NULL:
        set_current(ctx_device(ctx))


@export
def hipCtxPushCurrent(ctx):
    i = ctx_device(ctx)
    stack = getattr(ctx_stack, "s", None) or []
    stack.append(c.rt.current_index())
    ctx_stack.s = stack
    set_current(i)


@export
def hipCtxPopCurrent(out):
    stack = getattr(ctx_stack, "s", None) or []
    if out != c.ffi.NULL:
        out[0] = ctx_handle(c.rt.current_index())
    if stack:
        set_current(stack.pop())


@export
def hipCtxGetDevice(out):
    c.need(out)
    out[0] = c.rt.current_index()


@export
def hipCtxGetApiVersion(ctx, out):
    c.need(out)
    out[0] = 4000                              # HIP_VERSION_MAJOR * 1000, as ROCclr


@export
def hipCtxSynchronize():
    c.rt.device().synchronize()


@export
def hipCtxGetFlags(out):
    c.need(out)
    out[0] = c.rt.device().flags

