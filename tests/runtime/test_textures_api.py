"""pyhip.hip's arrays, copies to and from them, texture and surface objects: behaviour (HIP 5.2's rules and
error codes), the descriptors they write (decoded here from the GFX9 bit layout), and sampling through them
with hipcc 5.2 kernels (tests/fixtures/src/textures.hip) against tests/texref.py."""
import os
import struct
import subprocess
import sys

import numpy as np
import pytest

import pyhip.hip as hip
import texref as R
from conftest import BIN
from pyhip.hip import hipError_t as E
from pyhip.hip import hipMemcpyKind as K

rng = np.random.default_rng(52)
FLOAT, SIGNED, UNSIGNED = (hip.hipChannelFormatKind.hipChannelFormatKindFloat,
                           hip.hipChannelFormatKind.hipChannelFormatKindSigned,
                           hip.hipChannelFormatKind.hipChannelFormatKindUnsigned)
WRAP, CLAMP, MIRROR, BORDER = (hip.hipTextureAddressMode.hipAddressModeWrap, hip.hipTextureAddressMode.hipAddressModeClamp,
                               hip.hipTextureAddressMode.hipAddressModeMirror,
                               hip.hipTextureAddressMode.hipAddressModeBorder)
POINT, LINEAR = hip.hipTextureFilterMode.hipFilterModePoint, hip.hipTextureFilterMode.hipFilterModeLinear
NORMALIZED_FLOAT = hip.hipTextureReadMode.hipReadModeNormalizedFloat


def ok(ret):
    assert ret[0] == E.hipSuccess, ret
    return ret[1] if len(ret) == 2 else ret[1:]


def ok0(ret):
    assert ret == (E.hipSuccess,), ret


def desc(bits, n, kind):
    return ok(hip.hipCreateChannelDesc(*([bits] * n + [0] * (4 - n)), kind))


def _read(addr, size):
    buf = np.zeros(size, np.uint8)
    ok(hip.hipMemcpy(buf, addr, size, K.hipMemcpyDeviceToHost))
    return buf.tobytes()


def bits(w, dw, shift, n):
    return w[dw] >> shift & ((1 << n) - 1)


@pytest.fixture(scope="module")
def module():
    hip.hipSetDevice(0)
    mod = ok(hip.hipModuleLoad(str(BIN / "hipcc52/textures-gfx90a.hsaco")))
    yield mod
    hip.hipModuleUnload(mod)


# ---- arrays and copies ---------------------------------------------------------------------------------------------
def test_array_fields_and_2d_copies_with_offsets():
    d = desc(32, 4, FLOAT)
    a = ok(hip.hipMallocArray(d, 9, 6, hip.hipArraySurfaceLoadStore))
    assert (a.width, a.height, a.depth, a.NumChannels, a.Format) == (9, 6, 0, 4,
                                                                     hip.hipArray_Format.HIP_AD_FORMAT_FLOAT)
    data = rng.uniform(-5, 5, (6, 9, 4)).astype(np.float32)
    ok(hip.hipMemcpy2DToArray(a, 0, 0, data, 9 * 16, 9 * 16, 6, K.hipMemcpyHostToDevice))
    patch = rng.uniform(-5, 5, (2, 3, 4)).astype(np.float32)       # 3 elements x 2 rows at (4, 3)
    ok(hip.hipMemcpy2DToArray(a, 4 * 16, 3, patch, 3 * 16, 3 * 16, 2, K.hipMemcpyHostToDevice))
    data[3:5, 4:7] = patch
    back = np.zeros((6, 10, 4), np.float32)                         # a wider destination pitch
    ok(hip.hipMemcpy2DFromArray(back, 10 * 16, a, 0, 0, 9 * 16, 6, K.hipMemcpyDeviceToHost))
    np.testing.assert_array_equal(back[:, :9], data)
    part = np.zeros((2, 2, 4), np.float32)
    ok(hip.hipMemcpy2DFromArray(part, 2 * 16, a, 7 * 16, 4, 2 * 16, 2, K.hipMemcpyDeviceToHost))
    np.testing.assert_array_equal(part, data[4:6, 7:9])
    assert hip.hipMemcpy2DToArray(a, 8 * 16, 0, patch, 48, 48, 2, K.hipMemcpyHostToDevice)[0] == E.hipErrorInvalidValue
    assert hip.hipMemcpy2DToArray(a, 0, 0, patch, 0, 48, 2, K.hipMemcpyHostToDevice)[0] == E.hipErrorInvalidPitchValue
    got = hip.hipChannelFormatDesc()
    ok0(hip.hipGetChannelDesc(got, a))
    assert (got.x, got.y, got.z, got.w, got.f) == (32, 32, 32, 32, FLOAT)
    ok0(hip.hipFreeArray(a))
    assert hip.hipFreeArray(a)[0] == E.hipErrorInvalidValue


