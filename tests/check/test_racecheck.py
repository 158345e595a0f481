"""racecheck, LDS (docs/check.md): two waves of a workgroup touching the same LDS bytes with no barrier
between them, at least one writing.  A hipcc block reduction missing one ``__syncthreads()`` (-O1 and -O2,
with and without -g) is reported once, with both accesses (kernel, waves, lanes, PCs, instructions and, with
-g, both source lines); kernels without a race — the same reduction with its barriers, a shuffle-only warp
reduction, shared atomics, a flag every wave sets to the same value, an exchange within one wave, a
compare-and-swap loop — are
silent under ``--check all``; each rule of the check on a wave state of its own (below)."""
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import test_memcheck_programs as programs

import pyhip
from pyhip.emu.state import WaveState
from pyhip.sanitizer import parse, racecheck

_exec, _line = programs._exec, programs._line
build = programs.build          # the hipcc programs, built once per module


# (the native engine keeps its race shadows in C, native/engine/check.h: every program test on both engines)
@pytest.mark.parametrize("engine", ["native", "numpy"])
@pytest.mark.parametrize("opt,debug", [("-O2", True), ("-O1", False)])
def test_missing_barrier(build, tmp_path, opt, debug, engine):
    exe = build("lds_race", debug, opt)
    log = tmp_path / "log.jsonl"
    r = _exec(exe, "--check", "racecheck", "--check-log", str(log), engine=engine)
    assert r.returncode == 1, r.stdout + r.stderr
    assert r.stdout.startswith("block_sum hipSuccess"), r.stdout
    reports = [json.loads(x) for x in log.read_text().splitlines()]
    assert len(reports) == 1, reports
    rep = reports[0]
    assert rep["checker"] == "racecheck" and rep["kind"] == "lds-read-after-write", rep
    assert rep["kernel"] == "block_sum(int*, int const*, int)", rep
    # waves 0 and 1 read s[t + 128], which waves 2 and 3 wrote: every lane of the first step, every workgroup
    assert rep["wave"] in (0, 1) and rep["other_wave"] == rep["wave"] + 2 and rep["other_lane"] == rep["lane"], rep
    assert rep["address"] == (rep["other_wave"] * 64 + rep["lane"]) * 4, rep
    assert rep["count"] == 4 * 128, rep
    assert rep["instruction"].startswith("ds_read") and rep["other_instruction"].startswith("ds_write"), rep
    assert rep["allocation"]["size"] == 256 * 4, rep
    if debug:
        assert rep["source"].endswith(f"lds_race.hip:{_line('lds_race.hip', 'RACE-READ')}"), rep
        assert rep["other_source"].endswith(f"lds_race.hip:{_line('lds_race.hip', 'RACE-WRITE')}"), rep
    else:
        assert "source" not in rep and "other_source" not in rep, rep
    assert "other access: wave" in r.stderr and "1 distinct error(s) found" in r.stderr, r.stderr


@pytest.mark.parametrize("engine", ["native", "numpy"])
def test_race_free_kernels_are_silent(build, engine):
    exe = build("lds_clean", True)
    r = _exec(exe, "--check", "all", engine=engine)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.splitlines() == ["block_sum mismatches 0", "warp_sum mismatches 0", "histogram mismatches 0",
                                     "any_negative mismatches 0", "cas_sum mismatches 0",
                                     "pair_swap mismatches 0 hipSuccess"], r.stdout
    assert "pyhip check: no errors found" in r.stderr, r.stderr


