"""racecheck, global memory (docs/check.md, pyhip/sanitizer/globalrace.py): lanes of different waves or
workgroups touching the same global bytes in one dispatch, one of them with a plain write, nothing ordering
them.  Planted bugs (an in-place stencil, a "last block" sum without its atomic counter) are reported with both
accesses and source lines; race-free kernels (global atomics, the threadfence reduction, a same-value flag, a
compare-and-swap loop, own elements) are silent under ``--check all``; the ordering rules on a shadow."""
import json

import numpy as np
import pytest
import test_memcheck_programs as programs
import test_racecheck

from pyhip.sanitizer import globalrace

_exec, _line = programs._exec, programs._line
build = programs.build


@pytest.mark.parametrize("engine", ["native", "numpy"])
def test_planted_races(build, tmp_path, engine):
    log = tmp_path / "log.jsonl"
    r = _exec(build("global_race", True), "--check", "racecheck", "--check-log", str(log), engine=engine)
    assert r.returncode == 1, r.stdout + r.stderr
    assert r.stdout.splitlines() == ["smooth_in_place hipSuccess mismatches 0", "last_block_sum hipSuccess right"]
    reps = {x["kind"]: x for x in map(json.loads, log.read_text().splitlines())}
    assert set(reps) == {"global-write-after-read", "global-read-after-write"}, reps
    st, lb = reps["global-write-after-read"], reps["global-read-after-write"]
    # the first lane of each wave but the first overwrites what the last lane of the wave before read: 299
    # elements, waves of 64: four wave boundaries (one of them between workgroups)
    assert st["kernel"] == "smooth_in_place(int*, int)" and st["count"] == 4, st
    assert st["lane"] == 0 and st["other_lane"] == 63 and st["other_wave"] == st["wave"] - 1, st
    assert st["source"].endswith(f"global_race.hip:{_line('global_race.hip', 'RACE-WRITE')}"), st
    assert st["other_source"].endswith(f"global_race.hip:{_line('global_race.hip', 'RACE-READ')}"), st
    assert st["allocation"]["size"] >= 300 * 4, st          # (without memcheck: as the table keeps it, in pages)
    assert lb["kernel"].startswith("last_block_sum(") and lb["workgroup"] == [4, 0, 0], lb
    assert lb["other_workgroup"] == [0, 0, 0] and lb["address"] == lb["allocation"]["start"], lb
    assert lb["source"].endswith(f"global_race.hip:{_line('global_race.hip', 'PARTIAL-READ')}"), lb
    assert lb["other_source"].endswith(f"global_race.hip:{_line('global_race.hip', 'PARTIAL-WRITE')}"), lb


@pytest.mark.parametrize("engine", ["native", "numpy"])
def test_race_free_kernels_are_silent(build, engine):
    r = _exec(build("global_clean", False), "--check", "all", engine=engine)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.splitlines() == ["histogram mismatches 0", "fence_sum right", "any_large 1", "float_max 50",
                                     "own_elements hipSuccess mismatches 0"], r.stdout
    assert "pyhip check: no errors found" in r.stderr, r.stderr


