"""The engine's fast paths give exactly what the general paths give: 64-bit shifts by inline constants on
32-bit halves, whole-wave dword loads/stores through one allocation, wave-uniform scalar loads.  Each case
is checked against numpy, and the cases that must leave the fast path (partial EXEC, misalignment,
non-uniform high halves, an access running off the allocation) are exercised too."""

import numpy as np
import pytest

from asmkit import POISON, engine, run  # noqa: F401 (engine: a fixture)
from pyhip.emu.memory import GPUFault

RNG = np.random.default_rng(77)
U32, U64, I64 = np.uint32, np.uint64, np.int64
SHIFTS = [0, 1, 2, 5, 31, 32, 33, 47, 63]


@pytest.mark.parametrize("target", ["gfx90a", "gfx942"])
@pytest.mark.parametrize("k", SHIFTS)
def test_constant_64bit_shifts(target, k):
    a = RNG.integers(0, 2 ** 64, 64, dtype=U64)
    a[:4] = [0, 2 ** 64 - 1, 2 ** 63, 2 ** 63 - 1]
    body = f"""
  v_lshlrev_b64 v[8:9], {k}, v[2:3]
  v_lshrrev_b64 v[10:11], {k}, v[2:3]
"""
    r0, r1 = run(body, a, target=target, lanes=45)
    assert np.array_equal(r0[:45], a[:45] << U64(k))
    assert np.array_equal(r1[:45], a[:45] >> U64(k))
    assert (r0[45:] == U64(0xCDCDCDCDCDCDCDCD)).all()        # inactive lanes: outputs untouched
    body = f"""
  v_ashrrev_i64 v[8:9], {k}, v[2:3]
  v_lshlrev_b64 v[2:3], {k}, v[2:3]
  v_mov_b32 v10, v2
  v_mov_b32 v11, v3
"""
    r0, r1 = run(body, a, target=target)
    assert np.array_equal(r0, (a.view(I64) >> I64(k)).view(U64))
    assert np.array_equal(r1, a << U64(k))                     # destination = source


def _copy_kernel(body_load, body_store):
    return f"""
  v_mov_b32 v20, v1
  v_mov_b32 v21, 0
  v_add_co_u32 v22, vcc, s4, v1
  v_mov_b32 v23, s5
  v_addc_co_u32 v23, vcc, v23, 0, vcc
  {body_load}
  s_waitcnt vmcnt(0)
  {body_store}
"""


@pytest.mark.parametrize("target", ["gfx90a", "gfx942"])
@pytest.mark.parametrize("lanes", [64, 23])
def test_wave_loads_and_stores(target, lanes):
    a, b = RNG.integers(0, 2 ** 64, 64, dtype=U64), RNG.integers(0, 2 ** 64, 64, dtype=U64)
    body = _copy_kernel("global_load_dwordx2 v[8:9], v[22:23], off\n  global_load_dword v10, v1, s[4:5] offset:512\n"
                        "  global_load_dword v11, v1, s[4:5] offset:516\n"
                        "  flat_load_dwordx4 v[12:15], v[22:23]",
                        "v_xor_b32 v8, v8, v14\n  v_xor_b32 v9, v9, v15")
    r0, r1 = run(body, a, b, target=target, lanes=lanes)
    nxt = np.roll(a, -1)                              # dwordx4 at lane i reads a[i] and a[i+1]
    nxt[63] = b[0]
    assert np.array_equal(r0[:lanes], a[:lanes] ^ nxt[:lanes])
    assert np.array_equal(r1[:lanes], b[:lanes])
    assert (r0[lanes:] == U64(0xCDCDCDCDCDCDCDCD)).all()


