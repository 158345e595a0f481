"""Triton on pyhip: ``pyhip.triton.activate()`` makes Triton's AMD backend the active driver with pyhip's
emulated device underneath — Triton's JIT, compiler and C launcher, no GPU and no torch.

    import pyhip.triton
    pyhip.triton.activate("gfx90a")
    x = pyhip.to_device(np.arange(1000, dtype=np.float32))
    add_kernel[(grid,)](x, y, out, n, BLOCK=256)

See docs/triton.md (what is patched, numbers)."""
from __future__ import annotations

import contextlib
import os

from ..errors import HipError, hipError_t
from .args import TritonPointer, tensor

__all__ = ["activate", "deactivate", "stream", "tensor", "TritonPointer", "device_index"]


def _triton():
    try:
        import triton
        from triton.backends.amd import driver  # noqa: F401
    except ImportError as exc:
        raise ImportError(f"pyhip.triton needs Triton with its AMD backend (pip install triton): {exc}") from exc
    return triton


def device_index(device: str | int) -> int:
    """The index of the first emulated device whose processor is ``device`` (``"gfx1100"``; an int is an
    index).  If pyhip has not made its devices yet and PYHIP_DEVICES is unset, the device list becomes
    ``device`` alone."""
    from ..runtime import context

    if isinstance(device, int):
        context.runtime().device(device)
        return device
    if context._runtime is None and "PYHIP_DEVICES" not in os.environ:
        os.environ["PYHIP_DEVICES"] = device
    devices = context.runtime().devices
    for d in devices:
        if d.isa.processor == device or str(d.isa) == device:
            return d.index
    raise HipError(hipError_t.hipErrorInvalidDevice,
                   f"no emulated {device} (devices: {', '.join(d.isa.processor for d in devices)}; "
                   "list it in PYHIP_DEVICES before pyhip first runs)")


def activate(device: str | int = "gfx90a"):
    """Make Triton's AMD driver, on pyhip, Triton's active driver, with ``device`` (an emulated device's
    processor name or index) current.  Returns the driver."""
    triton = _triton()
    from triton import knobs

    from ..capi.abi6 import library
    from . import driver as drv

    index = device_index(device)
    if not isinstance(triton.runtime.driver._active, drv.PyhipDriver):
        _previous.append(triton.runtime.driver._active)
    include = os.path.join(os.path.dirname(triton.backends.amd.driver.__file__), "include")
    knobs.amd.libhip_path = str(library(include))      # Triton's launcher dlopens pyhip's libamdhip64
    return drv.install(index)


_previous: list = []      # Triton's active driver before activate() (None: not chosen yet)


def deactivate() -> None:
    """Give Triton back the driver it had before activate() (none chosen: its own choice on next use)."""
    triton = _triton()
    if _previous:
        triton.runtime.driver.set_active(_previous.pop())


@contextlib.contextmanager
def stream(s):
    """Launch Triton kernels of this thread on the pyhip ``Stream`` ``s`` (None: the null stream)."""
    from . import driver as drv

    prev = drv.current_stream()
    drv._tls.stream = s
    try:
        yield s
    finally:
        drv._tls.stream = prev
