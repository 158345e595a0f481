#!/usr/bin/env python3
"""Create/destroy cycles (streams with a queued fill, events, allocations; modules separately): time per
cycle and memory growth (host RSS and device bytes) between the first and the last tenth of the run."""
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import pyhip.hip as hip  # noqa: E402
from pyhip.runtime.context import runtime  # noqa: E402


def rss_mb() -> float:
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def run(name, n, fn):
    mem = runtime().device().backend.memory
    for _ in range(n // 10):
        fn()
    rss0, dev0, t0 = rss_mb(), mem.used, time.perf_counter()
    for _ in range(n - n // 10):
        fn()
    dt = (time.perf_counter() - t0) / (n - n // 10)
    print(f"{name:<34} {n:>7} {dt * 1e3:>9.2f} {rss_mb() - rss0:>12.1f} {mem.used - dev0:>13}")


def stream_event_alloc():
    s = hip.hipStreamCreate()[1]
    e = hip.hipEventCreate()[1]
    p = hip.hipMalloc(4096)[1]
    hip.hipMemsetAsync(p, 1, 4096, s)
    hip.hipEventRecord(e, s)
    hip.hipEventSynchronize(e)
    hip.hipEventDestroy(e)
    hip.hipStreamDestroy(s)
    hip.hipFree(p)


DATA = (ROOT / "tests/fixtures/bin/hipcc52/basic-gfx90a.hsaco").read_bytes()


def module():
    hip.hipModuleUnload(hip.hipModuleLoadData(DATA)[1])


if __name__ == "__main__":
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
    print(f"{'cycle':<34} {'count':>7} {'ms/cycle':>9} {'RSS grow MB':>12} {'device bytes':>13}")
    run("stream + event + alloc + fill", n, stream_event_alloc)
    run("module load/unload", n, module)
