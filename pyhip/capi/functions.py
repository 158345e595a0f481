"""The C ABI's kernel functions: attributes (hipFuncGetAttribute(s), hipFuncSetAttribute), cache and
shared-memory configuration, occupancy (the hipOccupancy* and hipModuleOccupancy* forms, WithFlags), kernel
names."""
from __future__ import annotations

from ..errors import HipError, hipError_t
from .common import invalid

# hipFuncAttribute
MAX_DYNAMIC_SHARED, PREFERRED_CARVEOUT = 8, 9


def install(c) -> None:
    ffi, rt = c.ffi, c.rt
    from .. import hip as H
    from ..runtime.module import Function

    addr = c.addr

    def kernel_of(f):
        """A hipFunction_t handle, or the host function of a <<<>>> kernel (registered handle)."""
        o = c.objects.get(addr(f))
        if isinstance(o, Function):
            return o
        if f == ffi.NULL:
            raise HipError(hipError_t.hipErrorInvalidDeviceFunction, "null function")
        return rt.registry.kernel(addr(f), rt.device())

    c.kernel_of = kernel_of

    @c.export
    def hipFuncGetAttributes(attr, func):
        c.need(attr)
        c.check(H.hipFuncGetAttributes(int(ffi.cast("uintptr_t", attr)), kernel_of(func)))   # fills the C struct

    @c.export
    def hipFuncGetAttribute(value, attrib, hfunc):
        c.need(value)
        value[0] = int(c.check(H.hipFuncGetAttribute(c.enum_arg(H.hipFunction_attribute, attrib), c.obj(hfunc, Function))))

    @c.export
    def hipOccupancyMaxPotentialBlockSize(grid_size, block_size, f, dyn_shared, limit):
        c.need(grid_size, block_size)
        g, b = c.check(H.hipOccupancyMaxPotentialBlockSize(kernel_of(f), int(dyn_shared), int(limit)))
        grid_size[0], block_size[0] = int(g), int(b)

    @c.export
    def hipOccupancyMaxActiveBlocksPerMultiprocessor(num_blocks, f, block_size, dyn_shared):
        c.need(num_blocks)
        num_blocks[0] = int(c.check(H.hipOccupancyMaxActiveBlocksPerMultiprocessor(kernel_of(f), int(block_size),
                                                                                   int(dyn_shared))))


    # -- occupancy -----------------------------------------------------------------------------------------
    @c.export
    def hipOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(num_blocks, f, block_size, dyn_shared, flags):
        c.need(num_blocks)
        num_blocks[0] = int(c.check(H.hipOccupancyMaxActiveBlocksPerMultiprocessor(
            c.kernel_of(f), int(block_size), int(dyn_shared))))

    @c.export
    def hipModuleOccupancyMaxActiveBlocksPerMultiprocessor(num_blocks, f, block_size, dyn_shared):
        c.need(num_blocks)
        num_blocks[0] = int(c.check(H.hipOccupancyMaxActiveBlocksPerMultiprocessor(
            c.obj(f, Function), int(block_size), int(dyn_shared))))

    @c.export
    def hipModuleOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(num_blocks, f, block_size, dyn_shared, flags):
        return hipModuleOccupancyMaxActiveBlocksPerMultiprocessor(num_blocks, f, block_size, dyn_shared)

    @c.export
    def hipModuleOccupancyMaxPotentialBlockSize(grid_size, block_size, f, dyn_shared, limit):
        c.need(grid_size, block_size)
        g, b = c.check(H.hipOccupancyMaxPotentialBlockSize(c.obj(f, Function), int(dyn_shared), int(limit)))
        grid_size[0], block_size[0] = int(g), int(b)

    @c.export
    def hipModuleOccupancyMaxPotentialBlockSizeWithFlags(grid_size, block_size, f, dyn_shared, limit, flags):
        return hipModuleOccupancyMaxPotentialBlockSize(grid_size, block_size, f, dyn_shared, limit)

    # -- function configuration ------------------------------------------------------------------------------
    @c.export
    def hipFuncSetAttribute(func, attr, value):
        f = c.kernel_of(func)
        attr, value = int(attr), int(value)
        if attr == MAX_DYNAMIC_SHARED:
            if value < 0 or value + f.kernel.group_segment_fixed_size > f.device.props.sharedMemPerBlock:
                raise invalid(f"{value} bytes of dynamic LDS do not fit")
            f.max_dynamic_shared = value
        elif attr == PREFERRED_CARVEOUT:
            if not -1 <= value <= 100:
                raise invalid(f"carveout {value}")
            f.preferred_carveout = value
        else:
            raise invalid(f"function attribute {attr}")

    @c.export
    def hipFuncSetCacheConfig(func, config):
        c.kernel_of(func)
        if not 0 <= int(config) <= 3:
            raise invalid(f"cache config {int(config)}")

    @c.export
    def hipFuncSetSharedMemConfig(func, config):
        c.kernel_of(func)
        if not 0 <= int(config) <= 2:
            raise invalid(f"shared memory config {int(config)}")

    @c.export_raw("hipKernelNameRef")
    def kernel_name_ref(f):
        try:
            return c.cstring(c.obj(f, Function).kernel.name)
        except Exception:  # noqa: BLE001
            return ffi.NULL

    @c.export_raw("hipKernelNameRefByPtr")
    def kernel_name_ref_by_ptr(host_fn, stream):
        try:
            return c.cstring(rt.registry.kernel(addr(host_fn), rt.device()).kernel.name)
        except Exception:  # noqa: BLE001
            return ffi.NULL
