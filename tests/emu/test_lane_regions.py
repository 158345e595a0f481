"""Lane regions (pyhip/emu/jit/regions.py): a run of lane-wise VALU instructions compiled as one loop over chunks
of lanes, with a loop for a full EXEC (no masking) and one for any EXEC.  A NaN seen in a chunk of the
full loop hands that chunk and the rest to the masked loop, which recomputes it with the NaN rule; the
lane-mask words (VCC from a compare) are assembled across both loops.  Checked against host float math and
bit for bit against the numpy engine, with a NaN planted in one chunk at a time, under full and partial EXEC,
wave64 and wave32."""
import numpy as np
import pytest

from asmkit import POISON, engine, gpu, run  # noqa: F401 (engine: a fixture)
from pyhip.emu import jit

U64 = np.uint64
QNAN = 0x7FC12345          # a quiet NaN with a payload: it must come through unchanged

BODY = """
  v_add_f32 v12, v2, v4
  v_mul_f32 v13, v12, v6
  v_cmp_gt_f32 {vcc}, v13, v2
  v_cmp_lt_f32 {sreg}, v12, v6
  v_sub_f32 v14, v13, v4
  v_max_f32 v15, v14, v2
  v_cndmask_b32 v8, v14, v15, {vcc}
  v_mov_b32 v9, v13
  v_cndmask_b32 v10, 0, 1, {vcc}
  v_cndmask_b32 v11, v12, v4, {sreg}
"""


def _want(a, b, c):
    with np.errstate(all="ignore"):
        v12 = a + b
        v13 = v12 * c
        vcc = v13 > a
        v14 = v13 - b
        v15 = np.fmax(v14, a)
        v11 = np.where(v12 < c, b, v12)
    v8 = np.where(vcc, v15, v14)
    return v8, v13, vcc.astype(np.uint32), v11


def _bits(x):
    return np.asarray(x, np.float32).view(np.uint32).astype(U64)


def _same(got_bits, want):
    """Equal as floats, NaN where NaN (host math does not define NaN payloads the way the ISA does; the
    engines are compared bit for bit below)."""
    g = got_bits.astype(np.uint32).view(np.float32)
    w = np.asarray(want, np.float32)
    return bool(np.all((g == w) | (np.isnan(g) & np.isnan(w))))


@pytest.mark.parametrize("target,wave", [("gfx90a", 64), ("gfx1100", 32), ("gfx1030", 32)])
@pytest.mark.parametrize("lanes", [64, 45])
@pytest.mark.parametrize("nan_lane", [None, 0, 13, 37, 63])
def test_lane_region_with_nans_in_one_chunk(target, wave, lanes, nan_lane, engine):
    rng = np.random.default_rng(lanes * 100 + (nan_lane or 99) + wave)
    a, b, c = (rng.standard_normal(64).astype(np.float32) for _ in range(3))
    if nan_lane is not None:
        a = a.copy()
        a.view(np.uint32)[nan_lane] = QNAN
    body = BODY.format(vcc="vcc_lo" if wave == 32 else "vcc", sreg="s20" if wave == 32 else "s[20:21]")
    engine(target)
    fallbacks = gpu(target).engine_stats()["fallback"]
    kw = {"wave": wave} if target.startswith("gfx1") else {}
    r0, r1 = run(body, a, b, c, target=target, lanes=lanes, **kw)
    engine(target)
    assert gpu(target).engine_stats()["fallback"] == fallbacks, gpu(target).engine_stats()["reasons"]
    v8, v13, vcc, v11 = _want(a, b, c)
    n = lanes
    assert _same(r0[:n] & U64(0xFFFFFFFF), v8[:n]) and _same(r0[:n] >> U64(32), v13[:n])
    assert np.array_equal(r1[:n] & U64(0xFFFFFFFF), vcc[:n].astype(U64))
    assert _same(r1[:n] >> U64(32), v11[:n])
    assert (r0[n:] == U64(POISON)).all() and (r1[n:] == U64(POISON)).all()
    if nan_lane is not None and nan_lane < n:
        # the NaN rule: the payload of the first NaN operand, quieted, through add, mul and sub
        assert int(r0[nan_lane]) >> 32 == QNAN


NAN_BODY = """
  v_fma_f32 v12, v4, v2, v6
  v_fma_f32 v13, v6, v4, v2
  v_add_f32 v14, v6, v4
  v_mul_f32 v15, v2, v6
  v_mov_b32 v8, v12
  v_mov_b32 v9, v13
  v_mov_b32 v10, v14
  v_mov_b32 v11, v15
"""


