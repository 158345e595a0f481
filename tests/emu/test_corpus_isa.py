"""The ISA-breadth corpus (tests/fixtures/src/{warp,atomics,shapes,devmath,halfbf}.hip) built by hipcc 5.2
(gfx90a, V4, with the ROCm device libraries) and clang-19 -nogpulib (gfx90a and gfx942, V5), run on the
emulated GPU and compared with numpy: random inputs, poisoned outputs, sizes that are not multiples of the
block size; device-library math within ULP bounds of float64 references."""
import math

import numpy as np
import pytest

import pyhip

from test_corpus import BIN, CORPUS, build, grid, out  # noqa: F401  (build is a fixture)

RNG = np.random.default_rng(4242)
N = 1000


def dev(a):
    return pyhip.to_device(np.ascontiguousarray(a))


def ulps(got, ref, ft):
    """|got - ref| in units of the last place of ``ref`` rounded to ``ft`` (0 where both are the same
    infinity or both NaN)."""
    got = got.astype(np.float64)
    with np.errstate(over="ignore"):
        r = ref.astype(ft)
    same = (got == ref) | (np.isnan(got) & np.isnan(ref)) | (np.isinf(got) & (got == r))
    spacing = np.spacing(np.abs(r)).astype(np.float64)
    with np.errstate(all="ignore"):
        err = np.abs(got - ref) / spacing
    return np.where(same, 0.0, err)


