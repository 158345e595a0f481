"""Stream memory operations (hipStreamWaitValue32/64, hipStreamWriteValue32/64): a 32- or 64-bit word in
device, pinned, registered or signal memory, waited for or written in stream order (clr's hip_stream_ops.cpp;
on a GPU these are AQL barrier-value / write packets, here host operations of the stream's queue)."""
from __future__ import annotations

import time

import numpy as np

from ..errors import HipError, hipError_t
from .context import runtime

WAIT_GEQ, WAIT_EQ, WAIT_AND, WAIT_NOR = 0, 1, 2, 3


def _cell(address: int, width: int):
    from .copies import locate

    if not address:
        raise HipError(hipError_t.hipErrorInvalidValue, "null pointer")
    place = locate(address)
    place.check(width)
    return place


def compare(current: int, value: int, flags: int, mask: int, width: int) -> bool:
    """Whether a wait with ``flags`` (hipStreamWaitValueGte/Eq/And/Nor) is satisfied by ``current``."""
    full = (1 << (8 * width)) - 1
    cur, v = current & mask, value & mask
    if flags == WAIT_GEQ:
        return cur >= v
    if flags == WAIT_EQ:
        return cur == v
    if flags == WAIT_AND:
        return cur & v != 0
    return ~(cur | v) & full != 0


def wait_value(stream, address: int, value: int, flags: int, mask: int, width: int) -> None:
    """Later work of ``stream`` waits until the word at ``address`` satisfies the comparison."""
    if int(flags) not in (WAIT_GEQ, WAIT_EQ, WAIT_AND, WAIT_NOR):
        raise HipError(hipError_t.hipErrorInvalidValue, f"invalid wait flags {int(flags)}")
    place = _cell(int(address), width)
    st = runtime().resolve_stream(stream)
    value, mask, flags = int(value), int(mask), int(flags)

    def op():
        delay = 1e-5
        while not compare(int.from_bytes(place.view(width).tobytes(), "little"), value, flags, mask, width):
            time.sleep(delay)
            delay = min(delay * 2, 2e-3)
    st.host_op(op, "wait value", keep=place.keep)


def write_value(stream, address: int, value: int, width: int) -> None:
    """``stream`` writes ``value`` to the word at ``address`` when it reaches this point."""
    place = _cell(int(address), width)
    st = runtime().resolve_stream(stream)
    data = (int(value) & ((1 << (8 * width)) - 1)).to_bytes(width, "little")

    def op():
        place.modify(width, lambda v: v.__setitem__(slice(None), np.frombuffer(data, np.uint8)))
    st.host_op(op, "write value", keep=place.keep)
