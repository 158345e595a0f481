"""LDS addresses wrap at 32 bits: a lane's LDS address is (ADDR VGPR + instruction offset) mod 2^32, as the
hardware computes it and as LLVM assumes when it folds a constant into the offset field (rocPRIM's
block_reduce and rocSPARSE's gtsv read ``ds_read_u8 v3, v2 offset:128`` with v2 = -64, i.e. byte 64).  Each
kernel (asmkit: llvm-mc-19) puts known bytes into the LDS, then reads, writes, read2/write2 and atomics with a
negative base VGPR and a positive offset; the results are compared with a numpy model of the LDS.  Every case
runs on the compiled engine (whose DS instructions are the native runtime's handlers, native/engine/ops_ds.h)
and on the numpy engine (pyhip/emu/semantics/ds.py); docs/memory-model.md.
An address that wraps to beyond the LDS reads 0 / writes nothing, as any beyond it: tests/emu/test_lds_bounds.py."""
import numpy as np
import pytest

import asmkit
from asmkit import run
from pyhip.emu.device import EmulatedGPU

RNG = np.random.default_rng(2323)
LDS = 2048
LANES = np.arange(64)
ENGINES = ["compiled", "numpy"]

# LDS[0:512] = a, LDS[512:1024] = b, LDS[1024:1536] = c (each lane's 64-bit operand at 8 * lane)
INIT = """
  ds_write_b64 v1, v[2:3]
  ds_write_b64 v1, v[4:5] offset:512
  ds_write_b64 v1, v[6:7] offset:1024
  s_waitcnt lgkmcnt(0)
  v_lshlrev_b32 v13, 2, v0
"""


@pytest.fixture(params=ENGINES)
def engine(request, monkeypatch):
    """A device running ``request.param`` (asmkit's runner uses it for gfx90a)."""
    monkeypatch.setenv("PYHIP_JIT_TIERING", "0")        # compile first: no numpy-engine first runs
    g = EmulatedGPU("gfx90a", watchdog_steps=200_000)
    g.engine = "numpy" if request.param == "numpy" else "native"
    if request.param != "numpy" and (g.native_engine() is None or g.native_engine().jit is None):
        pytest.skip("no compiled engine here")
    monkeypatch.setitem(asmkit._GPUS, "gfx90a", g)
    yield request.param, g


def _ran_on(g, name):
    want = "numpy" if name == "numpy" else "native"
    assert g.last_dispatch.engine == want, g.last_dispatch.engine


def _operands():
    return [RNG.integers(0, 1 << 64, 64, dtype=np.uint64, endpoint=False) for _ in range(3)]


def _model(a, b, c):
    lds = np.zeros(LDS, np.uint8)
    lds[0:512] = a.view(np.uint8)
    lds[512:1024] = b.view(np.uint8)
    lds[1024:1536] = c.view(np.uint8)
    return lds


def u32(lds, off):
    return lds[off[:, None] + np.arange(4)].copy().view(np.uint32)[:, 0]


def pack(lo32, hi32):
    return lo32.astype(np.uint64) | (hi32.astype(np.uint64) << np.uint64(32))


def test_reads_with_a_negative_base(engine):
    name, g = engine
    a, b, c = _operands()
    body = INIT + """
  v_subrev_u32 v12, 64, v0
  ds_read_u8 v8, v12 offset:128
  v_subrev_u32 v14, 0x1000, v13
  ds_read_b32 v9, v14 offset:0x1010
  v_subrev_u32 v15, 0x190, v13
  ds_read2_b32 v[10:11], v15 offset0:100 offset1:164
  s_waitcnt lgkmcnt(0)
"""
    r0, r1 = run(body, a, b, c, lds=LDS)
    _ran_on(g, name)
    lds = _model(a, b, c)
    i = LANES
    want0 = pack(lds[i + 64].astype(np.uint32), u32(lds, 4 * i + 16))      # (i - 64) + 128; (4i - 4096) + 4112
    want1 = pack(u32(lds, 4 * i), u32(lds, 4 * i + 256))                  # (4i - 400) + 4 * 100, + 4 * 164
    assert np.array_equal(r0, want0), np.nonzero(r0 != want0)[0][:4]
    assert np.array_equal(r1, want1), np.nonzero(r1 != want1)[0][:4]


