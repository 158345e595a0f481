"""tools/amd_libraries.py's reading of googletest's output: every test a suite names gets the status its
``[ OK ]`` / ``[ FAILED ]`` / ``[ SKIPPED ]`` line gives it, including parameterized and typed tests, whose
lines name the parameter after the test (``, where GetParam() = ...``); a test with no line did not run."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))
import amd_libraries as al  # noqa: E402

OUT = """\
[==========] Running 4 tests from 1 test suite.
[ RUN      ] csrmv_bin/parameterized_csrmv_bin.csrmv_bin_float/0
Cannot open [read] nos1.bin
[  FAILED  ] csrmv_bin/parameterized_csrmv_bin.csrmv_bin_float/0, where GetParam() = (-1, 1, 0.5, "nos1") (12 ms)
[ RUN      ] csrmv_bin/parameterized_csrmv_bin.csrmv_bin_float/1
[       OK ] csrmv_bin/parameterized_csrmv_bin.csrmv_bin_float/1 (3 ms)
[ RUN      ] csrmv_bin/parameterized_csrmv_bin.csrmv_bin_double/0
[  SKIPPED ] csrmv_bin/parameterized_csrmv_bin.csrmv_bin_double/0 (0 ms)
[==========] 4 tests from 1 test suite ran. (15 ms total)
[  FAILED  ] 1 test, listed below:
[  FAILED  ] csrmv_bin/parameterized_csrmv_bin.csrmv_bin_float/0, where GetParam() = (-1, 1, 0.5, "nos1")
"""
SUITE = "csrmv_bin/parameterized_csrmv_bin"
TESTS = ["csrmv_bin_float/0", "csrmv_bin_float/1", "csrmv_bin_double/0", "csrmv_bin_double/1"]


def test_parameterized_results_are_read():
    st = al.gtest_statuses(OUT, SUITE, TESTS, 1)
    assert st == {"csrmv_bin_float/0": "failed", "csrmv_bin_float/1": "passed",
                  "csrmv_bin_double/0": "skipped", "csrmv_bin_double/1": "not run"}


def test_typed_failure_and_timeout():
    out = "[  FAILED  ] RocprimDeviceScanTests/17.InclusiveScan, where TypeParam = DeviceScanParams<int> (40 ms)\n"
    st = al.gtest_statuses(out, "RocprimDeviceScanTests/17", ["InclusiveScan", "ExclusiveScan"], None)
    assert st == {"InclusiveScan": "failed", "ExclusiveScan": "timeout"}
