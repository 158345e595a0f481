"""Device memory's layout and memcheck's two changes to it (pyhip/emu/memory.py): by default every allocation
owns whole 2 MiB fragments of address space (its lane region ends there) while the capacity is accounted in
4 KiB pages; under memcheck regions end exactly and freed allocations are quarantined (never reused, named
by ``freed_at``) until memcheck is turned off or the quarantine outgrows its limit."""
import itertools

import numpy as np
import pytest

from pyhip.emu import memory as M
from pyhip.emu.memory import DeviceMemory, GPUFault

RNG = np.random.default_rng(2027)


@pytest.fixture
def mem():
    m = DeviceMemory(1 << 30)
    yield m
    m.set_memcheck(False)


def _regions(m):
    starts, ends, _, _ = m._index
    return dict(zip(starts.tolist(), ends.tolist()))


def test_default_layout_fragments_and_page_accounting(mem):
    sizes = [int(x) for x in RNG.integers(1, 5 << 20, 12)]
    addrs = [mem.alloc(s) for s in sizes]
    reg = _regions(mem)
    for a, s in zip(addrs, sizes):
        span = -(-s // M.FRAGMENT) * M.FRAGMENT
        assert a % M.FRAGMENT == 0 and reg[a] == a + span
    ends = sorted((a, a + -(-s // M.FRAGMENT) * M.FRAGMENT) for a, s in zip(addrs, sizes))
    assert all(e <= b for (_, e), (b, _) in itertools.pairwise(ends))          # no two share address space
    assert mem.used == sum(-(-s // M.GRANULE) * M.GRANULE for s in sizes)
    # a lane access past the end but inside the fragment reads the allocation's padding; past it, a fault
    a, s = addrs[0], sizes[0]
    span = reg[a] - a
    assert (mem.gather(np.array([a + span - 4], np.uint64), 4) == 0).all()
    if not any(b == a + span for b in addrs):
        with pytest.raises(GPUFault):
            mem.gather(np.array([a + span], np.uint64), 4)


def test_memcheck_exact_ends_and_quarantine(mem):
    a = mem.alloc(1000)
    b = mem.alloc(3000)
    mem.set_memcheck(True, lambda event: {"event": event})
    assert _regions(mem)[a] == a + 1000 and _regions(mem)[b] == b + 3000
    with pytest.raises(GPUFault):
        mem.scatter(np.array([a + 1000], np.uint64), np.zeros((1, 1), np.uint8))
    c = mem.alloc(500)
    assert mem.origins[c] == {"event": "alloc"}
    mem.free(b)
    d = mem.alloc(3000)                           # the freed block is not reused while memcheck is on
    assert d != b and mem.freed_at(b + 2999).start == b and mem.freed_at(b).size == 3000
    assert mem.freed_at(b).freed == {"event": "free"} and mem.freed_at(d) is None
    with pytest.raises(GPUFault):
        mem.gather(np.array([b + 8], np.uint64), 4)
    mem.set_memcheck(False)                       # off: the quarantine goes back to the free list
    assert mem.quarantine == [] and mem.freed_at(b) is None and _regions(mem)[a] == a + M.FRAGMENT
    assert mem.alloc(3000) == b                   # first fit finds the released block
    assert mem.origins == {}


def test_quarantine_limit_releases_the_oldest(mem, monkeypatch):
    monkeypatch.setattr(M, "QUARANTINE_LIMIT", 3 * M.FRAGMENT)
    mem.set_memcheck(True)
    addrs = [mem.alloc(100) for _ in range(5)]
    for a in addrs:
        mem.free(a)
    assert [f.start for f in mem.quarantine] == addrs[2:]
    assert mem.freed_at(addrs[0]) is None and mem.freed_at(addrs[4]) is not None


def test_freed_memory_reads_zero_when_reused(mem):
    a = mem.alloc(8192)
    mem.write(a, RNG.integers(0, 256, 8192, dtype=np.uint8).tobytes())
    mem.gather(np.array([a + 5 * M.GRANULE], np.uint64), 4)            # padding, never written: zero
    mem.scatter(np.array([a + 5 * M.GRANULE], np.uint64), np.full((1, 4), 7, np.uint8))
    mem.free(a)
    b = mem.alloc(M.FRAGMENT)
    assert b == a and not mem.read(b, M.FRAGMENT).strip(b"\0")        # padding a kernel wrote is cleared too
