"""pyhip.hip's memory functions against numpy references with random data and odd sizes: pitched/3-D memory
and copies/fills, driver-style and stream copies, pointer attributes, host registration (a kernel writes a
numpy array), managed and stream-ordered memory, managed variables of a loaded module, stream memory
operations."""
from __future__ import annotations

import ctypes
import os
import subprocess
from types import SimpleNamespace as NS

import numpy as np

import pyhip.hip as hip
from pyhip.errors import hipError_t as E

from conftest import require_tool
from hipkit import D2H, H2D, basic, ok  # noqa: F401  (basic: a fixture)

rng = np.random.default_rng(18)


def test_pitched_2d_and_3d_roundtrips():
    ok(hip.hipSetDevice(0))
    W, H = 91, 7
    d, pitch = ok(hip.hipMallocPitch(W, H))
    assert pitch >= W and pitch % 256 == 0
    a = rng.integers(0, 256, (H, W), dtype=np.uint8)
    ok(hip.hipMemcpy2D(d, pitch, a, W, W, H, H2D))
    ok(hip.hipMemset2D(int(d) + 2 * pitch + 3, pitch, 0x5A, 10, 3))
    back = np.full((H, W), 0xCD, np.uint8)
    ok(hip.hipMemcpy2D(back, W, d, pitch, W, H, D2H))
    ref = a.copy()
    ref[2:5, 3:13] = 0x5A
    assert np.array_equal(back, ref)
    assert hip.hipMemcpy2D(back, W - 1, d, pitch, W, H, D2H)[0] == E.hipErrorInvalidPitchValue
    ok(hip.hipFree(d))
    ext = hip.hipExtent(width=13, height=5, depth=4)
    pp = hip.hipPitchedPtr()                       # filled in place
    ok(hip.hipMalloc3D(pp, ext))
    assert pp.pitch >= 13 and (pp.xsize, pp.ysize) == (13, 5)
    vol = rng.integers(0, 256, (4, 5, 13), dtype=np.uint8)
    host = hip.hipPitchedPtr(ptr=vol.ctypes.data, pitch=13, xsize=13, ysize=5)
    ok(hip.hipMemcpy3D(hip.hipMemcpy3DParms(srcPtr=host, dstPtr=pp, extent=ext, kind=H2D)))
    ok(hip.hipMemset3D(hip.hipPitchedPtr(ptr=int(pp.ptr) + pp.pitch * 5 + pp.pitch + 2, pitch=pp.pitch, xsize=13,
                                        ysize=5), 7, hip.hipExtent(width=4, height=2, depth=2)))
    out = np.zeros_like(vol)
    ok(hip.hipMemcpy3D(hip.hipMemcpy3DParms(srcPtr=pp, extent=ext, kind=D2H,
                                          dstPtr=hip.hipPitchedPtr(ptr=out.ctypes.data, pitch=13, xsize=13, ysize=5))))
    ref = vol.copy()
    ref[1:3, 1:3, 2:6] = 7
    assert np.array_equal(out, ref)
    ok(hip.hipFree(pp.ptr))


def test_driver_style_and_stream_copies():
    ok(hip.hipSetDevice(0))
    n = 777
    a = rng.standard_normal(n).astype(np.float32)
    d1, d2 = ok(hip.hipMalloc(a.nbytes)), ok(hip.hipMalloc(a.nbytes))
    s = ok(hip.hipStreamCreate())
    ok(hip.hipMemcpyHtoDAsync(d1, a, a.nbytes, s))
    ok(hip.hipMemcpyDtoDAsync(d2, d1, a.nbytes, s))
    b = np.zeros_like(a)
    ok(hip.hipMemcpyWithStream(b, d2, a.nbytes, D2H, s))
    assert np.array_equal(a, b)
    ok(hip.hipStreamDestroy(s))
    for p in (d1, d2):
        ok(hip.hipFree(p))


