"""Textures on the emulated RDNA devices (gfx1030, gfx1100) through pyhip.hip: the descriptors HIP objects hold
(decoded here from the GFX10.3/GFX11 register layouts: ROCr's resource_nv.h / resource_gfx11.h and its
unified format codes), and the image instructions of clang-19 gfx1100 builds in wave32 and wave64
(tests/fixtures/src/images_rdna.hip: LLVM image intrinsics on those descriptors, no device library)
against tests/texref.py's numpy sampler and numpy loads/stores/atomics; the same source built for gfx1030
runs on the RX 6900 XT (GFX10.3 descriptors and encodings), with its float image atomics."""
import numpy as np
import pytest

import pyhip.hip as hip
import texref as R
from conftest import BIN
from pyhip.hip import hipError_t as E
from pyhip.hip import hipMemcpyKind as K

rng = np.random.default_rng(1030)
FLOAT, UNSIGNED = hip.hipChannelFormatKind.hipChannelFormatKindFloat, hip.hipChannelFormatKind.hipChannelFormatKindUnsigned
WRAP, CLAMP, MIRROR, BORDER = (hip.hipTextureAddressMode.hipAddressModeWrap, hip.hipTextureAddressMode.hipAddressModeClamp,
                               hip.hipTextureAddressMode.hipAddressModeMirror,
                               hip.hipTextureAddressMode.hipAddressModeBorder)
POINT, LINEAR = hip.hipTextureFilterMode.hipFilterModePoint, hip.hipTextureFilterMode.hipFilterModeLinear
N = 96                       # lanes: three wave32 waves, one and a half wave64 waves
# unified FORMAT codes (ROCr's CFMT_* for GFX10 / GFX11)
CFMT = {"gfx1030": {"32_32_32_32_FLOAT": 77, "8_8_8_8_UNORM": 56, "32_FLOAT": 22},
        "gfx1100": {"32_32_32_32_FLOAT": 63, "8_8_8_8_UNORM": 42, "32_FLOAT": 22}}


def ok(ret):
    assert ret[0] == E.hipSuccess, ret
    return ret[1] if len(ret) == 2 else ret[1:]


def ok0(ret):
    assert ret == (E.hipSuccess,), ret


def device(arch):
    for i in range(ok(hip.hipGetDeviceCount())):
        p = hip.hipDeviceProp_t()
        ok0(hip.hipGetDeviceProperties(p, i))
        if p.gcnArchName.decode().split(":")[0] == arch:
            return i, p
    pytest.skip(f"no {arch} device configured")


def desc(bits, n, kind):
    return ok(hip.hipCreateChannelDesc(*([bits] * n + [0] * (4 - n)), kind))


def to_dev(a):
    d = ok(hip.hipMalloc(max(a.nbytes, 4)))
    ok(hip.hipMemcpy(d, np.ascontiguousarray(a), a.nbytes, K.hipMemcpyHostToDevice))
    return d


def from_dev(d, shape, dtype):
    out = np.zeros(shape, dtype)
    ok(hip.hipMemcpy(out, d, out.nbytes, K.hipMemcpyDeviceToHost))
    return out


def words(obj, n=16):
    return [int(x) for x in from_dev(int(obj), n, np.uint32)]


def field(w, dw, shift, nbits):
    return w[dw] >> shift & ((1 << nbits) - 1)


def array(data, layered=False, extent=None):
    """A float32/uchar array from (D, H, W, C) data (D = 1: a 2-D array)."""
    d, h, w, c = data.shape
    kind = FLOAT if data.dtype == np.float32 else UNSIGNED
    ext = extent or (w, h, d if (layered or d > 1) else 0)
    a = ok(hip.hipMalloc3DArray(desc(8 * data.itemsize, c, kind), hip.hipExtent(*ext),
                                hip.hipArrayLayered if layered else 0))
    p = hip.hipMemcpy3DParms()
    p.srcPtr = hip.hipPitchedPtr(data.ctypes.data, w * c * data.itemsize, w, h)
    p.dstArray = a
    p.extent = hip.hipExtent(w, h, d)
    p.kind = K.hipMemcpyHostToDevice
    ok0(hip.hipMemcpy3D(p))
    return a


