#!/usr/bin/env python3
"""AQL core benchmark: prints a table of medians.

* submit cost per packet, 1 and 4 producer threads — without a consumer (queue big enough to hold every
  packet: the producer path alone) and with a packet processor draining concurrently (NullAgent);
* round trip of one empty kernel dispatch: submit → processor → NullAgent → completion signal observed.
"""
import statistics
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import pyhip.aql as A  # noqa: E402

PER_THREAD = 4000
RUNS = 5


def submit_cost(producers: int, consumer: bool) -> float:
    total = producers * PER_THREAD
    q = A.Queue(1 << (total - 1).bit_length())
    p = A.PacketProcessor(q, A.NullAgent(), lazy=False)
    if consumer:
        p.start()
    pkt = A.KernelDispatchPacket(1, (64, 1, 1), (64, 1, 1), 0, 0, 1, 0, 0).pack()
    go = threading.Barrier(producers + 1)

    def work():
        go.wait()
        for _ in range(PER_THREAD):
            q.submit(pkt)
    ts = [threading.Thread(target=work) for _ in range(producers)]
    for t in ts:
        t.start()
    go.wait()
    t0 = time.perf_counter()
    for t in ts:
        t.join()
    dt = time.perf_counter() - t0
    p.stop(30, drain=consumer)
    return dt / total * 1e6


def round_trip(n: int = 2000) -> float:
    q = A.Queue(256)
    p = A.PacketProcessor(q, A.NullAgent())
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
    rows = []
    for producers in (1, 4):
        for consumer in (False, True):
            name = f"submit, {producers} producer{'s' if producers > 1 else ''}, " + \
                ("consumer running" if consumer else "no consumer")
            rows.append((name, statistics.median(submit_cost(producers, consumer) for _ in range(RUNS))))
    rows.append(("empty dispatch round trip", statistics.median(round_trip() for _ in range(3))))
    print(f"{'benchmark (median)':<44} {'µs/packet':>10}")
    for name, us in rows:
        print(f"{name:<44} {us:>10.2f}")


if __name__ == "__main__":
    main()
