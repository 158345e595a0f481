"""pyhip.triton's side of Triton: autotune without torch, pointer arguments of every accepted kind, streams,
and the HIP 6 face of pyhip's libamdhip64 that Triton's launcher loads."""
import ctypes

import numpy as np
import pytest

triton = pytest.importorskip("triton", reason="triton is not importable")
tl = pytest.importorskip("triton.language", reason="triton is not importable")

import pyhip  # noqa: E402
import pyhip.triton  # noqa: E402
from pyhip.errors import HipError, hipError_t  # noqa: E402
from pyhip.runtime.context import runtime  # noqa: E402


@pytest.fixture(params=["gfx90a", "gfx1100"])
def drv(request):
    d = pyhip.triton.activate(request.param)
    yield d
    pyhip.triton.deactivate()


@triton.jit
def scale_kernel(x_ptr, out_ptr, n, alpha, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) * alpha, mask=m)


@triton.autotune(configs=[triton.Config({"BLOCK": 64}, num_warps=1), triton.Config({"BLOCK": 256}, num_warps=4)],
                 key=["n"])
@triton.jit
def tuned_scale_kernel(x_ptr, out_ptr, n, alpha, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) * alpha, mask=m)


def _data(n, seed=0):
    return np.random.default_rng(seed).standard_normal(n).astype(np.float32)


def test_autotune_benchmarks_both_configs(drv):
    n = 5003
    a = _data(n)
    x, out = pyhip.to_device(a), pyhip.empty(n, np.float32)
    tuned_scale_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, out, n, 1.5)
    pyhip.synchronize()
    np.testing.assert_array_equal(out.get(), a * np.float32(1.5))
    timings = tuned_scale_kernel.configs_timings
    assert len(timings) == 2 and all(t[0] > 0 for t in timings.values())        # both ran under do_bench
    assert tuned_scale_kernel.best_config.kwargs["BLOCK"] in (64, 256)
    x.free(), out.free()


def test_do_bench_times_with_pyhip_events(drv):
    n = 1000
    x, out = pyhip.to_device(_data(n)), pyhip.empty(n, np.float32)
    ms = triton.testing.do_bench(lambda: scale_kernel[(4,)](x, out, n, 2.0, BLOCK=256), warmup=1, rep=5)
    assert 0 < ms < 1000


class _Cai:
    """A foreign device buffer: only __cuda_array_interface__ (as hip-python's, numba's, CuPy's)."""

    def __init__(self, arr):
        self.arr = arr
        self.__cuda_array_interface__ = {"data": (arr.data_ptr(), False), "typestr": "<f4", "shape": arr.shape,
                                         "version": 3}


class _DLPackOnly:
    """A foreign device buffer exporting only the DLPack protocol (on the ROCm device)."""

    def __init__(self, arr):
        self.arr = arr

    def __dlpack__(self, stream=None):
        return self.arr.__dlpack__()

    def __dlpack_device__(self):
        return self.arr.__dlpack_device__()


class _PtrOnly:
    def __init__(self, arr):
        self.arr = arr

    def data_ptr(self):
        return self.arr.data_ptr()


def test_pointer_kinds(drv):
    n = 777
    a = _data(n, 4)
    x = pyhip.to_device(a)
    outs = [pyhip.empty(n, np.float32) for _ in range(4)]
    wrapped = [outs[0],                                                   # a DeviceArray as is
               pyhip.triton.tensor(_Cai(outs[1])),                        # __cuda_array_interface__
               pyhip.triton.tensor(_DLPackOnly(outs[2])),                 # DLPack (ROCm device)
               pyhip.triton.tensor(_PtrOnly(outs[3]), dtype=np.float32)]  # data_ptr() + explicit dtype
    for i, o in enumerate(wrapped):
        scale_kernel[(triton.cdiv(n, 128),)](x, o, n, float(i + 2), BLOCK=128)
    pyhip.synchronize()
    for i, o in enumerate(outs):
        np.testing.assert_array_equal(o.get(), a * np.float32(i + 2))
    assert pyhip.triton.tensor(outs[2]).dtype == np.float32


