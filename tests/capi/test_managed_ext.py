"""__managed__ variables, hipMallocManaged, hip_impl::hipLaunchKernelGGLImpl and hipExtModuleLaunchKernel
through the C ABI (tests/capi/managed_ext.hip, built here with hipcc): values checked against host-side
arithmetic in the program itself."""
import os
import subprocess
import sys
from pathlib import Path

from conftest import BIN, require_tool

HERE = Path(__file__).resolve().parent


def test_managed_memory_and_extra_launch_entry_points(tmp_path):
    exe = tmp_path / "managed_ext"
    subprocess.run([require_tool("hipcc"), "--offload-arch=gfx90a", "-O2", str(HERE / "managed_ext.hip"), "-o", str(exe)],
                   check=True, capture_output=True, env={**os.environ, "HIP_PLATFORM": "amd"})
    r = subprocess.run([sys.executable, "-m", "pyhip", "exec", str(exe), str(BIN / "clang19/basic-gfx90a-v5.hsaco")],
                       capture_output=True, text=True, timeout=300, env={**os.environ, "PYHIP_LOG_FAULTS": "1"})
    assert r.returncode == 0 and r.stdout.strip().endswith("PASS"), r.stdout + r.stderr
