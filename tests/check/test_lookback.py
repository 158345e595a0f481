"""A decoupled look-back scan whose tile id is blockIdx.x (tests/check/src/lookback.hip): workgroup i's first
wave spins on the flag of workgroup i-1 while its second wave waits at a barrier.  It ends on both engines,
plain and under ``--check all`` (the numpy engine's fair turns: pyhip/emu/engine.py ``SPIN_TURNS``), with
numpy's prefix sums; racecheck is silent when a ``__threadfence()`` orders the data store before the flag
store and reports both the flag and the data loads when it does not (globalrace.publish_stores)."""
import json

import numpy as np
import pytest
import test_memcheck_programs as programs

_exec, _line = programs._exec, programs._line
build = programs.build


def _sums(stdout: str, n: int) -> np.ndarray:
    """The program's prefix sums, checked against numpy's cumsum of the input it printed beside them (its
    output buffer was poisoned with 0xff bytes before the launch)."""
    got = np.array(stdout.split(), np.uint32).reshape(-1, 2)
    assert got.shape[0] == n, stdout[-300:]
    bad = np.nonzero(got[:, 1] != np.cumsum(got[:, 0], dtype=np.uint32))[0]
    assert bad.size == 0, f"{bad.size} of {n} prefix sums wrong, first at {bad[0]} (tile {bad[0] // 128})"
    return got[:, 1]


N = 1000                                              # 8 tiles of 128, the last one partial


@pytest.fixture(scope="module")
def native_sums(build):
    r = _exec(build("lookback", False), args=(str(N), "1"))
    assert r.returncode == 0 and "scan hipSuccess" in r.stderr, r.stderr
    return _sums(r.stdout, N)


def test_lookback_ends_on_the_numpy_engine(build, native_sums):
    r = _exec(build("lookback", False), engine="numpy", args=(str(N), "1"))
    assert r.returncode == 0 and "scan hipSuccess" in r.stderr, r.stderr
    assert np.array_equal(_sums(r.stdout, N), native_sums)


def test_lookback_under_check_all_is_silent(build, native_sums):
    r = _exec(build("lookback", False), "--check", "all", args=(str(N), "1"))
    assert r.returncode == 0, r.stderr
    assert "pyhip check: no errors found" in r.stderr, r.stderr
    assert np.array_equal(_sums(r.stdout, N), native_sums)


def test_missing_threadfence_is_reported(build, tmp_path):
    log = tmp_path / "log.jsonl"
    r = _exec(build("lookback", True), "--check", "racecheck", "--check-log", str(log), args=(str(N), "0"))
    assert r.returncode == 1, r.stderr
    reps = [json.loads(x) for x in log.read_text().splitlines()]
    lines = {int(x["source"].rsplit(":", 1)[1]): x for x in reps}
    spin, data = _line("lookback.hip", "SPIN") - 1, _line("lookback.hip", "DATA-STORE")
    flag = _line("lookback.hip", "FLAG-STORE")
    assert all(x["kind"] == "global-read-after-write" and x["kernel"].startswith("scan_unfenced(") for x in reps), reps
    assert set(lines) == {spin, spin + 3}, lines           # the flag's load and the data's load after it
    assert lines[spin]["other_source"].endswith(f"lookback.hip:{flag}"), lines[spin]
    assert lines[spin + 3]["other_source"].endswith(f"lookback.hip:{data}"), lines[spin + 3]
    assert all(x["workgroup"][0] == x["other_workgroup"][0] + 1 for x in reps), reps
