"""Real @triton.jit kernels compiled by Triton for the emulated gfx90a / gfx942 / gfx1100 and run in-process
through Triton's own launcher on pyhip (pyhip.triton.activate), checked against numpy on random inputs whose
sizes are not multiples of the block."""
import numpy as np
import pytest

triton = pytest.importorskip("triton", reason="triton is not importable")
tl = pytest.importorskip("triton.language", reason="triton is not importable")

import pyhip  # noqa: E402
import pyhip.triton  # noqa: E402
from pyhip.runtime.context import runtime  # noqa: E402

ARCHS = ["gfx90a", "gfx1100", "gfx942"]


@pytest.fixture(params=ARCHS)
def arch(request):
    drv = pyhip.triton.activate(request.param)
    yield request.param, drv
    pyhip.triton.deactivate()


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) + tl.load(y_ptr + offs, mask=m), mask=m)


@triton.jit
def softmax_kernel(out_ptr, in_ptr, in_stride, out_stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    m = cols < n_cols
    x = tl.load(in_ptr + row * in_stride + cols, mask=m, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    num = tl.exp(x)
    tl.store(out_ptr + row * out_stride + cols, num / tl.sum(num, axis=0), mask=m)


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k0 + rk)[None, :],
                    mask=(rm[:, None] < M) & ((k0 + rk)[None, :] < K), other=0.0)
        b = tl.load(b_ptr + (k0 + rk)[:, None] * N + rn[None, :],
                    mask=((k0 + rk)[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(c_ptr.dtype.element_ty),
             mask=(rm[:, None] < M) & (rn[None, :] < N))


def test_target_is_the_emulated_device(arch):
    name, drv = arch
    target = drv.get_current_target()
    assert target.backend == "hip" and target.arch == name
    assert target.warp_size == (32 if name.startswith("gfx11") else 64)
    assert runtime().device(drv.get_current_device()).isa.processor == name


def test_masked_add(arch):
    rng = np.random.default_rng(1)
    n = 3001                                          # not a multiple of BLOCK
    a, b = (rng.standard_normal(n).astype(np.float32) for _ in range(2))
    x, y, out = pyhip.to_device(a), pyhip.to_device(b), pyhip.to_device(np.full(n + 64, 7, np.float32))
    add_kernel[(triton.cdiv(n, 256),)](x, y, out, n, BLOCK=256)
    pyhip.synchronize()
    got = out.get()
    np.testing.assert_array_equal(got[:n], a + b)
    np.testing.assert_array_equal(got[n:], 7)         # the mask kept the tail untouched
    for d in (x, y, out):
        d.free()


def test_row_softmax(arch):
    rng = np.random.default_rng(2)
    rows, cols = 37, 300
    a = (rng.standard_normal((rows, cols)) * 4).astype(np.float32)
    x, out = pyhip.to_device(a), pyhip.empty((rows, cols), np.float32)
    softmax_kernel[(rows,)](out, x, cols, cols, cols, BLOCK=triton.next_power_of_2(cols))
    pyhip.synchronize()
    e = np.exp(a - a.max(axis=1, keepdims=True))
    np.testing.assert_allclose(out.get(), e / e.sum(axis=1, keepdims=True), rtol=2e-6, atol=1e-7)
    x.free(), out.free()


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
def test_dot_matmul(arch, dtype):
    rng = np.random.default_rng(3)
    M, N, K = 50, 70, 40
    a = rng.standard_normal((M, K)).astype(dtype)
    b = rng.standard_normal((K, N)).astype(dtype)
    da, db, dc = pyhip.to_device(a), pyhip.to_device(b), pyhip.empty((M, N), np.float32)
    BM = BN = 32
    matmul_kernel[(triton.cdiv(M, BM), triton.cdiv(N, BN))](da, db, dc, M, N, K, BM=BM, BN=BN, BK=16)
    pyhip.synchronize()
    ref = a.astype(np.float64) @ b.astype(np.float64)
    # fp32 inputs may go through tf32-like or exact paths depending on the target: 1e-2 relative is loose
    # enough for both and far tighter than a wrong tile (errors of O(1))
    tol = 2e-2 if dtype == np.float16 else 1e-2
    np.testing.assert_allclose(dc.get(), ref, rtol=tol, atol=tol)
    for d in (da, db, dc):
        d.free()