# ---- warp intrinsics ---------------------------------------------------------------------------------------
def test_warp_shuffles_votes_and_reduction(build, request):
    """wave64 (GFX9) and wave32 (RDNA) builds.  The source asks for lanes of a 64-wide warp: on wave32, a
    shuffle index wraps to the 32 lanes of the wave (HIP's width-32 shuffles keep the lane where it would
    leave the warp; minihip's width-64 ones let ds_bpermute wrap the index modulo the wave), the xor-32
    butterfly step adds a lane to itself (so the reduction is twice the wave's sum) and the ballot has 32 bits."""
    m = build("warp")
    wave = 32 if request.node.callspec.params["build"].endswith(("gfx1100", "gfx1030")) else 64     # -w64: wave64
    minihip = request.node.callspec.params["build"].startswith("clang19")
    v = RNG.integers(-2 ** 31, 2 ** 31, N, dtype=np.int64).astype(np.int32)
    v[::7] = RNG.integers(-50, 50, len(v[::7]))
    v[:64] = np.abs(v[:64]) % 1000000                   # waves 0 (and 1): no lane above 1e6 → __any false
    o = out(7 * N, np.int32)
    b = out(N, np.uint64)
    m.kernel("warp_ops")(grid(N, 256), 256, dev(v), o, b, N)
    got, ballots = o.get().reshape(7, N), b.get()
    full = np.zeros(grid(N, 256) * 256, np.int64)
    full[:N] = v
    lane = np.arange(wave)
    want = np.zeros((7, len(full)), np.int64)
    wb = np.zeros(len(full), np.uint64)
    for w in range(len(full) // wave):
        s = slice(wave * w, wave * w + wave)
        x = full[s]
        t = (wave * w + lane) % 256 % 64                # threadIdx.x % 64, as the kernel computes it
        want[0, s] = x[((t * 7 + 3) % 64) % wave]
        want[1, s] = x[lane ^ 5]
        down = lane + 3 < wave
        want[2, s] = np.where(down, x[np.minimum(lane + 3, wave - 1)], x[(lane + 3) % wave] if wave == 32 and minihip else x)
        want[3, s] = np.where(lane >= 2, x[np.maximum(lane - 2, 0)], x)
        want[4, s] = int((x > 1000000).any())
        want[5, s] = int((x > -1000000).all())
        want[6, s] = ((x.sum() * (64 // wave) + 2 ** 31) % 2 ** 32) - 2 ** 31
        wb[s] = sum(1 << int(k) for k in np.nonzero(x & 1)[0])
    assert np.array_equal(got, want[:, :N].astype(np.int32))
    assert np.array_equal(ballots, wb[:N])


def test_bit_intrinsics(build):
    m = build("warp")
    v = RNG.integers(0, 2 ** 32, N, dtype=np.uint64).astype(np.uint32)
    w = RNG.integers(0, 2 ** 64, N, dtype=np.uint64) >> RNG.integers(0, 64, N).astype(np.uint64)
    v[:3], w[:3] = [0, 1, 0x80000000], [0, 1, 1 << 63]
    o = out(7 * N, np.int32)
    m.kernel("bit_ops")(grid(N, 128), 128, dev(v), dev(w), o, N)
    got = o.get().reshape(7, N)

    def clz(x, bits):
        return bits - int(x).bit_length()

    def ffs(x):
        x = int(x)
        return (x & -x).bit_length()
    want = np.array([[bin(int(x)).count("1") for x in v], [clz(x, 32) for x in v], [ffs(x) for x in v],
                     [bin(int(x)).count("1") for x in w], [clz(x, 64) for x in w], [ffs(x) for x in w],
                     [int(f"{int(x):032b}"[::-1], 2) for x in v]], dtype=np.int64)
    for k in range(7):
        bad = np.nonzero((got[k].astype(np.int64) & 0xFFFFFFFF) != (want[k] & 0xFFFFFFFF))[0]
        assert not len(bad), (k, [(hex(int(v[i])), hex(int(w[i])), int(got[k][i]), int(want[k][i])) for i in bad[:4]])


# ---- atomics ---------------------------------------------------------------------------------------------------
# the same source built with -munsafe-fp-atomics: hardware float/double atomic adds instead of CAS loops
UNSAFE_FP = {"hipcc52-gfx90a-unsafe-fp": ("hipcc52/atomics-gfx90a-unsafe-fp-atomics.hsaco", 0),
             "clang19-gfx942-unsafe-fp": ("clang19/atomics-gfx942-v5-unsafe-fp-atomics.hsaco", 1)}


@pytest.fixture(params=sorted(CORPUS) + sorted(UNSAFE_FP))
def atomics_module(request):
    pattern, dev = CORPUS.get(request.param) or UNSAFE_FP[request.param]
    pyhip.set_device(dev)
    yield pyhip.load(BIN / pattern.format("atomics"))
    pyhip.set_device(0)


def test_global_atomics_every_kind(atomics_module):
    m = atomics_module
    a = RNG.integers(-2 ** 31, 2 ** 31, N, dtype=np.int64).astype(np.int32)
    ia = np.array([0, 0, 2 ** 31 - 1, -2 ** 31, -1, 0, 0, 0, 7], np.int32)
    ua = np.array([0, 0, 2 ** 32 - 1, 0], np.uint32)
    la = np.array([0, 2 ** 64 - 1, 0, 12345, 0, 2 ** 64 - 1, 0, 0], np.uint64)
    fa = np.zeros(2, np.float32)
    da = np.zeros(1, np.float64)
    d = [dev(x) for x in (ia, ua, la, fa, da)]
    olds = out(N, np.int32)
    m.kernel("atomics_global")(grid(N, 128), 128, dev(a), *d, olds, N)
    gi, gu, gl, gf, gd = (x.get() for x in d)
    a64 = a.astype(np.int64)
    wrap = lambda x: ((int(x) + 2 ** 31) % 2 ** 32) - 2 ** 31   # noqa: E731
    assert sorted(olds.get().tolist()) == list(range(N))
    assert gi[0] == N and gi[1] == wrap(-a64.sum()) and gi[2] == a.min() and gi[3] == a.max()
    assert gi[4] == np.bitwise_and.reduce(a | 0x10000) & -1
    assert gi[5] == np.bitwise_or.reduce(a & 0x00F0F0F0) and gi[6] == np.bitwise_xor.reduce(a)
    assert gi[7] in set(a.tolist()) and gi[8] == wrap(7 + 3 * a64.sum())
    inc = dec = 0
    for _ in range(N):
        inc = 0 if inc >= 100 else inc + 1
        dec = 77 if dec == 0 or dec > 77 else dec - 1
    au = a.view(np.uint32)
    assert gu.tolist() == [inc, dec, int(au.min()), int(au.max())]
    assert gl[0] == np.uint64(sum(int(x) * 1000003 for x in au) % 2 ** 64)
    keyed = [(int(x) * 0x10001) % 2 ** 64 for x in a64]
    assert gl[1] == min(keyed) and gl[2] == max(keyed)
    x3 = 12345
    for i, x in enumerate(au):
        x3 ^= ((int(x) << 33) + i) % 2 ** 64
    assert gl[3] == x3 and int(gl[4]) in {i * 0x100000001 for i in range(N)}
    w = [((int(x) << 32) | ((int(s) * 7 + i) & 0xFFFFFFFF)) for i, (x, s) in enumerate(zip(au, a64))]
    and64, or64, xor64 = 2 ** 64 - 1, 0, 0
    for v in w:
        and64 &= v | 0x8000000000000001
        or64 |= v & 0x00FF00FF00FF00FF
        xor64 ^= v
    assert gl[5:8].tolist() == [and64, or64, xor64]
    assert gf[0] == float((a & 0xFF).sum()) and gf[1] in set(a.astype(np.float32).tolist())
    assert gd[0] == float(a64.sum()) * 0.5


def test_shared_atomics_per_block(atomics_module):
    m = atomics_module
    a = RNG.integers(-2 ** 31, 2 ** 31, N, dtype=np.int64).astype(np.int32)
    blocks = grid(N, 256)
    o, o64, of, od = out(8 * blocks, np.int32), out(3 * blocks, np.uint64), out(blocks, np.float32), out(blocks, np.float64)
    m.kernel("atomics_shared")(blocks, 256, dev(a), o, o64, of, od, N)
    got, got64, gf, gd = o.get().reshape(blocks, 8), o64.get().reshape(blocks, 3), of.get(), od.get()
    for b in range(blocks):
        x = a[256 * b:256 * b + 256].astype(np.int64)
        xu = x & 0xFFFFFFFF
        inc = 0
        for _ in range(len(x)):
            inc = 0 if inc >= 9 else inc + 1
        want = [x.sum(), -x.sum(), min(x.min(), 2 ** 31 - 1), max(x.max(), -2 ** 31),
                np.bitwise_and.reduce(x | 0x100) & -1, np.bitwise_or.reduce(x & 0x0F0F), np.bitwise_xor.reduce(x), inc]
        assert got[b].astype(np.int64).tolist() == [((int(w) + 2 ** 31) % 2 ** 32) - 2 ** 31 for w in want], b
        assert got64[b].tolist() == [int(sum(int(u) << 20 for u in xu) % 2 ** 64), int(min(xu) * 3), int(max(xu) * 5)]
        assert gf[b] == float((x & 0x3F).sum()) and gd[b] == float((x & 0xFFF).sum()) * 0.25


# ---- 3-D blocks, dynamic LDS -------------------------------------------------------------------------------------
def test_transpose3d_dynamic_lds(build):
    m = build("shapes")
    nx, ny, nz = 13, 7, 5
    blk = (4, 4, 2)
    a = RNG.standard_normal((nz, ny, nx)).astype(np.float32)
    o = out(nx * ny * nz, np.float32)
    g = tuple(grid(n, b) for n, b in zip((nx, ny, nz), blk))
    m.kernel("transpose3d")(g, blk, dev(a), o, nx, ny, nz, shared=4 * blk[0] * blk[1] * blk[2])
    x, y, z = np.meshgrid(np.arange(nx), np.arange(ny), np.arange(nz), indexing="ij")
    want = a[z, y, x] * np.float32(2) + ((z % blk[2]) * 100 + (y % blk[1]) * 10 + (x % blk[0])).astype(np.float32)
    assert np.array_equal(o.get().reshape(nx, ny, nz), want)


def test_block_scan_non_power_of_two_block(build):
    m = build("shapes")
    a = RNG.integers(-1000, 1000, N).astype(np.int32)
    o = out(N, np.int32)
    blk = 96
    m.kernel("block_scan")(grid(N, blk), blk, dev(a), o, N, shared=2 * blk * 4)
    want = np.concatenate([np.cumsum(a[i:i + blk]) for i in range(0, N, blk)])
    assert np.array_equal(o.get(), want.astype(np.int32))


# ---- device-library math ---------------------------------------------------------------------------------------
def _is_minihip(request):
    return request.node.callspec.params["build"].startswith("clang19")


def test_float_math(build, request):
    m = build("devmath")
    x = (RNG.uniform(-50, 50, N)).astype(np.float32)
    y = (RNG.uniform(-10, 10, N)).astype(np.float32)
    x[:4], y[:4] = [0.0, 1e-30, 3.0, -2.5], [0.0, 1.0, 88.0, -87.0]
    o = out(8 * N, np.float32)
    m.kernel("fmath")(grid(N, 256), 256, dev(x), dev(y), o, N)
    got = o.get().reshape(8, N)
    X, Y = x.astype(np.float64), y.astype(np.float64)
    with np.errstate(all="ignore"):
        if _is_minihip(request):
            refs = [(np.sqrt(np.abs(X)), 0), (1 / np.sqrt(np.abs(X)), 1), (np.exp(Y), 2), (np.log(np.abs(X)), 2),
                    (np.exp2(Y), 1), (np.log2(np.abs(X)), 1), (X * Y + 1, 0), (X / Y, 0)]
        else:
            refs = [(np.sin(X), 2), (np.cos(X), 2), (np.exp(Y), 2), (np.log(np.abs(X)), 2),
                    (np.abs(X) ** Y, 2), (np.array([math.erf(v) for v in Y]), 3), (1 / np.sqrt(np.abs(X)), 2),
                    (np.tanh(Y), 3)]
    for k, (ref, bound) in enumerate(refs):
        if k == 6 and _is_minihip(request):
            ref = np.array([float(np.float32(a)) * float(np.float32(b)) + 1.0 for a, b in zip(x, y)])
        e = ulps(got[k], ref, np.float32)
        assert e.max() <= bound + 0.5, (k, float(e.max()), int(e.argmax()))


def test_double_math(build, request):
    m = build("devmath")
    x = RNG.uniform(-30, 30, N)
    y = RNG.uniform(-5, 5, N)
    x[:3] = [1e10, -3e5, 0.5]                          # large arguments: sin's Payne-Hanek reduction (v_trig_preop)
    o = out(7 * N, np.float64)
    m.kernel("dmath")(grid(N, 128), 128, dev(x), dev(y), o, N)
    got = o.get().reshape(7, N)
    with np.errstate(all="ignore"):
        if _is_minihip(request):
            refs = [(np.sqrt(np.abs(x)), 0), (None, 0), (x / y, 0), (np.ldexp(x, y.astype(np.int64)), 0),
                    (np.fmin(x, y), 0), (np.floor(x * y), 0), (np.copysign(np.abs(y), x), 0)]
        else:
            refs = [(np.sin(x), 2), (np.exp(y), 2), (np.log(np.abs(x)), 2), (np.abs(x) ** y, 2), (np.cos(x), 2),
                    (np.array([math.erf(v) for v in y]), 2), (1 / np.sqrt(np.abs(x)), 2)]
    for k, (ref, bound) in enumerate(refs):
        if ref is None:                                 # fma: exact rational reference
            from fractions import Fraction
            ref = np.array([float(Fraction(a) * Fraction(b) + 1) for a, b in zip(x, y)])
        e = ulps(got[k], ref, np.float64)
        assert e.max() <= bound + 0.5, (k, float(e.max()), int(e.argmax()))


# ---- half and bfloat16 ----------------------------------------------------------------------------------------------
def test_half_and_half2(build):
    m = build("halfbf")
    a, b, c = (RNG.standard_normal(N).astype(np.float16) for _ in range(3))
    o = out(8 * N, np.float16)
    m.kernel("half_ops")(grid(N, 256), 256, dev(a), dev(b), dev(c), o, N)
    got = o.get().reshape(8, N)
    A, B, C = (v.astype(np.float64) for v in (a, b, c))
    h = np.float16
    want = [(A + B).astype(h), (A * B).astype(h), (A * B + C).astype(h), np.maximum(a, b),
            np.sqrt((A * A).astype(h).astype(np.float64)).astype(h),
            (a.astype(np.float32) * np.float32(3) - c.astype(np.float32)).astype(h),
            (A * B + C).astype(h), (B * C + A).astype(h)]      # HIP contracts a * b + c into a (packed) fma
    for k, w in enumerate(want):
        assert np.array_equal(got[k].view(np.uint16), w.view(np.uint16)), k


def _bf16(x32):
    u = x32.view(np.uint32).astype(np.uint64)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)


def test_bfloat16(build):
    m = build("halfbf")
    a = _bf16(RNG.standard_normal(N).astype(np.float32) * np.float32(100))
    b = _bf16(RNG.standard_normal(N).astype(np.float32))
    o = out(4 * N, np.uint16)
    m.kernel("bf16_ops")(grid(N, 128), 128, dev(a), dev(b), o, N)
    x = (a.astype(np.uint32) << 16).view(np.float32)
    y = (b.astype(np.uint32) << 16).view(np.float32)
    fma = (x.astype(np.float64) * y.astype(np.float64) - x.astype(np.float64)).astype(np.float32)
    want = [_bf16(x + y), _bf16(x * y), _bf16(fma), _bf16(np.where(x > y, x, y))]
    got = o.get().reshape(4, N)
    for k, w in enumerate(want):
        assert np.array_equal(got[k], w), k
