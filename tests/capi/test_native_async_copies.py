"""hipMemcpyAsync / hipMemsetAsync from C (native/hip/fastlaunch.c): tests/capi/native_async_copies.hip, built
here with hipcc, interleaves native launches with asynchronous copies and fills on random data (a copy reading
what the kernel before it wrote, a kernel overwriting what the copy before it read), on the null stream and on a
created stream, with pageable and pinned host memory.  PYHIP_SHIM_STATS proves they were queued or done in C."""
import os
import re
import subprocess
import sys
from pathlib import Path

from conftest import require_tool

HERE = Path(__file__).resolve().parent


def test_native_async_copies(tmp_path):
    exe = tmp_path / "native_async_copies"
    subprocess.run([require_tool("hipcc"), "--offload-arch=gfx90a", "-O2", str(HERE / "native_async_copies.hip"), "-o",
                    str(exe)], check=True, capture_output=True, env={**os.environ, "HIP_PLATFORM": "amd"})
    r = subprocess.run([sys.executable, "-m", "pyhip", "exec", str(exe)], capture_output=True, text=True, timeout=600,
                       env={**os.environ, "PYHIP_SHIM_STATS": "1"})
    assert r.returncode == 0 and r.stdout.strip().endswith("PASS"), r.stdout + r.stderr
    copies = int(re.search(r"(\d+) native copies and fills", r.stderr).group(1))
    assert copies >= 2000, r.stderr       # of 2500 asynchronous copies and fills (5 per round, 500 rounds)
