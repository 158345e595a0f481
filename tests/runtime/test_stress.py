"""Concurrency stress through the Python runtime: 8 host threads × 1,000 launches, four threads on private
streams and four sharing two streams, with events recorded every 100 launches and waited for by another
thread's stream.  Each launch is a kernel that appends its sequence number to its stream's log (position
from an atomic counter) and counts it in a global table: the test proves no packet was lost or run twice,
and that every stream ran each producer's launches in submission order."""
import threading

import numpy as np
import pytest

import pyhip
import pyhip.hip as hip
from pyhip.hip import hipError_t as E

import relkit

THREADS, PER_THREAD = 8, 1000


@pytest.fixture(scope="module")
def rel(tmp_path_factory):
    return relkit.load(tmp_path_factory)


def test_eight_threads_thousand_launches_each(rel):
    record = rel.kernel("record")
    streams = [hip.hipStreamCreate()[1] for _ in range(4)] + [hip.hipStreamCreateWithFlags(1)[1] for _ in range(2)]
    stream_of = [streams[t] if t < 4 else streams[4 + (t - 4) // 2] for t in range(THREADS)]
    logs = {id(s): pyhip.to_device(np.full(THREADS * PER_THREAD, -1, np.int32)) for s in streams}
    counters = {id(s): pyhip.to_device(np.zeros(1, np.int32)) for s in streams}
    seen = pyhip.to_device(np.zeros(THREADS * PER_THREAD, np.int32))
    errors = []

    def worker(t):
        try:
            s = stream_of[t]
            other = stream_of[(t + 1) % THREADS]
            for i in range(PER_THREAD):
                record(1, 64, logs[id(s)], counters[id(s)], seen, t * PER_THREAD + i, stream=s)
                if i % 100 == 99:
                    ev = hip.hipEventCreate()[1]
                    assert hip.hipEventRecord(ev, s) == (E.hipSuccess,)
                    assert hip.hipStreamWaitEvent(other, ev, 0) == (E.hipSuccess,)
                    assert hip.hipEventDestroy(ev) == (E.hipSuccess,)
        except BaseException as exc:  # noqa: BLE001 - reported by the main thread
            errors.append(exc)

    ts = [threading.Thread(target=worker, args=(t,)) for t in range(THREADS)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(600)
    assert not errors and not any(t.is_alive() for t in ts), errors
    pyhip.synchronize()
    assert np.array_equal(seen.get(), np.ones(THREADS * PER_THREAD, np.int32))   # 0 lost, 0 duplicated
    for s in streams:
        n = int(counters[id(s)].get()[0])
        log = logs[id(s)].get()[:n]
        producers = [t for t in range(THREADS) if stream_of[t] is s]
        assert n == PER_THREAD * len(producers)
        for t in producers:                                   # each producer's launches in its order
            mine = log[(log >= t * PER_THREAD) & (log < (t + 1) * PER_THREAD)]
            assert np.array_equal(mine, t * PER_THREAD + np.arange(PER_THREAD))
    for s in streams:
        assert hip.hipStreamDestroy(s) == (E.hipSuccess,)


def test_event_destroyed_while_a_stream_still_waits_for_it(rel):
    """hipStreamWaitEvent then hipEventDestroy at once (what the stress programs do): the waiting stream's
    barrier packet must keep the event's signal alive until it ran — here the waiting stream is held back by
    a spinning kernel while the recording stream completes and forgets its commands (found by the C ABI
    stress: 'dependency is not a live signal')."""
    import gc

    from conftest import BIN

    math_mod = pyhip.load(BIN / "hipcc52/math-gfx90a.hsaco")
    s1, s2 = hip.hipStreamCreateWithFlags(1)[1], hip.hipStreamCreateWithFlags(1)[1]
    flag, out = pyhip.to_device(np.zeros(1, np.int32)), pyhip.empty(64, np.int32)
    math_mod.kernel("spin")(1, 64, flag, out, stream=s2)           # s2 cannot reach its barriers yet
    log, counter, seen = (pyhip.to_device(np.zeros(4, np.int32)) for _ in range(3))
    record = rel.kernel("record")
    for _ in range(3):
        ev = hip.hipEventCreate()[1]
        record(1, 64, log, counter, seen, 1, stream=s1)
        assert hip.hipEventRecord(ev, s1) == (E.hipSuccess,)
        assert hip.hipStreamWaitEvent(s2, ev, 0) == (E.hipSuccess,)
        assert hip.hipEventDestroy(ev) == (E.hipSuccess,)
        del ev
    assert hip.hipStreamSynchronize(s1) == (E.hipSuccess,)
    for _ in range(70):                                              # s1 forgets its completed commands
        hip.hipStreamAddCallback(s1, lambda *a: None, None, 0)
    assert hip.hipStreamSynchronize(s1) == (E.hipSuccess,)
    gc.collect()
    record(1, 64, log, counter, seen, 2, stream=s2)
    flag.view()[0] = 1
    assert hip.hipStreamSynchronize(s2) == (E.hipSuccess,)
    assert seen.get().tolist() == [0, 3, 1, 0]
    for s in (s1, s2):
        assert hip.hipStreamDestroy(s) == (E.hipSuccess,)
