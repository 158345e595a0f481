"""RDNA instructions the compiled corpus does not reach, against numpy references of their ISA definitions:
tiny kernels assembled by llvm-mc-19 (tests/emu/asmkit.py, the vector template: 64 work-items as two wave32
waves or one wave64 wave) with random inputs.  DPP16 row_share/row_xmask with FI and BOUND_CTRL, DPP8, the
permlanes, GFX10+ v_cmpx (EXEC only), wave32 lane masks in one SGPR, VOPD read-before-write, M0-relative VGPR
moves, 16-bit results keeping the other half, GFX11 true16 high halves, ds_bpermute wrapping in wave32."""
import numpy as np
import pytest

from asmkit import engine, lo, run  # noqa: F401 (engine: a fixture)

RNG = np.random.default_rng(1030)
T11, T10 = "gfx1100", "gfx1030"


def rnd(n=64):
    return RNG.integers(0, 2 ** 32, n, dtype=np.uint64).astype(np.uint32)


def waves(x, wave):
    return [x[i:i + wave] for i in range(0, 64, wave)]


@pytest.mark.parametrize("target", [T10, T11])
@pytest.mark.parametrize("wave", [32, 64])
@pytest.mark.parametrize("ctrl,fi,bc", [("row_share:5", 0, 0), ("row_share:13", 1, 0), ("row_xmask:6", 0, 1),
                                       ("row_xmask:15", 1, 1), ("quad_perm:[3,2,1,0]", 0, 0),
                                       ("row_ror:3", 0, 0), ("row_half_mirror", 1, 0)])
def test_dpp16_with_inactive_lanes(target, wave, ctrl, fi, bc):
    """Lanes 8-11 and 40-43 disabled: an active lane reading a disabled one gets its value with FI, 0 with
    BOUND_CTRL, and keeps its old destination otherwise."""
    a, old = rnd(), rnd()
    mods = (" bound_ctrl:1" if bc else "") + (" fi:1" if fi else "")
    mask = 0xFFFFF0FF
    exec_set = f"s_mov_b32 exec_lo, 0x{mask:x}" if wave == 32 else \
        f"s_mov_b64 exec, 0x{mask:x}\n  s_mov_b32 exec_hi, 0x{mask:x}"
    exec_all = "s_mov_b32 exec_lo, -1" if wave == 32 else "s_mov_b64 exec, -1"
    body = f"""
  v_mov_b32 v8, v4
  {exec_set}
  v_mov_b32_dpp v8, v2 {ctrl} row_mask:0xf bank_mask:0xf{mods}
  {exec_all}
"""
    r0, _ = run(body, a, old, target=target, wave=wave)
    lane = np.arange(wave)
    row, inrow = lane // 16, lane % 16
    kind, _, arg = ctrl.partition(":")
    if kind == "row_share":
        src = row * 16 + int(arg)
    elif kind == "row_xmask":
        src = row * 16 + (inrow ^ int(arg))
    elif kind == "quad_perm":
        src = (lane & ~3) + np.array([3, 2, 1, 0])[lane & 3]
    elif kind == "row_ror":
        src = row * 16 + (inrow - int(arg)) % 16
    else:
        src = (lane & ~7) + 7 - (lane & 7)
    act = np.array([(mask >> (l % 32)) & 1 for l in range(64)], bool)
    want = np.empty(64, np.uint32)
    for w0 in range(0, 64, wave):
        x, o, m = a[w0:w0 + wave], old[w0:w0 + wave], act[w0:w0 + wave]
        ok = m[src] | bool(fi)
        v = np.where(ok, x[src], 0 if bc else o)
        want[w0:w0 + wave] = np.where(m, v, o)
    assert np.array_equal(lo(r0), want)


@pytest.mark.parametrize("wave", [32, 64])
def test_dpp8(wave):
    a = rnd()
    sel = RNG.integers(0, 8, 8)
    r0, _ = run(f"v_mov_b32_dpp v8, v2 dpp8:[{','.join(map(str, sel))}]", a, target=T11, wave=wave)
    lane = np.arange(64)
    assert np.array_equal(lo(r0), a[(lane & ~7) + sel[lane & 7]])


@pytest.mark.parametrize("target", [T10, T11])
@pytest.mark.parametrize("wave", [32, 64])
@pytest.mark.parametrize("name", ["v_permlane16_b32", "v_permlanex16_b32"])
def test_permlanes(target, wave, name):
    a = rnd()
    s1, s2 = (int(x) for x in rnd(2))
    body = f"""
  s_mov_b32 s10, 0x{s1:x}
  s_mov_b32 s11, 0x{s2:x}
  {name} v8, v2, s10, s11
"""
    r0, _ = run(body, a, target=target, wave=wave)
    sel = np.uint64(s1 | s2 << 32)
    lane = np.arange(wave)
    nib = ((sel >> (np.uint64(4) * (lane % 16).astype(np.uint64))) & np.uint64(0xF)).astype(np.int64)
    row = lane // 16
    src = (((row ^ 1) if "x16" in name else row) * 16 + nib).astype(np.int64)
    want = np.concatenate([w[src] for w in waves(a, wave)])
    assert np.array_equal(lo(r0), want)


