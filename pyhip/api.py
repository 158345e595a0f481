"""The Pythonic layer: exceptions instead of error tuples, callable kernels, device arrays, and
streams/events as context managers.

    mod = pyhip.load("kernels.hsaco")
    scale = mod.kernel("scale<float>")
    x = pyhip.to_device(np.arange(1000, dtype=np.float32))
    scale((4, 1, 1), (256, 1, 1), x, 2.0, 1000)
    print(x.get())
"""
from __future__ import annotations

import ctypes
import operator

import numpy as np

from .errors import HipError, hipError_t
from .runtime import ops
from .runtime.context import runtime
from .runtime.fastlaunch import native_kcall
from .runtime.memory import DevicePointer
from .runtime.module import Function
from .runtime.event import Event as _Event

kDLROCM = 10


def _api(name: str):
    """Name the HIP API a Pythonic call stands for in the HipError it raises."""
    import functools

    def deco(fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            try:
                return fn(*args, **kwargs)
            except HipError as exc:
                raise exc.with_api(name)
        return wrapper
    return deco


def _dim3(v) -> tuple[int, int, int]:
    if isinstance(v, (int, np.integer)):
        return (int(v), 1, 1)
    t = tuple(int(x) for x in v)
    if not 1 <= len(t) <= 3:
        raise HipError(hipError_t.hipErrorInvalidValue, f"bad dimensions {v!r}")
    return t + (1,) * (3 - len(t))


@_api('hipSetDevice')
def set_device(index: int) -> None:
    runtime().set_device(index)


def get_device() -> int:
    return runtime().current_index()


def device_count() -> int:
    return len(runtime().devices)


def synchronize() -> None:
    dev = runtime().device()
    if not dev.sync_if_armed():             # armed: only native launches since the last synchronize, done
        _synchronize(dev)


@_api('hipDeviceSynchronize')
def _synchronize(dev) -> None:
    dev.synchronize()


def engine_stats() -> dict:
    """Per emulated device index: the engine dispatches ask for (``PYHIP_ENGINE``: native, numpy or diff), how
    many ran on the native engine, how many fell back whole to the numpy engine and why (reason -> count)."""
    out = {}
    for d in runtime().devices:
        gpu = d.backend.emulated_gpu
        if gpu is not None:
            out[d.index] = {"engine": gpu.engine, **gpu.engine_stats()}
    return out


_KEYS = (int, tuple)


class Kernel:
    """A launchable kernel: ``kernel(grid, block, *args, shared=0, stream=None)``."""

    def __init__(self, function: Function):
        self.function = function
        self.name = function.kernel.demangled

    def __repr__(self) -> str:
        return f"<Kernel {self.name}>"

    @property
    def args(self):
        return self.function.kernel.explicit_args

    def __call__(self, grid, block, *args, shared: int = 0, stream=None):
        # a repeat of a launch that went through the runtime (int or tuple geometry): one native call looks the
        # entry up, checks the null stream's device and the values' types, packs and publishes
        # (runtime/fastlaunch.py); False for no entry, a stale one, other argument types, refused values
        if native_kcall(self.function.fast, grid, block, shared, stream, args):
            return None
        return self._launch(grid, block, args, shared, stream)

    @_api('hipModuleLaunchKernel')
    def _launch(self, grid, block, args, shared, stream):
        st = runtime().resolve_stream(stream._stream if isinstance(stream, Stream) else stream)
        key = (grid, block, shared, stream) if type(grid) in _KEYS and type(block) in _KEYS else None
        self.function.launch(st, _dim3(grid), _dim3(block), int(shared), args=args, cache_key=key)


class Module:
    def __init__(self, source):
        self._module = runtime().load_module(source)

    @property
    def code_object(self):
        return self._module.code_object

    @property
    def kernels(self) -> list[str]:
        return [k.demangled for k in self._module.code_object.kernels.values()]

    @_api('hipModuleGetFunction')
    def kernel(self, name) -> Kernel:
        return Kernel(self._module.function(name))

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        try:
            return self.kernel(name)
        except HipError as exc:
            raise AttributeError(str(exc)) from None

    def global_array(self, name, dtype=np.uint8, shape=None) -> "DeviceArray":
        addr, size = self._module.global_var(name)
        dtype = np.dtype(dtype)
        shape = shape if shape is not None else (size // dtype.itemsize,)
        return DeviceArray(DevicePointer(addr, self._module.device, size), shape, dtype, owner=self)

    def unload(self) -> None:
        self._module.unload()


@_api('hipModuleLoadData')
def load(path_or_bytes) -> Module:
    """Load a code object, bundle or host ELF onto the current device."""
    return Module(path_or_bytes)


class DeviceArray:
    """An n-dimensional array in device memory (C order)."""

    def __init__(self, ptr: DevicePointer, shape, dtype, owner=None):
        self.ptr = ptr
        self.shape = tuple(int(s) for s in (shape if isinstance(shape, (tuple, list)) else (shape,)))
        self.dtype = np.dtype(dtype)
        self._owner = owner           # something that keeps the memory alive (a module), or None = ours

    @classmethod
    @_api('hipMalloc')
    def empty(cls, shape, dtype=np.float32) -> "DeviceArray":
        shape = shape if isinstance(shape, (tuple, list)) else (shape,)
        n = int(np.prod(shape)) * np.dtype(dtype).itemsize
        return cls(ops.malloc(max(n, 1)), shape, dtype)

    @classmethod
    def from_numpy(cls, array) -> "DeviceArray":
        a = np.ascontiguousarray(array)
        d = cls.empty(a.shape, a.dtype)
        d.set(a)
        return d

    @property
    def size(self) -> int:
        return int(np.prod(self.shape))

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    def __int__(self) -> int:
        return int(self.ptr)

    def __hip_pointer__(self) -> int:
        return int(self.ptr)

    __hip_address__ = operator.attrgetter("ptr.value")  # the same, read in C (runtime/argreaders.py)

    def data_ptr(self) -> int:
        """The device address, as torch names it (Triton takes any object with ``data_ptr()`` and a
        ``dtype`` as a pointer argument)."""
        return int(self.ptr)

    def __repr__(self) -> str:
        return f"<DeviceArray {self.shape} {self.dtype} at 0x{int(self.ptr):x}>"

    @_api('hipMemcpy')
    def set(self, array, stream=None) -> None:
        a = np.ascontiguousarray(array, dtype=self.dtype)
        if a.nbytes != self.nbytes:
            raise HipError(hipError_t.hipErrorInvalidValue, f"array of {a.nbytes} bytes into {self.nbytes}")
        ops.memcpy(self.ptr, a, self.nbytes, 1, stream, sync=stream is None)

    @_api('hipMemcpy')
    def get(self, stream=None) -> np.ndarray:
        out = np.empty(self.shape, self.dtype)
        ops.memcpy(out, self.ptr, self.nbytes, 2, stream, sync=True)
        return out

    numpy = get

    def fill_bytes(self, value: int) -> None:
        ops.memset(self.ptr, value, self.nbytes, 1)

    def view(self) -> np.ndarray:
        """A numpy view onto the emulated device's memory (no copy; synchronise before reading)."""
        dev = self.ptr.device or ops.owner(int(self.ptr))
        raw = dev.backend.host_view(int(self.ptr), self.nbytes)
        return np.frombuffer(raw, dtype=self.dtype).reshape(self.shape)

    def free(self) -> None:
        if self._owner is None and int(self.ptr):
            ops.free(self.ptr)
            self.ptr = DevicePointer(0)

    # -- DLPack --------------------------------------------------------------------------------------
    def __dlpack_device__(self):
        dev = self.ptr.device or ops.owner(int(self.ptr))
        return (kDLROCM, dev.index if dev is not None else 0)

    def __dlpack__(self, stream=None, **kwargs):
        from .dlpack import to_capsule

        dev_type, dev_id = self.__dlpack_device__()
        return to_capsule(int(self.ptr), self.shape, self.dtype, dev_type, dev_id, keepalive=self)


def to_device(array) -> DeviceArray:
    return DeviceArray.from_numpy(array)


def empty(shape, dtype=np.float32) -> DeviceArray:
    return DeviceArray.empty(shape, dtype)


class Stream:
    """A HIP stream; as a context manager it synchronises on exit."""

    def __init__(self, non_blocking: bool = False, priority: int = 0):
        self._stream = runtime().device().new_stream(1 if non_blocking else 0, priority)

    @_api("hipStreamSynchronize")
    def synchronize(self) -> None:
        self._stream.synchronize()

    def query(self) -> bool:
        return self._stream.query()

    def wait(self, event: "Event") -> None:
        if event._event.command is not None:
            self._stream.wait_signal(event._event.command.signal)

    def close(self) -> None:
        self._stream.destroy()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.synchronize()
        return False


class Event:
    """A HIP event: ``record(stream)``, ``synchronize()``, ``elapsed_ms(other)``; as a context manager
    ``with Event.timing(stream) as t: ...`` records start/stop and gives ``t.ms``."""

    def __init__(self, timing: bool = True):
        self._event = _Event(0 if timing else 2)

    def record(self, stream=None) -> "Event":
        st = runtime().resolve_stream(stream._stream if isinstance(stream, Stream) else stream)
        self._event.record(st)
        return self

    def synchronize(self) -> None:
        self._event.synchronize()

    def query(self) -> bool:
        return self._event.query()

    def elapsed_ms(self, end: "Event") -> float:
        return self._event.elapsed_ms(end._event)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self._event.command is not None:
            self._event.synchronize()
        return False

    @classmethod
    def timing(cls, stream=None) -> "_Timer":
        return _Timer(stream)


class _Timer:
    def __init__(self, stream):
        self.stream, self.ms = stream, None

    def __enter__(self):
        self.start = Event().record(self.stream)
        return self

    def __exit__(self, *exc):
        self.stop = Event().record(self.stream)
        self.stop.synchronize()
        self.ms = self.start.elapsed_ms(self.stop)
        return False
