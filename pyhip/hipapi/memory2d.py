"""Pitched memory: allocation, 2-D copies, 2-D and 3-D fills (clr's hip_memory.cpp: errors for null pointers, pitches below
the width, invalid kinds; zero-sized regions are no-ops). Pointers are what runtime/copies.py locates (an address,
a DevicePointer, a host buffer); a stream as the runtime takes it (None, hipStreamPerThread or a Stream)."""
from __future__ import annotations

from ..errors import HipError, hipError_t
from ..runtime import copies, ops
from ..runtime.context import runtime
from ..runtime.memory import DevicePointer, as_address
from . import invalid


def malloc_pitch(width, height, depth=1) -> tuple[DevicePointer, int]:
    """hipMallocPitch / hipMalloc3D: rows padded to the device's texture pitch alignment; (NULL, 0) for an empty
    extent. The runtime remembers the allocation's geometry (hipMemset2D bounds its rows by it)."""
    width, height, depth = int(width), int(height), int(depth)
    if width == 0 or height == 0 or depth == 0:
        return DevicePointer(0), 0
    rt = runtime()
    align = rt.device().props.texturePitchAlignment
    pitch = -(-width // align) * align
    p = ops.malloc(pitch * height * depth)
    rt.pitched.record(int(p), pitch, width, height, depth)
    return p, pitch


def _is_null(p) -> bool:
    return as_address(p) == 0                        # (a host buffer has no address here: None)


def copy2d(dst, dpitch, src, spitch, width, height, kind, stream, sync) -> None:
    """hipMemcpy2D / hipMemcpy2DAsync: ``height`` rows of ``width`` bytes, each side's rows a pitch apart."""
    if not 0 <= int(kind) <= 4:
        raise HipError(hipError_t.hipErrorInvalidMemcpyDirection, f"invalid hipMemcpyKind {int(kind)}")
    dpitch, spitch, width, height = int(dpitch), int(spitch), int(width), int(height)
    for buf, pitch in ((src, spitch), (dst, dpitch)):
        if _is_null(buf):
            raise invalid("null pointer")
        if pitch == 0 or pitch < width:
            raise HipError(hipError_t.hipErrorInvalidPitchValue, f"pitch {pitch} < width {width}")
    copies.copy3d(dst, dpitch, dpitch * height, src, spitch, spitch * height, width, height, 1, stream, sync,
                  int(kind))


def fill2d(dst, pitch, value, width, height, stream, sync) -> None:
    """hipMemset2D / hipMemset2DAsync; a pitched allocation (hipMallocPitch) bounds the rows filled."""
    pitch, width, height = int(pitch), int(width), int(height)
    if width == 0 or height == 0:
        return
    if _is_null(dst):
        raise invalid("null pointer")
    a = as_address(dst)
    meta = runtime().pitched.geometry(a) if a else None
    if meta is not None and pitch == meta[0] and height > meta[2]:
        raise invalid(f"height {height} exceeds the allocation's {meta[2]} rows")
    ysize = meta[2] if meta is not None else height
    copies.fill3d(dst, pitch, pitch * ysize, value, width, height, 1, 1, stream, sync)


def fill3d(ptr, pitch, ysize, value, extent, stream, sync) -> None:
    """hipMemset3D / hipMemset3DAsync: a hipPitchedPtr's (ptr, pitch, ysize) and a (width, height, depth)
    extent; slices are pitch × ysize bytes apart (ysize 0: the height)."""
    w, h, d = (int(x) for x in extent)
    if w == 0 or h == 0 or d == 0:
        return
    if _is_null(ptr):
        raise invalid("null pointer")
    pitch = int(pitch)
    if pitch == 0 or w > pitch:
        raise invalid("pitch below the width")
    ysize = int(ysize) or h
    if h > ysize:
        raise invalid("height exceeds the pitched pointer's ysize")
    copies.fill3d(ptr, pitch, pitch * ysize, value, w, h, d, 1, stream, sync)
