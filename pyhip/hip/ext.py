"""``pyhip.hip.ext``: HIP 5.2 functions pyhip implements that hip-python's API does not have, kept out of
``pyhip.hip`` so that its namespace is hip-python's (tests/runtime/test_hippython_signatures.py).  They follow
the same conventions: no defaults, ``(err, value…)`` tuples, hip-python's struct and handle types.

- ``hipCreateSurfaceObject(pResDesc)`` / ``hipDestroySurfaceObject(surfaceObject)``: HIP 5.2 declares them
  with C++ linkage (``_Z22hipCreateSurfaceObjectPP13__hip_surfacePK15hipResourceDesc``), so hip-python 5.4.3
  wraps neither — only the handle type ``hipSurfaceObject_t`` (``__hip_surface``)."""
from __future__ import annotations

from ..runtime import images as I, textures as T
from ..runtime.context import runtime
from ._api import hip_api
from .texture_types import __hip_surface, c_struct
from .textures import copy_struct, handle_address, resource_of


def create_surface_object(res) -> int:
    """A surface object over the resource a hipResourceDesc (ctypes view) names; its device address."""
    dev = runtime().device()
    I.require_images(dev)
    o = T.create_surface(dev, resource_of(res))
    o.api = (copy_struct(res),)
    return o.addr


@hip_api(1)
def hipCreateSurfaceObject(pResDesc):
    return __hip_surface(create_surface_object(c_struct("hipResourceDesc", pResDesc)))


@hip_api()
def hipDestroySurfaceObject(surfaceObject):
    T.destroy(handle_address(surfaceObject), "surface")


__all__ = ["hipCreateSurfaceObject", "hipDestroySurfaceObject"]
