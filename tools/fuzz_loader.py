#!/usr/bin/env python3
"""Loader fuzzing at scale (not part of the quick suite): N mutated code objects, bundles, compressed bundles
and host ELFs from the fixtures through load, inspect (validate + summary) and kernel lookup.  Reports
inputs, LoaderErrors, unexpected exceptions, the slowest input and peak RSS growth; exits non-zero on any
unexpected exception or an input slower than 2 s.   Usage: python3 tools/fuzz_loader.py [N] [SEED]"""
import random
import resource
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests"), str(ROOT / "tests" / "loader")]

from pyhip.errors import LoaderError  # noqa: E402
from test_fuzz import _corpus, exercise, mutate  # noqa: E402


def main() -> int:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    rng = random.Random(int(sys.argv[2]) if len(sys.argv) > 2 else 2026)
    corpus = _corpus()
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    errors = unexpected = 0
    worst = 0.0
    t_start = time.perf_counter()
    for i in range(n):
        data = mutate(rng, rng.choice(corpus))
        t0 = time.perf_counter()
        try:
            exercise(data)
        except LoaderError:
            errors += 1
        except Exception as exc:  # noqa: BLE001 - what the fuzzer looks for
            unexpected += 1
            path = Path(f"/tmp/pyhip-fuzz-{i}.bin")
            path.write_bytes(data)
            print(f"input {i}: {type(exc).__name__}: {exc} (saved to {path})")
        worst = max(worst, time.perf_counter() - t0)
    growth = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss0) / 1024
    print(f"inputs {n}  rejected with LoaderError {errors}  accepted {n - errors - unexpected}  unexpected {unexpected}  "
          f"slowest {worst * 1e3:.0f} ms  peak RSS growth {growth:.0f} MB  total {time.perf_counter() - t_start:.0f} s")
    return 1 if unexpected or worst > 2.0 else 0


if __name__ == "__main__":
    sys.exit(main())
