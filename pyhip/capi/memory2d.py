"""The C ABI's pitched and 3-D memory: hipMallocPitch / hipMemAllocPitch / hipMalloc3D, hipMemcpy2D /
hipMemcpyParam2D / hipMemcpy3D / hipDrvMemcpy3D (+Async, _spt), hipMemset2D / hipMemset3D (+Async, _spt),
the driver-style 1-D copies (hipMemcpyHtoD/DtoH/DtoD +Async), hipMemcpyWithStream and peer copies.
Validation follows AMD's runtime (clr hip_memory.cpp): errors for null pointers, pitches below the width,
invalid kinds; zero-sized regions are no-ops.  Arrays (hipArray) and hipMemcpy3D (which takes arrays or
pointers) belong to the texture code (capi/textures.py); driver-style descriptors with a hipArray side are
copied by it too (runtime/images.py)."""
from __future__ import annotations

from ..errors import HipError, hipError_t
from ..hipapi import memory2d as api
from ..runtime import copies, ops
from .common import c, export, invalid


MEMORY_HOST, MEMORY_DEVICE, MEMORY_ARRAY, MEMORY_UNIFIED = 0, 1, 2, 3      # hipMemoryType (HIP 5.2)


def check_kind(kind):
    if not 0 <= int(kind) <= 4:
        raise HipError(hipError_t.hipErrorInvalidMemcpyDirection, f"invalid hipMemcpyKind {int(kind)}")


# -- pitched allocations -----------------------------------------------------------------------------
@export
def hipMallocPitch(ptr, pitch, width, height):
    c.need(ptr, pitch)
    p, pt = api.malloc_pitch(width, height, 1)
    ptr[0] = c.ffi.cast("void*", int(p))
    if int(p):
        pitch[0] = pt


@export
def hipMemAllocPitch(dptr, pitch, width, height, element_size):
    c.need(dptr, pitch)
    if int(element_size) not in (4, 8, 16):
        raise invalid("element size must be 4, 8 or 16")
    return hipMallocPitch(dptr, pitch, width, height)


@export
def hipMalloc3D(pitched, extent):
    c.need(pitched)
    p, pt = api.malloc_pitch(extent.width, extent.height, extent.depth)
    pitched.ptr = c.ffi.cast("void*", int(p))
    if int(p):
        pitched.pitch, pitched.xsize, pitched.ysize = pt, extent.width, extent.height


# -- 2-D and 3-D copies ------------------------------------------------------------------------------
def memcpy2d(dst, dpitch, src, spitch, width, height, kind, stream, sync):
    api.copy2d(c.addr(dst), dpitch, c.addr(src), spitch, width, height, kind, c.stream_of(stream), sync)


@export
def hipMemcpy2D(dst, dpitch, src, spitch, width, height, kind):
    memcpy2d(dst, dpitch, src, spitch, width, height, kind, c.ffi.NULL, True)


@export
def hipMemcpy2D_spt(dst, dpitch, src, spitch, width, height, kind):
    memcpy2d(dst, dpitch, src, spitch, width, height, kind, c.ffi.cast("void*", 2), True)


@export
def hipMemcpy2DAsync(dst, dpitch, src, spitch, width, height, kind, stream):
    memcpy2d(dst, dpitch, src, spitch, width, height, kind, stream, False)


def side(mtype, host, device, array, x, y, z, pitch, height):
    """The base address of one side of a driver-style copy descriptor (hip_Memcpy2D / HIP_MEMCPY3D)."""
    if int(mtype) not in (MEMORY_HOST, MEMORY_DEVICE, MEMORY_UNIFIED):
        raise invalid(f"memory type {int(mtype)}")
    base = c.addr(host) if int(mtype) == MEMORY_HOST else c.addr(device)
    if base == 0:
        raise invalid("null pointer in the copy descriptor")
    return base + int(x) + int(y) * int(pitch) + int(z) * int(pitch) * int(height)


