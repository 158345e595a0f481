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
from .api import (DeviceArray, Event, Kernel, Module, Stream, device_count, empty, get_device, load,
                  set_device, synchronize, to_device)
from .errors import HipError, LoaderError, hipError_t

__version__ = "0.1.0"
__all__ = ["DeviceArray", "Event", "HipError", "Kernel", "LoaderError", "Module", "Stream", "device_count",
           "empty", "get_device", "hipError_t", "load", "loader", "set_device", "synchronize", "to_device",
           "__version__"]
