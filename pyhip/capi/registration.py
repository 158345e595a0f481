"""hip-clang's registration calls (run in ELF constructors, before main) and the launch entry points:
``hipLaunchKernel`` (the slow half of fastlaunch.c), ``hipLaunchKernel_spt``, the legacy
hipConfigureCall / hipSetupArgument / hipLaunchByPtr sequence."""
from __future__ import annotations

import threading

from ..errors import HipError, hipError_t


def install(c) -> None:
    ffi, rt = c.ffi, c.rt

    # the registration calls run in the program's constructors: nothing may unwind into C (a failure shows
    # at the first use of what was not registered)
    @c.export_raw("__hipRegisterFatBinary")
    def register_fatbin(data):
        try:
            return ffi.cast("void**", rt.registry.register_wrapper(c.addr(data)))
        except Exception:  # noqa: BLE001
            return ffi.NULL

    @c.export_raw("__hipRegisterFunction")
    def register_function(modules, host_fn, device_fn, device_name, thread_limit, tid, bid, bdim, gdim, wsize):
        try:
            rt.registry.register_function(c.addr(modules), c.addr(host_fn), ffi.string(device_name))
        except Exception:  # noqa: BLE001
            pass

    @c.export_raw("__hipRegisterVar")
    def register_var(modules, var, host_var, device_var, ext, size, constant, glob):
        try:
            rt.registry.register_variable(c.addr(modules), c.addr(var), ffi.string(device_var), int(size),
                                          bool(constant))
        except Exception:  # noqa: BLE001
            pass

    @c.export_raw("__hipRegisterManagedVar")
    def register_managed(modules, pointer, init_value, name, size, align):
        try:
            rt.registry.register_managed(c.addr(modules), c.addr(pointer), ffi.string(name), int(size),
                                         c.addr(init_value))
        except Exception:  # noqa: BLE001
            pass

    @c.export_raw("__hipUnregisterFatBinary")
    def unregister(modules):
        c.fast.invalidate()
        try:
            rt.registry.unregister_fatbin(c.addr(modules))
        except Exception:  # noqa: BLE001
            pass

    # -- launches ------------------------------------------------------------------------------------------
    # __hipPushCallConfiguration / __hipPopCallConfiguration are C (fastlaunch.c): a per-thread stack

    def launch(handle, grid, block, args, shared, stream):
        st = c.stream(stream)
        f = rt.registry.kernel(c.addr(handle), st.device)
        f.host_handle = c.addr(handle)
        g, b = (grid.x, grid.y, grid.z), (block.x, block.y, block.z)
        f.launch(st, g, b, int(shared), raw=f.packer.gather(c.addr(args)))
        return f, st, g, b

    c.launch = launch

    @c.export
    def pyhip_slow_hipLaunchKernel(handle, grid, block, args, shared, stream):
        # the native path (fastlaunch.c) did not know this configuration: launch here, then teach it
        f, st, g, b = launch(handle, grid, block, args, shared, stream)
        try:
            c.fast.register(handle, stream, g, b, int(shared), f, st)
        except Exception:  # noqa: BLE001 - the launch itself succeeded; stay on the Python path
            c.fast.enabled = False

    @c.export
    def pyhip_launch_config(handle, grid, block, shared, stream, config):
        # hip_impl::hipLaunchKernelGGLImpl (fastlaunch.c), as hipamd 5.2: the kernel by its host address on
        # the stream's device, then hipModuleLaunchKernel(f, grid, block, shared, stream, NULL, config) — an
        # address that is no kernel reaches it as a null function: hipErrorInvalidImage
        st = c.stream(stream)
        try:
            f = rt.registry.kernel(c.addr(handle), st.device)
        except HipError as exc:
            if exc.code != hipError_t.hipErrorInvalidDeviceFunction:
                raise
            raise HipError(hipError_t.hipErrorInvalidImage, str(exc)) from None
        f.host_handle = c.addr(handle)
        f.launch(st, (grid.x, grid.y, grid.z), (block.x, block.y, block.z), int(shared),
                 raw=c.module_args(f, ffi.NULL, config))

    @c.export
    def hipLaunchKernel_spt(handle, grid, block, args, shared, stream):
        launch(handle, grid, block, args, shared, stream if c.addr(stream) else ffi.cast("void*", 2))

    # -- legacy launch: hipConfigureCall / hipSetupArgument / hipLaunchByPtr -------------------------------------
    setup = threading.local()

    @c.export
    def hipConfigureCall(grid, block, shared, stream):
        g, b = ffi.new("uint32_t[3]", [grid.x, grid.y, grid.z]), ffi.new("uint32_t[3]", [block.x, block.y, block.z])
        e = c.lib.pyhip_call_config_push(g, b, int(shared), stream)
        if e:
            raise HipError(hipError_t(e), "the call configuration stack is full")
        setup.args = bytearray()

    @c.export
    def hipSetupArgument(arg, size, offset):
        buf = getattr(setup, "args", None)
        if buf is None:                   # configured by __hipPushCallConfiguration: the same per-thread stack
            if c.lib.pyhip_call_config_depth() == 0:
                raise HipError(hipError_t.hipErrorMissingConfiguration, "hipSetupArgument without a call configuration")
            buf = setup.args = bytearray()
        if len(buf) < offset + size:
            buf.extend(b"\0" * (offset + size - len(buf)))
        buf[offset:offset + size] = bytes(ffi.buffer(arg, size))

    @c.export
    def hipLaunchByPtr(handle):
        g, b = ffi.new("uint32_t[3]"), ffi.new("uint32_t[3]")
        shared, stream = ffi.new("size_t*"), ffi.new("void**")
        e = c.lib.pyhip_call_config_pop(g, b, shared, stream)
        if e:
            raise HipError(hipError_t(e), "hipLaunchByPtr without a call configuration")
        grid, block, shared, stream = tuple(g), tuple(b), shared[0], c.stream_of(stream[0])
        raw = bytes(getattr(setup, "args", b"") or b"")
        setup.args = None
        st = rt.resolve_stream(stream)
        f = rt.registry.kernel(c.addr(handle), st.device)
        f.launch(st, grid, block, int(shared), raw=raw)
