"""Many host threads calling into the shim at once before anything is loaded: first launches of eight
kernels (lazy per-device loading from the registered fat binary) and concurrent module loads/launches
(tests/capi/concurrent_first_use.hip, built here with hipcc; results checked by the program)."""
import os
import subprocess
import sys
from pathlib import Path

from conftest import BIN, require_tool

HERE = Path(__file__).resolve().parent


def test_concurrent_first_use(tmp_path):
    exe = tmp_path / "concurrent_first_use"
    subprocess.run([require_tool("hipcc"), "--offload-arch=gfx90a", "-O2", str(HERE / "concurrent_first_use.hip"),
                    "-o", str(exe)], check=True, capture_output=True, env={**os.environ, "HIP_PLATFORM": "amd"})
    r = subprocess.run([sys.executable, "-m", "pyhip", "exec", str(exe), str(BIN / "hipcc52/basic-gfx90a.hsaco")],
                       capture_output=True, text=True, timeout=300, env={**os.environ, "PYHIP_LOG_FAULTS": "1"})
    assert r.returncode == 0 and r.stdout.strip().endswith("PASS"), r.stdout + r.stderr