@pytest.mark.parametrize("target", ["gfx90a", "gfx942"])
def test_misaligned_and_spread_addresses_take_the_general_path(target):
    a, b = RNG.integers(0, 2 ** 64, 64, dtype=U64), RNG.integers(0, 2 ** 64, 64, dtype=U64)
    # byte offset 2 (misaligned dword loads are legal in the HSA unaligned mode)
    body = "global_load_dword v8, v1, s[4:5] offset:2\n  v_mov_b32 v9, 0\n  s_waitcnt vmcnt(0)\n" \
           "  global_load_dwordx2 v[10:11], v1, s[4:5] offset:510\n  s_waitcnt vmcnt(0)"
    r0, r1 = run(body, a, b, target=target)
    raw = np.concatenate([a, b]).view(np.uint8)
    want0 = np.array([int.from_bytes(raw[8 * i + 2:8 * i + 6].tobytes(), "little") for i in range(64)], U64)
    want1 = np.array([int.from_bytes(raw[8 * i + 510:8 * i + 518].tobytes(), "little") for i in range(64)], U64)
    assert np.array_equal(r0, want0)
    assert np.array_equal(r1, want1)


@pytest.mark.parametrize("target", ["gfx90a", "gfx942"])
def test_access_past_the_allocation_still_faults(target):
    a = RNG.integers(0, 2 ** 64, 64, dtype=U64)
    # lane i addresses input + i MiB: every lane but the first is outside any allocation
    spread = "v_lshlrev_b32 v30, 20, v0\n  "
    with pytest.raises(GPUFault) as e:
        run(spread + "global_load_dword v8, v30, s[4:5]", a, target=target)
    assert e.value.address is not None and e.value.instruction.startswith("global_load_dword")
    with pytest.raises(GPUFault):
        run(spread + "global_store_dword v30, v2, s[4:5]", a, target=target)


@pytest.mark.parametrize("target", ["gfx90a", "gfx942"])
def test_constant_operands_in_elementwise_ops(target):
    a = RNG.integers(0, 2 ** 64, 64, dtype=U64)
    b = RNG.standard_normal(64).astype(np.float32)
    lo_a, hi_a = (a & U64(0xFFFFFFFF)).astype(U32), (a >> U64(32)).astype(U32)
    body = """
  v_add_u32 v8, 7, v2
  v_ashrrev_i32 v9, 31, v3
  v_mov_b32 v10, -5
  v_sub_u32 v11, 0x12345678, v2
"""
    r0, r1 = run(body, a, target=target, lanes=50)
    assert np.array_equal((r0[:50] & U64(0xFFFFFFFF)).astype(U32), lo_a[:50] + U32(7))
    assert np.array_equal((r0[:50] >> U64(32)).astype(U32), (hi_a[:50].view(np.int32) >> 31).view(U32))
    assert np.array_equal((r1[:50] & U64(0xFFFFFFFF)).astype(U32), np.full(50, 2 ** 32 - 5, U32))
    assert np.array_equal((r1[:50] >> U64(32)).astype(U32), U32(0x12345678) - lo_a[:50])
    assert (r1[50:] == U64(0xCDCDCDCDCDCDCDCD)).all()
    body = """
  v_add_f32 v8, 0.5, v4
  v_mul_f32 v9, 0x40490fdb, v4
  v_mov_b32 v20, 1
  v_perm_b32 v10, v20, v2, v3
  v_perm_b32 v11, 1, v2, v3
"""
    r0, r1 = run(body, a, b, target=target)
    f = lambda x: (x & U64(0xFFFFFFFF)).astype(U32).view(np.float32)   # noqa: E731
    assert np.array_equal(f(r0), b + np.float32(0.5))
    assert np.array_equal((r0 >> U64(32)).astype(U32).view(np.float32), b * np.float32(np.pi))
    assert np.array_equal(r1 & U64(0xFFFFFFFF), r1 >> U64(32))      # constant operand = register operand


@pytest.mark.parametrize("target", ["gfx90a", "gfx942"])
@pytest.mark.parametrize("lanes", [64, 41])
def test_fused_64bit_add_matches_numpy(target, lanes):
    """v_add_co_u32 + v_addc_co_u32 (fused by the engine): sums, the final carries in VCC, and a second
    pair that consumes the first pair's result."""
    a = RNG.integers(0, 2 ** 64, 64, dtype=U64)
    b = RNG.integers(0, 2 ** 64, 64, dtype=U64)
    a[:3] = [2 ** 64 - 1, 2 ** 32 - 1, 2 ** 63]
    b[:3] = [1, 1, 2 ** 63]
    body = """
  v_add_co_u32 v8, vcc, v2, v4
  v_addc_co_u32 v9, vcc, v3, v5, vcc
  v_cndmask_b32 v10, 0, 1, vcc
  v_add_co_u32 v12, vcc, v8, v4
  v_addc_co_u32 v13, vcc, v9, v5, vcc
  v_cndmask_b32 v11, 0, 1, vcc
"""
    r0, r1 = run(body, a, b, target=target, lanes=lanes)
    s1 = a + b
    c1 = (s1 < a).astype(U64)
    s2 = s1 + b
    c2 = (s2 < s1).astype(U64)
    n = lanes
    assert np.array_equal(r0[:n], s1[:n])
    assert np.array_equal(r1[:n], (c1 | (c2 << U64(32)))[:n])
    assert (r0[n:] == U64(0xCDCDCDCDCDCDCDCD)).all()