def test_3d_copies_between_host_arrays_and_pitched_device_memory():
    d = desc(16, 2, SIGNED)
    a = ok(hip.hipMalloc3DArray(d, hip.make_hipExtent(7, 5, 4), 0))
    vol = rng.integers(-30000, 30000, (4, 5, 7, 2)).astype(np.int16)
    p = hip.hipMemcpy3DParms(dstArray=a, kind=K.hipMemcpyHostToDevice, extent=hip.make_hipExtent(7, 5, 4))
    p.srcPtr = hip.make_hipPitchedPtr(vol.ctypes.data, 7 * 4, 7, 5)
    ok0(hip.hipMemcpy3D(p))
    pitched = ok(hip.hipMalloc(64 * 5 * 4))
    q = hip.hipMemcpy3DParms(srcArray=a, kind=K.hipMemcpyDeviceToDevice, extent=hip.make_hipExtent(3, 2, 2),
                             srcPos=hip.make_hipPos(2, 1, 1), dstPos=hip.make_hipPos(8, 1, 0))
    q.dstPtr = hip.make_hipPitchedPtr(pitched, 64, 16, 5)               # dstPos.x is in bytes for memory
    ok0(hip.hipMemcpy3D(q))
    host = np.zeros((4, 5, 64), np.uint8)
    ok(hip.hipMemcpy(host, pitched, host.nbytes, K.hipMemcpyDeviceToHost))
    got = host[:2, 1:3, 8:20].copy().view(np.int16).reshape(2, 2, 3, 2)
    np.testing.assert_array_equal(got, vol[1:3, 1:3, 2:5])
    ok0(hip.hipFree(pitched))
    flat = np.zeros(7 * 2, np.int16)
    ok0(hip.hipMemcpyAtoH(flat, a, 0, 28))                   # the first row of the first slice
    np.testing.assert_array_equal(flat.reshape(7, 2), vol[0, 0])
    ok0(hip.hipMemcpyHtoA(a, 4, np.array([1, 2, 3, 4], np.int16), 8))
    ok0(hip.hipMemcpyAtoH(flat, a, 0, 28))
    assert list(flat[2:6]) == [1, 2, 3, 4]
    zero = hip.hipMemcpy3DParms(dstArray=a, kind=K.hipMemcpyHostToDevice, extent=hip.make_hipExtent(0, 5, 4))
    assert hip.hipMemcpy3D(zero)[0] == E.hipSuccess
    ok0(hip.hipFreeArray(a))


