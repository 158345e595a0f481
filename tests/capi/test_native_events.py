"""Events recorded and answered in C (native/hip/fastlaunch.c): tests/capi/native_events.hip, built here with
hipcc, checks ordering on random data, elapsed times against the wall clock, events of a stream through Python,
a fault between events, destroys right after a record.  PYHIP_SHIM_STATS proves the event calls stayed in C.
Sections 1-5 of the program also pass on AMD's HIP over pyhip's thunk (``pyhip exec --runtime amd``; a GPU fault
ends a program there, so section 6 is pyhip's own)."""
import os
import re
import subprocess
import sys
from pathlib import Path

from conftest import require_tool

HERE = Path(__file__).resolve().parent


def test_native_events(tmp_path):
    exe = tmp_path / "native_events"
    subprocess.run([require_tool("hipcc"), "--offload-arch=gfx90a", "-O2", str(HERE / "native_events.hip"), "-o", str(exe)],
                   check=True, capture_output=True, env={**os.environ, "HIP_PLATFORM": "amd"})
    r = subprocess.run([sys.executable, "-m", "pyhip", "exec", str(exe)], capture_output=True, text=True, timeout=600,
                       env={**os.environ, "PYHIP_SHIM_STATS": "1"})
    assert r.returncode == 0 and r.stdout.strip().endswith("PASS"), r.stdout + r.stderr
    events = int(re.search(r"(\d+) native event calls", r.stderr).group(1))
    assert events >= 1000, r.stderr      # section 1 alone: 300 records + 300 waits + 300 queries
