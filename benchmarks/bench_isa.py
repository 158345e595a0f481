#!/usr/bin/env python3
"""ISA-breadth benchmark: corpus kernels that lean on the wider ISA (device-library math, warp shuffles,
atomics, half precision, Triton layer norm and MFMA matmuls in bf16/int8) on the emulated GPU.

Prints one row per case (median of several runs): wall time per launch and work-items/s.  Each result is
checked against numpy before it is timed, so a fast wrong engine cannot post a number.  Times are the steady
state, as in bench_compiled.py: each kernel's optimised code (jit tier 2) is compiled before it is timed
(PYHIP_JIT_HOT=0 makes a kernel hot at its first tier-1 dispatch; a large kernel's optimised compile takes
seconds to tens of seconds, and under the default rule it would start only after that much tier-1 running).

    python benchmarks/bench_isa.py [--quick]
"""
import json
import math
import os
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("PYHIP_DEVICES", "gfx90a:sramecc+:xnack-,gfx942:sramecc+:xnack-")
os.environ.setdefault("PYHIP_JIT_HOT", "0")

import pyhip  # noqa: E402
from bench_emu import median_time  # noqa: E402  (the same timing as the engine benchmark)

BIN = ROOT / "tests/fixtures/bin"
RNG = np.random.default_rng(3)


def steady(launch) -> None:
    """Run ``launch`` until its kernel's optimised code is in: the first launch queues the quick compile (or
    runs it), the next runs tier 1 and makes the kernel hot, the optimised compile runs in the background."""
    from pyhip.emu import jit
    for _ in range(3):
        launch()
        jit.settle(900)


def row(name, seconds, items):
    print(f"{name:<34} {seconds * 1e3:>10.2f} {items / seconds / 1e6:>10.3f}")


def triton(name, arch):
    pyhip.set_device(0 if arch == "gfx90a" else 1)
    meta = json.loads((BIN / f"triton/{name}-{arch}.json").read_text())
    return pyhip.load(BIN / f"triton/{name}-{arch}.hsaco").kernel(meta["kernel"]), meta


