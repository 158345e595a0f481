"""Streams and events on AQL: null-stream rules, events with timestamps, hipStreamWaitEvent, per-thread
streams, several host threads and two devices, the Pythonic context managers, registration handles."""
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pytest

import pyhip
import pyhip.hip as hip
from pyhip.hip import hipError_t as E
from pyhip.runtime.context import runtime

from conftest import BIN, fixture_path, fixture_files


def ok(ret):
    assert ret[0] == E.hipSuccess, ret
    return ret[1] if len(ret) == 2 else ret[1:]


@pytest.fixture
def mods():
    pyhip.set_device(0)
    return pyhip.load(BIN / "hipcc52/math-gfx90a.hsaco"), pyhip.load(BIN / "hipcc52/basic-gfx90a.hsaco")


def _spinner(math_mod, stream):
    runtime().device().backend.emulated_gpu.watchdog_steps = 2_000_000      # a forgotten release ends in ~1 min
    flag = pyhip.to_device(np.zeros(1, np.int32))
    out = pyhip.empty(64, np.int32)
    math_mod.kernel("spin")(1, 64, flag, out, stream=stream)
    return flag


def _release(flag):
    flag.view()[0] = 1            # a host write into device memory the spinning kernel polls


def test_null_stream_waits_for_blocking_streams_only(mods):
    math_mod, basic = mods
    x = pyhip.to_device(np.arange(64, dtype=np.int32))
    nb = pyhip.Stream(non_blocking=True)
    flag = _spinner(math_mod, nb)
    basic.kernel("scale<int>")(1, 64, x, 2, 64)          # null stream: must not wait for the non-blocking one
    t0 = time.perf_counter()
    runtime().device().null_stream.synchronize(timeout=20)
    assert time.perf_counter() - t0 < 10 and not nb.query()
    assert np.array_equal(x.get(), np.arange(64) * 2)
    _release(flag)
    nb.synchronize()
    blocking = pyhip.Stream()
    flag = _spinner(math_mod, blocking)
    basic.kernel("scale<int>")(1, 64, x, 3, 64)          # null stream: waits for the blocking stream
    time.sleep(0.3)
    assert not runtime().device().null_stream.query()
    assert np.array_equal(x.view(), np.arange(64) * 2)    # not run yet
    _release(flag)
    pyhip.synchronize()
    assert np.array_equal(x.get(), np.arange(64) * 6)


def test_events_timing_and_wait_event(mods):
    math_mod, basic = mods
    s1, s2 = ok(hip.hipStreamCreate()), ok(hip.hipStreamCreateWithFlags(1))
    start, stop, mark = ok(hip.hipEventCreate()), ok(hip.hipEventCreate()), ok(hip.hipEventCreateWithFlags(0))
    x = pyhip.to_device(np.ones(64, np.int32))     # before the spinner: the null stream would wait for s1
    ok(hip.hipEventRecord(start, s1))
    flag = _spinner(math_mod, s1)
    ok(hip.hipEventRecord(mark, s1))
    ok(hip.hipStreamWaitEvent(s2, mark, 0))
    f = basic._module.function("scale<int>")
    ok(hip.hipModuleLaunchKernel(f, 1, 1, 1, 64, 1, 1, 0, s2, [x, 5, 64], None))
    time.sleep(0.2)
    assert hip.hipEventQuery(mark) == (E.hipErrorNotReady,)
    assert hip.hipStreamQuery(s2) == (E.hipErrorNotReady,)       # held back by the barrier-AND packet
    assert np.array_equal(x.view(), np.ones(64))
    _release(flag)
    ok(hip.hipEventRecord(stop, s1))
    ok(hip.hipEventSynchronize(stop))
    ok(hip.hipStreamSynchronize(s2))
    assert np.array_equal(x.get(), np.full(64, 5))
    ms = ok(hip.hipEventElapsedTime(start, stop))
    assert 150 < ms < 60_000
    nt = ok(hip.hipEventCreateWithFlags(2))
    ok(hip.hipEventRecord(nt, s1))
    ok(hip.hipEventSynchronize(nt))
    assert hip.hipEventElapsedTime(start, nt)[0] == E.hipErrorInvalidHandle
    for s in (s1, s2):
        ok(hip.hipStreamDestroy(s))
    assert hip.hipStreamSynchronize(s1)[0] == E.hipErrorContextIsDestroyed
    assert hip.hipStreamDestroy(None)[0] == E.hipErrorInvalidHandle
    assert hip.hipStreamDestroy(2)[0] == E.hipErrorInvalidResourceHandle
    for e in (start, stop, mark, nt):
        ok(hip.hipEventDestroy(e))


