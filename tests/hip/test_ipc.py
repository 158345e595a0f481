"""HIP IPC between processes on the emulated devices (pyhip/runtime/ipc.py): this process and worker processes
(tests/hip/ipc_worker.py) share device memory and order their kernels by IPC events; the errors AMD's runtime
gives.  Work is held back by a host function waiting on a threading.Event, so a wait across processes is
observed (an IPC event not ready in another process while its record is held back), not assumed."""
from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

import pyhip.hip as hip
from pyhip.hip import hipError_t as E

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
V = hip.hipMemcpyKind


def ok(ret):
    assert isinstance(ret, tuple) and ret[0] == E.hipSuccess, (ret, hip.last_exception())
    return ret[1] if len(ret) == 2 else None


class Worker:
    """A worker process: one command line in, one answer line out (never waits forever: a timeout)."""

    def __init__(self):
        env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONDONTWRITEBYTECODE": "1"}
        self.proc = subprocess.Popen([sys.executable, str(HERE / "ipc_worker.py")], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)

    def ask(self, *words, timeout=120) -> str:
        got = []
        reader = threading.Thread(target=lambda: got.append(self.proc.stdout.readline()), daemon=True)
        self.proc.stdin.write(" ".join(map(str, words)) + "\n")
        self.proc.stdin.flush()
        reader.start()
        reader.join(timeout)
        if not got or not got[0]:
            self.proc.kill()
            raise AssertionError(f"worker gave no answer to {words[0]}: {self.proc.stderr.read()[-2000:]}")
        return got[0].strip()

    def finish(self) -> None:
        self.proc.stdin.close()
        assert self.proc.wait(60) == 0, self.proc.stderr.read()[-2000:]


@pytest.fixture
def workers():
    made = []
    yield lambda k: [made.append(Worker()) or made[-1] for _ in range(k)]
    for w in made:
        if w.proc.poll() is None:
            w.proc.kill()
            w.proc.wait(10)


def mem_handle(p) -> str:
    return bytes(ok(hip.hipIpcGetMemHandle(p))).hex()


def ipc_event():
    return ok(hip.hipEventCreateWithFlags(hip.hipEventInterprocess | hip.hipEventDisableTiming))


def event_handle(ev) -> str:
    h = hip.hipIpcEventHandle_st()
    ok(hip.hipIpcGetEventHandle(h, ev))
    return bytes(h).hex()


def open_event(hexed: str):
    return ok(hip.hipIpcOpenEventHandle(hip.hipIpcEventHandle_st.fromObj(bytearray.fromhex(hexed))))