@pytest.mark.parametrize("target,wave", [("gfx90a", 64), ("gfx1100", 32)])
@pytest.mark.parametrize("lanes", [64, 45])
def test_engines_agree_bit_for_bit(target, wave, lanes, monkeypatch):
    """Both engines on the same inputs: quiet and signalling NaNs with payloads as two and three operands of
    one operation, in every third lane (so in every chunk) — which NaN comes out is the ISA's rule, not the
    host's (x86 picks by its own operand order, which LLVM may commute)."""
    rng = np.random.default_rng(7 + lanes)
    a, b, c = (rng.standard_normal(64).astype(np.float32) for _ in range(3))
    for i in range(0, 64, 3):
        a.view(np.uint32)[i] = 0x7FC00000 + i
        b.view(np.uint32)[i] = 0xFFC00000 + i
        c.view(np.uint32)[i] = 0x7F800001 + i
    kw = {"wave": wave} if target.startswith("gfx1") else {}
    out = {}
    for eng in ("numpy", "compiled", "quick"):
        # quick: the tier-1 code (jit: compact, its masked loop exact at once)
        monkeypatch.setenv("PYHIP_JIT_TIERING", "1" if eng == "quick" else "0")
        monkeypatch.setenv("PYHIP_JIT_CACHE_DIR", "")
        monkeypatch.setenv("PYHIP_JIT_HOT", "1000")
        monkeypatch.setattr(gpu(target), "engine", "numpy" if eng == "numpy" else "native")
        if eng == "quick":
            monkeypatch.setattr(jit, "TIER0_WORK", 0)     # compiled at once (not run on numpy first)
        before = gpu(target).engine_stats()["native"]
        quick = gpu(target).engine_stats().get("compiled", {}).get("quick", 0)
        out[eng] = run(NAN_BODY, a, b, c, target=target, lanes=lanes, **kw)
        assert (gpu(target).engine_stats()["native"] > before) == (eng != "numpy")
        assert (gpu(target).engine_stats().get("compiled", {}).get("quick", 0) > quick) == (eng == "quick")
    for eng in ("compiled", "quick"):
        assert np.array_equal(out["numpy"][0], out[eng][0]), eng
        assert np.array_equal(out["numpy"][1], out[eng][1]), eng


# Operations whose NaN flags the fast body leaves out when an operand is known to be flagged already
# (jit/irgen.py nan_known): max/min chains through DPP moves, conversions of flagged results, a select of a
# flagged and an unflagged value, v_exp of a flagged sum, f64 arithmetic on converted values.
KNOWN_BODY = """
  v_max_f32 v12, v2, v2
  v_max_f32 v13, v12, v4
  v_mov_b32_dpp v14, v13 quad_perm:[1,0,3,2] row_mask:0xf bank_mask:0xf
  v_max_f32 v14, v14, v13
  v_add_f32 v15, v4, v6
  v_cvt_f64_f32 v[16:17], v15
  v_cmp_gt_f32 {vcc}, v2, v4
  v_cndmask_b32 v18, v15, v2, {vcc}
  v_max_f32 v19, v18, v18
  v_exp_f32 v20, v15
  v_min_f32 v21, v6, v14
  v_cvt_f32_f64 v22, v[24:25]
  v_max_f32 v23, v22, v22
  v_mul_f32 v26, v15, v15
  v_cvt_f64_f32 v[28:29], v26
  v_fma_f64 v[30:31], v[28:29], v[16:17], v[24:25]
  v_max_f64 v[32:33], v[30:31], v[24:25]
  v_max_f32 v34, v20, v3
"""


@pytest.mark.parametrize("target,wave", [("gfx90a", 64), ("gfx1100", 32)])
def test_flags_left_out_for_known_operands(target, wave, monkeypatch):
    """The compiled fast body (tier 2) against the numpy engine, bit for bit, with quiet and signalling NaNs
    carrying payloads in a few lanes of every operand (some chunks have none: their fast result stands)."""
    from asmkit import run_rows
    rng = np.random.default_rng(11 + wave)
    rows = rng.standard_normal((2, 36, wave)).astype(np.float32).view(np.uint32)
    f64 = rng.standard_normal((2, wave)).view(np.uint32).reshape(2, wave, 2)
    rows[:, 24], rows[:, 25] = f64[..., 0], f64[..., 1]
    for case in range(2):
        for r in (2, 3, 4, 6):
            lanes = rng.choice(wave, size=3, replace=False) if case else [5 + r]
            for i, lane in enumerate(lanes):
                rows[case, r, lane] = (0x7FC00000, 0xFF800000 + 7, 0x7F800100)[i % 3] + lane
        lane = 9 if case else 17
        rows[case, 25, lane], rows[case, 24, lane] = 0x7FF40000, 0x1234      # a signalling f64 NaN
    body = KNOWN_BODY.format(vcc="vcc" if wave == 64 else "vcc_lo")
    out = {}
    for eng in ("numpy", "compiled"):
        monkeypatch.setenv("PYHIP_JIT_TIERING", "0")
        monkeypatch.setenv("PYHIP_JIT_CACHE_DIR", "")
        monkeypatch.setattr(gpu(target), "engine", "numpy" if eng == "numpy" else "native")
        before = gpu(target).engine_stats()["native"]
        out[eng] = run_rows([body, body], rows, target=target, wave=wave)
        assert (gpu(target).engine_stats()["native"] > before) == (eng == "compiled")
    assert np.isnan(out["numpy"][:, 14:24].view(np.float32)).any()         # NaNs did come through
    assert np.array_equal(out["numpy"], out["compiled"])


