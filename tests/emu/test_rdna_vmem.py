"""RDNA's own vector memory instructions — global_atomic_csub (GFX10.3/GFX11: subtract, clamped at 0), the
float compare-swaps global_atomic_fcmpswap / _x2 (GFX11: global_atomic_cmpswap_f32) and the GFX10 lane-id
addressed global_load/store_dword_addtid (SADDR + offset + 4 * lane) — on both engines (the native handlers,
native/engine/vmem.h, and the numpy semantics) against models written here: lanes of one atomic apply in lane
order; the compare is a float compare (-0 equals +0, a NaN equals nothing)."""
import struct

import numpy as np
import pytest

from asmkit import engine, lo, hi, run  # noqa: F401 (engine: a fixture)

RNG = np.random.default_rng(20261129)
U64 = np.uint64
TARGETS = ["gfx1030", "gfx1100"]


def f32(bits: int) -> float:
    return struct.unpack("<f", struct.pack("<I", bits & 0xFFFFFFFF))[0]


def f64(bits: int) -> float:
    return struct.unpack("<d", struct.pack("<Q", bits))[0]


def fequal(a: float, b: float) -> bool:
    return a == b                      # Python floats: -0.0 == 0.0, NaN != anything


@pytest.mark.parametrize("target", TARGETS)
def test_csub_clamps_at_zero_and_applies_in_lane_order(target, engine):
    """Each lane subtracts b's low dword from its own c dword (about half of the differences negative: clamped
    to 0; a third exactly 0), then every lane subtracts b's high dword (1-79) from one shared dword holding
    1000: the returned old values are the running value in lane order, clamped at 0 once it runs out."""
    n = 32
    a = RNG.integers(0, 2 ** 64, 64, dtype=U64)
    a[0] = (a[0] & U64(0xFFFFFFFF00000000)) | U64(1000)  # the shared dword
    b = RNG.integers(0, 2 ** 32, 64, dtype=U64) | (RNG.integers(1, 80, 64, dtype=U64) << U64(32))
    c = RNG.integers(0, 2 ** 64, 64, dtype=U64)
    c[::3] = (c[::3] & U64(0xFFFFFFFF00000000)) | (b[::3] & U64(0xFFFFFFFF))
    body = """
  global_atomic_csub v8, v1, v4, s[4:5] offset:1024 glc
  v_mov_b32 v12, 0
  global_atomic_csub v10, v12, v5, s[4:5] glc
  s_waitcnt vmcnt(0)
  global_load_dword v9, v1, s[4:5] offset:1024
  global_load_dword v11, v12, s[4:5]
  s_waitcnt vmcnt(0)
"""
    engine(target)
    r0, r1 = run(body, a, b, c, target=target, lanes=n, wave=32)
    engine(target)
    shared = 1000
    for i in range(n):
        old, sub = int(c[i]) & 0xFFFFFFFF, int(b[i]) & 0xFFFFFFFF
        assert int(lo(r0)[i]) == old and int(hi(r0)[i]) == (old - sub if old >= sub else 0), i
        assert int(lo(r1)[i]) == shared, (i, int(lo(r1)[i]), shared)
        step = int(b[i]) >> 32
        shared = shared - step if shared >= step else 0
    assert shared == 0 and (hi(r1)[:n] == 0).all()        # (it runs out: the clamp is exercised)


def _floats32(n):
    vals = RNG.standard_normal(n).astype(np.float32)
    vals[::5] = 0.0
    vals[1::7] = -0.0
    vals[2::9] = np.nan
    return vals.view(np.uint32).astype(U64)


@pytest.mark.parametrize("target", TARGETS)
def test_float_compare_swap(target, engine):
    """global_atomic_fcmpswap: memory (c's low dwords) replaced by the source where it equals the compare value
    as floats (+0/-0 pairs equal, NaN never); the old value returned either way."""
    n = 32
    a = RNG.integers(0, 2 ** 64, 64, dtype=U64)
    mem = _floats32(64)
    src = _floats32(64)
    cmp = _floats32(64)
    same = RNG.random(64) < 0.5
    cmp[same] = mem[same]                                  # equal bits (NaN: still not equal)
    cmp[3], mem[3] = 0x80000000, 0                         # -0 against +0: equal
    b = src | (cmp << U64(32))
    c = mem | (RNG.integers(0, 2 ** 32, 64, dtype=U64) << U64(32))
    body = """
  global_atomic_fcmpswap v8, v1, v[4:5], s[4:5] offset:1024 glc
  s_waitcnt vmcnt(0)
  global_load_dword v9, v1, s[4:5] offset:1024
  s_waitcnt vmcnt(0)
"""
    engine(target)
    r0, _ = run(body, a, b, c, target=target, lanes=n, wave=32)
    engine(target)
    for i in range(n):
        m, s_, k = int(mem[i]), int(src[i]), int(cmp[i])
        assert int(lo(r0)[i]) == m, i
        assert int(hi(r0)[i]) == (s_ if fequal(f32(m), f32(k)) else m), (i, hex(m), hex(k))