def test_pointer_attributes_and_registered_numpy_memory(basic):
    ok(hip.hipSetDevice(0))
    d = ok(hip.hipMalloc(4096))
    attrs = NS(memoryType=-1, device=-1, devicePointer=None, hostPointer=None, isManaged=-1, allocationFlags=-1)
    ok(hip.hipPointerGetAttributes(attrs, int(d) + 100))
    assert (attrs.memoryType, attrs.device, int(attrs.devicePointer), attrs.isManaged) == (1, 0, int(d) + 100, 0)
    assert ok(hip.hipMemPtrGetInfo(int(d) + 8)) == 4096
    base, size = ok(hip.hipMemGetAddressRange(int(d) + 4000))
    assert (int(base), size) == (int(d), 4096)
    host = rng.integers(-1000, 1000, 1500).astype(np.int32)
    expect = host * 3
    assert hip.hipPointerGetAttributes(attrs, host)[0] == E.hipErrorInvalidValue
    ok(hip.hipHostRegister(host, host.nbytes, 0))
    assert hip.hipHostRegister(host[10:], 400, 0)[0] == E.hipErrorHostMemoryAlreadyRegistered   # overlapping
    dev_view = ok(hip.hipHostGetDevicePointer(host, 0))
    f = ok(hip.hipModuleGetFunction(basic, "scale<int>"))
    ok(hip.hipModuleLaunchKernel(f, 6, 1, 1, 256, 1, 1, 0, None, [dev_view, np.int32(3), np.int32(host.size)], None))
    ok(hip.hipDeviceSynchronize())
    assert np.array_equal(host, expect)                  # the kernel wrote the caller's numpy array
    assert ok(hip.hipHostGetFlags(host)) == 0
    ok(hip.hipHostUnregister(host))
    assert hip.hipHostUnregister(host)[0] == E.hipErrorHostMemoryNotRegistered
    ok(hip.hipFree(d))


def assert_allocation_like_hip_python(name, ptr, size):
    """hip-python's allocators return a DeviceArray configured as ``size`` bytes (shape (size,))."""
    from pyhip.hip._hippython_api import FUNCTIONS

    assert FUNCTIONS[name]["returns"] == ("hipError_t", "DeviceArray")
    assert type(ptr).__name__ == "DeviceArray" and ptr.shape == (size,) and int(ptr) != 0, (name, ptr)


def test_managed_and_stream_ordered_memory(basic):
    ok(hip.hipSetDevice(0))
    n = 1000
    m = ok(hip.hipMallocManaged(n * 4, 1))
    assert_allocation_like_hip_python("hipMallocManaged", m, n * 4)
    view = np.ctypeslib.as_array((np.ctypeslib.ctypes.c_float * n).from_address(int(m)))
    view[:] = np.arange(n, dtype=np.float32)
    f = ok(hip.hipModuleGetFunction(basic, "scale<float>"))
    ok(hip.hipModuleLaunchKernel(f, 4, 1, 1, 256, 1, 1, 0, None, [m, np.float32(0.5), np.int32(n)], None))
    ok(hip.hipDeviceSynchronize())
    assert np.array_equal(view, np.arange(n, dtype=np.float32) * 0.5)
    ok(hip.hipFree(m))
    free0 = ok(hip.hipMemGetInfo())[0]
    s = ok(hip.hipStreamCreate())
    p = ok(hip.hipMallocAsync(n * 4, s))
    assert_allocation_like_hip_python("hipMallocAsync", p, n * 4)
    ok(hip.hipMemsetD32Async(p, 0x3F800000, n, s))          # 1.0f
    out = np.zeros(n, np.float32)
    ok(hip.hipMemcpyAsync(out, p, n * 4, D2H, s))
    ok(hip.hipFreeAsync(p, s))
    ok(hip.hipStreamSynchronize(s))
    assert (out == 1.0).all() and ok(hip.hipMemGetInfo())[0] == free0
    ok(hip.hipStreamDestroy(s))


