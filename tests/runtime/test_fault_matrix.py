"""Faults and stalls at the runtime level (pyhip / pyhip.hip), one test each, every one followed by a correct
launch on the same device: misaligned accesses (loads/stores exact, atomics fault), scratch overflow, an
exception in a host callback, waits that time out while a kernel runs, and a queue kept full by a slow
consumer (producers wait, nothing is lost)."""
import threading
import time

import numpy as np
import pytest

import pyhip
import pyhip.hip as hip
from pyhip.errors import HipError
from pyhip.hip import hipError_t as E
from pyhip.runtime.context import runtime

import relkit
from conftest import BIN

RNG = np.random.default_rng(11)


@pytest.fixture(scope="module")
def rel(tmp_path_factory):
    return relkit.load(tmp_path_factory)


@pytest.fixture
def basic():
    pyhip.set_device(0)
    return pyhip.load(BIN / "hipcc52/basic-gfx90a.hsaco")


def _expect(fn, code):
    with pytest.raises(HipError) as ei:
        fn()
        pyhip.synchronize()
    assert ei.value.code == code, ei.value
    return ei.value


def _still_usable(basic):
    n = 517
    x = pyhip.to_device(np.arange(n, dtype=np.int32))
    basic.kernel("scale<int>")((n + 255) // 256, 256, x, 3, n)
    runtime().device().null_stream.synchronize(timeout=60)     # not the device: a stream may still spin
    assert np.array_equal(x.get(), np.arange(n) * 3)


@pytest.mark.parametrize("shift", [1, 2, 3])
def test_misaligned_loads_and_stores_are_exact(basic, shift):
    # HSA runs GFX9 in unaligned mode: dword loads/stores at any byte address read/write those bytes
    n = 300
    raw = RNG.integers(0, 256, 4 * n + 8, dtype=np.uint8)
    buf = pyhip.to_device(raw)
    basic.kernel("scale<int>")(2, 256, int(buf.ptr) + shift, 7, n)
    pyhip.synchronize()
    want = raw.copy()
    want[shift:shift + 4 * n] = (raw[shift:shift + 4 * n].view(np.int32) * 7).view(np.uint8)
    assert np.array_equal(buf.get(), want)


def test_misaligned_atomic_faults_and_device_stays_usable(rel, basic):
    buf = pyhip.to_device(np.zeros(4, np.int32))
    base = int(buf.ptr)
    err = _expect(lambda: rel.kernel("atomic_at")(1, 64, base + 2, 5), E.hipErrorIllegalAddress)
    assert err.kernel and "atomic_at" in err.kernel and err.address == base + 2 and err.pc is not None
    assert "misaligned atomic" in str(err) and err.wave == 0 and err.lane == 0
    rel.kernel("atomic_at")(1, 64, base + 4, 5)
    pyhip.synchronize()
    assert buf.get().tolist() == [0, 5, 0, 0]
    _still_usable(basic)


def test_scratch_overflow_faults_with_the_address(rel, basic):
    n = 200
    idx = RNG.integers(0, 32, n).astype(np.int32)
    out = pyhip.to_device(np.full(n, -1, np.int32))
    rel.kernel("scratch_index")(2, 128, pyhip.to_device(idx), out, n)
    pyhip.synchronize()
    assert np.array_equal(out.get(), idx * 3 + np.arange(n))          # in range: exact
    for bad in (1 << 20, -70000):
        idx2 = idx.copy()
        idx2[137] = bad
        err = _expect(lambda: rel.kernel("scratch_index")(2, 128, pyhip.to_device(idx2), out, n),
                      E.hipErrorIllegalAddress)
        assert "scratch" in str(err) and "scratch_index" in err.kernel and err.address is not None
        # work-item 137 = workgroup 1, wave 0, lane 9
        assert err.workgroup == (1, 0, 0) and err.wave == 0 and err.lane == 9, err
    _still_usable(basic)


def test_exception_in_host_callback_is_reported_and_stream_goes_on(basic):
    s = hip.hipStreamCreate()[1]
    order = []

    def good(stream, status, tag):
        order.append(tag)

    def bad(_):
        order.append("bad")
        raise RuntimeError("callback failed")

    x = pyhip.to_device(np.arange(64, dtype=np.int32))
    assert hip.hipStreamAddCallback(s, good, "first", 0) == (E.hipSuccess,)
    assert hip.hipLaunchHostFunc(s, bad, None) == (E.hipSuccess,)
    f = basic._module.function("scale<int>")
    assert hip.hipModuleLaunchKernel(f, 1, 1, 1, 64, 1, 1, 0, s, [x, 2, 64], None) == (E.hipSuccess,)
    assert hip.hipStreamAddCallback(s, good, "after", 0) == (E.hipSuccess,)
    err = hip.hipStreamSynchronize(s)
    assert err[0] == E.hipErrorLaunchFailure
    assert "callback failed" in str(hip.last_exception())
    assert order == ["first", "bad", "after"]                      # in stream order, nothing skipped
    assert np.array_equal(x.get(), np.arange(64) * 2)
    assert hip.hipStreamSynchronize(s) == (E.hipSuccess,)          # reported once
    assert hip.hipStreamAddCallback(s, good, "x", 1)[0] == E.hipErrorInvalidValue
    assert hip.hipStreamDestroy(s) == (E.hipSuccess,)
    _still_usable(basic)


def test_waits_time_out_while_a_kernel_runs(basic):
    math_mod = pyhip.load(BIN / "hipcc52/math-gfx90a.hsaco")
    gpu = runtime().device().backend.emulated_gpu
    old, gpu.watchdog_steps = gpu.watchdog_steps, 2_000_000
    try:
        s = pyhip.Stream(non_blocking=True)
        out = pyhip.empty(64, np.int32)
        # a first run with the flag up compiles the kernel (the compiled engine), so the timed one starts at once
        flag = pyhip.to_device(np.ones(1, np.int32))
        math_mod.kernel("spin")(1, 64, flag, out, stream=s)
        s.synchronize()
        flag.view()[0] = 0
        math_mod.kernel("spin")(1, 64, flag, out, stream=s)
        ev = hip.hipEventCreate()[1]
        assert hip.hipEventRecord(ev, s._stream) == (E.hipSuccess,)
        t0 = time.perf_counter()
        with pytest.raises(HipError) as ei:
            s._stream.synchronize(timeout=0.3)
        waited = time.perf_counter() - t0
        assert ei.value.code == E.hipErrorLaunchTimeOut and 0.25 < waited < 5
        assert hip.hipEventQuery(ev) == (E.hipErrorNotReady,)
        assert hip.hipStreamQuery(s._stream) == (E.hipErrorNotReady,)
        _still_usable(basic)                                       # the null stream does not wait for it
        flag.view()[0] = 1
        s.synchronize()
        assert hip.hipEventQuery(ev) == (E.hipSuccess,) and (out.get() > 0).all()
    finally:
        gpu.watchdog_steps = old


def test_queue_kept_full_by_a_slow_consumer_loses_nothing(rel):
    """1,500 launches behind a host function that blocks the stream: more than the 1,024 queue slots, so
    the producer must wait for space (never overwrite a slot); once the consumer moves again every launch
    runs exactly once, in order."""
    n = 1500
    log, counter, seen = pyhip.to_device(np.full(n, -1, np.int32)), pyhip.to_device(np.zeros(1, np.int32)), \
        pyhip.to_device(np.zeros(n, np.int32))
    s = pyhip.Stream(non_blocking=True)
    gate = threading.Event()
    assert hip.hipLaunchHostFunc(s._stream, lambda _: gate.wait(120), None) == (E.hipSuccess,)
    q = s._stream._q().queue

    def produce():
        for i in range(n):
            rel.kernel("record")(1, 64, log, counter, seen, i, stream=s)

    t = threading.Thread(target=produce)
    t.start()
    deadline = time.monotonic() + 60
    while q.write_index - q.read_index < q.size and time.monotonic() < deadline:
        time.sleep(0.01)
    full = q.write_index - q.read_index
    time.sleep(0.2)
    stuck = t.is_alive() and q.write_index - q.read_index == q.size     # the producer waits, nothing more
    gate.set()
    t.join(300)
    assert full == q.size and stuck and not t.is_alive()
    s.synchronize()
    assert counter.get()[0] == n
    assert np.array_equal(seen.get(), np.ones(n, np.int32))       # none lost, none run twice
    assert np.array_equal(log.get(), np.arange(n))                 # in stream order
