"""``pyhip.hip`` streams and events."""
from __future__ import annotations

import ctypes

from ..errors import HipError, hipError_t
from ..hipapi import streams as api
from ..runtime.context import runtime
from ..runtime.stream import Stream
from ..runtime import memops
from ._api import SUCCESS, face, fast_path_of, hip_api
from .memory import _addr
from .pointers import address_of


hipStreamCreate = face("hipStreamCreate", api.stream_create, 1)
hipStreamCreateWithFlags = face("hipStreamCreateWithFlags", api.stream_create, 1)
hipStreamCreateWithPriority = face("hipStreamCreateWithPriority", api.stream_create, 1)
hipStreamDestroy = face("hipStreamDestroy", api.stream_destroy)
hipStreamSynchronize = face("hipStreamSynchronize", api.stream_synchronize)
hipStreamQuery = face("hipStreamQuery", api.stream_query)
hipStreamWaitEvent = face("hipStreamWaitEvent", api.stream_wait_event)
hipStreamGetFlags = face("hipStreamGetFlags", api.stream_flags, 1)
hipStreamGetPriority = face("hipStreamGetPriority", api.stream_priority, 1)
hipEventCreate = face("hipEventCreate", api.event_create, 1)
hipEventCreateWithFlags = face("hipEventCreateWithFlags", api.event_create, 1)
hipEventRecord = face("hipEventRecord", api.event_record)
hipEventSynchronize = face("hipEventSynchronize", api.event_synchronize)
hipEventQuery = face("hipEventQuery", api.event_query)
hipEventElapsedTime = face("hipEventElapsedTime", api.event_elapsed_ms, 1)
hipEventDestroy = face("hipEventDestroy", api.event_destroy)


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