def test_many_threads_private_and_shared_streams(mods):
    _, basic = mods
    scale = basic._module.function("scale<int>")
    nthreads, per = 8, 40
    shared = ok(hip.hipStreamCreate())
    bufs = [ok(hip.hipMalloc(per * 4)) for _ in range(nthreads)]
    shared_buf = ok(hip.hipMalloc(nthreads * per * 4))
    errors = []

    def worker(t):
        try:
            s = ok(hip.hipStreamCreate())
            for i in range(per):
                ok(hip.hipMemsetD32Async(int(bufs[t]) + 4 * i, i, 1, s))        # then ×3 on the same stream
                ok(hip.hipModuleLaunchKernel(scale, 1, 1, 1, 64, 1, 1, 0, s, [int(bufs[t]) + 4 * i, 3, 1], None))
                slot = int(shared_buf) + 4 * (t * per + i)
                ok(hip.hipMemsetD32Async(slot, t * 1000 + i, 1, shared))
            ok(hip.hipStreamSynchronize(s))
            ok(hip.hipStreamDestroy(s))
        except BaseException as exc:   # pragma: no cover - reported below
            errors.append(exc)
    threads = [threading.Thread(target=worker, args=(t,)) for t in range(nthreads)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors, errors
    ok(hip.hipStreamSynchronize(shared))
    for t in range(nthreads):
        out = np.zeros(per, np.int32)
        ok(hip.hipMemcpy(out, bufs[t], per * 4, hip.hipMemcpyKind.hipMemcpyDeviceToHost))
        assert np.array_equal(out, np.arange(per) * 3)      # each value written once, then scaled once, in order
    allv = np.zeros(nthreads * per, np.int32)
    ok(hip.hipMemcpy(allv, shared_buf, allv.nbytes, hip.hipMemcpyKind.hipMemcpyDeviceToHost))
    assert np.array_equal(allv, np.array([t * 1000 + i for t in range(nthreads) for i in range(per)]))


def test_two_devices_concurrently():
    results = {}

    def run(dev, path):
        pyhip.set_device(dev)
        m = pyhip.load(BIN / path)
        x = pyhip.to_device(np.arange(1000, dtype=np.float32))
        m.kernel("scale<float>")(4, 256, x, np.float32(dev + 2), 1000)
        pyhip.synchronize()
        results[dev] = x.get()
    ts = [threading.Thread(target=run, args=(0, "hipcc52/basic-gfx90a.hsaco")),
          threading.Thread(target=run, args=(1, "clang19/basic-gfx942-v5.hsaco"))]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert np.array_equal(results[0], np.arange(1000) * 2) and np.array_equal(results[1], np.arange(1000) * 3)


def test_per_thread_stream_and_pythonic_context_managers(mods):
    _, basic = mods
    x = pyhip.to_device(np.arange(256, dtype=np.float32))
    basic.kernel("scale<float>")(1, 256, x, np.float32(2), 256, stream=2)       # hipStreamPerThread
    ok(hip.hipStreamSynchronize(2))
    with pyhip.Stream() as s:
        with pyhip.Event.timing(s) as timer:
            basic.kernel("scale<float>")(1, 256, x, np.float32(0.5), 256, stream=s)
    assert timer.ms is not None and timer.ms >= 0
    assert np.array_equal(x.get(), np.arange(256, dtype=np.float32))
    with pytest.raises(pyhip.HipError) as ei:
        basic.kernel("scale<float>")(1, 256, x, 2.0)
    assert ei.value.code == E.hipErrorInvalidValue and "takes 3 arguments" in str(ei.value)
    with pytest.raises(pyhip.HipError):
        basic.kernel("scale<float>")(1, 256, x, np.float64(2.0), 256)            # a double for a float


def test_dlpack_export_and_numpy_view():
    from pyhip.dlpack import capsule_tensor, release_tensor

    a = pyhip.to_device(np.arange(12, dtype=np.float32).reshape(3, 4))
    assert a.__dlpack_device__() == (10, 0)
    t = capsule_tensor(a.__dlpack__())
    assert t.data == int(a.ptr) and t.ndim == 2 and [t.shape[i] for i in range(2)] == [3, 4]
    assert (t.dtype.code, t.dtype.bits, t.device.device_type) == (2, 32, 10)
    assert np.array_equal(a.view(), np.arange(12).reshape(3, 4))
    release_tensor(t)


def test_dlpack_capsules_release_their_tensor():
    """An unconsumed capsule releases its tensor when dropped; a consumed one (renamed "used_dltensor") is the
    consumer's: its deleter runs when the consumer calls it, exactly once."""
    import ctypes
    import gc

    from pyhip import dlpack

    a = pyhip.to_device(np.arange(5, dtype=np.int32))
    before = len(dlpack._alive)
    cap = a.__dlpack__()
    assert len(dlpack._alive) == before + 1
    del cap
    gc.collect()
    assert len(dlpack._alive) == before
    cap = a.__dlpack__()
    get = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.py_object, ctypes.c_char_p)(("PyCapsule_GetPointer", ctypes.pythonapi))
    mt = dlpack.DLManagedTensor.from_address(get(cap, b"dltensor"))
    rename = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.py_object, ctypes.c_char_p)(("PyCapsule_SetName", ctypes.pythonapi))
    assert rename(cap, b"used_dltensor") == 0          # what a consumer does
    del cap
    gc.collect()
    assert len(dlpack._alive) == before + 1              # not released by the capsule any more
    mt.deleter(ctypes.pointer(mt))                        # the consumer is done with it
    assert len(dlpack._alive) == before