def test_driver_arrays_and_hip52_rules():
    d1 = hip.HIP_ARRAY_DESCRIPTOR(Width=33, Height=0, Format=hip.hipArray_Format.HIP_AD_FORMAT_UNSIGNED_INT8,
                                  NumChannels=4)
    a = ok(hip.hipArrayCreate(d1))
    data = rng.integers(0, 256, 33 * 4).astype(np.uint8)
    ok0(hip.hipMemcpyToArray(a, 0, 0, data, data.nbytes, K.hipMemcpyHostToDevice))
    back = np.zeros_like(data)
    ok0(hip.hipMemcpyFromArray(back, a, 0, 0, data.nbytes, K.hipMemcpyDeviceToHost))
    np.testing.assert_array_equal(back, data)
    ok0(hip.hipArrayDestroy(a))
    layered = hip.HIP_ARRAY3D_DESCRIPTOR(Width=8, Height=4, Depth=3, Format=hip.hipArray_Format.HIP_AD_FORMAT_HALF,
                                         NumChannels=1, Flags=hip.hipArrayLayered)
    a = ok(hip.hipArray3DCreate(layered))
    assert (a.width, a.height, a.depth) == (8, 4, 3)
    ok0(hip.hipArrayDestroy(a))
    d1.NumChannels = 3
    assert hip.hipArrayCreate(d1)[0] == E.hipErrorInvalidValue          # 1, 2 or 4 channels
    cube = hip.HIP_ARRAY3D_DESCRIPTOR(Width=8, Height=8, Depth=6, Format=hip.hipArray_Format.HIP_AD_FORMAT_UNSIGNED_INT8,
                                      NumChannels=1, Flags=hip.hipArrayCubemap)
    assert hip.hipArray3DCreate(cube)[0] == E.hipErrorNotSupported
    # descriptions that can never be valid are invalid values first, whatever kind they ask for
    for flags, w, h, dep in ((0xDEADBEEF, 8, 8, 6), (hip.hipArrayCubemap, 0, 8, 6), (hip.hipArrayCubemap, 8, 8, 5),
                             (hip.hipArrayCubemap, 8, 4, 6), (hip.hipArrayTextureGather, 2 ** 40, 8, 0)):
        cube.Flags, cube.Width, cube.Height, cube.Depth = flags, w, h, dep
        assert hip.hipArray3DCreate(cube)[0] == E.hipErrorInvalidValue, (hex(flags), w, h, dep)
    assert hip.hipMallocArray(desc(8, 2, UNSIGNED), 20000, 1, 0)[0] == E.hipErrorInvalidValue   # > 16384 wide
    bad = hip.hipChannelFormatDesc(x=8, y=16, f=UNSIGNED)
    assert hip.hipMallocArray(bad, 4, 4, 0)[0] == E.hipErrorInvalidValue


def test_mipmapped_arrays():
    assert hip.hipMallocMipmappedArray(desc(32, 1, FLOAT), hip.make_hipExtent(8, 8, 0), 3, 0)[0] == \
        E.hipErrorNotSupported                                           # as in HIP 5.2
    d = hip.HIP_ARRAY3D_DESCRIPTOR(Width=20, Height=9, Depth=0, Format=hip.hipArray_Format.HIP_AD_FORMAT_FLOAT,
                                   NumChannels=2)
    m = ok(hip.hipMipmappedArrayCreate(d, 4))
    sizes = [(lv.width, lv.height) for lv in (ok(hip.hipMipmappedArrayGetLevel(m, i)) for i in range(4))]
    assert sizes == [(20, 9), (10, 4), (5, 2), (2, 1)]
    assert hip.hipMipmappedArrayGetLevel(m, 4)[0] == E.hipErrorInvalidValue
    assert hip.hipMipmappedArrayCreate(d, 6)[0] == E.hipErrorInvalidValue   # 20 wide has 5 levels
    rd = hip.hipResourceDesc(resType=hip.hipResourceType.hipResourceTypeMipmappedArray)
    rd.res.mipmap.mipmap = m
    assert hip.hipCreateTextureObject(rd, hip.hipTextureDesc(normalizedCoords=1), None)[0] == E.hipErrorNotSupported
    ok0(hip.hipMipmappedArrayDestroy(m))


# ---- descriptors ---------------------------------------------------------------------------------------------------
def _tex(array, mode=WRAP, **kw):
    rd = hip.hipResourceDesc(resType=hip.hipResourceType.hipResourceTypeArray)
    rd.res.array.array = array
    td = hip.hipTextureDesc(**kw)
    td.addressMode = [mode] * 3
    return ok(hip.hipCreateTextureObject(rd, td, None))


