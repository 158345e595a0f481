"""Kernel dispatches in native code (pyhip/emu/native/agent.py, native/engine/agent.h, native/aql_processor.c):
after a kernel ran once through the full path, its later dispatches from a queue run with no Python.  Each
test compares every result with numpy, and checks the native path actually took the dispatches (the
agent's counts) — and that what the full path guarantees still holds there: faults reported once with the
kernel named and the device usable after, the watchdog (changed after the kernel registered), unloading."""
import threading

import numpy as np
import pytest

import pyhip
from pyhip.aql import processor
from pyhip.emu import jit
from pyhip.errors import HipError
from pyhip.hip import hipError_t as E
from pyhip.runtime.context import runtime

import relkit

RNG = np.random.default_rng(24)
pytestmark = pytest.mark.skipif(not processor.NATIVE_LOOP, reason="PYHIP_NATIVE_AQL=0")


@pytest.fixture(scope="module")
def rel(tmp_path_factory):
    return relkit.load(tmp_path_factory)


def gpu():
    return runtime().device(0).backend.emulated_gpu


def agent_counts():
    return gpu().engine_stats().get("agent", {"dispatched": 0, "faults": 0})


def want(args, src, n):
    a0, a1, a2, _, shift, a5, a6, p7, a8, a9, a10, p11, a12, a13, a14 = args
    i = np.arange(n)
    return (src[i + shift] + np.float32(a0 + a8) + np.float32(a1 + a5 + a9 + a13) + np.float32(a2 + a6 + a10 + a14)
            + p7[i] * np.float32(0.5) + p11[i] * np.float32(0.25)).astype(np.float32)


