"""Unmodified hipcc-built programs on the emulated RDNA devices through ``pyhip exec``: a wave32 program built
with --offload-arch=gfx1030 only (warp shuffles and ballots over 32 lanes, a dynamic-LDS block reduction), the
two-target host_app picking its gfx1030 code object, and hipDeviceProp_t / hipDeviceGetAttribute of the
RX 7900 XTX and RX 6900 XT as a C program compiled against HIP 5.2's header reads them."""
import os
import subprocess
import sys

from conftest import BIN, require_tool


def _exec(prog, devices, *args):
    return subprocess.run([sys.executable, "-m", "pyhip", "exec", str(prog), *map(str, args)], capture_output=True,
                          text=True, timeout=300, env={**os.environ, "PYHIP_DEVICES": devices})


def test_wave32_program_built_for_gfx1030_only():
    r = _exec(BIN / "host/host_wave32", "gfx1030")
    assert r.returncode == 0 and r.stdout.strip() == "PASS", r.stdout + r.stderr


def test_two_target_program_runs_its_gfx1030_code():
    r = _exec(BIN / "host/host_app", "gfx1030")
    assert r.returncode == 0 and r.stdout.strip().endswith("PASS"), r.stdout + r.stderr


def test_radeon_device_properties(tmp_path):
    from pyhip.capi.shim import shim_path
    src = tmp_path / "props.c"
    src.write_text(r"""
#define __HIP_PLATFORM_AMD__ 1
#include <hip/hip_runtime_api.h>
#include <stdio.h>
int main(void) {
  int n = 0; hipGetDeviceCount(&n);
  for (int d = 0; d < n; ++d) {
    hipDeviceProp_t p; hipGetDeviceProperties(&p, d);
    int ws = 0, mp = 0; hipDeviceGetAttribute(&ws, hipDeviceAttributeWarpSize, d);
    hipDeviceGetAttribute(&mp, hipDeviceAttributeMultiprocessorCount, d);
    printf("%s|%s|%d|%d|%d|%zu|%d|%d|%d|%d\n", p.name, p.gcnArchName, p.warpSize, ws, p.multiProcessorCount,
           p.sharedMemPerBlock, mp, p.gcnArch, p.major, p.minor);
  }
  return 0;
}""")
    exe = tmp_path / "props"
    subprocess.run([require_tool("gcc"), "-o", str(exe), str(src), f"-L{shim_path()}", "-l:libamdhip64.so.5"],
                   check=True, capture_output=True)
    r = _exec(exe, "gfx1100,gfx1030")
    # 96 and 80 CUs, counted as work-group processors (two CUs) as HIP does in WGP mode; 64 KiB LDS per block
    assert r.stdout.splitlines() == ["AMD Radeon RX 7900 XTX (pyhip emulated)|gfx1100|32|32|48|65536|48|1100|11|0",
                                "AMD Radeon RX 6900 XT (pyhip emulated)|gfx1030|32|32|40|65536|40|1030|10|3"], \
        r.stdout + r.stderr
