"""hipDeviceSynchronize / hipStreamSynchronize waiting in C (tests/capi/native_sync.hip, built here with hipcc):
results read right after each synchronize, a fault in a natively launched kernel reported once, work another
stream got through Python waited for.  PYHIP_SHIM_STATS proves most synchronizes did not enter Python."""
import os
import re
import subprocess
import sys
from pathlib import Path

from conftest import require_tool

HERE = Path(__file__).resolve().parent


def test_native_synchronize(tmp_path):
    exe = tmp_path / "native_sync"
    subprocess.run([require_tool("hipcc"), "--offload-arch=gfx90a", "-O2", str(HERE / "native_sync.hip"), "-o", str(exe)],
                   check=True, capture_output=True, env={**os.environ, "HIP_PLATFORM": "amd"})
    r = subprocess.run([sys.executable, "-m", "pyhip", "exec", str(exe)], capture_output=True, text=True, timeout=600,
                       env={**os.environ, "PYHIP_SHIM_STATS": "1"})
    assert r.returncode == 0 and r.stdout.strip().endswith("PASS"), r.stdout + r.stderr
    native = int(re.search(r"(\d+) native synchronizes", r.stderr).group(1))
    assert native >= 400, r.stderr        # of ~510 synchronizes; those after a Python command take Python


def test_idle_copies_and_synchronizes(tmp_path):
    """A copies-only program (tests/capi/idle_copies.hip: 400 rounds of random copies and fills, a kernel every
    100 rounds, every result checked): its synchronizes wait in C although it has no native launch stream
    (the device is armed with no grant), its copies and fills are done in C (fastlaunch.c), every result is
    right, and what C refuses (ranges past an allocation, a bad kind) is reported by Python as before."""
    exe = tmp_path / "idle_copies"
    subprocess.run([require_tool("hipcc"), "--offload-arch=gfx90a", "-O2", str(HERE / "idle_copies.hip"), "-o", str(exe)],
                   check=True, capture_output=True, env={**os.environ, "HIP_PLATFORM": "amd"})
    r = subprocess.run([sys.executable, "-m", "pyhip", "exec", str(exe)], capture_output=True, text=True, timeout=600,
                       env={**os.environ, "PYHIP_SHIM_STATS": "1"})
    assert r.returncode == 0 and r.stdout.strip().endswith("PASS"), r.stdout + r.stderr
    native = int(re.search(r"(\d+) native synchronizes", r.stderr).group(1))
    assert native >= 350, r.stderr        # of 400; the 4 after a kernel launch take Python
    copies = int(re.search(r"(\d+) native copies and fills", r.stderr).group(1))
    assert copies >= 1400, r.stderr       # of 1600 copies and fills in the loop
