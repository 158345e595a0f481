#!/usr/bin/env python3
"""Emulator engine benchmark: hipcc-5.2 gfx90a fixture kernels through the runtime on the emulated GPU.

Prints one row per case (median of several runs): wall time per launch, work-items/s, and the engine's
rate in wave-instructions/s (instructions executed × waves executing them).  Every result is checked
against numpy first, so a fast wrong engine cannot post a number.

    python benchmarks/bench_emu.py [--quick]
"""
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import pyhip  # noqa: E402
from pyhip.runtime.context import runtime  # noqa: E402

BIN = ROOT / "tests/fixtures/bin/hipcc52"


def median_time(fn, runs):
    ts = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts)


def row(name, seconds, items, wave_instr):
    print(f"{name:<22} {seconds * 1e3:>10.2f} {items / seconds / 1e6:>12.2f} {wave_instr:>12} "
          f"{wave_instr / seconds / 1e6:>14.2f}")


def main() -> None:
    quick = "--quick" in sys.argv
    runs = 3 if quick else 5
    rng = np.random.default_rng(0)
    gpu = runtime().device().backend.gpu
    basic, lds = pyhip.load(BIN / "basic-gfx90a.hsaco"), pyhip.load(BIN / "lds-gfx90a.hsaco")
    print(f"{'case':<22} {'ms/launch':>10} {'M items/s':>12} {'wave-instr':>12} {'M wave-instr/s':>14}")

    vadd = basic.kernel("vadd")
    for n in (100_000, 1_000_000):
        a, b = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
        da, db, dc = pyhip.to_device(a), pyhip.to_device(b), pyhip.empty(n, np.float32)

        def launch():
            vadd((n + 255) // 256, 256, da, db, dc, n)
            pyhip.synchronize()
        launch()
        assert np.array_equal(dc.get(), a + b)
        row(f"vadd n={n:.0e}", median_time(launch, runs), n, gpu.last_dispatch.wave_instructions)

    reduce_ = lds.kernel("block_reduce")
    n = 1 << 20
    x = rng.standard_normal(n).astype(np.float32)
    dx, dout = pyhip.to_device(x), pyhip.empty(n // 256, np.float32)

    def launch_reduce():
        reduce_(n // 256, 256, dx, dout, n)
        pyhip.synchronize()
    launch_reduce()
    assert np.allclose(dout.get(), x.reshape(-1, 256).astype(np.float64).sum(axis=1), rtol=1e-4, atol=1e-4)
    row("LDS reduce n=2^20", median_time(launch_reduce, runs), n, gpu.last_dispatch.wave_instructions)

    mm = lds.kernel("matmul")
    M = N = K = 128
    A, B = rng.standard_normal((M, K)).astype(np.float32), rng.standard_normal((K, N)).astype(np.float32)
    dA, dB, dC = pyhip.to_device(A), pyhip.to_device(B), pyhip.empty(M * N, np.float32)

    def launch_mm():
        mm((N // 16, M // 16), (16, 16), dA, dB, dC, M, N, K)
        pyhip.synchronize()
    launch_mm()
    assert np.allclose(dC.get().reshape(M, N), A.astype(np.float64) @ B, rtol=1e-4, atol=1e-4)
    row("matmul 128x128x128", median_time(launch_mm, runs), M * N, gpu.last_dispatch.wave_instructions)


if __name__ == "__main__":
    main()