def endpoint(mtype, host, device, array, x, y, z, pitch, height):
    """One side of a driver-style copy that involves a hipArray, as the texture code's copies take it."""
    from ..hip.textures import array_of
    from ..runtime.images import Endpoint

    if int(mtype) == MEMORY_ARRAY:
        if array == c.ffi.NULL:
            raise invalid("null array in the copy descriptor")
        return Endpoint(array=array_of(c.addr(array)), x=int(x), y=int(y), z=int(z))
    if int(mtype) not in (MEMORY_HOST, MEMORY_DEVICE, MEMORY_UNIFIED):
        raise invalid(f"memory type {int(mtype)}")
    base = c.addr(host) if int(mtype) == MEMORY_HOST else c.addr(device)
    if base == 0:
        raise invalid("null pointer in the copy descriptor")
    return Endpoint(addr=base, pitch=int(pitch), height=int(height), x=int(x), y=int(y), z=int(z))


def array_copy(p, w, h, d, sp, sh, dp, dh, z, stream, sync) -> bool:
    """Copies from or to a hipArray (hipMemoryTypeArray on either side) go through the array code."""
    if MEMORY_ARRAY not in (int(p.srcMemoryType), int(p.dstMemoryType)):
        return False
    from ..runtime.images import copy_3d

    src = endpoint(p.srcMemoryType, p.srcHost, p.srcDevice, p.srcArray, p.srcXInBytes, p.srcY,
                   p.srcZ if z else 0, sp, sh)
    dst = endpoint(p.dstMemoryType, p.dstHost, p.dstDevice, p.dstArray, p.dstXInBytes, p.dstY,
                   p.dstZ if z else 0, dp, dh)
    copy_3d(c.rt, dst, src, w, h, d, c.stream_of(stream), sync)
    return True


def param3d(p, stream, sync):
    c.need(p)
    w, h, d = int(p.WidthInBytes), int(p.Height), int(p.Depth)
    if w == 0 or h == 0 or d == 0:
        return
    sh, dh = int(p.srcHeight) or h, int(p.dstHeight) or h
    sp, dp = int(p.srcPitch) or w, int(p.dstPitch) or w
    if array_copy(p, w, h, d, sp, sh, dp, dh, True, stream, sync):
        return
    src = side(p.srcMemoryType, p.srcHost, p.srcDevice, p.srcArray, p.srcXInBytes, p.srcY, p.srcZ, sp, sh)
    dst = side(p.dstMemoryType, p.dstHost, p.dstDevice, p.dstArray, p.dstXInBytes, p.dstY, p.dstZ, dp, dh)
    copies.copy3d(dst, dp, dp * dh, src, sp, sp * sh, w, h, d, c.stream_of(stream), sync)


def param2d(p, stream, sync):
    c.need(p)
    w, h = int(p.WidthInBytes), int(p.Height)
    if w == 0 or h == 0:
        return
    sp, dp = int(p.srcPitch) or w, int(p.dstPitch) or w
    if array_copy(p, w, h, 1, sp, h, dp, h, False, stream, sync):
        return
    src = side(p.srcMemoryType, p.srcHost, p.srcDevice, p.srcArray, p.srcXInBytes, p.srcY, 0, sp, h)
    dst = side(p.dstMemoryType, p.dstHost, p.dstDevice, p.dstArray, p.dstXInBytes, p.dstY, 0, dp, h)
    if h > 1 and (w > sp or w > dp):
        raise HipError(hipError_t.hipErrorInvalidPitchValue, "width exceeds a pitch")
    copies.copy3d(dst, dp, dp * h, src, sp, sp * h, w, h, 1, c.stream_of(stream), sync)


@export
def hipMemcpyParam2D(p):
    param2d(p, c.ffi.NULL, True)


@export
def hipMemcpyParam2DAsync(p, stream):
    param2d(p, stream, False)


@export
def hipDrvMemcpy2DUnaligned(p):
    param2d(p, c.ffi.NULL, True)


