#!/usr/bin/env python3
"""The native execution engine against the targets of issue 13 (docs/engine.md).  One table: medians of
several runs, ratios measured in the same run; every kernel result is checked before it is timed.

  - vadd 16M / 1M fp32 (hipcc 5.2 basic.hip): kernel wall (launch + synchronize) / numpy ``a + b``
  - engine rate in M wave-instructions/s on vadd and on bench_isa.py's mix, 1 thread vs all cores
  - scratch and one-address global accesses (bench_engine.hip local_array): kernel wall, engine rate
  - contended CAS loop: hipcc 5.2 float atomicAdd on one address (a CAS loop), 4,096 items
  - Python launch cost while the device is busy: pyhip.hip.hipModuleLaunchKernel 0 / 16 args, Kernel.__call__
  - first launch of a new kernel (load + decode + lowering) vs a repeat; end-to-end launch+sync of a small kernel

    python benchmarks/bench_engine.py [--quick]      (needs hipcc: builds benchmarks/bench_engine.hip)
"""
import contextlib
import hashlib
import io
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))
os.environ.setdefault("PYHIP_DEVICES", "gfx90a:sramecc+:xnack-,gfx942:sramecc+:xnack-")

import pyhip  # noqa: E402
from pyhip import hip  # noqa: E402
from pyhip.runtime.context import runtime  # noqa: E402

RUNS = 3 if "--quick" in sys.argv else 7
rows = []


def out(name, value, unit, target="", note=""):
    rows.append((name, value, unit, target, note))
    print(f"{name:<52} {value:>12.3f} {unit:<12} {target:<10} {note}", flush=True)


def med(fn, runs=RUNS):
    ts = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts)


def gpu():
    return runtime().device(pyhip.get_device()).backend.emulated_gpu


def threads(n):
    """Threads the native engine may use per dispatch (0: all cores)."""
    gpu().native_engine().lib.pyhip_engine_set_threads(n)


def build_kernels() -> Path:
    src = HERE / "bench_engine.hip"
    tag = hashlib.sha256(src.read_bytes()).hexdigest()[:16]
    co = Path(tempfile.gettempdir()) / f"pyhip-bench-engine-{tag}.hsaco"
    if not co.exists():
        subprocess.run(["hipcc", "--offload-arch=gfx90a", "-O3", "--genco", str(src), "-o", str(co)], check=True,
                       env={**os.environ, "HIP_PLATFORM": "amd"})
    return co


