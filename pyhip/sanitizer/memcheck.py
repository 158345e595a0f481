"""memcheck: what a dispatch's memory fault was, in the terms of the allocations it concerns.

While memcheck is on, device memory checks lanes against exact allocation ends and keeps freed allocations
unreused (pyhip/emu/memory.py ``set_memcheck``), so every access outside a live allocation's bytes faults —
including those a GPU lets through (past the end but inside the allocation's last page) and those that
reach memory that was freed.  The fault is then classified here against the allocation table and the
quarantine."""
from __future__ import annotations

from .origin import describe

KINDS = ("use-after-free", "out-of-bounds", "invalid-address", "misaligned-atomic", "lds-out-of-bounds",
         "scratch-out-of-bounds")


def lds_report(offset: int, size: int, write: bool, lds_size: int, lds_alloc: int, ctx: dict) -> dict:
    """A report of a lane's LDS access at byte ``offset`` past the workgroup's group segment (``lds_size``
    bytes; the hardware allocated ``lds_alloc``), at ``ctx`` (kernel, workgroup, wave, lane, pc ...).  The
    access was done as the GPU does it: performed inside the allocation, else a read of 0 / a dropped write."""
    if offset + size <= lds_alloc:
        what = f"inside the {lds_alloc} bytes the hardware allocates for it: performed, a GPU would not fault"
    else:
        what = (f"beyond the {lds_alloc} bytes the hardware allocates for it: a GPU "
                + ("drops the write" if write else "reads 0") + " and does not fault")
    r = {"checker": "memcheck", "kind": "lds-out-of-bounds",
         "message": f"LDS access at byte {offset} of the workgroup's {lds_size}-byte group segment ({what})"}
    for k in ("kernel", "workgroup", "wave", "lane", "pc", "instruction"):
        if ctx.get(k) is not None:
            r[k] = ctx[k]
    r["address"] = offset
    r["access"] = f"{size} bytes, {'write' if write else 'read'}"
    r["allocation"] = {"start": 0, "size": lds_size, "kind": "LDS of the workgroup"}
    return r


def allocation(start: int, size: int, kind: str, allocated=None, freed=None) -> dict:
    a = {"start": start, "size": size, "kind": kind}
    if allocated is not None:
        a["allocated"] = describe(allocated)
    if freed is not None:
        a["freed"] = describe(freed)
    return a


def classify(memory, fault) -> tuple[str, str, dict | None] | None:
    """``(kind, message, allocation)`` of a memory fault, or None for a fault memcheck does not own (trap,
    watchdog, bad instruction ...)."""
    msg = fault.message.split(";")[0]
    addr = fault.address
    if msg.startswith("misaligned") and "atomic" in msg:
        return "misaligned-atomic", msg, None
    if msg.startswith("LDS ") and "out of range" in msg:
        return "lds-out-of-bounds", msg, None
    if msg.startswith("scratch") and "out of range" in msg:
        return "scratch-out-of-bounds", msg, None
    if not msg.startswith("memory access outside any allocation") or addr is None:
        return None
    f = memory.freed_at(addr)
    if f is not None:
        return ("use-after-free", f"access at byte {addr - f.start} of a {f.size}-byte allocation that was freed",
                allocation(f.start, f.size, f.kind, f.allocated, f.freed))
    near = memory.nearest(addr)
    if near is not None:
        start, end, pages_end, kind = near
        alloc = allocation(start, end - start, kind, memory.origins.get(start))
        if addr < end:                          # a live allocation's bytes the faulting device does not map
            return ("invalid-address", f"access at byte {addr - start} of a {end - start}-byte allocation of memory "
                    "this device has no access to (another device's, without peer access)", alloc)
        where = f"access at byte {addr - start} of a {end - start}-byte allocation ({addr - end} bytes past its end"
        if addr < pages_end:
            return "out-of-bounds", where + "; inside the address space it owns: a GPU would not fault)", alloc
        if addr < pages_end + (1 << 20):
            return "out-of-bounds", where + ")", alloc
    return "invalid-address", "address outside any allocation", None
