"""What a packet processor needs from the device it feeds (the emulated GPU implements it).

    class Agent(Protocol):
        def dispatch_kernel(self, packet: KernelDispatchPacket, packet_address: int, queue: Queue) -> None
        def copy(self, dst: int, src: int, size: int) -> None
        def fill(self, dst: int, value: int, count: int, width: int) -> None

Each method raises on a fault (for kernels: a ``pyhip.errors.HipError`` carrying the fault report); the
processor records the exception on the packet's completion signal and keeps going.
"""
from __future__ import annotations

from typing import Protocol

from .packets import KernelDispatchPacket


class Agent(Protocol):
    def dispatch_kernel(self, packet: KernelDispatchPacket, packet_address: int, queue) -> None: ...

    def copy(self, dst: int, src: int, size: int) -> None: ...

    def fill(self, dst: int, value: int, count: int, width: int) -> None: ...
