"""The C ABI's other launches: cooperative (single and multi-device), hipExtLaunchKernel (events around a
<<<>>> launch), hipExtLaunchMultiKernelMultiDevice, hipHccModuleLaunchKernel; the module occupancy
functions and their WithFlags forms; function attributes/cache/shared-memory configuration; kernel names."""
from __future__ import annotations

from ..errors import HipError, hipError_t
from .common import invalid

COOP_NO_PRE_SYNC, COOP_NO_POST_SYNC = 0x2, 0x1
# hipFuncAttribute
MAX_DYNAMIC_SHARED, PREFERRED_CARVEOUT = 8, 9


def install(c) -> None:
    ffi, rt = c.ffi, c.rt
    from .. import hip as H
    from ..runtime.cooperative import multi_grid_sync_data
    from ..runtime.module import Function
    from ..runtime.stream import Event

    addr = c.addr

    def host_launch(handle, grid, block, args, shared, stream, cooperative=False, multi=None):
        st = c.stream(stream)
        if handle == ffi.NULL:
            raise HipError(hipError_t.hipErrorInvalidDeviceFunction, "null function")
        f = rt.function_for_handle(addr(handle), st.device)
        g, b = (grid.x, grid.y, grid.z), (block.x, block.y, block.z)
        if any(int(g_) * int(b_) > 0xFFFFFFFF for g_, b_ in zip(g, b)) or b[0] * b[1] * b[2] > \
                st.device.props.maxThreadsPerBlock:
            raise HipError(hipError_t.hipErrorInvalidConfiguration, f"grid {g} block {b}")
        f.launch(st, g, b, int(shared), raw=f.packer.gather(addr(args)), cooperative=cooperative, multi=multi)

    @c.export
    def hipLaunchCooperativeKernel(f, grid, block, args, shared, stream):
        host_launch(f, grid, block, args, shared, stream, cooperative=True)

    @c.export
    def hipLaunchCooperativeKernel_spt(f, grid, block, args, shared, stream):
        host_launch(f, grid, block, args, shared, stream if addr(stream) else ffi.cast("void*", 2), cooperative=True)

    def multi_device(params, n, flags, cooperative):
        c.need(params)
        n = int(n)
        if n <= 0 or n > len(rt.devices):
            raise invalid(f"{n} devices")
        if int(flags) & ~(COOP_NO_PRE_SYNC | COOP_NO_POST_SYNC):
            raise invalid(f"flags {int(flags)}")
        launches, seen = [], set()
        total = 0
        for i in range(n):
            p = params[i]
            if p.stream == ffi.NULL:
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
        mgs, keep = multi_grid_sync_data(rt.devices) if cooperative else (0, None)
        c.keep[("mgs", mgs)] = keep
        prev = 0
        for i, (p, st) in enumerate(launches):
            multi = dict(grid_id=i, num_grids=n, prev_sum=prev, all_sum=total, mgs=mgs) if cooperative else None
            host_launch(p.func, p.gridDim, p.blockDim, p.args, p.sharedMem, p.stream, cooperative, multi)
            prev += p.gridDim.x * p.gridDim.y * p.gridDim.z * p.blockDim.x * p.blockDim.y * p.blockDim.z
        if not int(flags) & COOP_NO_POST_SYNC:
            for _, st in launches:
                st.synchronize()

    @c.export
    def hipLaunchCooperativeKernelMultiDevice(params, n, flags):
        multi_device(params, n, flags, True)

    @c.export
    def hipExtLaunchMultiKernelMultiDevice(params, n, flags):
        multi_device(params, n, flags | COOP_NO_PRE_SYNC | COOP_NO_POST_SYNC, False)

    @c.export
    def hipExtLaunchKernel(f, grid, block, args, shared, stream, start, stop, flags):
        st = c.stream(stream)
        events = [c.obj(e, Event) if e != ffi.NULL else None for e in (start, stop)]
        if events[0] is not None:
            events[0].record(st)
        host_launch(f, grid, block, args, shared, stream)
        if events[1] is not None:
            events[1].record(st)

    @c.export
    def _Z24hipHccModuleLaunchKernelP18ihipModuleSymbol_tjjjjjjmP12ihipStream_tPPvS4_P11ihipEvent_tS6_(
            f, gx, gy, gz, lx, ly, lz, shared, stream, params, extra, start, stop):
        func = c.obj(f, Function)
        st = c.stream(stream)
        raw = c.module_args(func, params, extra)
        events = [c.obj(e, Event) if e != ffi.NULL else None for e in (start, stop)]
        if events[0] is not None:
            events[0].record(st)
        func.launch(st, None, (lx, ly, lz), int(shared), raw=raw, items=(gx, gy, gz))
        if events[1] is not None:
            events[1].record(st)

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
            return c.cstring(rt.function_for_handle(addr(host_fn)).kernel.name)
        except Exception:  # noqa: BLE001
            return ffi.NULL

    @c.export_raw("hipGetStreamDeviceId")
    def get_stream_device_id(stream):
        try:
            return c.stream(stream).device.index
        except Exception:  # noqa: BLE001
            return -1
