"""The emulated GPU's memory model across the host threads that run workgroups at once (docs/memory-model.md),
checked with multi-workgroup litmus kernels (tests/fixtures/src/memory_model.hip, built by hipcc 5.2 for gfx90a
and clang-19 for gfx942).  Each kernel counts what it saw go wrong, or computes something numpy computes too:

- torn 64-bit accesses: a writer workgroup stores patterns whose halves change together (global_store_dwordx2),
  readers on other threads load them (global_load_dwordx2, lane-consecutive or not) and count words that are
  not one whole pattern; message passing with a packed {sequence, value} word (rocPRIM's packed look-back
  state) — before the fix the native engine read such a word one dword at a time across the lanes;
- message passing through separate arrays ordered by __threadfence() or release/acquire;
- a decoupled look-back prefix sum over 1,563 tiles (packed 32-bit state, and 64-bit values with byte flags
  and fences, as rocPRIM's device_scan does), against numpy's cumsum;
- store buffering with fences (both workgroups reading 0 is forbidden), and atomics from every workgroup.

The native (compiled) engine runs them with 4 engine threads on whatever cores the machine has (more threads
than cores preempt workgroups at arbitrary points); the numpy engine runs the ones that end on its schedule
(workgroups in lockstep batches), and its atomics are run from two host threads at once."""
from __future__ import annotations

import struct
import threading

import numpy as np
import pytest

from conftest import BIN
from pyhip.emu.device import EmulatedGPU
from pyhip.loader import load

CODE = {"gfx90a": BIN / "hipcc52/memory_model-gfx90a.hsaco", "gfx942": BIN / "clang19/memory_model-gfx942-v5.hsaco"}
THREADS = 4
TILE = 256


class Device:
    """One emulated GPU running one engine, with the litmus code object loaded."""

    def __init__(self, target: str, engine: str):
        self.co = load(CODE[target].read_bytes()).code_objects[0].code_object
        self.gpu = EmulatedGPU(target, watchdog_steps=20_000_000)
        self.gpu.engine = engine
        self.engine = engine
        self.prog = self.gpu.load_program(self.co)
        self.mem = self.gpu.memory
        self.allocs: list[int] = []

    def buf(self, arr) -> int:
        a = np.ascontiguousarray(arr)
        p = self.mem.alloc(max(a.nbytes, 8))
        self.mem.write(p, a.tobytes())
        self.allocs.append(p)
        return p

    def get(self, p: int, dtype, n: int) -> np.ndarray:
        return np.frombuffer(self.mem.read(p, n * np.dtype(dtype).itemsize), dtype).copy()

    def launch(self, name: str, groups: int, block: int, *args) -> None:
        k = self.co.kernel(name)
        ka = bytearray(max(k.meta.kernarg_segment_size, 64))
        explicit = [a for a in k.meta.args if not a.value_kind.startswith("hidden_")]
        assert len(explicit) == len(args), (name, len(args))
        hidden = {"hidden_block_count_x": groups, "hidden_group_size_x": block, "hidden_grid_dims": 1}
        hidden.update({f"hidden_{f}_{c}": 1 for f in ("block_count", "group_size") for c in "yz"})
        for a, v in [*zip(explicit, args), *((a, hidden.get(a.value_kind, 0)) for a in k.meta.args
                                             if a.value_kind.startswith("hidden_"))]:
            ka[a.offset:a.offset + a.size] = int(v).to_bytes(a.size, "little", signed=v < 0)
        kobj = self.prog.kernel_object(name)
        karg = self.buf(np.frombuffer(bytes(ka), np.uint8))
        # the AQL packet the kernel reads its workgroup size from (dispatch_ptr)
        pkt = struct.pack("<HHHHHHIIIIIQQQQ", 2, 1, block, 1, 1, 0, groups * block, 1, 1, 0,
                          k.meta.group_segment_fixed_size, kobj, karg, 0, 0)
        self.gpu.run_dispatch(kernel_object=kobj, kernarg_address=karg, grid_size=(groups * block, 1, 1),
                              workgroup_size=(block, 1, 1), group_segment_size=k.meta.group_segment_fixed_size,
                              private_segment_size=0, dispatch_ptr=self.buf(np.frombuffer(pkt, np.uint8)))
        want = "numpy" if self.engine == "numpy" else "native"
        assert self.gpu.last_dispatch.engine == want, (name, self.gpu.last_dispatch.engine)

    def release(self) -> None:
        for p in self.allocs:
            self.mem.free(p)
        self.allocs.clear()


