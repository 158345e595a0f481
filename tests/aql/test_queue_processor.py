"""Queues and the packet processor: multi-producer order, full queues, barriers, faults, timeouts."""
import threading
import time

import pytest

import pyhip.aql as A
from pyhip.aql import packets as P


class FakeAgent:
    """Records dispatches (kernarg_address carries a sequence number); kernel_object 0xBAD faults."""

    def __init__(self, delay: float = 0.0):
        self.seen, self.delay, self.lock = [], delay, threading.Lock()
        self.mem = bytearray(4096)

    def dispatch_kernel(self, pkt, addr, queue):
        if self.delay:
            time.sleep(self.delay)
        if pkt.kernel_object == 0xBAD:
            raise RuntimeError("simulated fault")
        with self.lock:
            self.seen.append(pkt.kernarg_address)

    def copy(self, dst, src, size):
        self.mem[dst:dst + size] = self.mem[src:src + size]

    def fill(self, dst, value, count, width):
        self.mem[dst:dst + count * width] = value.to_bytes(width, "little") * count


def dispatch(q, seq, signal=None, ko=1):
    return q.submit(A.KernelDispatchPacket(1, (1, 1, 1), (1, 1, 1), 0, 0, ko, seq, signal.handle if signal else 0).pack())


@pytest.fixture
def proc():
    made = []

    def make(size=64, delay=0.0):
        q = A.Queue(size)
        ag = FakeAgent(delay)
        p = A.PacketProcessor(q, ag)
        p.start()
        made.append(p)
        return q, ag, p
    yield make
    for p in made:
        assert p.stop(5.0)


def test_multi_producer_exactly_once_in_order(proc):
    q, ag, p = proc(size=64, delay=0.00002)
    nthreads, per = 8, 1500

    def producer(t):
        for i in range(per):
            dispatch(q, (t << 32) | i)
    threads = [threading.Thread(target=producer, args=(t,)) for t in range(nthreads)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    done = A.Signal(1)
    q.submit(A.BarrierPacket((), done.handle).pack())
    assert done.wait(A.COND_EQ, 0, 60)
    assert len(ag.seen) == nthreads * per and len(set(ag.seen)) == nthreads * per   # none lost or duplicated
    for t in range(nthreads):
        mine = [s & 0xFFFFFFFF for s in ag.seen if s >> 32 == t]
        assert mine == list(range(per))                                              # per-producer order
    deadline = time.monotonic() + 5          # the slot is retired just after its completion signal
    while q.read_index < q.write_index and time.monotonic() < deadline:
        time.sleep(0.001)
    assert q.read_index == q.write_index == nthreads * per + 1


def test_full_queue_waits_instead_of_overwriting(proc):
    q, ag, p = proc(size=4, delay=0.01)
    t0 = time.perf_counter()
    for i in range(20):
        dispatch(q, i)                     # only 4 slots: producers must wait for the slow consumer
    assert time.perf_counter() - t0 > 0.1
    s = A.Signal(1)
    q.submit(A.BarrierPacket((), s.handle).pack())
    s.wait(A.COND_EQ, 0, 10)
    assert ag.seen == list(range(20))


def test_queue_full_timeout():
    q = A.Queue(2)                                  # no consumer at all
    dispatch(q, 0)
    dispatch(q, 1)
    with pytest.raises(A.QueueFullTimeout):
        q.submit(A.KernelDispatchPacket(1, (1, 1, 1), (1, 1, 1), 0, 0, 1, 2, 0).pack(), timeout=0.2)


def test_barrier_and_or_out_of_order(proc):
    q, ag, p = proc()
    s1, s2 = A.Signal(1), A.Signal(1)
    and_done, or_done = A.Signal(1), A.Signal(1)
    q2 = A.Queue(8)
    p2 = A.PacketProcessor(q2, FakeAgent())
    p2.start()
    q.submit(A.BarrierPacket((s1.handle, s2.handle), and_done.handle, kind=P.TYPE_BARRIER_AND).pack())
    q2.submit(A.BarrierPacket((s1.handle, s2.handle), or_done.handle, kind=P.TYPE_BARRIER_OR).pack())
    time.sleep(0.1)
    assert and_done.load() == 1 and or_done.load() == 1
    s2.store(0)
    assert or_done.wait(A.COND_EQ, 0, 5)
    time.sleep(0.1)
    assert and_done.load() == 1
    s1.store(0)
    assert and_done.wait(A.COND_EQ, 0, 5)
    assert p2.stop(5)


def test_fault_recorded_and_next_packet_runs(proc):
    q, ag, p = proc()
    bad, good = A.Signal(1), A.Signal(1)
    dispatch(q, 1, bad, ko=0xBAD)
    dispatch(q, 2, good)
    assert good.wait(A.COND_EQ, 0, 5) and bad.load() == 0
    assert isinstance(bad.error, RuntimeError) and bad.error_code != 0
    assert good.error is None and ag.seen == [2]
    assert len(p.faults) == 1 and p.faults[0].index == 0


def test_agent_packets_and_raising_callback(proc):
    q, ag, p = proc()
    ag.mem[0:4] = b"\x01\x02\x03\x04"
    order = []
    cid1 = p.register_callback(lambda: order.append("cb1"))
    cid2 = p.register_callback(lambda: 1 / 0)
    cid3 = p.register_callback(lambda: order.append(bytes(ag.mem[100:104])))
    s_err, s_end = A.Signal(1), A.Signal(1)
    q.submit(A.AgentDispatchPacket(A.AGENT_COPY, (100, 0, 4, 0)).pack())
    q.submit(A.AgentDispatchPacket(A.AGENT_CALLBACK, (cid1, 0, 0, 0)).pack())
    q.submit(A.AgentDispatchPacket(A.AGENT_CALLBACK, (cid2, 0, 0, 0), completion_signal=s_err.handle).pack())
    q.submit(A.AgentDispatchPacket(A.AGENT_FILL, (200, 0xAB, 3, 2)).pack())
    q.submit(A.AgentDispatchPacket(A.AGENT_CALLBACK, (cid3, 0, 0, 0), completion_signal=s_end.handle).pack())
    assert s_end.wait(A.COND_EQ, 0, 5)
    assert order == ["cb1", b"\x01\x02\x03\x04"]
    assert isinstance(s_err.error, ZeroDivisionError)
    assert bytes(ag.mem[200:206]) == b"\xab\x00" * 3


def test_signal_wait_timeout_is_honoured():
    s = A.Signal(5)
    t0 = time.perf_counter()
    assert s.wait(A.COND_EQ, 0, 0.2) is False
    assert 0.18 < time.perf_counter() - t0 < 1.0
    threading.Timer(0.05, lambda: s.store(0)).start()
    assert s.wait(A.COND_EQ, 0, 5)


def test_timestamps_and_pool_reuse_only_after_completion(proc):
    q, ag, p = proc()
    pool = A.SignalPool()
    s = pool.acquire()
    with pytest.raises(RuntimeError):
        pool.release(s)              # not completed yet: refusing protects in-flight packets
    dispatch(q, 1, s)
    assert s.wait(A.COND_EQ, 0, 5)
    assert 0 < s.start_ns <= s.end_ns
    pool.release(s)
    assert pool.acquire() is s and s.load() == 1


def test_stop_with_pending_work_drains(proc):
    q, ag, p = proc(size=64, delay=0.001)
    for i in range(50):
        dispatch(q, i)
    assert p.stop(10)
    assert ag.seen == list(range(50))
