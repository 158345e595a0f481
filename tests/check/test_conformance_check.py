"""tools/hip_conformance.py --check: a case runs under ``pyhip exec --check CHECKS --check-log FILE``; its reports
are counted from the log with their kinds and kernels, and a Catch2 run that passed stays passed though the
check made the exit status 1.  Run here on hipcc programs of tests/check/src (a leak, a clean one) and a
stand-in Catch2 program."""
import importlib.util
import json
import os
import stat

import test_memcheck_programs as programs

build = programs.build
_spec = importlib.util.spec_from_file_location("hip_conformance", programs.ROOT / "tools" / "hip_conformance.py")
hc = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(hc)


def test_case_with_reports_and_a_clean_case(build, tmp_path):
    logs = tmp_path / "logs"
    leak = hc.run_case(build("leak", False), "-", "pyhip", 300, ("leaks", hc.check_log_path(logs, "leak::-")))
    assert leak["status"] == "failed" and leak["reports"] == 2, leak       # (no Catch2: the exit status counts)
    assert leak["report_kinds"] == {"leaks leak": 2} and leak["kernels"] == ["-"], leak
    clean = hc.run_case(build("clean", False), "-", "pyhip", 300, ("all", hc.check_log_path(logs, "clean::-")))
    assert clean["status"] == "passed" and clean["reports"] == 0 and clean["report_kinds"] == {}, clean
    summary = hc.check_summary({"leak::-": leak, "clean::-": clean}, "all")
    assert summary.splitlines()[0].startswith("--check all: 1 of 2 cases with reports"), summary
    assert "leak::-: 2 leaks leak" in summary, summary


def test_catch2_pass_with_reports_is_a_pass(build, tmp_path):
    """A program that prints Catch2's success line and leaks: passed, with its reports counted."""
    exe = tmp_path / "fake_catch"
    exe.write_text(f"#!/bin/sh\n{build('leak', False)}\necho 'All tests passed (1 assertion in 1 test case)'\n")
    exe.chmod(exe.stat().st_mode | stat.S_IEXEC)
    log = hc.check_log_path(tmp_path, "fake::x")
    got = hc.run_case(exe, "x", "pyhip", 300, ("leaks", log))
    assert got["status"] == "passed" and got["reports"] == 2, got
    assert [json.loads(x)["checker"] for x in log.read_text().splitlines()] == ["leaks", "leaks"]


def test_log_names_and_reading(tmp_path):
    a, b = hc.check_log_path(tmp_path, "exe::case a/b"), hc.check_log_path(tmp_path, "exe::case a:b")
    assert a != b and a.parent == tmp_path and "/" not in a.name and " " not in a.name
    a.write_text('{"checker": "memcheck", "kind": "out-of-bounds"}\nnot json\n{"totals": [3]}\n')
    assert hc.read_check_log(a) == [{"checker": "memcheck", "kind": "out-of-bounds"}]
    assert hc.read_check_log(tmp_path / "missing.jsonl") == []
    assert os.path.basename(str(a)).endswith(".jsonl")