def test_descriptors_as_the_hardware_reads_them():
    a = ok(hip.hipMalloc3DArray(desc(16, 4, UNSIGNED), hip.make_hipExtent(70, 3, 5), hip.hipArrayLayered))
    t = _tex(a, mode=WRAP, filterMode=LINEAR, readMode=NORMALIZED_FLOAT, normalizedCoords=1)
    w = struct.unpack("<20I", _read(int(t), 80))
    base = (w[0] | (w[1] & 0xFF) << 32) << 8
    assert base % 256 == 0 and base != 0
    assert (bits(w, 1, 20, 6), bits(w, 1, 26, 4)) == (12, 0)             # 16_16_16_16, UNORM (normalized read)
    assert (bits(w, 2, 0, 14), bits(w, 2, 14, 14)) == (69, 2)            # width-1, height-1
    assert [bits(w, 3, 3 * i, 3) for i in range(4)] == [4, 5, 6, 7]      # X Y Z W
    assert (bits(w, 3, 20, 5), bits(w, 3, 28, 4)) == (0, 13)             # linear, 2D array
    pitch = bits(w, 4, 13, 16) + 1
    assert bits(w, 4, 0, 13) == 4 and pitch >= 70 and pitch * 8 % 256 == 0
    assert w[8:11] == (3, 8, 70)                                         # HSA unorm16, RGBA, width
    s = w[12:16]
    assert [bits(s, 0, 3 * i, 3) for i in range(3)] == [0, 0, 0]         # wrap on every axis
    assert bits(s, 0, 15, 1) == 0 and bits(s, 2, 20, 2) == 1 and bits(s, 2, 22, 2) == 1     # normalized, bilinear
    assert bits(s, 1, 12, 12) == 4095 and w[16:20] == (0, 0, 0, 0)
    ok0(hip.hipDestroyTextureObject(t))
    for mode, norm, want in ((WRAP, 0, 2), (MIRROR, 0, 2), (BORDER, 0, 6), (MIRROR, 1, 1), (CLAMP, 1, 2)):
        t = _tex(a, mode=mode, normalizedCoords=norm)                    # unnormalized wrap/mirror -> clamp
        s = struct.unpack("<4I", _read(int(t) + 48, 16))
        assert bits(s, 0, 0, 3) == want and bits(s, 0, 15, 1) == (not norm) and bits(s, 3, 30, 2) == 0
        ok0(hip.hipDestroyTextureObject(t))
    ok0(hip.hipFreeArray(a))


def test_texture_object_queries_and_refusals():
    a = ok(hip.hipMallocArray(desc(32, 1, FLOAT), 4, 4, 0))
    t = _tex(a, mode=BORDER, filterMode=LINEAR)
    assert isinstance(t, hip.hipTextureObject_t)
    rd, td = hip.hipResourceDesc(), hip.hipTextureDesc()
    vd = hip.hipResourceViewDesc(format=hip.hipResourceViewFormat.hipResViewFormatSignedChar2)
    ok0(hip.hipGetTextureObjectResourceDesc(rd, t))
    ok0(hip.hipGetTextureObjectTextureDesc(td, t))
    ok0(hip.hipGetTextureObjectResourceViewDesc(vd, t))
    assert rd.resType == hip.hipResourceType.hipResourceTypeArray and int(rd.res.array.array) == int(a)
    assert td.addressMode == [BORDER] * 3 and td.filterMode is LINEAR
    assert vd.format is hip.hipResourceViewFormat.hipResViewFormatNone
    ok0(hip.hipDestroyTextureObject(t))
    assert hip.hipDestroyTextureObject(t)[0] == E.hipErrorInvalidValue
    assert hip.hipDestroyTextureObject(None)[0] == E.hipSuccess
    for kw in ({"maxAnisotropy": 2}, {"mipmapLevelBias": 0.5}, {"maxMipmapLevelClamp": 3.0}):
        rd2 = hip.hipResourceDesc(resType=hip.hipResourceType.hipResourceTypeArray)
        rd2.res.array.array = a
        assert hip.hipCreateTextureObject(rd2, hip.hipTextureDesc(**kw), None)[0] == E.hipErrorNotSupported
    lin = hip.hipResourceDesc(resType=hip.hipResourceType.hipResourceTypeLinear)
    buf = ok(hip.hipMalloc(1024))
    lin.res.linear.devPtr, lin.res.linear.desc, lin.res.linear.sizeInBytes = int(buf) + 4, desc(32, 1, FLOAT), 512
    assert hip.hipCreateTextureObject(lin, hip.hipTextureDesc(), None)[0] == E.hipErrorInvalidValue   # unaligned
    lin.res.linear.devPtr = buf
    assert hip.hipCreateTextureObject(lin, hip.hipTextureDesc(), hip.hipResourceViewDesc())[0] == \
        E.hipErrorInvalidValue                                           # a view needs an array
    ok0(hip.hipFree(buf))
    ok0(hip.hipFreeArray(a))


