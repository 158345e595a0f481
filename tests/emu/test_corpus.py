"""Every corpus kernel, built by hipcc 5.2 (gfx90a and gfx1030, V4) and clang-19 (gfx90a, gfx942 and gfx1100,
V5), run on the emulated GPU through the runtime and compared with numpy: random inputs, poisoned outputs,
sizes that are not multiples of the block size."""
from fractions import Fraction

from pathlib import Path

import numpy as np
import pytest

import pyhip



BIN = Path(__file__).resolve().parents[1] / "fixtures" / "bin"

# (file, device index): gfx90a objects run on device 0, gfx942 on 1, gfx1100 on 2, gfx1030 on 3 (conftest.py)
CORPUS = {
    "hipcc52-gfx90a": ("hipcc52/{}-gfx90a.hsaco", 0),
    "clang19-gfx90a": ("clang19/{}-gfx90a-v5.hsaco", 0),
    "clang19-gfx942": ("clang19/{}-gfx942-v5.hsaco", 1),
    "clang19-gfx1100": ("clang19/{}-gfx1100-v5.hsaco", 2),
    "clang19-gfx1100-w64": ("clang19/{}-gfx1100-w64-v5.hsaco", 2),        # RDNA3 running wave64
    "hipcc52-gfx1030": ("hipcc52/{}-gfx1030.hsaco", 3),
}


@pytest.fixture(params=sorted(CORPUS))
def build(request):
    """A loader for a source's kernels built by one toolchain for one target: build('basic') → Module."""
    import pyhip

    pattern, dev = CORPUS[request.param]

    def load(source: str):
        pyhip.set_device(dev)
        return pyhip.load(BIN / pattern.format(source))
    yield load
    pyhip.set_device(0)

RNG = np.random.default_rng(1234)
POISON = 0xCD


def out(n, dtype):
    d = pyhip.empty(n, dtype)
    d.fill_bytes(POISON)
    return d


def grid(n, block):
    return (n + block - 1) // block


def test_vadd_saxpy_scale(build):
    m = build("basic")
    n = 1000
    a, b = RNG.standard_normal(n).astype(np.float32), RNG.standard_normal(n).astype(np.float32)
    c = out(n, np.float32)
    m.kernel("vadd")(grid(n, 256), 256, pyhip.to_device(a), pyhip.to_device(b), c, n)
    assert np.array_equal(c.get(), a + b)
    c2 = out(n, np.float32)
    m.kernel("vadd_c")(grid(n, 64), 64, pyhip.to_device(a), pyhip.to_device(b), c2, n)
    assert np.array_equal(c2.get(), a + b)
    y = pyhip.to_device(b)
    m.kernel("saxpy")(grid(n, 128), 128, np.float32(1.75), pyhip.to_device(a), y, n)
    ref = np.float32(1.75) * a + b          # the kernel uses an FMA: compare with the exactly rounded fma
    exact = (np.float64(1.75) * a.astype(np.float64) + b.astype(np.float64)).astype(np.float32)
    assert np.array_equal(y.get(), exact) or np.allclose(y.get(), ref, rtol=0, atol=1e-6)
    for t, dtype, factor in (("float", np.float32, 2.5), ("double", np.float64, -1.25), ("int", np.int32, 7)):
        x = (RNG.standard_normal(n) * 100).astype(dtype)
        d = pyhip.to_device(x)
        m.kernel(f"scale<{t}>")(grid(n, 256), 256, d, dtype(factor), n)
        assert np.array_equal(d.get(), x * dtype(factor)), t


def test_globals(build):
    m = build("basic")
    table = RNG.standard_normal(64).astype(np.float32)
    g = m.global_array("g_table", np.float32)
    g.set(table)
    cnt = m.global_array("g_counter", np.int32)
    cnt.set(np.array([5], np.int32))
    n = 333
    o = out(n, np.float32)
    m.kernel("use_globals")(grid(n, 128), 128, o, n)
    coef = np.array([3, -1, 7, 2], np.float32)
    i = np.arange(n)
    assert np.array_equal(o.get(), table[i % 64] * coef[i % 4])
    assert cnt.get()[0] == 5 + n


