"""v_exp_f32 / v_exp_f16 against an independent reference (numpy's exp2 in binary64, rounded once), on both
engines: random arguments over the whole finite range of results, the overflow / underflow edges, and the
special values (the description clamps arguments beyond ±200 for narrow results: 2**±200 must round to inf
and to zero like every argument beyond)."""
import numpy as np
import pytest

from asmkit import gpu, run

RNG = np.random.default_rng(2026)
SPECIAL = [0.0, -0.0, 1.0, -1.0, 0.5, 127.0, 127.99, 128.0, 128.5, -126.0, -149.0, -149.5, -150.0, -151.0,
           199.5, 200.0, 200.5, 250.0, -199.5, -200.0, -200.5, -250.0, 1e30, -1e30, np.inf, -np.inf, np.nan]


@pytest.fixture(params=["numpy", "compiled"])
def compiled(request, monkeypatch):
    if request.param == "compiled":
        monkeypatch.setenv("PYHIP_JIT_TIERING", "0")        # compile first (a first small dispatch runs on numpy)
    else:                       # the numpy engine even when the same kernel was compiled earlier in this process
        for target in ("gfx90a", "gfx1100"):
            monkeypatch.setattr(gpu(target), "engine", "numpy")
    return request.param == "compiled"


def _args(dtype, lo, hi):
    x = RNG.uniform(lo, hi, 64)
    x[:len(SPECIAL)] = SPECIAL
    with np.errstate(over="ignore"):
        return x.astype(dtype)


@pytest.mark.parametrize("target", ["gfx90a", "gfx1100"])
def test_v_exp_f32(target, compiled):
    x = _args(np.float32, -160, 140)
    before = gpu(target).engine_stats()["native"]
    r0, _ = run("v_exp_f32 v8, v2", x.view(np.uint32).astype(np.uint64), target=target,
                **({"wave": 32} if target.startswith("gfx1") else {}))
    assert (gpu(target).engine_stats()["native"] > before) == compiled
    got = (r0 & np.uint64(0xFFFFFFFF)).astype(np.uint32).view(np.float32)
    with np.errstate(all="ignore"):
        want = np.exp2(x.astype(np.float64)).astype(np.float32)
    nan = np.isnan(want)
    assert np.array_equal(np.isnan(got), nan)
    assert np.array_equal(got[~nan].view(np.uint32), want[~nan].view(np.uint32)), \
        [(float(a), float(g), float(w)) for a, g, w in zip(x[~nan], got[~nan], want[~nan]) if g != w][:5]


def test_v_exp_f16(compiled):
    x = _args(np.float16, -26, 17)
    before = gpu("gfx90a").engine_stats()["native"]
    r0, _ = run("v_exp_f16 v8, v2", x.view(np.uint16).astype(np.uint64))
    assert (gpu("gfx90a").engine_stats()["native"] > before) == compiled
    got = (r0 & np.uint64(0xFFFF)).astype(np.uint16).view(np.float16)
    with np.errstate(all="ignore"):
        e = np.exp2(x.astype(np.float64))
        # one rounding to binary16 (numpy's float64 -> float16 cast rounds once, to nearest even)
        want = e.astype(np.float16)
    nan = np.isnan(want)
    assert np.array_equal(np.isnan(got), nan)
    assert np.array_equal(got[~nan].view(np.uint16), want[~nan].view(np.uint16))


@pytest.mark.parametrize("target", ["gfx90a", "gfx1100"])
def test_v_exp_f32_nan_payloads_and_range_edges(target, compiled):
    """A NaN argument comes back as that NaN quieted (payload kept, signaling ones get the quiet bit), on both
    engines; arguments around the rounding of n (k + 0.5 ties go to even) and the ±200 clamp give exp2 of the
    argument rounded once."""
    lanes = 32 if target.startswith("gfx1") else 64
    nans = np.array([0x7F800001, 0x7FBFFFFF, 0xFF800001, 0x7FC00000, 0xFFC12345, 0x7FA5A5A5, 0xFFFFFFFF,
                     0x7FC00001], np.uint32)
    ties = (np.arange(-12, 12, dtype=np.float32) + np.float32(0.5))
    ties = np.concatenate([ties, np.nextafter(ties, np.float32(np.inf)), np.nextafter(ties, np.float32(-np.inf))])
    edges = np.array([199.75, -199.75, 200.0, -200.0, np.nextafter(np.float32(200), np.float32(0))], np.float32)
    x = np.concatenate([nans.view(np.float32), ties, edges])
    x = np.concatenate([x, np.zeros((-len(x)) % lanes, np.float32)])
    got = []
    for i in range(0, len(x), lanes):
        r0, _ = run("v_exp_f32 v8, v2", x[i:i + lanes].view(np.uint32).astype(np.uint64), target=target,
                    **({"wave": 32} if lanes == 32 else {}))
        got.append((r0[:lanes] & np.uint64(0xFFFFFFFF)).astype(np.uint32))
    got = np.concatenate(got)
    assert np.array_equal(got[:len(nans)], nans | np.uint32(0x400000)), [hex(v) for v in got[:len(nans)]]
    rest = x[len(nans):]
    with np.errstate(all="ignore"):
        want = np.exp2(rest.astype(np.float64)).astype(np.float32)
    assert np.array_equal(got[len(nans):], want.view(np.uint32))