def test_signed_and_wide_reads_with_a_negative_base(engine):
    name, g = engine
    a, b, c = _operands()
    body = INIT + """
  v_mov_b32 v12, -1
  v_sub_u32 v12, v12, v0
  ds_read_i8 v8, v12 offset:700
  v_lshlrev_b32 v14, 3, v0
  v_subrev_u32 v14, 0x8000, v14
  ds_read_b64 v[10:11], v14 offset:0x8200
  ds_read_u16 v9, v14 offset:0x8402
  s_waitcnt lgkmcnt(0)
"""
    r0, r1 = run(body, a, b, c, lds=LDS)
    _ran_on(g, name)
    lds = _model(a, b, c)
    i = LANES
    sbyte = lds[699 - i].view(np.int8).astype(np.int32).view(np.uint32)    # (-1 - i) + 700, sign-extended
    half = lds[8 * i + 0x402] | (lds[8 * i + 0x403].astype(np.uint32) << 8)
    want0 = pack(sbyte, half.astype(np.uint32))
    want1 = lds[(8 * i + 0x200)[:, None] + np.arange(8)].copy().view(np.uint64)[:, 0]
    assert np.array_equal(r0, want0), np.nonzero(r0 != want0)[0][:4]
    assert np.array_equal(r1, want1), np.nonzero(r1 != want1)[0][:4]


def test_writes_and_atomics_with_a_negative_base(engine):
    name, g = engine
    a, b, c = _operands()
    body = INIT + """
  ds_write_b32 v13, v3 offset:1536
  v_subrev_u32 v14, 0x1000, v13
  ds_write_b32 v14, v4 offset:0x1400
  v_subrev_u32 v15, 0x190, v13
  ds_write2_b32 v15, v6, v7 offset0:100 offset1:164
  v_subrev_u32 v16, 0x8000, v13
  ds_add_u32 v16, v2 offset:0x8600
  ds_add_rtn_u32 v10, v16, v5 offset:0x8600
  v_mov_b32 v17, -4
  ds_max_rtn_u32 v11, v17, v2 offset:1540
  s_waitcnt lgkmcnt(0)
  ds_read_b32 v8, v13 offset:1024
  ds_read_b32 v9, v13 offset:256
  ds_read_b32 v11, v13 offset:1536
  s_waitcnt lgkmcnt(0)
"""
    r0, r1 = run(body, a, b, c, lds=LDS)
    _ran_on(g, name)
    lds = _model(a, b, c)
    i = LANES

    def lo(x):
        return (x & np.uint64(0xFFFFFFFF)).astype(np.uint32)

    def hi(x):
        return (x >> np.uint64(32)).astype(np.uint32)

    def put(off, v):
        lds[off[:, None] + np.arange(4)] = v.astype(np.uint32).view(np.uint8).reshape(-1, 4)

    put(1536 + 4 * i, hi(a))
    put(1024 + 4 * i, lo(b))                                   # (4i - 0x1000) + 0x1400
    put(4 * i, lo(c))                                          # write2: (4i - 400) + 4 * 100
    put(4 * i + 256, hi(c))                                    #          and + 4 * 164
    with np.errstate(over="ignore"):
        added = u32(lds, 1536 + 4 * i) + lo(a)                 # (4i - 0x8000) + 0x8600
        old = added.copy()
        put(1536 + 4 * i, added + hi(b))                       # ds_add_rtn_u32 of b's high dword
    # ds_max_rtn_u32 at (-4 + 1540) = 1536 from every lane, in lane order
    cur = int(u32(lds, np.array([1536]))[0])
    for x in lo(a).tolist():
        cur = max(cur, x)
    final = u32(lds, 1536 + 4 * i)
    final[0] = cur
    want0 = pack(lo(b), hi(c))
    want1 = pack(old, final)
    assert np.array_equal(r0, want0), np.nonzero(r0 != want0)[0][:4]
    assert np.array_equal(r1, want1), np.nonzero(r1 != want1)[0][:4]


def test_exchange2_and_st64_with_a_negative_base(engine):
    name, g = engine
    a, b, c = _operands()
    body = INIT + """
  v_subrev_u32 v14, 0x190, v13
  ds_wrxchg2_rtn_b32 v[8:9], v14, v6, v7 offset0:100 offset1:164
  v_subrev_u32 v15, 0x1000, v13
  ds_read2st64_b32 v[10:11], v15 offset0:16 offset1:20
  s_waitcnt lgkmcnt(0)
"""
    r0, r1 = run(body, a, b, c, lds=LDS)
    _ran_on(g, name)
    lds = _model(a, b, c)
    i = LANES
    want0 = pack(u32(lds, 4 * i), u32(lds, 4 * i + 256))          # the old dwords at (4i - 400) + 4 * 100, 4 * 164
    want1 = pack((c & np.uint64(0xFFFFFFFF)).astype(np.uint32),      # (4i - 4096) + 256 * 16: the new dword
                 u32(lds, 4 * i + 1024))                             # and + 256 * 20
    assert np.array_equal(r0, want0), np.nonzero(r0 != want0)[0][:4]
    assert np.array_equal(r1, want1), np.nonzero(r1 != want1)[0][:4]