def test_driver_texture_objects():
    """hipTexObjectCreate over hip-python's HIP_*_st structs (enum fields take hip-python's *_enum types):
    the object HIP 5.2 builds from the converted runtime descriptors, and the queries convert back."""
    a = ok(hip.hipMallocArray(desc(16, 2, SIGNED), 11, 7, 0))
    with pytest.raises(TypeError):
        hip.HIP_RESOURCE_DESC(resType=0)
    rd = hip.HIP_RESOURCE_DESC(resType=hip.HIPresourcetype.HIP_RESOURCE_TYPE_ARRAY)
    rd.res.array.hArray = a
    td = hip.HIP_TEXTURE_DESC(filterMode=hip.HIPfilter_mode.HIP_TR_FILTER_MODE_LINEAR,
                              flags=hip.HIP_TRSF_NORMALIZED_COORDINATES)
    td.addressMode = [hip.HIPaddress_mode.HIP_TR_ADDRESS_MODE_MIRROR] * 3
    t = ok(hip.hipTexObjectCreate(rd, td, None))
    assert isinstance(t, hip.hipTextureObject_t)
    same = _tex(a, mode=MIRROR, filterMode=LINEAR, readMode=NORMALIZED_FLOAT, normalizedCoords=1)
    words = struct.unpack("<20I", _read(int(t), 80))
    assert words == struct.unpack("<20I", _read(int(same), 80)) and words[0] | words[1]
    back, tback = hip.HIP_RESOURCE_DESC(), hip.HIP_TEXTURE_DESC()
    ok0(hip.hipTexObjectGetResourceDesc(back, t))
    ok0(hip.hipTexObjectGetTextureDesc(tback, t))
    assert back.resType is hip.HIPresourcetype.HIP_RESOURCE_TYPE_ARRAY and int(back.res.array.hArray) == int(a)
    assert tback.filterMode is hip.HIPfilter_mode.HIP_TR_FILTER_MODE_LINEAR and tback.flags == 2
    assert tback.addressMode == [2, 2, 2]
    ok0(hip.hipTexObjectGetTextureDesc(tback, same))                 # a runtime-API object, converted
    assert tback.flags == hip.HIP_TRSF_NORMALIZED_COORDINATES and tback.addressMode == [2, 2, 2]
    for x in (t, same):
        ok0(hip.hipTexObjectDestroy(x))
    assert hip.hipTexObjectDestroy(t)[0] == E.hipErrorInvalidValue
    ok0(hip.hipFreeArray(a))


