"""The concurrency stress of issue 24 (tests/capi/stress.hip says what each launch does): its inputs, the numpy
reference every result is checked against, and its Python face.

Both faces run in a child process with a timeout (a hang fails the test, never the suite): the C face is the
hipcc program under ``pyhip exec`` (tests/capi/test_stress_capi.py), the Python face is this file run as a
script over the program's code object (tests/runtime/test_stress.py): 8 threads, threads 0-3 on private
streams and 4-7 sharing two non-blocking ones, each launching through another of hip-python's argument styles
(Kernel calls with a DeviceArray and Python ints, numpy scalars, ctypes values; hipModuleLaunchKernel with a
kernelParams list), with the same events and snapshots as the C face.  Both write the same output file.

``PYHIP_STRESS_LAUNCHES`` sets launches per thread (the suite runs fewer than the issue's 10,000 from Python:
``SUITE_LAUNCHES``)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np

THREADS, LANES, WIDTH = 8, 64, 50          # WIDTH lanes of each 64-lane block step (not a multiple of it)
SNAP_EVERY = 100
SOURCE = Path(__file__).resolve().parent / "capi" / "stress.hip"
STYLES = ("python", "numpy", "ctypes", "kernelParams")


def launches(default: int) -> int:
    return int(os.environ.get("PYHIP_STRESS_LAUNCHES", default))


def stream_of(t: int) -> int:
    return t if t < 4 else 4 + (t - 4) // 2


def write_inputs(path: Path, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Random initial states (poisoned above WIDTH) and odd multipliers, written where the faces read them."""
    rng = np.random.default_rng(seed)
    state = rng.integers(0, 2 ** 32, size=(THREADS, LANES), dtype=np.uint32)
    mul = rng.integers(0, 2 ** 31, size=THREADS, dtype=np.uint32) * np.uint32(2) + np.uint32(1)
    np.concatenate([state.ravel(), mul]).astype(np.uint32).tofile(path)
    return state, mul


def read_inputs(path) -> tuple[np.ndarray, np.ndarray]:
    raw = np.fromfile(path, dtype=np.uint32)
    return raw[:THREADS * LANES].reshape(THREADS, LANES).copy(), raw[THREADS * LANES:].copy()


def check(path: Path, state0: np.ndarray, mul: np.ndarray, n: int) -> None:
    """Every output of a run of ``n`` launches per thread against the numpy reference."""
    snaps = n // SNAP_EVERY
    raw = np.fromfile(path, dtype=np.uint32)
    assert raw.size == THREADS * n + THREADS * LANES + THREADS * snaps, raw.size
    out = raw[:THREADS * n].reshape(THREADS, n)
    final = raw[THREADS * n:THREADS * (n + LANES)].reshape(THREADS, LANES)
    snap = raw[THREADS * (n + LANES):].reshape(THREADS, snaps).view(np.int32)
    want_out = np.empty((THREADS, n), np.uint32)
    state = state0.copy()
    lane = np.arange(WIDTH, dtype=np.uint32)
    seq0 = (np.arange(THREADS, dtype=np.uint32) * np.uint32(n))[:, None]
    with np.errstate(over="ignore"):
        for i in range(n):
            state[:, :WIDTH] = state[:, :WIDTH] * mul[:, None] + (seq0 + np.uint32(i)) + lane
            want_out[:, i] = state[:, 0]
    for t in range(THREADS):
        bad = np.flatnonzero(out[t] != want_out[t])
        assert bad.size == 0, f"thread {t}: {bad.size} wrong steps, first at launch {bad[0]}"
    np.testing.assert_array_equal(final, state)               # lanes >= WIDTH untouched
    need = (np.arange(snaps) + 1) * SNAP_EVERY                # the event ordered the snapshot after launch i
    for t in range(THREADS):
        bad = np.flatnonzero((snap[t] < need) | (snap[t] > n))
        assert bad.size == 0, f"thread {t}: snapshot {bad[0]} saw progress {snap[t][bad[0]]}, not {need[bad[0]]}..{n}"


def run(cmd: list[str], timeout: float) -> str:
    """``cmd`` in a child process; a hang is a failure."""
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as exc:
        raise AssertionError(f"the stress hung (no end after {timeout} s): {exc.stdout}{exc.stderr}") from None
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout


