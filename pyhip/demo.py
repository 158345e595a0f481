"""``pyhip demo``: load the bundled sample code object, launch its kernels on the emulated GPU and
check the results against numpy."""
from __future__ import annotations

import time
from importlib import resources

import numpy as np


def _sample_bytes() -> bytes:
    return resources.files("pyhip").joinpath("samples/demo_kernels.co").read_bytes()


def main(args=None) -> int:
    import pyhip

    data = _sample_bytes()
    binary = pyhip.loader.load(data, origin="demo_kernels (bundled sample)")
    print("== the bundled sample: an offload bundle built by hipcc 5.2 and clang-19")
    for ref in binary.code_objects:
        co = ref.code_object
        print(f"  {ref.entry_id}: {len(co.kernels)} kernels: "
              + ", ".join(k.demangled for k in co.kernels.values()))
    from pyhip.runtime.context import runtime

    rt_dev = runtime().device()
    print(f"\n== device {rt_dev.index}: {rt_dev.props.name}, {rt_dev.isa}")
    mod = pyhip.load(data)
    rng = np.random.default_rng(0)
    n = 100_003
    a = rng.standard_normal(n).astype(np.float32)
    b = rng.standard_normal(n).astype(np.float32)
    da, db, dc = pyhip.to_device(a), pyhip.to_device(b), pyhip.empty(n, np.float32)
    dc.fill_bytes(0xCD)
    vadd = mod.kernel("vadd")
    block = 256
    grid = (n + block - 1) // block
    t0 = time.perf_counter()
    vadd(grid, block, da, db, dc, n)
    pyhip.synchronize()
    dt = time.perf_counter() - t0
    ok = np.array_equal(dc.get(), a + b)
    print(f"  vadd<<<{grid}, {block}>>> n={n}: {'OK' if ok else 'MISMATCH'} vs numpy ({dt * 1e3:.1f} ms)")
    x = rng.standard_normal(n).astype(np.float32)
    dx = pyhip.to_device(x)
    scale = mod.kernel("scale<float>")
    scale(grid, block, dx, np.float32(2.5), n)
    ok2 = np.array_equal(dx.get(), x * np.float32(2.5))
    print(f"  scale<float> (found by its readable name): {'OK' if ok2 else 'MISMATCH'}")
    ok3 = _second_device(data)
    return 0 if ok and ok2 and ok3 else 1


def _second_device(mod_bytes) -> bool:
    """Run saxpy on device 1 (the gfx942) when there is one, through pyhip.hip's HIP-style calls."""
    import pyhip.hip as hip

    err, count = hip.hipGetDeviceCount()
    if count < 2:
        return True
    hip.hipSetDevice(1)
    props = hip.hipDeviceProp_t()
    hip.hipGetDeviceProperties(props, 1)
    print(f"\n== device 1: {props.name.decode()}, {props.gcnArchName.decode()} (pyhip.hip API)")
    _, mod = hip.hipModuleLoadData(mod_bytes)
    _, f = hip.hipModuleGetFunction(mod, b"saxpy")
    n = 5000
    rng = np.random.default_rng(1)
    x = rng.standard_normal(n).astype(np.float32)
    y = rng.standard_normal(n).astype(np.float32)
    _, dx = hip.hipMalloc(x.nbytes)
    _, dy = hip.hipMalloc(y.nbytes)
    hip.hipMemcpy(dx, x, x.nbytes, hip.hipMemcpyKind.hipMemcpyHostToDevice)
    hip.hipMemcpy(dy, y, y.nbytes, hip.hipMemcpyKind.hipMemcpyHostToDevice)
    err, = hip.hipModuleLaunchKernel(f, (n + 127) // 128, 1, 1, 128, 1, 1, 0, None, [np.float32(0.5), dx, dy, n], None)
    out = np.empty_like(y)
    hip.hipMemcpy(out, dy, y.nbytes, hip.hipMemcpyKind.hipMemcpyDeviceToHost)
    ref = (np.float32(0.5) * x.astype(np.float64) + y).astype(np.float32)
    ok = err == 0 and np.allclose(out, np.float32(0.5) * x + y, rtol=1e-6, atol=1e-6)
    print(f"  saxpy n={n}: {'OK' if ok else 'MISMATCH'} vs numpy")
    hip.hipSetDevice(0)
    return ok
