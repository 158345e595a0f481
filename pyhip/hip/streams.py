"""``pyhip.hip`` streams and events."""
from __future__ import annotations

from ..errors import HipError, hipError_t
from ..runtime.context import hipStreamPerThread, runtime
from ..runtime.stream import Event, Stream
from ._api import hip_api


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
def hipStreamCreateWithFlags(flags: int):
    return runtime().device().new_stream(int(flags))


@hip_api(1)
def hipStreamCreateWithPriority(flags: int, priority: int):
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
def hipStreamSynchronize(stream=None):
    s = runtime().resolve_stream(stream)
    s.check_not_capturing()
    s.synchronize()


@hip_api()
def hipStreamQuery(stream=None):
    if not runtime().resolve_stream(stream).query():
        raise HipError(hipError_t.hipErrorNotReady, "stream has pending work")


@hip_api()
def hipStreamAddCallback(stream, callback, userData=None, flags: int = 0):
    """``callback(stream, status, userData)`` runs on the host once the stream's earlier work is done; the
    stream's later work waits for it.  An exception it raises is the stream's error at its next
    synchronisation; the stream stays usable."""
    if flags != 0:
        raise HipError(hipError_t.hipErrorInvalidValue, "flags must be 0")
    if not callable(callback):
        raise HipError(hipError_t.hipErrorInvalidValue, "callback is not callable")
    runtime().resolve_stream(stream).host_op(lambda: callback(stream, hipError_t.hipSuccess, userData),
                                             "stream callback")


@hip_api()
def hipLaunchHostFunc(stream, fn, userData=None):
    """``fn(userData)`` in stream order (hipLaunchHostFunc; same rules as hipStreamAddCallback)."""
    if not callable(fn):
        raise HipError(hipError_t.hipErrorInvalidValue, "host function is not callable")
    runtime().resolve_stream(stream).host_op(lambda: fn(userData), "host function")


@hip_api()
def hipStreamWaitEvent(stream, event, flags: int = 0):
    if flags != 0:
        raise HipError(hipError_t.hipErrorInvalidValue, "flags must be 0")
    runtime().resolve_stream(stream).wait_event(_event(event))


@hip_api(1)
def hipEventCreate():
    return Event()


@hip_api(1)
def hipEventCreateWithFlags(flags: int):
    return Event(int(flags))


@hip_api()
def hipEventRecord(event, stream=None):
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
