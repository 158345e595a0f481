#!/usr/bin/env python3
"""Small copies, fills and synchronizes (issue 24): per-call latency of hipMemcpy (H2D, D2H, D2D), hipMemset,
hipDeviceSynchronize, hipStreamSynchronize(0) and hipEventRecord + hipEventSynchronize on an idle emulated
gfx90a, for ``--bytes`` bytes (256 by default); from C also hipEventRecord + hipEventQuery until done, two
records + hipEventElapsedTime, hipMemcpyAsync / hipMemsetAsync on the null stream + hipStreamSynchronize, and
a one-block kernel launch followed by an event record + synchronize or an asynchronous copy + synchronize:

  Python           pyhip.hip in this process (numpy host buffers, hipMalloc'd device memory)
  C, pyhip         benchmarks/bench_copies.hip on pyhip's libamdhip64 (``pyhip exec``)
  C, AMD HIP       the same program on AMD's own HIP + ROCr over pyhip's thunk (``pyhip exec --runtime amd``)

Every value is the median of 3 processes (each reporting the median of 5 rounds of N calls); every copy is
checked (the Python rows against numpy, the C program against its own host buffers).
Run: python benchmarks/bench_copies.py [--n 2000] [--bytes 256]"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent
OPS = ("H2D", "D2H", "D2D", "memset", "device-sync", "stream-sync", "event-record+sync")
C_OPS = OPS + ("event-record+query", "event-elapsed", "async-H2D+sync", "async-D2H+sync", "async-memset+sync",
               "launch+event-sync", "launch+async-D2H+sync", "launch+async-D2D+sync")


def run_c(exe: Path, n: int, nbytes: int, runtime: str) -> dict:
    out = subprocess.run([sys.executable, "-m", "pyhip", "exec", "--runtime", runtime, str(exe), str(n), str(nbytes)],
                         capture_output=True, text=True, check=True).stdout
    m = re.search(" ".join(re.escape(op) + r" ([\d.]+)" for op in C_OPS) + " us, 0 wrong", out)
    if m is None:
        raise SystemExit(f"unexpected output from {runtime}: {out}")
    return dict(zip(C_OPS, map(float, m.groups())))


def per_call(n: int, fn) -> float:
    rounds = []
    for _ in range(5):
        t0 = time.perf_counter()
        for i in range(n):
            fn(i)
        rounds.append((time.perf_counter() - t0) / n * 1e6)
    return statistics.median(rounds)


def run_python(n: int, nbytes: int) -> dict:
    import pyhip.hip as hip
    K = hip.hipMemcpyKind

    def ok(r):
        if r[0] != hip.hipError_t.hipSuccess:
            raise SystemExit(f"{r[0]!r}")
        return r[1] if len(r) == 2 else None
    ok(hip.hipSetDevice(0))
    d, d2 = ok(hip.hipMalloc(nbytes)), ok(hip.hipMalloc(nbytes))
    h = np.random.default_rng(3).integers(0, 256, nbytes, dtype=np.uint8)
    o = np.zeros(nbytes, np.uint8)
    ok(hip.hipMemcpy(d, h, nbytes, K.hipMemcpyHostToDevice))
    ok(hip.hipDeviceSynchronize())
    ev = ok(hip.hipEventCreate())
    res = {
        "H2D": per_call(n, lambda i: hip.hipMemcpy(d, h, nbytes, K.hipMemcpyHostToDevice)),
        "D2H": per_call(n, lambda i: hip.hipMemcpy(o, d, nbytes, K.hipMemcpyDeviceToHost)),
    }
    np.testing.assert_array_equal(o, h)
    res["D2D"] = per_call(n, lambda i: hip.hipMemcpy(d2, d, nbytes, K.hipMemcpyDeviceToDevice))
    ok(hip.hipMemcpy(o, d2, nbytes, K.hipMemcpyDeviceToHost))
    np.testing.assert_array_equal(o, h)
    res["memset"] = per_call(n, lambda i: hip.hipMemset(d2, i & 0xFF, nbytes))
    ok(hip.hipMemcpy(o, d2, nbytes, K.hipMemcpyDeviceToHost))
    assert (o == (n - 1) & 0xFF).all(), "memset: wrong bytes"
    res["device-sync"] = per_call(n, lambda i: hip.hipDeviceSynchronize())
    res["stream-sync"] = per_call(n, lambda i: hip.hipStreamSynchronize(None))
    res["event-record+sync"] = per_call(max(n // 4, 1), lambda i: (hip.hipEventRecord(ev, None),
                                                                   hip.hipEventSynchronize(ev)))
    return res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=2000, help="calls per round")
    ap.add_argument("--bytes", type=int, default=256)
    ap.add_argument("--processes", type=int, default=3)
    opts = ap.parse_args()
    rows = {}
    with tempfile.TemporaryDirectory() as tmp:
        exe = Path(tmp) / "bench_copies"
        subprocess.run(["hipcc", "--offload-arch=gfx90a", "-O2", str(ROOT / "bench_copies.hip"), "-o", str(exe)],
                       check=True, env={**os.environ, "HIP_PLATFORM": "amd"}, capture_output=True)
        py = [subprocess.run([sys.executable, __file__, "--python-only", str(opts.n), str(opts.bytes)],
                             capture_output=True, text=True, check=True).stdout for _ in range(opts.processes)]
        rows["Python (pyhip.hip)"] = [dict(zip(OPS, map(float, p.split()))) for p in py]
        rows["C, pyhip (pyhip exec)"] = [run_c(exe, opts.n, opts.bytes, "pyhip") for _ in range(opts.processes)]
        rows["C, AMD HIP over pyhip's thunk"] = [run_c(exe, opts.n, opts.bytes, "amd") for _ in range(opts.processes)]
    print(f"{opts.bytes}-byte copies and fills on an idle device, µs per call (median of {opts.processes} processes "
          f"× 5 rounds of {opts.n})")
    for ops in (OPS, C_OPS[len(OPS):len(OPS) + 5], C_OPS[len(OPS) + 5:]):   # the C-only rows below
        w = max(19, max(map(len, ops)) + 2)
        print(f"{'':<32}" + "".join(f"{op:>{w}}" for op in ops))
        for name, runs in rows.items():
            if all(op in runs[0] for op in ops):
                print(f"{name:<32}" + "".join(f"{statistics.median(r[op] for r in runs):>{w}.2f}" for op in ops))


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--python-only":
        r = run_python(int(sys.argv[2]), int(sys.argv[3]))
        print(" ".join(f"{r[op]:.3f}" for op in OPS))
    else:
        main()