@pytest.fixture(scope="module")
def devices():
    mp = pytest.MonkeyPatch()
    mp.setenv("PYHIP_JIT_TIERING", "0")          # compile first: no numpy-engine first runs of small dispatches
    made: dict = {}

    def get(target, engine):
        if (target, engine) not in made:
            made[target, engine] = Device(target, engine)
        return made[target, engine]
    yield get
    mp.undo()


@pytest.fixture
def native(devices, request):
    """``(target) -> Device`` on the native engine with THREADS engine threads."""
    from pyhip.emu import native as nat
    try:
        lib = nat.module().lib
    except ImportError as exc:
        pytest.skip(f"no native engine: {exc}")
    old = lib.pyhip_engine_threads()
    lib.pyhip_engine_set_threads(THREADS)
    made = []

    def get(target):
        d = devices(target, "native")
        if d.gpu.native_engine() is None:
            pytest.skip("no native engine")
        made.append(d)
        return d
    yield get
    lib.pyhip_engine_set_threads(old)
    for d in made:
        d.release()


@pytest.fixture
def numpy_engine(devices):
    d = devices("gfx90a", "numpy")
    yield d
    d.release()


TARGETS = ["gfx90a", "gfx942"]


# ---- single-copy atomicity of naturally aligned 64-bit accesses ------------------------------------------------
@pytest.mark.parametrize("mode", [0, 1, 2, 3], ids=["contiguous", "readers-reversed", "writer-reversed", "both-reversed"])
@pytest.mark.parametrize("target", TARGETS)
def test_64bit_accesses_never_tear(native, target, mode):
    d = native(target)
    nw, rounds, groups = 4, 20000, 3
    words = d.buf(np.zeros(64 * nw, np.uint64))
    state, errors = d.buf(np.zeros(2, np.uint32)), d.buf(np.zeros(groups, np.uint32))
    d.launch("tear64", groups, 64, words, state, errors, nw, rounds, mode)
    assert d.get(errors, np.uint32, groups).tolist() == [0] * groups
    assert d.get(state, np.uint32, 2).tolist() == [1, 1]


@pytest.mark.parametrize("target", TARGETS)
def test_message_passing_with_a_packed_word(native, target):
    d = native(target)
    groups, rounds = 8, 20000
    slots, errors = d.buf(np.zeros(64 * groups, np.uint64)), d.buf(np.zeros(groups, np.uint32))
    d.launch("mp_packed", groups, 64, slots, errors, rounds)
    assert d.get(errors, np.uint32, groups).tolist() == [0] * groups
    assert (d.get(slots, np.uint64, 64 * groups) & np.uint64(0xFFFFFFFF) == rounds).all()


@pytest.mark.parametrize("kind", [0, 1], ids=["fences", "release-acquire"])
@pytest.mark.parametrize("target", TARGETS)
def test_message_passing_through_separate_arrays(native, target, kind):
    d = native(target)
    groups, rounds = 8, 5000
    data, flags = d.buf(np.zeros(64 * groups, np.uint64)), d.buf(np.zeros(groups, np.uint32))
    errors = d.buf(np.zeros(groups, np.uint32))
    d.launch("mp_fence", groups, 64, data, flags, errors, rounds, kind)
    assert d.get(errors, np.uint32, groups).tolist() == [0] * groups
    assert d.get(flags, np.uint32, groups).tolist() == [rounds] * groups


