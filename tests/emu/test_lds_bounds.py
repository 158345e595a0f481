"""LDS out of range behaves as the hardware does (issue 27, item 0): a workgroup gets its group segment rounded
up to the target's LDS granule (512 bytes from GFX7 to GFX12.0: pyhip/emu/engine.py ``lds_allocation``); an
access inside that is performed even past the group segment, and one beyond it reads 0 and writes nothing —
no fault.  Each kernel (asmkit: llvm-mc-19) runs with a 100-byte group segment (so 512 bytes allocated) on
both engines: numpy and the compiled engine (whose DS instructions are the native runtime's C handlers,
native/engine/ops_ds.h, or inline code that leaves any lane past the group segment to them); half the lanes of each
access are in range and half out, and the results are compared with a numpy model of the 512 bytes."""
import numpy as np
import pytest

import asmkit
from asmkit import run
from pyhip.emu.device import EmulatedGPU
from pyhip.emu.engine import lds_allocation

RNG = np.random.default_rng(2727)
SEGMENT = 100
LANES = np.arange(64)


@pytest.fixture(params=["numpy", "compiled"])
def engine(request, monkeypatch):
    monkeypatch.setenv("PYHIP_JIT_TIERING", "0")        # compile first: no numpy-engine first runs
    g = EmulatedGPU("gfx90a", watchdog_steps=200_000)
    g.engine = "numpy" if request.param == "numpy" else "native"
    if request.param != "numpy" and (g.native_engine() is None or g.native_engine().jit is None):
        pytest.skip("no compiled engine here")
    monkeypatch.setitem(asmkit._GPUS, "gfx90a", g)
    yield request.param, g
    assert g.last_dispatch.engine == ("numpy" if request.param == "numpy" else "native")


def _operands():
    return [RNG.integers(0, 1 << 64, 64, dtype=np.uint64) for _ in range(3)]


def _lo(x):
    return (x & np.uint64(0xFFFFFFFF)).astype(np.uint32)


def _pack(lo, hi):
    return lo.astype(np.uint64) | (hi.astype(np.uint64) << np.uint64(32))


def test_granule():
    assert lds_allocation("gfx90a", 100) == 512 and lds_allocation("gfx1100", 513) == 1024
    assert lds_allocation("gfx942", 0) == 0 and lds_allocation("gfx950", 100) == 1280


def test_reads_and_writes_past_the_segment(engine):
    """Lane l writes a dword at 8l (lanes 0-63: bytes 0..507, past the 100-byte segment from lane 13 on,
    all inside the 512 allocated) and one at 8l + 260 (beyond 512 from lane 32 on: dropped); then each lane
    reads both back and a dword at 512 + 4l (beyond: 0) and does an atomic add at 8l + 260 (returns 0 and
    changes nothing beyond)."""
    a, b, c = _operands()
    body = """
  v_lshlrev_b32 v13, 3, v0
  ds_write_b32 v13, v2
  ds_write_b32 v13, v4 offset:260
  s_waitcnt lgkmcnt(0)
  s_barrier
  ds_add_rtn_u32 v12, v13, v6 offset:260
  s_waitcnt lgkmcnt(0)
  ds_read_b32 v8, v13
  ds_read_b32 v9, v13 offset:260
  v_lshlrev_b32 v14, 2, v0
  ds_read_b32 v10, v14 offset:512
  v_mov_b32 v11, v12
  s_waitcnt lgkmcnt(0)
"""
    r0, r1 = run(body, a, b, c, lds=SEGMENT)
    lds = np.zeros(lds_allocation("gfx90a", SEGMENT), np.uint8)
    i = LANES
    for l in i:                                                  # the writes, in lane order
        lds[8 * l:8 * l + 4] = _lo(a[l:l + 1]).view(np.uint8)
    for l in i:
        o = 8 * l + 260
        if o + 4 <= len(lds):
            lds[o:o + 4] = _lo(b[l:l + 1]).view(np.uint8)
    added = np.zeros(64, np.uint32)                              # what each lane's atomic returns
    for l in i:
        o = 8 * l + 260
        if o + 4 <= len(lds):
            old = lds[o:o + 4].copy().view(np.uint32)[0]
            added[l] = old
            lds[o:o + 4] = np.array([(int(old) + int(_lo(c[l:l + 1])[0])) & 0xFFFFFFFF], np.uint32).view(np.uint8)
    dw = lambda off: np.array([lds[x:x + 4].copy().view(np.uint32)[0] if x + 4 <= len(lds) else 0 for x in off],
                              np.uint32)
    assert (dw(8 * i + 260)[32:] == 0).all() and (added[32:] == 0).all()          # (the model drops them)
    want0 = _pack(dw(8 * i), dw(8 * i + 260))
    want1 = _pack(np.zeros(64, np.uint32), added)
    assert np.array_equal(r0, want0), np.nonzero(r0 != want0)[0][:4]
    assert np.array_equal(r1, want1), np.nonzero(r1 != want1)[0][:4]


@pytest.mark.parametrize("body, hi", [
    ("v_mov_b32 v12, -64\n  ds_read_u8 v8, v12 offset:32", 7),                   # wraps to 2^32 - 32
    ("v_mov_b32 v12, 0xfffff000\n  ds_read2_b32 v[8:9], v12 offset0:0 offset1:255", 0),
    ("v_mov_b32 v12, 0xffff0000\n  ds_add_rtn_u32 v8, v12, v2 offset:0xfff0", 7),
    ("v_mov_b32 v12, 0x7f00\n  ds_read_b64 v[8:9], v12", 0),
], ids=["read_u8", "read2_b32", "add_rtn_u32", "read_b64"])
def test_far_out_of_range_reads_zero(engine, body, hi):
    """Addresses that wrap or land far beyond the LDS: no fault, 0 read, and the LDS unchanged (a lane in
    range reads back what the kernel wrote first)."""
    a, b, c = _operands()
    pre = "  v_lshlrev_b32 v13, 2, v0\n  v_mov_b32 v8, 7\n  v_mov_b32 v9, 7\n"
    post = "\n  s_waitcnt lgkmcnt(0)\n  ds_write_b32 v13, v4 offset:2048\n  s_waitcnt lgkmcnt(0)\n" \
           "  v_and_b32 v14, 0x7f, v13\n  ds_read_b32 v10, v14\n  s_waitcnt lgkmcnt(0)\n"
    r0, r1 = run(pre + "  v_and_b32 v15, 0x7f, v13\n  ds_write_b32 v15, v6\n  s_waitcnt lgkmcnt(0)\n  s_barrier\n"
                 + body + post, a, b, c, lds=SEGMENT)
    assert (r0 == np.uint64(hi << 32)).all(), r0[:4]          # (v9 = 7 where the load does not write it)
    last = np.zeros(128 // 4, np.uint32)
    for l in LANES:                                  # lanes 4k.. write dword k of the first 128 bytes, last wins
        last[l % 32] = _lo(c[l:l + 1])[0]
    assert np.array_equal(_lo(r1), last[LANES % 32])
