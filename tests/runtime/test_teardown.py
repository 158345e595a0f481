"""Teardown: unloading modules and destroying streams with work in flight, process exit with pending work,
and create/destroy cycles that must not grow memory."""
import resource
import subprocess
import sys
import textwrap

import numpy as np

import pyhip
import pyhip.hip as hip
from pyhip.runtime.context import runtime

from conftest import BIN


def _rss_mb() -> float:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def test_unload_and_destroy_with_work_in_flight():
    pyhip.set_device(0)
    m = pyhip.load(BIN / "hipcc52/basic-gfx90a.hsaco")
    x = pyhip.to_device(np.ones(4096, np.int32))
    s = pyhip.Stream()
    for _ in range(20):
        m.kernel("scale<int>")(16, 256, x, 2, 4096, stream=s)
    s.close()                                     # destroys with 20 launches pending: waits, no hang
    assert np.array_equal(x.get(), np.full(4096, 1 << 20))
    for _ in range(5):
        m.kernel("scale<int>")(16, 256, x, 3, 4096)
    m.unload()                                    # launches in flight finish first
    assert np.array_equal(x.get(), np.full(4096, (1 << 20) * 243))


def test_process_exit_with_pending_work():
    code = textwrap.dedent(f"""
        import numpy as np, pyhip
        m = pyhip.load({str(BIN / 'hipcc52/basic-gfx90a.hsaco')!r})
        x = pyhip.to_device(np.ones(1 << 16, np.float32))
        for _ in range(50):
            m.kernel("scale<float>")(256, 256, x, np.float32(1.5), 1 << 16)
        print("exiting with work queued")
    """)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and "exiting" in r.stdout, r.stderr


def test_create_destroy_cycles_do_not_grow_memory():
    pyhip.set_device(0)
    data = (BIN / "hipcc52/basic-gfx90a.hsaco").read_bytes()
    dev = runtime().device()

    def cycle():
        s = hip.hipStreamCreate()[1]
        e = hip.hipEventCreate()[1]
        p = hip.hipMalloc(4096)[1]
        hip.hipMemsetAsync(p, 1, 4096, s)
        hip.hipEventRecord(e, s)
        hip.hipEventSynchronize(e)
        hip.hipEventDestroy(e)
        hip.hipStreamDestroy(s)
        hip.hipFree(p)
        mod = hip.hipModuleLoadData(data)[1]
        hip.hipModuleUnload(mod)
    for _ in range(100):
        cycle()
    free0, rss0 = dev.backend.mem_info()[0], _rss_mb()
    for _ in range(400):
        cycle()
    assert dev.backend.mem_info()[0] == free0                    # device memory: nothing leaked
    assert _rss_mb() - rss0 < 40, (rss0, _rss_mb())             # host memory: bounded