@pytest.mark.parametrize("target,wave", [("gfx90a", 64), ("gfx1100", 32)])
def test_a_region_loads_each_row_once_per_chunk(target, wave, monkeypatch, tmp_path):
    """A lane region's chunk body reads each VGPR row from memory at most once (its value is reused by the
    instructions after; a written row's old value, for the EXEC merge, is that same load), and the results
    stay the numpy engine's bit for bit.  Counted in the quick tier's IR (no LLVM pass would remove a
    repeated load there): BODY touches rows 2, 4, 6 and 8-15, and reads v2, v4 and v6 three, three and two
    times."""
    import re
    rng = np.random.default_rng(23 + wave)
    a, b, c = (rng.standard_normal(64).astype(np.float32) for _ in range(3))
    kw = {"wave": wave} if target.startswith("gfx1") else {}
    body = BODY.format(vcc="vcc" if wave == 64 else "vcc_lo", sreg="s[20:21]" if wave == 64 else "s20")
    out = {}
    for eng in ("numpy", "quick"):
        monkeypatch.setenv("PYHIP_JIT_TIERING", "1")
        monkeypatch.setenv("PYHIP_JIT_CACHE_DIR", "")
        monkeypatch.setenv("PYHIP_JIT_HOT", "1000")
        monkeypatch.setenv("PYHIP_JIT_DUMP", str(tmp_path / eng))
        monkeypatch.setattr(jit, "TIER0_WORK", 0)
        monkeypatch.setattr(gpu(target), "engine", "numpy" if eng == "numpy" else "native")
        out[eng] = run(body, a, b, c, target=target, lanes=45, **kw)
    for i in range(2):
        assert np.array_equal(out["numpy"][i], out["quick"][i])
    (ll,) = (tmp_path / "quick").glob("*.ll")
    text = ll.read_text()
    loops = re.findall(r"^(rg\d+)loop:$(.*?)^\1e:$", text, re.S | re.M)
    assert loops
    for _, loop in loops:
        loads = re.findall(r"= load <\d+ x i32>, ptr", loop)
        assert 0 < len(loads) <= 11, (len(loads), loop)


# NaN flags left to a consumer (jit/irgen.py nan_pend): a NaN-ruled result consumed by an operation that makes a
# NaN of it in the same lane (and is flagged itself) needs no flag of its own; one consumed only by max/min, a
# compare, a select or a store keeps it.  Each case is one small region whose NaNs reach one such result; an FMA
# with NaNs in two or three operands (the ISA's order picks the NaN, not the host's: x86 takes the third one
# first in this operand order) shows a missing flag.
COVER_CASES = [
    "  v_fma_f32 v12, v6, v4, v2\n  v_max_f32 v13, v12, v3\n",
    "  v_fma_f32 v12, v6, v4, v2\n  v_cmp_gt_f32 {vcc}, v12, v3\n  v_cndmask_b32 v13, v3, v12, {vcc}\n",
    "  v_fma_f32 v12, v6, v4, v2\n  v_add_f32 v13, v12, v3\n  v_mul_f32 v14, v13, v13\n",
    "  v_fma_f32 v12, v6, v4, v2\n  v_cvt_f64_f32 v[14:15], v12\n  v_add_f64 v[16:17], v[14:15], v[24:25]\n",
    "  v_fma_f32 v12, v6, v4, v2\n  v_ldexp_f32 v13, v12, v7\n  v_max_f32 v14, v13, v3\n",
    "  v_ldexp_f32 v12, v2, v7\n  v_fma_f32 v13, v6, v4, v12\n  v_min_f32 v14, v13, v3\n",
]


