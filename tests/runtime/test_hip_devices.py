"""pyhip.hip's device queries (ordinals, names, PCI bus ids, total memory, compute capability, limits) and peer
access between emulated devices."""
from __future__ import annotations

import numpy as np

import pyhip.hip as hip
from pyhip.errors import hipError_t as E

from hipkit import D2H, H2D, device_props, ok

rng = np.random.default_rng(18)


def test_device_queries_and_peers():
    n = ok(hip.hipGetDeviceCount())
    assert n >= 2                                             # the suite runs with two devices
    bus = ok(hip.hipDeviceGetPCIBusId(13, 1))
    assert ok(hip.hipDeviceGetByPCIBusId(bus)) == 1
    assert ok(hip.hipDeviceTotalMem(0)) == device_props(0).totalGlobalMem
    assert ok(hip.hipDeviceCanAccessPeer(0, 1)) == 1 and ok(hip.hipDeviceCanAccessPeer(1, 1)) == 0
    ok(hip.hipSetDevice(0))
    ok(hip.hipDeviceEnablePeerAccess(1, 0))
    assert hip.hipDeviceEnablePeerAccess(1, 0)[0] == E.hipErrorPeerAccessAlreadyEnabled
    ok(hip.hipDeviceDisablePeerAccess(1))
    assert hip.hipDeviceDisablePeerAccess(1)[0] == E.hipErrorPeerAccessNotEnabled
    ok(hip.hipSetDevice(1))
    src = ok(hip.hipMalloc(400))
    a = rng.integers(0, 1 << 30, 100).astype(np.int32)
    ok(hip.hipMemcpy(src, a, 400, H2D))
    ok(hip.hipSetDevice(0))
    dst = ok(hip.hipMalloc(400))
    ok(hip.hipMemcpyPeer(dst, 0, src, 1, 400))
    b = np.zeros_like(a)
    ok(hip.hipMemcpy(b, dst, 400, D2H))
    assert np.array_equal(a, b)
    ok(hip.hipFree(dst))
    ok(hip.hipSetDevice(1))
    ok(hip.hipFree(src))
    ok(hip.hipSetDevice(0))
