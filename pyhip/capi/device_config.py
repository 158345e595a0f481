"""The C ABI's device limits and configuration: hipDeviceGetLimit, cache and shared-memory configuration (device
and context forms), device flags, the stream priority range (clr's hip_device_runtime.cpp)."""
from __future__ import annotations

from ..hipapi import devices as api
from .common import c, export, invalid


SCHEDULE_MASK, MAP_HOST, LMEM_RESIZE = 0x7, 0x8, 0x16


@export
def hipDeviceGetLimit(out, limit):
    c.need(out)
    out[0] = api.limit(limit)


def config_get(out, value):
    c.need(out)
    out[0] = value


@export
def hipDeviceGetCacheConfig(out):
    config_get(out, api.cache_config())


@export
def hipDeviceSetCacheConfig(cfg):
    api.set_cache_config(cfg)


@export
def hipDeviceGetSharedMemConfig(out):
    config_get(out, 1)                       # hipSharedMemBankSizeFourByte, as ROCclr


@export
def hipDeviceSetSharedMemConfig(cfg):
    if not 0 <= int(cfg) <= 2:
        raise invalid(f"shared memory config {int(cfg)}")


@export
def hipCtxGetCacheConfig(out):
    return hipDeviceGetCacheConfig(out)


@export
def hipCtxSetCacheConfig(cfg):
    return hipDeviceSetCacheConfig(cfg)


@export
def hipCtxGetSharedMemConfig(out):
    return hipDeviceGetSharedMemConfig(out)


@export
def hipCtxSetSharedMemConfig(cfg):
    return hipDeviceSetSharedMemConfig(cfg)


@export
def hipGetDeviceFlags(out):
    config_get(out, c.rt.device().flags)


@export
def hipSetDeviceFlags(flags):
    flags = int(flags)
    sched = flags & SCHEDULE_MASK
    if sched not in (0, 1, 2, 4) or flags & ~(SCHEDULE_MASK | MAP_HOST | LMEM_RESIZE):
        raise invalid(f"device flags 0x{flags:x}")
    c.rt.device().flags = sched


@export
def hipDeviceGetStreamPriorityRange(least, greatest):
    low, high = api.stream_priority_range()
    if least != c.ffi.NULL:
        least[0] = low
    if greatest != c.ffi.NULL:
        greatest[0] = high