@pytest.mark.parametrize("wave", [32, 64])
def test_permlane64(wave):
    a = rnd()
    r0, _ = run("v_permlane64_b32 v8, v2", a, target=T11, wave=wave)
    want = a if wave == 32 else np.concatenate([a[32:], a[:32]])
    assert np.array_equal(lo(r0), want)


@pytest.mark.parametrize("target", [T10, T11])
def test_wave32_masks_are_one_sgpr(target):
    """Compare into s10 (s11 must survive), carry-out into s12 (s13 must survive), v_cmpx writes EXEC only
    (VCC keeps its value), s_and_saveexec_b32 and the VCCZ branch look at the low word alone."""
    a, b = rnd(), rnd()
    b[::3] = a[::3]
    body = """
  s_mov_b32 s11, 0x5a5a5a5a
  s_mov_b32 s13, 0x3c3c3c3c
  v_cmp_eq_u32_e64 s10, v2, v4
  v_add_co_u32 v9, s12, v2, v4
  s_mov_b32 vcc_lo, 0x12345678
  s_mov_b32 vcc_hi, 0
  v_cmpx_gt_u32_e32 v2, v4
  s_mov_b32 s14, exec_lo
  s_mov_b32 exec_lo, -1
  s_cmp_eq_u32 vcc_lo, 0x12345678
  s_cselect_b32 s19, 0, 1000
  s_cmp_eq_u32 s11, 0x5a5a5a5a
  s_cselect_b32 s20, 0, 100
  s_add_u32 s19, s19, s20
  s_mov_b32 s15, 0x1
  s_and_saveexec_b32 s16, s15
  s_mov_b32 s17, exec_lo
  s_mov_b32 exec_lo, s16
  s_mov_b32 vcc_lo, 0
  s_mov_b32 vcc_hi, -1
  s_mov_b32 s18, 7
  s_cbranch_vccnz skip
  s_mov_b32 s18, 9
skip:
  s_add_u32 s18, s18, s17
  s_add_u32 s18, s18, s19
  v_mov_b32 v8, s10
  v_mov_b32 v9, s13
  v_mov_b32 v10, s14
  v_mov_b32 v11, s18
  v_mov_b32 v12, s12
"""
    r0, r1 = run(body, a, b, target=target, wave=32)
    for w in range(2):
        s = slice(32 * w, 32 * w + 32)
        eq = sum(1 << k for k in range(32) if a[s][k] == b[s][k])
        gt = sum(1 << k for k in range(32) if a[s][k] > b[s][k])
        assert (lo(r0[s]) == eq).all() and ((r0[s] >> np.uint64(32)) == 0x3C3C3C3C).all()
        assert (lo(r1[s]) == gt).all()                      # EXEC after v_cmpx
        # EXEC_LO after the saveexec (1) + 9 (VCC_LO zero: no branch) + 0 (VCC and s11 kept)
        assert ((r1[s] >> np.uint64(32)) == 10).all()


def test_vopd_reads_before_writes():
    """v_dual_mov_b32 v8, v2 :: v_dual_add_f32 v9, v8, v4: the Y half adds the old v8."""
    a = RNG.standard_normal(64).astype(np.float32)
    b = RNG.standard_normal(64).astype(np.float32)
    old = RNG.standard_normal(64).astype(np.float32)
    body = """
  v_mov_b32 v8, v6
  v_dual_mov_b32 v8, v2 :: v_dual_add_f32 v9, v8, v4
"""
    r0, _ = run(body, a, b, old, target=T11, wave=32)
    assert np.array_equal(lo(r0).view(np.float32), a)
    assert np.array_equal((r0 >> np.uint64(32)).astype(np.uint32).view(np.float32), old + b)


@pytest.mark.parametrize("target", [T10, T11])
def test_movrel(target):
    """M0-relative VGPR moves: v_movrels (source + M0), v_movreld (destination + M0), v_movrelsd_2_b32
    (source + M0[9:0], destination + M0[25:16])."""
    a, b, c = rnd(), rnd(), rnd()
    body = """
  s_mov_b32 m0, 2
  v_movrels_b32 v8, v2
  v_mov_b32 v12, 0
  v_movreld_b32 v10, v6
  v_mov_b32 v11, v12
  s_mov_b32 m0, 0x00010002
  v_movrelsd_2_b32 v8, v4
  s_mov_b32 m0, 0
"""
    r0, r1 = run(body, a, b, c, target=target, wave=32)
    assert np.array_equal(lo(r0), b)                        # v8 = v[2 + 2] = v4
    assert np.array_equal((r0 >> np.uint64(32)).astype(np.uint32), c)    # v9 = v[4 + 2] = v6
    assert np.array_equal(lo(r1), np.zeros(64, np.uint32))  # v10 not written (M0 moved the write to v12)
    assert np.array_equal((r1 >> np.uint64(32)).astype(np.uint32), c)    # v11 = v12 = c


