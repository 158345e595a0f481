"""HSA AQL packets (64 bytes each), byte-exact: kernel dispatch, barrier-AND/OR, agent dispatch and
AMD's barrier-value packet.  Layouts: docs/code-object.md §8.1-§8.3 (ROCm 5.2 ``hsa.h``)."""
from __future__ import annotations

import struct
from dataclasses import dataclass

PACKET_SIZE = 64

# header (u16) bit fields
TYPE_VENDOR, TYPE_INVALID, TYPE_KERNEL_DISPATCH, TYPE_BARRIER_AND, TYPE_AGENT_DISPATCH, TYPE_BARRIER_OR = range(6)
HEADER_TYPE_SHIFT, HEADER_BARRIER_SHIFT = 0, 8
HEADER_ACQUIRE_SHIFT, HEADER_RELEASE_SHIFT = 9, 11
FENCE_NONE, FENCE_AGENT, FENCE_SYSTEM = 0, 1, 2

# Agent-dispatch ``type`` codes used by pyhip (HSA reserves 0x8000+ for the vendor / application):
#   AGENT_NOP      0x8000  nothing (a stream-ordered marker; still completes its signal)
#   AGENT_COPY     0x8001  arg0 dst, arg1 src, arg2 size in bytes          -> agent.copy(dst, src, size)
#   AGENT_FILL     0x8002  arg0 dst, arg1 value, arg2 element count, arg3 element width (1, 2, 4, 8 bytes)
#                                                                         -> agent.fill(dst, value, count, width)
#   AGENT_CALLBACK 0x8003  arg0 id from PacketProcessor.register_callback  -> fn() on the processor thread
#   AGENT_HOST_COPY 0x8004 arg0 dst, arg1 src, arg2 size: both *host* addresses of this process's memory
#                                                                         -> memmove by the processor itself
AGENT_NOP, AGENT_COPY, AGENT_FILL, AGENT_CALLBACK, AGENT_HOST_COPY = 0x8000, 0x8001, 0x8002, 0x8003, 0x8004

_DISPATCH = struct.Struct("<HHHHHHIIIIIQQQQ")
_BARRIER = struct.Struct("<HHI5QQQ")
_AGENT = struct.Struct("<HHIQ4QQQ")
_BARRIER_VALUE = struct.Struct("<HBBIQqqI20xQ")


def header(ptype: int, barrier: bool = True, acquire: int = FENCE_SYSTEM, release: int = FENCE_SYSTEM) -> int:
    return (ptype << HEADER_TYPE_SHIFT) | (int(barrier) << HEADER_BARRIER_SHIFT) | \
        (acquire << HEADER_ACQUIRE_SHIFT) | (release << HEADER_RELEASE_SHIFT)


def header_fields(h: int) -> tuple[int, bool, int, int]:
    return h & 0xFF, bool(h >> 8 & 1), h >> 9 & 3, h >> 11 & 3


@dataclass
class KernelDispatchPacket:
    setup_dims: int
    workgroup_size: tuple[int, int, int]
    grid_size: tuple[int, int, int]
    private_segment_size: int
    group_segment_size: int
    kernel_object: int
    kernarg_address: int
    completion_signal: int = 0
    header: int = header(TYPE_KERNEL_DISPATCH)

    def pack(self) -> bytes:
        return _DISPATCH.pack(self.header, self.setup_dims & 3, *self.workgroup_size, 0, *self.grid_size,
                              self.private_segment_size, self.group_segment_size, self.kernel_object,
                              self.kernarg_address, 0, self.completion_signal)

    @classmethod
    def unpack(cls, b: bytes) -> "KernelDispatchPacket":
        h, setup, wx, wy, wz, _, gx, gy, gz, priv, group, ko, ka, _, sig = _DISPATCH.unpack(b)
        return cls(setup & 3, (wx, wy, wz), (gx, gy, gz), priv, group, ko, ka, sig, h)


@dataclass
class BarrierPacket:
    dep_signals: tuple[int, ...]
    completion_signal: int = 0
    kind: int = TYPE_BARRIER_AND
    header: int | None = None

    def pack(self) -> bytes:
        deps = list(self.dep_signals)[:5]
        if len(self.dep_signals) > 5:
            raise ValueError("a barrier packet holds at most 5 dependency signals")
        deps += [0] * (5 - len(deps))
        h = self.header if self.header is not None else header(self.kind)
        return _BARRIER.pack(h, 0, 0, *deps, 0, self.completion_signal)

    @classmethod
    def unpack(cls, b: bytes) -> "BarrierPacket":
        h, _, _, d0, d1, d2, d3, d4, _, sig = _BARRIER.unpack(b)
        return cls((d0, d1, d2, d3, d4), sig, h & 0xFF, h)


@dataclass
class AgentDispatchPacket:
    type: int
    args: tuple[int, int, int, int]
    return_address: int = 0
    completion_signal: int = 0
    header: int = header(TYPE_AGENT_DISPATCH)

    def pack(self) -> bytes:
        return _AGENT.pack(self.header, self.type, 0, self.return_address, *self.args, 0, self.completion_signal)

    @classmethod
    def unpack(cls, b: bytes) -> "AgentDispatchPacket":
        h, typ, _, ret, a0, a1, a2, a3, _, sig = _AGENT.unpack(b)
        return cls(typ, (a0, a1, a2, a3), ret, sig, h)


BV_EQ, BV_NE, BV_LT, BV_GTE = range(4)


@dataclass
class BarrierValuePacket:
    """AMD vendor packet (type 0, AmdFormat 2): wait until ``(signal & mask) cond value``."""
    signal: int
    value: int
    mask: int
    condition: int
    completion_signal: int = 0
    header: int = header(TYPE_VENDOR)

    def pack(self) -> bytes:
        return _BARRIER_VALUE.pack(self.header, 2, 0, 0, self.signal, self.value, self.mask, self.condition,
                                   self.completion_signal)

    @classmethod
    def unpack(cls, b: bytes) -> "BarrierValuePacket":
        h, fmt, _, _, sig, val, mask, cond, comp = _BARRIER_VALUE.unpack(b)
        return cls(sig, val, mask, cond, comp, h)


def decode(b: bytes):
    """Any published packet → its dataclass (by header type; vendor packets must be barrier-value)."""
    t = b[0]
    if t == TYPE_KERNEL_DISPATCH:
        return KernelDispatchPacket.unpack(b)
    if t in (TYPE_BARRIER_AND, TYPE_BARRIER_OR):
        return BarrierPacket.unpack(b)
    if t == TYPE_AGENT_DISPATCH:
        return AgentDispatchPacket.unpack(b)
    if t == TYPE_VENDOR and b[2] == 2:
        return BarrierValuePacket.unpack(b)
    raise ValueError(f"unsupported AQL packet type {t}")


for _s in (_DISPATCH, _BARRIER, _AGENT, _BARRIER_VALUE):
    assert _s.size == PACKET_SIZE, _s.size
