"""The C ABI's 1-D memory functions: allocation (device, pinned, managed), copies, fills, symbols, info."""
from __future__ import annotations

from ..hipapi import memory as api


def install(c) -> None:
    ffi, rt = c.ffi, c.rt
    from ..runtime import ops

    addr = c.addr

    @c.export
    def hipMalloc(ptr, size):
        c.need(ptr)
        ptr[0] = ffi.cast("void*", int(ops.malloc(size)))

    @c.export
    def hipFree(ptr):
        ops.free(addr(ptr))                      # device, managed or hipHostMalloc memory
        c.keep.pop(addr(ptr), None)

    @c.export
    def hipMallocManaged(ptr, size, flags):
        c.need(ptr)
        hp = api.malloc_managed(size, flags)
        c.keep[int(hp)] = hp
        ptr[0] = ffi.cast("void*", int(hp))

    def host_malloc(ptr, size, flags):
        c.need(ptr)
        hp = api.host_malloc(size, flags)
        if int(hp):
            c.keep[int(hp)] = hp              # keep the buffer alive until hipHostFree
        ptr[0] = ffi.cast("void*", int(hp))

    @c.export
    def hipHostMalloc(ptr, size, flags):
        host_malloc(ptr, size, flags)

    @c.export
    def hipMallocHost(ptr, size):
        host_malloc(ptr, size, 0)

    @c.export
    def hipHostAlloc(ptr, size, flags):
        host_malloc(ptr, size, flags)

    @c.export
    def hipHostFree(ptr):
        ops.host_free(addr(ptr))
        c.keep.pop(addr(ptr), None)

    @c.export
    def hipFreeHost(ptr):
        return hipHostFree(ptr)

    @c.export
    def pyhip_slow_hipMemcpy(dst, src, size, kind):
        # hipMemcpy (fastlaunch.c) when C did not do it (not armed, another device's memory, a bad range...)
        ops.memcpy(addr(dst), addr(src), size, kind, None, sync=True)

    @c.export
    def pyhip_slow_hipMemcpyAsync(dst, src, size, kind, stream):
        # hipMemcpyAsync (fastlaunch.c) when C did not queue or do it
        ops.memcpy(addr(dst), addr(src), size, kind, c.stream_of(stream), sync=False)

    @c.export
    def pyhip_slow_hipMemset(dst, value, size):
        # hipMemset (fastlaunch.c) when C did not do it
        ops.memset(addr(dst), value, size, 1, None, sync=True)

    @c.export
    def pyhip_slow_hipMemsetAsync(dst, value, size, stream):
        # hipMemsetAsync (fastlaunch.c) when C did not queue or do it
        ops.memset(addr(dst), value, size, 1, c.stream_of(stream), sync=False)

    def memset_family(width):
        def sync(dst, value, count):
            ops.memset(addr(dst), value, count, width, None, sync=True)

        def asynchronous(dst, value, count, stream):
            ops.memset(addr(dst), value, count, width, c.stream_of(stream), sync=False)
        return sync, asynchronous

    for width in (1, 2, 4):                      # hipMemsetD8/16/32 (+Async: fastlaunch.c) when C did not do them
        s, a = memset_family(width)
        c.export_as(f"pyhip_slow_hipMemsetD{8 * width}", s)
        c.export_as(f"pyhip_slow_hipMemsetD{8 * width}Async", a)

    @c.export
    def hipMemGetInfo(free, total):
        # HIP 5.2 writes both unchecked (a null one crashes); later HIP fills whichever is given and succeeds
        # with neither, as here
        if free == ffi.NULL and total == ffi.NULL:
            return
        f, t = ops.mem_get_info()
        if free != ffi.NULL:
            free[0] = f
        if total != ffi.NULL:
            total[0] = t

    # -- symbols ---------------------------------------------------------------------------------------------
    def symbol_address(symbol, offset: int = 0, size: int = 0) -> int:
        """The device address of ``symbol`` + offset on the current device (registry/variables.py's bounds rule)."""
        return rt.registry.variable_address(addr(symbol), rt.device(), offset, size)

    c.symbol_address = symbol_address

    @c.export
    def hipMemcpyToSymbol(symbol, src, size, offset, kind):
        ops.memcpy(symbol_address(symbol, offset, size), addr(src), size, kind, None, sync=True)

    @c.export
    def hipMemcpyFromSymbol(dst, symbol, size, offset, kind):
        ops.memcpy(addr(dst), symbol_address(symbol, offset, size), size, kind, None, sync=True)

    @c.export
    def hipMemcpyToSymbolAsync(symbol, src, size, offset, kind, stream):
        ops.memcpy(symbol_address(symbol, offset, size), addr(src), size, kind, c.stream_of(stream), sync=False)

    @c.export
    def hipMemcpyFromSymbolAsync(dst, symbol, size, offset, kind, stream):
        ops.memcpy(addr(dst), symbol_address(symbol, offset, size), size, kind, c.stream_of(stream), sync=False)

    @c.export
    def hipGetSymbolAddress(dev_ptr, symbol):
        c.need(dev_ptr)
        dev_ptr[0] = ffi.cast("void*", symbol_address(symbol))

    @c.export
    def hipGetSymbolSize(size, symbol):
        c.need(size)
        size[0] = rt.registry.variable(addr(symbol)).size
