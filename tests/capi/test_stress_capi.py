"""The concurrency stress through the C ABI (issue 24; tests/stresskit.py): tests/capi/stress.hip, built here
with hipcc, runs 8 threads x 10,000 <<<>>> launches on private and shared streams with cross-stream events
and snapshots under ``pyhip exec``; every launch's result is checked against numpy."""
import os
import subprocess
import sys

import stresskit
from conftest import require_tool


def test_eight_threads_ten_thousand_launches_through_the_c_abi(tmp_path):
    exe = tmp_path / "stress"
    subprocess.run([require_tool("hipcc"), "--offload-arch=gfx90a", "-O2", str(stresskit.SOURCE), "-o", str(exe)],
                   check=True, capture_output=True, env={**os.environ, "HIP_PLATFORM": "amd"})
    n = stresskit.launches(10000)
    state0, mul = stresskit.write_inputs(tmp_path / "in.bin", seed=n + 1)
    out = stresskit.run([sys.executable, "-m", "pyhip", "exec", str(exe), str(n), str(tmp_path / "in.bin"),
                         str(tmp_path / "out.bin")], timeout=max(120, n * 0.02))
    assert f"{8 * (n + n // 100)} launches from 8 threads" in out, out
    stresskit.check(tmp_path / "out.bin", state0, mul, n)
