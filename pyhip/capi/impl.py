"""Python implementations of the exported HIP functions (run inside the embedded interpreter).

The area modules (:data:`AREAS`, textures, rtc) define their C functions at module level, each decorated
``@export`` (common.py), which only records it.  ``install()`` runs once when the shim is loaded: it binds the
shared context (:data:`common.c`) to the embedding and the runtime, imports every area and makes each
recorded function the C export of its name.  Every hipError_t export returns its code and never lets an
exception escape into C: HipError → its code, anything else → hipErrorUnknown, with the thread's last error
set as HIP 5.2 does."""
from __future__ import annotations

AREAS = ("registration", "memory", "memory2d", "streams", "stream_memops", "device", "device_config", "peers",
         "contexts", "profiler", "module", "functions", "launch", "pointers", "pools", "graph", "graph_params",
         "textures")

current = None       # the CApi of this process once the shim is loaded (in-process clients: pyhip.triton)


def install() -> None:
    import importlib

    from _pyhip_hip_shim import ffi, lib  # provided by the embedding

    from ..runtime import printf
    from ..runtime.context import after_fork_hooks, runtime
    from . import rtc
    from .common import c
    from .fastpath import FastPath

    printf.sink = printf.c_stdio_sink            # device printf shares the program's C stdout buffer
    rt = runtime()
    c.bind(ffi, lib, rt)
    c.fast = FastPath(ffi, lib, rt)
    for dev in rt.devices:
        c.fast.hook_device(dev)
    for name in AREAS:
        importlib.import_module(f"{__package__}.{name}")
    c.define_exports()
    global current
    current = c
    rtc.bind(ffi, link_api=False)                # HIP 5.2's libamdhip64 exports hiprtc's compile API too
    from .textures import resolve_static_references
    resolve_static_references()

    def forget_parent():                         # a forked child: the parent's streams and queues are gone
        lib.pyhip_fast_invalidate(ffi.NULL)
        lib.pyhip_set_current_device(0)
        c.streams.clear()
        c.objects.clear()
        for dev in rt.devices:
            c.fast.hook_device(dev)
    after_fork_hooks.append(forget_parent)