def main() -> None:
    runs = 3 if "--quick" in sys.argv else 7
    print(f"{'case':<34} {'ms/launch':>10} {'M items/s':>10}")
    pyhip.set_device(0)
    n = 1 << 16
    # device-library float math (OCML sinf/cosf/expf/logf/powf/erff/rsqrtf/tanhf), 8 results per item
    m = pyhip.load(BIN / "hipcc52/devmath-gfx90a.hsaco")
    x = pyhip.to_device(RNG.uniform(-50, 50, n).astype(np.float32))
    y = pyhip.to_device(RNG.uniform(-10, 10, n).astype(np.float32))
    o = pyhip.empty(8 * n, np.float32)
    k = m.kernel("fmath")
    launch = lambda: (k((n + 255) // 256, 256, x, y, o, n), pyhip.synchronize())   # noqa: E731
    steady(launch)
    assert np.allclose(o.get()[:n], np.sin(x.get().astype(np.float64)), rtol=1e-6, atol=1e-6)
    row("OCML f32 math x8 (hipcc, gfx90a)", median_time(launch, runs), n)
    # fp64 math incl. sin's large-argument reduction
    xd = pyhip.to_device(RNG.uniform(-30, 30, n))
    yd = pyhip.to_device(RNG.uniform(-5, 5, n))
    od = pyhip.empty(7 * n, np.float64)
    kd = m.kernel("dmath")
    launch = lambda: (kd((n + 127) // 128, 128, xd, yd, od, n), pyhip.synchronize())   # noqa: E731
    steady(launch)
    assert np.allclose(od.get()[:n], np.sin(xd.get()), rtol=1e-14, atol=1e-15)
    row("OCML f64 math x7 (hipcc, gfx90a)", median_time(launch, runs), n)
    # warp shuffles / votes / wave reduction
    m = pyhip.load(BIN / "hipcc52/warp-gfx90a.hsaco")
    v = RNG.integers(-1000, 1000, n).astype(np.int32)
    vi = pyhip.to_device(v)
    ow, ob = pyhip.empty(7 * n, np.int32), pyhip.empty(n, np.uint64)
    kw = m.kernel("warp_ops")
    launch = lambda: (kw((n + 255) // 256, 256, vi, ow, ob, n), pyhip.synchronize())   # noqa: E731
    steady(launch)
    assert np.array_equal(ow.get()[6 * n:7 * n], np.repeat(v.reshape(-1, 64).sum(axis=1), 64))
    row("warp shuffles+votes (hipcc, gfx90a)", median_time(launch, runs), n)
    # global atomics of every kind; two of them are CAS loops on one address, which take one round per
    # contending lane (as on hardware, where each round costs ~1 us rather than the emulator's ~1 ms)
    n = 1024
    m = pyhip.load(BIN / "hipcc52/atomics-gfx90a.hsaco")
    ka = m.kernel("atomics_global")
    a = pyhip.to_device(RNG.integers(-2 ** 31, 2 ** 31, n, dtype=np.int64).astype(np.int32))
    bufs = [pyhip.to_device(np.zeros(s, t)) for s, t in ((9, np.int32), (4, np.uint32), (8, np.uint64),
                                                          (2, np.float32), (1, np.float64))]
    olds = pyhip.empty(n, np.int32)
    launch = lambda: (ka((n + 127) // 128, 128, a, *bufs, olds, n), pyhip.synchronize())   # noqa: E731
    steady(launch)
    for b in bufs:                   # (the counters start from zero for the checked launch)
        b.set(np.zeros(b.size, b.dtype))
    launch()
    assert sorted(olds.get().tolist()) == list(range(n))
    row("atomics, 21 per item (hipcc, gfx90a)", median_time(launch, runs), n)
    n = 1 << 16
    # half / half2
    m = pyhip.load(BIN / "hipcc52/halfbf-gfx90a.hsaco")
    h = [pyhip.to_device(RNG.standard_normal(n).astype(np.float16)) for _ in range(3)]
    oh = pyhip.empty(8 * n, np.float16)
    kh = m.kernel("half_ops")
    launch = lambda: (kh((n + 255) // 256, 256, *h, oh, n), pyhip.synchronize())   # noqa: E731
    steady(launch)
    assert np.array_equal(oh.get()[:n], (h[0].get().astype(np.float64) + h[1].get()).astype(np.float16))
    row("half/half2 x8 (hipcc, gfx90a)", median_time(launch, runs), n)
    # Triton layer norm and MFMA matmuls
    for arch in ("gfx90a", "gfx942"):
        k, meta = triton("layernorm", arch)
        rows, cols = 256, 203
        xs = RNG.standard_normal((rows, cols)).astype(np.float32)
        xd_, w, b = pyhip.to_device(xs), pyhip.to_device(np.ones(cols, np.float32)), pyhip.to_device(np.zeros(cols, np.float32))
        yo, mu, rs = pyhip.empty(rows * cols, np.float32), pyhip.empty(rows, np.float32), pyhip.empty(rows, np.float32)
        launch = lambda: (k(rows, meta["block"], xd_, w, b, yo, mu, rs, cols, np.float32(1e-5), 0, 0,   # noqa: E731
                            shared=meta["shared"]), pyhip.synchronize())
        steady(launch)
        assert np.allclose(mu.get(), xs.mean(axis=1), atol=1e-6)
        row(f"Triton layernorm 256x203 ({arch})", median_time(launch, runs), rows * cols)
        for name, dt in (("matmul_bf16", np.uint16), ("matmul_int8", np.int8)):
            k, meta = triton(name, arch)
            M = N = K = 128
            if dt is np.int8:
                A = RNG.integers(-128, 128, (M, K)).astype(np.int8)
                B = RNG.integers(-128, 128, (K, N)).astype(np.int8)
                ref, ct = A.astype(np.int64) @ B.astype(np.int64), np.int32
            else:
                A = (RNG.standard_normal((M, K)).astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
                B = (RNG.standard_normal((K, N)).astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
                ref = ((A.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
                       @ (B.astype(np.uint32) << 16).view(np.float32).astype(np.float64))
                ct = np.float32
            ad, bd, cd = pyhip.to_device(A), pyhip.to_device(B), pyhip.empty(M * N, ct)
            g = (M // meta["constexprs"]["BM"], N // meta["constexprs"]["BN"])
            launch = lambda: (k(g, meta["block"], ad, bd, cd, M, N, K, 0, 0, shared=meta["shared"]),   # noqa: E731
                              pyhip.synchronize())
            steady(launch)
            assert np.allclose(cd.get().reshape(M, N), ref, rtol=1e-5, atol=1e-3 * math.sqrt(K))
            row(f"Triton {name} 128^3 ({arch})", median_time(launch, runs), 2 * M * N * K)


if __name__ == "__main__":
    main()