def test_alike_on_both_engines(build, tmp_path):
    """(test_racecheck.alike_on_both_engines) the stencil and the "last block" sum on random data of a random
    size: the same reports from both engines, and the counts the size implies."""
    reps, n = test_racecheck.alike_on_both_engines(build, tmp_path, "global_race")
    kinds = {r["kind"]: r for r in reps}
    assert set(kinds) == {"global-write-after-read", "global-read-after-write"}, kinds
    # the first lane of a wave writes the element the last lane of the wave before read (while i + 1 < n)
    assert kinds["global-write-after-read"]["count"] == len([k for k in range(1, n) if 64 * k + 1 < n])
    # the last workgroup reads every partial sum (the compiler unrolls that loop: a report per load instruction)
    raws = [r for r in reps if r["kind"] == "global-read-after-write"]
    assert all(r["workgroup"] == [(n + 63) // 64 - 1, 0, 0] for r in raws), raws
    assert [0, 0, 0] in [r["other_workgroup"] for r in raws], raws


# -- the ordering rules on a shadow: 2 workgroups of 2 waves (global waves 0, 1 | 2, 3) ----------------------------
def _unordered(sh, u, t, v):
    return bool(sh.unordered(np.array([u]), np.array([t]), np.array([v]))[0])


def test_rule_barrier_orders_one_workgroup_only():
    sh = globalrace.Shadow(2)
    sh.time = 5                               # an access of wave 0 at time 5
    sh.time = 6
    assert _unordered(sh, 0, 5, 1) and _unordered(sh, 0, 5, 2) and not _unordered(sh, 0, 5, 0)
    sh.barrier([0])                           # workgroup 0 (waves 0, 1) passes a barrier
    assert not _unordered(sh, 0, 5, 1) and _unordered(sh, 0, 5, 2)


def test_rule_atomics_chain_orders_workgroups():
    sh = globalrace.Shadow(2)
    sh.time = 5                               # wave 1 writes at 5
    sh.time = 6
    sh.atomic(np.array([3]))                  # wave 3's atomic before wave 1's: orders nothing
    assert _unordered(sh, 1, 5, 3)
    sh.time = 7
    sh.atomic(np.array([0]))                  # wave 0 (after a barrier of workgroup 0 that followed the write)
    assert _unordered(sh, 1, 5, 3)            # no barrier yet: wave 0's atomic is not after wave 1's write
    sh.barrier([0])
    sh.time = 10
    sh.atomic(np.array([0]))
    sh.time = 11
    sh.atomic(np.array([2]))                  # wave 2 of workgroup 1, after
    assert not _unordered(sh, 1, 5, 2) and _unordered(sh, 1, 5, 3)
    sh.barrier([1])                           # wave 3 learns wave 2's atomic
    assert not _unordered(sh, 1, 5, 3)


@pytest.mark.parametrize("engine", ["native", "numpy"])
def test_grid_sync_orders_workgroups(build, tmp_path, engine):
    """Cooperative groups' grid.sync() (hipcc 5.2: a workgroup barrier, ds_gws_barrier by one wave of each
    workgroup, a workgroup barrier) orders every workgroup's accesses before it against every workgroup's after
    it: the ping-pong stencil with it is silent (it was reported before the check knew GWS barriers), the same
    stencil with only __syncthreads() between its steps is reported (random size, not a multiple of the block)."""
    n = int(np.random.default_rng().integers(300, 1200))
    log = tmp_path / "log.jsonl"
    r = _exec(build("grid_sync", True), "--check", "all", "--check-log", str(log), engine=engine, args=(str(n),))
    assert r.returncode == 1, r.stdout + r.stderr
    assert r.stdout.splitlines() == ["relax_synced hipSuccess right", "relax_unsynced hipSuccess"], r.stdout
    reps = [json.loads(x) for x in log.read_text().splitlines()]
    assert reps and all(x["kernel"] == "relax_unsynced(float*, float*, int, int)" for x in reps), reps
    assert {x["kind"] for x in reps} <= {"global-read-after-write", "global-write-after-read"}, reps
    assert any(x["workgroup"] != x["other_workgroup"] for x in reps), reps
    step = _line("grid_sync.hip", "STEP")
    assert all(x["source"].endswith(f"grid_sync.hip:{step}") for x in reps), reps


def test_empty_kernel_at_the_largest_grid(build):
    """A lone s_endpgm over 2^31 - 1 workgroups retires at once under --check all, as without checks (it touches
    nothing; racecheck's one-at-a-time schedule ran every workgroup: minutes)."""
    exe = build("nop_grid", False)
    r = _exec(exe, "--check", "all", timeout=120)
    assert r.returncode == 0 and r.stdout == "2147483647 hipSuccess\n", r.stdout + r.stderr
    assert "pyhip check: no errors found" in r.stderr, r.stderr
