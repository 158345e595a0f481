"""Queues and the packet processor: multi-producer order, full queues, barriers, faults, timeouts, shutdown."""
import statistics
import threading
import time

import pytest

import pyhip.aql as A
from pyhip.aql import packets as P


class FakeAgent:
    """Records dispatches (kernarg_address carries a sequence number).  kernel_object 0xBAD raises,
    0xC0DE raises an error with an integer ``code`` (like a HipError).  With ``check_slot`` it re-reads the
    packet's ring slot after the delay: a producer overwriting an unconsumed slot would be caught."""

    def __init__(self, delay: float = 0.0, check_slot: bool = False):
        self.seen, self.delay, self.check_slot, self.lock = [], delay, check_slot, threading.Lock()
        self.mem = bytearray(4096)
        self.overwrites = 0
        self.fence_calls = []

    def dispatch_kernel(self, pkt, addr, queue):
        if self.delay:
            time.sleep(self.delay)
        if self.check_slot:
            index = (addr - queue.base_address) // 64
            if queue.slot_bytes(index) != pkt.pack():
                self.overwrites += 1
        if pkt.kernel_object == 0xBAD:
            raise RuntimeError("simulated fault")
        if pkt.kernel_object == 0xC0DE:
            err = RuntimeError("fault with a code")
            err.code = 700
            raise err
        with self.lock:
            self.seen.append(pkt.kernarg_address)

    def copy(self, dst, src, size):
        self.mem[dst:dst + size] = self.mem[src:src + size]

    def fill(self, dst, value, count, width):
        self.mem[dst:dst + count * width] = (value & ((1 << 8 * width) - 1)).to_bytes(width, "little") * count

    def acquire_fence(self, scope):
        self.fence_calls.append(("acq", scope))

    def release_fence(self, scope):
        self.fence_calls.append(("rel", scope))


def kpacket(seq, signal=None, ko=1, hdr=None):
    return A.KernelDispatchPacket(1, (1, 1, 1), (1, 1, 1), 0, 0, ko, seq, signal.handle if signal else 0,
                                  header=hdr if hdr is not None else P.header(P.TYPE_KERNEL_DISPATCH))


def dispatch(q, seq, signal=None, ko=1, timeout=None):
    return q.submit(kpacket(seq, signal, ko).pack(), timeout=timeout)


def marker(q):
    """A barrier packet whose completion means everything before it ran."""
    s = A.Signal(1)
    q.submit(A.BarrierPacket((), s.handle))
    assert s.wait(A.COND_EQ, 0, 10)


@pytest.fixture
def proc():
    made = []

    def make(size=64, delay=0.0, check_slot=False, start=True):
        q = A.Queue(size)
        ag = FakeAgent(delay, check_slot)
        p = A.PacketProcessor(q, ag)
        if start:
            p.start()
        made.append(p)
        return q, ag, p
    yield make
    for p in made:
        assert p.stop(5.0)


