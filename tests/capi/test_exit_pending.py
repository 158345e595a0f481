"""Process exit with pending work through the C ABI: an unmodified program returns from main with 500
launches queued and a long kernel running on a stream it never synchronised: it exits promptly with
status 0 (no hang in the shim's teardown — the run's timeout — and no crash)."""
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import require_tool

HERE = Path(__file__).resolve().parent


@pytest.mark.parametrize("hot", ["", "0"])
def test_exit_with_pending_work(tmp_path, hot):
    """``hot``: PYHIP_JIT_HOT=0 makes every kernel hot at its first compiled dispatch, so the program exits with
    the optimised compile running in the background thread too (pyhip/emu/jit tier 2)."""
    env = {**os.environ, "PYHIP_JIT_CACHE_DIR": ""}
    if hot:
        env["PYHIP_JIT_HOT"] = hot
    exe = tmp_path / "exit_pending"
    subprocess.run([require_tool("hipcc"), "--offload-arch=gfx90a", "-O2", str(HERE / "exit_pending.hip"), "-o", str(exe)],
                   check=True, capture_output=True, env={**os.environ, "HIP_PLATFORM": "amd"})
    r = subprocess.run([sys.executable, "-m", "pyhip", "exec", str(exe)], capture_output=True, text=True, timeout=120,
                       env=env)
    assert r.returncode == 0 and r.stdout.strip() == "queued", r.stdout + r.stderr
