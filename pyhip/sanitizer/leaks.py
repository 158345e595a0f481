"""leaks: device memory a program allocated and never freed, found when the checks end (at process exit for
``pyhip exec --check`` and ``PYHIP_CHECK``; at the end of the block for ``pyhip.check()``).  Only allocations
made while the check was on count (their origin was recorded then): hipMalloc and its variants (``user``),
managed memory and pinned host memory from hipHostMalloc; the runtime's own (code objects, kernel
arguments, queues; slabs of device malloc's heap, allocated on pyhip's hostcall thread) are not the
program's."""
from __future__ import annotations

from .memcheck import allocation

KINDS = ("user", "managed", "hostmalloc")


def find(memories) -> list[dict]:
    """One report per allocation still live, in address order."""
    out = []
    for m in memories:
        with m.lock:
            live = [(s, m.table[s], m.origins[s]) for s in m.starts if s in m.origins]
        for start, (end, _, kind, _), origin in live:
            if kind not in KINDS or (origin or {}).get("internal"):      # (a slab of device malloc's heap ...)
                continue
            size = end - start
            out.append({"checker": "leaks", "kind": "leak", "message": f"{size} bytes allocated and never freed",
                        "address": start, "allocation": allocation(start, size, kind, origin)})
    return out


def total(reports: list[dict]) -> str | None:
    """The summary line of the leak reports, or None when there are none."""
    leaks = [r for r in reports if r["checker"] == "leaks"]
    if not leaks:
        return None
    # (a device-heap leak is one report per malloc call site: its "bytes" and "blocks")
    return (f"pyhip check: leaks: {sum(r.get('bytes', r['allocation']['size']) for r in leaks)} bytes in "
            f"{sum(r.get('blocks', 1) for r in leaks)} allocation(s) never freed")
