"""Device-side malloc/free (ockl's heap growing through ROCclr's SERVICE_DEVMEM hostcall) on the emulator."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import require_tool

HERE = Path(__file__).parent
ROOT = HERE.parent.parent


@pytest.fixture(scope="module")
def device_malloc(tmp_path_factory):
    exe = tmp_path_factory.mktemp("device_malloc") / "device_malloc"
    subprocess.run([require_tool("hipcc"), "--offload-arch=gfx90a", "-O2", str(HERE / "src" / "device_malloc.hip"),
                    "-o", str(exe)], check=True, capture_output=True, env={**os.environ, "HIP_PLATFORM": "amd"})
    return exe


def test_device_malloc_in_many_threads_on_the_emulator(device_malloc):
    """1000 work-items (8 blocks of 128, the last partial) each malloc 1..4099 ints, fill, sum and free them:
    the heap needs slabs from the host (SERVICE_DEVMEM: __ockl_devmem_request(addr, size), size != 0
    allocates), which the hostcall thread used to fail on (it imported a function that did not exist), so
    every malloc came back broken and the launch faulted. Every sum is checked on the host."""
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    r = subprocess.run([sys.executable, "-m", "pyhip", "exec", str(device_malloc), "1000"], capture_output=True,
                       text=True, timeout=600, env={**os.environ, "PYTHONPATH": path, "PYHIP_BACKEND": "emu"})
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.strip().splitlines()[-1] == "device malloc 1000: hipSuccess, 0 wrong, 0 null", r.stdout + r.stderr


def test_devmem_service_allocates_and_frees():
    """The service itself: a size allocates device memory the backend owns, size 0 frees the address, and an
    impossible size answers 0 (device malloc's NULL) instead of raising on the hostcall thread."""
    from pyhip.runtime.context import runtime
    from pyhip.runtime.hostcall import device_heap_service
    from pyhip.runtime.ops import owner

    dev = runtime().device()
    addr = device_heap_service(dev, 0, 2 << 20)
    assert addr and owner(addr) is dev
    assert device_heap_service(dev, addr, 0) == 0
    assert owner(addr) is None
    assert device_heap_service(dev, 0, 1 << 62) == 0
