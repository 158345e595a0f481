"""v_div_scale_f32 on both engines against an oracle written here in numpy from the ISA's pseudocode (the
classification vdiv.py describes, without its common-case shortcut): pairs of exponent fields of the
denominator and numerator at every boundary (denormals, zeros, infinities, NaNs included), random mantissas
and signs, the value scaled being the denominator or the numerator, and the VCC flag."""
import numpy as np
import pytest

from asmkit import engine, run_rows  # noqa: F401 (engine: a fixture)

PAIRS = 8          # v_div_scale_f32 v[16 + i] (s0 = s1), v[24 + i] (s0 = s2), flags in v[32 + i]


def _operands(rng, n):
    """Exponent-field pairs around every boundary of the classification (zeros/denormals, the "tiny" numerator,
    differences near -125 and 96, the reciprocal's 2^126, infinities/NaNs) in random order, then random pairs;
    each with random mantissas and signs."""
    edge = np.array([0, 1, 2, 3, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 95, 96, 97, 98, 100, 120, 125, 126, 127,
                     128, 129, 130, 150, 151, 152, 153, 154, 155, 190, 221, 222, 223, 224, 250, 251, 252, 253, 254,
                     255], np.uint32)
    e1, e2 = (a.ravel() for a in np.meshgrid(edge, edge))
    order = rng.permutation(e1.size)
    e1 = np.concatenate([e1[order], rng.integers(0, 256, n, dtype=np.uint32)])[:n]
    e2 = np.concatenate([e2[order], rng.integers(0, 256, n, dtype=np.uint32)])[:n]

    def make(e):
        m = rng.integers(0, 1 << 23, e.size, dtype=np.uint32)
        m[rng.random(e.size) < 0.15] = 0
        m[rng.random(e.size) < 0.05] = (1 << 23) - 1
        return (rng.integers(0, 2, e.size, dtype=np.uint32) << 31) | (e << 23) | m
    return make(e1), make(e2)


def _oracle(s0, s1, s2):
    """(result bits, flag) of V_DIV_SCALE_F32 per the pseudocode (denormals kept)."""
    f0, f1, f2 = (x.view(np.float32) for x in (s0, s1, s2))
    e1, e2 = ((s1 >> 23) & 0xFF).astype(np.int64), ((s2 >> 23) & 0xFF).astype(np.int64)
    with np.errstate(all="ignore"):
        q = f2 / f1
        up = (f0.astype(np.float64) * 2.0 ** 64).astype(np.float32)
        down = (f0.astype(np.float64) * 2.0 ** -64).astype(np.float32)
    den = lambda x: (np.abs(x) < np.float32(2.0 ** -126)) & (x != 0)          # noqa: E731
    finite1 = np.isfinite(f1)
    rcp_den = finite1 & (np.abs(f1) > np.float32(2.0 ** 126))
    quo_den = ((e2 - e1 < 2 - 127) | (e2 == 0)) & den(q)
    zero = (f2 == 0) | (f1 == 0)
    c_big = ~zero & (e2 - e1 >= 96)
    rest = ~zero & ~c_big
    c_dden = rest & den(f1)
    rest &= ~c_dden
    c_both = rest & rcp_den & quo_den
    c_rcp = rest & ~c_both & rcp_den
    rest &= ~rcp_den
    c_quo = rest & quo_den
    c_tiny = rest & ~quo_den & (e2 <= 23)
    is1, is2 = f0 == f1, f0 == f2
    scale_up = (c_big & is1) | c_dden | (c_quo & is2) | c_tiny
    scale_down = (c_both & is1) | c_rcp
    res = np.where(scale_up, up.view(np.uint32), np.where(scale_down, down.view(np.uint32), s0))
    res = np.where(zero | np.isnan(f1) | np.isnan(f2), np.uint32(0x7FC00000), res)
    # a NaN s0 scaled: quieted (binary64 round trip keeps the payload)
    nan0 = np.isnan(f0) & (scale_up | scale_down) & ~(zero | np.isnan(f1) | np.isnan(f2))
    res = np.where(nan0, s0 | np.uint32(0x00400000), res)
    return res, (c_big | c_both | c_quo)


@pytest.mark.parametrize("target,wave", [("gfx90a", 64), ("gfx1100", 32)])
def test_v_div_scale_f32(engine, target, wave):
    rng = np.random.default_rng(77 + wave)
    cases = 4
    n = cases * PAIRS * wave
    s1, s2 = _operands(rng, n)
    s1, s2 = s1.reshape(cases, PAIRS, wave), s2.reshape(cases, PAIRS, wave)
    rows = np.zeros((cases, 48, wave), np.uint32)
    rows[:, :PAIRS], rows[:, 8:8 + PAIRS] = s1, s2
    vcc = "vcc" if wave == 64 else "vcc_lo"
    body = "".join(f"  v_div_scale_f32 v{16 + i}, {vcc}, v{i}, v{i}, v{8 + i}\n"
                   f"  v_cndmask_b32 v{32 + i}, 0, 1, {vcc}\n"
                   f"  v_div_scale_f32 v{24 + i}, {vcc}, v{8 + i}, v{i}, v{8 + i}\n" for i in range(PAIRS))
    engine(target)
    got = run_rows([body] * cases, rows, target=target, wave=wave)
    engine(target)
    for col, s0 in ((16, s1), (24, s2)):
        want, flag = _oracle(s0, s1, s2)
        bad = np.nonzero(got[:, col:col + PAIRS] != want)
        assert not bad[0].size, [(hex(int(s0[i])), hex(int(s1[i])), hex(int(s2[i])),
                                  hex(int(got[:, col:col + PAIRS][i])), hex(int(want[i]))) for i in zip(*bad)][:6]
        assert np.array_equal(got[:, 32:32 + PAIRS], flag.astype(np.uint32))
