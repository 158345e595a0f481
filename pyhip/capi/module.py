"""The C ABI's module API: hipModuleLoad*, functions and globals by name, module launches
(hipModuleLaunchKernel, hipExtModuleLaunchKernel, hipHccModuleLaunchKernel)."""
from __future__ import annotations

from .. import hip as H
from ..errors import HipError, hipError_t
from ..hipapi import launch as api
from ..loader.extent import image_at
from ..runtime.event import Event
from ..runtime.module import Function, Module
from .common import c, export, invalid


@export
def hipModuleLoad(module, fname):
    c.need(module, fname)
    c.new_handle(module, c.check(H.hipModuleLoad(c.ffi.string(fname))))


@export
def hipModuleLoadData(module, image):
    c.need(module, image)
    c.new_handle(module, c.check(H.hipModuleLoadData(image_at(c.addr(image)))))


@export
def hipModuleLoadDataEx(module, image, num_options, options, values):
    c.need(module, image)
    c.new_handle(module, c.check(H.hipModuleLoadDataEx(image_at(c.addr(image)), int(num_options), None, None)))


@export
def hipModuleUnload(module):
    c.fast.invalidate()
    c.check(H.hipModuleUnload(c.obj(module, Module)))


def module_of(module):
    if module == c.ffi.NULL:
        raise HipError(hipError_t.hipErrorInvalidResourceHandle, "null module")
    return c.obj(module, Module)


@export
def hipModuleGetFunction(function, module, name):
    if function == c.ffi.NULL or name == c.ffi.NULL or not c.ffi.string(name):
        raise invalid("null function pointer or empty name")
    c.new_handle(function, c.check(H.hipModuleGetFunction(module_of(module), c.ffi.string(name))))


@export
def hipModuleGetGlobal(dptr, nbytes, module, name):
    if dptr == c.ffi.NULL or nbytes == c.ffi.NULL:
        return None                          # ROCclr: a null output means nothing to do
    if name == c.ffi.NULL or not c.ffi.string(name):
        raise invalid("null or empty name")
    a, size = c.check(H.hipModuleGetGlobal(module_of(module), c.ffi.string(name)))
    dptr[0] = c.ffi.cast("void*", int(a))
    nbytes[0] = size


def module_args(func, params, extra) -> bytes:
    """Explicit arguments from kernelParams (one pointer per argument) or extra (one packed buffer)."""
    return func.packer.from_c(c.addr(params), c.addr(extra))


@export
def hipModuleLaunchKernel(f, gx, gy, gz, bx, by, bz, shared, stream, params, extra):
    func = c.obj(f, Function)
    st = c.stream(stream)
    api.launch(func, st, (gx, gy, gz), (bx, by, bz), shared, raw=module_args(func, params, extra))


def ext_module_launch(f, gx, gy, gz, lx, ly, lz, shared, stream, params, extra, start, stop):
    # global work-item sizes (a partial last workgroup is allowed), events recorded around the launch
    func = c.obj(f, Function)
    st = c.stream(stream)
    raw = module_args(func, params, extra)
    events = [c.obj(e, Event) if e != c.ffi.NULL else None for e in (start, stop)]
    if events[0] is not None:
        events[0].record(st)
    func.launch(st, None, (lx, ly, lz), int(shared), raw=raw, items=(gx, gy, gz))
    if events[1] is not None:
        events[1].record(st)


@export
def _Z24hipExtModuleLaunchKernelP18ihipModuleSymbol_tjjjjjjmP12ihipStream_tPPvS4_P11ihipEvent_tS6_j(
        f, gx, gy, gz, lx, ly, lz, shared, stream, params, extra, start, stop, flags):
    ext_module_launch(f, gx, gy, gz, lx, ly, lz, shared, stream, params, extra, start, stop)


@export
def _Z24hipHccModuleLaunchKernelP18ihipModuleSymbol_tjjjjjjmP12ihipStream_tPPvS4_P11ihipEvent_tS6_(
        f, gx, gy, gz, lx, ly, lz, shared, stream, params, extra, start, stop):
    ext_module_launch(f, gx, gy, gz, lx, ly, lz, shared, stream, params, extra, start, stop)
