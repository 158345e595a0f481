"""pyhip: a HIP-compatible runtime in Python with an emulated AMD GPU.

Pythonic API::

    import pyhip, numpy as np
    mod = pyhip.load("kernels.hsaco")            # code object, bundle or host ELF
    scale = mod.kernel("scale<float>")           # mangled, extern "C" or readable name
    x = pyhip.to_device(np.arange(1000, dtype=np.float32))
    scale(4, 256, x, 2.0, 1000)                  # grid, block, *args
    print(x.get())

HIP's own API and hiprtc, in AMD hip-python's conventions: ``from pyhip import hip, hiprtc`` (docs/hip-python.md).
"""
from . import loader
from .api import (DeviceArray, Event, Kernel, Module, Stream, device_count, empty, engine_stats, get_device,
                  load, set_device, synchronize, to_device)
from .errors import HipError, LoaderError, hipError_t

__version__ = "0.1.0"
__all__ = ["DeviceArray", "Event", "HipError", "Kernel", "LoaderError", "Module", "Stream", "check", "device_count",
           "empty", "engine_stats", "get_device", "hipError_t", "load", "loader", "set_device", "synchronize", "to_device",
           "__version__"]

# hip-python's package-level names (``from hip import ROCM_VERSION_TUPLE``): HIP 5.2's versions, read from pyhip.hip on
# first use (pyhip/hip_package.py lists them)
_HIP_PACKAGE_NAMES = ("ROCM_VERSION", "ROCM_VERSION_NAME", "ROCM_VERSION_TUPLE", "HIP_VERSION", "HIP_VERSION_NAME",
                      "HIP_VERSION_TUPLE", "rocm_version_name", "rocm_version_tuple", "hip_version_name",
                      "hip_version_tuple")


def __getattr__(name):
    if name in _HIP_PACKAGE_NAMES:
        from . import hip
        return getattr(hip, name)
    raise AttributeError(f"module 'pyhip' has no attribute {name!r}")


def check(checks="all", log=None, echo=True):
    """``with pyhip.check("memcheck") as session:`` — pyhip's sanitizer on inside the block (docs/check.md)."""
    from .sanitizer import check as session
    return session(checks, log, echo)


def _checks_from_environment():
    import os
    if os.environ.get("PYHIP_CHECK"):
        from .sanitizer import from_environment
        from_environment()


_checks_from_environment()
