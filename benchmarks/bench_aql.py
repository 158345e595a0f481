#!/usr/bin/env python3
"""AQL core benchmark (prints a table; medians of 5 runs): submit cost per packet with 1 and 4 producer
threads, and the round trip of one empty dispatch (submit → processor → completion signal observed)."""
import statistics
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import pyhip.aql as A  # noqa: E402


class NullAgent:
    def dispatch_kernel(self, pkt, addr, queue):
        pass

    def copy(self, *a):
        pass

    def fill(self, *a):
        pass


def submit_cost(producers: int, per: int = 5000) -> float:
    q = A.Queue(4096)
    p = A.PacketProcessor(q, NullAgent())
    p.start()
    pkt = A.KernelDispatchPacket(1, (64, 1, 1), (64, 1, 1), 0, 0, 1, 0, 0).pack()
    barrier = threading.Barrier(producers + 1)

    def work():
        barrier.wait()
        for _ in range(per):
            q.submit(pkt)
    ts = [threading.Thread(target=work) for _ in range(producers)]
    for t in ts:
        t.start()
    barrier.wait()
    t0 = time.perf_counter()
    for t in ts:
        t.join()
    dt = time.perf_counter() - t0
    p.stop()
    return dt / (producers * per) * 1e6


def round_trip(n: int = 2000) -> float:
    q = A.Queue(256)
    p = A.PacketProcessor(q, NullAgent())
    p.start()
    pool = A.SignalPool()
    ts = []
    for i in range(n):
        s = pool.acquire()
        t0 = time.perf_counter()
        q.submit(A.KernelDispatchPacket(1, (64, 1, 1), (64, 1, 1), 0, 0, 1, i, s.handle).pack())
        s.wait(A.COND_EQ, 0)
        ts.append(time.perf_counter() - t0)
        pool.release(s)
    p.stop()
    return statistics.median(ts) * 1e6


def main() -> None:
    rows = [("submit, 1 producer", statistics.median(submit_cost(1) for _ in range(5))),
            ("submit, 4 producers", statistics.median(submit_cost(4) for _ in range(5))),
            ("empty dispatch round trip", statistics.median(round_trip() for _ in range(3)))]
    print(f"{'benchmark':<28} {'median µs/packet':>17}")
    for name, us in rows:
        print(f"{name:<28} {us:>17.2f}")


if __name__ == "__main__":
    main()
