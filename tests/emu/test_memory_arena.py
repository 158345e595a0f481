"""The device memory arena: the whole capacity reserved up front (address space only) so it never moves under
a running native dispatch, allocations of never-used space touch no pages, and where the reservation is
refused the growable arena waits for dispatches holding raw pointers before it moves."""
import threading
import time

import numpy as np
import pytest

from pyhip.emu import memory as memmod
from pyhip.emu.memory import DeviceMemory


def _resident_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096


def test_the_arena_is_reserved_whole_and_never_moves():
    mem = DeviceMemory(64 << 30)
    arena, ptr = mem.arena, mem.arena.ctypes.data
    assert len(arena) == (64 << 30) + memmod.SPARE_ADDRESS_SPACE     # and room for the fragments' padding
    rss = _resident_bytes()
    big = mem.alloc(6 << 30)                     # beyond the 4 GiB a growable arena starts with
    small = mem.alloc(1000)
    assert mem.arena is arena and mem.arena.ctypes.data == ptr
    assert _resident_bytes() - rss < 256 << 20   # fresh space is zero already: nothing written
    data = np.random.default_rng(1).integers(0, 256, 4096, dtype=np.uint8)
    mem.write(big + (6 << 30) - 4096, data.tobytes())
    mem.write(small, data[:1000].tobytes())
    assert mem.read(big + (6 << 30) - 4096, 4096) == data.tobytes()
    assert mem.read(small, 1000) == data[:1000].tobytes()


def test_freed_pages_go_back_to_the_system():
    mem = DeviceMemory(16 << 30)
    rss = _resident_bytes()
    a = mem.alloc(512 << 20)
    mem.write(a, b"\x11" * (512 << 20))               # touched: resident
    assert _resident_bytes() - rss > 400 << 20
    mem.free(a)
    assert _resident_bytes() - rss < 64 << 20
    b = mem.alloc((512 << 20) - 100)                   # the same block again, zero
    assert b == a and not np.frombuffer(mem.read(b, (512 << 20) - 100), np.uint8).any()


def test_a_reused_block_reads_zero():
    mem = DeviceMemory(1 << 30)
    for size in (1 << 20, 1000, 70000):              # pages given back, and blocks cleared in place
        a = mem.alloc(size)
        mem.write(a, b"\xAB" * size)
        mem.free(a)
        b = mem.alloc(size)
        assert b == a and mem.read(b, size) == bytes(size)
        mem.free(b)


def test_a_growable_arena_waits_for_pinned_dispatches(monkeypatch):
    monkeypatch.setattr(memmod, "reserve", lambda size: None)      # as under strict overcommit
    mem = DeviceMemory(64 << 20, initial=1 << 20)
    first = mem.alloc(4096)
    mem.write(first, b"\x5A" * 4096)
    release, grown = threading.Event(), threading.Event()
    pinned = threading.Event()

    def dispatch():
        with mem.pinned():
            pinned.set()
            release.wait(10)

    def allocate():
        mem.alloc(8 << 20)                         # grows the arena
        grown.set()

    t1 = threading.Thread(target=dispatch)
    t1.start()
    assert pinned.wait(10)
    old = mem.arena
    t2 = threading.Thread(target=allocate)
    t2.start()
    time.sleep(0.3)
    assert not grown.is_set() and mem.arena is old      # waits while the dispatch holds pointers
    release.set()
    t1.join(10)
    t2.join(10)
    assert grown.is_set() and mem.arena is not old and len(mem.arena) >= (8 << 20) + 4096
    assert mem.read(first, 4096) == b"\x5A" * 4096


def test_allocating_past_the_first_4_gib_while_a_kernel_runs():
    """A dispatch in flight while another allocation goes far past where a growable arena would have moved:
    every result lands."""
    import pyhip
    from pathlib import Path
    m = pyhip.load(Path(__file__).resolve().parents[1] / "fixtures/bin/hipcc52/basic-gfx90a.hsaco")
    k = m.kernel("vadd")
    n = (4 << 20) + 77
    rng = np.random.default_rng(9)
    a, b = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    da, db = pyhip.to_device(a), pyhip.to_device(b)
    dc = pyhip.to_device(np.full(n, np.nan, np.float32))
    k((n + 255) // 256, 256, da, db, dc, n)
    big = pyhip.empty(5 << 30, np.uint8)            # while the kernel may still run
    try:
        pyhip.synchronize()
        assert np.array_equal(dc.get(), a + b)
    finally:
        big.free()                                 # (device arrays live until freed: later tests share the device)
        for x in (da, db, dc):
            x.free()
