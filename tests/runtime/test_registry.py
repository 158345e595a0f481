"""hip-clang registration scheme: fat binaries, handle variables, call configurations."""

import pytest

from conftest import fixture_files, fixture_path
from pyhip.errors import HipError, LoaderError, hipError_t
from pyhip.loader.targetid import DeviceISA
from pyhip.registry import Registry


def _bundle_bytes() -> bytes:
    entry = next(e for e in fixture_files("bundle") if any(t.startswith("gfx90a") for t in e["targets"]))
    return fixture_path(entry).read_bytes()


def test_register_resolve_unregister():
    reg = Registry()
    h = reg.register_fatbin(_bundle_bytes())
    reg.register_function(h, 0x1000, b"vadd_c_missing_is_fine_until_launch")
    reg.register_variable(h, 0x2000, "gtab", 256)
    fb, name = reg.function(0x1000)
    assert fb.handle == h and name.startswith("vadd_c")
    assert reg.variable(0x2000).size == 256
    with pytest.raises(HipError) as ei:
        reg.function(0x9999)
    assert ei.value.code == hipError_t.hipErrorInvalidDeviceFunction == 98
    reg.unregister_fatbin(h)
    with pytest.raises(HipError):
        reg.function(0x1000)
    with pytest.raises(HipError):
        reg.variable(0x2000)
    assert reg.unregister_fatbin(h) is None


def test_lazy_per_device_loading_and_selection():
    reg = Registry()
    h = reg.register_fatbin(lambda: _bundle_bytes())
    loads = []
    fb = reg.fatbins[h]
    assert fb.binary is None                                  # nothing parsed at registration
    isa = DeviceISA.parse("gfx90a:sramecc+:xnack-")
    obj = reg.loaded(fb, 0, isa, lambda co: loads.append(co) or ("loaded", co.target.processor))
    assert obj == ("loaded", "gfx90a")
    assert reg.loaded(fb, 0, isa, lambda co: loads.append(co)) == obj and len(loads) == 1
    with pytest.raises(LoaderError) as ei:
        reg.loaded(fb, 1, DeviceISA.parse("gfx1201"), lambda co: co)
    assert ei.value.code == hipError_t.hipErrorNoBinaryForGpu


def test_garbage_fatbin_fails_at_use_not_registration():
    reg = Registry()
    h = reg.register_fatbin(b"garbage" * 10)
    reg.register_function(h, 0x10, "k")
    fb, _ = reg.function(0x10)
    for _ in range(2):   # the error is remembered, never an abort
        with pytest.raises(LoaderError) as ei:
            reg.loaded(fb, 0, DeviceISA.parse("gfx90a:sramecc+:xnack-"), lambda co: co)
        assert ei.value.code == hipError_t.hipErrorInvalidImage