def test_multi_producer_exactly_once_in_order_no_overwrite(proc):
    q, ag, p = proc(size=64, delay=0.00002, check_slot=True)
    nthreads, per = 8, 2000
    go = threading.Barrier(nthreads)

    def producer(t):
        go.wait()
        for i in range(per):
            dispatch(q, (t << 32) | i)
    threads = [threading.Thread(target=producer, args=(t,)) for t in range(nthreads)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    marker(q)
    assert ag.overwrites == 0                                                         # no slot overwritten
    assert len(ag.seen) == nthreads * per and len(set(ag.seen)) == nthreads * per     # exactly once
    for t in range(nthreads):
        mine = [s & 0xFFFFFFFF for s in ag.seen if s >> 32 == t]
        assert mine == list(range(per))                                               # per-producer order
    deadline = time.monotonic() + 5          # the slot is retired just after its completion signal
    while q.read_index < q.write_index and time.monotonic() < deadline:
        time.sleep(0.001)
    assert q.read_index == q.write_index == nthreads * per + 1
    assert p.faults == []


def test_full_queue_waits_instead_of_overwriting(proc):
    q, ag, p = proc(size=4, start=False)           # processor created but not started: nothing consumes
    q._on_submit = None                            # (keep it from starting lazily)
    pkts = [kpacket(i).pack() for i in range(5)]
    for i in range(4):
        q.submit(pkts[i])
    blocked = threading.Thread(target=q.submit, args=(pkts[4],))
    blocked.start()
    time.sleep(0.2)
    assert blocked.is_alive()                      # waiting for space...
    assert q.write_index == 4                      # ...without reserving a slot it cannot have
    assert [q.slot_bytes(i) for i in range(4)] == pkts[:4]   # ...and without overwriting slot 0
    p.start()
    blocked.join(5)
    assert not blocked.is_alive()
    marker(q)
    assert ag.seen == [0, 1, 2, 3, 4]


def test_slow_consumer_throttles_producer(proc):
    q, ag, p = proc(size=4, delay=0.01)
    t0 = time.perf_counter()
    for i in range(20):
        dispatch(q, i)                     # only 4 slots: the producer must wait for the slow consumer
    assert time.perf_counter() - t0 > 0.1
    marker(q)
    assert ag.seen == list(range(20))


def test_queue_full_timeout_leaves_no_hole(proc):
    q, ag, p = proc(size=2, start=False)
    q._on_submit = None
    dispatch(q, 0)
    dispatch(q, 1)
    t0 = time.perf_counter()
    with pytest.raises(A.QueueFullTimeout):
        dispatch(q, 2, timeout=0.2)
    assert 0.18 < time.perf_counter() - t0 < 1.0
    assert q.write_index == 2                      # the timed-out producer reserved nothing
    p.start()
    dispatch(q, 3)
    marker(q)                                      # would hang on a hole at index 2
    assert ag.seen == [0, 1, 3]


def test_lazy_start_and_packet_validation():
    q = A.Queue(8)
    p = A.PacketProcessor(q, FakeAgent())
    assert not p.running
    with pytest.raises(ValueError):
        q.submit(b"\x01" + bytes(63))              # header type INVALID cannot be published
    with pytest.raises(ValueError):
        q.submit(bytes(32))
    assert not p.running and q.write_index == 0
    marker(q)                                      # the first submit started the consumer
    assert p.running
    assert p.stop(5) and not p.running


def test_barrier_and_or_out_of_order(proc):
    q, ag, p = proc()
    q2, ag2, p2 = proc(size=8)
    s1, s2 = A.Signal(1), A.Signal(1)
    and_done, or_done = A.Signal(1), A.Signal(1)
    q.submit(A.BarrierPacket((s1.handle, 0, s2.handle), and_done.handle, kind=P.TYPE_BARRIER_AND))
    dispatch(q, 42)                                # must not run before the barrier-AND completed
    q2.submit(A.BarrierPacket((0, s1.handle, s2.handle), or_done.handle, kind=P.TYPE_BARRIER_OR))
    time.sleep(0.1)
    assert and_done.load() == 1 and or_done.load() == 1 and ag.seen == []
    s2.store(0)                                    # the second dependency completes first
    assert or_done.wait(A.COND_EQ, 0, 5)
    time.sleep(0.1)
    assert and_done.load() == 1 and ag.seen == []
    s1.subtract(1)
    assert and_done.wait(A.COND_EQ, 0, 5)
    marker(q)
    assert ag.seen == [42]
    # no dependencies (all handles 0) = satisfied at once, for both kinds
    e1, e2 = A.Signal(1), A.Signal(1)
    q.submit(A.BarrierPacket((0, 0), e1.handle, kind=P.TYPE_BARRIER_AND))
    q.submit(A.BarrierPacket((), e2.handle, kind=P.TYPE_BARRIER_OR))
    assert e1.wait(A.COND_EQ, 0, 5) and e2.wait(A.COND_EQ, 0, 5)
    assert and_done.error is None and or_done.error is None and p.faults == [] and p2.faults == []


def test_barrier_or_wakes_on_any_signal_promptly(proc):
    q, ag, p = proc()
    deps = [A.Signal(1) for _ in range(5)]
    done = A.Signal(1)
    q.submit(A.BarrierPacket(tuple(s.handle for s in deps), done.handle, kind=P.TYPE_BARRIER_OR))
    time.sleep(0.05)
    t0 = time.perf_counter()
    deps[3].store(0)
    assert done.wait(A.COND_EQ, 0, 5)
    assert time.perf_counter() - t0 < 0.5


def test_barrier_value_packet(proc):
    q, ag, p = proc()
    s, done = A.Signal(0x15), A.Signal(1)
    q.submit(A.BarrierValuePacket(s.handle, 0x30, 0xF0, P.BV_EQ, done.handle))   # (value & 0xF0) == 0x30
    dispatch(q, 7)
    time.sleep(0.05)
    s.store(0x2F)
    time.sleep(0.05)
    assert done.load() == 1 and ag.seen == []
    s.store(0x3A)
    assert done.wait(A.COND_EQ, 0, 5)
    marker(q)
    assert ag.seen == [7]
    lt = A.Signal(1)
    q.submit(A.BarrierValuePacket(s.handle, 0x40, -1, P.BV_LT, lt.handle))
    assert lt.wait(A.COND_EQ, 0, 5)


def test_fault_recorded_and_next_packet_runs(proc):
    q, ag, p = proc()
    bad, coded, good = A.Signal(1), A.Signal(1), A.Signal(1)
    dispatch(q, 1, bad, ko=0xBAD)
    dispatch(q, 2, coded, ko=0xC0DE)
    dispatch(q, 3, good)
    assert good.wait(A.COND_EQ, 0, 5) and bad.load() == 0 and coded.load() == 0
    assert isinstance(bad.error, RuntimeError) and bad.error_code == A.ERROR_EXCEPTION
    assert coded.error_code == 700                 # an error's own code goes to the signal's error word
    assert good.error is None and good.error_code == 0 and ag.seen == [3]
    assert [(f.index, f.signal, f.packet_type) for f in p.faults] == [(0, bad.handle, 2), (1, coded.handle, 2)]
    assert p.faults[0].packet.kernel_object == 0xBAD and "simulated fault" in p.faults[0].traceback
    assert p.running


def test_bad_packets_are_faults_not_crashes(proc):
    q, ag, p = proc()
    s_unknown_type, s_bad_dep, s_bad_agent = A.Signal(1), A.Signal(1), A.Signal(1)
    raw = bytearray(64)
    raw[0] = 7                                     # no such packet type
    raw[56:64] = s_unknown_type.handle.to_bytes(8, "little")
    q.submit(bytes(raw))
    q.submit(A.BarrierPacket((0xDEAD000,), s_bad_dep.handle))                 # not a signal
    q.submit(A.AgentDispatchPacket(0x7777, (0, 0, 0, 0), completion_signal=s_bad_agent.handle))
    dispatch(q, 9)
    marker(q)
    assert s_unknown_type.error_code == A.ERROR_INVALID_PACKET and s_unknown_type.load() == 0
    assert s_bad_dep.error_code == A.ERROR_INVALID_SIGNAL
    assert s_bad_agent.error_code == A.ERROR_INVALID_PACKET
    assert ag.seen == [9] and len(p.faults) == 3 and p.running


def test_agent_packets_and_raising_callback(proc):
    q, ag, p = proc()
    ag.mem[0:4] = b"\x01\x02\x03\x04"
    order = []
    cid1 = p.register_callback(lambda: order.append("cb1"))
    cid2 = p.register_callback(lambda: 1 / 0)
    cid3 = p.register_callback(lambda: order.append(bytes(ag.mem[100:104])))
    s_err, s_end = A.Signal(1), A.Signal(1)
    q.submit(A.AgentDispatchPacket(A.AGENT_COPY, (100, 0, 4, 0)))
    q.submit(A.AgentDispatchPacket(A.AGENT_CALLBACK, (cid1, 0, 0, 0)))
    q.submit(A.AgentDispatchPacket(A.AGENT_CALLBACK, (cid2, 0, 0, 0), completion_signal=s_err.handle))
    q.submit(A.AgentDispatchPacket(A.AGENT_FILL, (200, 0x1AB, 3, 2)))
    q.submit(A.AgentDispatchPacket(A.AGENT_NOP, (0, 0, 0, 0)))
    q.submit(A.AgentDispatchPacket(A.AGENT_CALLBACK, (cid3, 0, 0, 0), completion_signal=s_end.handle))
    assert s_end.wait(A.COND_EQ, 0, 5)
    assert order == ["cb1", b"\x01\x02\x03\x04"]          # the copy ran before the callback, in stream order
    assert isinstance(s_err.error, ZeroDivisionError) and s_err.error_code == A.ERROR_EXCEPTION
    assert bytes(ag.mem[200:206]) == b"\xab\x01" * 3
    assert len(p.faults) == 1 and isinstance(p.faults[0].error, ZeroDivisionError)
    # the same one-shot id again is an error (recorded), and the thread is still alive
    s_again = A.Signal(1)
    q.submit(A.AgentDispatchPacket(A.AGENT_CALLBACK, (cid1, 0, 0, 0), completion_signal=s_again.handle))
    assert s_again.wait(A.COND_EQ, 0, 5) and isinstance(s_again.error, A.PacketError) and p.running


def test_callback_raising_baseexception_does_not_kill_processor(proc):
    q, ag, p = proc()

    def die():
        raise SystemExit(3)
    s = A.Signal(1)
    q.submit(A.AgentDispatchPacket(A.AGENT_CALLBACK, (p.register_callback(die), 0, 0, 0), completion_signal=s.handle))
    dispatch(q, 5)
    marker(q)
    assert isinstance(s.error, SystemExit) and ag.seen == [5] and p.running


def test_fences_and_barrier_bit_recorded(proc):
    q, ag, p = proc()
    dispatch(q, 0)                                                            # 0x1502
    q.submit(kpacket(1, hdr=P.header(P.TYPE_KERNEL_DISPATCH, False, P.FENCE_AGENT, P.FENCE_NONE)).pack())
    q.submit(kpacket(2, hdr=P.header(P.TYPE_KERNEL_DISPATCH, True, P.FENCE_NONE, P.FENCE_AGENT)).pack())
    marker(q)
    assert p.fences[(2, 2)] >= 2 and p.fences[(1, 0)] == 1 and p.fences[(0, 1)] == 1
    assert p.stats["barrier_bit"] == 3 and p.stats["KernelDispatchPacket"] == 3     # + the marker barrier
    assert ag.fence_calls[:5] == [("acq", 2), ("rel", 2), ("acq", 1), ("rel", 1), ("acq", 2)]


def test_signal_wait_timeout_is_honoured_without_burning_cpu():
    s = A.Signal(5)
    for cond, val in ((A.COND_EQ, 0), (A.COND_NE, 5), (A.COND_LT, 5), (A.COND_GTE, 6)):
        t0 = time.perf_counter()
        assert s.wait(cond, val, 0.15) is False
        assert 0.15 <= time.perf_counter() - t0 < 1.5     # generous: a loaded machine oversleeps
    t0, c0 = time.perf_counter(), time.process_time()
    assert s.wait(A.COND_EQ, 0, 0.4) is False
    assert time.process_time() - c0 < 0.1          # slept, did not spin
    assert s.wait(A.COND_EQ, 0, 0) is False        # zero timeout: one check
    assert s.wait(A.COND_GTE, 5, 0) is True
    threading.Timer(0.05, lambda: s.store(0)).start()
    t0 = time.perf_counter()
    assert s.wait(A.COND_EQ, 0, 5)
    assert time.perf_counter() - t0 < 0.5
    with pytest.raises(ValueError):
        s.wait(9, 0, 0.1)


def test_signal_wait_sees_raw_stores():
    """A writer that bypasses the API (device code storing to the value word) is seen within the cap."""
    from pyhip.aql.native import lib
    s = A.Signal(1)
    threading.Timer(0.05, lambda: lib.pyhip_store_release_i64(s._mem.i64(8), 0)).start()
    t0 = time.perf_counter()
    assert s.wait(A.COND_EQ, 0, 2)
    assert time.perf_counter() - t0 < 0.2


def test_signal_atomics_under_contention():
    s = A.Signal(0)

    def work():
        for _ in range(5000):
            s.add(1)
    ts = [threading.Thread(target=work) for _ in range(8)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert s.load() == 40000
    assert s.cas(40000, 7) == 40000 and s.cas(40000, 8) == 7 and s.exchange(3) == 7 and s.load() == 3
    s.store_max(2)
    assert s.load() == 3
    s.store_max(10)
    assert s.load() == 10


def test_timestamps_and_pool_reuse_only_after_completion(proc):
    q, ag, p = proc()
    pool = A.SignalPool()
    s = pool.acquire()
    with pytest.raises(RuntimeError):
        pool.release(s)              # not completed yet: refusing protects in-flight packets
    with pytest.raises(RuntimeError):
        pool.release(A.Signal(0))    # not from this pool
    dispatch(q, 1, s)
    assert s.wait(A.COND_EQ, 0, 5)
    assert 0 < s.start_ns <= s.end_ns <= time.monotonic_ns()
    pool.release(s)
    with pytest.raises(RuntimeError):
        pool.release(s)              # twice
    s2 = pool.acquire()
    assert s2 is s and s.load() == 1 and s.start_ns == 0 and s.error is None and pool.outstanding == 1


def test_stop_drains_pending_work(proc):
    q, ag, p = proc(size=64, delay=0.001)
    for i in range(50):
        dispatch(q, i)
    assert p.stop(10)
    assert ag.seen == list(range(50))
    with pytest.raises(A.QueueClosed):
        dispatch(q, 99)


def test_stop_without_drain_cancels_blocked_work_no_hang(proc):
    q, ag, p = proc(size=4)
    never = A.Signal(1)
    bsig, ksig = A.Signal(1), A.Signal(1)
    ran = []
    q.submit(A.BarrierPacket((never.handle,), bsig.handle))           # blocks forever
    dispatch(q, 1, ksig)
    cid = p.register_callback(lambda: ran.append(1))
    q.submit(A.AgentDispatchPacket(A.AGENT_CALLBACK, (cid, 0, 0, 0)))
    dispatch(q, 2)
    errors = []

    def blocked_producer():                                            # the queue (size 4) is full
        try:
            dispatch(q, 3)
        except A.QueueClosed as exc:
            errors.append(exc)
    th = threading.Thread(target=blocked_producer)
    th.start()
    time.sleep(0.1)
    t0 = time.perf_counter()
    assert p.stop(5, drain=False)
    assert time.perf_counter() - t0 < 1.0
    th.join(2)
    assert not th.is_alive() and len(errors) == 1
    assert bsig.load() == 0 and bsig.error_code == A.ERROR_ABORTED and isinstance(bsig.error, A.Aborted)
    assert ksig.load() == 0 and ksig.error_code == A.ERROR_ABORTED
    assert ag.seen == [] and ran == [] and p.cancelled == [0, 1, 2, 3] and p.faults == []
    assert q.read_index == q.write_index == 4


def test_stop_with_drain_escalates_after_timeout(proc):
    q, ag, p = proc()
    never, bsig = A.Signal(1), A.Signal(1)
    dispatch(q, 1)
    q.submit(A.BarrierValuePacket(never.handle, 0, -1, P.BV_EQ, bsig.handle))
    t0 = time.perf_counter()
    assert p.stop(0.3)                              # drain gives up after 0.3 s, then cancels
    assert time.perf_counter() - t0 < 1.5
    assert ag.seen == [1] and bsig.load() == 0 and bsig.error_code == A.ERROR_ABORTED


def test_sleepers_are_woken_not_polled(proc):
    """Each wait below is entered after the spin budget, so it sleeps in the futex; without wake-ups every
    hand-off would cost the 20 ms sleep cap.  Judged by the median hand-off (a loaded machine delays some of
    them, not most): a woken sleeper takes about the 1 ms the other side sleeps, a polling one ~20 ms."""
    a, b = A.Signal(0), A.Signal(0)
    LIMIT = 0.008

    def pong():
        for i in range(1, 41):
            assert a.wait(A.COND_EQ, i, 5)
            time.sleep(0.001)
            b.store(i)
    th = threading.Thread(target=pong)
    th.start()
    laps = []
    for i in range(1, 41):                          # signal → signal
        t0 = time.perf_counter()
        time.sleep(0.001)
        a.store(i)
        assert b.wait(A.COND_EQ, i, 5)
        laps.append(time.perf_counter() - t0 - 0.001)
    th.join()
    assert statistics.median(laps) < LIMIT, sorted(laps)
    q, ag, p = proc(size=2, delay=0.001)
    laps = []
    for i in range(40):                             # doorbell → consumer, completion → waiter
        time.sleep(0.001)
        t0 = time.perf_counter()
        s = A.Signal(1)
        dispatch(q, i, s)
        assert s.wait(A.COND_EQ, 0, 5)
        laps.append(time.perf_counter() - t0)
    assert statistics.median(laps) < LIMIT, sorted(laps)
    t0 = time.perf_counter()
    for i in range(40):                             # retire → producer waiting on a full queue
        dispatch(q, i)
    marker(q)
    assert (time.perf_counter() - t0) / 40 < LIMIT
