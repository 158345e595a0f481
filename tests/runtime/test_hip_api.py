"""pyhip.hip: HIP's names and numeric codes in hip-python's (err, value...) convention, end to end."""
import ctypes
import threading

import numpy as np
import pytest

import pyhip.hip as hip
from pyhip.hip import hipError_t as E

from conftest import BIN

RNG = np.random.default_rng(3)
V = hip.hipMemcpyKind


def ok(ret):
    assert isinstance(ret, tuple) and ret[0] == E.hipSuccess, ret
    return ret[1] if len(ret) == 2 else ret[1:]


def test_init_versions_devices_properties():
    assert hip.hipInit(0) == (E.hipSuccess,)
    assert ok(hip.hipDriverGetVersion()) == ok(hip.hipRuntimeGetVersion()) == 50221153 == hip.HIP_VERSION
    assert ok(hip.hipGetDeviceCount()) == 4
    props = hip.hipDeviceProp_t()                                # hip-python: the struct is filled in place
    assert hip.hipGetDeviceProperties(props, 1) == (E.hipSuccess,)
    assert props.gcnArchName.startswith(b"gfx942") and props.warpSize == 64 and props.maxThreadsPerBlock == 1024
    assert props.multiProcessorCount > 0 and props.totalGlobalMem > 0 and props.maxGridSize[0] == 2 ** 31 - 1
    assert ok(hip.hipDeviceGetAttribute(hip.hipDeviceAttribute_t.hipDeviceAttributeWarpSize, 0)) == 64
    assert ok(hip.hipDeviceGetAttribute(hip.hipDeviceAttribute_t.hipDeviceAttributeMultiprocessorCount, 1)) == \
        props.multiProcessorCount
    with pytest.raises(TypeError):                               # hip-python: an enum parameter needs the enum
        hip.hipDeviceGetAttribute(123456, 0)
    err, val = hip.hipDeviceGetAttribute(hip.hipDeviceAttribute_t.hipDeviceAttributeImageSupport, 9)
    assert err == E.hipErrorInvalidDevice and val is None
    assert hip.hipSetDevice(7)[0] == E.hipErrorInvalidDevice == 101
    assert hip.hipGetLastError() == (E.hipErrorInvalidDevice,)
    assert hip.hipGetLastError() == (E.hipSuccess,)


def test_current_device_is_per_thread():
    ok(hip.hipSetDevice(1))
    seen = []
    t = threading.Thread(target=lambda: seen.append(ok(hip.hipGetDevice())))
    t.start()
    t.join()
    assert seen == [0] and ok(hip.hipGetDevice()) == 1
    ok(hip.hipSetDevice(0))


def test_errors_names_and_last_error():
    assert hip.hipGetErrorName(E.hipErrorInvalidValue) == (E.hipSuccess, b"hipErrorInvalidValue")
    assert hip.hipGetErrorString(E(209)) == (E.hipSuccess, b"hipErrorNoBinaryForGpu")
    assert str(hip.hipGetErrorName(E.hipErrorUnknown)[1]) == "hipErrorUnknown"
    with pytest.raises(TypeError):                               # hip-python: a plain int is not a hipError_t
        hip.hipGetErrorName(424242)
    hip.hipFree(0xDEAD)
    assert hip.hipPeekAtLastError() == (E.hipErrorInvalidValue,) == hip.hipGetLastError()
    assert hip.hipPeekAtLastError() == (E.hipSuccess,)


