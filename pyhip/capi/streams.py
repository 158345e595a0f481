"""The C ABI's streams, events and host callbacks: creation, flags and priorities, the _spt forms (the null
stream standing for the thread's per-thread default stream, symbol copies included), CU masks, IPC event
handles, a stream's device.  Results and checks follow clr's hip_stream.cpp / hip_event.cpp."""
from __future__ import annotations

from ..errors import HipError, hipError_t
from ..hipapi import ipc, streams as api
from ..runtime import ops
from ..runtime.event import Event
from .common import c, export, export_raw, invalid
from .memory import symbol_address


PER_THREAD = 2


def new_stream(out, flags=0, priority=0):
    c.need(out)
    out[0] = c.ffi.cast("void*", c.add_stream(api.stream_create(flags, priority)))


@export
def hipStreamCreate(stream):
    new_stream(stream)


@export
def hipStreamCreateWithFlags(stream, flags):
    new_stream(stream, flags)


@export
def hipStreamCreateWithPriority(stream, flags, priority):
    new_stream(stream, flags, priority)


@export
def hipStreamDestroy(stream):
    s = c.stream_of(stream)
    api.stream_destroy(s)
    c.streams.pop(id(s), None)


@export
def pyhip_slow_hipStreamSynchronize(stream):
    # hipStreamSynchronize (fastlaunch.c) when the stream's device is not armed for a native synchronize
    api.stream_synchronize(c.stream_of(stream))


@export
def hipStreamQuery(stream):
    api.stream_query(c.stream_of(stream))


@export
def hipStreamWaitEvent(stream, event, flags):
    api.stream_wait_event(c.stream_of(stream), c.obj(event, Event), flags)


@export
def hipStreamAddCallback(stream, callback, user_data, flags):
    fn = c.ffi.cast("void(*)(void*, int, void*)", callback)
    make_call = None if callback == c.ffi.NULL else (lambda st: lambda: fn(stream, 0, user_data))
    api.stream_add_callback(c.stream_of(stream), flags, make_call)


def new_event(out, flags=0):
    ev = api.event_create(flags)
    c.new_handle(out, ev)
    if not ev.flags & 4:                        # (hipEventInterprocess: records shared, in Python)
        c.fast.register_event(id(ev), ev)       # records, queries, waits in C (fastlaunch.c)


@export
def hipEventCreate(event):
    new_event(event)


@export
def hipEventCreateWithFlags(event, flags):
    new_event(event, int(flags))


# hipEventRecord / Query / Synchronize / ElapsedTime: in C (fastlaunch.c) for events recorded natively,
# here for everything else
@export
def pyhip_slow_hipEventRecord(event, stream):
    if event == c.ffi.NULL:
        raise HipError(hipError_t.hipErrorInvalidHandle, "null event")
    api.event_record(c.obj(event, Event), c.stream_of(stream))


@export
def pyhip_slow_hipEventSynchronize(event):
    api.event_synchronize(c.obj(event, Event))


@export
def pyhip_slow_hipEventQuery(event):
    api.event_query(c.obj(event, Event))


@export
def pyhip_slow_hipEventElapsedTime(ms, start, stop):
    c.need(ms)
    ms[0] = api.event_elapsed_ms(c.obj(start, Event), c.obj(stop, Event))


@export
def hipEventDestroy(event):
    ev = c.obj(event, Event)
    c.fast.unregister_event(c.addr(event), ev)
    api.event_destroy(ev)
    c.objects.pop(c.addr(event), None)


@export_raw("hipGetStreamDeviceId")
def get_stream_device_id(stream):
    try:
        return c.stream(stream).device.index
    except Exception:  # noqa: BLE001
        return -1


def pt(stream):
    """The _spt rule: the null stream means this thread's per-thread default stream."""
    return stream if c.addr(stream) else c.ffi.cast("void*", PER_THREAD)


@export
def hipStreamGetFlags(stream, flags):
    c.need(flags)
    flags[0] = api.stream_flags(c.stream_of(stream))


@export
def hipStreamGetFlags_spt(stream, flags):
    return hipStreamGetFlags(pt(stream), flags)


@export
def hipStreamGetPriority(stream, priority):
    c.need(priority)
    priority[0] = api.stream_priority(c.stream_of(stream))


@export
def hipStreamGetPriority_spt(stream, priority):
    return hipStreamGetPriority(pt(stream), priority)


@export
def hipStreamQuery_spt(stream):
    return hipStreamQuery(pt(stream))


@export
def hipStreamSynchronize_spt(stream):
    return pyhip_slow_hipStreamSynchronize(pt(stream))


@export
def hipStreamWaitEvent_spt(stream, event, flags):
    return hipStreamWaitEvent(pt(stream), event, flags)


@export
def hipMemcpyToSymbol_spt(symbol, src, size, offset, kind):
    ops.memcpy(symbol_address(symbol, offset, size), c.addr(src), size, kind, PER_THREAD, sync=True)


@export
def hipMemcpyFromSymbol_spt(dst, symbol, size, offset, kind):
    ops.memcpy(c.addr(dst), symbol_address(symbol, offset, size), size, kind, PER_THREAD, sync=True)


# -- CU masks (recorded; every CU of the emulated device runs every dispatch) ------------------------------
@export
def hipExtStreamCreateWithCUMask(stream, size, mask):
    if stream == c.ffi.NULL:
        raise HipError(hipError_t.hipErrorInvalidHandle, "null stream pointer")
    if int(size) == 0 or mask == c.ffi.NULL:
        raise invalid("empty CU mask")
    s = c.rt.device().new_stream()
    s.cu_mask = [int(mask[i]) for i in range(int(size))]
    stream[0] = c.ffi.cast("void*", c.add_stream(s))


@export
def hipExtStreamGetCUMask(stream, size, mask):
    c.need(mask)
    cus = c.rt.device().props.multiProcessorCount
    words = -(-cus // 32)
    if int(size) < words:
        raise invalid(f"the mask needs {words} words")
    full = [0xFFFFFFFF] * (cus // 32) + ([(1 << (cus % 32)) - 1] if cus % 32 else [])
    st = c.stream(stream)
    got = getattr(st, "cu_mask", None) or full
    got = [g & f for g, f in zip(got + [0] * words, full)]
    if not any(got):
        got = full
    for i in range(int(size)):
        mask[i] = got[i] if i < len(got) else 0


# -- IPC event handles: events shared with other processes (pyhip/hipapi/ipc.py)
@export
def hipIpcGetEventHandle(handle, event):
    c.need(handle)
    c.ffi.memmove(handle, ipc.get_event_handle(c.objects.get(c.addr(event))), ipc.HANDLE_SIZE)


@export
def hipIpcOpenEventHandle(event, handle):
    c.need(event)
    c.new_handle(event, ipc.open_event_handle(bytes(c.ffi.buffer(c.ffi.addressof(handle), ipc.HANDLE_SIZE))))