def vadd(ncores):
    m = pyhip.load(ROOT / "tests/fixtures/bin/hipcc52/basic-gfx90a.hsaco")
    k = m.kernel("vadd")
    rng = np.random.default_rng(0)
    for n, target in ((16 << 20, 3), (1 << 20, 5)):
        a, b = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
        da, db, dc = pyhip.to_device(a), pyhip.to_device(b), pyhip.empty(n, np.float32)
        launch = lambda: (k((n + 255) // 256, 256, da, db, dc, n), pyhip.synchronize())   # noqa: E731
        launch()
        assert np.array_equal(dc.get(), a + b)
        tn = med(lambda: a + b)
        tk = med(launch)
        wi = gpu().last_dispatch.wave_instructions
        label = f"{n >> 20}M"
        out(f"vadd {label} fp32: kernel wall", tk * 1e3, "ms")
        out(f"vadd {label} fp32: numpy a + b", tn * 1e3, "ms")
        out(f"vadd {label} fp32: kernel / numpy", tk / tn, "x", f"<= {target}")
        if n == 16 << 20:
            out(f"vadd {label}: engine rate, {ncores} threads", wi / tk / 1e6, "M wi/s", ">= 150")
            threads(1)
            t1 = med(launch, max(3, RUNS // 2))
            threads(0)
            out(f"vadd {label}: engine rate, 1 thread", wi / t1 / 1e6, "M wi/s")


def isa_mix(ncores):
    """bench_isa.py's cases (OCML math, warp ops, atomics, half, Triton layer norm and tl.dot matmuls),
    its own checks included: total wave-instructions / total time."""
    import bench_isa
    for n_threads, label in ((0, f"{ncores} threads"), (1, "1 thread")):
        acc = {"t": 0.0, "wi": 0}

        def row(name, seconds, items):
            acc["t"] += seconds
            acc["wi"] += gpu().last_dispatch.wave_instructions

        bench_isa.row = row
        threads(n_threads)
        with contextlib.redirect_stdout(io.StringIO()):
            bench_isa.main()
        pyhip.set_device(0)
        out(f"bench_isa mix: engine rate, {label}", acc["wi"] / acc["t"] / 1e6, "M wi/s",
            ">= 50" if n_threads == 0 else "")
    threads(0)


def private_memory(co):
    """Scratch and one-address global accesses (bench_engine.hip local_array: hip-tests' kernel that timed out)."""
    m = pyhip.load(co)
    k = m.kernel("local_array")
    rng = np.random.default_rng(3)
    iters = 20_000
    a = rng.integers(-1000, 1000, iters).astype(np.int32)
    want = a + 3 * a[(np.arange(iters) * 7) % 256]
    da, dc = pyhip.to_device(a), pyhip.to_device(np.full(iters, -7, np.int32))
    launch = lambda: (k(8, 256, da, dc, iters), pyhip.synchronize())   # noqa: E731
    launch()
    assert np.array_equal(dc.get(), want)
    t = med(launch, max(3, RUNS // 2))
    wi = gpu().last_dispatch.wave_instructions
    out("local array + one-address loop (32 waves): kernel wall", t * 1e3, "ms")
    out("local array + one-address loop: engine rate", wi / t / 1e6, "M wi/s")


def cas(co):
    k = pyhip.load(co).kernel("cas_add")
    n = 4096
    p = pyhip.to_device(np.zeros(1, np.float32))

    def launch():
        p.set(np.zeros(1, np.float32))
        k(n // 256, 256, p, n)
        pyhip.synchronize()
    launch()
    p2 = pyhip.to_device(np.zeros(1, np.float32))
    k(n // 256, 256, p2, n)
    pyhip.synchronize()
    assert p2.get()[0] == n, p2.get()
    out("contended CAS loop (float atomicAdd), 4096 items", med(launch, 3), "s", "<= 0.2")


def launches(co):
    mod = hip.hipModuleLoad(str(co).encode())[1]
    f = {name: hip.hipModuleGetFunction(mod, name.encode())[1] for name in ("empty", "args16", "busy")}
    busy_out = hip.hipMalloc(4 * 64 * 64)[1]
    ptrs = [hip.hipMalloc(64)[1] for _ in range(4)]
    args16 = ptrs + [1, 2, 3, 4, 5, 6, 7, 8] + [1.0, 2.0, 3.0, 4.0]
    N = 200          # fewer than the queue holds: a full queue would time the busy kernel, not the submit

    def busy():
        hip.hipModuleLaunchKernel(f["busy"], 64, 1, 1, 64, 1, 1, 0, None, [400000, busy_out], None)

    def per_call(body):
        ts = []
        for _ in range(RUNS):
            busy()
            t0 = time.perf_counter()
            body()
            ts.append((time.perf_counter() - t0) / N)
            hip.hipDeviceSynchronize()
        return statistics.median(ts) * 1e6

    for name, params, target in (("empty", None, 2), ("args16", args16, 3)):
        fn = f[name]
        hip.hipModuleLaunchKernel(fn, 1, 1, 1, 64, 1, 1, 0, None, params, None)
        hip.hipDeviceSynchronize()

        def body(fn=fn, params=params):
            for _ in range(N):
                hip.hipModuleLaunchKernel(fn, 1, 1, 1, 64, 1, 1, 0, None, params, None)
        us = per_call(body)
        out(f"hipModuleLaunchKernel {'0' if params is None else '16'} args, device busy", us, "us/launch",
            f"<= {target}")
        if params is None:
            base = us
    k = pyhip.load(co).kernel("empty")
    k(1, 64)
    pyhip.synchronize()

    def body_k():
        for _ in range(N):
            k(1, 64)
    us = per_call(body_k)
    out("Kernel.__call__ 0 args, device busy", us, "us/launch", "<= +1", f"{us - base:+.2f} us vs hip")


FIRST = """
import sys, time
import numpy as np
sys.path.insert(0, {root!r})
import pyhip
from pyhip.emu.native import cache
n = 1 << 16
a = pyhip.to_device(np.arange(n, dtype=np.float32))
b = pyhip.empty(n, np.float32)
w = pyhip.load({warm!r}).kernel("vadd")          # the engine up first: only the new kernel is timed
w(1, 64, a, a, b, 64)
pyhip.synchronize()
h0, s0 = cache.stats["hit"], cache.stats["store"]
t0 = time.perf_counter()
m = pyhip.load({co!r})
k = m.kernel("{name}")
k(n // 256, 256, a, b, n)
pyhip.synchronize()
t = time.perf_counter() - t0
assert np.array_equal(b.get(), np.arange(n, dtype=np.float32) * 2 + 1)
print(t, cache.stats["hit"] - h0, cache.stats["store"] - s0)
"""


def first_in_new_process(co, cache_dir):
    """Load + first launch + synchronize of small_work in a fresh process (runtime and engine already up)."""
    env = {**os.environ, "PYHIP_CACHE_DIR": str(cache_dir)}
    r = subprocess.run([sys.executable, "-c", FIRST.format(root=str(ROOT), co=str(co), name="small_work",
                                                           warm=str(ROOT / "tests/fixtures/bin/hipcc52/basic-gfx90a.hsaco"))],
                       env=env, capture_output=True, text=True, check=True)
    t, hit, store = r.stdout.split()
    return float(t), int(hit), int(store)


def first_launch_and_roundtrip(co):
    n = 1 << 16
    a = pyhip.to_device(np.arange(n, dtype=np.float32))
    b = pyhip.empty(n, np.float32)
    cold, warm = [], []
    for _ in range(RUNS):
        with tempfile.TemporaryDirectory() as d:
            t, hit, store = first_in_new_process(co, d)       # empty cache: decode + lower, entry stored
            assert (hit, store) == (0, 1)
            cold.append(t)
            t, hit, store = first_in_new_process(co, d)       # the next process: lowered program from the cache
            assert (hit, store) == (1, 0)
            warm.append(t)
    out("first launch, new process, empty cache (ms)", statistics.median(cold) * 1e3, "ms", "",
        "load + decode + lower + run")
    out("first launch, new process, cached lowering (ms)", statistics.median(warm) * 1e3, "ms", "",
        f"{statistics.median(cold) / statistics.median(warm):.1f}x faster (pyhip/emu/native/cache.py)")
    m = pyhip.load(co)
    k = m.kernel("small_work")
    k(n // 256, 256, a, b, n)
    pyhip.synchronize()
    assert np.array_equal(b.get(), np.arange(n, dtype=np.float32) * 2 + 1)
    again = med(lambda: (k(n // 256, 256, a, b, n), pyhip.synchronize()))
    out("repeat launch of the same kernel (64K items)", again * 1e3, "ms")
    N = 300

    def rt():
        for _ in range(N):
            k(1, 256, a, b, 256)
            pyhip.synchronize()
    out("end-to-end launch+sync, small_work 256 items", med(rt, 3) / N * 1e6, "us")


def main():
    co = build_kernels()
    ncores = os.cpu_count()
    g = gpu()
    print(f"engine: {g.engine}; native engine threads: all = {ncores}; load average {os.getloadavg()[0]:.2f} "
          f"(the machine is shared: numbers are medians of {RUNS} runs)")
    print(f"{'case':<52} {'value':>12} {'unit':<12} {'target':<10} note")
    vadd(ncores)
    private_memory(co)
    cas(co)
    launches(co)
    first_launch_and_roundtrip(co)
    isa_mix(ncores)
    print(f"load average at the end: {os.getloadavg()[0]:.2f}; engine stats: {pyhip.engine_stats()}")


if __name__ == "__main__":
    main()
