"""The protocol between a packet processor and the device it feeds (the emulated GPU implements it).

    class Agent(Protocol):
        def dispatch_kernel(self, packet: KernelDispatchPacket, packet_address: int, queue: Queue) -> None
        def copy(self, dst: int, src: int, size: int) -> None
        def fill(self, dst: int, value: int, count: int, width: int) -> None
        # optional:
        def acquire_fence(self, scope: int) -> None      # FENCE_AGENT (1) / FENCE_SYSTEM (2), before a packet
        def release_fence(self, scope: int) -> None      # after it, before its completion signal

Calls come from the queue's processor thread, one at a time per queue (several queues may call one agent
concurrently), in queue order, and are synchronous: return when the work is done.

* ``dispatch_kernel``: run the grid of ``packet`` (a decoded :class:`KernelDispatchPacket`; grid sizes in
  work-items).  ``packet_address`` is the packet's slot in the ring (what the hardware passes as
  ``dispatch_ptr``; it stays valid and unchanged until the call returns), ``queue.address`` is the
  ``amd_queue_t`` (``queue_ptr``), ``queue.amd_queue.buffer()`` its 256 bytes.
* ``copy`` / ``fill``: memory operations on device addresses for AGENT_COPY / AGENT_FILL packets
  (``count`` elements of ``width`` bytes, ``value`` truncated to the width, little-endian).

Raise on a fault (for kernels: a ``pyhip.errors.HipError`` / GPU fault carrying the report and an integer
``code``).  The processor stores the exception on the packet's completion signal (``Signal.error``, code @56),
records a :class:`~pyhip.aql.processor.Fault`, decrements the signal and goes on with the next packet.
"""
from __future__ import annotations

from typing import Protocol, runtime_checkable

from .packets import KernelDispatchPacket


@runtime_checkable
class Agent(Protocol):
    def dispatch_kernel(self, packet: KernelDispatchPacket, packet_address: int, queue) -> None: ...

    def copy(self, dst: int, src: int, size: int) -> None: ...

    def fill(self, dst: int, value: int, count: int, width: int) -> None: ...


class NullAgent:
    """Does nothing (benchmarks: the cost of the AQL path alone)."""

    def dispatch_kernel(self, packet, packet_address: int, queue) -> None:
        pass

    def copy(self, dst: int, src: int, size: int) -> None:
        pass

    def fill(self, dst: int, value: int, count: int, width: int) -> None:
        pass