def texture(a, mode=WRAP, filt=LINEAR, normalized=1, read=hip.hipTextureReadMode.hipReadModeElementType):
    res = hip.hipResourceDesc(resType=hip.hipResourceType.hipResourceTypeArray)
    res.res.array.array = a
    td = hip.hipTextureDesc(filterMode=filt, normalizedCoords=normalized, readMode=read)
    td.addressMode = [mode] * 3
    return ok(hip.hipCreateTextureObject(res, td, None))


# ---- descriptors ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("arch", ["gfx1030", "gfx1100"])
def test_descriptors_in_the_generations_layout(arch):
    dev, props = device(arch)
    ok0(hip.hipSetDevice(dev))
    assert props.maxTexture2D == [16384, 16384] and props.maxTexture3D == [16384, 16384, 8192]
    assert ok(hip.hipDeviceGetAttribute(hip.hipDeviceAttribute_t.hipDeviceAttributeImageSupport, dev)) == 1
    try:
        a2 = array(np.zeros((1, 7, 13, 4), np.float32))
        t = texture(a2, MIRROR, LINEAR)
        w = words(t, 16)
        assert field(w, 3, 28, 4) == 9                                  # SQ_RSRC_IMG_2D
        assert field(w, 1, 20, 9 if arch == "gfx1030" else 8) == CFMT[arch]["32_32_32_32_FLOAT"]
        assert field(w, 1, 30, 2) | field(w, 2, 0, 12) << 2 == 12     # WIDTH - 1, split over words 1 and 2
        assert field(w, 2, 14, 14) == 6                                 # HEIGHT - 1
        assert field(w, 4, 0, 14) == 256 // 16 - 1                     # PITCH - 1: 256-byte rows
        assert field(w, 2, 31, 1) == (arch == "gfx1030")                # RESOURCE_LEVEL (GFX10 only)
        assert [field(w, 3, 3 * i, 3) for i in range(4)] == [4, 5, 6, 7]
        assert w[10] == 13 and field(w, 12, 0, 3) == 1                  # width for the device library; MIRROR
        assert field(w, 14, 20, 2) == 1 and field(w, 12, 15, 1) == 0    # bilinear, normalized
        base = (w[0] | field(w, 1, 0, 8) << 32) << 8
        assert base and base % 256 == 0
        a3 = array(np.zeros((3, 2, 5, 4), np.uint8), layered=True)
        w = words(texture(a3, CLAMP, POINT, read=hip.hipTextureReadMode.hipReadModeNormalizedFloat), 8)
        assert field(w, 3, 28, 4) == 13 and field(w, 4, 0, 13) == 2    # 2D_ARRAY, last slice
        assert field(w, 1, 20, 9 if arch == "gfx1030" else 8) == CFMT[arch]["8_8_8_8_UNORM"]
        lin = ok(hip.hipMalloc(1024))
        rd = hip.hipResourceDesc(resType=hip.hipResourceType.hipResourceTypeLinear)
        rd.res.linear.devPtr, rd.res.linear.desc, rd.res.linear.sizeInBytes = lin, desc(32, 1, FLOAT), 1024
        w = words(ok(hip.hipCreateTextureObject(rd, hip.hipTextureDesc(), None)), 4)
        assert field(w, 3, 12, 7 if arch == "gfx1030" else 6) == CFMT[arch]["32_FLOAT"]   # V# FORMAT
        assert field(w, 1, 16, 14) == 4 and w[2] == 1024                # stride, NUM_RECORDS (bytes)
    finally:
        ok0(hip.hipSetDevice(0))


# ---- the image instructions of clang-19 gfx1100 builds -----------------------------------------------------
@pytest.fixture(scope="module", params=["images_rdna-gfx1100-v5", "images_rdna-gfx1100-w64-v5", "images_rdna-gfx1030-v5"])
def gfx1100(request):
    """The clang-19 build on its device (named for the main target; the gfx1030 build runs on the RX 6900 XT)."""
    dev, _ = device(request.param.split("-")[1])
    ok0(hip.hipSetDevice(dev))
    mod = ok(hip.hipModuleLoad(str(BIN / f"clang19/{request.param}.hsaco")))
    mod.arch = request.param.split("-")[1]
    yield mod
    hip.hipModuleUnload(mod)
    ok0(hip.hipSetDevice(0))


