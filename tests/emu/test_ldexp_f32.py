"""v_ldexp_f32 (and so V_DIV_SCALE_F32's 2^±64 scaling, which shares fpops.ldexp) on both engines against an
independent reference: numpy's binary64 ldexp rounded once to binary32.  The description multiplies in binary32
when 2**e is a normal binary32 and goes through binary64 otherwise; the operands cover every exponent field of x
(denormals, infinities, NaNs with payloads, zeros), exponents at both edges of the binary32 path (-127..-125,
126..128), ±64, the clamps (±400) and far beyond, with denormals kept (MODE allows them in run_rows)."""
import numpy as np
import pytest

from asmkit import engine, run_rows  # noqa: F401 (engine: a fixture)

RNG = np.random.default_rng(20261129)
PAIRS = 12                      # v_ldexp_f32 v[24 + i], v[i], v[12 + i]


def _operands(cases: int, wave: int):
    n = cases * PAIRS * wave
    sign = RNG.integers(0, 2, n, dtype=np.uint32) << 31
    expo = RNG.integers(0, 256, n, dtype=np.uint32) << 23
    mant = RNG.integers(0, 1 << 23, n, dtype=np.uint32)
    # some mantissas all ones or all zeros (rounding carries, exact powers of two)
    mant[RNG.random(n) < 0.1] = (1 << 23) - 1
    mant[RNG.random(n) < 0.1] = 0
    x = sign | expo | mant
    edges = np.array([-2 ** 31, -100000, -401, -400, -399, -300, -277, -200, -160, -151, -150, -149, -148, -128,
                      -127, -126, -125, -64, -1, 0, 1, 64, 125, 126, 127, 128, 129, 200, 254, 255, 256, 300, 399,
                      400, 401, 100000, 2 ** 31 - 1], np.int64)
    e = np.where(RNG.random(n) < 0.5, RNG.choice(edges, n), RNG.integers(-320, 320, n)).astype(np.int32)
    return x.reshape(cases, PAIRS, wave), e.view(np.uint32).reshape(cases, PAIRS, wave)


def _reference(x: np.ndarray, e: np.ndarray) -> np.ndarray:
    ei = np.clip(e.view(np.int32).astype(np.int64), -2000, 2000)
    with np.errstate(all="ignore"):
        xf = x.view(np.float32).astype(np.float64)
        want = np.ldexp(xf, ei).astype(np.float32).view(np.uint32)
    nan = np.isnan(x.view(np.float32))
    return np.where(nan, x | np.uint32(0x00400000), want)       # a NaN operand comes out quieted, payload kept


@pytest.mark.parametrize("target,wave", [("gfx90a", 64), ("gfx1100", 32)])
def test_v_ldexp_f32(engine, target, wave):
    cases = 16
    x, e = _operands(cases, wave)
    rows = np.zeros((cases, 48, wave), np.uint32)
    rows[:, :PAIRS], rows[:, 12:12 + PAIRS] = x, e
    op = "v_ldexp_f32_e64" if target.startswith("gfx1") else "v_ldexp_f32"
    body = "".join(f"  {op} v{24 + i}, v{i}, v{12 + i}\n" for i in range(PAIRS))
    engine(target)
    got = run_rows([body] * cases, rows, target=target, wave=wave)
    engine(target)
    want = _reference(x, e)
    bad = np.nonzero(got[:, 24:24 + PAIRS] != want)
    assert not bad[0].size, [(hex(int(x[i])), int(e[i].view(np.int32)), hex(int(got[:, 24:24 + PAIRS][i])),
                              hex(int(want[i]))) for i in zip(*bad)][:8]
