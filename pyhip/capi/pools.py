"""The C ABI's stream-ordered allocation and memory pools (runtime/pools.py).  Exporting pools or pointers
to other processes is not supported (those exports stay hipErrorNotSupported stubs)."""
from __future__ import annotations

import struct

from ..errors import HipError, hipError_t
from ..hipapi import memory as api
from ..runtime import pools
from .common import c, export, invalid


LOCATION_DEVICE = 1


def pool_of(handle):
    p = c.obj(handle, pools.MemPool, hipError_t.hipErrorInvalidValue)
    if p.destroyed:
        raise invalid("the pool was destroyed")
    return p


def handle_of(p):
    c.objects[id(p)] = p
    return c.ffi.cast("void*", id(p))


@export
def hipMallocAsync(ptr, size, stream):
    c.need(ptr)
    ptr[0] = c.ffi.cast("void*", int(api.malloc_async(size, c.stream_of(stream))))


@export
def hipMallocFromPoolAsync(ptr, size, pool, stream):
    c.need(ptr)
    if int(size) == 0:
        raise invalid("size 0")
    ptr[0] = c.ffi.cast("void*", pool_of(pool).malloc(size, c.stream_of(stream)))


@export
def hipFreeAsync(ptr, stream):
    api.free_async(c.addr(ptr), c.stream_of(stream))


@export
def hipMemPoolCreate(out, props):
    if out == c.ffi.NULL or props == c.ffi.NULL:
        raise invalid("null pointer")
    if props.allocType != 1 or props.location.type != LOCATION_DEVICE:   # pinned, on a device
        raise invalid("pools hold pinned device memory")
    if props.handleTypes & ~0x1:
        raise invalid("handle types")
    dev = c.rt.device(int(props.location.id)) if 0 <= int(props.location.id) < len(c.rt.devices) else None
    if dev is None:
        raise invalid(f"device {int(props.location.id)}")
    out[0] = handle_of(pools.MemPool(dev))


@export
def hipMemPoolDestroy(pool):
    p = pool_of(pool)
    p.destroy()
    for d, cur in list(c.rt.current_pools.items()):
        if cur is p:
            del c.rt.current_pools[d]
    c.objects.pop(c.addr(pool), None)


@export
def hipDeviceGetDefaultMemPool(out, d):
    c.need(out)
    if not 0 <= int(d) < len(c.rt.devices):
        raise HipError(hipError_t.hipErrorInvalidDevice, f"device {int(d)}")
    out[0] = handle_of(pools.default_pool(c.rt.devices[int(d)]))


@export
def hipDeviceGetMemPool(out, d):
    c.need(out)
    if not 0 <= int(d) < len(c.rt.devices):
        raise HipError(hipError_t.hipErrorInvalidDevice, f"device {int(d)}")
    out[0] = handle_of(pools.current_pool(c.rt.devices[int(d)]))


@export
def hipDeviceSetMemPool(d, pool):
    if not 0 <= int(d) < len(c.rt.devices):
        raise HipError(hipError_t.hipErrorInvalidDevice, f"device {int(d)}")
    p = pool_of(pool)
    if p.device.index != int(d):
        raise invalid("the pool belongs to another device")
    c.rt.current_pools[int(d)] = p


@export
def hipMemPoolGetAttribute(pool, attr, value):
    c.need(value)
    p = pool_of(pool)
    v = p.get(int(attr))
    size = 8 if int(attr) >= pools.RELEASE_THRESHOLD else 4
    c.ffi.memmove(value, struct.pack("<Q" if size == 8 else "<i", v), size)


@export
def hipMemPoolSetAttribute(pool, attr, value):
    c.need(value)
    p = pool_of(pool)
    size = 8 if int(attr) >= pools.RELEASE_THRESHOLD else 4
    raw = bytes(c.ffi.buffer(value, size))
    p.set(int(attr), struct.unpack("<Q" if size == 8 else "<i", raw)[0])


@export
def hipMemPoolTrimTo(pool, keep):
    pool_of(pool).trim(int(keep))


@export
def hipMemPoolSetAccess(pool, descs, count):
    p = pool_of(pool)
    if descs == c.ffi.NULL and int(count):
        raise invalid("null descriptors")
    for i in range(int(count)):
        d = descs[i]
        if d.location.type != LOCATION_DEVICE or not 0 <= int(d.location.id) < len(c.rt.devices):
            raise invalid("location")
        if int(d.flags) not in (pools.ACCESS_NONE, pools.ACCESS_READ, pools.ACCESS_READWRITE):
            raise invalid("access flags")
        if int(d.location.id) == p.device.index and int(d.flags) != pools.ACCESS_READWRITE:
            raise invalid("the owning device keeps read-write access")
        p.access[int(d.location.id)] = int(d.flags)


@export
def hipMemPoolGetAccess(flags, pool, location):
    if flags == c.ffi.NULL or location == c.ffi.NULL:
        raise invalid("null pointer")
    p = pool_of(pool)
    if location.type != LOCATION_DEVICE or not 0 <= int(location.id) < len(c.rt.devices):
        raise invalid("location")
    flags[0] = p.access.get(int(location.id), pools.ACCESS_NONE)