# ---- decoupled look-back -----------------------------------------------------------------------------------------
def lookback(d: Device, kind: str, n: int, seed: int, delay: int = 4):
    rng = np.random.default_rng(seed)
    tiles = -(-n // TILE)
    counter = d.buf(np.zeros(4, np.uint32))
    if kind == "packed":
        x = rng.integers(0, 1000, n).astype(np.uint32)
        inp, out, state = d.buf(x), d.buf(np.zeros(n, np.uint32)), d.buf(np.zeros(tiles, np.uint64))
        d.launch("lookback_packed", tiles, 128, inp, out, state, counter, n, delay)
        got, want = d.get(out, np.uint32, n), np.cumsum(x, dtype=np.uint32)
    else:
        x = rng.integers(0, 1 << 40, n).astype(np.uint64)
        inp, out, flags = d.buf(x), d.buf(np.zeros(n, np.uint64)), d.buf(np.zeros(tiles, np.uint8))
        partial, complete = d.buf(np.zeros(tiles, np.uint64)), d.buf(np.zeros(tiles, np.uint64))
        d.launch("lookback_fence", tiles, 128, inp, out, flags, partial, complete, counter, n, delay)
        got, want = d.get(out, np.uint64, n), np.cumsum(x, dtype=np.uint64)
    bad = np.nonzero(got != want)[0]
    assert bad.size == 0, (f"{bad.size} of {n} prefix sums wrong, first at {bad[0]} (tile {bad[0] // TILE}): "
                           f"{int(got[bad[0]])} instead of {int(want[bad[0]])}")
    counts = d.get(counter, np.uint32, 4)
    assert counts[0] == tiles                     # every tile took an id
    return counts


@pytest.mark.parametrize("kind", ["packed", "fence"])
@pytest.mark.parametrize("target", TARGETS)
def test_decoupled_lookback_scan(native, target, kind):
    lookback(native(target), kind, 1563 * TILE - 77, 11)


# ---- store buffering (Dekker) --------------------------------------------------------------------------------------
def store_buffering(d: Device, rounds: int, kind: int) -> np.ndarray:
    x, y = d.buf(np.zeros(rounds, np.uint32)), d.buf(np.zeros(rounds, np.uint32))
    seen, sync = d.buf(np.zeros(2 * rounds, np.uint32)), d.buf(np.zeros(1, np.uint32))
    d.launch("store_buffering", 2, 64, x, y, seen, sync, rounds, kind)
    s = d.get(seen, np.uint32, 2 * rounds).reshape(rounds, 2)
    assert np.isin(s, (0, 1)).all()
    both = np.nonzero((s == 0).all(axis=1))[0]
    assert both.size == 0, f"both workgroups read 0 in {both.size} of {rounds} rounds (first: round {both[0]})"
    return s


@pytest.mark.parametrize("kind", [0, 1], ids=["fences", "seq_cst"])
@pytest.mark.parametrize("target", TARGETS)
def test_store_buffering_with_fences(native, target, kind):
    store_buffering(native(target), 2000, kind)


# ---- atomics from every workgroup ------------------------------------------------------------------------------------
def atomics_mix(d: Device, n: int, seed: int, runs=1, concurrent=1):
    """atomics_mix over ``n`` items ``runs`` times from each of ``concurrent`` host threads at once (the same
    counters), checked against numpy."""
    v = np.random.default_rng(seed).integers(0, 1 << 20, n).astype(np.uint32)
    vin, c32, c64 = d.buf(v), d.buf(np.zeros(4, np.uint32)), d.buf(np.zeros(4, np.uint64))
    olds = [d.buf(np.zeros(n, np.uint32)) for _ in range(concurrent)]
    errors = []

    def go(k):
        try:
            for _ in range(runs):
                d.launch("atomics_mix", -(-n // 128), 128, vin, c32, c64, olds[k], n)
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)
    ts = [threading.Thread(target=go, args=(k,)) for k in range(concurrent)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors, errors
    total = runs * concurrent
    s = int(v.astype(np.uint64).sum())
    got32, got64 = d.get(c32, np.uint32, 4), d.get(c64, np.uint64, 4)
    assert got32.tolist() == [total * n % (1 << 32), total * s % (1 << 32), int(v.max()),
                              int(np.bitwise_or.reduce(np.uint32(1) << (v & np.uint32(31))))]
    assert int(got64[0]) == total * s * 0x100000001 % (1 << 64)
    assert int(got64[1]) == total * (3 * s + n * (1 << 40)) % (1 << 64)
    assert int(got64[2]) % 2 == 0 and int(got64[3]) % 2 == 1 and max(got64[2:]) < n
    if total == 1:            # the returning add's old values: every count from 0 to n - 1 once
        assert np.array_equal(np.sort(d.get(olds[0], np.uint32, n)), np.arange(n, dtype=np.uint32))


@pytest.mark.parametrize("target", TARGETS)
def test_atomics_from_every_workgroup(native, target):
    atomics_mix(native(target), 1 << 16, 7)


# ---- the numpy engine -------------------------------------------------------------------------------------------------
def test_numpy_engine_litmus(numpy_engine):
    """What terminates on the numpy engine's schedule (workgroups of a batch in lockstep): the look-back scans
    across several batches (1,500 tiles, 3,000 waves: PARTIAL predecessors everywhere), message passing,
    store buffering and atomics."""
    d = numpy_engine
    assert lookback(d, "packed", 1500 * TILE - 5, 1)[3] > 0      # look-back windows with PARTIAL tiles
    lookback(d, "fence", 1500 * TILE - 5, 2)
    slots, errors = d.buf(np.zeros(64 * 4, np.uint64)), d.buf(np.zeros(4, np.uint32))
    d.launch("mp_packed", 4, 64, slots, errors, 50)
    assert d.get(errors, np.uint32, 4).tolist() == [0] * 4
    data, flags, errors = d.buf(np.zeros(64 * 4, np.uint64)), d.buf(np.zeros(4, np.uint32)), d.buf(np.zeros(4, np.uint32))
    d.launch("mp_fence", 4, 64, data, flags, errors, 30, 0)
    assert d.get(errors, np.uint32, 4).tolist() == [0] * 4
    store_buffering(d, 40, 0)
    atomics_mix(d, 2048, 3)


def test_numpy_engine_atomics_from_two_host_threads(numpy_engine):
    """Two numpy-engine dispatches at once (two queues' packet processors) on the same counters: each atomic's
    read, operation and write back is one step for the other thread (atomics.LOCK), so the compare-and-swap
    loop loses no update."""
    atomics_mix(numpy_engine, 256, 5, runs=3, concurrent=2)


# ---- whole-wave accesses wider than a dword (the vector paths that keep each aligned 8-byte piece whole) -----------
@pytest.mark.parametrize("engine", ["native", "numpy"])
@pytest.mark.parametrize("shift", [0, 4], ids=["8-aligned", "4-aligned"])
def test_wide_lane_consecutive_accesses(engine, shift, monkeypatch):
    """dwordx2/x3/x4 loads and stores of 64 lane-consecutive values with the whole EXEC, at 8-byte aligned and
    only 4-byte aligned bases (asmkit kernels), against a numpy model of the bytes."""
    import asmkit
    monkeypatch.setenv("PYHIP_JIT_TIERING", "0")
    g = EmulatedGPU("gfx90a", watchdog_steps=200_000)
    g.engine = engine
    monkeypatch.setitem(asmkit._GPUS, "gfx90a", g)
    rng = np.random.default_rng(17 + shift)
    a, b, c = (rng.integers(0, 1 << 64, 64, dtype=np.uint64, endpoint=False) for _ in range(3))
    mem = np.concatenate([a, b, c]).view(np.uint8)               # the input buffer, 1536 bytes
    i = np.arange(64)

    def u64(buf, off):
        return buf[off[:, None] + np.arange(8)].copy().view(np.uint64)[:, 0]

    # dwordx4 at 16i + shift into v[8:11]; dwordx3 at 12i + shift into v[12:14], its first two dwords kept
    body = f"""
  v_lshlrev_b32 v12, 4, v0
  global_load_dwordx4 v[8:11], v12, s[4:5] offset:{shift}
  v_mul_u32_u24 v13, 12, v0
  global_load_dwordx3 v[16:18], v13, s[4:5] offset:{shift + 4}
  s_waitcnt vmcnt(0)
  v_xor_b32 v9, v9, v16
  v_xor_b32 v10, v10, v17
  v_xor_b32 v11, v11, v18
"""
    r0, r1 = asmkit.run(body, a, b, c)
    assert g.last_dispatch.engine == engine
    x3 = mem[(12 * i + shift + 4)[:, None] + np.arange(12)].copy().view(np.uint32).reshape(64, 3)
    x4 = mem[(16 * i + shift)[:, None] + np.arange(16)].copy().view(np.uint32).reshape(64, 4)
    want0 = x4[:, 0].astype(np.uint64) | (x4[:, 1] ^ x3[:, 0]).astype(np.uint64) << np.uint64(32)
    want1 = (x4[:, 2] ^ x3[:, 1]).astype(np.uint64) | (x4[:, 3] ^ x3[:, 2]).astype(np.uint64) << np.uint64(32)
    assert np.array_equal(r0, want0) and np.array_equal(r1, want1)

    # stores: dwordx4 of (~lane, a_lo, a_hi, lane) at 16i + shift, then dwordx2 of b at 1024 - shift + 8i; read back
    body = f"""
  v_lshlrev_b32 v12, 4, v0
  v_not_b32 v14, v0
  v_mov_b32 v15, v2
  v_mov_b32 v16, v3
  v_mov_b32 v17, v0
  global_store_dwordx4 v12, v[14:17], s[4:5] offset:{shift}
  global_store_dwordx2 v1, v[4:5], s[4:5] offset:{1024 - shift}
  s_waitcnt vmcnt(0)
  global_load_dwordx2 v[8:9], v1, s[4:5] offset:{shift}
  global_load_dwordx2 v[10:11], v1, s[4:5] offset:{1024 - shift}
  s_waitcnt vmcnt(0)
"""
    r0, r1 = asmkit.run(body, a, b, c)
    m = mem.copy()
    x = np.stack([~i.astype(np.uint32), (a & np.uint64(0xFFFFFFFF)).astype(np.uint32),
                  (a >> np.uint64(32)).astype(np.uint32), i.astype(np.uint32)], axis=1)
    m[(16 * i + shift)[:, None] + np.arange(16)] = x.view(np.uint8).reshape(64, 16)
    m[(1024 - shift + 8 * i)[:, None] + np.arange(8)] = b.view(np.uint8).reshape(64, 8)
    assert np.array_equal(r0, u64(m, 8 * i + shift))
    assert np.array_equal(r1, u64(m, 1024 - shift + 8 * i))