def launch(rel, n, shift, dev, host, out_d, rng, stream=None):
    """tiny16 with random scalars over the device arrays ``dev``; returns its arguments over ``host``."""
    args = [int(rng.integers(-99, 99)), float(rng.normal()), int(rng.integers(-9, 9)), None, shift,
            float(rng.normal()), int(rng.integers(-9, 9)), None, int(rng.integers(-99, 99)), float(rng.normal()),
            int(rng.integers(-9, 9)), None, n, float(rng.normal()), int(rng.integers(-9, 9))]
    args[3], args[7], args[11] = dev
    kw = {} if stream is None else {"stream": stream}
    rel.kernel("tiny16")(-(-n // 64), 64, *args, out_d, **kw)
    args[3], args[7], args[11] = host
    return tuple(args)


def test_repeat_dispatches_run_natively_and_match_numpy(rel):
    n = 1000                                            # not a multiple of the block size
    src, p7, p11 = (RNG.normal(size=n + 64).astype(np.float32) for _ in range(3))
    src_d, p7_d, p11_d = pyhip.to_device(src), pyhip.to_device(p7), pyhip.to_device(p11)
    before = agent_counts()["dispatched"]
    for k in range(40):
        out_d = pyhip.to_device(np.full(n + 8, np.nan, np.float32))      # poisoned, tail included
        shift = int(RNG.integers(0, 64))
        args = launch(rel, n, shift, (src_d, p7_d, p11_d), (src, p7, p11), out_d, RNG)
        got = out_d.get()
        np.testing.assert_allclose(got[:n], want(args, src, n), rtol=1e-5, atol=1e-5)
        assert np.isnan(got[n:]).all(), f"launch {k} wrote past n"
        if k == 1:
            jit.settle()            # a small kernel's quick code compiles in the background from its 2nd launch
    assert agent_counts()["dispatched"] - before >= 30, agent_counts()


def test_a_fault_on_the_native_path_is_reported_once_and_the_device_recovers(rel):
    n = 64
    src = RNG.normal(size=2 * n).astype(np.float32)
    src_d = pyhip.to_device(src)
    out_d = pyhip.to_device(np.zeros(n, np.float32))
    for _ in range(3):                                  # registered, then taken natively
        launch(rel, n, 1, (src_d,) * 3, (src,) * 3, out_d, RNG)
    pyhip.synchronize()
    faults = agent_counts()["faults"]
    launch(rel, n, 1 << 28, (src_d,) * 3, (src,) * 3, out_d, RNG)          # 1 GiB past the source
    with pytest.raises(HipError) as ei:
        pyhip.synchronize()
    assert ei.value.code == E.hipErrorIllegalAddress
    assert "tiny16" in str(ei.value)
    assert agent_counts()["faults"] == faults + 1
    pyhip.synchronize()                                 # reported once
    args = launch(rel, n, 3, (src_d,) * 3, (src,) * 3, out_d, RNG)
    np.testing.assert_allclose(out_d.get(), want(args, src, n), rtol=1e-5, atol=1e-5)


def test_the_watchdog_set_after_the_kernel_registered_still_fires(rel):
    out = pyhip.empty(64, np.int32)
    busy = rel.kernel("busy")
    for _ in range(3):
        busy(1, 64, out, 10)
    pyhip.synchronize()
    acc = np.arange(64, dtype=np.int64)
    for k in range(10):
        acc = (acc * 1664525 + 1013904223 + k) & 0xFFFFFFFF
    assert (out.get().astype(np.int64) & 0xFFFFFFFF == acc).all()
    g = gpu()
    old, g.watchdog_steps = g.watchdog_steps, 1000
    try:
        busy(1, 64, out, 1 << 30)
        with pytest.raises(HipError) as ei:
            pyhip.synchronize()
        assert ei.value.code == E.hipErrorLaunchTimeOut
    finally:
        g.watchdog_steps = old
    busy(1, 64, out, 10)
    pyhip.synchronize()
    assert (out.get().astype(np.int64) & 0xFFFFFFFF == acc).all()


def test_unloading_a_module_takes_its_kernels_out_of_the_native_table(tmp_path):
    mod = pyhip.load(relkit.build(tmp_path))
    out = pyhip.empty(64, np.int32)
    k = mod.kernel("busy")
    for _ in range(3):
        k(1, 64, out, 5)
    pyhip.synchronize()
    kobj = k.function.kernel_object
    agent = gpu()._agent
    assert agent.registered(kobj)
    mod.unload()
    assert not agent.registered(kobj)


def test_the_agents_memory_table_follows_allocations_and_frees_while_kernels_run(rel):
    """The agent's memory table (native/engine/agent.h) takes each allocation added or removed as one change,
    in place or (while a dispatch holds it) in a copy: after random hipMalloc / hipFree, many while another
    thread's kernels run, it equals the memory's index, and kernels writing the newest buffers run natively
    with every result checked."""
    import pyhip.hip as hip

    n = 100
    src = RNG.normal(size=n + 64).astype(np.float32)
    src_d = pyhip.to_device(src)
    for _ in range(3):                                  # registered (after the compiler's tiers)
        launch(rel, n, 0, (src_d,) * 3, (src,) * 3, pyhip.empty(n, np.float32), RNG)
    pyhip.synchronize()
    agent, mem = gpu()._agent, gpu().memory
    stop, errors = threading.Event(), []

    def churn_kernels():
        try:
            s, out, busy = pyhip.Stream(), pyhip.empty(64, np.int32), rel.kernel("busy")
            while not stop.is_set():
                for _ in range(4):
                    busy(1, 64, out, 300, stream=s)
                s.synchronize()
        except Exception as exc:  # noqa: BLE001 - reported by the main thread
            errors.append(exc)

    def table_matches():
        with mem.lock:
            index, table = mem._index, agent.regions()
        return np.array_equal(table, np.stack([index.rows[0], index.rows[1], index.rows[3]], axis=1))

    assert table_matches()
    updates = dict(agent.table_updates)
    th = threading.Thread(target=churn_kernels)
    th.start()
    live = []
    try:
        for step in range(300):
            if live and RNG.random() < 0.45:
                assert hip.hipFree(live.pop(int(RNG.integers(len(live))))) == (E.hipSuccess,)
            else:
                err, ptr = hip.hipMalloc(int(RNG.integers(1, 200_000)))
                assert err == E.hipSuccess
                live.append(ptr)
            if step % 30 == 29:
                assert table_matches(), f"after step {step}"
    finally:
        stop.set()
        th.join(60)
    assert not errors and not th.is_alive(), errors
    assert table_matches()
    assert agent.table_updates["changed"] - updates["changed"] >= 300
    assert agent.table_updates["copied"] == updates["copied"]
    before = agent_counts()["dispatched"]
    for k in range(6):                                  # new allocations between the survivors
        out_d = pyhip.to_device(np.full(n + 8, np.nan, np.float32))
        args = launch(rel, n, k, (src_d,) * 3, (src,) * 3, out_d, RNG)
        got = out_d.get()
        np.testing.assert_allclose(got[:n], want(args, src, n), rtol=1e-5, atol=1e-5)
        assert np.isnan(got[n:]).all()
    assert agent_counts()["dispatched"] - before >= 6
    for ptr in live:
        assert hip.hipFree(ptr) == (E.hipSuccess,)
    assert table_matches()


def test_streams_from_threads_every_result_checked(rel):
    """4 threads, each on its own stream, 300 launches each, every output checked."""
    n, per = 200, 300
    src = RNG.normal(size=n + 64).astype(np.float32)
    src_d = pyhip.to_device(src)
    errors = []

    def worker(t):
        try:
            rng = np.random.default_rng(100 + t)
            s = pyhip.Stream()
            outs = [pyhip.to_device(np.full(n, np.nan, np.float32)) for _ in range(8)]
            for k in range(per):
                out_d = outs[k % 8]
                args = launch(rel, n, k % 64, (src_d,) * 3, (src,) * 3, out_d, rng, stream=s)
                s.synchronize()
                got = out_d.get()
                w = want(args, src, n)
                if not np.allclose(got, w, rtol=1e-5, atol=1e-5):
                    errors.append((t, k))
                    return
        except Exception as exc:  # noqa: BLE001
            errors.append((t, repr(exc)))

    threads = [threading.Thread(target=worker, args=(t,)) for t in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors, errors[:5]


def test_no_grant_while_one_is_taken_back(rel):
    """The race the test above once caught (a launch published natively after its grant was taken back, so
    the device armed with no grant and the stream's synchronize returned before its kernel ran): while
    another stream's submit takes a grant back (Stream.disable_fast), the stream that held it must not get
    it again — an entry made then would read the new launch generation and outlive the grant.  The
    interleaving is forced from inside the revocation (the C ABI's invalidate hook runs there)."""
    dev = runtime().device(0)
    s1, s2 = pyhip.Stream(), pyhip.Stream()
    out = pyhip.empty(64, np.int32)
    busy = rel.kernel("busy")
    pyhip.synchronize()
    busy(1, 64, out, 3, stream=s1)
    s1.synchronize()
    busy(1, 64, out, 3, stream=s1)                      # s1 now holds the grant (its entry was made)
    assert dev.fast_stream is s1._stream
    seen = []
    old, dev.fast_invalidate = dev.fast_invalidate, lambda st: seen.append(s1._stream.fast_state())
    try:
        busy(1, 64, out, 3, stream=s2)                  # s2's submit takes s1's grant back
    finally:
        dev.fast_invalidate = old
    pyhip.synchronize()
    assert seen == [None]
    assert dev.fast_stream is not s1._stream
    acc = np.arange(64, dtype=np.int64)
    for k in range(3):
        acc = (acc * 1664525 + 1013904223 + k) & 0xFFFFFFFF
    assert (out.get().astype(np.int64) & 0xFFFFFFFF == acc).all()


@pytest.mark.parametrize("other_stream", [False, True])
def test_a_synchronize_after_native_launches_waits_for_work_through_python(rel, tmp_path, other_stream):
    """Armed (only native launches since an idle point), then a long kernel launched through Python — on the
    same stream (a kernel of a module loaded just now: its first launch) or on another stream: the device
    synchronize must wait for it too (the result is read without a synchronizing copy)."""
    out = pyhip.empty(64, np.int32)
    out2 = pyhip.to_device(np.full(64, -1, np.int32))
    busy = rel.kernel("busy")
    for _ in range(3):
        busy(1, 64, out, 3)
        pyhip.synchronize()
    assert runtime().device(0)._armed is not None
    fresh = pyhip.load(relkit.build(tmp_path)).kernel("busy")
    fresh(1, 64, out2, 100_000, **({"stream": pyhip.Stream()} if other_stream else {}))
    pyhip.synchronize()
    got = np.frombuffer(gpu().memory.read(out2.__hip_pointer__(), 256), np.int32)   # no synchronizing copy
    a = np.arange(64, dtype=np.uint64)
    for k in range(100_000):
        a = (a * 1664525 + 1013904223 + k) & 0xFFFFFFFF
    assert (got.astype(np.int64) & 0xFFFFFFFF == a.astype(np.int64)).all()


@pytest.mark.parametrize("idle", [False, True], ids=["queued", "idle"])
def test_device_copies_and_fills_run_natively_and_match_numpy(idle):
    """Device-to-device copies (overlapping ones included), 8/16/32-bit fills, copies to and from pageable
    numpy buffers: every result compared with numpy, the tails past each range untouched.  Queued (the device disarmed before each call): the packets
    were finished by the native loop (the Python path's own count of agent-dispatch packets does not move).
    Idle (the device armed: runtime/idlecopy.py): done by the calling thread, no packet at all, and the device
    is still armed after each."""
    import pyhip.hip as hip
    from pyhip.hip import hipMemcpyKind as K
    rng = np.random.default_rng(7)
    n = 70_001
    host = rng.integers(0, 256, size=n + 64, dtype=np.uint8)
    src, dst = pyhip.to_device(host), pyhip.to_device(np.zeros(n + 64, np.uint8))
    pyhip.synchronize()
    dev = runtime().device(0)
    proc = dev.null_stream._q().processor
    python_before = proc._stats["AgentDispatchPacket"]
    total_before = proc.stats["AgentDispatchPacket"]
    mem = gpu().memory
    s, d = src.__hip_pointer__(), dst.__hip_pointer__()
    want = np.zeros(n + 64, np.uint8)

    def before():
        if idle:
            assert dev._armed is not None
        else:
            dev.disarm_sync()
    for size in (1, 3, 255, 4097, n):
        off = int(rng.integers(0, 32))
        before()
        assert hip.hipMemcpy(d + off, s + off, size, K.hipMemcpyDeviceToDevice)[0] == 0
        want[off:off + size] = host[off:off + size]
        np.testing.assert_array_equal(np.frombuffer(mem.read(d, n + 64), np.uint8), want)
    before()
    assert hip.hipMemcpy(d + 8, d, 1000, K.hipMemcpyDeviceToDevice)[0] == 0           # overlapping
    want[8:1008] = want[0:1000].copy()
    np.testing.assert_array_equal(np.frombuffer(mem.read(d, n + 64), np.uint8), want)
    for fn, dt in ((hip.hipMemsetD8, np.uint8), (hip.hipMemsetD16, np.uint16), (hip.hipMemsetD32, np.uint32)):
        width = np.dtype(dt).itemsize
        count = int(rng.integers(1, (n - 64) // width))
        value = int(rng.integers(0, min(np.iinfo(dt).max, 2**31 - 1)))
        off = int(rng.integers(0, 16)) * width
        before()
        assert fn(d + off, value, count)[0] == 0
        want[off:off + count * width] = np.full(count, value, dt).view(np.uint8)
        np.testing.assert_array_equal(np.frombuffer(mem.read(d, n + 64), np.uint8), want)
    for size in (1, 77, 5000):                      # pageable host memory: a native memmove either way
        off = int(rng.integers(0, 32))
        h = rng.integers(0, 256, size, dtype=np.uint8)
        before()
        assert hip.hipMemcpy(d + off, h, size, K.hipMemcpyHostToDevice)[0] == 0
        want[off:off + size] = h
        np.testing.assert_array_equal(np.frombuffer(mem.read(d, n + 64), np.uint8), want)
        out = np.zeros(size + 8, np.uint8)
        before()
        assert hip.hipMemcpy(out, d + off, size, K.hipMemcpyDeviceToHost)[0] == 0
        np.testing.assert_array_equal(out[:size], want[off:off + size])
        assert not out[size:].any()
    if idle:
        assert dev._armed is not None and proc.stats["AgentDispatchPacket"] == total_before
    else:
        assert proc.stats["AgentDispatchPacket"] - total_before >= 15
    assert proc._stats["AgentDispatchPacket"] == python_before


def test_idle_copies_wait_for_native_launches(rel):
    import pyhip.hip as hip

    """With the device armed, a copy back right after native launches (no synchronize) waits for them and is
    done by the calling thread: every result compared with numpy, and no copy packet was queued."""
    import pyhip.hip as hip
    n = 333
    src, p7, p11 = (RNG.normal(size=n + 64).astype(np.float32) for _ in range(3))
    dev_arrays = tuple(pyhip.to_device(a) for a in (src, p7, p11))
    out_d = pyhip.to_device(np.zeros(n, np.float32))
    rng = np.random.default_rng(5)
    for _ in range(2):                                  # the full path, then a native entry
        launch(rel, n, 1, dev_arrays, (src, p7, p11), out_d, rng)
    pyhip.synchronize()
    dev = runtime().device(0)
    proc = dev.null_stream._q().processor
    copies = proc.stats["AgentDispatchPacket"]
    assert dev._armed is not None
    for k in range(30):
        args = launch(rel, n, k % 64, dev_arrays, (src, p7, p11), out_d, rng)
        got = np.empty(n, np.float32)
        assert hip.hipMemcpy(got, out_d.__hip_pointer__(), 4 * n, hip.hipMemcpyKind.hipMemcpyDeviceToHost)[0] == 0
        np.testing.assert_allclose(got, want(args, src, n), rtol=1e-5, atol=1e-5, err_msg=f"launch {k}")
    assert dev._armed is not None and proc.stats["AgentDispatchPacket"] == copies      # no copy was queued


def test_events_on_an_idle_device_complete_at_once_and_wait_for_native_launches(rel):
    """An event recorded on an armed, idle device is complete at once with no packet queued; one recorded
    after native launches still in flight completes after them (their output is in memory when its
    synchronize returns: read without any other synchronize)."""
    from pyhip.runtime.event import Event
    n = 777
    src, p7, p11 = (RNG.normal(size=n + 64).astype(np.float32) for _ in range(3))
    dev_arrays = tuple(pyhip.to_device(a) for a in (src, p7, p11))
    out_d = pyhip.to_device(np.zeros(n, np.float32))
    rng = np.random.default_rng(9)
    for _ in range(2):
        launch(rel, n, 2, dev_arrays, (src, p7, p11), out_d, rng)
    pyhip.synchronize()
    dev = runtime().device(0)
    st = dev.null_stream
    proc = st._q().processor
    before = proc.stats["BarrierPacket"]
    e1 = Event()
    e1.record(st)
    assert e1.query() and proc.stats["BarrierPacket"] == before and dev._armed is not None
    for k in range(20):
        args = launch(rel, n, k, dev_arrays, (src, p7, p11), out_d, rng)
        e2 = Event()
        e2.record(st)
        e2.synchronize()
        got = np.frombuffer(gpu().memory.read(out_d.__hip_pointer__(), 4 * n), np.float32)
        np.testing.assert_allclose(got, want(args, src, n), rtol=1e-5, atol=1e-5, err_msg=f"launch {k}")
    assert e1.elapsed_ms(e2) >= 0


def test_idle_records_of_one_event_restamp_its_own_signal_and_queued_ones_are_not_reused():
    """Idle records of one event in a row reuse its complete signal, stamped again each time (a record after
    another event's is not earlier than it); a queued record in between is never restamped, and the idle record
    after it starts a signal of its own."""
    from pyhip.runtime.event import Event
    pyhip.synchronize()
    dev = runtime().device(0)
    st = dev.null_stream
    a, b = Event(), Event()
    a.record(st)
    first = a.command
    b.record(st)
    a.record(st)
    assert a.command is first and a.query()
    assert b.elapsed_ms(a) >= 0 and a.elapsed_ms(b) <= 0
    dev.disarm_sync()                                   # queued: a marker packet of the stream
    a.record(st)
    queued = a.command
    assert queued is not first
    a.synchronize()
    stamp = queued.signal.end_time()
    pyhip.synchronize()
    assert dev._armed is not None
    a.record(st)
    assert a.command is not queued and a.command is not first and a.query()
    assert queued.signal.end_time() == stamp            # the queued record's signal was left alone
    assert a.elapsed_ms(a) == 0 and b.elapsed_ms(a) >= 0


def test_idle_copy_fast_paths_keep_hippython_checks_and_report_bad_ranges():
    """hipMemcpy / hipMemset (and their Async forms) answered before argument binding still refuse what hip-python refuses (a plain int
    kind, a value out of a C int's range) and report a range past an allocation, leaving memory as it was;
    good calls match numpy at unaligned offsets and sizes."""
    import pyhip.hip as hip
    from pyhip.hip import hipMemcpyKind as K
    rng = np.random.default_rng(11)
    n = 1000
    err, d = hip.hipMalloc(n)
    assert err == E.hipSuccess
    host = rng.integers(0, 256, n, dtype=np.uint8)
    pyhip.synchronize()
    dev = runtime().device(0)
    assert dev._armed is not None
    assert hip.hipMemcpy(d, host, n, K.hipMemcpyHostToDevice)[0] == E.hipSuccess
    with pytest.raises(TypeError):
        hip.hipMemcpy(d, host, n, 1)
    with pytest.raises(OverflowError):
        hip.hipMemset(d, 1 << 31, 8)
    assert hip.hipMemcpy(int(d) + 7, host, n, K.hipMemcpyHostToDevice)[0] != E.hipSuccess     # 7 bytes past the end
    assert hip.hipMemset(int(d) + n - 3, 0, 4)[0] != E.hipSuccess
    out = np.full(n + 5, 0xEE, np.uint8)
    assert hip.hipMemcpy(out, d, n, K.hipMemcpyDeviceToHost)[0] == E.hipSuccess
    np.testing.assert_array_equal(out[:n], host)
    assert (out[n:] == 0xEE).all()
    off, size, value = int(rng.integers(1, 50)), int(rng.integers(100, 900)), int(rng.integers(-128, 128))
    assert hip.hipMemset(int(d) + off, value, size)[0] == E.hipSuccess
    want = host.copy()
    want[off:off + size] = value & 0xFF
    assert hip.hipMemcpy(out, d, n, K.hipMemcpyDeviceToHost)[0] == E.hipSuccess
    np.testing.assert_array_equal(out[:n], want)
    with pytest.raises(TypeError):
        hip.hipMemcpyAsync(out, d, n, 2, None)
    off, size, value = int(rng.integers(1, 50)), int(rng.integers(100, 900)), int(rng.integers(0, 256))
    assert hip.hipMemsetAsync(int(d) + off, value, size, None)[0] == E.hipSuccess
    want[off:off + size] = value
    out[:] = 0xEE
    assert hip.hipMemcpyAsync(out, d, n, K.hipMemcpyDeviceToHost, None)[0] == E.hipSuccess
    assert hip.hipStreamSynchronize(None)[0] == E.hipSuccess
    np.testing.assert_array_equal(out[:n], want)
    assert (out[n:] == 0xEE).all()
    assert dev._armed is not None
    assert hip.hipFree(d)[0] == E.hipSuccess
