"""``pyhip.hip``: pitched and 3-D memory — hipMallocPitch, hipMalloc3D, 2-D copies, 2-D and 3-D fills.

Parameter names and return tuples follow hip-python (its generated API table); struct parameters are read and
filled through their fields (hip-python's struct objects, or anything with the same attributes:
``hipPitchedPtr.ptr/pitch/xsize/ysize``, ``hipExtent.width/height/depth``).  The work is runtime/copies.py's,
shared with the C ABI.
"""
from __future__ import annotations

from .._hip_enums import hipError_t
from ..errors import HipError
from ..runtime import copies, ops
from ..runtime.context import runtime
from ..runtime.memory import DevicePointer
from ._api import hip_api, invalid

# -- pitched and 3-D memory ------------------------------------------------------------------------------
def _malloc_pitch(width: int, height: int, depth: int):
    width, height, depth = int(width), int(height), int(depth)
    if width == 0 or height == 0 or depth == 0:
        return DevicePointer(0), 0
    rt = runtime()
    align = rt.device().props.texturePitchAlignment
    pitch = -(-width // align) * align
    p = ops.malloc(pitch * height * depth)
    rt.pitched[int(p)] = (pitch, width, height, depth)
    return p, pitch


@hip_api(2)
def hipMallocPitch(width, height):
    return _malloc_pitch(width, height, 1)


@hip_api()
def hipMalloc3D(pitchedDevPtr, extent):
    p, pitch = _malloc_pitch(extent.width, extent.height, extent.depth)
    pitchedDevPtr.ptr = p
    if int(p):
        pitchedDevPtr.pitch, pitchedDevPtr.xsize, pitchedDevPtr.ysize = pitch, extent.width, extent.height


def _copy2d(dst, dpitch, src, spitch, width, height, kind, stream, sync):
    if not 0 <= int(kind) <= 4:
        raise HipError(hipError_t.hipErrorInvalidMemcpyDirection, f"kind {int(kind)}")
    for pitch in (dpitch, spitch):
        if int(pitch) == 0 or int(pitch) < int(width):
            raise HipError(hipError_t.hipErrorInvalidPitchValue, f"pitch {int(pitch)} < width {int(width)}")
    h = int(height)
    copies.copy3d(dst, int(dpitch), int(dpitch) * h, src, int(spitch), int(spitch) * h, int(width), h, 1,
                  stream, sync, int(kind))


@hip_api()
def hipMemcpy2D(dst, dpitch, src, spitch, width, height, kind):
    _copy2d(dst, dpitch, src, spitch, width, height, kind, None, True)


@hip_api()
def hipMemcpy2DAsync(dst, dpitch, src, spitch, width, height, kind, stream):
    _copy2d(dst, dpitch, src, spitch, width, height, kind, stream, False)


def _fill2d(dst, pitch, value, width, height, depth, ysize, stream, sync):
    pitch, width, height = int(pitch), int(width), int(height)
    copies.fill3d(dst, pitch, pitch * (ysize or height), value, width, height, depth, 1, stream, sync)


@hip_api()
def hipMemset2D(dst, pitch, value, width, height):
    _fill2d(dst, pitch, value, width, height, 1, 0, None, True)


@hip_api()
def hipMemset2DAsync(dst, pitch, value, width, height, stream):
    _fill2d(dst, pitch, value, width, height, 1, 0, stream, False)


def _fill3d(pp, value, extent, stream, sync):
    w, h, d = int(extent.width), int(extent.height), int(extent.depth)
    if 0 in (w, h, d):
        return
    if w > int(pp.pitch):
        raise invalid("pitch below the width")
    _fill2d(pp.ptr, pp.pitch, value, w, h, d, int(pp.ysize), stream, sync)


@hip_api()
def hipMemset3D(pitchedDevPtr, value, extent):
    _fill3d(pitchedDevPtr, value, extent, None, True)


@hip_api()
def hipMemset3DAsync(pitchedDevPtr, value, extent, stream):
    _fill3d(pitchedDevPtr, value, extent, stream, False)


__all__ = [n for n in dir() if n.startswith("hip")]