@pytest.mark.parametrize("target", [T10, T11])
def test_16bit_results_keep_the_other_half(target):
    """GFX10+: a 16-bit result writes its half and keeps the other (GFX9 zeroes the high half)."""
    a = RNG.standard_normal(64).astype(np.float16).view(np.uint16).astype(np.uint32)
    b = RNG.standard_normal(64).astype(np.float16).view(np.uint16).astype(np.uint32)
    old = rnd()
    body = """
  v_mov_b32 v8, v6
  v_add_f16 v8, v2, v4
  v_mov_b32 v9, v6
  v_mul_lo_u16 v9, v2, v4
"""
    r0, _ = run(body, a, b, old, target=target, wave=32)
    s = (a.astype(np.uint16).view(np.float16).astype(np.float64) + b.astype(np.uint16).view(np.float16)).astype(np.float16)
    assert np.array_equal(lo(r0), (old & 0xFFFF0000) | s.view(np.uint16).astype(np.uint32))
    assert np.array_equal((r0 >> np.uint64(32)).astype(np.uint32), (old & 0xFFFF0000) | ((a * b) & 0xFFFF))


def test_true16_high_halves():
    """GFX11 true16 (LLVM 19 cannot assemble it; the words are given): v_add_f16_e32 v8.h, v2.l, v4.h."""
    a, b, old = rnd(), rnd(), rnd()
    word = (0x32 << 25) | ((8 | 0x80) << 17) | ((4 | 0x80) << 9) | (256 + 2)
    body = f"""
  v_mov_b32 v8, v6
  .long 0x{word:08x}
"""
    r0, _ = run(body, a, b, old, target=T11, wave=32)
    x = (a & 0xFFFF).astype(np.uint16).view(np.float16).astype(np.float64)
    y = (b >> 16).astype(np.uint16).view(np.float16).astype(np.float64)
    with np.errstate(all="ignore"):                         # random halves include Inf and NaN
        s = (x + y).astype(np.float16).view(np.uint16).astype(np.uint32)
    got = lo(r0)
    assert np.array_equal(got & 0xFFFF, old & 0xFFFF)
    same = (got >> 16) == s
    nan = np.isnan(s.astype(np.uint16).view(np.float16)) & np.isnan((got >> 16).astype(np.uint16).view(np.float16))
    assert (same | nan).all()


@pytest.mark.parametrize("target", [T10, T11])
def test_bpermute_wraps_in_wave32(target):
    """ds_bpermute_b32 in wave32: the lane index is taken modulo the wave's 32 lanes."""
    a = rnd()
    idx = RNG.integers(0, 64, 64).astype(np.uint32)
    body = """
  v_lshlrev_b32 v4, 2, v4
  ds_bpermute_b32 v8, v4, v2
  s_waitcnt lgkmcnt(0)
"""
    r0, _ = run(body, a, idx, target=target, wave=32)
    want = np.concatenate([w[idx[32 * k:32 * k + 32] % 32] for k, w in enumerate(waves(a, 32))])
    assert np.array_equal(lo(r0), want)


@pytest.mark.parametrize("wave", [32, 64])
def test_gfx11_scratch_address_forms(wave, engine):
    """GFX11 scratch: SADDR + VADDR (SVE), VADDR alone, SADDR alone, neither (offset only), per lane; on both
    engines (the compiled one runs the native handler: the SVE bit, not SADDR, says whether VADDR counts)."""
    a, b, c = rnd(), rnd(), rnd()
    engine(T11)
    body = """
  v_mov_b32 v12, 8
  s_mov_b32 s20, 4
  scratch_store_b32 v12, v2, s20 offset:4
  scratch_store_b32 off, v4, off offset:32
  scratch_store_b32 v12, v6, off offset:40
  s_waitcnt_vscnt null, 0
  scratch_load_b32 v8, off, s20 offset:12
  scratch_load_b32 v9, v12, off offset:24
  scratch_load_b32 v10, off, off offset:48
  s_waitcnt vmcnt(0)
  v_mov_b32 v11, 0
"""
    r0, r1 = run(body, a, b, c, target=T11, wave=wave, private=64)
    engine(T11)
    assert np.array_equal(lo(r0), a)                        # 4 + 8 + 4 = 16 = 4 + 12
    assert np.array_equal((r0 >> np.uint64(32)).astype(np.uint32), b)     # 32 = 8 + 24
    assert np.array_equal(lo(r1), c)                        # 48 = 8 + 40
