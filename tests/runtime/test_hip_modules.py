"""pyhip.hip's modules and launches: a cooperative launch with grid-wide sync (hipcc-built), module-loading
errors."""
from __future__ import annotations

import os
import subprocess

import numpy as np

import pyhip.hip as hip
from pyhip.errors import hipError_t as E

from conftest import BIN, require_tool
from hipkit import D2H, H2D, ok

rng = np.random.default_rng(18)


def test_cooperative_launch_grid_sync(tmp_path):
    src = tmp_path / "coop.hip"
    src.write_text(r"""
#include <hip/hip_runtime.h>
#include <hip/hip_cooperative_groups.h>
extern "C" __global__ void rotate(const int* in, int* tmp, int* out, int n) {
  cooperative_groups::grid_group g = cooperative_groups::this_grid();
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) tmp[i] = in[i] * 2;
  g.sync();
  if (i < n) out[i] = tmp[(i + n / 2) % n];
}""")
    co = tmp_path / "coop.co"
    subprocess.run([require_tool("hipcc"), "--genco", "--offload-arch=gfx90a", str(src), "-o", str(co)], check=True,
                   capture_output=True, env={**os.environ, "HIP_PLATFORM": "amd"})
    ok(hip.hipSetDevice(0))
    m = ok(hip.hipModuleLoad(str(co)))
    f = ok(hip.hipModuleGetFunction(m, "rotate"))
    n = 1000
    a = rng.integers(-10000, 10000, n).astype(np.int32)
    din, tmp, dout = (ok(hip.hipMalloc(n * 4)) for _ in range(3))
    ok(hip.hipMemcpy(din, a, n * 4, H2D))
    ok(hip.hipLaunchCooperativeKernel(f, (8, 1, 1), (128, 1, 1), [din, tmp, dout, np.int32(n)], 0, None))
    ok(hip.hipDeviceSynchronize())
    out = np.zeros(n, np.int32)
    ok(hip.hipMemcpy(out, dout, n * 4, D2H))
    assert np.array_equal(out, np.roll(a * 2, -(n // 2)))
    assert hip.hipLaunchCooperativeKernel(f, (100000, 1, 1), (128, 1, 1), [din, tmp, dout, np.int32(n)], 0,
                                          None)[0] == E.hipErrorCooperativeLaunchTooLarge
    for p in (din, tmp, dout):
        ok(hip.hipFree(p))
    ok(hip.hipModuleUnload(m))


def test_module_load_errors(tmp_path):
    """hipModuleLoad's error codes as HIP 5.2 returns them (hip-tests' module area): no name, a missing
    file, an empty file, a file that is not a code object; a real code object still loads after them."""
    (tmp_path / "not_a_module.txt").write_text("this is text, not a code object\n")
    (tmp_path / "empty.code").write_bytes(b"")
    assert hip.hipModuleLoad("")[0] == E.hipErrorInvalidValue
    assert hip.hipModuleLoad(str(tmp_path / "missing.code"))[0] == E.hipErrorFileNotFound
    assert hip.hipModuleLoad(str(tmp_path / "empty.code"))[0] == E.hipErrorInvalidKernelFile
    assert hip.hipModuleLoad(str(tmp_path / "not_a_module.txt"))[0] == E.hipErrorInvalidImage
    err, mod = hip.hipModuleLoad(str(BIN / "hipcc52" / "basic-gfx90a.hsaco"))
    assert err == E.hipSuccess and hip.hipModuleGetFunction(mod, b"vadd_c")[0] == E.hipSuccess
    assert hip.hipModuleUnload(mod)[0] == E.hipSuccess
