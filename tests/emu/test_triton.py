"""Triton-compiled kernels (gfx942 on device 1, gfx90a on device 0) on the emulated GPU vs numpy.
Launch geometry and dynamic LDS come from the JSON Triton wrote beside each HSACO."""
import json

import numpy as np
import pytest

import pyhip

from conftest import BIN

RNG = np.random.default_rng(7)
ARCHS = {"gfx90a": 0, "gfx942": 1}


def load(name, arch):
    pyhip.set_device(ARCHS[arch])
    meta = json.loads((BIN / f"triton/{name}-{arch}.json").read_text())
    return pyhip.load(BIN / f"triton/{name}-{arch}.hsaco").kernel(meta["kernel"]), meta


@pytest.fixture(autouse=True)
def _reset():
    yield
    pyhip.set_device(0)


@pytest.mark.parametrize("arch", sorted(ARCHS))
def test_masked_add(arch):
    k, meta = load("add", arch)
    n = 1000                                          # not a multiple of BLOCK=256
    x, y = RNG.standard_normal(n).astype(np.float32), RNG.standard_normal(n).astype(np.float32)
    o = pyhip.empty(n, np.float32)
    o.fill_bytes(0xCD)
    blk = meta["constexprs"]["BLOCK"]
    k((n + blk - 1) // blk, meta["block"], pyhip.to_device(x), pyhip.to_device(y), o, n, 0, 0, shared=meta["shared"])
    assert np.array_equal(o.get(), x + y)


@pytest.mark.parametrize("arch", sorted(ARCHS))
def test_softmax_rows(arch):
    k, meta = load("softmax", arch)
    rows, cols = 7, 100
    x = RNG.standard_normal((rows, cols)).astype(np.float32) * 4
    o = pyhip.empty(rows * cols, np.float32)
    o.fill_bytes(0xCD)
    k(rows, meta["block"], o, pyhip.to_device(x), cols, cols, cols, 0, 0, shared=meta["shared"])
    e = np.exp(x.astype(np.float64) - x.max(axis=1, keepdims=True))
    assert np.allclose(o.get().reshape(rows, cols), e / e.sum(axis=1, keepdims=True), rtol=2e-6, atol=1e-7)


@pytest.mark.parametrize("arch", sorted(ARCHS))
def test_sum_reduction_with_atomics(arch):
    k, meta = load("sum", arch)
    n = 3001
    x = RNG.standard_normal(n).astype(np.float32)
    s = pyhip.to_device(np.zeros(1, np.float32))
    blk = meta["constexprs"]["BLOCK"]
    k((n + blk - 1) // blk, meta["block"], pyhip.to_device(x), s, n, 0, 0, shared=meta["shared"])
    assert np.isclose(s.get()[0], x.astype(np.float64).sum(), rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("arch", sorted(ARCHS))
def test_2d_tiles_with_loop(arch):
    k, meta = load("tile_sumsq", arch)
    M, N = 37, 77                                    # neither divides the 16×32 tile
    x = RNG.standard_normal((M, N)).astype(np.float32)
    o = pyhip.empty(M, np.float32)
    o.fill_bytes(0xCD)
    bm = meta["constexprs"]["BM"]
    k((M + bm - 1) // bm, meta["block"], pyhip.to_device(x), o, M, N, 0, 0, shared=meta["shared"])
    assert np.allclose(o.get(), (x.astype(np.float64) ** 2).sum(axis=1), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("arch", sorted(ARCHS))
@pytest.mark.parametrize("dtype", ["fp32", "fp16"])
def test_matmul_mfma(arch, dtype):
    """Triton's tiled matmul: MFMA 32x32 (f32 / xf32 / f16 inputs), LDS staging, masked edges."""
    k, meta = load(f"matmul_{dtype}", arch)
    M, N, K = 45, 70, 40                              # not multiples of the 32x32x16 tiles
    ft = np.float32 if dtype == "fp32" else np.float16
    a, b = RNG.standard_normal((M, K)).astype(ft), RNG.standard_normal((K, N)).astype(ft)
    c = pyhip.empty(M * N, ft)
    c.fill_bytes(0xCD)
    bm, bn = meta["constexprs"]["BM"], meta["constexprs"]["BN"]
    grid = ((M + bm - 1) // bm, (N + bn - 1) // bn)      # program_id(0) over M, program_id(1) over N
    k(grid, meta["block"], pyhip.to_device(a), pyhip.to_device(b), c, M, N, K, 0, 0, shared=meta["shared"])
    ref = a.astype(np.float64) @ b.astype(np.float64)
    got = c.get().reshape(M, N).astype(np.float64)
    xf32 = dtype == "fp32" and arch == "gfx942"        # inputs rounded to 10 mantissa bits
    tol = 2e-3 if (dtype == "fp16" or xf32) else 1e-5
    assert np.allclose(got, ref, rtol=tol, atol=tol * np.sqrt(K))
