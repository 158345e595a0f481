"""pyhip.hip's stream capture and graph launch, against a numpy reference."""
from __future__ import annotations

import numpy as np

import pyhip.hip as hip

from hipkit import D2H, H2D, basic, ok  # noqa: F401  (basic: a fixture)

rng = np.random.default_rng(18)


def test_capture_and_graph_launch(basic):
    ok(hip.hipSetDevice(0))
    n = 500
    host = np.zeros(n, np.float32)
    out = np.zeros(n, np.float32)
    d = ok(hip.hipMalloc(n * 4))
    s = ok(hip.hipStreamCreate())
    f = ok(hip.hipModuleGetFunction(basic, "scale<float>"))
    ok(hip.hipStreamBeginCapture(s, hip.hipStreamCaptureMode.hipStreamCaptureModeGlobal))
    assert ok(hip.hipStreamIsCapturing(s)) == 1
    ok(hip.hipMemcpyAsync(d, host, n * 4, H2D, s))
    ok(hip.hipModuleLaunchKernel(f, 2, 1, 1, 256, 1, 1, 0, s, [d, np.float32(3.0), np.int32(n)], None))
    ok(hip.hipMemcpyAsync(out, d, n * 4, D2H, s))
    g = ok(hip.hipStreamEndCapture(s))
    ge, _ = ok(hip.hipGraphInstantiate(g, None, 0))
    for rep in range(2):
        host[:] = rng.standard_normal(n).astype(np.float32)
        ok(hip.hipGraphLaunch(ge, s))
        ok(hip.hipStreamSynchronize(s))
        assert np.array_equal(out, host * np.float32(3.0))
    ok(hip.hipGraphExecDestroy(ge))
    ok(hip.hipGraphDestroy(g))
    ok(hip.hipStreamDestroy(s))
    ok(hip.hipFree(d))
