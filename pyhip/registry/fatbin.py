"""hip-clang's registration scheme: fat binaries → handles, kernel *handle variables* → device kernels,
host shadows of device variables → their device addresses.

``__hipRegisterFatBinary`` hands in the ``__hip_fatbin_wrapper`` (:meth:`Registry.register_wrapper`; from
Python, the bundle bytes: :meth:`Registry.register_fatbin`); ``__hipRegisterFunction`` maps the address of a
kernel's host handle variable to its device name; ``__hipRegisterVar`` / ``__hipRegisterManagedVar`` /
``__hipRegisterTexture`` map a host shadow to a device variable.  ``hipLaunchKernel(handle, ...)`` resolves
the handle (:meth:`Registry.kernel`), loading the right code object for the launch's device on first use
(lazy, per device, cached; managed variables bound as it loads); the symbol API resolves a shadow
(:meth:`Registry.variable_address`).  The runtime supplies how a code object becomes a module on a device
(``make_module``), so this layer needs nothing above the loader.  Nothing here aborts: every failure is a
HipError.
"""
from __future__ import annotations

import ctypes
import itertools
import struct
import threading
from dataclasses import dataclass, field

from ..errors import HipError, LoaderError, hipError_t
from ..loader import Binary, load
from ..loader.bundle import BUNDLE_MAGIC, CCOB_MAGIC
from ..loader.extent import image_at
from ..loader.hostelf import HIPF_MAGIC


def bundle_at(address: int) -> bytes:
    """The offload bundle (plain or compressed) at host ``address`` (what a fat binary wrapper points to)."""
    head = ctypes.string_at(address, 24)
    if head[:4] != CCOB_MAGIC and head != BUNDLE_MAGIC:
        raise HipError(hipError_t.hipErrorInvalidImage, "fat binary is not an offload bundle")
    return image_at(address)


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
    """Thread-safe registry of fat binaries, functions and variables keyed by host addresses.

    ``make_module(device, code_object)`` loads a code object on a device (the runtime's Module); a device
    has ``index``, ``isa`` and ``backend.write(address, bytes)``, a module ``function(name)`` and
    ``global_var(name) -> (address, size)``."""

    def __init__(self, make_module=None):
        self.make_module = make_module
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

    def register_wrapper(self, address: int) -> int:
        """A ``__hip_fatbin_wrapper`` at host ``address`` (u32 magic, u32 version 1, u64 bundle address): its
        bundle is read when a kernel of it is first needed.  HipError(hipErrorInvalidImage) when it is not one."""
        magic, version, bundle = struct.unpack("<IIQ", ctypes.string_at(address, 16))
        if magic != HIPF_MAGIC or version != 1:
            raise HipError(hipError_t.hipErrorInvalidImage, f"not a fat binary wrapper (magic 0x{magic:x}, "
                                                             f"version {version})")
        return self.register_fatbin(lambda: bundle_at(bundle))

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

    def module(self, fb: FatBinary, device):
        """The fat binary's module on ``device``, loaded on first use from the code object for the device's
        ISA.  Loading binds the managed variables (``__hipRegisterManagedVar``): each device-side pointer
        variable gets its managed allocation's address."""
        with self._lock:
            m = fb.per_device.get(device.index)
            if m is None:
                m = self.make_module(device, fb.parsed().select(device.isa))
                for v in list(fb.variables.values()):
                    if v.managed and v.managed_address:
                        where, size = m.global_var(v.name)[:2]
                        if size < 8:
                            raise HipError(hipError_t.hipErrorInvalidSymbol,
                                           f"managed variable {v.name} is not a pointer")
                        device.backend.write(where, struct.pack("<Q", v.managed_address))
                fb.per_device[device.index] = m
            return m

    def kernel(self, host_address: int, device):
        """The kernel registered for a host handle address, on ``device`` (its module loaded lazily)."""
        fb, name = self.function(int(host_address))
        return self.module(fb, device).function(name)

    def variable_address(self, host_address: int, device, offset: int = 0, size: int = 0) -> int:
        """The device address of the variable registered for a host shadow, plus ``offset``, on ``device``;
        [offset, offset + size) must lie inside the variable (hipErrorInvalidValue otherwise, as HIP 5.2's
        ihipMemcpySymbol_validate)."""
        info = self.variable(int(host_address))
        with self._lock:
            fb = self.fatbins[info.fatbin]
        base, nbytes = self.module(fb, device).global_var(info.name)[:2]
        if int(offset) + int(size) > nbytes:
            raise HipError(hipError_t.hipErrorInvalidValue,
                           f"{info.name}: bytes [{int(offset)}, {int(offset) + int(size)}) outside its {nbytes} bytes")
        return base + int(offset)
