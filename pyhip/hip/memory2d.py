"""``pyhip.hip``: pitched and 3-D memory — hipMallocPitch, hipMalloc3D, 2-D copies, 2-D and 3-D fills.

Parameter names and return tuples follow hip-python (its generated API table); struct parameters are read and
filled through their fields (hip-python's struct objects, or anything with the same attributes:
``hipPitchedPtr.ptr/pitch/xsize/ysize``, ``hipExtent.width/height/depth``).  The rules are pyhip/hipapi/memory2d.py's,
shared with the C ABI.
"""
from __future__ import annotations

from ..hipapi import memory2d as api
from ._api import hip_api

# -- pitched and 3-D memory ------------------------------------------------------------------------------
@hip_api(2)
def hipMallocPitch(width, height):
    return api.malloc_pitch(width, height, 1)


@hip_api()
def hipMalloc3D(pitchedDevPtr, extent):
    p, pitch = api.malloc_pitch(extent.width, extent.height, extent.depth)
    pitchedDevPtr.ptr = p
    if int(p):
        pitchedDevPtr.pitch, pitchedDevPtr.xsize, pitchedDevPtr.ysize = pitch, extent.width, extent.height


@hip_api()
def hipMemcpy2D(dst, dpitch, src, spitch, width, height, kind):
    api.copy2d(dst, dpitch, src, spitch, width, height, kind, None, True)


@hip_api()
def hipMemcpy2DAsync(dst, dpitch, src, spitch, width, height, kind, stream):
    api.copy2d(dst, dpitch, src, spitch, width, height, kind, stream, False)


@hip_api()
def hipMemset2D(dst, pitch, value, width, height):
    api.fill2d(dst, pitch, value, width, height, None, True)


@hip_api()
def hipMemset2DAsync(dst, pitch, value, width, height, stream):
    api.fill2d(dst, pitch, value, width, height, stream, False)


def _fill3d(pp, value, extent, stream, sync):
    api.fill3d(pp.ptr, pp.pitch, pp.ysize, value, (extent.width, extent.height, extent.depth), stream, sync)


@hip_api()
def hipMemset3D(pitchedDevPtr, value, extent):
    _fill3d(pitchedDevPtr, value, extent, None, True)


@hip_api()
def hipMemset3DAsync(pitchedDevPtr, value, extent, stream):
    _fill3d(pitchedDevPtr, value, extent, stream, False)


__all__ = [n for n in dir() if n.startswith("hip")]
