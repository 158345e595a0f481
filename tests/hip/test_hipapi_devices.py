"""pyhip.hipapi.devices: each device rule checked once, at its home (both faces call it). The suite runs with
four devices (tests/conftest.py); expected values come from the devices' properties, formatted here."""
from __future__ import annotations

import pytest

from pyhip.errors import HipError, hipError_t as E
from pyhip.hipapi import devices as api
from pyhip.runtime import peer
from pyhip.runtime.context import runtime


def code(fn, *args):
    with pytest.raises(HipError) as info:
        fn(*args)
    return info.value.code


def test_ordinals_are_checked_once():
    n = api.count()
    assert n == len(runtime().devices) >= 2
    assert [api.get(i) for i in range(n)] == list(range(n))
    for fn in (api.get, api.total_mem, api.compute_capability):
        assert code(fn, n) == E.hipErrorInvalidDevice
        assert code(fn, -1) == E.hipErrorInvalidDevice
    assert code(api.name, 64, n) == E.hipErrorInvalidDevice      # the device is checked before the length
    assert code(api.pci_bus_id, 0, -1) == E.hipErrorInvalidDevice


def test_identity_from_the_properties():
    for i, d in enumerate(runtime().devices):
        p = d.props
        assert api.total_mem(i) == p.totalGlobalMem
        assert api.compute_capability(i) == (p.major, p.minor)
        assert api.name(256, i) == p.name.encode()
        assert api.name(5, i) == p.name.encode()[:4]                # room for the NUL
        bus = "%04x:%02x:%02x.0" % (p.pciDomainID, p.pciBusID, p.pciDeviceID)
        assert api.pci_bus_id(13, i) == bus.encode()
        assert api.by_pci_bus_id(bus) == i
        assert api.by_pci_bus_id("  " + bus.upper()) == i
        assert api.by_pci_bus_id(bus.encode()) == i


def test_bad_buffers_and_ids():
    assert code(api.name, 0, 0) == E.hipErrorInvalidValue
    assert code(api.name, -3, 0) == E.hipErrorInvalidValue
    assert code(api.pci_bus_id, 12, 0) == E.hipErrorInvalidValue
    assert code(api.by_pci_bus_id, "not a bus id") == E.hipErrorInvalidValue
    assert code(api.by_pci_bus_id, "ffff:ff:ff.0") == E.hipErrorInvalidValue
    assert code(api.by_pci_bus_id, b"\xff\xfe") == E.hipErrorInvalidValue


def test_limits():
    dev = runtime().device()
    assert api.limit(api.LIMIT_STACK) == dev.stack_size
    assert api.limit(api.LIMIT_MALLOC_HEAP) == dev.props.totalGlobalMem
    assert code(api.limit, api.LIMIT_PRINTF_FIFO) == E.hipErrorUnsupportedLimit
    assert code(api.limit, 3) == E.hipErrorInvalidValue
    assert code(api.limit, -1) == E.hipErrorInvalidValue


def test_cache_config():
    before = api.cache_config()
    try:
        for cfg in (3, 0, 2):
            api.set_cache_config(cfg)
            assert api.cache_config() == cfg
        for bad in (4, -1):
            assert code(api.set_cache_config, bad) == E.hipErrorInvalidValue
        assert api.cache_config() == 2                                 # a refused value changes nothing
    finally:
        api.set_cache_config(before)


def test_peer_access_rules():
    rt = runtime()
    rt.set_device(0)
    assert api.stream_priority_range() == (1, -1)
    assert api.can_access_peer(0, 1) == 1 and api.can_access_peer(1, 1) == 0
    assert code(api.enable_peer_access, 1, 1) == E.hipErrorInvalidValue      # flags must be 0
    assert (0, 1) not in peer.enabled(rt)                                           # … and nothing was mapped
    assert code(api.enable_peer_access, 99, 0) == E.hipErrorInvalidDevice
    api.enable_peer_access(1, 0)
    try:
        assert code(api.enable_peer_access, 1, 0) == E.hipErrorPeerAccessAlreadyEnabled
    finally:
        api.disable_peer_access(1)
    assert code(api.disable_peer_access, 1) == E.hipErrorPeerAccessNotEnabled


FORK_CHECK = """
import os
from pyhip.hipapi import devices as api
from pyhip.runtime import peer
from pyhip.runtime.context import runtime
rt = runtime()
rt.set_device(0)
api.enable_peer_access(1, 0)
pid = os.fork()
if pid == 0:                                  # the child: new devices, no mapping, enabling works again
    ok = not peer.enabled(rt)
    try:
        api.enable_peer_access(1, 0)
        ok = ok and peer.enabled(rt) == {(0, 1)}
    finally:
        os._exit(0 if ok else 1)
_, status = os.waitpid(pid, 0)
assert os.waitstatus_to_exitcode(status) == 0, "child"
assert peer.enabled(rt) == {(0, 1)}           # the parent keeps its own
print("ok")
"""


def test_a_forked_child_starts_with_no_peer_access():
    # in a fresh process: forking this one (threads of earlier tests, compiles under way) is not this test's subject
    import subprocess
    import sys

    r = subprocess.run([sys.executable, "-c", FORK_CHECK], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr[-2000:]
