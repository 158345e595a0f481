"""The registry over the runtime's real modules: a hipcc fat binary (two targets) registered as hip-clang's
constructors register it — a wrapper in host memory, kernel handle variables, a device variable, a managed
variable — its handles launching the right kernels on two ISAs (numpy computes the expected results), the
managed variable's memory shared by host and kernels, and the HIP codes of unknown handles."""
import ctypes
import os
import struct
import subprocess

import numpy as np
import pytest

import pyhip
from conftest import require_tool
from pyhip.errors import HipError, hipError_t
from pyhip.runtime.context import runtime

SOURCE = r"""
#include <hip/hip_runtime.h>
__managed__ int counts[5] = {10, 20, 30, 40, 50};
__device__ float bias[3];
__global__ void bump(int k) { int i = threadIdx.x; if (i < 5) counts[i] += k * i; }
__global__ void axpb(const float* x, float* y, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + bias[i % 3];
}
extern "C" __global__ void negate(float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = -y[i];
}
template <typename T> __global__ void twice(T* p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] = p[i] + p[i];
}
template __global__ void twice<int>(int*, int);
"""
DEVICES = (0, 3)            # the suite's gfx90a and gfx1030 (tests/conftest.py's PYHIP_DEVICES)


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    d = tmp_path_factory.mktemp("registry")
    (d / "k.hip").write_text(SOURCE)
    subprocess.run([require_tool("hipcc"), "--genco", "--offload-arch=gfx90a", "--offload-arch=gfx1030", "-O2",
                    str(d / "k.hip"), "-o", str(d / "k.bundle")], check=True, capture_output=True,
                   env={**os.environ, "HIP_PLATFORM": "amd"})
    return (d / "k.bundle").read_bytes()


class Program:
    """What a hipcc program's constructor registers: the wrapper, one host handle variable per kernel (its
    address is the handle), shadows of the device variables — all in this process's memory."""

    def __init__(self, bundle: bytes):
        self.image = ctypes.create_string_buffer(bundle, len(bundle))
        self.wrapper = ctypes.create_string_buffer(struct.pack("<IIQQ", 0x48495046, 1,
                                                               ctypes.addressof(self.image), 0), 24)
        self.stubs = {k: ctypes.c_char() for k in ("bump", "axpb", "negate", "twice")}
        self.bias = (ctypes.c_float * 3)()                 # __device__ float bias[3]'s host shadow
        self.counts = ctypes.c_void_p()                   # __managed__: the host pointer the runtime fills
        self.init = (ctypes.c_int * 5)(10, 20, 30, 40, 50)

    def handle(self, kernel: str) -> int:
        return ctypes.addressof(self.stubs[kernel])

    def register(self, reg) -> int:
        h = reg.register_wrapper(ctypes.addressof(self.wrapper))
        for kernel, name in (("bump", b"_Z4bumpi"), ("axpb", b"_Z4axpbPKfPffi"), ("negate", b"negate"),
                             ("twice", b"_Z5twiceIiEvPT_i")):
            reg.register_function(h, self.handle(kernel), name)
        reg.register_variable(h, ctypes.addressof(self.bias), b"bias", 12)
        reg.register_managed(h, ctypes.addressof(self.counts), b"counts", 20, ctypes.addressof(self.init))
        return h


def _launch(rt, program, kernel, n, args):
    rt.launch_by_handle(program.handle(kernel), ((n + 255) // 256, 1, 1), (256, 1, 1), args)


@pytest.mark.parametrize("device", DEVICES)
def test_handles_launch_their_kernels(bundle, device):
    rt, program = runtime(), Program(bundle)
    reg = rt.registry
    h = program.register(reg)
    rng = np.random.default_rng(device)
    pyhip.set_device(device)
    try:
        n, a = 1000, np.float32(rng.uniform(-3, 3))
        x = rng.standard_normal(n).astype(np.float32)
        bias = rng.standard_normal(3).astype(np.float32)
        dev = rt.device(device)
        dev.backend.write(reg.variable_address(ctypes.addressof(program.bias), dev), bias.tobytes())
        dx, dy = pyhip.to_device(x), pyhip.to_device(np.full(n, np.nan, np.float32))
        _launch(rt, program, "axpb", n, [dx, dy, a, np.int32(n)])
        pyhip.synchronize()
        expect = a * x + bias[np.arange(n) % 3]
        np.testing.assert_allclose(dy.get(), expect, rtol=1e-6, atol=1e-6)
        _launch(rt, program, "negate", n, [dy, np.int32(n)])
        ints = rng.integers(-1 << 20, 1 << 20, n, dtype=np.int32)
        di = pyhip.to_device(ints)
        _launch(rt, program, "twice", n - 7, [di, np.int32(n - 7)])
        pyhip.synchronize()
        np.testing.assert_allclose(dy.get(), -expect, rtol=1e-6, atol=1e-6)
        assert np.array_equal(di.get(), np.concatenate([ints[:n - 7] * 2, ints[n - 7:]]))
        # the managed variable: the host pointer holds memory the kernel updates in place
        assert program.counts.value and reg.variable(ctypes.addressof(program.counts)).managed_address == program.counts.value
        rt.launch_by_handle(program.handle("bump"), (1, 1, 1), (64, 1, 1), [np.int32(3)])
        pyhip.synchronize()
        counts = np.ctypeslib.as_array((ctypes.c_int * 5).from_address(program.counts.value))
        assert list(counts) == [10 + 3 * i + 10 * i for i in range(5)]
        assert list(reg.fatbin(h).per_device) == [device]          # loaded on the launch's device only
        assert reg.fatbins[h].binary.select(dev.isa).target.processor == dev.isa.processor
    finally:
        pyhip.set_device(0)
        reg.unregister_fatbin(h)


def test_unknown_handles_raise_hip_codes(bundle):
    rt, program = runtime(), Program(bundle)
    reg = rt.registry
    h = program.register(reg)
    assert h and h not in (0, 1)
    reg.unregister_fatbin(h)
    for call in (lambda: reg.register_function(h, program.handle("bump"), b"_Z4bumpi"),
                 lambda: reg.register_variable(h, ctypes.addressof(program.bias), b"bias", 12),
                 lambda: reg.register_managed(h, ctypes.addressof(program.counts), b"counts", 20, 0),
                 lambda: reg.fatbin(h)):
        with pytest.raises(HipError) as ei:
            call()
        assert ei.value.code == hipError_t.hipErrorInvalidHandle
    with pytest.raises(HipError) as ei:                  # unregistered with its fat binary
        rt.launch_by_handle(program.handle("negate"), (1, 1, 1), (64, 1, 1), [0, np.int32(0)])
    assert ei.value.code == hipError_t.hipErrorInvalidDeviceFunction
    with pytest.raises(HipError) as ei:
        reg.variable_address(ctypes.addressof(program.bias), rt.device(0))
    assert ei.value.code == hipError_t.hipErrorInvalidSymbol
    handles = [reg.register_fatbin(bundle) for _ in range(8)]
    for x in handles:
        reg.unregister_fatbin(x)
    again = reg.register_fatbin(bundle)
    assert len(set(handles + [again, h])) == 10              # unique, never reused
    reg.register_function(again, program.handle("negate"), b"no_such_kernel")
    with pytest.raises(HipError) as ei:
        reg.kernel(program.handle("negate"), rt.device(0))
    assert ei.value.code == hipError_t.hipErrorNotFound
    reg.unregister_fatbin(again)
