"""What the pyhip.hip tests by domain share: unwrapping hip-python's return tuples, device properties, the
hipcc 5.2 sample module."""
from __future__ import annotations

import pytest

import pyhip.hip as hip
from pyhip.errors import hipError_t as E

from conftest import BIN

H2D, D2H = hip.hipMemcpyKind.hipMemcpyHostToDevice, hip.hipMemcpyKind.hipMemcpyDeviceToHost


def ok(ret):
    assert ret[0] == E.hipSuccess, ret
    return ret[1] if len(ret) == 2 else ret[1:]


def device_props(i):
    props = hip.hipDeviceProp_t()
    ok(hip.hipGetDeviceProperties(props, i))
    return props


@pytest.fixture(scope="module")
def basic():
    ok(hip.hipSetDevice(0))
    return ok(hip.hipModuleLoad(str(BIN / "hipcc52/basic-gfx90a.hsaco")))
