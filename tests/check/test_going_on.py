"""memcheck goes on after a bad access, as the GPU would (docs/check.md): every bad access of a run reported
once per instruction with its lane count, and the program's own results those of a run without the check
(past the end but inside the allocation's address space: performed; nowhere: load 0, store dropped — where
the GPU faults); and ``--check leaks``.  Both engines, hipcc programs with planted bugs."""
import json

import pytest
import test_memcheck_programs as programs

_exec, _line = programs._exec, programs._line
build = programs.build          # the hipcc programs, built once per module


@pytest.mark.parametrize("engine", ["native", "numpy"])
def test_every_bad_access_reported_and_results_unchanged(build, tmp_path, engine):
    exe = build("going_on", True)
    plain = _exec(exe, engine=engine)
    assert plain.stdout.splitlines() == ["back hipSuccess 1006", "far hipErrorIllegalAddress -1"], plain.stdout
    log = tmp_path / "log.jsonl"
    r = _exec(exe, "--check", "memcheck", "--check-log", str(log), engine=engine)
    # the stores past the end were performed and read back; the far read (a GPU faults) read 0
    assert r.returncode == 1 and r.stdout.splitlines() == ["back hipSuccess 1006", "far hipSuccess 0"], r.stdout
    write, back, far = [json.loads(x) for x in log.read_text().splitlines()]
    assert write["kind"] == "out-of-bounds" and write["kernel"] == "write_past(int*, int)", write
    assert write["count"] == 16 and write["address"] == write["allocation"]["start"] + 4000, write
    assert write["lane"] == 1000 % 64 and write["workgroup"] == [1000 // 256, 0, 0], write
    assert write["source"].endswith(f"going_on.hip:{_line('going_on.hip', 'WRITE-LINE')}"), write
    assert back["kind"] == "out-of-bounds" and back["address"] == back["allocation"]["start"] + 4020, back
    assert far["kind"] == "invalid-address" and "allocation" not in far, far
    assert far["address"] == write["allocation"]["start"] + (64 << 20), far
    for rep in (back, far):
        assert rep["kernel"] == "read_back(int const*, int*, int)" and rep["count"] == 1, rep
        assert rep["source"].endswith(f"going_on.hip:{_line('going_on.hip', 'READ-LINE')}"), rep
    assert "3 distinct error(s) found" in r.stderr and "18 occurrence(s)" in r.stderr, r.stderr


@pytest.mark.parametrize("engine", ["native", "numpy"])
def test_leaks_at_exit(build, tmp_path, engine):
    exe = build("leak", True)
    log = tmp_path / "log.jsonl"
    r = _exec(exe, "--check", "leaks", "--check-log", str(log), engine=engine)
    assert r.returncode == 1 and r.stdout.strip() == "t[777] 777", r.stdout + r.stderr
    reps = [json.loads(x) for x in log.read_text().splitlines()]
    assert [(x["checker"], x["kind"], x["allocation"]["size"]) for x in reps] == [("leaks", "leak", 3000),
                                                                                  ("leaks", "leak", 4000)], reps
    main, helper = (x["allocation"]["allocated"] for x in reps)
    assert main.startswith("hipMalloc from main at") and main.endswith(f"leak.hip:{_line('leak.hip', 'MAIN-LEAK')}")
    assert helper.startswith("hipMalloc from make_table(int) at"), helper
    assert helper.endswith(f"leak.hip:{_line('leak.hip', 'HELPER-LEAK')}"), helper
    assert "leaks: 7000 bytes in 2 allocation(s) never freed" in r.stderr, r.stderr
    assert "2 distinct error(s) found (2 leaks); 2 occurrence(s)" in r.stderr, r.stderr
    clean = _exec(build("clean", True), "--check", "all", engine=engine)
    assert clean.returncode == 0 and "no errors found" in clean.stderr, clean.stdout + clean.stderr
    plain = _exec(exe, engine=engine)
    assert plain.returncode == 0 and plain.stdout == r.stdout and "pyhip check" not in plain.stderr


@pytest.mark.parametrize("engine", ["native", "numpy"])
def test_device_malloc_heap_is_not_a_leak(build, tmp_path, engine):
    """Device-side malloc/free in every thread (tests/check/src/device_malloc.hip): the slabs of device malloc's
    heap, which the runtime's hostcall service allocates on its own thread, are not the program's leaks (each was
    reported as "allocated by _run from threading.py")."""
    log = tmp_path / "log.jsonl"
    r = _exec(build("device_malloc", False), "--check", "all", "--check-log", str(log), engine=engine)
    assert r.stdout == "hipSuccess mismatches 0\n", r.stdout + r.stderr
    assert r.returncode == 0 and log.read_text() == "" and "no errors found" in r.stderr, r.stderr
