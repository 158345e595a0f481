"""What every area of the C ABI shares: the process's one context ``c`` (the embedding's ffi/lib, the runtime,
handle tables) and the ``export`` decorators.  An area module defines its C functions at module level,
decorated ``@export`` (or ``@export_raw(name)``, or named by ``export_as``): the decorators only record the
function in :data:`EXPORTS` and return it unchanged, so it can be imported and called on its own.  When the
shim loads, :func:`pyhip.capi.impl.install` binds ``c`` (:meth:`CApi.bind`) and makes every recorded function
the C export of its name (:meth:`CApi.define_exports`): a Python function raising HipError becomes a
hipError_t-returning C function.  The functions reach the context through the module global ``c``.

Handles: streams, events, modules, functions, graphs… are Python objects handed to C as their ``id()``;
the tables here keep them alive and map the address back (an unknown address is hipErrorInvalidHandle or
whatever HIP 5.2 returns for that API, never a crash)."""
from __future__ import annotations

import os
import sys
import threading

from ..errors import HipError, hipError_t
from ..hip._api import last_exception, set_last_error
from ..hip.conventions import c_caller


_LOG = os.environ.get("PYHIP_LOG_FAULTS", "") not in ("", "0")


def invalid(msg: str) -> HipError:
    return HipError(hipError_t.hipErrorInvalidValue, msg)


# Every C function the area modules define, in definition order: (C name, kind, function); kind is "error"
# (hipError_t, exceptions turned into codes) or "raw" (returns its own value and never raises).
EXPORTS: list[tuple[str, str, object]] = []


def export(fn):
    """Record ``fn`` as the hipError_t C export of its name (bound by impl.install); ``fn`` is returned as is."""
    EXPORTS.append((fn.__name__, "error", fn))
    return fn


def export_raw(name: str):
    """Record the decorated function as the C export ``name`` that does not return hipError_t (registration
    calls, strings): the function itself must never raise."""
    def deco(fn):
        EXPORTS.append((name, "raw", fn))
        return fn
    return deco


def export_as(name: str, fn) -> None:
    """Record ``fn`` as the hipError_t C export ``name`` too (the _spt variants, aliases)."""
    EXPORTS.append((name, "error", fn))


