#!/usr/bin/env python3
"""The compiled engine (pyhip/emu/jit, docs/engine.md) against the numpy engine: real Triton kernels
(tests/fixtures/bin/triton) on GFX9 (gfx90a) and RDNA3 (gfx1100, wave32), fp32.  Both engines are generated
from the same instruction descriptions (pyhip/emu/spec); the C interpreter of hand-written ALU handlers they
replaced no longer exists, so the baseline is the numpy engine.

Each engine runs in its own process (the environment picks it): ``compiled`` (the default) and ``numpy``
(PYHIP_ENGINE=numpy, small sizes only).  Every process also times numpy itself doing the same work into
preallocated outputs (the host baseline), so each ratio is taken within one process and one run.  Results
are checked against numpy before anything is timed.  Columns: median ms per launch (launch + synchronize),
host numpy ms, the ratio, and the first launch (for the compiled engine: the compile, or the load from the
disk cache when it is warm; PYHIP_JIT_CACHE_DIR= turns the cache off).

    python benchmarks/bench_compiled.py [--quick] [--engines compiled,numpy]
"""
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
BIN = ROOT / "tests/fixtures/bin/triton"
ENGINES = {"compiled": {}, "numpy": {"PYHIP_ENGINE": "numpy"}}


def _median(fn, runs):
    ts = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts)


def _cases(quick: bool, small: bool):
    n_add = (1 << 20) if (quick or small) else (1 << 24)
    rows = 1024 if (quick or small) else 32768
    for arch in ("gfx90a", "gfx1100"):
        yield f"add {n_add >> 20}M", arch, ("add", n_add)
        yield f"softmax {rows}x128", arch, ("softmax", rows)


def child(quick: bool, small: bool) -> None:
    """Runs in the engine's process: one JSON line per case."""
    os.environ.setdefault("PYHIP_DEVICES", "gfx90a:sramecc+:xnack-,gfx1100")
    sys.path.insert(0, str(ROOT))
    import pyhip
    rng = np.random.default_rng(5)
    runs = 3 if quick else 7
    for name, arch, (kind, size) in _cases(quick, small):
        pyhip.set_device(0 if arch == "gfx90a" else 1)
        meta = json.loads((BIN / f"{kind}-{arch}.json").read_text())
        k = pyhip.load(BIN / f"{kind}-{arch}.hsaco").kernel(meta["kernel"])
        block = meta["block"]
        if kind == "add":
            x, y = (rng.standard_normal(size).astype(np.float32) for _ in range(2))
            xd, yd, od = pyhip.to_device(x), pyhip.to_device(y), pyhip.empty(size, np.float32)
            grid = -(-size // meta["constexprs"]["BLOCK"])
            launch = lambda: (k(grid, block, xd, yd, od, size, 0, 0, shared=meta["shared"]), pyhip.synchronize())  # noqa: E731
            ref = np.empty_like(x)
            base = lambda: np.add(x, y, out=ref)      # noqa: E731
            check = lambda: np.array_equal(od.get(), x + y)   # noqa: E731
        else:
            cols = meta["constexprs"]["BLOCK"]
            x = rng.standard_normal((size, cols)).astype(np.float32)
            xd, od = pyhip.to_device(x), pyhip.empty(size * cols, np.float32)
            launch = lambda: (k(size, block, od, xd, cols, cols, cols, 0, 0, shared=meta["shared"]),  # noqa: E731
                              pyhip.synchronize())
            ref, mx, s = np.empty_like(x), np.empty((size, 1), np.float32), np.empty((size, 1), np.float32)

            def base():
                np.max(x, axis=1, keepdims=True, out=mx)
                np.subtract(x, mx, out=ref)
                np.exp(ref, out=ref)
                np.sum(ref, axis=1, keepdims=True, out=s)
                np.divide(ref, s, out=ref)

            def check():
                e = np.exp(x.astype(np.float64) - x.max(axis=1, keepdims=True))
                return np.allclose(od.get().reshape(size, cols), e / e.sum(axis=1, keepdims=True), rtol=1e-5,
                                   atol=1e-7)
        t0 = time.perf_counter()
        launch()
        first = time.perf_counter() - t0
        if not check():
            raise SystemExit(f"{name} {arch}: wrong result")
        t = _median(launch, runs)
        tb = _median(base, runs)
        stats = pyhip.engine_stats()[0 if arch == "gfx90a" else 1]
        print(json.dumps({"case": name, "arch": arch, "ms": t * 1e3, "numpy_ms": tb * 1e3, "first_ms": first * 1e3,
                          "native": stats["native"], "fallback": stats["fallback"]}), flush=True)


def main() -> None:
    if "--child" in sys.argv:
        child("--quick" in sys.argv, "--small" in sys.argv)
        return
    quick = "--quick" in sys.argv
    engines = ["compiled", "numpy"]
    if "--engines" in sys.argv:
        engines = sys.argv[sys.argv.index("--engines") + 1].split(",")
    print(f"{'case':<22} {'arch':<8} {'engine':<12} {'ms':>9} {'numpy ms':>9} {'ratio':>7} {'first ms':>9}")
    for eng in engines:
        env = {**os.environ, **ENGINES[eng]}
        args = [sys.executable, __file__, "--child"] + (["--quick"] if quick else [])
        if eng == "numpy":
            args.append("--small")
        p = subprocess.run(args, env=env, capture_output=True, text=True)
        if p.returncode:
            print(f"{eng}: failed\n{p.stderr[-2000:]}")
            continue
        for ln in p.stdout.splitlines():
            r = json.loads(ln)
            note = "" if not r["fallback"] else f"  ({r['fallback']} dispatches on the numpy engine)"
            print(f"{r['case']:<22} {r['arch']:<8} {eng:<12} {r['ms']:>9.2f} {r['numpy_ms']:>9.2f} "
                  f"{r['ms'] / r['numpy_ms']:>6.1f}x {r['first_ms']:>9.1f}{note}")


if __name__ == "__main__":
    main()
