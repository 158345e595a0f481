"""The concurrency stress through the C ABI: tests/capi/stress.hip (built here with hipcc) runs 8 threads ×
10,000 launches on private and shared streams with cross-stream events and checks sequence numbers itself:
0 lost, 0 duplicated, per-producer order in every stream."""
import os
import subprocess
import sys
from pathlib import Path

from conftest import require_tool

HERE = Path(__file__).resolve().parent


def test_eight_threads_ten_thousand_launches_through_the_c_abi(tmp_path):
    exe = tmp_path / "stress"
    subprocess.run([require_tool("hipcc"), "--offload-arch=gfx90a", "-O2", str(HERE / "stress.hip"), "-o", str(exe)],
                   check=True, capture_output=True, env={**os.environ, "HIP_PLATFORM": "amd"})
    r = subprocess.run([sys.executable, "-m", "pyhip", "exec", str(exe), "10000"], capture_output=True, text=True,
                       timeout=900)
    assert r.returncode == 0 and r.stdout.strip().endswith("PASS"), r.stdout + r.stderr
    assert "80000 launches from 8 threads" in r.stdout