def test_2d_3d_grids(build):
    m = build("basic")
    w, h = 37, 23
    o = out(w * h, np.int32)
    bx, by = 8, 4
    gx, gy = grid(w, bx), grid(h, by)
    m.kernel("index2d")((gx, gy), (bx, by), o, w, h)
    y, x = np.mgrid[0:h, 0:w]
    assert np.array_equal(o.get().reshape(h, w), y * 100000 + x + gx * 7 + gy)
    nx, ny, nz = 9, 5, 3
    o3 = out(nx * ny * nz, np.int32)
    m.kernel("index3d")((grid(nx, 4), grid(ny, 2), grid(nz, 2)), (4, 2, 2), o3, nx, ny, nz)
    z, y, x = np.mgrid[0:nz, 0:ny, 0:nx]
    ref = (z << 20) | (y << 10) | x | (((16 << 30) & 0xFFFFFFFF) >> 30)   # unsigned 32-bit arithmetic
    assert np.array_equal(o3.get().reshape(nz, ny, nx), ref.astype(np.int32))


def test_lds_reduce_histogram_dynamic(build):
    m = build("lds")
    n = 1000
    x = RNG.standard_normal(n).astype(np.float32)
    nb = grid(n, 256)
    o = out(nb, np.float32)
    m.kernel("block_reduce")(nb, 256, pyhip.to_device(x), o, n)
    ref = np.array([x[i * 256:(i + 1) * 256].sum(dtype=np.float64) for i in range(nb)])
    assert np.allclose(o.get(), ref, rtol=1e-5, atol=1e-5)
    data = RNG.integers(0, 1 << 30, 5000).astype(np.uint32)
    bins = pyhip.to_device(np.zeros(64, np.uint32))
    m.kernel("histogram")(6, 128, pyhip.to_device(data), bins, len(data), 64)
    assert np.array_equal(bins.get(), np.bincount(data % 64, minlength=64).astype(np.uint32))
    v = RNG.integers(-1000, 1000, 300).astype(np.int32)
    d = pyhip.to_device(v)
    m.kernel("reverse_dynamic")(grid(300, 128), 128, d, 300, shared=128 * 4)
    ref = np.concatenate([v[i:i + 128][::-1] for i in range(0, 300, 128)])
    assert np.array_equal(d.get(), ref)


def test_tiled_matmul(build):
    m = build("lds")
    M, N, K = 37, 29, 45
    A = RNG.standard_normal((M, K)).astype(np.float32)
    B = RNG.standard_normal((K, N)).astype(np.float32)
    C = out(M * N, np.float32)
    m.kernel("matmul")((grid(N, 16), grid(M, 16)), (16, 16), pyhip.to_device(A), pyhip.to_device(B), C, M, N, K)
    assert np.allclose(C.get().reshape(M, N), A.astype(np.float64) @ B, rtol=1e-4, atol=1e-4)


