"""initcheck: reads of device memory that nothing wrote, per byte (docs/check.md).

A shadow of each device memory's arena (one byte per byte, reserved like the arena: pages cost memory only
once touched) says which bytes of hipMalloc'd (``user``) allocations were written since they were allocated:
host writes, copies and fills through device memory (``write`` / ``copy`` / ``fill``), host access through a
raw pointer or view of it (``host_address`` / ``view``: assumed to write), and kernel stores and atomics of the
numpy engine (``scatter``); a kernel load (``gather``) of a byte not written is reported at its instruction.
Other allocations (the runtime's: code, kernel arguments, queues) and allocations live when the check was
turned on count as written.  The native engine marks and reads the same shadow in its handlers (native/engine/
state.h ``g_init``; pyhip/sanitizer/native.py ``arm_init`` tells it where each shadow is)."""
from __future__ import annotations

import numpy as np

from .memcheck import allocation


class Shadow:
    """Which bytes of ``memory``'s arena were written (1) since their allocation."""

    def __init__(self, memory, on_read):
        from ..emu.memory import reserve
        got = reserve(len(memory.arena))
        self.bits = got[0] if got is not None else np.zeros(len(memory.arena), dtype=np.uint8)
        self._mapping = got[1] if got is not None else None
        self.memory, self.on_read = memory, on_read
        for start, (end, _size, _kind, ext) in list(memory.table.items()):
            if ext is None:                     # live before the check: their history is unknown
                self.wrote(start - memory.base, memory.spans.get(start, end - start))

    def allocated(self, off: int, size: int, span: int, kind: str) -> None:
        """A new allocation of ``size`` bytes owning ``span`` bytes of address space: bytes past its end are
        memcheck's (out of bounds), not initcheck's."""
        self.bits[off:off + size] = 0 if kind == "user" else 1
        self.bits[off + size:off + span] = 1

    def unwritten(self, off: int, size: int) -> None:
        """Bytes the runtime zeroed for itself (a fresh array's texels): no write of the program's."""
        self.bits[off:off + size] = 0

    def wrote(self, off: int, size: int) -> None:
        self.bits[off:off + size] = 1

    def wrote_lanes(self, offs: np.ndarray, size: int) -> None:
        self.bits[offs[:, None] + np.arange(size)] = 1

    def read_lanes(self, addrs: np.ndarray, offs: np.ndarray, size: int) -> None:
        got = self.bits[offs[:, None] + np.arange(size)]
        bad = ~got.all(axis=1)
        if bad.any():
            self.on_read(self.memory, addrs, size, bad, got)


def report(memory, address: int, size: int, unwritten: int, ctx: dict) -> dict:
    """The report of a ``size``-byte read at ``address`` of which ``unwritten`` bytes nothing wrote."""
    r = {"checker": "initcheck", "kind": "uninitialized-read",
         "message": f"{size}-byte read of which {unwritten} byte(s) nothing wrote since the allocation"}
    for k in ("kernel", "workgroup", "wave", "lane", "pc", "instruction"):
        if ctx.get(k) is not None:
            r[k] = list(ctx[k]) if isinstance(ctx[k], tuple) else ctx[k]
    r["address"] = address
    r["access"] = f"{size} bytes, read"
    hit = memory.find(address)
    if hit is not None:
        start, end, kind = hit
        r["allocation"] = allocation(start, end - start, kind, memory.origins.get(start))
        r["message"] += f" (byte {address - start} of a {end - start}-byte allocation)"
    return r
