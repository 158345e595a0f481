"""Device memory shared between processes through the emulated KFD (hsaKmtShareMemory,
hsaKmtRegisterSharedHandle(ToNodes): what ROCr's hsa_amd_ipc_memory_create / attach / detach and so HIP's
hipIpcGetMemHandle / OpenMemHandle / CloseMemHandle call).

In-process: two KFDs (two "processes" of one Python process; the handle names this pid, which is allowed as
on amdkfd) share VRAM and system memory, a forked child imports what its parent exported, bad handles are
clear errors.  Across real processes: a hipcc program whose child (fork, then exec) opens its parent's
memory gives the same output on AMD's HIP over the thunk (``pyhip exec --runtime amd``), on pyhip's own
runtime, and on pyhip's runtime over ROCr over the thunk (the HSA backend: hsa_amd_ipc_memory_create /
attach / detach)."""
import contextlib
import os
import random
import threading
import time
from types import SimpleNamespace

import numpy as np
import pytest

from pyhip.thunk import abi
from pyhip.thunk.kfd import Kfd
from pyhip.thunk.memory import PAGE, SharedHandle, host_array
from pyhip.thunk.quirks import Quirks

from test_kfd_queues import FakeNative
from thunkkit import HERE, hipcc, pyhip_exec

VRAM = abi.pack_bits(abi.MEM_FLAGS, NonPaged=1, HostAccess=1)
SYSTEM = abi.pack_bits(abi.MEM_FLAGS, HostAccess=1)
ONE_MI210 = {"PYHIP_DEVICES": "gfx90a:sramecc+:xnack-"}


def open_kfd(**quirks):
    return Kfd(FakeNative(), "gfx90a:sramecc+:xnack-", Quirks(**quirks))


@pytest.fixture
def pair():
    a, b = open_kfd(), open_kfd()
    yield a, b
    b.close()
    a.close()


def rand_bytes(n, seed):
    return np.random.default_rng(seed).integers(0, 256, n, dtype=np.uint8)


@pytest.mark.parametrize("node,flags", [(1, VRAM), (0, SYSTEM)], ids=["vram", "system"])
def test_exported_memory_is_the_same_bytes_in_the_importer(pair, node, flags):
    ex, im = pair
    size = 3 * PAGE
    a = ex.memory.alloc(node, size, flags)
    if node == 0:
        ex.memory.map(a, size, [1])
    data = rand_bytes(size, 1)
    ex.gpus[1].memory.write(a, data.tobytes())              # the exporter's GPU wrote it
    h = ex.memory.share(a, size)
    assert h.gpu_id == (ex.topology.gpu(1).gpu_id if node else 0) and h.pages == 3
    words = h.words()
    assert len(words) == 8 and words[6] == 3                # SizeInPages where ROCr expects it (word 6)
    b, got_size = im.memory.import_shared(SharedHandle.parse(words), [1])
    assert got_size == size and b % PAGE == 0
    info = im.memory.pointer_info(b + 100)
    assert info["Type"] == abi.PTR_REGISTERED_SHARED and info["Node"] == 1 and info["SizeInBytes"] == size
    assert np.array_equal(host_array(b, size), data)        # the importer's CPU sees the exporter's bytes
    assert not im.memory.gpu_accessible(1, b, size)         # its GPU only once mapped
    assert im.memory.map(b, size, [1]) == b
    assert im.memory.gpu_accessible(1, b, size)
    more = rand_bytes(size - 1000, 2)
    im.gpus[1].memory.write(b + 1000, more.tobytes())        # the importer's GPU writes: the exporter sees it
    assert np.array_equal(np.frombuffer(ex.gpus[1].memory.read(a + 1000, size - 1000), np.uint8), more)
    assert np.array_equal(host_array(a, 1000), data[:1000])
    # the exporter frees it (and reuses the memory): the importer keeps its bytes
    ex.memory.free(a)
    again = ex.memory.alloc(node, size, flags)
    host_array(again, size)[:] = 0xEE
    assert np.array_equal(np.frombuffer(im.gpus[1].memory.read(b + 1000, size - 1000), np.uint8), more)
    ex.memory.free(again)
    im.memory.unmap(b)                                       # ROCr's detach: unmap, then deregister
    im.memory.deregister(b)
    assert im.memory.pointer_info(b) is None and not im.memory.gpu_accessible(1, b, 1)


def test_sharing_twice_gives_the_same_file_and_free_releases_an_import(pair):
    ex, im = pair
    a = ex.memory.alloc(1, 2 << 20, VRAM)
    h1, h2 = ex.memory.share(a, 2 << 20), ex.memory.share(a, PAGE)
    assert (h1.fd, h1.inode) == (h2.fd, h2.inode) and h2.pages == 1
    b, n = im.memory.import_shared(h1)
    assert n == 2 << 20 and b % (2 << 20) == 0              # a 2 MiB BO gets a 2 MiB aligned VA
    assert im.memory.pointer_info(b)["Node"] == 1           # a VRAM export: the exporting GPU's node
    im.memory.map(b, n)                                      # MapMemoryToGPU: every GPU (it registered none)
    assert im.memory.gpu_accessible(1, b, n)
    im.memory.free(b)                                        # hsaKmtFreeMemory releases an import too
    assert im.memory.pointer_info(b) is None
    ex.memory.free(a)