def test_managed_variables_of_a_loaded_module(tmp_path):
    """__managed__ variables of a hipModuleLoad'ed code object get managed memory with their initial values;
    kernels and hipModuleGetGlobal see the same memory."""
    src = tmp_path / "managed.hip"
    src.write_text(r"""
#include <hip/hip_runtime.h>
__managed__ int counter = 41;
__managed__ float table[5] = {1, 2, 3, 4, 5};
extern "C" __global__ void bump(float f) { atomicAdd(&counter, 1); if (threadIdx.x < 5) table[threadIdx.x] *= f; }
""")
    co = tmp_path / "managed.co"
    subprocess.run([require_tool("hipcc"), "--genco", "--offload-arch=gfx90a", str(src), "-o", str(co)], check=True,
                   capture_output=True, env={**os.environ, "HIP_PLATFORM": "amd"})
    import ctypes
    ok(hip.hipSetDevice(0))
    m = ok(hip.hipModuleLoad(str(co)))
    f = ok(hip.hipModuleGetFunction(m, "bump"))
    ok(hip.hipModuleLaunchKernel(f, 1, 1, 1, 7, 1, 1, 0, None, [np.float32(-2.5)], None))
    ok(hip.hipDeviceSynchronize())
    addr, size = ok(hip.hipModuleGetGlobal(m, "counter"))
    assert size == 4 and ctypes.c_int.from_address(int(addr)).value == 41 + 7
    addr, size = ok(hip.hipModuleGetGlobal(m, "table"))
    table = np.ctypeslib.as_array((ctypes.c_float * 5).from_address(int(addr)))
    assert size == 20 and np.array_equal(table, np.arange(1, 6, dtype=np.float32) * np.float32(-2.5))
    ok(hip.hipModuleUnload(m))


def test_stream_memory_operations():
    """hipStreamWaitValue/WriteValue in stream order on registered host, device and signal memory."""
    import time

    ok(hip.hipSetDevice(0))
    s = ok(hip.hipStreamCreate())
    d = ok(hip.hipExtMallocWithFlags(64, 0))
    h = np.zeros(2, np.uint64)
    ok(hip.hipHostRegister(h, h.nbytes, 0))
    sig = ok(hip.hipExtMallocWithFlags(8, 2))                   # hipMallocSignalMemory: host-visible
    assert_allocation_like_hip_python("hipExtMallocWithFlags", sig, 8)
    assert_allocation_like_hip_python("hipExtMallocWithFlags", d, 64)
    ok(hip.hipStreamWriteValue64(s, int(d) + 8, 0x1234567890, 0))
    ok(hip.hipStreamWaitValue32(s, int(d) + 8, 0x7890, hip.hipStreamWaitValueEq, 0xFFFF))
    ok(hip.hipStreamWaitValue64(s, h, 5, hip.hipStreamWaitValueGte, (1 << 64) - 1))
    ok(hip.hipStreamWriteValue64(s, int(h.ctypes.data) + 8, 77, 0))
    ok(hip.hipStreamWriteValue64(s, sig, 9, 0))
    time.sleep(0.2)
    assert hip.hipStreamQuery(s)[0] == E.hipErrorNotReady and h[1] == 0     # blocked at the host-word wait
    h[0] = 6
    ok(hip.hipStreamSynchronize(s))
    assert h[1] == 77 and np.frombuffer((ctypes.c_uint64 * 1).from_address(int(sig)), np.uint64)[0] == 9
    assert hip.hipStreamWaitValue32(s, 0, 0, 0, 1)[0] == E.hipErrorInvalidValue
    assert hip.hipStreamWaitValue32(s, h, 0, 9, 1)[0] == E.hipErrorInvalidValue
    for p in (d, sig):
        ok(hip.hipFree(p))
    ok(hip.hipHostUnregister(h))
    ok(hip.hipStreamDestroy(s))
