"""Function attributes, occupancy, hipMallocHost, hipMemsetD*Async, hipModuleLoadDataEx through the C ABI
(tests/capi/function_attributes.hip, built here with hipcc); the attributes it prints are also compared with what
pyhip.hip reports for the same kernel loaded from the program's own fat binary."""
import os
import re
import subprocess
import sys
from pathlib import Path

import pyhip.hip as hip
from pyhip.loader import load

from conftest import BIN, require_tool

HERE = Path(__file__).resolve().parent


def test_attributes_occupancy_memset_and_module_load(tmp_path):
    exe = tmp_path / "function_attributes"
    subprocess.run([require_tool("hipcc"), "--offload-arch=gfx90a", "-O2", str(HERE / "function_attributes.hip"), "-o", str(exe)],
                   check=True, capture_output=True, env={**os.environ, "HIP_PLATFORM": "amd"})
    r = subprocess.run([sys.executable, "-m", "pyhip", "exec", str(exe), str(BIN / "hipcc52/basic-gfx90a.hsaco")],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and r.stdout.strip().endswith("PASS"), r.stdout + r.stderr
    regs, max_threads, grid, block, blocks = map(int, re.search(r"attrs (\d+) (\d+) (\d+) (\d+) (\d+)", r.stdout).groups())
    co = load(exe).select("gfx90a")                     # the same kernel through pyhip.hip
    hip.hipSetDevice(0)
    err, mod = hip.hipModuleLoadData(co.data)
    assert err == 0
    f = hip.hipModuleGetFunction(mod, "_Z6stagedPi")[1]
    a = hip.hipFuncAttributes()
    assert hip.hipFuncGetAttributes(a, f) == (hip.hipError_t.hipSuccess,)     # hip-python: filled in place
    assert (regs, max_threads) == (a.numRegs, a.maxThreadsPerBlock)
    assert hip.hipOccupancyMaxPotentialBlockSize(f, 0, 0)[1:] == (grid, block)
    assert hip.hipOccupancyMaxActiveBlocksPerMultiprocessor(f, 256, 0)[1] == blocks
    hip.hipModuleUnload(mod)
