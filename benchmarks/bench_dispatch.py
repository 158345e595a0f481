#!/usr/bin/env python3
"""Small kernels at hardware rates (issue 24): a tiny 16-argument kernel (benchmarks/bench_dispatch.hip, built
with hipcc for gfx90a) back to back and launch+synchronize, per kernel, on the emulated gfx90a:

  pyhip            the program on pyhip's libamdhip64 (``pyhip exec``): native launch, native AQL processing,
                   native synchronize
  AMD HIP + ROCr   the same program on AMD's own runtime over pyhip's libhsakmt (``pyhip exec --runtime amd``)
  PYHIP_NATIVE_AQL=0 rows: every packet through the Python packet processor / KFD command processor (what
                   both paths cost before the native loops)

Each row is the median of 3 processes (each reporting the median of 5 rounds).  Targets: ≤ 3 µs back to back and
≤ 15 µs launch+sync from C, and no slower than AMD's HIP on the same device.
Run: python benchmarks/bench_dispatch.py [launches per round]"""
import os
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent


def run(exe: Path, n: int, runtime: str, env: dict) -> tuple[float, float]:
    out = subprocess.run([sys.executable, "-m", "pyhip", "exec", "--runtime", runtime, str(exe), str(n)],
                         capture_output=True, text=True, check=True, env={**os.environ, **env}).stdout
    m = re.search(r"back-to-back ([\d.]+) us/kernel, launch\+sync ([\d.]+) us/kernel, 0 wrong", out)
    if m is None:
        raise SystemExit(f"unexpected output: {out}")
    return float(m.group(1)), float(m.group(2))


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    slow = max(n // 10, 100)
    rows = [("pyhip", "pyhip", {}, n),
            ("pyhip, Python packet processor", "pyhip", {"PYHIP_NATIVE_AQL": "0"}, slow),
            ("AMD HIP + ROCr over pyhip's thunk", "amd", {}, n),
            ("AMD HIP + ROCr, Python command processor", "amd", {"PYHIP_NATIVE_AQL": "0"}, slow)]
    with tempfile.TemporaryDirectory() as tmp:
        exe = Path(tmp) / "bench_dispatch"
        subprocess.run(["hipcc", "--offload-arch=gfx90a", "-O2", str(ROOT / "bench_dispatch.hip"), "-o", str(exe)],
                       check=True, env={**os.environ, "HIP_PLATFORM": "amd"}, capture_output=True)
        print(f"{'runtime (tiny 16-argument kernel, C ABI)':<44} {'back-to-back µs':>16} {'launch+sync µs':>15}")
        for name, runtime, env, count in rows:
            res = [run(exe, count, runtime, env) for _ in range(3)]
            b2b = statistics.median(r[0] for r in res)
            ls = statistics.median(r[1] for r in res)
            print(f"{name:<44} {b2b:>16.2f} {ls:>15.2f}")


if __name__ == "__main__":
    main()