def test_double_compare_swap(engine):
    """global_atomic_fcmpswap_x2 (GFX10.3): a's doubles replaced by b's where they equal c's as doubles."""
    n = 32
    vals = RNG.standard_normal(3 * 64)
    vals[::5] = 0.0
    vals[1::7] = -0.0
    vals[2::9] = np.nan
    a, b, c = (x.copy() for x in vals.view(U64).reshape(3, 64))
    same = RNG.random(64) < 0.5
    c[same] = a[same]
    body = """
  global_atomic_fcmpswap_x2 v[8:9], v1, v[4:7], s[4:5] glc
  s_waitcnt vmcnt(0)
  global_load_dwordx2 v[10:11], v1, s[4:5]
  s_waitcnt vmcnt(0)
"""
    engine("gfx1030")
    r0, r1 = run(body, a, b, c, target="gfx1030", lanes=n, wave=32)
    engine("gfx1030")
    for i in range(n):
        assert int(r0[i]) == int(a[i]), i
        want = int(b[i]) if fequal(f64(int(a[i])), f64(int(c[i]))) else int(a[i])
        assert int(r1[i]) == want, (i, hex(int(a[i])), hex(int(c[i])))


@pytest.mark.parametrize("wave,lanes", [(32, 32), (64, 64), (64, 45)])
def test_addtid_loads_and_stores(wave, lanes, engine):
    """global_load_dword_addtid reads dword 2 + lane of the a operands (whatever the lane's address VGPRs hold),
    global_store_dword_addtid writes each lane's v2 to dword 256 + lane (the c operands), read back by plain
    loads; lanes past ``lanes`` (a partial wave) neither read nor write."""
    a, b, c = (RNG.integers(0, 2 ** 64, 64, dtype=U64) for _ in range(3))
    body = """
  global_load_dword_addtid v8, s[4:5] offset:8
  global_store_dword_addtid v2, s[4:5] offset:1024
  s_waitcnt vmcnt(0)
  global_load_dwordx2 v[10:11], v1, s[4:5] offset:1024
  s_waitcnt vmcnt(0)
"""
    engine("gfx1030")
    r0, r1 = run(body, a, b, c, target="gfx1030", lanes=lanes, wave=wave)
    engine("gfx1030")
    words = np.concatenate([a, b, c]).view(np.uint32)
    mem = words.copy()
    mem[256:256 + lanes] = (a[:lanes] & U64(0xFFFFFFFF)).astype(np.uint32)     # each lane's v2
    for i in range(lanes):
        assert int(lo(r0)[i]) == int(words[2 + i]), i
        assert int(r1[i]) == int(mem[256 + 2 * i]) | int(mem[257 + 2 * i]) << 32, i


@pytest.mark.parametrize("wave,lanes", [(32, 32), (64, 45)])
def test_buffer_loads_into_lds(wave, lanes, engine):
    """GFX11 buffer_load_lds_b32 / _i8: each active lane's value (sign-extended for i8) into LDS at M0 +
    instruction offset + 4 * lane; lanes past num_records put 0 there; read back with ds_load_b32."""
    a, b, c = (RNG.integers(0, 2 ** 64, 64, dtype=U64) for _ in range(3))
    nrec = 8 * 37
    body = f"""
  s_mov_b32 s12, s4
  s_and_b32 s13, s5, 0xffff
  s_mov_b32 s14, {nrec}
  s_mov_b32 s15, 0
  s_mov_b32 m0, 256
  buffer_load_lds_b32 v1, s[12:15], 0 offen offset:4
  s_mov_b32 m0, 512
  buffer_load_lds_i8 v1, s[12:15], 0 offen
  s_waitcnt vmcnt(0)
  v_lshlrev_b32 v30, 2, v0
  ds_load_b32 v8, v30 offset:260
  ds_load_b32 v9, v30 offset:512
  s_waitcnt lgkmcnt(0)
"""
    engine("gfx1100")
    r0, _ = run(body, a, b, c, target="gfx1100", lanes=lanes, wave=wave, lds=1024)
    engine("gfx1100")
    for i in range(lanes):
        x = int(a[i])
        hi_word = x >> 32 if 8 * i + 8 <= nrec else 0        # bytes 4..7 of the lane's 8: inside num_records?
        byte = x & 0xFF if 8 * i + 1 <= nrec else 0
        sbyte = (byte - 256 if byte >= 128 else byte) & 0xFFFFFFFF
        assert int(r0[i]) == hi_word | sbyte << 32, (i, hex(int(r0[i])))
