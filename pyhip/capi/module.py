"""The C ABI's module API: hipModuleLoad*, functions and globals by name, module launches
(hipModuleLaunchKernel, hipExtModuleLaunchKernel, hipHccModuleLaunchKernel)."""
from __future__ import annotations

from ..errors import HipError, hipError_t
from ..hipapi import launch as api
from ..loader.extent import image_at
from .common import invalid


def install(c) -> None:
    ffi = c.ffi
    from .. import hip as H
    from ..runtime.module import Function, Module
    from ..runtime.event import Event

    addr = c.addr

    @c.export
    def hipModuleLoad(module, fname):
        c.need(module, fname)
        c.new_handle(module, c.check(H.hipModuleLoad(ffi.string(fname))))

    @c.export
    def hipModuleLoadData(module, image):
        c.need(module, image)
        c.new_handle(module, c.check(H.hipModuleLoadData(image_at(addr(image)))))

    @c.export
    def hipModuleLoadDataEx(module, image, num_options, options, values):
        c.need(module, image)
        c.new_handle(module, c.check(H.hipModuleLoadDataEx(image_at(addr(image)), int(num_options), None, None)))

    @c.export
    def hipModuleUnload(module):
        c.fast.invalidate()
        c.check(H.hipModuleUnload(c.obj(module, Module)))

    def module_of(module):
        if module == ffi.NULL:
            raise HipError(hipError_t.hipErrorInvalidResourceHandle, "null module")
        return c.obj(module, Module)

    @c.export
    def hipModuleGetFunction(function, module, name):
        if function == ffi.NULL or name == ffi.NULL or not ffi.string(name):
            raise invalid("null function pointer or empty name")
        c.new_handle(function, c.check(H.hipModuleGetFunction(module_of(module), ffi.string(name))))

    @c.export
    def hipModuleGetGlobal(dptr, nbytes, module, name):
        if dptr == ffi.NULL or nbytes == ffi.NULL:
            return None                          # ROCclr: a null output means nothing to do
        if name == ffi.NULL or not ffi.string(name):
            raise invalid("null or empty name")
        a, size = c.check(H.hipModuleGetGlobal(module_of(module), ffi.string(name)))
        dptr[0] = ffi.cast("void*", int(a))
        nbytes[0] = size

    def module_args(func, params, extra) -> bytes:
        """Explicit arguments from kernelParams (one pointer per argument) or extra (one packed buffer)."""
        return func.packer.from_c(addr(params), addr(extra))

    c.module_args = module_args

    @c.export
    def hipModuleLaunchKernel(f, gx, gy, gz, bx, by, bz, shared, stream, params, extra):
        func = c.obj(f, Function)
        st = c.stream(stream)
        api.launch(func, st, (gx, gy, gz), (bx, by, bz), shared, raw=module_args(func, params, extra))

    def ext_module_launch(f, gx, gy, gz, lx, ly, lz, shared, stream, params, extra, start, stop):
        # global work-item sizes (a partial last workgroup is allowed), events recorded around the launch
        func = c.obj(f, Function)
        st = c.stream(stream)
        raw = module_args(func, params, extra)
        events = [c.obj(e, Event) if e != ffi.NULL else None for e in (start, stop)]
        if events[0] is not None:
            events[0].record(st)
        func.launch(st, None, (lx, ly, lz), int(shared), raw=raw, items=(gx, gy, gz))
        if events[1] is not None:
            events[1].record(st)

    @c.export
    def _Z24hipExtModuleLaunchKernelP18ihipModuleSymbol_tjjjjjjmP12ihipStream_tPPvS4_P11ihipEvent_tS6_j(
            f, gx, gy, gz, lx, ly, lz, shared, stream, params, extra, start, stop, flags):
        ext_module_launch(f, gx, gy, gz, lx, ly, lz, shared, stream, params, extra, start, stop)

    @c.export
    def _Z24hipHccModuleLaunchKernelP18ihipModuleSymbol_tjjjjjjmP12ihipStream_tPPvS4_P11ihipEvent_tS6_(
            f, gx, gy, gz, lx, ly, lz, shared, stream, params, extra, start, stop):
        ext_module_launch(f, gx, gy, gz, lx, ly, lz, shared, stream, params, extra, start, stop)
