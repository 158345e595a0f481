"""Pitched allocations (hipMallocPitch, hipMalloc3D): the geometry each was made with, by address.  hipMemset2D
bounds the rows it fills by it (hipapi/memory2d.py); hipFree forgets it (ops.py)."""
from __future__ import annotations


class PitchedAllocations:
    """The runtime's table of pitched allocations: address -> (pitch, width, height, depth)."""

    def __init__(self):
        self._geometry: dict[int, tuple[int, int, int, int]] = {}

    def record(self, address: int, pitch: int, width: int, height: int, depth: int) -> None:
        self._geometry[address] = (pitch, width, height, depth)

    def geometry(self, address: int) -> tuple[int, int, int, int] | None:
        """(pitch, width, height, depth) of the pitched allocation at ``address``, None for other memory."""
        return self._geometry.get(address)

    def forget(self, address: int) -> None:
        self._geometry.pop(address, None)

    def clear(self) -> None:
        self._geometry.clear()