def test_dlpack_wrapper_reads_the_capsule():
    d = pyhip.empty((3, 5), np.float16)
    p = pyhip.triton.tensor(_DLPackOnly(d))
    assert (p.data_ptr(), p.dtype, p.shape) == (d.data_ptr(), np.dtype(np.float16), (3, 5))


def test_bad_pointer_arguments_are_typed_errors(drv):
    with pytest.raises(HipError) as e:
        pyhip.triton.tensor(object())
    assert e.value.code == hipError_t.hipErrorInvalidValue
    with pytest.raises(HipError):
        pyhip.triton.tensor(_PtrOnly(pyhip.empty(4)))          # no dtype to type the pointer with
    host = np.zeros(16, np.float32)                            # host memory is not a device pointer
    with pytest.raises((TypeError, ValueError)):
        scale_kernel[(1,)](host, host, 16, 1.0, BLOCK=16)


def test_launch_on_a_pyhip_stream(drv):
    n = 4099
    a = _data(n, 5)
    x, out = pyhip.to_device(a), pyhip.empty(n, np.float32)
    s = pyhip.Stream(non_blocking=True)
    with pyhip.triton.stream(s):
        assert drv.get_current_stream(drv.get_current_device()) != 0
        scale_kernel[(triton.cdiv(n, 256),)](x, out, n, 3.0, BLOCK=256)
    s.synchronize()
    np.testing.assert_array_equal(out.get(), a * np.float32(3.0))
    assert drv.get_current_stream(drv.get_current_device()) == 0


def test_device_properties_through_the_hip6_library(drv):
    props = drv.utils.get_device_properties(drv.get_current_device())
    p = runtime().device(drv.get_current_device()).props
    assert props["arch"] == p.gcnArchName
    assert (props["warpSize"], props["multiprocessor_count"], props["max_shared_mem"]) == \
        (p.warpSize, p.multiProcessorCount, p.sharedMemPerBlock)


def test_hip6_library_answers_like_a_hip_runtime():
    from triton import knobs

    pyhip.triton.activate("gfx90a")
    lib = ctypes.CDLL(knobs.amd.libhip_path)
    v = ctypes.c_int()
    assert lib.hipDriverGetVersion(ctypes.byref(v)) == 0 and v.value >= 60000000
    fn, status = ctypes.c_void_p(), ctypes.c_int(-1)
    assert lib.hipGetProcAddress(b"hipModuleLaunchKernel", ctypes.byref(fn), v.value, 0, ctypes.byref(status)) == 0
    assert fn.value and status.value == 0
    # a function it does not offer: hipErrorNotFound, HIP_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND
    assert lib.hipGetProcAddress(b"hipGraphCreate", ctypes.byref(fn), v.value, 0, ctypes.byref(status)) == 500
    assert fn.value is None and status.value == 1
    # a newer HIP than its headers: VERSION_NOT_SUFFICIENT
    assert lib.hipGetProcAddress(b"hipModuleLaunchKernel", ctypes.byref(fn), v.value + 1, 0,
                                 ctypes.byref(status)) == 500 and status.value == 2
    # the cooperative module launch HIP 5.2 lacks is reported unsupported, not run without co-residency
    assert lib.hipGetProcAddress(b"hipModuleLaunchCooperativeKernel", ctypes.byref(fn), v.value, 0, None) == 0
    coop = ctypes.CFUNCTYPE(ctypes.c_int, *[ctypes.c_void_p] + [ctypes.c_uint] * 7 + [ctypes.c_void_p] * 3)(fn.value)
    assert coop(None, 1, 1, 1, 64, 1, 1, 0, None, None, None) == 801
    pyhip.triton.deactivate()


def test_unknown_device_is_a_typed_error():
    with pytest.raises(HipError) as e:
        pyhip.triton.activate("gfx803")
    assert e.value.code == hipError_t.hipErrorInvalidDevice