def engine_reports(exe: Path, engine: str, seed: int, cache: Path, limit: int = 0) -> tuple[list, dict, bool]:
    """(reports with their counts, the native engine's statistics, whether its disk cache got kernels) of the
    kernels of ``exe`` run by :func:`race_kernels` with ``seed`` in a process on ``engine`` (``limit``: the
    sanitizer's RACE_MAX_INSTRUCTIONS there, 0 as it is)."""
    here = Path(__file__).resolve().parent
    path = [str(here), str(here.parent), str(here.parents[1]), os.environ.get("PYTHONPATH", "")]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(path), PYHIP_ENGINE=engine, PYHIP_JIT_TIERING="0",
               PYHIP_JIT_CACHE_DIR=str(cache))
    env.pop("PYHIP_CHECK", None)
    r = subprocess.run([sys.executable, "-c", "import sys, test_racecheck as t; t.race_kernels(*sys.argv[1:])",
                        str(exe), str(seed), str(limit)], cwd=here, env=env, capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    got = json.loads(r.stdout.splitlines()[-1])
    return got["reports"], got["stats"], any(cache.rglob("*.*"))


def race_kernels(exe: str, seed: str, limit: str = "0") -> None:
    """The racy kernels of lds_race.hip / global_race.hip on random data of a random size (not a multiple of
    the block size) under ``pyhip.check("racecheck")``, their results checked against numpy's; prints the
    reports (with counts) and the native engine's statistics as JSON."""
    from pyhip.emu.device import GPUS
    if int(limit):
        from pyhip import sanitizer
        sanitizer.RACE_MAX_INSTRUCTIONS = int(limit)
    rng = np.random.default_rng(int(seed))
    prog = pyhip.load(exe)
    n = int(rng.integers(700, 1300))
    host = rng.integers(-1000, 1000, n).astype(np.int32)
    with pyhip.check("racecheck", echo=False) as session:
        if "lds_race" in exe:
            blocks = (n + 255) // 256
            out = pyhip.to_device(np.full(blocks, -1, np.int32))
            prog.kernel("_Z9block_sumPiPKii")(blocks, 256, out, pyhip.to_device(host), np.int32(n))
            pyhip.synchronize()
            np.testing.assert_array_equal(out.get(), np.add.reduceat(host, np.arange(0, n, 256)))
        else:
            a = pyhip.to_device(host)
            prog.kernel("_Z15smooth_in_placePii")((n + 127) // 128, 128, a, np.int32(n))
            pyhip.synchronize()
            np.testing.assert_array_equal(a.get()[:-1], (host[:-1] + host[1:]) // 2 +
                                          (((host[:-1] + host[1:]) % 2 != 0) & (host[:-1] + host[1:] < 0)))
            blocks = (n + 63) // 64
            partial, total = pyhip.to_device(np.zeros(blocks, np.int32)), pyhip.to_device(np.zeros(1, np.int32))
            prog.kernel("_Z14last_block_sumPiS_PKii")(blocks, 64, partial, total, pyhip.to_device(host), np.int32(n))
            pyhip.synchronize()
            assert int(total.get()[0]) == int(host.sum())
    reps = [dict(r, count=session.count(r)) for r in session.reports]
    nat = [g._native for g in GPUS if g._native is not None]
    stats = dict(nat[0].stats) if nat else {}
    stats.update({f"fallback: {k}": v for k, v in (nat[0].fallbacks.items() if nat else ())})
    print(json.dumps({"reports": reps, "stats": stats}, default=str))


def alike_on_both_engines(build, tmp_path, name: str) -> tuple[list, int]:
    """The racy kernels of ``name`` on random data of a random size: the native engine (its race shadows in C;
    its kernels compiled, as its disk cache shows, and run as racecheck dispatches) reports what the numpy engine
    does — kinds, both accesses, first lanes, addresses, counts.  Returns the reports and the size."""
    seed = int(np.random.default_rng().integers(1 << 30))
    exe = build(name, True)
    runs = {e: engine_reports(exe, e, seed, tmp_path / f"jit-{e}") for e in ("numpy", "native")}
    (native, nstats, ncache), (numpy_, pstats, pcache) = runs["native"], runs["numpy"]
    assert native == numpy_, (seed, native, numpy_)
    assert nstats.get("racecheck", 0) >= 1 and not nstats.get("fallback") and ncache, nstats
    assert not pstats.get("racecheck") and not pcache, pstats
    return native, int(np.random.default_rng(seed).integers(700, 1300))


def test_alike_on_both_engines(build, tmp_path):
    reps, n = alike_on_both_engines(build, tmp_path, "lds_race")
    (rep,) = reps
    assert rep["kind"] == "lds-read-after-write" and rep["count"] == (n + 255) // 256 * 128, rep


def test_flat_accesses_alike_on_both_engines(build, tmp_path):
    """LDS through generic pointers (tests/check/src/lds_flat_race.hip: flat_store / flat_load / flat atomic
    in the LDS aperture, in functions of their own): the read of another wave's slot with no barrier is
    reported alike by both engines, with the kernel that ran; the flat atomic on a counter is silent."""
    n = int(np.random.default_rng().integers(300, 1300))
    exe = build("lds_flat_race", True)
    seen = {}
    for engine in ("numpy", "native"):
        log = tmp_path / f"{engine}.jsonl"
        r = _exec(exe, "--check", "racecheck", "--check-log", str(log), engine=engine, args=(str(n),))
        assert r.returncode == 1 and r.stdout == "shift hipSuccess\n", r.stdout + r.stderr
        seen[engine] = [json.loads(x) for x in log.read_text().splitlines()]
    assert seen["native"] == seen["numpy"], seen
    (rep,) = seen["native"]
    assert rep["kind"] == "lds-read-after-write" and rep["kernel"] == "shift(int*, int const*, int)", rep
    assert rep["instruction"].startswith("flat_load") and rep["other_instruction"].startswith("flat_store"), rep
    assert rep["source"].endswith(f"lds_flat_race.hip:{_line('lds_flat_race.hip', 'FLAT-READ')}"), rep
    assert rep["other_source"].endswith(f"lds_flat_race.hip:{_line('lds_flat_race.hip', 'FLAT-WRITE')}"), rep
    assert rep["count"] == (n + 255) // 256 * 256, rep           # every lane reads a slot another wave wrote


def test_too_large_for_the_native_shadow(build, tmp_path):
    """A program of more instructions than the C shadow names (the limit lowered to 1 here) runs its kernels on
    the numpy engine while racecheck is on — never natively unchecked — and is reported as before."""
    seed = int(np.random.default_rng().integers(1 << 30))
    exe = build("lds_race", False)
    reps, stats, _ = engine_reports(exe, "native", seed, tmp_path / "jit", limit=1)
    assert not stats.get("racecheck") and stats.get("fallback", 0) >= 1, stats
    assert any("too large" in k for k in stats), stats
    assert reps == engine_reports(exe, "numpy", seed, tmp_path / "jit-numpy")[0]


def test_context_manager(build):
    """``with pyhip.check("racecheck")`` from Python, on the kernel of the hipcc program (its host ELF loaded):
    the race reported with its count, the block sums right.  In a process of its own: queues made while the
    check is on keep the engine's Python path after the check ends (docs/check.md)."""
    here = Path(__file__).resolve().parent
    path = [str(here), str(here.parent), str(here.parents[1]), os.environ.get("PYTHONPATH", "")]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(path))
    r = subprocess.run([sys.executable, "-c", "import sys, test_racecheck as t; t.context_manager(sys.argv[1])",
                        str(build("lds_race", False))], cwd=here, env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr


def context_manager(exe):
    n = 1000 + int(np.random.default_rng().integers(1, 200))
    host = np.random.default_rng(n).integers(-50, 50, n).astype(np.int32)
    kernel = pyhip.load(exe).kernel("_Z9block_sumPiPKii")
    x = pyhip.to_device(host)
    blocks = (n + 255) // 256
    out = pyhip.to_device(np.full(blocks, -1, np.int32))
    with pyhip.check("racecheck", echo=False) as session:
        kernel(blocks, 256, out, x, np.int32(n))
        pyhip.synchronize()
    (rep,) = session.reports
    assert rep["kind"] == "lds-read-after-write" and rep["kernel"] == "block_sum(int*, int const*, int)", rep
    assert session.count(rep) == blocks * 128, session.count(rep)
    np.testing.assert_array_equal(out.get(), np.add.reduceat(host, np.arange(0, n, 256)))


def test_racecheck_is_one_of_all():
    assert "racecheck" in parse("all") and parse("racecheck, memcheck") == ("memcheck", "racecheck")


# -- the rules, on one workgroup of 4 waves and 64 bytes of LDS ------------------------------------------------
def _state():
    st = WaveState(4, 1, 1, 64, 0)
    st.wave_in_group[:] = np.arange(4)
    return st


def _do(st, wave, kind, offsets, value=None, size=4, pc=0x100):
    """Wave ``wave``'s lanes 0.. access ``size`` bytes at LDS ``offsets``; a write stores ``value`` (and is
    performed, as the engine does after the check)."""
    o = np.asarray(offsets, np.int64)
    lanes = np.arange(len(o))
    data = None
    if kind != "read":
        data = np.broadcast_to(np.asarray(value, np.uint32).reshape(-1, 1), (len(o), 1)).view(np.uint8)[:, :size]
        data = np.ascontiguousarray(data)
    found = racecheck.access(st, np.array([wave]), np.zeros(len(o), np.int64), lanes, o, size, data, kind, pc)
    if data is not None:
        st.lds[0, o[:, None] + np.arange(size)] = data
    return [(k, racecheck.unpack(other)[1]) for k, _e, _b, other, _n in found]


def test_rule_different_waves_without_barrier_race():
    rng = np.random.default_rng(27)
    st = _state()
    a, b = rng.choice(4, 2, replace=False)
    slot = int(rng.integers(0, 16)) * 4
    assert _do(st, a, "write", [slot], 7) == []
    assert _do(st, b, "read", [slot]) == [("read-after-write", a)]
    assert _do(st, b, "write", [slot], 9) == [("write-after-write", a)]
    st = _state()
    assert _do(st, a, "read", [slot]) == []
    assert _do(st, b, "write", [slot], 3) == [("write-after-read", a)]
    assert _do(st, a, "read", [slot + 1], size=1) == [("read-after-write", b)]        # per byte
    assert _do(st, a, "read", [slot + 4]) == []                                        # other bytes


def test_rule_barrier_orders():
    st = _state()
    _do(st, 0, "write", [8], 5)
    _do(st, 1, "read", [12])
    st.shadow.barrier(np.array([True]), st.lds.shape[1])
    assert _do(st, 1, "read", [8]) == [] and _do(st, 0, "write", [12], 1) == []
    assert _do(st, 2, "write", [8], 6) == [("write-after-read", 1)]          # since the barrier


def test_rule_one_wave_never_races_with_itself():
    st = _state()
    _do(st, 3, "write", [0, 4, 8], [1, 2, 3])
    assert _do(st, 3, "read", [4, 8, 0]) == [] and _do(st, 3, "write", [0, 4], [9, 9]) == []
    assert _do(st, 3, "write", [16, 16], [1, 2]) == []                 # two lanes of one wave, one dword


def test_rule_atomics_against_atomics_only():
    st = _state()
    for wave in range(4):
        assert _do(st, wave, "atomic", [0], 1) == []
    assert _do(st, 1, "read", [0]) == [("read-after-write", 3)]       # a plain read of another wave races
    st = _state()
    _do(st, 0, "write", [4], 1)
    assert _do(st, 1, "atomic", [4], 2) == [("write-after-write", 0)]


def test_rule_same_value_writes():
    st = _state()
    _do(st, 0, "write", [20], 0)                 # a first write always changes the byte (LDS starts undefined)
    assert _do(st, 1, "read", [20]) == [("read-after-write", 0)]
    assert _do(st, 2, "write", [20], 0) == []    # the value it holds: no hazard with wave 1's read
    st = _state()
    _do(st, 0, "write", [20], 1)
    assert _do(st, 1, "write", [20], 1) == [] and _do(st, 2, "write", [20], 1) == []
    assert _do(st, 3, "read", [20]) == [("read-after-write", 0)]        # wave 0 changed it
    assert _do(st, 3, "write", [20], 2) == [("write-after-write", 0)]


def test_rule_one_instruction_of_several_waves():
    """Waves at the same PC run an instruction together: lanes of different waves storing different values to
    one byte race; the same value does not."""
    st = _state()
    st.lds[0, :8] = 1
    both = np.array([0, 1])
    o = np.array([0, 0], np.int64)
    same = np.ones((2, 4), np.uint8)
    racecheck.access(st, both, np.array([0, 1]), np.array([5, 5]), o, 4, same, "write", 0x40)
    assert racecheck.access(st, both, np.array([0, 1]), np.array([5, 5]), o + 4, 4, same, "write", 0x40) == []
    diff = np.array([[1, 0, 0, 0], [2, 0, 0, 0]], np.uint8)
    got = racecheck.access(st, both, np.array([0, 1]), np.array([5, 5]), o + 8, 4, diff, "write", 0x44)
    assert [g[0] for g in got] == ["write-after-write"] and racecheck.unpack(got[0][3]) == (0x44, 0, 5), got