@pytest.mark.parametrize("target,wave", [("gfx90a", 64), ("gfx1100", 32)])
def test_flags_left_to_consumers(target, wave, monkeypatch):
    """The compiled fast body (tier 2) against the numpy engine, bit for bit (fails when a result that needs its
    flag goes without one)."""
    from asmkit import run_rows
    rng = np.random.default_rng(31 + wave)
    cases = len(COVER_CASES)
    rows = rng.standard_normal((cases, 28, wave)).astype(np.float32).view(np.uint32)
    f64 = rng.standard_normal((cases, wave)).view(np.uint32).reshape(cases, wave, 2)
    rows[:, 24], rows[:, 25] = f64[..., 0], f64[..., 1]
    # v7: ldexp's exponents, inside binary32's powers of two except in some lanes (the binary64 rare block)
    rows[:, 7] = rng.integers(-100, 100, (cases, wave)).astype(np.int32).view(np.uint32)
    rows[:, 7, 3::13] = np.uint32(300)
    for case in range(cases):
        for k, lane in enumerate(rng.choice(wave, size=12, replace=False)):
            for j, r in enumerate((2, 4, 6)[k % 2:]):
                rows[case, r, lane] = (0x7FC00000, 0xFF800000 + 7, 0x7F800100)[(j + k) % 3] + lane + 16 * r
    bodies = [b.format(vcc="vcc" if wave == 64 else "vcc_lo") for b in COVER_CASES]
    out = {}
    for eng in ("numpy", "compiled"):
        monkeypatch.setenv("PYHIP_JIT_TIERING", "0")
        monkeypatch.setenv("PYHIP_JIT_CACHE_DIR", "")
        monkeypatch.setattr(gpu(target), "engine", "numpy" if eng == "numpy" else "native")
        before = gpu(target).engine_stats()["native"]
        out[eng] = run_rows(bodies, rows, target=target, wave=wave)
        assert (gpu(target).engine_stats()["native"] > before) == (eng == "compiled")
    assert np.isnan(out["numpy"][:, 12:15].view(np.float32)).any()
    bad = np.nonzero(out["numpy"] != out["compiled"])
    assert not bad[0].size, [(int(c), int(r), int(lane), hex(int(out["numpy"][c, r, lane])),
                              hex(int(out["compiled"][c, r, lane]))) for c, r, lane in zip(*bad)][:8]


ZERO_BODY = """
  v_add_f32 v12, v2, 0
  v_max_f32 v8, v12, v4
  v_min_f32 v9, v12, v4
"""


@pytest.mark.parametrize("target,wave", [("gfx90a", 64), ("gfx1100", 32)])
def test_max_min_of_signed_zeros_and_equal_values(target, wave, monkeypatch):
    """v_max/v_min in a lane region's fast body (no NaN in the chunk) on pairs of zeros of both signs, equal
    values, denormals and random values, both engines, against the rule written out (-0 < +0; of equal values
    the first): max(+0, -0) = max(-0, +0) = +0, min = -0."""
    rng = np.random.default_rng(11)
    pairs = [(0.0, -0.0), (-0.0, 0.0), (-0.0, -0.0), (0.0, 0.0), (1.5, 1.5), (-2.0, -2.0), (1e-45, -1e-45),
             (-1e-45, 1e-45), (1e-45, 1e-45), (3.0, -3.0), (-3.0, 3.0), (np.inf, np.inf), (-np.inf, np.inf)]
    a = rng.standard_normal(64).astype(np.float32)
    b = np.where(rng.random(64) < 0.3, a, rng.standard_normal(64)).astype(np.float32)
    for i, (x, y) in enumerate(pairs * 4):
        a[i], b[i] = x, y
    # v_add_f32 v12, v2, 0 first: -0 + 0 is +0, so v12 is a with -0 made +0 (a lane region, not a lone max)
    a12 = (a + np.float32(0)).astype(np.float32)
    gt, lt = a12 > b, a12 < b
    neg_a = np.signbit(a12)
    want_max = np.where(gt, a12, np.where(lt, b, np.where(neg_a, b, a12))).astype(np.float32)
    want_min = np.where(lt, a12, np.where(gt, b, np.where(neg_a, a12, b))).astype(np.float32)
    kw = {"wave": wave} if target.startswith("gfx1") else {}
    for eng in ("numpy", "compiled"):
        monkeypatch.setenv("PYHIP_JIT_TIERING", "0")
        monkeypatch.setenv("PYHIP_JIT_CACHE_DIR", "")
        monkeypatch.setattr(gpu(target), "engine", "numpy" if eng == "numpy" else "native")
        before = gpu(target).engine_stats()["native"]
        r0, _ = run(ZERO_BODY, _bits(a), _bits(b), _bits(a), target=target, **kw)
        assert (gpu(target).engine_stats()["native"] > before) == (eng != "numpy")
        got_max = (r0 & U64(0xFFFFFFFF)).astype(np.uint32)
        got_min = (r0 >> U64(32)).astype(np.uint32)
        assert np.array_equal(got_max, want_max.view(np.uint32)), (eng, np.nonzero(got_max != want_max.view(np.uint32)))
        assert np.array_equal(got_min, want_min.view(np.uint32)), (eng, np.nonzero(got_min != want_min.view(np.uint32)))
