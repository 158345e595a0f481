"""pyhip's libamdhip64.so.5 loaded into a Python process that already runs pyhip (what pyhip.triton does):
the shim's exports reach this process's runtime, and hip-python's argument checks stay strict for Python
callers while C callers pass enums as integers."""
import ctypes
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import pyhip
from pyhip import hip
from pyhip.capi.shim import load_in_process

hipDeviceAttributeMaxThreadsPerBlock = 56        # HIP 5.2's hipDeviceAttribute_t value
hipMemcpyDeviceToHost = 2
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def lib():
    lib, code = load_in_process()
    n = ctypes.c_int()
    assert code == 0 and lib.hipGetDeviceCount(ctypes.byref(n)) == 0 and n.value == pyhip.device_count()
    return lib


def test_loading_after_a_dlpack_exchange_does_not_hang():
    """An attribute looked up on a capsule (DLPack) gives the capsule type a version tag, which cffi's
    embedding start-up on Python <= 3.11 takes for a held spin lock: the first C call used to spin forever."""
    code = """if True:
        import ctypes, numpy as np
        import pyhip
        cap = np.arange(3).__dlpack__()
        assert not hasattr(cap, "shape")              # the lookup that tags the capsule type
        from pyhip.capi.shim import load_in_process
        lib, code = load_in_process()
        print("ok", code)
    """
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0 and p.stdout.split() == ["ok", "0"], p.stderr[-2000:]


def test_os_fork_with_the_shim_loaded_does_not_hang():
    """With the shim in the process, an os.fork() ran Python's before-fork hooks twice (os.fork's, then the
    shim's pthread_atfork handler's, which a C program's fork() needs): a hook whose lock is not re-entrant
    (concurrent.futures', the compiled engine's) took it twice and the fork never returned.  Here a kernel has run (the engine and its locks are up), the child runs
    one too, and the parent goes on launching after it."""
    code = """if True:
        import concurrent.futures.thread, os, numpy as np   # (its before-fork hook: a lock, not re-entrant)
        import pyhip
        from pyhip.capi.shim import load_in_process
        lib, code = load_in_process()
        mod = pyhip.load("tests/fixtures/bin/hipcc52/basic-gfx90a.hsaco")
        x = pyhip.to_device(np.arange(300, dtype=np.float32))
        mod.kernel("scale<float>")(2, 256, x, np.float32(2.0), 300)
        pyhip.synchronize()
        pid = os.fork()
        if pid == 0:
            y = pyhip.to_device(np.ones(10, np.float32))
            mod = pyhip.load("tests/fixtures/bin/hipcc52/basic-gfx90a.hsaco")
            mod.kernel("scale<float>")(1, 256, y, np.float32(3.0), 10)
            os._exit(0 if (y.get() == 3).all() else 3)
        _, status = os.waitpid(pid, 0)
        mod.kernel("scale<float>")(2, 256, x, np.float32(2.0), 300)
        print("ok", code, os.waitstatus_to_exitcode(status), float(x.get()[299]))
    """
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert p.returncode == 0 and p.stdout.split() == ["ok", "0", "0", "1196.0"], (p.stdout, p.stderr[-2000:])


def test_exports_reach_this_process_runtime(lib):
    a = np.random.default_rng(0).standard_normal(333).astype(np.float32)
    d = pyhip.to_device(a)                                   # allocated by Python ...
    out = np.zeros_like(a)
    assert lib.hipMemcpy(out.ctypes.data_as(ctypes.c_void_p), ctypes.c_void_p(d.data_ptr()),
                         ctypes.c_size_t(a.nbytes), hipMemcpyDeviceToHost) == 0   # ... read by C
    np.testing.assert_array_equal(out, a)
    addr = d.data_ptr()
    d.free()
    # an allocation Python freed is gone for C too
    assert lib.hipMemcpy(out.ctypes.data_as(ctypes.c_void_p), ctypes.c_void_p(addr),
                         ctypes.c_size_t(4), hipMemcpyDeviceToHost) != 0


def test_enum_checks_stay_strict_for_python_callers(lib):
    v = ctypes.c_int()
    assert lib.hipDeviceGetAttribute(ctypes.byref(v), hipDeviceAttributeMaxThreadsPerBlock, 0) == 0
    assert v.value == 1024
    with pytest.raises(TypeError):                           # hip-python refuses an int for an enum
        hip.hipDeviceGetAttribute(hipDeviceAttributeMaxThreadsPerBlock, 0)
    err, value = hip.hipDeviceGetAttribute(hip.hipDeviceAttribute_t.hipDeviceAttributeMaxThreadsPerBlock, 0)
    assert err == 0 and value == 1024