class CApi:
    """The C ABI's context: one per process (:data:`c`), unbound until the shim loads (:meth:`bind`)."""

    def __init__(self):
        self.ffi = self.lib = self.rt = None
        self.lock = threading.Lock()
        self.streams: dict[int, object] = {}
        self.keep: dict[int, object] = {}                   # buffers and strings C holds pointers into
        self.objects: dict[int, object] = {}                # events, modules, functions, graphs… by handle
        self.exported: set[str] = set()
        self.fast = None                                    # FastPath (native launches), set by impl.install

    def bind(self, ffi, lib, rt) -> None:
        """The embedding's ffi and lib and the process's runtime (impl.install, once)."""
        self.ffi, self.lib, self.rt = ffi, lib, rt

    # -- exports -------------------------------------------------------------------------------------------
    def define_exports(self) -> None:
        """Every recorded function (:data:`EXPORTS`) made the C export of its name."""
        for name, kind, fn in EXPORTS:
            (self.define_error if kind == "error" else self.define_raw)(name, fn)

    def define_error(self, name: str, fn) -> None:
        """A hipError_t export: None → hipSuccess, an int → that code, HipError → its code, any other
        exception → hipErrorUnknown; the thread's last error is set like HIP 5.2 does."""
        set_c_error = self.lib.pyhip_set_last_error

        def wrapper(*args):
            outer = getattr(c_caller, "active", False)
            c_caller.active = True               # C passes enums as integers (hip/conventions.py)
            try:
                r = fn(*args)
                code = 0 if r is None else int(r)
            except HipError as exc:
                code = int(exc.code)
            except Exception:  # noqa: BLE001 - nothing may unwind into C
                code = int(hipError_t.hipErrorUnknown)
                if _LOG:
                    import traceback
                    print(f"pyhip: {name} failed:\n{traceback.format_exc()}", file=sys.stderr, flush=True)
            finally:
                c_caller.active = outer
            set_last_error(code)
            set_c_error(code)
            return code
        wrapper.__name__ = name
        self.exported.add(name)
        self.ffi.def_extern(name=name)(wrapper)

    def define_raw(self, name: str, fn) -> None:
        """An export that does not return hipError_t: ``fn``'s value as is."""
        def raw(*args):
            outer = getattr(c_caller, "active", False)
            c_caller.active = True
            try:
                return fn(*args)
            finally:
                c_caller.active = outer
        raw.__name__ = name
        self.exported.add(name)
        self.ffi.def_extern(name=name)(raw)

    # -- helpers ---------------------------------------------------------------------------------------------
    def addr(self, p) -> int:
        return int(self.ffi.cast("uintptr_t", p))

    def need(self, *ptrs) -> None:
        """hipErrorInvalidValue for a null output/input pointer."""
        for p in ptrs:
            if p == self.ffi.NULL:
                raise invalid("null pointer argument")

    def device(self, d):
        """The runtime device of ordinal ``d``; hipErrorInvalidDevice when there is none."""
        d = int(d)
        if not 0 <= d < len(self.rt.devices):
            raise HipError(hipError_t.hipErrorInvalidDevice, f"device {d}")
        return self.rt.devices[d]

    def stream_of(self, handle):
        """A hipStream_t as the runtime wants it: None (null stream), 2 (hipStreamPerThread) or a Stream."""
        h = self.addr(handle)
        if h == 0:
            return None
        if h == 2:
            return 2
        s = self.streams.get(h)
        if s is None or s.destroyed:
            # ROCclr: a stream it does not know (destroyed, never created) is hipErrorContextIsDestroyed
            raise HipError(hipError_t.hipErrorContextIsDestroyed, f"unknown or destroyed stream 0x{h:x}")
        return s

    def stream(self, handle):
        return self.rt.resolve_stream(self.stream_of(handle))

    def stream_handle(self, s) -> int:
        """The hipStream_t C sees for a runtime stream."""
        if s is None or getattr(s, "is_null", False):
            return 0
        if getattr(s, "per_thread", False):
            return 2
        return id(s)

    def add_stream(self, s) -> int:
        self.streams[id(s)] = s
        return id(s)

    def obj(self, handle, kind, code=hipError_t.hipErrorInvalidHandle):
        o = self.objects.get(self.addr(handle))
        if not isinstance(o, kind):
            raise HipError(code, f"not a {kind.__name__ if isinstance(kind, type) else 'valid'} handle")
        return o

    def new_handle(self, out, o) -> None:
        self.need(out)
        self.objects[id(o)] = o
        out[0] = self.ffi.cast("void*", id(o))

    def check(self, ret):
        """Unwrap a pyhip.hip (err, value...) tuple, re-raising the failure it stood for."""
        if ret[0] != 0:
            exc = last_exception()
            raise exc if isinstance(exc, HipError) else HipError(ret[0])
        return ret[1] if len(ret) == 2 else ret[1:]

    def enum_arg(self, enum, value):
        """A C enum value as pyhip.hip's enum parameter (hip-python requires the enum type)."""
        try:
            return enum(int(value))
        except ValueError:
            raise invalid(f"invalid {enum.__name__} {int(value)}") from None

    def cstring(self, text: str):
        """A NUL-terminated C string that lives as long as the process (names C keeps pointers to)."""
        s = self.keep.get(("str", text))
        if s is None:
            s = self.keep[("str", text)] = self.ffi.new("char[]", text.encode())
        return s

    def read(self, ptr, size: int) -> bytes:
        return bytes(self.ffi.buffer(ptr, size))


c = CApi()       # the process's C ABI context: what every export reaches (bound by impl.install)
