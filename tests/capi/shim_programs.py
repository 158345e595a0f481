"""hipcc programs of this directory run on pyhip's libamdhip64 with the shim's counters (PYHIP_SHIM_STATS)."""
import os
import re
import subprocess
import sys
from pathlib import Path

from conftest import require_tool

HERE = Path(__file__).resolve().parent


def run_counted(tmp_path, name: str, args=()) -> str:
    """Build tests/capi/<name>.hip for gfx90a, run it under ``pyhip exec`` (with ``args``); assert it printed PASS;
    return what the shim's counters printed (stderr)."""
    exe = tmp_path / name
    subprocess.run([require_tool("hipcc"), "--offload-arch=gfx90a", "-O2", str(HERE / f"{name}.hip"), "-o", str(exe)],
                   check=True, capture_output=True, env={**os.environ, "HIP_PLATFORM": "amd"})
    r = subprocess.run([sys.executable, "-m", "pyhip", "exec", str(exe), *map(str, args)], capture_output=True, text=True, timeout=600,
                       env={**os.environ, "PYHIP_SHIM_STATS": "1"})
    assert r.returncode == 0 and r.stdout.strip().endswith("PASS"), r.stdout + r.stderr
    return r.stderr


def counter(stats: str, label: str) -> int:
    """One of the shim's counters ("native synchronizes", "native event calls", ...)."""
    return int(re.search(rf"(\d+) {label}", stats).group(1))
