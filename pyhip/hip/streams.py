"""``pyhip.hip`` streams and events."""
from __future__ import annotations

import ctypes

from ..errors import HipError, hipError_t
from ..runtime.context import hipStreamPerThread, runtime
from ..runtime.stream import Event, Stream
from ..runtime import memops
from ._api import SUCCESS, fast_path_of, hip_api, invalid
from .memory import _addr
from .pointers import address_of


def _event(ev) -> Event:
    if not isinstance(ev, Event):
        raise HipError(hipError_t.hipErrorInvalidHandle, f"not an event: {ev!r}")
    if ev.destroyed:
        raise HipError(hipError_t.hipErrorInvalidHandle, "event was destroyed")
    return ev


@hip_api(1)
def hipStreamCreate():
    return runtime().device().new_stream()


@hip_api(1)
def hipStreamCreateWithFlags(flags):
    return runtime().device().new_stream(flags)


@hip_api(1)
def hipStreamCreateWithPriority(flags, priority):
    priority = max(-1, min(1, int(priority)))      # ROCclr: High -1, Normal 0, Low 1 (clamped)
    return runtime().device().new_stream(int(flags), int(priority))


@hip_api()
def hipStreamDestroy(stream):
    if stream is None or stream == 0:
        raise HipError(hipError_t.hipErrorInvalidHandle, "cannot destroy the null stream")
    if isinstance(stream, int) and stream == hipStreamPerThread:
        raise HipError(hipError_t.hipErrorInvalidResourceHandle, "cannot destroy hipStreamPerThread")
    s = runtime().resolve_stream(stream)
    s.destroy()


@hip_api()
def hipStreamSynchronize(stream):
    s = runtime().resolve_stream(stream)
    s.check_not_capturing()
    s.synchronize()


@fast_path_of(hipStreamSynchronize)
def hipStreamSynchronize(stream):
    """The null stream or a stream of an armed device: one native wait (Device.sync_if_armed)."""
    if stream is None:
        s = runtime().device().null_stream
    elif type(stream) is Stream and not stream.destroyed:
        s = stream
    else:
        return None
    return SUCCESS if s.capture is None and s.device.sync_if_armed(s) else None


@hip_api()
def hipStreamQuery(stream):
    if not runtime().resolve_stream(stream).query():
        raise HipError(hipError_t.hipErrorNotReady, "stream has pending work")


def _host_callable(fn, argtypes):
    """A Python callable (pyhip), a ctypes function, or the address of a C function (hip-python passes
    ``hipStreamCallback_t`` / ``hipHostFn_t`` as function pointers)."""
    if callable(fn) and not isinstance(fn, ctypes._CFuncPtr):
        return fn
    if isinstance(fn, ctypes._CFuncPtr):
        return fn
    addr = address_of(fn)
    if not addr:
        raise HipError(hipError_t.hipErrorInvalidValue, "callback is NULL")
    return ctypes.CFUNCTYPE(None, *argtypes)(addr)


@hip_api()
def hipStreamAddCallback(stream, callback, userData, flags):
    """``callback(stream, status, userData)`` runs on the host once the stream's earlier work is done; the
    stream's later work waits for it.  An exception it raises is the stream's error at its next
    synchronisation; the stream stays usable.  ``callback``: a Python callable or a C function pointer
    (``void(*)(hipStream_t, hipError_t, void*)``, called with the stream handle and ``int(userData)``)."""
    if flags != 0:
        raise HipError(hipError_t.hipErrorInvalidValue, "flags must be 0")
    if not callable(callback) and address_of(callback) == 0:
        raise HipError(hipError_t.hipErrorInvalidValue, "callback is not callable")
    fn = _host_callable(callback, (ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p))
    st = runtime().resolve_stream(stream)
    if isinstance(fn, ctypes._CFuncPtr):
        handle, data = (st.handle if stream else 0), address_of(userData)
        op = lambda: fn(handle, 0, data)  # noqa: E731
    else:
        op = lambda: fn(stream, hipError_t.hipSuccess, userData)  # noqa: E731
    st.host_op(op, "stream callback")


@hip_api()
def hipLaunchHostFunc(stream, fn, userData):
    """``fn(userData)`` in stream order (a Python callable or a C ``void(*)(void*)``; same rules as
    hipStreamAddCallback)."""
    if not callable(fn) and address_of(fn) == 0:
        raise HipError(hipError_t.hipErrorInvalidValue, "host function is not callable")
    f = _host_callable(fn, (ctypes.c_void_p,))
    data = address_of(userData) if isinstance(f, ctypes._CFuncPtr) else userData
    runtime().resolve_stream(stream).host_op(lambda: f(data), "host function")


@hip_api()
def hipStreamWaitEvent(stream, event, flags):
    if flags != 0:
        raise HipError(hipError_t.hipErrorInvalidValue, "flags must be 0")
    runtime().resolve_stream(stream).wait_event(_event(event))


@hip_api(1)
def hipEventCreate():
    return Event()


@hip_api(1)
def hipEventCreateWithFlags(flags):
    return Event(flags)


@hip_api()
def hipEventRecord(event, stream):
    _event(event).record(runtime().resolve_stream(stream))


@hip_api()
def hipEventSynchronize(event):
    _event(event).synchronize()


@hip_api()
def hipEventQuery(event):
    if not _event(event).query():
        raise HipError(hipError_t.hipErrorNotReady, "event has not completed")


@hip_api(1)
def hipEventElapsedTime(start, stop):
    return _event(start).elapsed_ms(_event(stop))


@hip_api()
def hipEventDestroy(event):
    _event(event).destroyed = True


@hip_api(1)
def hipStreamGetFlags(stream):
    if stream is None or (isinstance(stream, int) and stream == 0):
        raise invalid("null stream")
    return runtime().resolve_stream(stream).flags


@hip_api(1)
def hipStreamGetPriority(stream):
    if stream is None or (isinstance(stream, int) and stream == 0):
        return 0
    return runtime().resolve_stream(stream).priority


# -- stream memory operations -------------------------------------------------------------------------------------
@hip_api()
def hipStreamWaitValue32(stream, ptr, value, flags, mask):
    memops.wait_value(stream, _addr(ptr), value, flags, mask, 4)


@hip_api()
def hipStreamWaitValue64(stream, ptr, value, flags, mask):
    memops.wait_value(stream, _addr(ptr), value, flags, mask, 8)


@hip_api()
def hipStreamWriteValue32(stream, ptr, value, flags):
    memops.write_value(stream, _addr(ptr), value, 4)


@hip_api()
def hipStreamWriteValue64(stream, ptr, value, flags):
    memops.write_value(stream, _addr(ptr), value, 8)