@pytest.mark.parametrize("target", ["gfx90a", "gfx942"])
@pytest.mark.parametrize("lanes", [64, 45])
def test_fused_64bit_add_with_a_scalar_base(target, lanes):
    """v_add_co_u32 + v_addc_co_u32 run as one superinstruction; with a scalar low word the carries are
    lane masks (AVX2 path).  Low words near 2^32 make most lanes carry; the carry-out lands in VCC."""
    a = RNG.integers(0, 2 ** 64, 64, dtype=U64)
    b = RNG.integers(0, 2 ** 64, 64, dtype=U64)
    a[::3] |= U64(0xFFFFFF00)                       # low words that carry
    b[::4] = (b[::4] | U64(0xFFFFFFFF00000000))     # high words that carry out
    a[5], b[5] = U64(0x00000000FFFFFFFF), U64(0xFFFFFFFF00000000)   # carry in wraps the high word to 0
    k = 0x1F3
    mask = (1 << 64) - 1
    for second_reads_first in (False, True):
        x = "v8" if second_reads_first else "v3"
        body = f"""
  s_movk_i32 s20, {k}
  v_add_co_u32 v8, vcc, s20, v2
  v_addc_co_u32 v9, vcc, {x}, v5, vcc
  v_cndmask_b32 v10, 0, 1, vcc
  v_mov_b32 v11, 0
"""
        r0, r1 = run(body, a, b, target=target, lanes=lanes)
        want0, want1 = [], []
        for i in range(lanes):
            lo = (int(a[i]) & 0xFFFFFFFF) + k
            cy = lo >> 32
            lo &= 0xFFFFFFFF
            xv = lo if second_reads_first else int(a[i]) >> 32
            hi = xv + (int(b[i]) >> 32) + cy
            want0.append(lo | (hi & 0xFFFFFFFF) << 32)
            want1.append(hi >> 32)
        assert [int(v) for v in r0[:lanes]] == want0, second_reads_first
        assert [int(v) & mask for v in r1[:lanes]] == want1, second_reads_first
        assert (r0[lanes:] == U64(POISON)).all()


def _dwords(raw: np.ndarray, offsets) -> np.ndarray:
    return np.array([int.from_bytes(raw[o:o + 4].tobytes(), "little") for o in offsets], U64)


