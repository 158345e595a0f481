"""HIP IPC: device memory and events shared with other processes (hipIpcGetMemHandle / OpenMemHandle /
CloseMemHandle, hipIpcGetEventHandle / OpenEventHandle); handles are 64 bytes; the mechanism is
pyhip/runtime/ipc.py."""
from __future__ import annotations

import threading

from .._hip_enums import hipMemoryType
from ..errors import HipError, hipError_t
from ..runtime import ipc
from ..runtime.context import runtime
from ..runtime.event import Event, hipEventDisableTiming, hipEventInterprocess
from ..runtime.ipc import HANDLE_SIZE  # noqa: F401  (the faces' size of a handle)
from . import invalid
from .memory import attributes
from .streams import event


def get_mem_handle(addr: int) -> bytes:
    """The handle of the device allocation ``addr`` lies in."""
    if not addr:
        raise invalid("null pointer")
    a = attributes(addr)
    if a.memoryType != int(hipMemoryType.hipMemoryTypeDevice):
        raise invalid("not device memory")
    return ipc.mem_handle(runtime().device(a.device), a.start, a.size, addr - a.start)


def open_mem_handle(handle: bytes, flags: int) -> int:
    """Where the current device maps the handle's memory (the same address for each open of one handle)."""
    if int(flags) != 0:                         # hipIpcMemLazyEnablePeerAccess is 0 in HIP 5.2
        raise invalid(f"flags {int(flags)}")
    return ipc.open_mem(runtime().device(), bytes(handle))


def close_mem_handle(addr: int) -> None:
    ipc.close_mem(addr)


def get_event_handle(ev) -> bytes:
    """HIP 5.2's codes: no event (null, destroyed, not an event) hipErrorInvalidValue; an event made without
    hipEventInterprocess hipErrorInvalidConfiguration."""
    if ev is None or not isinstance(ev, Event) or ev.destroyed:
        raise invalid(f"not an event: {ev!r}")
    ev = event(ev)
    if not ev.flags & hipEventInterprocess:
        raise HipError(hipError_t.hipErrorInvalidConfiguration, "the event was not created with hipEventInterprocess")
    if ev.shared is None:
        shared = ipc.SharedCounter.create()
        cmd = ev.command
        if cmd is not None and not cmd.done():  # recorded already: the other processes wait for that record too
            seq = shared.begin()
            threading.Thread(target=lambda: (cmd.signal.wait(None), shared.complete(seq)), daemon=True,
                             name="pyhip IPC event").start()
        ev.shared = shared
    return ipc.event_handle(ev.shared)


def open_event_handle(handle: bytes) -> Event:
    """An event of the current device whose records are shared with the handle's process."""
    shared = ipc.open_event(bytes(handle))
    ev = Event(hipEventInterprocess | hipEventDisableTiming)
    ev.shared = shared
    return ev
