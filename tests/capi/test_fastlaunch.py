"""The shim's native launch path, from an unmodified hipcc-built program (tests/capi/fastlaunch.hip, built
here with hipcc for gfx90a): arguments of 9,000+ native launches arrive intact (more launches than queue
slots, interleaved configurations, four host threads), last-error rules, a fault in a natively launched
kernel, null stream / stream / event ordering.  PYHIP_SHIM_STATS makes the shim count both paths, so the
test also proves the launches really were native."""
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import require_tool

HERE = Path(__file__).resolve().parent


@pytest.fixture(scope="module")
def program(tmp_path_factory):
    exe = tmp_path_factory.mktemp("fastlaunch") / "fastlaunch"
    subprocess.run([require_tool("hipcc"), "--offload-arch=gfx90a", "-O2", str(HERE / "fastlaunch.hip"), "-o", str(exe)],
                   check=True, capture_output=True, env={**os.environ, "HIP_PLATFORM": "amd"})
    return exe


def test_native_launches_are_exact_and_counted(program):
    r = subprocess.run([sys.executable, "-m", "pyhip", "exec", str(program)], capture_output=True, text=True,
                       timeout=600, env={**os.environ, "PYHIP_SHIM_STATS": "1"})
    assert r.returncode == 0 and r.stdout.strip().endswith("PASS"), r.stdout + r.stderr
    native, python = map(int, re.search(r"(\d+) native launches, (\d+) through Python", r.stderr).groups())
    # Python path: the first launch of each configuration, the rejected ones, and launches on the second
    # stream while the null stream still has work (native launches there would bypass ordering)
    assert native >= 9000 and native + python == 9406, r.stderr


def test_without_stats_nothing_is_printed(program):
    env = {k: v for k, v in os.environ.items() if k != "PYHIP_SHIM_STATS"}
    r = subprocess.run([sys.executable, "-m", "pyhip", "exec", str(program)], capture_output=True, text=True,
                       timeout=600, env=env)
    assert r.returncode == 0 and "native launches" not in r.stderr, r.stderr