@pytest.mark.parametrize("target,wave", [("gfx90a", 64), ("gfx942", 64), ("gfx1100", 32)])
def test_partial_exec_over_consecutive_addresses(target, wave, engine):
    """Lanes at consecutive addresses with a random EXEC (the masked-span path: only the active lanes are read
    and written, inactive lanes keep their registers and memory), then a full-EXEC reload of what the masked
    store wrote."""
    a, b = RNG.integers(0, 2 ** 64, 64, dtype=U64), RNG.integers(0, 2 ** 64, 64, dtype=U64)
    c = RNG.integers(0, 2, 64).astype(U64)
    c[:3] = [1, 0, 1]
    if wave == 32:
        save, restore, cmp = "s_and_saveexec_b32 s20, vcc_lo", "s_or_b32 exec_lo, exec_lo, s20", "v_cmp_eq_u32 vcc_lo, 1, v31"
    else:
        save, restore, cmp = "s_and_saveexec_b64 s[20:21], vcc", "s_or_b64 exec, exec, s[20:21]", "v_cmp_eq_u32 vcc, 1, v31"
    body = f"""
  v_lshlrev_b32 v30, 2, v0
  v_and_b32 v31, 1, v6
  {cmp}
  {save}
  global_load_dword v8, v30, s[4:5] offset:4
  global_load_dwordx2 v[10:11], v1, s[4:5] offset:8
  global_store_dword v30, v4, s[4:5] offset:1024
  s_waitcnt vmcnt(0)
  {restore}
  global_load_dword v9, v30, s[4:5] offset:1024
  s_waitcnt vmcnt(0)
"""
    engine(target)
    r0, r1 = run(body, a, b, c, target=target, wave=wave) if target.startswith("gfx1") else run(body, a, b, c, target=target)
    engine(target)
    raw = np.concatenate([a, b, c]).view(np.uint8).copy()
    act = c == 1
    i = np.arange(64)
    v8 = np.where(act, _dwords(raw, 4 + 4 * i), 0)
    v10 = np.where(act, _dwords(raw, 8 + 8 * i), 0)
    v11 = np.where(act, _dwords(raw, 12 + 8 * i), 0)
    stored = raw.copy()
    for k in np.flatnonzero(act):
        stored[1024 + 4 * k:1028 + 4 * k] = np.frombuffer(int(b[k] & U64(0xFFFFFFFF)).to_bytes(4, "little"), np.uint8)
    v9 = _dwords(stored, 1024 + 4 * i)
    assert np.array_equal(r0, v8 | (v9 << U64(32)))
    assert np.array_equal(r1, v10 | (v11 << U64(32)))


@pytest.mark.parametrize("target", ["gfx90a", "gfx942"])
@pytest.mark.parametrize("num_records", [1536, 300, 1100])
@pytest.mark.parametrize("masked", [False, True])
def test_buffer_accesses_at_consecutive_offsets(target, num_records, masked, engine):
    """MUBUF offen accesses with every lane at consecutive offsets: inside num_records the whole-span path,
    lanes past it read 0 and drop their stores (an soffset and an immediate offset in the address); with 300
    records every lane of the second load and of the store is outside (the engine's no-address shortcut)."""
    a, b = RNG.integers(0, 2 ** 64, 64, dtype=U64), RNG.integers(0, 2 ** 64, 64, dtype=U64)
    c = RNG.integers(0, 2, 64).astype(U64) if masked else np.ones(64, U64)
    body = f"""
  s_mov_b32 s8, s4
  s_and_b32 s9, s5, 0xffff
  s_mov_b32 s10, {num_records}
  s_mov_b32 s11, 0x27000
  s_mov_b32 s13, 8
  v_lshlrev_b32 v30, 2, v0
  v_and_b32 v31, 1, v6
  v_cmp_eq_u32 vcc, 1, v31
  v_mov_b32 v9, -1
  s_and_saveexec_b64 s[20:21], vcc
  buffer_load_dword v8, v30, s[8:11], s13 offen offset:4
  buffer_load_dword v9, v30, s[8:11], 0 offen offset:1000
  buffer_store_dword v4, v30, s[8:11], s13 offen offset:1016
  s_waitcnt vmcnt(0)
  s_or_b64 exec, exec, s[20:21]
  global_load_dword v10, v30, s[4:5] offset:1024
  v_mov_b32 v11, 0
  s_waitcnt vmcnt(0)
"""
    engine(target)
    r0, r1 = run(body, a, b, c, target=target)
    engine(target)
    raw = np.concatenate([a, b, c]).view(np.uint8).copy()
    act = c == 1
    i = np.arange(64)

    def buf_read(offs):
        ok = act & (offs + 4 <= num_records)
        return np.where(ok, _dwords(raw, np.minimum(offs, 1532)), 0)
    v8 = buf_read(12 + 4 * i)
    v9 = np.where(act, buf_read(1000 + 4 * i), 0xFFFFFFFF)       # lanes off keep theirs; outside reads 0
    stored = raw.copy()
    for k in np.flatnonzero(act & (1024 + 4 * i + 4 <= num_records)):
        stored[1024 + 4 * k:1028 + 4 * k] = np.frombuffer(int(b[k] & U64(0xFFFFFFFF)).to_bytes(4, "little"), np.uint8)
    v10 = _dwords(stored, 1024 + 4 * i)
    assert np.array_equal(r0, v8 | (v9 << U64(32)))
    assert np.array_equal(r1, v10)
