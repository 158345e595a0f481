"""The C ABI's launches of a kernel by its host function beyond hipLaunchKernel (registration.py):
cooperative (single and multi-device), hipExtLaunchKernel (events around a <<<>>> launch),
hipExtLaunchMultiKernelMultiDevice."""
from __future__ import annotations

from ..errors import HipError, hipError_t
from ..hipapi import launch as api
from ..runtime.cooperative import multi_grid_sync_data
from ..runtime.event import Event
from .common import c, export, invalid


COOP_NO_PRE_SYNC, COOP_NO_POST_SYNC = 0x2, 0x1


def host_launch(handle, grid, block, args, shared, stream, cooperative=False, multi=None):
    st = c.stream(stream)
    if handle == c.ffi.NULL:
        raise HipError(hipError_t.hipErrorInvalidDeviceFunction, "null function")
    f = c.rt.registry.kernel(c.addr(handle), st.device)
    api.launch(f, st, (grid.x, grid.y, grid.z), (block.x, block.y, block.z), shared,
               raw=f.packer.gather(c.addr(args)), cooperative=cooperative, multi=multi)


@export
def hipLaunchCooperativeKernel(f, grid, block, args, shared, stream):
    host_launch(f, grid, block, args, shared, stream, cooperative=True)


@export
def hipLaunchCooperativeKernel_spt(f, grid, block, args, shared, stream):
    host_launch(f, grid, block, args, shared, stream if c.addr(stream) else c.ffi.cast("void*", 2), cooperative=True)


def multi_device(params, n, flags, cooperative):
    c.need(params)
    n = int(n)
    if n <= 0 or n > len(c.rt.devices):
        raise invalid(f"{n} devices")
    if int(flags) & ~(COOP_NO_PRE_SYNC | COOP_NO_POST_SYNC):
        raise invalid(f"flags {int(flags)}")
    launches, seen = [], set()
    total = 0
    for i in range(n):
        p = params[i]
        if p.stream == c.ffi.NULL:
            raise HipError(hipError_t.hipErrorInvalidResourceHandle, "each launch needs its own stream")
        st = c.stream(p.stream)
        if st.device.index in seen:
            raise HipError(hipError_t.hipErrorInvalidDevice, "two launches on one device")
        seen.add(st.device.index)
        b = p.blockDim.x * p.blockDim.y * p.blockDim.z
        if b == 0:
            raise HipError(hipError_t.hipErrorInvalidConfiguration, "empty block")
        total += p.gridDim.x * p.gridDim.y * p.gridDim.z * b
        launches.append((p, st))
    if not int(flags) & COOP_NO_PRE_SYNC:
        for _, st in launches:
            st.synchronize()
    mgs, keep = multi_grid_sync_data(c.rt.devices) if cooperative else (0, None)
    c.keep[("mgs", mgs)] = keep
    prev = 0
    for i, (p, st) in enumerate(launches):
        multi = dict(grid_id=i, num_grids=n, prev_sum=prev, all_sum=total, mgs=mgs) if cooperative else None
        host_launch(p.func, p.gridDim, p.blockDim, p.args, p.sharedMem, p.stream, cooperative, multi)
        prev += p.gridDim.x * p.gridDim.y * p.gridDim.z * p.blockDim.x * p.blockDim.y * p.blockDim.z
    if not int(flags) & COOP_NO_POST_SYNC:
        for _, st in launches:
            st.synchronize()


@export
def hipLaunchCooperativeKernelMultiDevice(params, n, flags):
    multi_device(params, n, flags, True)


@export
def hipExtLaunchMultiKernelMultiDevice(params, n, flags):
    multi_device(params, n, flags | COOP_NO_PRE_SYNC | COOP_NO_POST_SYNC, False)


@export
def hipExtLaunchKernel(f, grid, block, args, shared, stream, start, stop, flags):
    st = c.stream(stream)
    events = [c.obj(e, Event) if e != c.ffi.NULL else None for e in (start, stop)]
    if events[0] is not None:
        events[0].record(st)
    host_launch(f, grid, block, args, shared, stream)
    if events[1] is not None:
        events[1].record(st)
