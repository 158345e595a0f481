"""Repeat launches from Python (pyhip.hip.hipModuleLaunchKernel, Kernel.__call__) published by one native call
(pyhip/runtime/fastlaunch.py): new argument values are honoured, arguments of other types take the full
path, and the launches really went the native way (the stream's native launch count)."""
import numpy as np

import pyhip
import pyhip.hip as hip
from conftest import BIN
from pyhip.runtime.context import runtime

RNG = np.random.default_rng(13)


def test_kernel_call_repeats_natively_with_new_values():
    pyhip.set_device(0)
    k = pyhip.load(BIN / "hipcc52/basic-gfx90a.hsaco").kernel("vadd")
    n = 1000
    bufs = [(RNG.standard_normal(n).astype(np.float32), RNG.standard_normal(n).astype(np.float32))
            for _ in range(4)]
    c = pyhip.empty(n, np.float32)
    for i, (a, b) in enumerate(bufs):
        m = n - 37 * i                                   # a new value of the int argument each time
        c.set(np.full(n, np.nan, np.float32))
        k((n + 255) // 256, 256, pyhip.to_device(a), pyhip.to_device(b), c, m)
        pyhip.synchronize()
        got = c.get()
        np.testing.assert_array_equal(got[:m], a[:m] + b[:m])
        assert np.isnan(got[m:]).all()
    entries = k.function.fast
    assert entries, "no native launch entry was prepared"


def test_hip_module_launch_repeats_natively_and_falls_back_on_other_types():
    hip.hipSetDevice(0)
    err, mod = hip.hipModuleLoad(str(BIN / "hipcc52/basic-gfx90a.hsaco").encode())
    assert err == hip.hipError_t.hipSuccess
    err, f = hip.hipModuleGetFunction(mod, b"vadd")
    n = 700
    a, b = RNG.standard_normal(n).astype(np.float32), RNG.standard_normal(n).astype(np.float32)
    da, db, dc = (hip.hipMalloc(4 * n)[1] for _ in range(3))
    hip.hipMemcpy(da, a, 4 * n, hip.hipMemcpyKind.hipMemcpyHostToDevice)
    hip.hipMemcpy(db, b, 4 * n, hip.hipMemcpyKind.hipMemcpyHostToDevice)
    fs_before = None
    for m in (n, n - 1, n - 100, 5):
        hip.hipMemset(dc, 0xFF, 4 * n)
        assert hip.hipModuleLaunchKernel(f, 3, 1, 1, 256, 1, 1, 0, None, [da, db, dc, m], None)[0] == \
            hip.hipError_t.hipSuccess
        hip.hipDeviceSynchronize()
        out = np.zeros(n, np.float32)
        hip.hipMemcpy(out, dc, 4 * n, hip.hipMemcpyKind.hipMemcpyDeviceToHost)
        np.testing.assert_array_equal(out[:m], a[:m] + b[:m])
        assert np.isnan(out[m:]).all()
        st = runtime().resolve_stream(None)
        fs = st.fast_state()
        if fs_before is None:
            fs_before = fs.launch_count() if fs is not None else None
    assert fs_before is not None, "the null stream has no native launch state"
    assert runtime().resolve_stream(None).fast_state().launch_count() >= fs_before + 3   # the repeats
    # a float where an int was: not the cached types, the full path checks and converts it as before
    err = hip.hipModuleLaunchKernel(f, 3, 1, 1, 256, 1, 1, 0, None, [da, db, dc, np.int32(3)], None)[0]
    assert err == hip.hipError_t.hipSuccess
    hip.hipDeviceSynchronize()
    for p in (da, db, dc):
        hip.hipFree(p)
    hip.hipModuleUnload(mod)


def test_untyped_by_value_arguments_repeat_natively(tmp_path):
    """extern "C" kernels from hipcc 5.2 name no argument types: Python ints and floats there repeat natively
    too, with their new values, and a value the signed format refuses takes the full path."""
    import subprocess
    src = tmp_path / "k.hip"
    src.write_text('#include <hip/hip_runtime.h>\n'
                   'extern "C" __global__ void lin(float* o, int a, unsigned b, float s, double t) {\n'
                   '  int i = threadIdx.x; o[i] = (float)(a * i) + (float)(b % 1000u) + s * i + (float)t; }\n')
    co = tmp_path / "k.hsaco"
    import os
    subprocess.run(["hipcc", "--offload-arch=gfx90a", "-O2", "--genco", str(src), "-o", str(co)], check=True,
                   env={**os.environ, "HIP_PLATFORM": "amd"}, capture_output=True)
    pyhip.set_device(0)
    k = pyhip.load(co).kernel("lin")
    o = pyhip.empty(64, np.float32)
    i = np.arange(64, dtype=np.float32)
    for a, b, s, t in ((1, 2, 0.5, 1.25), (-3, 7, 2.0, -4.0), (5, 2 ** 32 - 1, -1.5, 0.0), (2, 9, 0.25, 3.0)):
        k(1, 64, o, a, b, s, t)
        pyhip.synchronize()
        want = (np.float32(a) * i + np.float32(b % 1000) + np.float32(s) * i + np.float32(t)).astype(np.float32)
        np.testing.assert_allclose(o.get(), want, rtol=1e-6)
    assert k.function.fast, "no native launch entry for the untyped arguments"
