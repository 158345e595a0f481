"""hip-clang registration scheme: fat binaries (as bytes and as wrappers in host memory), handle variables,
lazy per-device loading, variables and managed-variable binding, symbol bounds."""

import ctypes
import struct
from types import SimpleNamespace

import pytest

from conftest import fixture_files, fixture_path
from pyhip.errors import HipError, LoaderError, hipError_t
from pyhip.loader import load
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


class FakeModule:
    """What the registry needs of a module: kernels and globals by name (from the real code object)."""

    BASE = 0x7F0000

    def __init__(self, device, co):
        self.device, self.co = device, co
        self.globals = {g.name: g for g in co.globals}

    def function(self, name):
        return ("kernel", self.co.find_kernel(name).name, self.device.index)

    def global_var(self, name):
        g = self.globals[name]
        return self.BASE + g.vaddr, g.size


def _device(index=0, isa="gfx90a:sramecc+:xnack-"):
    written = {}
    return SimpleNamespace(index=index, isa=DeviceISA.parse(isa), written=written,
                           backend=SimpleNamespace(write=lambda addr, data: written.__setitem__(addr, bytes(data))))


def test_lazy_per_device_loading_and_selection():
    loads = []
    reg = Registry(make_module=lambda dev, co: loads.append(co) or FakeModule(dev, co))
    h = reg.register_fatbin(lambda: _bundle_bytes())
    reg.register_function(h, 0x1000, "_Z5scaleIfEvPT_S0_i")
    fb = reg.fatbins[h]
    assert fb.binary is None                                  # nothing parsed at registration
    dev = _device()
    assert reg.kernel(0x1000, dev) == ("kernel", "_Z5scaleIfEvPT_S0_i", 0)
    assert reg.kernel(0x1000, dev) == ("kernel", "_Z5scaleIfEvPT_S0_i", 0) and len(loads) == 1
    assert loads[0].target.processor == "gfx90a"
    with pytest.raises(LoaderError) as ei:
        reg.kernel(0x1000, _device(1, "gfx1201"))
    assert ei.value.code == hipError_t.hipErrorNoBinaryForGpu


def test_garbage_fatbin_fails_at_use_not_registration():
    reg = Registry(make_module=FakeModule)
    h = reg.register_fatbin(b"garbage" * 10)
    reg.register_function(h, 0x10, "k")
    for _ in range(2):   # the error is remembered, never an abort
        with pytest.raises(LoaderError) as ei:
            reg.kernel(0x10, _device())
        assert ei.value.code == hipError_t.hipErrorInvalidImage


def _wrapper(target_address: int, magic=0x48495046, version=1):
    w = ctypes.create_string_buffer(struct.pack("<IIQQ", magic, version, target_address, 0), 24)
    return w, ctypes.addressof(w)


def test_fat_binary_wrapper_in_host_memory():
    """``__hipRegisterFatBinary``'s argument: the wrapper at an address, the bundle read from memory on
    first use, sized by its own table (the buffer holding it is longer)."""
    data = _bundle_bytes()
    buf = ctypes.create_string_buffer(data + b"\xee" * 4096, len(data) + 4096)
    keep, addr = _wrapper(ctypes.addressof(buf))
    reg = Registry(make_module=FakeModule)
    h = reg.register_wrapper(addr)
    assert reg.fatbins[h].binary is None
    reg.register_function(h, 0x1000, "_Z5scaleIfEvPT_S0_i")
    assert reg.kernel(0x1000, _device()) == ("kernel", "_Z5scaleIfEvPT_S0_i", 0)
    assert [r.entry_id for r in reg.fatbins[h].binary.code_objects] == \
        [r.entry_id for r in load(data).code_objects]
    for magic, version in ((0x12345678, 1), (0x48495046, 2)):     # not a wrapper: refused at registration
        keep2, bad = _wrapper(ctypes.addressof(buf), magic, version)
        with pytest.raises(HipError) as ei:
            reg.register_wrapper(bad)
        assert ei.value.code == hipError_t.hipErrorInvalidImage
    junk = ctypes.create_string_buffer(b"\x01" * 64, 64)           # a wrapper pointing at no bundle
    keep3, addr3 = _wrapper(ctypes.addressof(junk))
    h3 = reg.register_wrapper(addr3)
    reg.register_function(h3, 0x3000, "k")
    with pytest.raises(HipError) as ei:
        reg.kernel(0x3000, _device())
    assert ei.value.code == hipError_t.hipErrorInvalidImage


def test_variables_managed_binding_and_bounds():
    reg = Registry(make_module=FakeModule)
    h = reg.register_fatbin(_bundle_bytes())
    co = load(_bundle_bytes()).select("gfx90a:sramecc+:xnack-")
    table = {g.name: g for g in co.globals}
    reg.register_variable(h, 0x2000, "g_table", table["g_table"].size)
    reg.register_variable(h, 0x2100, "c_coef", table["c_coef"].size, managed=True, managed_address=0xABCDEF0)
    dev = _device()
    base = FakeModule.BASE + table["g_table"].vaddr
    assert reg.variable_address(0x2000, dev) == base
    assert reg.variable_address(0x2000, dev, 8, table["g_table"].size - 8) == base + 8
    with pytest.raises(HipError) as ei:
        reg.variable_address(0x2000, dev, 8, table["g_table"].size - 7)
    assert ei.value.code == hipError_t.hipErrorInvalidValue
    with pytest.raises(HipError) as ei:
        reg.variable_address(0x9999, dev)
    assert ei.value.code == hipError_t.hipErrorInvalidSymbol
    # loading the module bound the managed variable: its device pointer holds the managed address
    assert dev.written == {FakeModule.BASE + table["c_coef"].vaddr: struct.pack("<Q", 0xABCDEF0)}
    reg2 = Registry(make_module=FakeModule)
    h2 = reg2.register_fatbin(_bundle_bytes())
    reg2.register_variable(h2, 0x2200, "g_counter", 4, managed=True, managed_address=0x1000)   # 4 bytes: no pointer
    reg2.register_function(h2, 0x1000, "_Z5scaleIfEvPT_S0_i")
    with pytest.raises(HipError) as ei:
        reg2.kernel(0x1000, _device())
    assert ei.value.code == hipError_t.hipErrorInvalidSymbol
