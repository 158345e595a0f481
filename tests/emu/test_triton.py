"""Triton-compiled kernels (gfx90a on device 0, gfx942 on device 1, gfx1100 — wave32, WMMA for tl.dot — on
device 2) on the emulated GPU vs numpy.  Launch geometry and dynamic LDS come from the JSON Triton wrote beside
each HSACO."""
import json

import numpy as np
import pytest

import pyhip

from conftest import BIN

RNG = np.random.default_rng(7)
ARCHS = {"gfx90a": 0, "gfx942": 1, "gfx1100": 2}


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
    """Triton's tiled matmul: MFMA 32x32 (f32 / xf32 / f16 inputs) or WMMA (gfx1100 f16), LDS staging,
    masked edges."""
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


@pytest.mark.parametrize("arch", sorted(ARCHS))
def test_layernorm(arch):
    k, meta = load("layernorm", arch)
    rows, cols = 9, 203                               # a row length that is not a power of two
    x = (RNG.standard_normal((rows, cols)) * 3 + 1.5).astype(np.float32)
    w, b = RNG.standard_normal(cols).astype(np.float32), RNG.standard_normal(cols).astype(np.float32)
    y, mean, rstd = (pyhip.empty(n, np.float32) for n in (rows * cols, rows, rows))
    for o in (y, mean, rstd):
        o.fill_bytes(0xCD)
    eps = 1e-5
    k(rows, meta["block"], pyhip.to_device(x), pyhip.to_device(w), pyhip.to_device(b), y, mean, rstd, cols,
      np.float32(eps), 0, 0, shared=meta["shared"])
    x64 = x.astype(np.float64)
    mu = x64.mean(axis=1)
    var = ((x64 - mu[:, None]) ** 2).mean(axis=1)
    rs = 1 / np.sqrt(var + eps)
    ref = (x64 - mu[:, None]) * rs[:, None] * w + b
    assert np.allclose(mean.get(), mu, rtol=1e-6, atol=1e-6)
    assert np.allclose(rstd.get(), rs, rtol=1e-6)
    assert np.allclose(y.get().reshape(rows, cols), ref, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("arch", sorted(ARCHS))
def test_row_max_min_argmax_sum(arch):
    k, meta = load("rowstats", arch)
    M, N = 23, 117                                    # neither a multiple of the 4 x 128 tile
    x = RNG.standard_normal((M, N)).astype(np.float32)
    x[5, :] = 0.25                                    # ties: argmax takes the first
    outs = [pyhip.empty(M, t) for t in (np.float32, np.float32, np.int32, np.float32)]
    for o in outs:
        o.fill_bytes(0xCD)
    bm = meta["constexprs"]["BM"]
    k((M + bm - 1) // bm, meta["block"], pyhip.to_device(x), *outs, M, N, 0, 0, shared=meta["shared"])
    mx, mn, arg, sm = (o.get() for o in outs)
    assert np.array_equal(mx, x.max(axis=1)) and np.array_equal(mn, x.min(axis=1))
    assert np.array_equal(arg, x.argmax(axis=1))
    assert np.allclose(sm, x.astype(np.float64).sum(axis=1), rtol=1e-5, atol=1e-5)


def _to_bf16(x):
    u = x.astype(np.float32).view(np.uint32).astype(np.uint64)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)


@pytest.mark.parametrize("arch", sorted(ARCHS))
def test_matmul_bf16_and_int8(arch):
    """tl.dot on bf16 (fp32 accumulate: MFMA 32x32x8 bf16 / WMMA bf16) and int8 (int32 accumulate: MFMA i8 /
    WMMA iu8, exact)."""
    M, N, K = 45, 70, 77
    k, meta = load("matmul_bf16", arch)
    a, b = _to_bf16(RNG.standard_normal((M, K))), _to_bf16(RNG.standard_normal((K, N)))
    c = pyhip.empty(M * N, np.float32)
    c.fill_bytes(0xCD)
    bm, bn = meta["constexprs"]["BM"], meta["constexprs"]["BN"]
    grid = ((M + bm - 1) // bm, (N + bn - 1) // bn)
    k(grid, meta["block"], pyhip.to_device(a), pyhip.to_device(b), c, M, N, K, 0, 0, shared=meta["shared"])
    af = (a.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    bf = (b.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    assert np.allclose(c.get().reshape(M, N), af @ bf, rtol=1e-5, atol=1e-5 * np.sqrt(K))
    k, meta = load("matmul_int8", arch)
    a8 = RNG.integers(-128, 128, (M, K), dtype=np.int64).astype(np.int8)
    b8 = RNG.integers(-128, 128, (K, N), dtype=np.int64).astype(np.int8)
    c = pyhip.empty(M * N, np.int32)
    c.fill_bytes(0xCD)
    k(grid, meta["block"], pyhip.to_device(a8), pyhip.to_device(b8), c, M, N, K, 0, 0, shared=meta["shared"])
    assert np.array_equal(c.get().reshape(M, N), a8.astype(np.int64) @ b8.astype(np.int64))


@pytest.mark.parametrize("arch", sorted(ARCHS))
def test_fp16_elementwise_math(arch):
    k, meta = load("halfmath", arch)
    n = 1000
    x = (RNG.standard_normal(n) * 2).astype(np.float16)
    o = pyhip.empty(5 * n, np.float16)
    o.fill_bytes(0xCD)
    blk = meta["constexprs"]["BLOCK"]
    k((n + blk - 1) // blk, meta["block"], pyhip.to_device(x), o, n, 0, 0, shared=meta["shared"])
    got = o.get().reshape(5, n).astype(np.float64)
    xf = x.astype(np.float64)
    h = np.float16
    refs = [np.exp(xf), np.log(np.abs(xf) + 1), np.sqrt(np.abs(xf)), 1 / (1 + np.exp(-xf))]
    for g, r in zip(got[:4], refs):                   # fp32 math rounded to fp16: within one fp16 ulp
        assert (np.abs(g - r) <= np.spacing(r.astype(h)).astype(np.float64) * 1.01).all()
    assert np.array_equal(got[4].astype(h), (xf * xf + xf).astype(h))  # fused into v_fma_f16: one rounding


@pytest.mark.parametrize("arch", sorted(ARCHS))
def test_cumsum_scan(arch):
    """tl.cumsum: a scan across the lanes of each warp (DPP / permlane / bpermute steps), then across warps."""
    k, meta = load("scan", arch)
    n = 1000
    x = RNG.integers(-1000, 1000, n).astype(np.int32)
    o = pyhip.empty(n, np.int32)
    o.fill_bytes(0xCD)
    blk = meta["constexprs"]["BLOCK"]
    k((n + blk - 1) // blk, meta["block"], pyhip.to_device(x), o, n, 0, 0, shared=meta["shared"])
    ref = np.concatenate([np.cumsum(x[i:i + blk]) for i in range(0, n, blk)])
    assert np.array_equal(o.get(), ref.astype(np.int32))


@pytest.mark.parametrize("arch", sorted(ARCHS))
def test_integer_atomics(arch):
    """tl.atomic_add into a histogram, tl.atomic_max / atomic_min on one address from every lane.  The values
    are non-negative: Triton 3.9's gfx942 code reduces each wave with v_max_u32/v_min_u32 before its one
    global_atomic_smax/smin, which is only right when signed and unsigned order agree (the emulator runs that
    code as written: with negative inputs it returns what the GPU would)."""
    k, meta = load("atomics", arch)
    n = 1500
    x = RNG.integers(0, 10 ** 6, n).astype(np.int32)
    bins = pyhip.to_device(np.zeros(16, np.int32))
    mx, mn = pyhip.to_device(np.full(1, -2 ** 31, np.int32)), pyhip.to_device(np.full(1, 2 ** 31 - 1, np.int32))
    blk = meta["constexprs"]["BLOCK"]
    k((n + blk - 1) // blk, meta["block"], pyhip.to_device(x), bins, mx, mn, n, 0, 0, shared=meta["shared"])
    assert np.array_equal(bins.get(), np.bincount(x & 15, minlength=16))
    assert mx.get()[0] == x.max() and mn.get()[0] == x.min()
