"""The packet processor's native loop (native/aql_processor.c) on packets that need no agent: barriers that
must wait, host-memory copies.  The agent here has no fence hooks and no native dispatch function, so the
native loop runs; ``p._stats`` counts only what the Python path executed."""
import time

import numpy as np
import pytest

import pyhip.aql as A
from pyhip.aql import packets as P
from pyhip.aql import processor as proc_mod


class PlainAgent:
    """Kernels go to Python (no native_queue); no fence hooks."""

    def __init__(self):
        self.seen = []

    def dispatch_kernel(self, pkt, addr, queue):
        self.seen.append(pkt.kernarg_address)


@pytest.fixture
def make():
    made = []

    def mk(size=64):
        q = A.Queue(size)
        ag = PlainAgent()
        p = A.PacketProcessor(q, ag)
        p.start()
        made.append(p)
        return q, ag, p
    yield mk
    for p in made:
        assert p.stop(5.0)


def kernel(seq):
    return A.KernelDispatchPacket(1, (1, 1, 1), (1, 1, 1), 0, 0, 1, seq, 0).pack()


def test_barriers_wait_in_native_code(make):
    """A barrier-AND on two pending signals and a barrier-OR: later packets wait for them; the waits and the
    completions happen in the native loop (the Python path's barrier count stays 0)."""
    q, ag, p = make()
    s1, s2 = A.Signal(1), A.Signal(1)
    and_done, or_done = A.Signal(1), A.Signal(1)
    q.submit(A.BarrierPacket((s1.handle, 0, s2.handle), and_done.handle, kind=P.TYPE_BARRIER_AND))
    q.submit(A.BarrierPacket((s1.handle, s2.handle), or_done.handle, kind=P.TYPE_BARRIER_OR))
    q.submit(kernel(7))
    time.sleep(0.05)
    assert and_done.load() == 1 and or_done.load() == 1 and ag.seen == []
    s2.store(0)
    time.sleep(0.05)
    assert and_done.load() == 1 and ag.seen == []            # AND: one of two is not enough
    s1.subtract(1)
    assert and_done.wait(A.COND_EQ, 0, 5) and or_done.wait(A.COND_EQ, 0, 5)
    deadline = time.monotonic() + 5
    while ag.seen != [7] and time.monotonic() < deadline:
        time.sleep(0.001)
    assert ag.seen == [7]
    assert p._stats["BarrierPacket"] == 0 and p.stats["BarrierPacket"] == 2
    assert and_done.error is None and p.faults == []


def test_native_barrier_wait_is_cancelled_by_stop(make):
    q, ag, p = make(size=8)
    never, bsig = A.Signal(1), A.Signal(1)
    q.submit(A.BarrierPacket((never.handle,), bsig.handle))
    time.sleep(0.05)
    t0 = time.perf_counter()
    assert p.stop(5, drain=False)
    assert time.perf_counter() - t0 < 1.0
    assert bsig.load() == 0 and bsig.error_code == A.ERROR_ABORTED and p.cancelled == [0]


@pytest.mark.parametrize("native", [True, False], ids=["native", "python"])
def test_host_copy_packets(make, monkeypatch, native):
    """AGENT_HOST_COPY between numpy buffers (random sizes and offsets, an overlapping one), compared with numpy;
    done by the native loop (native) or the Python path (PYHIP_NATIVE_AQL=0)."""
    monkeypatch.setattr(proc_mod, "NATIVE_LOOP", native)
    q, ag, p = make()
    rng = np.random.default_rng(11)
    src = rng.integers(0, 256, 5000, dtype=np.uint8)
    dst = np.zeros(5000, np.uint8)
    want = dst.copy()
    sigs = []
    for _ in range(6):
        n = int(rng.integers(1, 2000))
        so, do = int(rng.integers(0, 5000 - n)), int(rng.integers(0, 5000 - n))
        s = A.Signal(1)
        q.submit(A.AgentDispatchPacket(A.AGENT_HOST_COPY, (dst.ctypes.data + do, src.ctypes.data + so, n, 0),
                                       completion_signal=s.handle).pack())
        want[do:do + n] = src[so:so + n]
        sigs.append(s)
    s = A.Signal(1)                                           # overlapping, within dst
    q.submit(A.AgentDispatchPacket(A.AGENT_HOST_COPY, (dst.ctypes.data + 3, dst.ctypes.data, 1000, 0),
                                   completion_signal=s.handle).pack())
    for x in sigs + [s]:
        assert x.wait(A.COND_EQ, 0, 5) and x.error is None
    want[3:1003] = want[0:1000].copy()
    np.testing.assert_array_equal(dst, want)
    python_runs = p._stats["AgentDispatchPacket"]
    assert python_runs == (0 if native else 7) and p.stats["AgentDispatchPacket"] == 7
