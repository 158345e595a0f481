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
disk cache when it is warm; PYHIP_JIT_CACHE_DIR= turns the cache off).  The median is taken in the steady
state: after the kernel's optimised code (tier 2, compiled in the background once the kernel is hot) is in.

A second table times first launches on small inputs (the run itself well under a millisecond), each in a
fresh process (Python, pyhip and the device already up), `add` and `softmax` on gfx90a and gfx1100: the
first, second and third launch, the worst of those three, and a launch once the background compiles are done
(settled): kernels compiled with an empty disk cache (cold; a small kernel's launches run on the numpy engine
until its quick code, compiled in the background from its second launch, is in), the same from a warm cache
(the process's first compiled kernel, which also pays for setting LLVM up, and later kernels in that
process).

    python benchmarks/bench_compiled.py [--quick] [--engines compiled,numpy] [--first-only]
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
        launch()                     # steady state: a hot kernel's optimised code (jit tier 2) is in first
        from pyhip.emu import jit
        jit.settle(600)
        launch()
        if not check():
            raise SystemExit(f"{name} {arch}: wrong result (tier 2)")
        t = _median(launch, runs)
        tb = _median(base, runs)
        stats = pyhip.engine_stats()[0 if arch == "gfx90a" else 1]
        print(json.dumps({"case": name, "arch": arch, "ms": t * 1e3, "numpy_ms": tb * 1e3, "first_ms": first * 1e3,
                          "native": stats["native"], "fallback": stats["fallback"]}), flush=True)


FIRST_KERNELS = (("add", "gfx90a"), ("softmax", "gfx90a"), ("add", "gfx1100"), ("softmax", "gfx1100"))


def first_child() -> None:
    """Runs in a fresh process: the first and a repeated launch of each FIRST_KERNELS kernel, small inputs."""
    os.environ.setdefault("PYHIP_DEVICES", "gfx90a:sramecc+:xnack-,gfx1100")
    sys.path.insert(0, str(ROOT))
    import pyhip
    from pyhip.emu import jit
    bufs = {}
    for dev in (0, 1):
        pyhip.set_device(dev)
        bufs[dev] = (pyhip.to_device(np.ones(4 * 128, np.float32)), pyhip.empty(4 * 128, np.float32))
    pyhip.synchronize()
    for kind, arch in FIRST_KERNELS:
        pyhip.set_device(0 if arch == "gfx90a" else 1)
        x, o = bufs[0 if arch == "gfx90a" else 1]
        meta = json.loads((BIN / f"{kind}-{arch}.json").read_text())
        k = pyhip.load(BIN / f"{kind}-{arch}.hsaco").kernel(meta["kernel"])
        if kind == "add":
            args = (1, meta["block"], x, x, o, 4 * 128, 0, 0)
        else:
            cols = meta["constexprs"]["BLOCK"]
            args = (4, meta["block"], o, x, cols, cols, cols, 0, 0)
        times = []
        for i in range(4):
            if i == 3:
                jit.settle(600)          # the last: once the background compiles are done (the compiled code's)
            t0 = time.perf_counter()
            k(*args, shared=meta["shared"])
            pyhip.synchronize()
            times.append(time.perf_counter() - t0)
        print(json.dumps({"kernel": f"{kind} {arch}", "first_ms": times[0] * 1e3, "second_ms": times[1] * 1e3,
                          "third_ms": times[2] * 1e3, "repeat_ms": times[3] * 1e3}),
              flush=True)


def first_launches(rounds: int) -> None:
    import tempfile
    print(f"\n{'first launch (fresh process)':<28} {'kernel':<16} {'first ms':>9} {'second ms':>9} {'third ms':>9} "
          f"{'worst ms':>9} {'settled ms':>10}")
    rows: dict = {}
    for _ in range(rounds):
        with tempfile.TemporaryDirectory() as d:
            env = {**os.environ, "PYHIP_CACHE_DIR": d}
            env.pop("PYHIP_JIT_CACHE_DIR", None)
            for state in ("cold", "cached"):
                p = subprocess.run([sys.executable, __file__, "--first-child"], env=env, capture_output=True,
                                   text=True)
                if p.returncode:
                    print(f"first launch: failed\n{p.stderr[-2000:]}")
                    return
                for i, ln in enumerate(p.stdout.splitlines()):
                    r = json.loads(ln)
                    label = state if state.startswith("cold") else ("cached, first in process" if i == 0
                                                                    else "cached, later kernel")
                    rows.setdefault((label, r["kernel"]), []).append(
                        (r["first_ms"], r["second_ms"], r["third_ms"],
                         max(r["first_ms"], r["second_ms"], r["third_ms"]), r["repeat_ms"]))
    for (label, kernel), v in rows.items():
        f, s, t, w, r = (statistics.median(x[i] for x in v) for i in range(5))
        print(f"{label:<28} {kernel:<16} {f:>9.1f} {s:>9.1f} {t:>9.1f} {w:>9.1f} {r:>10.2f}")
    print("(cold: a small loop-free kernel's dispatches run on the numpy engine until its quick code, compiled in the"
          " background from its second dispatch, is in; worst: the slowest of the first three launches (median over"
          " rounds); settled: a launch once the background compiles are done; minus settled is the overhead)")


def main() -> None:
    if "--child" in sys.argv:
        child("--quick" in sys.argv, "--small" in sys.argv)
        return
    if "--first-child" in sys.argv:
        first_child()
        return
    if "--first-only" in sys.argv:
        first_launches(5)
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
    first_launches(3 if quick else 5)


if __name__ == "__main__":
    main()