def test_memory_roundtrips_all_kinds():
    n = 4097
    a = RNG.integers(0, 255, n, dtype=np.uint8)
    d1, d2 = ok(hip.hipMalloc(n)), ok(hip.hipMalloc(n))
    assert int(d1) != int(d2)
    ok(hip.hipMemcpy(d1, a, n, V.hipMemcpyHostToDevice))
    ok(hip.hipMemcpy(int(d2), d1, n, V.hipMemcpyDeviceToDevice))          # plain ints work as pointers
    assert d1.size == n and d1.itemsize == 1 and d1.__cuda_array_interface__["data"][0] == int(d1)
    b = np.zeros(n, np.uint8)
    ok(hip.hipMemcpy(b, d2, n, V.hipMemcpyDefault))
    assert np.array_equal(a, b)
    c = bytearray(n)
    ok(hip.hipMemcpy(c, a, n, V.hipMemcpyHostToHost))
    assert bytes(c) == a.tobytes()
    ok(hip.hipMemset(d1, 0x5A, n))
    ok(hip.hipMemsetD16(d2, 0xBEEF, n // 2))
    ok(hip.hipMemcpy(b, d1, n, V.hipMemcpyDeviceToHost))
    assert (b == 0x5A).all()
    h = np.zeros(n // 2, np.uint16)
    ok(hip.hipMemcpy(h, d2, h.nbytes, V.hipMemcpyDeviceToHost))
    assert (h == 0xBEEF).all()
    ok(hip.hipMemsetD32(d1, 0x01020304, n // 4))
    w = np.zeros(n // 4, np.uint32)
    ok(hip.hipMemcpy(w, d1, w.nbytes, V.hipMemcpyDeviceToHost))
    assert (w == 0x01020304).all()
    free, total = ok(hip.hipMemGetInfo())
    assert 0 < free <= total
    # bad input: every failure is a code, nothing is corrupted
    assert hip.hipMemcpy(b, d1, n + 10 ** 6, V.hipMemcpyDeviceToHost)[0] == E.hipErrorInvalidValue
    with pytest.raises(TypeError):                               # hip-python: kind must be a hipMemcpyKind
        hip.hipMemcpy(d1, a, n, 99)
    with pytest.raises(TypeError):                               # ... and every argument is required
        hip.hipMemcpy(d1, a, n)
    assert hip.hipMemcpy(c, a, n, V.hipMemcpyDeviceToHost)[0] == E.hipErrorInvalidValue   # host to host
    ok(hip.hipMemset(d1, 0, n))
    ok(hip.hipMemcpy(d1, a, n, V.hipMemcpyDeviceToHost))    # ROCm: the direction comes from the pointers
    ok(hip.hipMemcpy(b, d1, n, V.hipMemcpyHostToDevice))
    assert np.array_equal(a, b)
    ok(hip.hipMemcpy(d1, a, n, V.hipMemcpyDefault))
    assert hip.hipMemset(0x1234, 0, 4)[0] == E.hipErrorInvalidValue
    ok(hip.hipMemcpy(b, d2, n, V.hipMemcpyDeviceToHost))
    ok(hip.hipFree(d1))
    assert hip.hipFree(d1)[0] == E.hipErrorInvalidValue                 # double free is an error
    ok(hip.hipFree(d2))


def test_pinned_host_memory_is_device_visible():
    ok(hip.hipSetDevice(0))
    n = 500
    hp = ok(hip.hipHostMalloc(n * 4, hip.hipHostMallocDefault))
    assert isinstance(hp, hip.Pointer) and int(hp) == hp.array.ctypes.data
    hp.array.view(np.float32)[:] = np.arange(n, dtype=np.float32)
    mod = ok(hip.hipModuleLoad(str(BIN / "hipcc52/basic-gfx90a.hsaco")))
    f = ok(hip.hipModuleGetFunction(mod, b"_Z5scaleIfEvPT_S0_i"))
    ok(hip.hipModuleLaunchKernel(f, 2, 1, 1, 256, 1, 1, 0, None, [hp, np.float32(3.0), n], None))
    ok(hip.hipDeviceSynchronize())
    assert np.array_equal(hp.array.view(np.float32), np.arange(n, dtype=np.float32) * 3)
    ok(hip.hipHostFree(hp))


def test_module_api_kernel_params_and_extra():
    mod = ok(hip.hipModuleLoadData((BIN / "clang19/basic-gfx90a-v5.hsaco").read_bytes()))
    f = ok(hip.hipModuleGetFunction(mod, "vadd_c"))
    n = 777
    a, b = RNG.standard_normal(n).astype(np.float32), RNG.standard_normal(n).astype(np.float32)
    da, db, dc = (ok(hip.hipMalloc(n * 4)) for _ in range(3))
    ok(hip.hipMemcpy(da, a, n * 4, V.hipMemcpyHostToDevice))
    ok(hip.hipMemcpy(db, b, n * 4, V.hipMemcpyHostToDevice))
    ok(hip.hipModuleLaunchKernel(f, 4, 1, 1, 256, 1, 1, 0, None, [da, db, dc, n], None))
    c = np.zeros(n, np.float32)
    ok(hip.hipMemcpy(c, dc, n * 4, V.hipMemcpyDeviceToHost))
    assert np.array_equal(c, a + b)
    # extra: a buffer laid out like the kernarg segment (offsets from the metadata: 0, 8, 16, 24)
    ok(hip.hipMemset(dc, 0, n * 4))
    buf = np.zeros(28, np.uint8)
    buf[0:8].view(np.uint64)[0], buf[8:16].view(np.uint64)[0], buf[16:24].view(np.uint64)[0] = int(db), int(da), int(dc)
    buf[24:28].view(np.int32)[0] = n
    size = ctypes.c_size_t(28)          # C's void* extra[] = {BUFFER_POINTER, buf, BUFFER_SIZE, &size, END}
    extra = (ctypes.c_void_p * 5)(hip.HIP_LAUNCH_PARAM_BUFFER_POINTER, buf.ctypes.data, hip.HIP_LAUNCH_PARAM_BUFFER_SIZE,
                                  ctypes.addressof(size), hip.HIP_LAUNCH_PARAM_END)
    ok(hip.hipModuleLaunchKernel(f, 4, 1, 1, 256, 1, 1, 0, None, None, extra))
    ok(hip.hipMemcpy(c, dc, n * 4, V.hipMemcpyDeviceToHost))
    assert np.array_equal(c, b + a)
    ok(hip.hipMemset(dc, 0, n * 4))     # hip-python's tuple form: pointers and ctypes values, packed with padding
    ok(hip.hipModuleLaunchKernel(f, 4, 1, 1, 256, 1, 1, 0, None, None, (da, db, dc, ctypes.c_int(n))))
    ok(hip.hipMemcpy(c, dc, n * 4, V.hipMemcpyDeviceToHost))
    assert np.array_equal(c, a + b)
    ok(hip.hipMemset(dc, 0, n * 4))     # kernelParams as C passes it: void*[] of argument addresses
    vals = [ctypes.c_void_p(int(da)), ctypes.c_void_p(int(db)), ctypes.c_void_p(int(dc)), ctypes.c_int(n)]
    params = (ctypes.c_void_p * 4)(*[ctypes.addressof(v) for v in vals])
    ok(hip.hipModuleLaunchKernel(f, 4, 1, 1, 256, 1, 1, 0, None, params, None))
    ok(hip.hipMemcpy(c, dc, n * 4, V.hipMemcpyDeviceToHost))
    assert np.array_equal(c, a + b)
    # globals
    gptr, gsize = ok(hip.hipModuleGetGlobal(mod, b"g_table"))
    assert gsize == 256 and int(gptr)
    # errors before anything is queued
    assert hip.hipModuleLaunchKernel(f, 4, 1, 1, 256, 1, 1, 0, None, [da, db, dc], None)[0] == E.hipErrorInvalidValue
    assert hip.hipModuleLaunchKernel(f, 4, 1, 1, 256, 1, 1, 0, None, [1.5, db, dc, n], None)[0] == E.hipErrorInvalidValue
    assert hip.hipModuleLaunchKernel(f, 4, 1, 1, 2048, 1, 1, 0, None, [da, db, dc, n], None)[0] == \
        E.hipErrorInvalidConfiguration
    assert hip.hipModuleLaunchKernel(f, 0, 1, 1, 256, 1, 1, 0, None, [da, db, dc, n], None)[0] == E.hipErrorInvalidValue
    assert hip.hipModuleLaunchKernel(f, 1, 1, 1, 64, 1, 1, 0, None, [da, db, dc, n], extra)[0] == E.hipErrorInvalidValue
    assert hip.hipModuleGetFunction(mod, "nope")[0] == E.hipErrorNotFound
    assert hip.hipModuleGetGlobal(mod, "nope")[0] == E.hipErrorNotFound
    assert hip.hipModuleLoad("/nonexistent.hsaco")[0] == E.hipErrorFileNotFound
    assert hip.hipModuleLoadData(b"garbage")[0] == E.hipErrorInvalidImage
    # hip-python passes images as buffers or bare addresses (hiprtcLinkComplete's pointer): the extent comes
    # from the ELF / bundle headers
    for path in ("clang19/basic-gfx90a-v5.hsaco", "hipcc52/basic.bundle"):
        img = np.frombuffer((BIN / path).read_bytes(), np.uint8).copy()
        for form in (img, int(img.ctypes.data), ctypes.c_void_p(img.ctypes.data), hip.Pointer(img)):
            m2 = ok(hip.hipModuleLoadData(form))
            assert ok(hip.hipModuleGetFunction(m2, "vadd_c" if "v5" in path else "scale<float>"))
            ok(hip.hipModuleUnload(m2))
    assert hip.hipModuleLoadData(da)[0] == E.hipErrorInvalidValue       # device memory is not a host image
    assert hip.hipModuleLoadData(None)[0] == E.hipErrorInvalidValue
    attrs = hip.hipFuncAttributes()
    ok(hip.hipFuncGetAttributes(attrs, f))
    assert attrs.maxThreadsPerBlock == 1024 and attrs.numRegs > 0
    assert ok(hip.hipFuncGetAttribute(hip.hipFunction_attribute.HIP_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, f)) == 1024
    blocks = ok(hip.hipOccupancyMaxActiveBlocksPerMultiprocessor(f, 256, 0))
    grid, block = ok(hip.hipOccupancyMaxPotentialBlockSize(f, 0, 0))
    with pytest.raises(TypeError):                               # hip-python: no defaults
        hip.hipOccupancyMaxPotentialBlockSize(f)
    assert blocks >= 1 and block % 64 == 0 and grid >= 1
    ok(hip.hipModuleUnload(mod))
    assert hip.hipModuleGetFunction(mod, "vadd_c")[0] == E.hipErrorNotFound
    for d in (da, db, dc):
        ok(hip.hipFree(d))


def test_readable_kernel_names_and_no_binary():
    mod = ok(hip.hipModuleLoad(BIN / "hipcc52/basic.bundle"))        # gfx90a + gfx1030 bundle on device 0
    assert ok(hip.hipModuleGetFunction(mod, "scale<double>")).name == "_Z5scaleIdEvPT_S0_i"
    ok(hip.hipSetDevice(1))
    assert hip.hipModuleLoad(BIN / "hipcc52/basic.bundle")[0] == E.hipErrorNoBinaryForGpu
    ok(hip.hipSetDevice(0))


def test_priority_streams_reset_and_pythonic_error_names():
    import pyhip

    s = ok(hip.hipStreamCreateWithPriority(0, -1))
    assert s.priority == -1
    ok(hip.hipStreamDestroy(s))
    ok(hip.hipSetDevice(1))
    d = ok(hip.hipMalloc(1024))
    free_before, _ = ok(hip.hipMemGetInfo())
    ok(hip.hipDeviceReset())                         # frees what the user allocated on this device
    free_after, _ = ok(hip.hipMemGetInfo())
    assert free_after > free_before
    assert hip.hipFree(d)[0] == E.hipErrorInvalidValue
    ok(hip.hipSetDevice(0))
    m = pyhip.load(BIN / "hipcc52/basic-gfx90a.hsaco")
    with pytest.raises(pyhip.HipError) as ei:
        m.kernel("scale<float>")(1, 64, 1.0, 2.0, 3)
    e = ei.value
    assert (e.api, e.name, int(e.code)) == ("hipModuleLaunchKernel", "hipErrorInvalidValue", 1)
    with pytest.raises(pyhip.HipError) as ei:
        m.kernel("no_such_kernel")
    assert ei.value.api == "hipModuleGetFunction" and ei.value.code == E.hipErrorNotFound
    x = pyhip.to_device(np.arange(64, dtype=np.float32))
    with pyhip.Event() as ev:
        m.kernel("scale<float>")(1, 64, x, np.float32(2), 64)
        ev.record()
    assert ev.query() and np.array_equal(x.get(), np.arange(64) * 2)