def test_three_processes_chain_kernels_by_ipc_events(workers):
    """This process writes x and doubles it (held back by a gate), worker 1 waits for that and doubles it,
    worker 2 waits for worker 1 and doubles it: 8x, seen by every process; nothing ran before the gate."""
    n = 1000 + int(np.random.default_rng().integers(1, 255))     # not a multiple of the block size
    x = np.random.default_rng(n).standard_normal(n).astype(np.float32)
    ok(hip.hipSetDevice(0))
    p = ok(hip.hipMalloc(x.nbytes))
    ok(hip.hipMemcpy(p, x, x.nbytes, V.hipMemcpyHostToDevice))
    stream, gate = ok(hip.hipStreamCreateWithFlags(hip.hipStreamNonBlocking)), threading.Event()
    kernel = ok(hip.hipModuleGetFunction(ok(hip.hipModuleLoad(ROOT / "tests/fixtures/bin/hipcc52/basic-gfx90a.hsaco")),
                                         b"vadd_c"))
    mine = ipc_event()
    handle = event_handle(mine)                 # (before the record: records after it are shared)
    ok(hip.hipLaunchHostFunc(stream, lambda _: gate.wait(120), None))
    ok(hip.hipModuleLaunchKernel(kernel, -(-n // 256), 1, 1, 256, 1, 1, 0, stream, [p, p, p, n], None))
    ok(hip.hipEventRecord(mine, stream))
    w1, w2 = workers(2)
    try:
        for w, after in ((w1, handle), (w2, None)):
            assert w.ask("open", mem_handle(p), n) == "ok"
            if after is None:
                after = theirs
            assert w.ask("wait", after) == "ok" and w.ask("double") == "ok"
            theirs = w.ask("record")
        last = open_event(theirs)
        assert hip.hipEventQuery(last)[0] == E.hipErrorNotReady      # held back in this process
        assert hip.hipEventQuery(mine)[0] == E.hipErrorNotReady
        seen = np.zeros_like(x)
        ok(hip.hipMemcpy(seen, p, x.nbytes, V.hipMemcpyDeviceToHost))
        assert (seen == x).all()                  # no process doubled it yet
    finally:
        gate.set()
    ok(hip.hipEventSynchronize(last))
    ok(hip.hipMemcpy(seen, p, x.nbytes, V.hipMemcpyDeviceToHost))
    np.testing.assert_array_equal(seen, x * 8)
    for w in (w1, w2):
        assert np.array_equal(np.frombuffer(bytes.fromhex(w.ask("read")), dtype=np.float32), x * 8)
        assert w.ask("close") == f"{E.hipSuccess.value} {E.hipErrorInvalidValue.value}"
        w.finish()
    ok(hip.hipFree(p))


def test_memory_outlives_its_owner(workers):
    """A worker allocates and fills memory; this process opens it (twice: one pointer), the owner frees it and
    exits: the bytes stay readable here until the last close; the handle then opens no more."""
    (owner,) = workers(1)
    n, seed = 3000 + 17, int(np.random.default_rng().integers(1 << 30))
    want = np.random.default_rng(seed).standard_normal(n).astype(np.float32)
    handle = hip.hipIpcMemHandle_st.fromObj(bytearray.fromhex(owner.ask("alloc", n, seed)))
    p = ok(hip.hipIpcOpenMemHandle(handle, 0))
    assert int(ok(hip.hipIpcOpenMemHandle(handle, 0))) == int(p)
    assert hip.hipFree(p)[0] == E.hipErrorInvalidValue                        # not this process's allocation
    got = np.full(n, np.nan, dtype=np.float32)
    ok(hip.hipMemcpy(got, p, got.nbytes, V.hipMemcpyDeviceToHost))
    np.testing.assert_array_equal(got, want)
    assert hip.hipMemcpy(got, p, got.nbytes + (4 << 20), V.hipMemcpyDeviceToHost)[0] != E.hipSuccess   # bounds
    assert owner.ask("free") == "ok"
    owner.finish()
    got[:] = np.nan
    ok(hip.hipMemcpy(got, p, got.nbytes, V.hipMemcpyDeviceToHost))
    np.testing.assert_array_equal(got, want)
    ok(hip.hipIpcCloseMemHandle(p))
    ok(hip.hipIpcCloseMemHandle(p))
    assert hip.hipIpcCloseMemHandle(p)[0] == E.hipErrorInvalidValue
    assert hip.hipIpcOpenMemHandle(handle, 0)[0] == E.hipErrorInvalidValue     # its process is gone


def test_errors_within_one_process():
    p = ok(hip.hipMalloc(4096 + 12))
    handle = ok(hip.hipIpcGetMemHandle(p))
    assert hip.hipIpcOpenMemHandle(handle, 0)[0] == E.hipErrorInvalidContext
    garbage = hip.hipIpcMemHandle_st.fromObj(bytearray(np.random.default_rng().integers(0, 256, 64, dtype=np.uint8)))
    assert hip.hipIpcOpenMemHandle(garbage, 0)[0] == E.hipErrorInvalidValue
    assert hip.hipIpcCloseMemHandle(p)[0] == E.hipErrorInvalidValue           # never opened
    host = ok(hip.hipHostMalloc(64, 0))
    assert hip.hipIpcGetMemHandle(host)[0] == E.hipErrorInvalidValue
    plain = ok(hip.hipEventCreate())
    assert hip.hipIpcGetEventHandle(hip.hipIpcEventHandle_st(), plain)[0] == E.hipErrorInvalidConfiguration  # 5.2's
    assert hip.hipIpcGetEventHandle(hip.hipIpcEventHandle_st(), None)[0] == E.hipErrorInvalidValue
    ev = ipc_event()
    assert hip.hipIpcOpenEventHandle(hip.hipIpcEventHandle_st.fromObj(bytearray.fromhex(event_handle(ev))))[0] \
        == E.hipErrorInvalidContext
    ok(hip.hipFree(p))
    ok(hip.hipHostFree(host))


def test_first_handle_of_memory_a_stream_is_writing_keeps_the_writes():
    """hipIpcGetMemHandle while a host function of a stream writes the allocation, chunk by chunk: the first
    handle moves the allocation's pages into shared memory (copied, then mapped in place), and the chunks
    written while its bytes were copied were lost (they kept the old value).  The move now waits for the
    device's work in flight first (bounded, as the thunk stops a process's queues while it moves memory)."""
    ok(hip.hipSetDevice(0))
    chunk, chunks = 256 << 10, 192
    n = chunk * chunks
    p = ok(hip.hipMalloc(n))
    ok(hip.hipMemset(p, 0, n))
    ok(hip.hipDeviceSynchronize())
    from pyhip.runtime.context import runtime
    view = np.frombuffer(runtime().devices[0].backend.host_view(int(p), n), np.uint8)
    started = threading.Event()
    values = np.random.default_rng().integers(1, 256, chunks, dtype=np.uint8)

    def writer(_):
        started.set()
        for k in range(chunks):
            view[k * chunk:(k + 1) * chunk] = values[k]
            time.sleep(0.002)
    stream = ok(hip.hipStreamCreateWithFlags(hip.hipStreamNonBlocking))
    ok(hip.hipLaunchHostFunc(stream, writer, None))
    assert started.wait(60)
    time.sleep(0.05)                            # the writer is in the middle of the allocation
    mem_handle(p)
    ok(hip.hipStreamSynchronize(stream))
    seen = np.zeros(n, np.uint8)
    ok(hip.hipMemcpy(seen, p, n, V.hipMemcpyDeviceToHost))
    lost = int((seen.reshape(chunks, chunk) != values[:, None]).any(axis=1).sum())
    assert lost == 0, f"{lost} of {chunks} chunks lost"
    ok(hip.hipStreamDestroy(stream))
    ok(hip.hipFree(p))