# -- the Python face (run as a script) ---------------------------------------------------------------------------
def _python_face(code_object: str, n: int, inputs: str, output: str) -> None:
    import ctypes
    import threading
    import time

    import pyhip
    import pyhip.hip as hip
    from pyhip.hip import hipError_t as E

    state0, mul = read_inputs(inputs)
    pyhip.set_device(0)
    mod = pyhip.load(code_object)
    step, snapshot = mod.kernel("stress_step"), mod.kernel("stress_snapshot")
    err, hmod = hip.hipModuleLoad(code_object.encode())
    assert err == E.hipSuccess
    step_f = hip.hipModuleGetFunction(hmod, b"stress_step")[1]
    streams = [hip.hipStreamCreate()[1] for _ in range(4)] + [hip.hipStreamCreateWithFlags(1)[1] for _ in range(2)]
    state = pyhip.to_device(state0)
    out = pyhip.to_device(np.full(THREADS * n, 0xFFFFFFFF, np.uint32))
    progress = pyhip.to_device(np.zeros(THREADS, np.int32))
    snaps = max(n // SNAP_EVERY, 1)
    snap = pyhip.to_device(np.full(THREADS * snaps, -1, np.int32))
    pyhip.synchronize()
    errors = []

    def worker(t):
        try:
            s, other = streams[stream_of(t)], streams[stream_of((t + 1) % THREADS)]
            st, prog = int(state) + 4 * LANES * t, int(progress) + 4 * t
            style = STYLES[t % len(STYLES)]
            m = int(mul[t])
            for i in range(n):
                seq = t * n + i
                if style == "python":
                    step(1, LANES, st, out, prog, seq, m, i, WIDTH, stream=s)
                elif style == "numpy":
                    step(1, LANES, np.uint64(st), np.uint64(int(out)), np.uint64(prog), np.int32(seq),
                         np.uint32(m), np.int32(i), np.int32(WIDTH), stream=s)
                elif style == "ctypes":
                    step(1, LANES, ctypes.c_void_p(st), ctypes.c_void_p(int(out)), ctypes.c_void_p(prog),
                         ctypes.c_int(seq), ctypes.c_uint(m), ctypes.c_int(i), ctypes.c_int(WIDTH), stream=s)
                else:
                    err = hip.hipModuleLaunchKernel(step_f, 1, 1, 1, LANES, 1, 1, 0, s,
                                                    [st, int(out), prog, seq, m, i, WIDTH], None)[0]
                    assert err == E.hipSuccess, err
                if i % SNAP_EVERY == SNAP_EVERY - 1:
                    ev = hip.hipEventCreate()[1]
                    assert hip.hipEventRecord(ev, s) == (E.hipSuccess,)
                    assert hip.hipStreamWaitEvent(other, ev, 0) == (E.hipSuccess,)
                    assert hip.hipEventDestroy(ev) == (E.hipSuccess,)
                    snapshot(1, LANES, prog, int(snap) + 4 * (snaps * t + i // SNAP_EVERY), stream=other)
        except BaseException as exc:  # noqa: BLE001 - reported by the main thread
            errors.append((t, repr(exc)))

    t0 = time.perf_counter()
    ts = [threading.Thread(target=worker, args=(t,)) for t in range(THREADS)]
    for th in ts:
        th.start()
    for th in ts:
        th.join()
    t1 = time.perf_counter()
    assert not errors, errors
    pyhip.synchronize()
    t2 = time.perf_counter()
    parts = [out.get(), state.get().ravel()] + ([snap.get()[:THREADS * (n // SNAP_EVERY)].view(np.uint32)]
                                               if n >= SNAP_EVERY else [])
    np.concatenate(parts).astype(np.uint32).tofile(output)
    for s in streams:
        assert hip.hipStreamDestroy(s) == (E.hipSuccess,)
    from pyhip.runtime.context import runtime
    gpu = getattr(runtime().device(0).backend, "emulated_gpu", None)      # None: the HSA backend (ROCr's queues)
    native = gpu.engine_stats().get("agent", {}).get("dispatched", 0) if gpu is not None else -1
    print(f"{THREADS * (n + n // SNAP_EVERY)} launches from {THREADS} threads: submitted in {t1 - t0:.2f} s, "
          f"done in {t2 - t0:.2f} s; {native} dispatches in native code")


if __name__ == "__main__":
    _python_face(sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4])
