#!/usr/bin/env python3
"""Emulator benchmark (prints a table; medians): vadd at 1M and 16M fp32 through the whole stack
(runtime → AQL queue → packet processor → emulated gfx90a), against numpy ``a + b`` in the same run,
plus the engine's rate in wave-instructions per second.  Issue targets: ≤ 20× numpy at 16M, ≥ 10 M
wave-instr/s."""
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import pyhip  # noqa: E402
from pyhip.runtime.context import runtime  # noqa: E402


def med(fn, runs):
    ts = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts)


def main() -> None:
    mod = pyhip.load(ROOT / "tests/fixtures/bin/hipcc52/basic-gfx90a.hsaco")
    vadd = mod.kernel("vadd")
    gpu = runtime().device().backend.gpu
    print(f"{'case':<16} {'kernel ms':>10} {'numpy ms':>9} {'ratio':>7} {'wave-instr':>11} {'M wave-instr/s':>15}")
    for n, runs in ((1 << 20, 5), (16 << 20, 3)):
        rng = np.random.default_rng(0)
        a, b = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
        da, db, dc = pyhip.to_device(a), pyhip.to_device(b), pyhip.empty(n, np.float32)

        def launch():
            vadd((n + 255) // 256, 256, da, db, dc, n)
            pyhip.synchronize()
        launch()
        assert np.array_equal(dc.get(), a + b)
        t_kernel = med(launch, runs)
        t_np = med(lambda: a + b, max(runs, 5))
        wi = gpu.last_dispatch.wave_instructions
        print(f"vadd {n >> 20:>3}M fp32   {t_kernel * 1e3:>10.1f} {t_np * 1e3:>9.2f} {t_kernel / t_np:>7.1f} "
              f"{wi:>11} {wi / t_kernel / 1e6:>15.1f}")
        for d in (da, db, dc):
            d.free()


if __name__ == "__main__":
    main()
