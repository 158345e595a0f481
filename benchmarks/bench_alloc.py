#!/usr/bin/env python3
"""Allocation bookkeeping with many live allocations (issue 24): benchmarks/bench_alloc.hip on pyhip's
libamdhip64 (``pyhip exec``) holds ``live`` hipMalloc'd buffers, then times per call hipMalloc + hipFree, a
one-block launch + hipDeviceSynchronize, hipMalloc + hipMemset + launch + sync + read back + hipFree (every
result checked), and a 256-byte hipMemcpy H2D ("setup": the mean hipMalloc while the buffers were made).
Every value is the median of ``--runs`` processes (each the median of 5 rounds of n calls), in µs.
Run: python benchmarks/bench_alloc.py [--live 0 1000 10000] [--n 200] [--runs 3]"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent
COLS = ("setup", "malloc+free", "launch+sync", "malloc+launch+free", "H2D")


def run(exe: Path, live: int, n: int) -> dict:
    out = subprocess.run([sys.executable, "-m", "pyhip", "exec", str(exe), str(live), str(n)], capture_output=True,
                         text=True, check=True).stdout
    m = re.search(" ".join(re.escape(c) + r" ([\d.]+)" for c in COLS) + " us, 0 wrong", out)
    if m is None:
        raise SystemExit(f"unexpected output: {out}")
    return dict(zip(COLS, map(float, m.groups())))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--live", type=int, nargs="+", default=[0, 1000, 10000])
    ap.add_argument("--n", type=int, default=200)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        exe = Path(tmp) / "bench_alloc"
        subprocess.run(["hipcc", "--offload-arch=gfx90a", "-O2", str(ROOT / "bench_alloc.hip"), "-o", str(exe)],
                       check=True, env={**os.environ, "HIP_PLATFORM": "amd"})
        print(f"load average {os.getloadavg()[0]:.1f}; µs per call, median of {args.runs} processes, n = {args.n}")
        print("| live allocations | " + " | ".join(COLS) + " |")
        print("|---" * (len(COLS) + 1) + "|")
        for live in args.live:
            runs = [run(exe, live, args.n) for _ in range(args.runs)]
            row = [statistics.median(r[c] for r in runs) for c in COLS]
            print(f"| {live} | " + " | ".join(f"{v:.1f}" for v in row) + " |", flush=True)


if __name__ == "__main__":
    sys.exit(main())
