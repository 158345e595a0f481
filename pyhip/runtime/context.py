"""The process-wide runtime: devices, the per-thread current device, the registry, streams by handle."""
from __future__ import annotations

import os
import threading

from ..errors import HipError, hipError_t
from ..loader.targetid import DeviceISA
from ..registry import Registry
from . import fastlaunch
from .advice import MemAdvice
from .device import Device
from .hostmem import HostAllocations
from .pitched import PitchedAllocations

DEFAULT_DEVICES = "gfx90a:sramecc+:xnack-"          # PYHIP_DEVICES=gfx90a,gfx942 (any list) for several
DEFAULT_MEMORY = 16 << 30          # virtual capacity per emulated device
hipStreamPerThread = 2


def device_isa(text: str) -> DeviceISA:
    """A device's ISA from PYHIP_DEVICES: features not given take the device default (sramecc on, xnack
    off, as MI210 / MI300X report), so every device of one processor has the same target ID."""
    from ..loader.targetid import PROCESSORS

    t = text.strip()
    proc, *feats = t.split(":")
    _, has_xnack, has_sramecc = PROCESSORS.get(proc, (None, False, False))
    if has_sramecc and not any(f.startswith("sramecc") for f in feats):
        t += ":sramecc+"
    if has_xnack and not any(f.startswith("xnack") for f in feats):
        t += ":xnack-"
    return DeviceISA.parse(t)


class Runtime:
    def __init__(self, device_spec: str | None = None, memory_size: int | None = None):
        from .hsa import choose
        self.backend_kind = "emu" if device_spec else choose()
        spec = device_spec or os.environ.get("PYHIP_DEVICES", DEFAULT_DEVICES)
        size = memory_size or int(os.environ.get("PYHIP_DEVICE_MEMORY", DEFAULT_MEMORY))
        self._spec = (spec, size)
        if self.backend_kind == "hsa":
            self.devices = self._hsa_devices()
        else:
            self.devices = self._emu_devices()
        self._tls = threading.local()
        self._lock = threading.RLock()
        self.host = HostAllocations(self)         # pinned/managed/registered host memory
        self.registry = Registry(make_module=_module_on, allocate_managed=self.host.managed)
        self.pitched = PitchedAllocations()       # hipMallocPitch/hipMalloc3D geometry by address (pitched.py)
        self.advice = MemAdvice()                 # hipMemAdvise hints by range start (advice.py)
        self.primary_active: set[int] = set()     # devices whose primary context was retained
        self.default_pools: dict[int, object] = {}  # memory pools (runtime/pools.py)
        self.current_pools: dict[int, object] = {}
        self.pool_of: dict[int, object] = {}        # hipMallocAsync address -> its pool

    def reinit_after_fork(self) -> None:
        """In a forked child: fresh devices (the parent's queues and their threads do not exist here), the
        registrations kept (hipcc programs register in constructors, before any fork), host memory that
        survived the fork mapped into the new devices; device allocations of the parent are gone."""
        self._tls = threading.local()
        self._lock = threading.RLock()
        self.registry.after_fork()
        self.devices = self._hsa_devices() if self.backend_kind == "hsa" else self._emu_devices()
        self.host.map_into(self.devices)
        for table in (self.pitched, self.advice, self.default_pools, self.current_pools, self.pool_of):
            table.clear()
        self.primary_active.clear()

    def _emu_devices(self) -> list[Device]:
        spec, size = self._spec
        return [Device(i, device_isa(t), size) for i, t in enumerate(spec.split(",")) if t.strip()]

    @staticmethod
    def _hsa_devices() -> list[Device]:
        """One device per GPU agent ROCr reports (PYHIP_BACKEND=hsa)."""
        from .hsa import thunk_library
        from .hsa.backend import HsaDeviceBackend, HsaSystem

        system = HsaSystem.get(thunk_library())
        if not system.gpus:
            from .hsa import no_gpu
            raise no_gpu("ROCr reports no GPU agent")
        return [Device(i, DeviceISA.parse(a.isa), a.vram_size, backend=HsaDeviceBackend(system, a))
                for i, a in enumerate(system.gpus)]

    # -- devices -----------------------------------------------------------------------------------
    def device(self, index: int | None = None) -> Device:
        if index is None:
            index = getattr(self._tls, "device", 0)
        if not isinstance(index, int) or not 0 <= index < len(self.devices):
            raise HipError(hipError_t.hipErrorInvalidDevice, f"device {index} does not exist "
                           f"({len(self.devices)} devices)")
        return self.devices[index]

    def set_device(self, index: int) -> None:
        self.device(index)
        self._tls.device = index

    def current_index(self) -> int:
        return getattr(self._tls, "device", 0)

    # -- streams -----------------------------------------------------------------------------------
    def resolve_stream(self, stream):
        """None/0 → the current device's null stream; hipStreamPerThread (2) → this thread's stream."""
        from .stream import Stream

        if stream is None or (isinstance(stream, int) and stream == 0):
            return self.device().null_stream
        if isinstance(stream, int) and stream == hipStreamPerThread:
            return self.per_thread_stream()
        s = getattr(stream, "_stream", stream)
        if not isinstance(s, Stream):
            raise HipError(hipError_t.hipErrorInvalidHandle, f"not a stream: {stream!r}")
        if s.destroyed:
            raise HipError(hipError_t.hipErrorContextIsDestroyed, "stream was destroyed")
        return s

    # -- hip-clang's registration scheme ---------------------------------------------------------------
    def launch_by_handle(self, handle: int, grid, block, args, shared: int = 0, stream=None):
        st = self.resolve_stream(stream)
        return self.registry.kernel(handle, st.device).launch(st, grid, block, shared, args=args)

    def load_module(self, source, device=None):
        """hipModuleLoad*: the code object (file, bytes, Binary) loaded on ``device`` (the current one), its
        ``__managed__`` variables given managed memory."""
        from .module import Module

        return Module(device or self.device(), source, host_memory=(self.host.managed, self.host.free))

    def per_thread_stream(self):
        dev = self.device()
        table = getattr(self._tls, "per_thread", None)
        if table is None:
            table = self._tls.per_thread = {}
        s = table.get(dev.index)
        if s is None or s.destroyed:
            s = table[dev.index] = dev.new_stream(per_thread=True)
        return s


def _module_on(device, code_object):
    """How the registry loads a registered fat binary's code object on a device."""
    from .module import Module

    return Module(device, None, code_object=code_object)


_runtime: Runtime | None = None
_runtime_lock = threading.Lock()


def runtime() -> Runtime:
    global _runtime
    if _runtime is None:
        with _runtime_lock:
            if _runtime is None:
                _runtime = Runtime()
    return _runtime


def _after_fork_in_child() -> None:
    """A forked child has none of the parent's threads (packet processors): the runtime gets new devices."""
    global _runtime_lock
    _runtime_lock = threading.Lock()
    if _runtime is not None:
        _runtime.reinit_after_fork()
    for hook in list(after_fork_hooks):
        hook()


def _thread_locals():
    return runtime()._tls


fastlaunch.thread_locals = _thread_locals      # what repeat launches on the null stream check the device by

after_fork_hooks: list = []                      # other layers' state to drop in a forked child (the C ABI's)
os.register_at_fork(after_in_child=_after_fork_in_child)
