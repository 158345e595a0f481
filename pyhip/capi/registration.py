"""hip-clang's registration calls (run in ELF constructors, before main) and the launch entry points:
``hipLaunchKernel`` (the slow half of fastlaunch.c), ``hipLaunchKernel_spt``, the legacy
hipConfigureCall / hipSetupArgument / hipLaunchByPtr sequence."""
from __future__ import annotations

import threading

from ..errors import HipError, hipError_t
from .common import c, export, export_raw
from .module import module_args


# the registration calls run in the program's constructors: nothing may unwind into C (a failure shows
# at the first use of what was not registered)
@export_raw("__hipRegisterFatBinary")
def register_fatbin(data):
    try:
        return c.ffi.cast("void**", c.rt.registry.register_wrapper(c.addr(data)))
    except Exception:  # noqa: BLE001
        return c.ffi.NULL


@export_raw("__hipRegisterFunction")
def register_function(modules, host_fn, device_fn, device_name, thread_limit, tid, bid, bdim, gdim, wsize):
    try:
        c.rt.registry.register_function(c.addr(modules), c.addr(host_fn), c.ffi.string(device_name))
    except Exception:  # noqa: BLE001
        pass


@export_raw("__hipRegisterVar")
def register_var(modules, var, host_var, device_var, ext, size, constant, glob):
    try:
        c.rt.registry.register_variable(c.addr(modules), c.addr(var), c.ffi.string(device_var), int(size),
                                      bool(constant))
    except Exception:  # noqa: BLE001
        pass


@export_raw("__hipRegisterManagedVar")
def register_managed(modules, pointer, init_value, name, size, align):
    try:
        c.rt.registry.register_managed(c.addr(modules), c.addr(pointer), c.ffi.string(name), int(size),
                                     c.addr(init_value))
    except Exception:  # noqa: BLE001
        pass


@export_raw("__hipUnregisterFatBinary")
def unregister(modules):
    c.fast.invalidate()
    try:
        c.rt.registry.unregister_fatbin(c.addr(modules))
    except Exception:  # noqa: BLE001
        pass


# -- launches ------------------------------------------------------------------------------------------
# __hipPushCallConfiguration / __hipPopCallConfiguration are C (fastlaunch.c): a per-thread stack


def launch(handle, grid, block, args, shared, stream):
    st = c.stream(stream)
    f = c.rt.registry.kernel(c.addr(handle), st.device)
    f.host_handle = c.addr(handle)
    g, b = (grid.x, grid.y, grid.z), (block.x, block.y, block.z)
    f.launch(st, g, b, int(shared), raw=f.packer.gather(c.addr(args)))
    return f, st, g, b


@export
def pyhip_slow_hipLaunchKernel(handle, grid, block, args, shared, stream):
    # the native path (fastlaunch.c) did not know this configuration: launch here, then teach it
    f, st, g, b = launch(handle, grid, block, args, shared, stream)
    try:
        c.fast.register(handle, stream, g, b, int(shared), f, st)
    except Exception:  # noqa: BLE001 - the launch itself succeeded; stay on the Python path
        c.fast.enabled = False


@export
def pyhip_launch_config(handle, grid, block, shared, stream, config):
    # hip_impl::hipLaunchKernelGGLImpl (fastlaunch.c), as hipamd 5.2: the kernel by its host address on
    # the stream's device, then hipModuleLaunchKernel(f, grid, block, shared, stream, NULL, config) — an
    # address that is no kernel reaches it as a null function: hipErrorInvalidImage
    st = c.stream(stream)
    try:
        f = c.rt.registry.kernel(c.addr(handle), st.device)
    except HipError as exc:
        if exc.code != hipError_t.hipErrorInvalidDeviceFunction:
            raise
        raise HipError(hipError_t.hipErrorInvalidImage, str(exc)) from None
    f.host_handle = c.addr(handle)
    f.launch(st, (grid.x, grid.y, grid.z), (block.x, block.y, block.z), int(shared),
             raw=module_args(f, c.ffi.NULL, config))


@export
def hipLaunchKernel_spt(handle, grid, block, args, shared, stream):
    launch(handle, grid, block, args, shared, stream if c.addr(stream) else c.ffi.cast("void*", 2))


# -- legacy launch: hipConfigureCall / hipSetupArgument / hipLaunchByPtr -------------------------------------
setup = threading.local()


@export
def hipConfigureCall(grid, block, shared, stream):
    g, b = c.ffi.new("uint32_t[3]", [grid.x, grid.y, grid.z]), c.ffi.new("uint32_t[3]", [block.x, block.y, block.z])
    e = c.lib.pyhip_call_config_push(g, b, int(shared), stream)
    if e:
        raise HipError(hipError_t(e), "the call configuration stack is full")
    setup.args = bytearray()


@export
def hipSetupArgument(arg, size, offset):
    buf = getattr(setup, "args", None)
    if buf is None:                   # configured by __hipPushCallConfiguration: the same per-thread stack
        if c.lib.pyhip_call_config_depth() == 0:
            raise HipError(hipError_t.hipErrorMissingConfiguration, "hipSetupArgument without a call configuration")
        buf = setup.args = bytearray()
    if len(buf) < offset + size:
        buf.extend(b"\0" * (offset + size - len(buf)))
    buf[offset:offset + size] = bytes(c.ffi.buffer(arg, size))


@export
def hipLaunchByPtr(handle):
    g, b = c.ffi.new("uint32_t[3]"), c.ffi.new("uint32_t[3]")
    shared, stream = c.ffi.new("size_t*"), c.ffi.new("void**")
    e = c.lib.pyhip_call_config_pop(g, b, shared, stream)
    if e:
        raise HipError(hipError_t(e), "hipLaunchByPtr without a call configuration")
    grid, block, shared, stream = tuple(g), tuple(b), shared[0], c.stream_of(stream[0])
    raw = bytes(getattr(setup, "args", b"") or b"")
    setup.args = None
    st = c.rt.resolve_stream(stream)
    f = c.rt.registry.kernel(c.addr(handle), st.device)
    f.launch(st, grid, block, int(shared), raw=raw)