def test_small_bar_vram_is_shared_through_both_mappings():
    ex, im = open_kfd(small_bar=True), open_kfd()
    try:
        size = 5 * PAGE
        a = ex.memory.alloc(1, size, abi.pack_bits(abi.MEM_FLAGS, NonPaged=1))   # not CPU-accessible
        data = rand_bytes(size, 3)
        ex.gpus[1].memory.write(a, data.tobytes())
        b, _ = im.memory.import_shared(ex.memory.share(a, size), [1])
        assert np.array_equal(host_array(b, size), data)
        host_array(b, 10)[:] = 7
        assert ex.gpus[1].memory.read(a, 10) == bytes([7] * 10)
        ex.memory.free(a)
        a2 = ex.memory.alloc(1, size, abi.pack_bits(abi.MEM_FLAGS, NonPaged=1))
        assert ex.gpus[1].memory.read(a2, size) == bytes(size)    # the board's own zero pages again
        assert host_array(b, 10).tolist() == [7] * 10
        ex.memory.free(a2)
        im.memory.deregister(b)
    finally:
        im.close()
        ex.close()


def test_a_forked_child_imports_its_parents_memory(pair):
    ex, _ = pair
    size = 7 * PAGE
    a = ex.memory.alloc(1, size, VRAM)
    data = rand_bytes(size, 4)
    host_array(a, size)[:] = data
    words = ex.memory.share(a, size).words()
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:                                             # a fresh KFD in a new process
        code = 1
        try:
            k = open_kfd()
            b, n = k.memory.import_shared(SharedHandle.parse(words), [1])
            k.memory.map(b, n, [1])
            ok = np.array_equal(np.frombuffer(k.gpus[1].memory.read(b, size), np.uint8), data)
            k.gpus[1].memory.write(b, bytes(range(200)))
            k.memory.unmap(b)
            k.memory.deregister(b)
            code = 0 if ok else 2
        finally:
            os.write(w, bytes([code]))
            os._exit(code)
    os.close(w)
    assert os.read(r, 1) == b"\0"
    os.close(r)
    assert os.waitpid(pid, 0)[1] == 0
    assert host_array(a, 200).tobytes() == bytes(range(200))
    ex.memory.free(a)


def test_bad_handles_are_errors(pair):
    ex, im = pair
    a = ex.memory.alloc(1, 2 * PAGE, VRAM)
    good = list(ex.memory.share(a, 2 * PAGE).words())

    def status(words, nodes=()):
        with pytest.raises(abi.KfdError) as e:
            im.memory.import_shared(SharedHandle.parse(words), nodes)
        return e.value.status

    assert status([0] * 8) == abi.INVALID_HANDLE
    for i in range(8):                                       # any word changed: a corrupt handle
        bad = list(good)
        bad[i] ^= 0x100
        assert status(bad) == abi.INVALID_HANDLE, i
    assert status(good, [7]) == abi.INVALID_NODE_UNIT
    gone = SharedHandle(os.getpid(), 1 << 20, 1, 1, 0)       # no such descriptor
    assert status(gone.words()) == abi.INVALID_HANDLE
    big = SharedHandle(*(SharedHandle.parse(good).__dict__[k] for k in ("pid", "fd", "inode")), 3, 0)
    assert status(big.words()) == abi.INVALID_HANDLE         # more pages than the file has
    ex.memory.free(a)
    assert status(good) == abi.INVALID_HANDLE                # stale: the exporter freed it
    with pytest.raises(abi.KfdError) as e:
        ex.memory.share(ex.memory.alloc(1, 2 * PAGE, VRAM) + PAGE, PAGE)   # not an allocation's start
    assert e.value.status == abi.INVALID_PARAMETER
    b = ex.memory.alloc(1, 2 * PAGE, VRAM)
    with pytest.raises(abi.KfdError) as e:
        ex.memory.share(b, 3 * PAGE)                         # larger than the allocation
    assert e.value.status == abi.INVALID_PARAMETER
    assert not im.memory.objects                             # nothing half-imported


@pytest.fixture(scope="module")
def ipc_program(tmp_path_factory):
    return hipcc(tmp_path_factory.mktemp("ipc"), HERE / "src" / "ipc_mem.hip")


