#!/usr/bin/env python3
"""C ABI launch benchmark: builds benchmarks/bench_launch.hip with hipcc (gfx90a) and runs it on pyhip's
libamdhip64.so.5 through ``pyhip exec``; prints the submit cost per hipLaunchKernel (target ≤ 5 µs, goal
1.5 µs) and the end-to-end cost including the emulated dispatches.  Median of 3 runs."""
import os
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    with tempfile.TemporaryDirectory() as tmp:
        exe = Path(tmp) / "bench_launch"
        subprocess.run(["hipcc", "--offload-arch=gfx90a", "-O2", str(ROOT / "bench_launch.hip"), "-o", str(exe)],
                       check=True, env={**os.environ, "HIP_PLATFORM": "amd"}, capture_output=True)
        subs, tots = [], []
        for _ in range(3):
            out = subprocess.run([sys.executable, "-m", "pyhip", "exec", str(exe), str(n)], capture_output=True,
                                 text=True, check=True).stdout
            m = re.search(r"submit ([\d.]+) us/launch, end-to-end ([\d.]+)", out)
            subs.append(float(m.group(1)))
            tots.append(float(m.group(2)))
    print(f"{'benchmark':<40} {'median µs/launch':>17}")
    print(f"{f'hipLaunchKernel submit ({n} launches)':<40} {statistics.median(subs):>17.2f}")
    print(f"{'end-to-end incl. emulated dispatch':<40} {statistics.median(tots):>17.2f}")


if __name__ == "__main__":
    main()
