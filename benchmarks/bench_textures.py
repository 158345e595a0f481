#!/usr/bin/env python3
"""Texture sampling on the emulated gfx90a: hipcc 5.2 kernels from the texture fixture sampling a float4
2-D texture (point, bilinear) through pyhip.hip, 64K samples per launch.  Each result is checked against
tests/texref.py before it is timed.  Prints the median wall time per launch and samples/s.

    python benchmarks/bench_textures.py [--quick]
"""
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

import pyhip.hip as hip  # noqa: E402
import texref as R  # noqa: E402
from pyhip.hip import hipMemcpyKind as K  # noqa: E402

KERNEL = "_Z12two_texturesP13__hip_textureS0_PKfP15HIP_vector_typeIfLj4EE"
N = 64 * 1024


def main() -> None:
    runs = 3 if "--quick" in sys.argv else 7
    rng = np.random.default_rng(7)
    mod = hip.hipModuleLoad(str(ROOT / "tests/fixtures/bin/hipcc52/textures-gfx90a.hsaco"))[1]
    f = hip.hipModuleGetFunction(mod, KERNEL)[1]
    desc = hip.hipCreateChannelDesc(32, 32, 32, 32, hip.hipChannelFormatKind.hipChannelFormatKindFloat)[1]
    arr = hip.hipMallocArray(desc, 256, 256, 0)[1]
    img = rng.random((256, 256, 4), np.float32)
    hip.hipMemcpy2DToArray(arr, 0, 0, img, 4096, 4096, 256, K.hipMemcpyHostToDevice)
    coords = rng.random((N, 2), np.float32)
    c = hip.hipMalloc(coords.nbytes)[1]
    hip.hipMemcpy(c, coords, coords.nbytes, K.hipMemcpyHostToDevice)
    out = hip.hipMalloc(N * 16)[1]
    print(f"{'case':<28} {'ms/launch':>10} {'Msamples/s':>11}")
    for name, filt in (("2-D float4 point", hip.hipTextureFilterMode.hipFilterModePoint),
                       ("2-D float4 bilinear", hip.hipTextureFilterMode.hipFilterModeLinear)):
        res = hip.hipResourceDesc(resType=hip.hipResourceType.hipResourceTypeArray)
        res.res.array.array = arr
        tex = hip.hipCreateTextureObject(res, hip.hipTextureDesc(filterMode=filt, normalizedCoords=1), None)[1]

        def launch():
            hip.hipModuleLaunchKernel(f, N // 64, 1, 1, 64, 1, 1, 0, None, [tex, tex, c, out], None)
            hip.hipDeviceSynchronize()
        launch()
        got = np.zeros((N, 4), np.float32)
        hip.hipMemcpy(got, out, got.nbytes, K.hipMemcpyDeviceToHost)
        want = R.sample(img[None].astype(np.float64), [coords[:, 0], coords[:, 1]], bool(filt), R.WRAP, True)
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
        times = []
        for _ in range(runs):
            t0 = time.perf_counter()
            launch()
            times.append(time.perf_counter() - t0)
        t = float(np.median(times))
        print(f"{name:<28} {t * 1e3:>10.1f} {N / t / 1e6:>11.3f}")
        hip.hipDestroyTextureObject(tex)


if __name__ == "__main__":
    os.environ.setdefault("PYHIP_DEVICES", "gfx90a")
    main()