def test_hip_ipc_between_processes_on_every_runtime(ipc_program):
    """The parent fills A, B, C with a kernel from random data and exports them; the child opens them,
    rewrites A and B with a kernel and sums C after the parent freed it; bad handles are errors.  AMD's
    HIP and ROCr over the thunk give the output pyhip's own runtime gives, on its emulator backend and on
    its HSA backend (ROCr over the thunk as well)."""
    seed = random.randrange(1 << 32)
    amd = pyhip_exec(ipc_program, seed, runtime="amd", PYHIP_LOG_FAULTS="1", **ONE_MI210)
    assert amd.returncode == 0 and amd.stdout.strip().endswith("PASS"), (seed, amd.stdout + amd.stderr)
    assert "a corrupt shared memory handle" in amd.stderr            # the thunk saw the flipped handle
    assert "the shared memory handle's memory is gone" in amd.stderr  # and the stale one
    ours = pyhip_exec(ipc_program, seed, runtime="pyhip", **ONE_MI210)
    assert ours.returncode == 0 and ours.stdout == amd.stdout, (seed, ours.stdout + ours.stderr)
    hsa = pyhip_exec(ipc_program, seed, runtime="pyhip", PYHIP_BACKEND="hsa", PYHIP_HSA_THUNK="pyhip",
                     PYHIP_LOG_FAULTS="1", **ONE_MI210)
    assert hsa.returncode == 0 and hsa.stdout == amd.stdout, (seed, hsa.stdout + hsa.stderr)
    assert "a corrupt shared memory handle" not in hsa.stderr     # pyhip's runtime refused it before ROCr
    assert "the shared memory handle's memory is gone" in hsa.stderr


def test_imported_memory_outlives_its_exporter():
    """The exporter (a forked child with a KFD of its own) exits after the import: the importer keeps the
    bytes (the file lives while mapped), and its writes go on landing in them."""
    r, w = os.pipe()
    go_r, go_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            k = open_kfd()
            a = k.memory.alloc(1, 4 * PAGE, VRAM)
            host_array(a, 4 * PAGE)[:] = rand_bytes(4 * PAGE, 5)
            os.write(w, np.array(k.memory.share(a, 4 * PAGE).words(), np.uint32).tobytes())
            os.read(go_r, 1)                               # imported: free it and exit
            k.memory.free(a)
            k.close()
            code = 0
        finally:
            os._exit(code)
    os.close(w)
    words = np.frombuffer(os.read(r, 32), np.uint32).tolist()
    im = open_kfd()
    try:
        b, n = im.memory.import_shared(SharedHandle.parse(words), [1])
        im.memory.map(b, n, [1])
        os.write(go_w, b"x")
        assert os.waitpid(pid, 0)[1] == 0
        assert np.array_equal(np.frombuffer(im.gpus[1].memory.read(b, n), np.uint8), rand_bytes(4 * PAGE, 5))
        im.gpus[1].memory.write(b, b"after")
        assert host_array(b, 5).tobytes() == b"after"
        with pytest.raises(abi.KfdError) as e:             # and the handle is stale now
            im.memory.import_shared(SharedHandle.parse(words))
        assert e.value.status == abi.INVALID_HANDLE
        im.memory.deregister(b)
    finally:
        im.close()
        for fd in (r, go_r, go_w):
            os.close(fd)


class _FakeCP:
    """A command processor's stop protocol (pyhip/thunk/cp.py): ``active`` cleared by suspend, ``idle`` set by
    the loop once it is between packets; ``busy`` seconds of a packet still running when suspended."""

    def __init__(self, active=True, busy=0.0):
        self.active, self.idle, self.error = threading.Event(), threading.Event(), 0
        if active:
            self.active.set()
        self.busy, self.stop = busy, False
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        while not self.stop:
            if not self.active.is_set():
                self.idle.set()
                self.active.wait(0.01)
                continue
            self.idle.clear()
            time.sleep(self.busy or 0.001)                        # "a packet"

    def suspend(self):
        self.active.clear()

    def resume(self):
        self.active.set()


def test_first_export_stops_the_queues_between_packets():
    """The first export of an allocation copies its pages and maps the copy in place: the process's queues
    are stopped between packets meanwhile (as amdkfd evicts them while it moves memory) — a packet running
    completes first — and restored after, except a queue ROCr had stopped itself."""
    k = open_kfd()
    try:
        queues = {1: SimpleNamespace(cp=_FakeCP(busy=0.3), percentage=100, evicted=False),
                  2: SimpleNamespace(cp=_FakeCP(active=False), percentage=0, evicted=False)}
        k.queues.update(queues)
        seen = []
        real = k.memory.quiesce

        @contextlib.contextmanager
        def watch():
            with real():
                seen.append([(q.cp.active.is_set(), q.cp.idle.is_set()) for q in queues.values()])
                yield

        k.memory.quiesce = watch
        a = k.memory.alloc(1, 2 * PAGE, VRAM)
        time.sleep(0.05)                                         # the busy queue is inside its 0.3 s packet
        t = time.monotonic()
        k.memory.share(a, 2 * PAGE)
        assert time.monotonic() - t > 0.1                        # waited for the packet to complete
        k.memory.share(a, PAGE)                                  # exported already: no second stop
        assert seen == [[(False, True), (False, True)]]
        assert queues[1].cp.active.is_set() and not queues[2].cp.active.is_set()
        k.memory.free(a)
        queues[1].cp.busy = 30                                   # a CP that does not come back in time
        time.sleep(0.05)
        t = time.monotonic()
        with k.quiesced(timeout=0.2):
            pass
        assert time.monotonic() - t < 5
    finally:
        for q in queues.values():
            q.cp.stop = True
            q.cp.active.set()
        for qid in queues:
            k.queues.pop(qid, None)
        k.close()
