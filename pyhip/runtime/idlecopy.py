"""Copies and fills done at once by the calling thread, when the stream they go to has nothing to wait for.

A device is *armed* (Device.arm_sync) when a synchronize left it idle with nothing to report and, since then,
only native launches reached it: its work is then exactly what its native launch counter counts.  A
synchronous ``hipMemcpy`` / ``hipMemset`` on such a device waits for that counter (one native call:
Device.sync_if_armed) and then copies or fills in the calling thread, in native code (``pyhip_copy_bytes`` /
``pyhip_fill_bytes``, GIL released): no packet, no processor thread, no Python beyond the call.  An
asynchronous one does the same when the counter is already 0 (the stream is idle: the copy is complete
before anything else could be ordered after it).  The device stays armed: nothing was queued.

Taken only for what the full path (runtime/copies.py) would do with no check failing: 1-D, a stream that
does not capture, each side a contiguous Python buffer of at least ``nbytes`` (writable for the destination)
or an address inside one allocation of the stream's device (device memory, pinned or registered host memory
mapped into it) or — one side — plain host memory.  Everything else returns False and takes the full path,
which checks and reports as it always did.
"""
from __future__ import annotations

import contextlib

import numpy as np

from ..aql.native import ffi, lib
from .context import runtime
from .memory import as_address
from .stream import Stream

_BUFFERS = (bytes, bytearray, memoryview)
_UNPINNED = contextlib.nullcontext()


def _pinned(memory):
    """Hold a growable arena in place while raw pointers into it are used (a reserved one never moves)."""
    return _UNPINNED if getattr(memory, "_fixed_arena", False) else memory.pinned()


def _armed_stream(stream, wait: bool):
    """The stream ``stream`` names if its device is armed and idle (``wait``: after waiting for its native
    launches), else None."""
    if stream is None:
        st = runtime().device().null_stream
    elif type(stream) is Stream and not stream.destroyed:
        st = stream
    else:
        return None
    dev = st.device
    if st.capture is not None or dev._armed is None:
        return None
    ok = dev.sync_if_armed() if wait else dev.idle_if_armed()
    return st if ok else None


def _buffer(p, n: int, writable: bool):
    """A cdata over the first bytes of buffer ``p`` (numpy array, bytes, bytearray, memoryview), or None."""
    try:
        b = ffi.from_buffer(p, require_writable=writable)
    except (TypeError, ValueError, BufferError):
        return None                                 # not contiguous, read-only: the full path reports it
    return b if len(b) >= n else None


def _address(backend, p, n: int):
    """``(cdata or host address, in device memory)`` of ``n`` bytes at pointer ``p``: in one allocation of
    ``backend``'s device, or host memory (plain, or pinned: mapped into the devices at its own address) outside
    every device's range; None for anything else."""
    addr = p if type(p) is int else as_address(p)
    if not addr:
        return None
    if backend.in_device_range(addr):
        host = backend.memory.host_range(addr, n)   # None outside an allocation: the full path reports it
        return None if host is None else (ffi.cast("void*", host), True)
    for dev in runtime().devices:
        if dev.backend.in_device_range(addr):
            return None                             # another device's memory
    return addr, False


def _place(backend, p, n: int, writable: bool):
    """``(cdata, in device memory)`` or None."""
    if type(p) is np.ndarray or isinstance(p, _BUFFERS):
        b = _buffer(p, n, writable)
        return None if b is None else (b, False)
    a = _address(backend, p, n)
    if a is None:
        return None
    return a if a[1] else (ffi.cast("void*", a[0]), False)


def copy_now(dst, src, nbytes: int, kind: int, stream, sync: bool) -> bool:
    """A 1-D copy done here (see the module doc); False: the caller takes the full path."""
    if nbytes <= 0 or not isinstance(kind, int) or not 0 <= kind <= 4:
        return False
    st = _armed_stream(stream, sync)
    if st is None:
        return False
    backend = st.device.backend
    with _pinned(backend.memory):                   # a growable arena does not move meanwhile
        d = _place(backend, dst, nbytes, True)
        s = _place(backend, src, nbytes, False) if d is not None else None
        if s is None or not (d[1] or s[1]):         # host to host: the kind rules (the full path)
            return False
        lib.pyhip_copy_bytes(d[0], s[0], nbytes)
    return True


def fill_now(dst, value: int, count: int, width: int, stream, sync: bool) -> bool:
    """A 1-D fill of ``count`` ``width``-byte elements done here; False: the full path."""
    if count <= 0 or width not in (1, 2, 4, 8):
        return False
    st = _armed_stream(stream, sync)
    if st is None:
        return False
    backend = st.device.backend
    with _pinned(backend.memory):
        a = _address(backend, dst, count * width)
        if a is None or not a[1]:
            return False                            # host memory, outside an allocation: the full path
        lib.pyhip_fill_bytes(a[0], int(value) & ((1 << (8 * width)) - 1), count, width)
    return True
