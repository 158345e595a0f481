"""The C ABI's stream memory operations: hipStreamWaitValue32/64, hipStreamWriteValue32/64 (the rules are
runtime/memops.py's, as clr's hip_stream_ops.cpp)."""
from __future__ import annotations

from ..runtime import memops
from .common import c, export


def wait_value(stream, ptr, value, flags, mask, width):
    memops.wait_value(c.stream_of(stream), c.addr(ptr), value, flags, mask, width)


def write_value(stream, ptr, value, width):
    memops.write_value(c.stream_of(stream), c.addr(ptr), value, width)


@export
def hipStreamWaitValue32(stream, ptr, value, flags, mask):
    wait_value(stream, ptr, value, flags, mask, 4)


@export
def hipStreamWaitValue64(stream, ptr, value, flags, mask):
    wait_value(stream, ptr, value, flags, mask, 8)


@export
def hipStreamWriteValue32(stream, ptr, value, flags):
    write_value(stream, ptr, value, 4)


@export
def hipStreamWriteValue64(stream, ptr, value, flags):
    write_value(stream, ptr, value, 8)
