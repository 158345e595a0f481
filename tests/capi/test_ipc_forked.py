"""HIP IPC through the C ABI (tests/capi/ipc.hip): a parent and three forked children, each with its own emulated
GPU, share device memory and order their kernels by IPC events; the expected ints are computed here."""
import os
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
from conftest import require_tool

HERE = Path(__file__).resolve().parent
K = 3


def test_forked_processes_share_memory_and_events(tmp_path):
    exe = tmp_path / "ipc"
    subprocess.run([require_tool("hipcc"), "--offload-arch=gfx90a", "-O2", str(HERE / "ipc.hip"), "-o", str(exe)],
                   check=True, capture_output=True, env={**os.environ, "HIP_PLATFORM": "amd"})
    n, seed = 1000 + random.randrange(1, 127), random.randrange(1000)       # not a multiple of the block size
    r = subprocess.run([sys.executable, "-m", "pyhip", "exec", str(exe), str(n), str(seed)], capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-3000:]
    values = next(line for line in r.stdout.splitlines() if line.startswith("values "))
    first = r.stdout.splitlines()[0]
    assert first == "own=201 bad=1 close=1", first          # hipErrorInvalidContext, hipErrorInvalidValue
    assert "pending=600,600" in r.stdout, r.stdout[:400]    # held back by the parent's flag: not ready
    i = np.arange(n, dtype=np.int64)
    want = (i * 7919 + seed) % 1000 * 2 + i % K + 1       # doubled by the parent, then each child's slice
    got = np.array(values.split()[1:], dtype=np.int64)
    np.testing.assert_array_equal(got, want)
    assert "free=0" in r.stdout
    for k in range(K):
        assert f"child {k} copy=0 sum={int(want.sum())} close=0,1" in r.stdout, r.stdout[-1500:]
        assert f"exit {k} 0" in r.stdout