def test_surface_objects_through_ext():
    """hip-python has no surface-object functions (HIP 5.2 declares them C++): pyhip.hip leaves them out of its
    namespace and pyhip.hip.ext has them, with the same conventions."""
    assert not hasattr(hip, "hipCreateSurfaceObject") and not hasattr(hip, "hipDestroySurfaceObject")
    a = ok(hip.hipMallocArray(desc(32, 4, FLOAT), 9, 6, hip.hipArraySurfaceLoadStore))
    rd = hip.hipResourceDesc(resType=hip.hipResourceType.hipResourceTypeArray)
    rd.res.array.array = a
    s = ok(hip.ext.hipCreateSurfaceObject(rd))
    t = _tex(a)
    assert isinstance(s, hip.hipSurfaceObject_t) and int(s) != int(t)
    w = struct.unpack("<12I", _read(int(s), 48))
    assert (w[0] | (w[1] & 0xFF) << 32) << 8 == int(a.data)            # the image object over the array
    assert w == struct.unpack("<12I", _read(int(t), 48))              # same T# as a texture of the array
    with pytest.raises(TypeError):
        hip.ext.hipCreateSurfaceObject(rd, None)
    assert hip.hipDestroyTextureObject(s)[0] == E.hipErrorInvalidValue  # not a texture
    ok0(hip.ext.hipDestroySurfaceObject(s))
    assert hip.ext.hipDestroySurfaceObject(s)[0] == E.hipErrorInvalidValue
    assert hip.ext.hipCreateSurfaceObject(None)[0] == E.hipErrorInvalidValue
    ok0(hip.hipDestroyTextureObject(t))
    ok0(hip.hipFreeArray(a))


def test_no_images_on_gfx942():
    code = ("import pyhip.hip as h\n"
            "d = h.hipCreateChannelDesc(32, 0, 0, 0, h.hipChannelFormatKind.hipChannelFormatKindFloat)[1]\n"
            "p = h.hipDeviceProp_t()\n"
            "assert h.hipGetDeviceProperties(p, 0)[0] == h.hipError_t.hipSuccess\n"
            "print(h.hipMallocArray(d, 4, 4, 0)[0].value, h.hipDeviceGetAttribute(\n"
            "    h.hipDeviceAttribute_t.hipDeviceAttributeImageSupport, 0)[1], p.maxTexture1D)")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       env={**os.environ, "PYHIP_DEVICES": "gfx942"})
    assert r.stdout.split() == [str(int(E.hipErrorNotSupported)), "0", "0"], r.stdout + r.stderr
    p = hip.hipDeviceProp_t()
    ok0(hip.hipGetDeviceProperties(p, 0))
    assert p.maxTexture1D == 16384 and p.maxTexture2D == [16384, 16384] and p.maxTexture3D == [16384, 16384, 8192]
    assert ok(hip.hipDeviceGetAttribute(hip.hipDeviceAttribute_t.hipDeviceAttributeImageSupport, 0)) == 1


# ---- sampling through pyhip.hip ----------------------------------------------------------------------------------
def _launch(module, name, grid, args):
    f = ok(hip.hipModuleGetFunction(module, name))
    ok0(hip.hipModuleLaunchKernel(f, grid, 1, 1, 64, 1, 1, 0, None, args, None))


def _launch_native(module, name, grid, args):
    """``_launch``, then a check that the native engine ran it (image sampling has native handlers,
    native/engine/ops_image.h: no fallback to the numpy engine) unless PYHIP_ENGINE asks for the numpy engine."""
    import pyhip
    dev = ok(hip.hipGetDevice())
    before = pyhip.engine_stats()[dev]
    _launch(module, name, grid, args)
    ok0(hip.hipDeviceSynchronize())
    after = pyhip.engine_stats()[dev]
    if after["engine"] != "numpy":
        ran = after["native"] + after["tier0"] - before["native"] - before["tier0"]   # tier 0: while it compiles
        assert after["fallback"] == before["fallback"] and ran > 0, (name, after["reasons"])