def test_fp64_and_integer_division(build):
    m = build("math")
    n = 777
    a = RNG.standard_normal(n) * 10 ** RNG.uniform(-5, 5, n)
    b = RNG.standard_normal(n) * 10 ** RNG.uniform(-5, 5, n)
    q, r = out(n, np.float64), out(n, np.float64)
    m.kernel("fp64_ops")(grid(n, 64), 64, pyhip.to_device(a), pyhip.to_device(b), q, r, n)
    assert np.array_equal(q.get(), a / b)                       # correctly rounded, like IEEE division
    # HIP contracts a*a + b*b into fma(a, a, b*b): the reference rounds that exactly (Fractions), then sqrt
    fma = np.array([float(Fraction(x) * Fraction(x) + Fraction(float(y * y))) for x, y in zip(a, b)])
    assert np.array_equal(r.get(), np.sqrt(fma))
    ia = RNG.integers(-2 ** 31, 2 ** 31 - 1, n).astype(np.int32)
    ib = RNG.integers(-2 ** 31, 2 ** 31 - 1, n).astype(np.int32)
    ib[ib == 0] = 3
    ib[:20] = RNG.integers(1, 9, 20)
    outs = [out(n, np.int32), out(n, np.int32), out(n, np.uint32), out(n, np.uint32)]
    m.kernel("int_divmod")(grid(n, 128), 128, pyhip.to_device(ia), pyhip.to_device(ib), *outs, n)
    tq = (np.abs(ia.astype(np.int64)) // np.abs(ib.astype(np.int64))) * np.sign(ia.astype(np.int64) * ib)
    assert np.array_equal(outs[0].get(), tq.astype(np.int32))
    assert np.array_equal(outs[1].get(), (ia - tq * ib).astype(np.int32))
    ua, ub = ia.view(np.uint32), ib.view(np.uint32)
    assert np.array_equal(outs[2].get(), ua // ub)
    assert np.array_equal(outs[3].get(), ua % ub)
    la = RNG.integers(-2 ** 62, 2 ** 62, n, dtype=np.int64)
    lb = RNG.integers(-2 ** 40, 2 ** 40, n, dtype=np.int64)
    lb[lb == 0] = 5
    lq, lr = out(n, np.int64), out(n, np.int64)
    m.kernel("int64_divmod")(grid(n, 64), 64, pyhip.to_device(la), pyhip.to_device(lb), lq, lr, n)
    tq = np.array([int(abs(int(x)) // abs(int(y))) * (1 if (x < 0) == (y < 0) else -1) for x, y in zip(la, lb)], np.int64)
    assert np.array_equal(lq.get(), tq)
    assert np.array_equal(lr.get(), la - tq * lb)


def test_loops_calls_scratch(build):
    m = build("math")
    n = 200
    s = RNG.integers(1, 100000, n).astype(np.uint32)
    steps = out(n, np.uint32)
    m.kernel("collatz")(grid(n, 64), 64, pyhip.to_device(s), steps, n)

    def col(x):
        c = 0
        while x != 1 and c < 10000:
            x = 3 * x + 1 if x & 1 else x >> 1
            c += 1
        return c
    assert np.array_equal(steps.get(), [col(int(x)) for x in s])
    vals = RNG.integers(0, 40, n).astype(np.int32)
    o = out(n, np.int32)
    m.kernel("calls")(grid(n, 64), 64, pyhip.to_device(vals), o, n)

    def fib(k):
        return k if k < 2 else fib(k - 1) + fib(k - 2)
    i = np.arange(n)
    ref = vals * vals * (i & 7) + 3 * vals - (i & 7) + np.array([fib(int(v) & 15) for v in vals])
    assert np.array_equal(o.get(), ref.astype(np.int32))
    idx = RNG.integers(0, 1 << 12, n).astype(np.int32)
    o2 = out(n, np.int32)
    m.kernel("private_array")(grid(n, 64), 64, pyhip.to_device(idx), o2, n)
    a1, a2 = idx & 63, (idx >> 6) & 63
    assert np.array_equal(o2.get(), (a1 * a1 + i) + (a2 * a2 + i))


def test_atomics(build):
    m = build("math")
    n = 500
    vals = RNG.integers(-1000, 1000, n).astype(np.int32)
    s, mx = pyhip.to_device(np.zeros(1, np.int32)), pyhip.to_device(np.full(1, -10 ** 9, np.int32))
    cas, ex = pyhip.to_device(np.zeros(16, np.int32)), pyhip.to_device(np.zeros(8, np.int32))
    m.kernel("atomics_int")(grid(n, 128), 128, pyhip.to_device(vals), s, mx, cas, ex, n)
    assert s.get()[0] == vals.sum() and mx.get()[0] == vals.max()
    c = cas.get()
    for k in range(16):                         # exactly one lane with i % 16 == k won the CAS
        assert (c[k] - 1) % 16 == k and 0 <= c[k] - 1 < n
    e = ex.get()
    for k in range(8):
        assert e[k] in vals[k::8]
    f = RNG.standard_normal(n).astype(np.float32)
    fs, ds = pyhip.to_device(np.zeros(1, np.float32)), pyhip.to_device(np.zeros(1, np.float64))
    m.kernel("atomic_fadd")(grid(n, 64), 64, pyhip.to_device(f), fs, ds, n)
    assert np.isclose(fs.get()[0], f.sum(dtype=np.float64), rtol=1e-4, atol=1e-3)
    assert np.isclose(ds.get()[0], f.astype(np.float64).sum(), rtol=1e-12, atol=1e-9)


@pytest.mark.parametrize("path,dev", [("clang19/basic-gfx11-generic-v6.hsaco", 2),
                                      ("clang19/basic-gfx10-3-generic-v6.hsaco", 3),
                                      ("clang19/basic-multi.bundle", 2)])
def test_generic_rdna_code_objects(path, dev):
    """gfx11-generic / gfx10-3-generic code (alone, or picked from a bundle for the gfx1100) runs on a member of
    its family."""
    pyhip.set_device(dev)
    try:
        m = pyhip.load(BIN / path)
        n = 777
        a, b = RNG.standard_normal(n).astype(np.float32), RNG.standard_normal(n).astype(np.float32)
        c = out(n, np.float32)
        m.kernel("vadd")(grid(n, 128), 128, pyhip.to_device(a), pyhip.to_device(b), c, n)
        assert np.array_equal(c.get(), a + b)
        x = (RNG.standard_normal(n) * 100).astype(np.float64)
        d = pyhip.to_device(x)
        m.kernel("scale<double>")(grid(n, 64), 64, d, np.float64(-1.25), n)
        assert np.array_equal(d.get(), x * -1.25)
    finally:
        pyhip.set_device(0)
