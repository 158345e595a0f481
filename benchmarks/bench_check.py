#!/usr/bin/env python3
"""Cost of the LDS checks (docs/check.md "Cost"): ``block_sum`` of tests/check/src/barriers_clean.hip (a
256-thread block reduction, 9 barriers and 17 LDS accesses per workgroup) over 64K elements (256 workgroups),
per launch from Python after a warm-up launch, average of 5: the native engine, the numpy engine, and the
numpy engine with synccheck, initcheck on each engine (the native handlers mark and read the shadow; the compiled
code's own accesses step aside for them), racecheck on each engine (the native engine's race shadows in C, its
dispatches in the numpy engine's schedule: native/engine/check.h), and all the checks on the native engine.
``--one CO N CHECKS`` runs one row (for ``perf stat``)."""
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
import pyhip  # noqa: E402


def _per_launch(kernel, out, x, n, rounds=5):
    kernel((n + 255) // 256, 256, out, x, np.int32(n))
    pyhip.synchronize()
    t = time.perf_counter()
    for _ in range(rounds):
        kernel((n + 255) // 256, 256, out, x, np.int32(n))
        pyhip.synchronize()
    return (time.perf_counter() - t) / rounds * 1e3


def one(co: str, n: int, checks: str) -> None:
    """In a process of its own (the engine is chosen by PYHIP_ENGINE before any queue exists): ms/launch."""
    kernel = pyhip.load(co).kernel("_Z9block_sumPiPKii")
    host = np.random.default_rng(0).integers(0, 100, n).astype(np.int32)
    x = pyhip.to_device(host)
    out = pyhip.empty((n + 255) // 256 + 1, np.int32)
    if checks != "-":
        with pyhip.check(checks, echo=False) as s:
            ms = _per_launch(kernel, out, x, n)
        assert not s.reports, s.reports
    else:
        ms = _per_launch(kernel, out, x, n)
    got = out.get()[:(n + 255) // 256]
    assert (got == np.add.reduceat(host, np.arange(0, n, 256))).all()
    print(f"{ms:.2f}")


def main() -> None:
    if sys.argv[1:2] == ["--one"]:
        one(sys.argv[2], int(sys.argv[3]), sys.argv[4])
        return
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 65536
    with tempfile.TemporaryDirectory() as tmp:
        co = Path(tmp) / "block_sum.hsaco"
        subprocess.run(["hipcc", "--genco", "--offload-arch=gfx90a", "-O2",
                        str(ROOT / "tests/check/src/barriers_clean.hip"), "-o", str(co)],
                       check=True, env={**os.environ, "HIP_PLATFORM": "amd"}, capture_output=True)
        rows = []
        for label, engine, checks in (("native engine", "native", "-"), ("numpy engine", "numpy", "-"),
                                      ("numpy engine + synccheck", "numpy", "synccheck"),
                                      ("native engine + initcheck", "native", "initcheck"),
                                      ("numpy engine + initcheck", "numpy", "initcheck"),
                                      ("native engine + racecheck", "native", "racecheck"),
                                      ("numpy engine + racecheck", "numpy", "racecheck"),
                                      ("native engine + all checks", "native", "all")):
            r = subprocess.run([sys.executable, __file__, "--one", str(co), str(n), checks], capture_output=True,
                               text=True, check=True, env={**os.environ, "PYHIP_ENGINE": engine})
            rows.append((label, float(r.stdout.split()[-1])))
    print(f"{'block_sum, ' + str(n) + ' elements':<34} {'ms/launch':>10}")
    for label, ms in rows:
        print(f"{label:<34} {ms:>10.1f}")


if __name__ == "__main__":
    main()
