"""Python implementations of the exported HIP functions (run inside the embedded interpreter).

``install()`` runs once when the shim is loaded: it makes the shared context (:class:`common.CApi`) and lets
every area module define its exports.  Every hipError_t export returns its code and never lets an exception
escape into C: HipError → its code, anything else → hipErrorUnknown, with the thread's last error set as
HIP 5.2 does."""
from __future__ import annotations

AREAS = ("registration", "memory", "memory2d", "streams", "stream_memops", "device", "device_config", "peers",
         "contexts", "profiler", "module", "functions", "launch", "pointers", "pools", "graph", "graph_params")

current = None       # the CApi of this process once the shim is loaded (in-process clients: pyhip.triton)


def install_areas(c) -> None:
    import importlib

    for name in AREAS:
        importlib.import_module(f"{__package__}.{name}").install(c)


def install() -> None:
    from _pyhip_hip_shim import ffi, lib  # provided by the embedding

    from ..runtime.context import after_fork_hooks, runtime
    from .common import CApi
    from .fastpath import FastPath

    from ..runtime import printf

    printf.sink = printf.c_stdio_sink            # device printf shares the program's C stdout buffer
    rt = runtime()
    c = CApi(ffi, lib, rt)
    c.fast = FastPath(ffi, lib, rt)
    for dev in rt.devices:
        c.fast.hook_device(dev)
    install_areas(c)
    global current
    current = c
    from .rtc import install as install_rtc
    install_rtc(ffi, link_api=False)              # HIP 5.2's libamdhip64 exports hiprtc's compile API too
    from ..runtime.module import Module
    from .textures import install as install_textures
    install_textures(ffi, rt, c.export, c.check, c.addr, c.stream_of, c.symbol_address,
                     lambda h: c.obj(h, Module))

    def forget_parent():                         # a forked child: the parent's streams and queues are gone
        lib.pyhip_fast_invalidate(ffi.NULL)
        lib.pyhip_set_current_device(0)
        c.streams.clear()
        c.objects.clear()
        for dev in rt.devices:
            c.fast.hook_device(dev)
    after_fork_hooks.append(forget_parent)
