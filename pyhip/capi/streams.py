"""The C ABI's streams, events and host callbacks."""
from __future__ import annotations

from ..errors import HipError, hipError_t
from .common import invalid


def install(c) -> None:
    ffi, rt = c.ffi, c.rt
    from .. import hip as H
    from ..runtime.stream import Event

    def new_stream(out, flags=0, priority=0):
        c.need(out)
        s = rt.device().new_stream(int(flags), int(priority))
        out[0] = ffi.cast("void*", c.add_stream(s))

    @c.export
    def hipStreamCreate(stream):
        new_stream(stream)

    @c.export
    def hipStreamCreateWithFlags(stream, flags):
        new_stream(stream, flags)

    @c.export
    def hipStreamCreateWithPriority(stream, flags, priority):
        new_stream(stream, flags, max(-1, min(1, int(priority))))     # High -1, Normal 0, Low 1 (ROCclr)

    @c.export
    def hipStreamDestroy(stream):
        s = c.stream_of(stream)
        if s is None:
            raise HipError(hipError_t.hipErrorInvalidHandle, "cannot destroy the null stream")
        if s == 2:
            raise HipError(hipError_t.hipErrorInvalidResourceHandle, "cannot destroy hipStreamPerThread")
        s.destroy()
        c.streams.pop(id(s), None)

    @c.export
    def pyhip_slow_hipStreamSynchronize(stream):
        # hipStreamSynchronize (fastlaunch.c) when the stream's device is not armed for a native synchronize
        st = c.stream(stream)
        st.check_not_capturing()
        st.synchronize()

    @c.export
    def hipStreamQuery(stream):
        st = c.stream(stream)
        st.check_not_capturing()
        if not st.query():
            return int(hipError_t.hipErrorNotReady)

    @c.export
    def hipStreamWaitEvent(stream, event, flags):
        c.check(H.hipStreamWaitEvent(c.stream(stream), c.obj(event, Event), int(flags)))

    @c.export
    def hipStreamAddCallback(stream, callback, user_data, flags):
        if callback == ffi.NULL:
            raise invalid("null callback")
        if int(flags) != 0:
            raise invalid("flags must be 0")
        st = c.stream(stream)
        handle = stream
        fn = ffi.cast("void(*)(void*, int, void*)", callback)

        def call():
            fn(handle, 0, user_data)
        st.host_op(call, "callback")

    @c.export
    def hipEventCreate(event):
        c.new_handle(event, Event())

    @c.export
    def hipEventCreateWithFlags(event, flags):
        c.new_handle(event, Event(int(flags)))

    @c.export
    def hipEventRecord(event, stream):
        if event == ffi.NULL:
            raise HipError(hipError_t.hipErrorInvalidHandle, "null event")
        c.obj(event, Event).record(c.stream(stream))

    @c.export
    def hipEventSynchronize(event):
        c.obj(event, Event).synchronize()

    @c.export
    def hipEventQuery(event):
        if not c.obj(event, Event).query():
            return int(hipError_t.hipErrorNotReady)

    @c.export
    def hipEventElapsedTime(ms, start, stop):
        c.need(ms)
        if start == ffi.NULL or stop == ffi.NULL:
            raise HipError(hipError_t.hipErrorInvalidHandle, "null event")
        ms[0] = c.obj(start, Event).elapsed_ms(c.obj(stop, Event))

    @c.export
    def hipEventDestroy(event):
        c.obj(event, Event).destroyed = True
        c.objects.pop(c.addr(event), None)
