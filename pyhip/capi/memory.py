"""The C ABI's 1-D memory functions: allocation (device, pinned, managed), copies, fills, symbols, info."""
from __future__ import annotations

from ..hipapi import memory as api
from ..runtime import ops
from .common import c, export, export_as


@export
def hipMalloc(ptr, size):
    c.need(ptr)
    ptr[0] = c.ffi.cast("void*", int(ops.malloc(size)))


@export
def hipFree(ptr):
    ops.free(c.addr(ptr))                      # device, managed or hipHostMalloc memory
    c.keep.pop(c.addr(ptr), None)


@export
def hipMallocManaged(ptr, size, flags):
    c.need(ptr)
    hp = api.malloc_managed(size, flags)
    c.keep[int(hp)] = hp
    ptr[0] = c.ffi.cast("void*", int(hp))


def host_malloc(ptr, size, flags):
    c.need(ptr)
    hp = api.host_malloc(size, flags)
    if int(hp):
        c.keep[int(hp)] = hp              # keep the buffer alive until hipHostFree
    ptr[0] = c.ffi.cast("void*", int(hp))


@export
def hipHostMalloc(ptr, size, flags):
    host_malloc(ptr, size, flags)


@export
def hipMallocHost(ptr, size):
    host_malloc(ptr, size, 0)


@export
def hipHostAlloc(ptr, size, flags):
    host_malloc(ptr, size, flags)


@export
def hipHostFree(ptr):
    ops.host_free(c.addr(ptr))
    c.keep.pop(c.addr(ptr), None)


@export
def hipFreeHost(ptr):
    return hipHostFree(ptr)


@export
def pyhip_slow_hipMemcpy(dst, src, size, kind):
    # hipMemcpy (fastlaunch.c) when C did not do it (not armed, another device's memory, a bad range...)
    ops.memcpy(c.addr(dst), c.addr(src), size, kind, None, sync=True)


@export
def pyhip_slow_hipMemcpyAsync(dst, src, size, kind, stream):
    # hipMemcpyAsync (fastlaunch.c) when C did not queue or do it
    ops.memcpy(c.addr(dst), c.addr(src), size, kind, c.stream_of(stream), sync=False)


@export
def pyhip_slow_hipMemset(dst, value, size):
    # hipMemset (fastlaunch.c) when C did not do it
    ops.memset(c.addr(dst), value, size, 1, None, sync=True)


@export
def pyhip_slow_hipMemsetAsync(dst, value, size, stream):
    # hipMemsetAsync (fastlaunch.c) when C did not queue or do it
    ops.memset(c.addr(dst), value, size, 1, c.stream_of(stream), sync=False)


def export_memset(width: int) -> None:
    """pyhip_slow_hipMemsetD8/16/32 (+Async): hipMemsetD* (fastlaunch.c) when C did not do them."""
    def sync(dst, value, count):
        ops.memset(c.addr(dst), value, count, width, None, sync=True)

    def asynchronous(dst, value, count, stream):
        ops.memset(c.addr(dst), value, count, width, c.stream_of(stream), sync=False)
    export_as(f"pyhip_slow_hipMemsetD{8 * width}", sync)
    export_as(f"pyhip_slow_hipMemsetD{8 * width}Async", asynchronous)


export_memset(1)
export_memset(2)
export_memset(4)


@export
def hipMemGetInfo(free, total):
    # HIP 5.2 writes both unchecked (a null one crashes); later HIP fills whichever is given and succeeds
    # with neither, as here
    if free == c.ffi.NULL and total == c.ffi.NULL:
        return
    f, t = ops.mem_get_info()
    if free != c.ffi.NULL:
        free[0] = f
    if total != c.ffi.NULL:
        total[0] = t


# -- symbols ---------------------------------------------------------------------------------------------
def symbol_address(symbol, offset: int = 0, size: int = 0) -> int:
    """The device address of ``symbol`` + offset on the current device (registry/variables.py's bounds rule)."""
    return c.rt.registry.variable_address(c.addr(symbol), c.rt.device(), offset, size)


@export
def hipMemcpyToSymbol(symbol, src, size, offset, kind):
    ops.memcpy(symbol_address(symbol, offset, size), c.addr(src), size, kind, None, sync=True)


@export
def hipMemcpyFromSymbol(dst, symbol, size, offset, kind):
    ops.memcpy(c.addr(dst), symbol_address(symbol, offset, size), size, kind, None, sync=True)


@export
def hipMemcpyToSymbolAsync(symbol, src, size, offset, kind, stream):
    ops.memcpy(symbol_address(symbol, offset, size), c.addr(src), size, kind, c.stream_of(stream), sync=False)


@export
def hipMemcpyFromSymbolAsync(dst, symbol, size, offset, kind, stream):
    ops.memcpy(c.addr(dst), symbol_address(symbol, offset, size), size, kind, c.stream_of(stream), sync=False)


@export
def hipGetSymbolAddress(dev_ptr, symbol):
    c.need(dev_ptr)
    dev_ptr[0] = c.ffi.cast("void*", symbol_address(symbol))


@export
def hipGetSymbolSize(size, symbol):
    c.need(size)
    size[0] = c.rt.registry.variable(c.addr(symbol)).size
