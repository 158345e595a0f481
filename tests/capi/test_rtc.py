"""hiprtc through the C ABI (tests/capi/rtc.hip, built with hipcc against HIP 5.2's hiprtc.h): the compile API
exported by the drop-in libamdhip64.so.5, the link API by the drop-in libhiprtc.so.5 (dlopen'ed); the program
checks kernel results against host arithmetic and prints PASS."""
import os
import subprocess
import sys
from pathlib import Path

from conftest import require_tool

HERE = Path(__file__).resolve().parent


def test_hiprtc_c_abi(tmp_path):
    exe = tmp_path / "rtc"
    subprocess.run([require_tool("hipcc"), "--offload-arch=gfx90a", "-O2", str(HERE / "rtc.hip"), "-o", str(exe), "-ldl"],
                   check=True, capture_output=True, env={**os.environ, "HIP_PLATFORM": "amd"})
    r = subprocess.run([sys.executable, "-m", "pyhip", "exec", str(exe)], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0 and r.stdout.strip().endswith("PASS"), r.stdout + r.stderr


def test_exports_follow_amd(tmp_path):
    """libhiprtc.so.5: ROCm 5.4's 18 functions, unversioned; libamdhip64.so.5: HIP 5.2's 11, at hip_4.2."""
    from pyhip.capi.shim import shim_path

    d = shim_path()
    nm = require_tool("llvm-nm-19")
    rtc = subprocess.run([nm, "-D", "--defined-only", str(d / "libhiprtc.so.5")], capture_output=True, text=True,
                         check=True).stdout
    names = sorted(line.split()[-1] for line in rtc.splitlines() if "hiprtc" in line)
    assert len(names) == 18 and all("@" not in n for n in names) and "hiprtcLinkComplete" in names
    hip = subprocess.run([nm, "-D", "--defined-only", str(d / "libamdhip64.so.5")], capture_output=True, text=True,
                         check=True).stdout
    exported = sorted(line.split()[-1] for line in hip.splitlines() if "hiprtc" in line)
    amd = subprocess.run([nm, "-D", "--defined-only", "/usr/lib/x86_64-linux-gnu/libamdhip64.so.5"],
                         capture_output=True, text=True, check=True).stdout
    assert exported == sorted(line.split()[-1] for line in amd.splitlines() if "hiprtc" in line)
