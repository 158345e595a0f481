"""hip-clang's registration scheme: fat binaries → handles, kernel *handle variables* → device kernels.

``__hipRegisterFatBinary`` hands in the ``__hip_fatbin_wrapper`` (or, from Python, the bundle bytes);
``__hipRegisterFunction`` maps the address of a kernel's host handle variable to its device name;
``hipLaunchKernel(handle, ...)`` resolves that address, loading the right code object for the current
device on first use (lazy, per device, cached).  Nothing here aborts: every failure is a HipError.
"""
from __future__ import annotations

import itertools
import threading
from dataclasses import dataclass, field

from ..errors import HipError, LoaderError, hipError_t
from ..loader import Binary, load
from ..loader.targetid import DeviceISA


@dataclass
class FatBinary:
    handle: int
    source: object                      # bytes, or a callable returning bytes (read lazily)
    binary: Binary | None = None
    functions: dict = field(default_factory=dict)   # host handle address -> device name
    variables: dict = field(default_factory=dict)   # host shadow address -> VarInfo
    per_device: dict = field(default_factory=dict)  # device key -> loaded object (from load_fn)
    error: LoaderError | None = None

    def parsed(self) -> Binary:
        if self.error is not None:
            raise self.error
        if self.binary is None:
            try:
                data = self.source() if callable(self.source) else self.source
                self.binary = load(data, origin=f"fat binary #{self.handle}")
            except LoaderError as exc:
                self.error = exc
                raise
        return self.binary


@dataclass(frozen=True)
class VarInfo:
    fatbin: int
    host_address: int
    name: str
    size: int
    constant: bool = False
    managed: bool = False
    managed_address: int = 0          # __hipRegisterManagedVar: the managed allocation the device variable points to


class Registry:
    """Thread-safe registry of fat binaries, functions and variables keyed by host addresses."""

    def __init__(self):
        self._lock = threading.RLock()
        self._ids = itertools.count(1)
        self.fatbins: dict[int, FatBinary] = {}
        self.functions: dict[int, tuple[int, str]] = {}   # host handle address -> (fatbin, name)
        self.variables: dict[int, VarInfo] = {}

    # -- registration ------------------------------------------------------------------------------
    def register_fatbin(self, source) -> int:
        with self._lock:
            h = next(self._ids)
            self.fatbins[h] = FatBinary(h, source)
            return h

    def _fatbin(self, handle: int) -> FatBinary:
        fb = self.fatbins.get(handle)
        if fb is None:
            raise HipError(hipError_t.hipErrorInvalidHandle, f"unknown fat binary handle {handle}")
        return fb

    def register_function(self, handle: int, host_address: int, device_name: str) -> None:
        if isinstance(device_name, bytes):
            device_name = device_name.decode("utf-8", "replace")
        with self._lock:
            fb = self._fatbin(handle)
            fb.functions[host_address] = device_name
            self.functions[host_address] = (handle, device_name)

    def register_variable(self, handle: int, host_address: int, name: str, size: int,
                          constant: bool = False, managed: bool = False, managed_address: int = 0) -> None:
        if isinstance(name, bytes):
            name = name.decode("utf-8", "replace")
        with self._lock:
            fb = self._fatbin(handle)
            info = VarInfo(handle, host_address, name, size, constant, managed, managed_address)
            fb.variables[host_address] = info
            self.variables[host_address] = info

    def unregister_fatbin(self, handle: int) -> FatBinary | None:
        with self._lock:
            fb = self.fatbins.pop(handle, None)
            if fb is None:
                return None
            for addr in fb.functions:
                if self.functions.get(addr, (None,))[0] == handle:
                    del self.functions[addr]
            for addr in fb.variables:
                if addr in self.variables and self.variables[addr].fatbin == handle:
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

    def loaded(self, fb: FatBinary, device_key, isa: DeviceISA, load_fn):
        """The fat binary's code object for this device, loaded once through ``load_fn(code_object)``."""
        with self._lock:
            obj = fb.per_device.get(device_key)
            if obj is None:
                co = fb.parsed().select(isa)
                obj = load_fn(co)
                fb.per_device[device_key] = obj
            return obj