def test_waves_sampling_different_textures_in_one_dispatch(module):
    a0 = ok(hip.hipMallocArray(desc(32, 4, FLOAT), 5, 4, 0))
    a1 = ok(hip.hipMallocArray(desc(8, 4, UNSIGNED), 3, 7, 0))
    d0 = rng.uniform(-3, 3, (4, 5, 4)).astype(np.float32)
    d1 = rng.integers(0, 256, (7, 3, 4)).astype(np.uint8)
    ok(hip.hipMemcpy2DToArray(a0, 0, 0, d0, 80, 80, 4, K.hipMemcpyHostToDevice))
    ok(hip.hipMemcpy2DToArray(a1, 0, 0, d1, 12, 12, 7, K.hipMemcpyHostToDevice))
    t0 = _tex(a0, mode=MIRROR, filterMode=LINEAR, normalizedCoords=1)
    t1 = _tex(a1, mode=CLAMP, filterMode=POINT, readMode=NORMALIZED_FLOAT, normalizedCoords=1)
    n = 64 * 6
    coords = rng.uniform(-0.5, 1.5, (n, 2)).astype(np.float32)
    c = ok(hip.hipMalloc(coords.nbytes))
    ok(hip.hipMemcpy(c, coords, coords.nbytes, K.hipMemcpyHostToDevice))
    o = ok(hip.hipMalloc(n * 16))
    _launch_native(module, "_Z12two_texturesP13__hip_textureS0_PKfP15HIP_vector_typeIfLj4EE", 6, [t0, t1, c, o])
    got = np.zeros((n, 4), np.float32)
    ok(hip.hipMemcpy(got, o, got.nbytes, K.hipMemcpyDeviceToHost))
    odd = (np.arange(n) // 64) % 2 == 1
    want0 = R.sample(d0[None].astype(np.float64), [coords[:, 0], coords[:, 1]], True, R.MIRROR, True)
    want1 = R.sample(d1[None] / 255.0, [coords[:, 0], coords[:, 1]], False, R.CLAMP, True)
    np.testing.assert_allclose(got[~odd], want0[~odd], rtol=1e-6, atol=2e-6)
    np.testing.assert_allclose(got[odd], want1[odd], rtol=1e-6, atol=1e-7)
    for x in (t0, t1):
        ok0(hip.hipDestroyTextureObject(x))
    for x in (a0, a1):
        ok0(hip.hipFreeArray(x))
    for x in (c, o):
        ok0(hip.hipFree(x))


def test_texture_over_freed_memory_faults(module):
    buf = ok(hip.hipMalloc(256 * 8))
    rd = hip.hipResourceDesc(resType=hip.hipResourceType.hipResourceTypePitch2D)
    p2 = rd.res.pitch2D
    p2.devPtr, p2.desc, p2.width, p2.height, p2.pitchInBytes = buf, desc(32, 1, FLOAT), 16, 8, 256
    t = ok(hip.hipCreateTextureObject(rd, hip.hipTextureDesc(normalizedCoords=1), None))
    c = ok(hip.hipMalloc(64 * 8))                      # allocated first: the freed range stays unallocated
    ok0(hip.hipMemset(c, 0, 64 * 8))
    o = ok(hip.hipMalloc(64 * 4))
    f = ok(hip.hipModuleGetFunction(module, "_Z8sample2dIfEvP13__hip_texturePKfPT_"))
    # a valid launch first: the code's lazy per-device load must not take the range freed below
    ok0(hip.hipModuleLaunchKernel(f, 1, 1, 1, 64, 1, 1, 0, None, [t, c, o], None))
    ok0(hip.hipDeviceSynchronize())
    ok0(hip.hipFree(buf))
    hip.hipModuleLaunchKernel(f, 1, 1, 1, 64, 1, 1, 0, None, [t, c, o], None)
    err = hip.hipDeviceSynchronize()[0]
    assert err == E.hipErrorIllegalAddress
    exc = hip.last_exception()
    assert "image_sample" in str(exc) and "address" in str(exc)
    ok0(hip.hipDestroyTextureObject(t))
    for x in (c, o):
        hip.hipFree(x)


def test_module_texture_reference(module):
    """hipModuleGetTexRef + the driver-style setters, then the fixture's legacy kernel reads tex2D(ref2d)."""
    ref = ok(hip.hipModuleGetTexRef(module, "ref2d"))
    a = ok(hip.hipMallocArray(desc(32, 1, FLOAT), 6, 5, 0))
    data = rng.uniform(-4, 4, (5, 6)).astype(np.float32)
    ok0(hip.hipMemcpy2DToArray(a, 0, 0, data, 24, 24, 5, K.hipMemcpyHostToDevice))
    ok0(hip.hipTexRefSetFormat(ref, hip.hipArray_Format.HIP_AD_FORMAT_FLOAT, 1))
    ok0(hip.hipTexRefSetFlags(ref, 2))                         # normalized coordinates, read as float
    with pytest.raises(TypeError):                            # hip-python: enums, never plain ints
        hip.hipTexRefSetFilterMode(ref, 1)
    ok0(hip.hipTexRefSetFilterMode(ref, LINEAR))
    for dim in range(2):
        ok0(hip.hipTexRefSetAddressMode(ref, dim, MIRROR))
    ok0(hip.hipTexRefSetArray(ref, a, hip.HIP_TRSA_OVERRIDE_FORMAT))
    assert ok(hip.hipTexRefGetFlags(ref)) == 2 and ok(hip.hipTexRefGetFilterMode(ref)) is LINEAR
    assert ok(hip.hipTexRefGetAddressMode(ref, 1)) is MIRROR
    assert hip.hipTexRefGetAddressMode(ref, 2)[0] == E.hipErrorInvalidValue
    assert hip.hipTexRefGetFormat(ref)[1:] == (hip.hipArray_Format.HIP_AD_FORMAT_FLOAT, 1)
    assert type(hip.hipTexRefGetFormat(ref)[1]) is hip.hipArray_Format
    assert hip.hipTexRefGetAddress(ref)[0] == E.hipErrorInvalidValue      # bound to an array
    coords = rng.uniform(-1.2, 2.2, 128).astype(np.float32)
    c = ok(hip.hipMalloc(coords.nbytes))
    ok0(hip.hipMemcpy(c, coords, coords.nbytes, K.hipMemcpyHostToDevice))
    o = ok(hip.hipMalloc(64 * 4))
    _launch_native(module, "_Z6legacyPKfPf", 1, [c, o])
    got = np.zeros(64, np.float32)
    ok0(hip.hipMemcpy(got, o, got.nbytes, K.hipMemcpyDeviceToHost))
    want = R.sample(data[None, :, :, None].astype(np.float64), [coords[:64], coords[64:]], True, R.MIRROR, True)[:, 0]
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=2e-6)
    # rebinding to pitched memory: hipTexRefSetAddress2D, point sampling, unnormalized (mirror acts as clamp)
    pitched = ok(hip.hipMalloc(256 * 5))
    rows = np.zeros((5, 64), np.float32)
    rows[:, :6] = data[::-1]
    ok0(hip.hipMemcpy(pitched, rows, rows.nbytes, K.hipMemcpyHostToDevice))
    ok0(hip.hipTexRefSetFlags(ref, 0))
    ok0(hip.hipTexRefSetFilterMode(ref, POINT))
    ok0(hip.hipTexRefSetAddress2D(ref, hip.HIP_ARRAY_DESCRIPTOR(Width=6, Height=5, Format=hip.hipArray_Format.HIP_AD_FORMAT_FLOAT,
                                                                NumChannels=1), pitched, 256))
    assert int(ok(hip.hipTexRefGetAddress(ref))) == int(pitched)
    ucoords = (coords * 6).astype(np.float32)
    ok0(hip.hipMemcpy(c, ucoords, ucoords.nbytes, K.hipMemcpyHostToDevice))
    _launch_native(module, "_Z6legacyPKfPf", 1, [c, o])
    ok0(hip.hipMemcpy(got, o, got.nbytes, K.hipMemcpyDeviceToHost))
    want = R.sample(rows[None, :, :6, None].astype(np.float64), [ucoords[:64], ucoords[64:]], False, R.MIRROR,
                    False)[:, 0]
    np.testing.assert_array_equal(got, want.astype(np.float32))
    ok0(hip.hipUnbindTexture(ref))
    assert not ref.textureObject
    ok0(hip.hipFreeArray(a))
    for x in (c, o, pitched):
        ok0(hip.hipFree(x))
