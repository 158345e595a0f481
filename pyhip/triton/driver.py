"""Triton's AMD driver with pyhip underneath, without torch.

Triton's own HIPDriver is kept whole: its utilities (HIPUtils: the C launcher ``driver.c`` compiled against
the HIP headers Triton ships and dlopening ``libamdhip64``) and its launcher class.  What this subclass
replaces is what Triton takes from torch: the current device and stream, the device interface
``triton.testing.do_bench`` times with, the benchmark cache and the profile scratch allocation."""
from __future__ import annotations

import ctypes
import threading

import triton
from triton.backends.amd.driver import HIPDriver, HIPLauncher, HIPUtils
from triton.backends.driver import DriverBase

from ..api import DeviceArray, Event as _Event, Stream
from ..api import get_device
from ..errors import HipError, hipError_t
from ..runtime.context import runtime

_tls = threading.local()


def _shim() -> ctypes.CDLL:
    """pyhip's libamdhip64.so.5, loaded into this process: its embedded interpreter is this one, so the C
    calls Triton makes reach the runtime this process already uses."""
    global _lib
    if _lib is None:
        from ..capi.shim import load_in_process

        lib, code = load_in_process()
        if code != 0:
            raise HipError(hipError_t.hipErrorNoDevice, "pyhip's libamdhip64 reports no device")
        _lib = lib
    return _lib


_lib = None


def set_device(index: int) -> None:
    """hipSetDevice through the C library: the runtime's current device and the C launch path's agree."""
    code = _shim().hipSetDevice(int(index))
    if code != 0:
        raise HipError(code, f"hipSetDevice({index})")


def current_stream():
    """The stream Triton launches on in this thread: the one ``pyhip.triton.stream`` selected, else None
    (the current device's null stream)."""
    return getattr(_tls, "stream", None)


def stream_handle(device: int | None = None) -> int:
    """The hipStream_t of this thread's current stream for Triton's C launcher (0 = the null stream)."""
    s = current_stream()
    if s is None:
        return 0
    from ..capi import impl

    _shim()
    return impl.current.add_stream(s._stream)


class Event:
    """torch.cuda.Event's shape over a pyhip event, recorded on this thread's current stream."""

    def __init__(self, enable_timing: bool = True):
        self._event = _Event(timing=enable_timing)

    def record(self, stream=None):
        self._event.record(stream if stream is not None else current_stream())

    def synchronize(self):
        self._event.synchronize()

    def query(self) -> bool:
        return self._event.query()

    def elapsed_time(self, end: "Event") -> float:
        return self._event.elapsed_ms(end._event)


class DeviceInterface:
    """What Triton asks ``get_device_interface()`` for (do_bench, autotune), as torch.cuda offers it."""
    Event = Event
    Stream = Stream

    @staticmethod
    def synchronize(device=None):
        s = current_stream()
        if s is not None:
            s.synchronize()
        runtime().device(device).synchronize()

    @staticmethod
    def current_device() -> int:
        return get_device()

    @staticmethod
    def set_device(index: int) -> None:
        set_device(index)

    @staticmethod
    def device_count() -> int:
        return len(runtime().devices)

    @staticmethod
    def is_available() -> bool:
        return True

    @staticmethod
    def current_stream(device=None):
        return current_stream()


class PyhipDriver(HIPDriver):
    """HIPDriver on pyhip: current device/stream from pyhip; libamdhip64 is pyhip's (pyhip.triton.activate
    points Triton's library search at it before this driver's HIPUtils compiles the launcher)."""

    def __init__(self):
        DriverBase.__init__(self)            # not GPUDriver.__init__: it takes these four from torch
        self.get_current_device = get_device
        self.set_current_device = set_device
        self.get_current_stream = stream_handle
        self.get_device_capability = self._capability
        self.utils = HIPUtils()
        self.launcher_cls = HIPLauncher
        self._profile_scratch = []

    @staticmethod
    def is_active():
        return True

    @staticmethod
    def _capability(device=None):
        p = runtime().device(device).props
        return (p.major, p.minor)

    def get_device_interface(self):
        return DeviceInterface

    def get_active_torch_device(self):
        raise RuntimeError("pyhip.triton runs without torch: there is no torch device")

    def get_empty_cache_for_benchmark(self):
        # the emulated device has no cache that one kernel could warm for the next, so there is nothing to
        # flush between timed runs (a GPU's 256 MiB flush buffer would only add a memset to every run)
        return None

    def clear_cache(self, cache):
        pass

    def allocate_default_profile_scratch(self, size: int, alignment: int, stream):
        # kept for the driver's lifetime: a launch reads it asynchronously (torch's allocator would keep it
        # until the stream is done); only kernels built with profiling (proton) ask for it
        buf = DeviceArray.empty((size,), "uint8")
        buf.fill_bytes(0)
        self._profile_scratch.append(buf)
        return buf


def install(device_index: int) -> PyhipDriver:
    set_device(device_index)
    drv = PyhipDriver()
    triton.runtime.driver.set_active(drv)
    return drv
