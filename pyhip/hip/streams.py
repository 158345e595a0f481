"""``pyhip.hip`` streams and events."""
from __future__ import annotations

import ctypes

from ..errors import HipError, hipError_t
from ..hipapi import streams as api
from ..runtime.context import runtime
from ..runtime.stream import Event, Stream
from ..runtime import memops
from ._api import SUCCESS, fast_path_of, hip_api
from .memory import _addr
from .pointers import address_of


@hip_api(1)
def hipStreamCreate():
    return api.stream_create()


@hip_api(1)
def hipStreamCreateWithFlags(flags):
    return api.stream_create(flags)


@hip_api(1)
def hipStreamCreateWithPriority(flags, priority):
    return api.stream_create(flags, priority)


@hip_api()
def hipStreamDestroy(stream):
    api.stream_destroy(stream)


@hip_api()
def hipStreamSynchronize(stream):
    api.stream_synchronize(stream)


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
    api.stream_query(stream)


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
    def make_call(st):
        fn = _host_callable(callback, (ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p))
        if isinstance(fn, ctypes._CFuncPtr):
            handle, data = (st.handle if stream else 0), address_of(userData)
            return lambda: fn(handle, 0, data)
        return lambda: fn(stream, hipError_t.hipSuccess, userData)
    null = not callable(callback) and address_of(callback) == 0
    api.stream_add_callback(stream, flags, None if null else make_call)


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
    api.stream_wait_event(stream, event, flags)


@hip_api(1)
def hipEventCreate():
    return Event()


@hip_api(1)
def hipEventCreateWithFlags(flags):
    return Event(flags)


@hip_api()
def hipEventRecord(event, stream):
    api.event_record(event, stream)


@hip_api()
def hipEventSynchronize(event):
    api.event_synchronize(event)


@hip_api()
def hipEventQuery(event):
    api.event_query(event)


@hip_api(1)
def hipEventElapsedTime(start, stop):
    return api.event_elapsed_ms(start, stop)


@hip_api()
def hipEventDestroy(event):
    api.event_destroy(event)


@hip_api(1)
def hipStreamGetFlags(stream):
    return api.stream_flags(stream)


@hip_api(1)
def hipStreamGetPriority(stream):
    return api.stream_priority(stream)


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
