"""Faults are reported with kernel, workgroup, wave, PC, instruction and address; the device stays usable.
The watchdog stops an infinite loop with a per-wave dump; an unimplemented instruction names itself."""
import numpy as np
import pytest

import pyhip
from pyhip.errors import HipError, hipError_t
from pyhip.runtime.context import runtime

from conftest import BIN


@pytest.fixture
def basic():
    pyhip.set_device(0)
    return pyhip.load(BIN / "hipcc52/basic-gfx90a.hsaco")


def _vadd_ok(m):
    n = 300
    a = np.arange(n, dtype=np.float32)
    c = pyhip.empty(n, np.float32)
    m.kernel("vadd")(grid(n), 256, pyhip.to_device(a), pyhip.to_device(a), c, n)
    pyhip.synchronize()
    assert np.array_equal(c.get(), a + a)


def grid(n, b=256):
    return (n + b - 1) // b


def _expect_fault(fn, code):
    with pytest.raises(HipError) as ei:
        fn()
        pyhip.synchronize()
    assert ei.value.code == code, ei.value
    return str(ei.value)


def test_out_of_bounds_read_and_write(basic, exact_bounds):
    n = 1000
    small = pyhip.empty(100, np.float32)            # far too small for n elements (exact bounds: what a GPU
                                                    # reads past its page depends on the next allocation)
    ok = pyhip.to_device(np.zeros(n, np.float32))
    msg = _expect_fault(lambda: basic.kernel("vadd")(grid(n), 256, small, ok, ok, n), hipError_t.hipErrorIllegalAddress)
    for key in ("kernel=vadd", "workgroup=", "wave=", "pc=0x", "instruction=global_load_dword", "address=0x"):
        assert key in msg, msg
    msg = _expect_fault(lambda: basic.kernel("vadd")(grid(n), 256, ok, ok, small, n), hipError_t.hipErrorIllegalAddress)
    assert "global_store_dword" in msg or "store" in msg
    _vadd_ok(basic)                                  # the device is still usable


def test_null_pointer(basic):
    n = 64
    ok = pyhip.to_device(np.zeros(n, np.float32))
    msg = _expect_fault(lambda: basic.kernel("vadd")(1, 64, 0, ok, ok, n), hipError_t.hipErrorIllegalAddress)
    assert "address=0x0" in msg
    _vadd_ok(basic)


def test_lds_out_of_range_is_no_fault():
    """A kernel using more LDS than it asked for (no dynamic LDS): as on a GPU, no fault; reads beyond the
    workgroup's LDS return 0 and writes there are dropped (tests/emu/test_lds_bounds.py)."""
    pyhip.set_device(0)
    m = pyhip.load(BIN / "hipcc52/lds-gfx90a.hsaco")
    d = pyhip.to_device(np.arange(256, dtype=np.int32))
    m.kernel("reverse_dynamic")(2, 128, d, 256, shared=0)
    pyhip.synchronize()
    assert not d.get().any()
    d = pyhip.to_device(np.arange(256, dtype=np.int32))
    m.kernel("reverse_dynamic")(2, 128, d, 256, shared=512)
    pyhip.synchronize()
    assert np.array_equal(d.get(), np.concatenate([np.arange(128)[::-1], np.arange(128, 256)[::-1]]))


def test_watchdog_stops_infinite_loop(basic):
    pyhip.set_device(0)
    m = pyhip.load(BIN / "hipcc52/math-gfx90a.hsaco")
    gpu = runtime().device().backend.gpu
    old = gpu.watchdog_steps
    gpu.watchdog_steps = 20000
    try:
        flag = pyhip.to_device(np.zeros(1, np.int32))
        out = pyhip.empty(64, np.int32)
        msg = _expect_fault(lambda: m.kernel("spin")(1, 64, flag, out), hipError_t.hipErrorLaunchTimeOut)
        assert "watchdog" in msg and "wave 0 of workgroup (0, 0, 0) at pc 0x" in msg
        assert "exec=0x000000000000ffff" not in msg and "exec=0xffffffffffffffff" in msg and "s0=0x" in msg
    finally:
        gpu.watchdog_steps = old
    _vadd_ok(basic)


def test_unimplemented_instruction_names_itself():
    """An instruction the emulator lacks faults (hipErrorLaunchFailure) naming itself, kernel and PC;
    the device keeps working."""
    from asmkit import run
    from pyhip.emu.memory import GPUFault

    with pytest.raises(GPUFault) as ei:
        run("v_screen_partition_4se_b32 v8, v2", np.zeros(64, np.uint64))
    msg = str(ei.value)
    assert ei.value.code == hipError_t.hipErrorLaunchFailure
    assert "v_screen_partition_4se_b32" in msg and "not implemented" in msg and "pc=0x" in msg and "kernel=k" in msg
    r0, _ = run("v_add_u32 v8, v2, v4", np.arange(64, dtype=np.uint64), np.arange(64, dtype=np.uint64))
    assert np.array_equal(r0, 2 * np.arange(64, dtype=np.uint64))


def test_bad_kernel_object_and_kernarg_pointer():
    gpu = runtime().device(0).backend.gpu
    from pyhip.emu.memory import GPUFault
    with pytest.raises(GPUFault) as ei:
        gpu.run_dispatch(kernel_object=0x1234, kernarg_address=0, grid_size=(1, 1, 1), workgroup_size=(1, 1, 1),
                         group_segment_size=0, private_segment_size=0)
    assert ei.value.code == hipError_t.hipErrorInvalidDeviceFunction
    pyhip.set_device(0)
    m = pyhip.load(BIN / "hipcc52/basic-gfx90a.hsaco")
    f = m._module.function("vadd")
    with pytest.raises(GPUFault) as ei:
        gpu.run_dispatch(kernel_object=f.kernel_object, kernarg_address=0xDEAD0000, grid_size=(64, 1, 1),
                         workgroup_size=(64, 1, 1), group_segment_size=0, private_segment_size=0)
    assert ei.value.code == hipError_t.hipErrorIllegalAddress and "kernarg" in str(ei.value)


def test_fault_fields_on_the_direct_api():
    """EmulatedGPU.run_dispatch raises GPUFault with its fields as attributes; the next dispatch works."""
    from asmkit import run
    from pyhip.emu.memory import GPUFault

    body = "v_add_u32 v12, 0xf0000000, v1\n  global_store_dword v12, v2, s[6:7]"   # 3.75 GiB past the output
    with pytest.raises(GPUFault) as ei:
        run(body, np.zeros(64, np.uint64))
    f = ei.value
    assert f.code == hipError_t.hipErrorIllegalAddress
    assert f.kernel == "k" and f.workgroup == (0, 0, 0) and f.wave == 0
    assert isinstance(f.pc, int) and "global_store_dword" in f.instruction
    assert isinstance(f.address, int) and f.address > 0xf0000000
    r0, _ = run("v_mov_b32 v8, 7", np.zeros(64, np.uint64))
    assert (r0 == 7).all()
