"""The C ABI's device limits and configuration: hipDeviceGetLimit, cache and shared-memory configuration (device
and context forms), device flags, the stream priority range (clr's hip_device_runtime.cpp)."""
from __future__ import annotations

from ..hipapi import devices as api
from .common import invalid

SCHEDULE_MASK, MAP_HOST, LMEM_RESIZE = 0x7, 0x8, 0x16


def install(c) -> None:
    ffi, rt = c.ffi, c.rt

    @c.export
    def hipDeviceGetLimit(out, limit):
        c.need(out)
        out[0] = api.limit(limit)

    def config_get(out, value):
        c.need(out)
        out[0] = value

    @c.export
    def hipDeviceGetCacheConfig(out):
        config_get(out, api.cache_config())

    @c.export
    def hipDeviceSetCacheConfig(cfg):
        api.set_cache_config(cfg)

    @c.export
    def hipDeviceGetSharedMemConfig(out):
        config_get(out, 1)                       # hipSharedMemBankSizeFourByte, as ROCclr

    @c.export
    def hipDeviceSetSharedMemConfig(cfg):
        if not 0 <= int(cfg) <= 2:
            raise invalid(f"shared memory config {int(cfg)}")

    @c.export
    def hipCtxGetCacheConfig(out):
        return hipDeviceGetCacheConfig(out)

    @c.export
    def hipCtxSetCacheConfig(cfg):
        return hipDeviceSetCacheConfig(cfg)

    @c.export
    def hipCtxGetSharedMemConfig(out):
        return hipDeviceGetSharedMemConfig(out)

    @c.export
    def hipCtxSetSharedMemConfig(cfg):
        return hipDeviceSetSharedMemConfig(cfg)

    @c.export
    def hipGetDeviceFlags(out):
        config_get(out, rt.device().flags)

    @c.export
    def hipSetDeviceFlags(flags):
        flags = int(flags)
        sched = flags & SCHEDULE_MASK
        if sched not in (0, 1, 2, 4) or flags & ~(SCHEDULE_MASK | MAP_HOST | LMEM_RESIZE):
            raise invalid(f"device flags 0x{flags:x}")
        rt.device().flags = sched

    @c.export
    def hipDeviceGetStreamPriorityRange(least, greatest):
        low, high = api.stream_priority_range()
        if least != ffi.NULL:
            least[0] = low
        if greatest != ffi.NULL:
            greatest[0] = high

