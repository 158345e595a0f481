"""Streams and events: creation (priorities clamped), destruction, synchronisation and queries, waits, host
callbacks, flags and priorities; events recorded, waited for, timed and destroyed (clr's hip_stream.cpp,
hip_event.cpp). A stream is given as the runtime takes it: None or 0 (the null stream), hipStreamPerThread (2)
or a Stream; an event as an Event."""
from __future__ import annotations

from ..errors import HipError, hipError_t
from ..runtime.context import hipStreamPerThread, runtime
from ..runtime.event import Event
from . import invalid

PRIORITY_HIGH, PRIORITY_LOW = -1, 1                 # ROCclr: High -1, Normal 0, Low 1


def _is_null(stream) -> bool:
    return stream is None or (isinstance(stream, int) and stream == 0)


def stream(stream):
    """The Stream a handle stands for (hipErrorContextIsDestroyed for a destroyed one, as ROCclr)."""
    return runtime().resolve_stream(stream)


def event(ev) -> Event:
    if not isinstance(ev, Event):
        raise HipError(hipError_t.hipErrorInvalidHandle, f"not an event: {ev!r}")
    if ev.destroyed:
        raise HipError(hipError_t.hipErrorInvalidHandle, "event was destroyed")
    return ev


def event_create(flags=0) -> Event:
    return Event(int(flags))


def stream_create(flags=0, priority=0):
    return runtime().device().new_stream(int(flags), max(PRIORITY_HIGH, min(PRIORITY_LOW, int(priority))))


def stream_destroy(s) -> None:
    if _is_null(s):
        raise HipError(hipError_t.hipErrorInvalidHandle, "cannot destroy the null stream")
    if isinstance(s, int) and s == hipStreamPerThread:
        raise HipError(hipError_t.hipErrorInvalidResourceHandle, "cannot destroy hipStreamPerThread")
    stream(s).destroy()


def stream_synchronize(s) -> None:
    st = stream(s)
    st.check_not_capturing()
    st.synchronize()


def stream_query(s) -> None:
    """hipErrorNotReady while the stream has work pending."""
    st = stream(s)
    st.check_not_capturing()
    if not st.query():
        raise HipError(hipError_t.hipErrorNotReady, "stream has pending work")


def stream_wait_event(s, ev, flags) -> None:
    if int(flags) != 0:
        raise invalid("flags must be 0")
    stream(s).wait_event(event(ev))


def stream_add_callback(s, flags, make_call) -> None:
    """``make_call(st)`` gives the host function to run in the order of stream ``st`` (the face builds it: a
    Python callable, a ctypes or cffi function pointer); None stands for a null callback."""
    if make_call is None:
        raise invalid("null callback")
    if int(flags) != 0:
        raise invalid("flags must be 0")
    st = stream(s)
    st.host_op(make_call(st), "stream callback")


def stream_flags(s) -> int:
    if _is_null(s):
        raise invalid("null stream")
    return stream(s).flags


def stream_priority(s) -> int:
    return 0 if _is_null(s) else stream(s).priority


def event_record(ev, s) -> None:
    event(ev).record(stream(s))


def event_synchronize(ev) -> None:
    event(ev).synchronize()


def event_query(ev) -> None:
    """hipErrorNotReady until the event's work is done."""
    if not event(ev).query():
        raise HipError(hipError_t.hipErrorNotReady, "event has not completed")


def event_elapsed_ms(start, stop) -> float:
    return event(start).elapsed_ms(event(stop))


def event_destroy(ev) -> None:
    event(ev).destroyed = True