@export
def hipDrvMemcpy3D(p):
    param3d(p, c.ffi.NULL, True)


@export
def hipDrvMemcpy3DAsync(p, stream):
    param3d(p, stream, False)


# -- 2-D and 3-D fills -------------------------------------------------------------------------------------
def memset2d(ptr, pitch, value, width, height, stream, sync):
    api.fill2d(c.addr(ptr), pitch, value, width, height, c.stream_of(stream), sync)


@export
def hipMemset2D(dst, pitch, value, width, height):
    memset2d(dst, pitch, value, width, height, c.ffi.NULL, True)


@export
def hipMemset2D_spt(dst, pitch, value, width, height):
    memset2d(dst, pitch, value, width, height, c.ffi.cast("void*", 2), True)


@export
def hipMemset2DAsync(dst, pitch, value, width, height, stream):
    memset2d(dst, pitch, value, width, height, stream, False)


def memset3d_pitched(pp, value, extent, stream, sync):
    api.fill3d(c.addr(pp.ptr), pp.pitch, pp.ysize, value, (extent.width, extent.height, extent.depth),
               c.stream_of(stream), sync)


@export
def hipMemset3D(pp, value, extent):
    memset3d_pitched(pp, value, extent, c.ffi.NULL, True)


@export
def hipMemset3D_spt(pp, value, extent):
    memset3d_pitched(pp, value, extent, c.ffi.cast("void*", 2), True)


@export
def hipMemset3DAsync(pp, value, extent, stream):
    memset3d_pitched(pp, value, extent, stream, False)


# -- driver-style and stream-explicit 1-D copies ---------------------------------------------------------------
def copy1d(dst, src, size, stream, sync, kind=4):
    if int(size) and (dst == c.ffi.NULL or src == c.ffi.NULL):
        raise invalid("null pointer")
    copies.copy(c.addr(dst), c.addr(src), size, c.stream_of(stream), sync, kind)


@export
def hipMemcpyHtoD(dst, src, size):
    copy1d(dst, src, size, c.ffi.NULL, True, 1)


@export
def hipMemcpyDtoH(dst, src, size):
    copy1d(dst, src, size, c.ffi.NULL, True, 2)


@export
def hipMemcpyDtoD(dst, src, size):
    copy1d(dst, src, size, c.ffi.NULL, True, 3)


@export
def hipMemcpyHtoDAsync(dst, src, size, stream):
    copy1d(dst, src, size, stream, False, 1)


@export
def hipMemcpyDtoHAsync(dst, src, size, stream):
    copy1d(dst, src, size, stream, False, 2)


@export
def hipMemcpyDtoDAsync(dst, src, size, stream):
    copy1d(dst, src, size, stream, False, 3)


@export
def hipMemcpyWithStream(dst, src, size, kind, stream):
    check_kind(kind)
    copy1d(dst, src, size, stream, True, kind)


@export
def hipMemcpy_spt(dst, src, size, kind):
    check_kind(kind)
    copy1d(dst, src, size, c.ffi.cast("void*", 2), True, kind)


@export
def hipMemcpyAsync_spt(dst, src, size, kind, stream):
    check_kind(kind)
    copy1d(dst, src, size, stream if c.addr(stream) else c.ffi.cast("void*", 2), False, kind)


@export
def hipMemset_spt(dst, value, size):
    ops.memset(c.addr(dst), value, size, 1, 2, sync=True)


def peer(dst, dst_dev, src, src_dev, size, stream, sync):
    for d in (dst_dev, src_dev):
        c.rt.device(int(d))
    copy1d(dst, src, size, stream, sync, 3)


@export
def hipMemcpyPeer(dst, dst_dev, src, src_dev, size):
    peer(dst, dst_dev, src, src_dev, size, c.ffi.NULL, True)


@export
def hipMemcpyPeerAsync(dst, dst_dev, src, src_dev, size, stream):
    peer(dst, dst_dev, src, src_dev, size, stream, False)
