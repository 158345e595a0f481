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


def test_launch_kernel_ggl_impl_takes_a_config_array_like_amds(tmp_path):
    # hip_impl::hipLaunchKernelGGLImpl returns void and takes an `extra`-style config array (hipamd 5.2's
    # hip_platform.cpp); the program prints each launch's last error and checks results against host
    # arithmetic, and AMD's libamdhip64 5.2 (on pyhip's device through the thunk) is the oracle for every line
    exe = tmp_path / "ggl_impl"
    subprocess.run([require_tool("hipcc"), "--offload-arch=gfx90a", "-O2", str(HERE / "ggl_impl.hip"), "-o", str(exe)],
                   check=True, capture_output=True, env={**os.environ, "HIP_PLATFORM": "amd"})
    env = {**os.environ, "PYHIP_DEVICES": "gfx90a:sramecc+:xnack-"}
    runs = {rt: subprocess.run([sys.executable, "-m", "pyhip", "exec", "--runtime", rt, str(exe)],
                               capture_output=True, text=True, timeout=300, env=env) for rt in ("amd", "pyhip")}
    amd, ours = runs["amd"], runs["pyhip"]
    assert amd.returncode == 0 and amd.stdout.strip().endswith("PASS"), amd.stdout + amd.stderr
    assert "malformed config: hipErrorNotInitialized" in amd.stdout and "results: 0 wrong" in amd.stdout
    assert ours.returncode == 0 and ours.stdout == amd.stdout, ours.stdout + ours.stderr