def launch(mod, name, *args, n=N, block=32):
    f = ok(hip.hipModuleGetFunction(mod, name))
    ok0(hip.hipModuleLaunchKernel(f, n // block, 1, 1, block, 1, 1, 0, None, list(args), None))
    ok0(hip.hipDeviceSynchronize())


def launch_native(mod, name, *args):
    """``launch``, checking that the native engine ran the kernel (image instructions have native handlers,
    native/engine/ops_image.h: no fallback to the numpy engine) unless PYHIP_ENGINE asks for the numpy engine."""
    import pyhip
    dev = ok(hip.hipGetDevice())
    before = pyhip.engine_stats()[dev]
    launch(mod, name, *args)
    after = pyhip.engine_stats()[dev]
    if after["engine"] != "numpy":
        ran = after["native"] + after["tier0"] - before["native"] - before["tier0"]   # tier 0: while it compiles
        assert after["fallback"] == before["fallback"] and ran > 0, (name, after["reasons"])


def centres(n, size):
    """Normalized coordinates near texel centres (point sampling without the device library's snapping)."""
    i = rng.integers(-size, 2 * size, n)
    return ((i + 0.5 + rng.uniform(-0.3, 0.3, n)) / size).astype(np.float32)


def test_sampling(gfx1100):
    f2 = rng.uniform(-10, 10, (1, 6, 9, 4)).astype(np.float32)
    a2 = array(f2)
    c2 = rng.uniform(-0.8, 1.8, (N, 2)).astype(np.float32)
    for mode, rmode in ((WRAP, R.WRAP), (MIRROR, R.MIRROR), (CLAMP, R.CLAMP), (BORDER, R.BORDER)):
        t = texture(a2, mode, LINEAR)
        c, o = to_dev(c2), ok(hip.hipMalloc(N * 16))
        launch_native(gfx1100, "sample2d", t, c, o)
        want = R.sample(f2.astype(np.float64), [c2[:, 0], c2[:, 1]], True, rmode, True)
        np.testing.assert_allclose(from_dev(o, (N, 4), np.float32), want, rtol=1e-6, atol=2e-6, err_msg=str(mode))
    f3 = rng.uniform(-10, 10, (4, 5, 3, 4)).astype(np.float32)      # 3-D: trilinear, three coordinate arrays
    t = texture(array(f3), WRAP, LINEAR)
    xyz = [rng.uniform(-1, 2, N).astype(np.float32) for _ in range(3)]
    o = ok(hip.hipMalloc(N * 16))
    launch_native(gfx1100, "sample3d", t, to_dev(xyz[0]), to_dev(xyz[1] * 2), to_dev(xyz[2]), o)
    want = R.sample(f3.astype(np.float64), xyz, True, R.WRAP, True)
    np.testing.assert_allclose(from_dev(o, (N, 4), np.float32), want, rtol=1e-6, atol=2e-6)
    fl = rng.uniform(-10, 10, (3, 4, 7, 4)).astype(np.float32)      # layered, point, layer clamped
    t = texture(array(fl, layered=True), CLAMP, POINT)
    layer = rng.integers(-1, 5, N)
    cl = np.stack([centres(N, 7), centres(N, 4), layer.astype(np.float32)], 1)
    launch_native(gfx1100, "sample2da", t, to_dev(cl), o)
    want = R.sample(fl.astype(np.float64), [cl[:, 0], cl[:, 1]], False, R.CLAMP, True, layer)
    np.testing.assert_allclose(from_dev(o, (N, 4), np.float32), want, rtol=1e-6)
    f1 = rng.uniform(-10, 10, (1, 1, 11, 4)).astype(np.float32)     # 1-D, unnormalized, linear
    t = texture(array(f1, extent=(11, 0, 0)), CLAMP, LINEAR, normalized=0)
    x = rng.uniform(-2, 13, N).astype(np.float32)
    launch_native(gfx1100, "sample1d", t, to_dev(x), o)
    want = R.sample(f1.astype(np.float64), [x], True, R.CLAMP, False)
    np.testing.assert_allclose(from_dev(o, (N, 4), np.float32), want, rtol=1e-6, atol=2e-6)
    u8 = rng.integers(0, 256, (1, 5, 6, 4)).astype(np.uint8)        # image_sample_l (NSA form), UNORM, x only
    t = texture(array(u8), WRAP, POINT, read=hip.hipTextureReadMode.hipReadModeNormalizedFloat)
    c2 = np.stack([centres(N, 6), centres(N, 5)], 1)
    o1 = ok(hip.hipMalloc(N * 4))
    launch_native(gfx1100, "sample2d_lod", t, to_dev(c2), np.float32(0.0), o1)
    want = R.sample(u8 / 255.0, [c2[:, 0], c2[:, 1]], False, R.WRAP, True)[:, 0]
    np.testing.assert_allclose(from_dev(o1, N, np.float32), want, rtol=1e-6)


def test_load_store_atomics_resinfo(gfx1100):
    h, w = 5, 7
    f2 = rng.uniform(-4, 4, (1, h, w, 4)).astype(np.float32)
    a = array(f2)
    res = hip.hipResourceDesc(resType=hip.hipResourceType.hipResourceTypeArray)
    res.res.array.array = a
    s = ok(hip.ext.hipCreateSurfaceObject(res))
    xy = np.stack([rng.integers(-1, w + 2, N), rng.integers(-1, h + 2, N)], 1).astype(np.int32)
    inside = (xy[:, 0] >= 0) & (xy[:, 0] < w) & (xy[:, 1] >= 0) & (xy[:, 1] < h)
    texel = f2[0, np.clip(xy[:, 1], 0, h - 1), np.clip(xy[:, 0], 0, w - 1)]
    o = ok(hip.hipMalloc(N * 16))
    launch_native(gfx1100, "load2d_d16", s, to_dev(xy), o)                 # D16: four halves in two VGPRs
    got = from_dev(o, (N, 4), np.float16)
    np.testing.assert_array_equal(got, np.where(inside[:, None], texel, 0).astype(np.float16))
    launch_native(gfx1100, "load2d_xz", s, to_dev(xy), o)                  # DMASK 0x5: X and Z
    got = from_dev(o, (N, 2), np.float32)
    np.testing.assert_array_equal(got, np.where(inside[:, None], texel[:, [0, 2]], 0))
    pos = rng.permutation(h * w)[:N % (h * w) or h * w]             # distinct texels, plus out-of-range lanes
    sxy = np.stack([np.resize(pos % w, N), np.resize(pos // w, N)], 1).astype(np.int32)
    sxy[len(pos):] = [w + 3, 0]
    vals = rng.uniform(-9, 9, (N, 4)).astype(np.float32)
    launch_native(gfx1100, "store2d", s, to_dev(sxy), to_dev(vals))
    want = f2[0].copy()
    want[sxy[:len(pos), 1], sxy[:len(pos), 0]] = vals[:len(pos)]
    back = np.zeros((h, w, 4), np.float32)
    ok(hip.hipMemcpy2DFromArray(back, w * 16, a, 0, 0, w * 16, h, K.hipMemcpyDeviceToHost))
    np.testing.assert_array_equal(back, want)
    iu = rng.integers(0, 1000, (1, 3, 4, 1)).astype(np.uint32)      # atomics on a 32-bit UINT image
    ia = ok(hip.hipMalloc3DArray(desc(32, 1, UNSIGNED), hip.hipExtent(4, 3, 0), 0))
    ok(hip.hipMemcpy2DToArray(ia, 0, 0, iu, 16, 16, 3, K.hipMemcpyHostToDevice))
    res.res.array.array = ia
    si = ok(hip.ext.hipCreateSurfaceObject(res))
    axy = np.stack([rng.integers(0, 4, N), rng.integers(0, 3, N)], 1).astype(np.int32)
    add = rng.integers(1, 50, N).astype(np.int32)
    old = ok(hip.hipMalloc(N * 4))
    launch_native(gfx1100, "atomic_add2d", si, to_dev(axy), to_dev(add), old)
    ref = iu[0, :, :, 0].astype(np.int64).copy()
    want_old = np.zeros(N, np.int64)
    for i in range(N):                                               # lanes apply in order
        want_old[i] = ref[axy[i, 1], axy[i, 0]]
        ref[axy[i, 1], axy[i, 0]] += add[i]
    np.testing.assert_array_equal(from_dev(old, N, np.int32), want_old)
    final = np.zeros((3, 4), np.uint32)
    ok(hip.hipMemcpy2DFromArray(final, 16, ia, 0, 0, 16, 3, K.hipMemcpyDeviceToHost))
    np.testing.assert_array_equal(final, ref)
    la = array(np.zeros((6, 3, 10, 4), np.float32), layered=True)   # resinfo: width, height, layers, levels
    res.res.array.array = la
    sl = ok(hip.ext.hipCreateSurfaceObject(res))
    mip = rng.integers(0, 2, N).astype(np.int32)
    launch_native(gfx1100, "resinfo", sl, to_dev(mip), o)
    got = from_dev(o, (N, 4), np.int32)
    np.testing.assert_array_equal(got, np.where(mip[:, None] == 0, [10, 3, 6, 1], 0))


def test_gather_gradients_offsets(gfx1100):
    """image_gather4 (channel Y of the bilinear footprint), image_sample_d (a GFX11 partial-NSA form) and
    image_sample_lz_o (texel offsets +2, -1)."""
    f2 = rng.uniform(-10, 10, (1, 6, 9, 4)).astype(np.float32)
    a2 = array(f2)
    c2 = rng.uniform(-0.8, 1.8, (N, 2)).astype(np.float32)
    o = ok(hip.hipMalloc(N * 16))
    t = texture(a2, MIRROR, LINEAR)
    launch_native(gfx1100, "gather2d", t, to_dev(c2), o)
    tx, ty = (R.taps(c2[:, k], n, True, R.MIRROR, True) for k, n in ((0, 9), (1, 6)))
    corner = lambda i, j: f2[0, ty[j][0], tx[i][0], 1]               # noqa: E731
    want = np.stack([corner(0, 1), corner(1, 1), corner(1, 0), corner(0, 0)], 1)
    np.testing.assert_array_equal(from_dev(o, (N, 4), np.float32), want)
    grads = rng.uniform(-0.3, 0.3, (N, 4)).astype(np.float32)
    launch_native(gfx1100, "sample2d_grad", t, to_dev(c2), to_dev(grads), o)
    want = R.sample(f2.astype(np.float64), [c2[:, 0], c2[:, 1]], True, R.MIRROR, True)
    np.testing.assert_allclose(from_dev(o, (N, 4), np.float32), want, rtol=1e-6, atol=2e-6)
    t = texture(a2, CLAMP, LINEAR)
    launch_native(gfx1100, "sample2d_offset", t, to_dev(c2), o)
    want = R.sample(f2.astype(np.float64), [c2[:, 0] + np.float32(2 / 9), c2[:, 1] - np.float32(1 / 6)], True,
                    R.CLAMP, True)
    np.testing.assert_allclose(from_dev(o, (N, 4), np.float32), want, rtol=1e-5, atol=2e-5)


def test_float_image_atomics_gfx1030(gfx1100):
    """GFX10.3's image_atomic_fmin on a 32-bit float image: contended lanes in lane order."""
    if gfx1100.arch != "gfx1030":
        pytest.skip("float image atomics are GFX10 only")
    init = rng.uniform(-5, 5, (3, 4)).astype(np.float32)
    fa = ok(hip.hipMalloc3DArray(desc(32, 1, FLOAT), hip.hipExtent(4, 3, 0), 0))
    ok(hip.hipMemcpy2DToArray(fa, 0, 0, init, 16, 16, 3, K.hipMemcpyHostToDevice))
    res = hip.hipResourceDesc(resType=hip.hipResourceType.hipResourceTypeArray)
    res.res.array.array = fa
    s = ok(hip.ext.hipCreateSurfaceObject(res))
    xy = np.stack([rng.integers(0, 4, N), rng.integers(0, 3, N)], 1).astype(np.int32)
    v = rng.uniform(-8, 8, N).astype(np.float32)
    old = ok(hip.hipMalloc(N * 4))
    launch_native(gfx1100, "atomic_fmin2d", s, to_dev(xy), to_dev(v), old)
    ref, want_old = init.copy(), np.zeros(N, np.float32)
    for i in range(N):
        want_old[i] = ref[xy[i, 1], xy[i, 0]]
        ref[xy[i, 1], xy[i, 0]] = min(ref[xy[i, 1], xy[i, 0]], v[i])
    np.testing.assert_array_equal(from_dev(old, N, np.float32), want_old)
    final = np.zeros((3, 4), np.float32)
    ok(hip.hipMemcpy2DFromArray(final, 16, fa, 0, 0, 16, 3, K.hipMemcpyDeviceToHost))
    np.testing.assert_array_equal(final, ref)
