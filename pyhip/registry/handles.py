"""The registry: hip-clang's registration scheme, from handles to kernels and variables.

``__hipRegisterFatBinary`` hands in the ``__hip_fatbin_wrapper`` (:meth:`Registry.register_wrapper`; from
Python, the bundle bytes: :meth:`Registry.register_fatbin`) and gets the fat binary's handle;
``__hipRegisterFunction`` maps the address of a kernel's host handle variable to its device name;
``__hipRegisterVar`` / ``__hipRegisterTexture`` / ``__hipRegisterSurface`` map a host shadow to a device
variable, ``__hipRegisterManagedVar`` also allocates its managed memory.  ``hipLaunchKernel(handle, ...)``
resolves the handle (:meth:`Registry.kernel`), loading the right code object for the launch's device on first
use (lazy, per device, cached; managed variables bound as it loads); the symbol API resolves a shadow
(:meth:`Registry.variable_address`).

The runtime supplies how a code object becomes a module on a device (``make_module``) and managed memory
(``allocate_managed``), so this layer needs nothing above the loader.  Nothing here aborts: every failure is a
HipError (an unknown fat binary handle hipErrorInvalidHandle, an unknown kernel handle
hipErrorInvalidDeviceFunction, an unknown shadow hipErrorInvalidSymbol) or the loader's LoaderError."""
from __future__ import annotations

import threading

from ..errors import HipError, hipError_t
from .fatbin import FatBinary, wrapper_source
from .variables import VarInfo, address_in, bind_managed, managed_memory


def _text(name) -> str:
    return name.decode("utf-8", "replace") if isinstance(name, bytes) else name


class Registry:
    """Thread-safe registry of fat binaries, functions and variables keyed by host addresses.

    ``make_module(device, code_object)`` loads a code object on a device (the runtime's Module); a device
    has ``index``, ``isa`` and ``backend.write(address, bytes)``, a module ``function(name)`` and
    ``global_var(name) -> (address, size)``.  ``allocate_managed(size)`` returns managed memory (``int()`` of
    it is its address)."""

    def __init__(self, make_module=None, allocate_managed=None):
        self.make_module = make_module
        self.allocate_managed = allocate_managed
        self._lock = threading.RLock()
        self.fatbins: dict[int, FatBinary] = {}
        self.functions: dict[int, tuple[int, str]] = {}   # host handle address -> (fatbin handle, name)
        self.variables: dict[int, VarInfo] = {}
        self._kept: list = []      # handle cells and managed memory: they live as long as the process

    # -- registration ------------------------------------------------------------------------------
    def register_fatbin(self, source) -> int:
        """A fat binary (bundle bytes, or a callable returning them, read on first use): its handle."""
        fb = FatBinary(source)
        with self._lock:
            self.fatbins[fb.handle] = fb
            self._kept.append(fb.cell)
        return fb.handle

    def register_wrapper(self, address: int) -> int:
        """``__hipRegisterFatBinary``: the ``__hip_fatbin_wrapper`` at host ``address`` (fatbin.wrapper_source)."""
        return self.register_fatbin(wrapper_source(address))

    def fatbin(self, handle: int) -> FatBinary:
        fb = self.fatbins.get(int(handle))
        if fb is None:
            raise HipError(hipError_t.hipErrorInvalidHandle, f"unknown fat binary handle 0x{int(handle):x}")
        return fb

    def register_function(self, handle: int, host_address: int, device_name) -> None:
        device_name = _text(device_name)
        with self._lock:
            fb = self.fatbin(handle)
            fb.functions[host_address] = device_name
            self.functions[host_address] = (fb.handle, device_name)

    def register_variable(self, handle: int, host_address: int, name, size: int,
                          constant: bool = False, managed: bool = False, managed_address: int = 0) -> None:
        with self._lock:
            fb = self.fatbin(handle)
            info = VarInfo(fb.handle, host_address, _text(name), int(size), constant, managed, managed_address)
            fb.variables[host_address] = info
            self.variables[host_address] = info

    def register_managed(self, handle: int, pointer: int, name, size: int, init: int = 0) -> int:
        """``__hipRegisterManagedVar``: managed memory of ``size`` bytes holding the ``init`` bytes (host address,
        0: none), its address stored at host ``pointer`` (the program's shadow), the device-side pointer
        variable ``name`` bound to it as the code object loads.  Returns the memory's address."""
        self.fatbin(handle)
        mem = managed_memory(self.allocate_managed, pointer, init, size)
        with self._lock:
            self._kept.append(mem)
        self.register_variable(handle, pointer, name, size, managed=True, managed_address=int(mem))
        return int(mem)

    def unregister_fatbin(self, handle: int) -> FatBinary | None:
        with self._lock:
            fb = self.fatbins.pop(int(handle), None)
            if fb is None:
                return None
            for addr in fb.functions:
                if self.functions.get(addr, (None,))[0] == fb.handle:
                    del self.functions[addr]
            for addr in fb.variables:
                if addr in self.variables and self.variables[addr].fatbin == fb.handle:
                    del self.variables[addr]
            return fb

    # -- resolution --------------------------------------------------------------------------------
    def function(self, host_address: int) -> tuple[FatBinary, str]:
        with self._lock:
            entry = self.functions.get(host_address)
            if entry is None:
                raise HipError(hipError_t.hipErrorInvalidDeviceFunction,
                               f"no kernel registered for handle 0x{host_address:x}")
            return self.fatbins[entry[0]], entry[1]

    def variable(self, host_address: int) -> VarInfo:
        with self._lock:
            info = self.variables.get(host_address)
            if info is None:
                raise HipError(hipError_t.hipErrorInvalidSymbol, f"no variable registered at 0x{host_address:x}")
            return info

    def after_fork(self) -> None:
        """A forked child: new locks, and no code object is loaded on the child's (new) devices yet."""
        self._lock = threading.RLock()
        for fb in list(self.fatbins.values()):
            fb.per_device.clear()

    def module(self, fb: FatBinary, device):
        """The fat binary's module on ``device``, loaded on first use from the code object for the device's
        ISA, its managed variables bound (variables.bind_managed)."""
        with self._lock:
            m = fb.per_device.get(device.index)
            if m is None:
                m = self.make_module(device, fb.parsed().select(device.isa))
                bind_managed(list(fb.variables.values()), m, device)
                fb.per_device[device.index] = m
            return m

    def kernel(self, host_address: int, device):
        """The kernel registered for a host handle address, on ``device`` (its module loaded lazily)."""
        fb, name = self.function(int(host_address))
        return self.module(fb, device).function(name)

    def variable_address(self, host_address: int, device, offset: int = 0, size: int = 0) -> int:
        """The device address of the variable registered for a host shadow, plus ``offset``, on ``device``
        (variables.address_in's bounds rule)."""
        info = self.variable(int(host_address))
        with self._lock:
            fb = self.fatbins[info.fatbin]
        return address_in(info, self.module(fb, device), offset, size)