def test_registration_handles_and_lazy_loading():
    rt = runtime()
    entry = next(e for e in fixture_files("bundle") if "gfx90a" in e["targets"] and e["file"].startswith("hipcc52/basic"))
    h = rt.registry.register_fatbin(fixture_path(entry).read_bytes())
    rt.registry.register_function(h, 0x7000, b"_Z5scaleIfEvPT_S0_i")
    pyhip.set_device(0)
    x = pyhip.to_device(np.arange(100, dtype=np.float32))
    rt.launch_by_handle(0x7000, (1, 1, 1), (128, 1, 1), [x, np.float32(4), 100])
    pyhip.synchronize()
    assert np.array_equal(x.get(), np.arange(100) * 4)
    with pytest.raises(pyhip.HipError) as ei:
        rt.launch_by_handle(0x7001, (1, 1, 1), (64, 1, 1), [])
    assert ei.value.code == 98
    pyhip.set_device(1)                      # the bundle has gfx90a and gfx1030 only
    with pytest.raises(pyhip.HipError) as ei:
        rt.launch_by_handle(0x7000, (1, 1, 1), (64, 1, 1), [x, np.float32(1), 1])
    assert ei.value.code == E.hipErrorNoBinaryForGpu
    pyhip.set_device(0)


def test_an_idle_stream_does_not_wait_on_its_last_signal_once_recycled(mods):
    """A synchronized stream's last command gave its signal back to the pool; the next packet (a kernel spinning
    on another stream) may get the same signal: synchronizing the idle stream again must not wait for it."""
    math_mod, basic = mods
    x = pyhip.to_device(np.arange(64, dtype=np.int32))
    idle = [pyhip.Stream() for _ in range(4)]
    for s in idle:
        basic.kernel("scale<int>")(1, 64, x, 1, 64, stream=s)
        s.synchronize()                                   # its last command's signal goes back to the pool
    nb = pyhip.Stream(non_blocking=True)
    flag = _spinner(math_mod, nb)
    try:
        t0 = time.perf_counter()
        for s in idle:
            s._stream.synchronize(timeout=20)
            runtime().device().null_stream.synchronize(timeout=20)   # waits for the blocking (idle) streams
        assert time.perf_counter() - t0 < 5 and not nb.query()
    finally:
        _release(flag)
        nb.synchronize()


_WATCHED_RETIRE = textwrap.dedent("""
    import sys, threading
    import pyhip
    from pyhip.runtime.context import runtime
    from pyhip.runtime import stream as S

    dev = runtime().device(0)
    null, other = dev.null_stream, pyhip.Stream()._stream
    for waiter, owner in ((null, other), (other, null)):
        gate = threading.Event()
        x = owner.host_op(gate.wait, "gated")           # the owner's last command: pending
        real_done = S.Command.done

        def done(self, x=x, gate=gate, owner=owner):
            if self is not x or threading.current_thread() is not threading.main_thread():
                return real_done(self)
            gate.set()                                  # the waiter saw it pending; now it completes and its owner
            t = threading.Thread(target=owner.synchronize)   # retires it (gives its signal back to the pool)
            t.start()
            t.join(0.5)                                 # (fixed: the retire waits until the waiter has pinned it)
            return False

        S.Command.done = done
        try:
            cmd = waiter.marker()                       # waits for the owner's last command (null-stream rules)
        finally:
            S.Command.done = real_done
        if not cmd.signal.wait(10.0):
            print("stuck", waiter is null, flush=True)
            sys.exit(1)
        waiter.synchronize()
        owner.synchronize()
    print("ok", flush=True)
""")


def test_a_dependency_retired_while_a_submit_pins_it_is_not_recycled():
    """The hang of the threaded stress tests (four workers on their streams, the null stream's copies stuck): a
    submit read another stream's last command as pending, that stream retired it meanwhile (its signal back to
    the pool, LIFO), and the barrier the submit then made got that very signal as its own completion signal —
    a barrier waiting for itself.  The interleaving is forced in both directions (the null stream waiting for
    a blocking stream and the reverse); in a process of its own, so a regression fails instead of hanging."""
    r = subprocess.run([sys.executable, "-c", _WATCHED_RETIRE], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stdout.strip() == "ok", (r.stdout, r.stderr[-2000:])
