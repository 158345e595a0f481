"""The C ABI's kernel functions: attributes (hipFuncGetAttribute(s), hipFuncSetAttribute), cache and
shared-memory configuration, occupancy (the hipOccupancy* and hipModuleOccupancy* forms, WithFlags), kernel
names."""
from __future__ import annotations

from .. import hip as H
from ..errors import HipError, hipError_t
from ..runtime.module import Function
from .common import c, export, export_raw, invalid


# hipFuncAttribute
MAX_DYNAMIC_SHARED, PREFERRED_CARVEOUT = 8, 9


def kernel_of(f):
    """A hipFunction_t handle, or the host function of a <<<>>> kernel (registered handle)."""
    o = c.objects.get(c.addr(f))
    if isinstance(o, Function):
        return o
    if f == c.ffi.NULL:
        raise HipError(hipError_t.hipErrorInvalidDeviceFunction, "null function")
    return c.rt.registry.kernel(c.addr(f), c.rt.device())


@export
def hipFuncGetAttributes(attr, func):
    c.need(attr)
    c.check(H.hipFuncGetAttributes(int(c.ffi.cast("uintptr_t", attr)), kernel_of(func)))   # fills the C struct


@export
def hipFuncGetAttribute(value, attrib, hfunc):
    c.need(value)
    value[0] = int(c.check(H.hipFuncGetAttribute(c.enum_arg(H.hipFunction_attribute, attrib), c.obj(hfunc, Function))))


@export
def hipOccupancyMaxPotentialBlockSize(grid_size, block_size, f, dyn_shared, limit):
    c.need(grid_size, block_size)
    g, b = c.check(H.hipOccupancyMaxPotentialBlockSize(kernel_of(f), int(dyn_shared), int(limit)))
    grid_size[0], block_size[0] = int(g), int(b)


@export
def hipOccupancyMaxActiveBlocksPerMultiprocessor(num_blocks, f, block_size, dyn_shared):
    c.need(num_blocks)
    num_blocks[0] = int(c.check(H.hipOccupancyMaxActiveBlocksPerMultiprocessor(kernel_of(f), int(block_size),
                                                                               int(dyn_shared))))


# -- occupancy -----------------------------------------------------------------------------------------
@export
def hipOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(num_blocks, f, block_size, dyn_shared, flags):
    c.need(num_blocks)
    num_blocks[0] = int(c.check(H.hipOccupancyMaxActiveBlocksPerMultiprocessor(
        kernel_of(f), int(block_size), int(dyn_shared))))


@export
def hipModuleOccupancyMaxActiveBlocksPerMultiprocessor(num_blocks, f, block_size, dyn_shared):
    c.need(num_blocks)
    num_blocks[0] = int(c.check(H.hipOccupancyMaxActiveBlocksPerMultiprocessor(
        c.obj(f, Function), int(block_size), int(dyn_shared))))


@export
def hipModuleOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(num_blocks, f, block_size, dyn_shared, flags):
    return hipModuleOccupancyMaxActiveBlocksPerMultiprocessor(num_blocks, f, block_size, dyn_shared)


@export
def hipModuleOccupancyMaxPotentialBlockSize(grid_size, block_size, f, dyn_shared, limit):
    c.need(grid_size, block_size)
    g, b = c.check(H.hipOccupancyMaxPotentialBlockSize(c.obj(f, Function), int(dyn_shared), int(limit)))
    grid_size[0], block_size[0] = int(g), int(b)


@export
def hipModuleOccupancyMaxPotentialBlockSizeWithFlags(grid_size, block_size, f, dyn_shared, limit, flags):
    return hipModuleOccupancyMaxPotentialBlockSize(grid_size, block_size, f, dyn_shared, limit)


# -- function configuration ------------------------------------------------------------------------------
@export
def hipFuncSetAttribute(func, attr, value):
    f = kernel_of(func)
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


@export
def hipFuncSetCacheConfig(func, config):
    kernel_of(func)
    if not 0 <= int(config) <= 3:
        raise invalid(f"cache config {int(config)}")


@export
def hipFuncSetSharedMemConfig(func, config):
    kernel_of(func)
    if not 0 <= int(config) <= 2:
        raise invalid(f"shared memory config {int(config)}")


@export_raw("hipKernelNameRef")
def kernel_name_ref(f):
    try:
        return c.cstring(c.obj(f, Function).kernel.name)
    except Exception:  # noqa: BLE001
        return c.ffi.NULL


@export_raw("hipKernelNameRefByPtr")
def kernel_name_ref_by_ptr(host_fn, stream):
    try:
        return c.cstring(c.rt.registry.kernel(c.addr(host_fn), c.rt.device()).kernel.name)
    except Exception:  # noqa: BLE001
        return c.ffi.NULL
