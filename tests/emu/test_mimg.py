"""Image instructions (gfx90a MIMG) against per-lane references written here from the rules (D3D11/12
texture precision: 8-bit subtexel fixed point, round to nearest even; GFX9 addressing modes and border
colours; format conversions), on random images and coordinates that cross every edge."""
import math

import numpy as np
import pytest

import asmkit
import mimgkit as mk
from asmkit import engine  # noqa: F401 (a fixture: load/store/atomic/resinfo cases run on both engines)
from pyhip.emu.memory import GPUFault

F32 = np.float32
WRAP, MIRROR, CLAMP, MIRROR_ONCE, HALF_BORDER, MIRROR_ONCE_HALF, BORDER, MIRROR_ONCE_BORDER = range(8)
POINT, BILINEAR = 0, 1
rng = np.random.default_rng(16)


@pytest.fixture(autouse=True)
def both(engine):
    """Every test's dispatches run on the numpy engine, then (a second case) natively, compiled: each is checked
    against the test's own reference, and the engine counters say which engine ran them."""
    targets = ("gfx90a", "gfx1030", "gfx1100")
    for t in targets:
        engine(t)
    mk.USED.clear()
    yield
    for t in targets:
        if t in mk.USED:
            engine(t)


def f32bits(x):
    return np.asarray(x, np.float32).view(np.uint32)


# ---- the reference -------------------------------------------------------------------------------------------
def fixed8(t):
    """Texel-space coordinate -> multiple of 1/256, rounded to nearest even (numpy's rint)."""
    return float(np.rint(np.float64(t) * 256)) / 256


def wrap_index(i, n, mode):
    """-> index or None (border)."""
    if mode == WRAP:
        return i % n
    if mode == MIRROR:
        k = i % (2 * n)
        return k if k < n else 2 * n - 1 - k
    if mode in (MIRROR_ONCE, MIRROR_ONCE_HALF, MIRROR_ONCE_BORDER) and i < 0:
        i = -i - 1
    if mode in (CLAMP, MIRROR_ONCE):
        return min(max(i, 0), n - 1)
    return i if 0 <= i < n else None


def axis(t, n, linear, mode, trunc=False):
    """[(index or None, weight)] for one axis."""
    if mode in (HALF_BORDER, MIRROR_ONCE_HALF):
        if mode == MIRROR_ONCE_HALF:
            t = abs(t)
        t = min(max(t, -0.5), n + 0.5)
    if not linear:
        q = math.floor(t * 256) / 256 if trunc else fixed8(t)
        return [(wrap_index(math.floor(q), n, mode), 1.0)]
    q = fixed8(t - 0.5)
    i = math.floor(q)
    a = q - i
    return [(wrap_index(i, n, mode), 1.0 - a), (wrap_index(i + 1, n, mode), a)]


def ref_sample(comps, kind, coords, linear, modes, normalized, border=(0, 0, 0, 0), trunc=False):
    """comps: (D, H, W, 4) float64 decoded texels; coords: per lane tuple -> (64, 4) float32 RGBA."""
    d, h, w, _ = comps.shape
    nsp = {"1d": 1, "1da": 1, "2d": 2, "2da": 2, "3d": 3}[kind]
    sizes = (w, h, d)[:nsp]
    out = np.zeros((len(coords), 4))
    for lane, c in enumerate(coords):
        c = [float(v) for v in c]
        taps = [axis(c[k] * sizes[k] if normalized else c[k], sizes[k], linear, modes[k], trunc) for k in range(nsp)]
        layer = 0
        if kind in ("1da", "2da"):
            layer = int(min(max(np.rint(c[nsp]), 0), d - 1))
        acc = np.zeros(4)
        for combo in np.ndindex(*[len(tp) for tp in taps]):
            sel = [taps[k][j] for k, j in enumerate(combo)]
            wgt = np.prod([s[1] for s in sel])
            idx = [s[0] for s in sel]
            if any(i is None for i in idx):
                acc += wgt * np.asarray(border, float)
                continue
            x = idx[0]
            y = idx[1] if nsp > 1 else 0
            z = idx[2] if nsp > 2 else layer
            acc += wgt * comps[z, y, x]
        out[lane] = acc
    return out.astype(F32)


def rgba_f32(tex4):
    """(D, H, W, C) float32 texels -> (D, H, W, 4) components with missing ones 0 and A = 1."""
    d, h, w, c = tex4.shape
    out = np.zeros((d, h, w, 4))
    out[..., 3] = 1
    out[..., :c] = tex4
    return out


def sampler(mode=CLAMP, filt=POINT, unnorm=0, **kw):
    modes = mode if isinstance(mode, tuple) else (mode,) * 3
    return mk.words(mk.S, clamp_x=modes[0], clamp_y=modes[1], clamp_z=modes[2], unnorm=unnorm, mag=filt, min=filt,
                    **kw)


def sample(img, samp, coords, dmask=0xF, extra=""):
    ncoord = np.asarray(coords).shape[1]
    n = bin(dmask).count("1")
    data = "v8" if n == 1 else f"v[8:{7 + n}]"
    out = mk.run(f"image_sample {data}, v4, s[12:19], s[20:23] dmask:0x{dmask:x}{extra}", img.t, samp,
                 f32bits(coords).reshape(64, ncoord))
    return out.view(F32)


def edge_coords(n, normalized, count=64):
    """Coordinates around and beyond both edges of an n-texel axis, texel boundaries and centres included."""
    t = np.concatenate([np.linspace(-2.3, n + 2.3, count - 16), np.arange(-1, 7) + 0.5, np.arange(-1, 7) * 1.0])
    rng.shuffle(t)
    t = t[:count].astype(F32)
    return (t / n).astype(F32) if normalized else t


# ---- sampling -------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("mode", range(8))
@pytest.mark.parametrize("filt", (POINT, BILINEAR))
def test_2d_addressing_and_filtering(mode, filt):
    w, h = 5, 3
    tex = rng.uniform(-4, 4, (1, h, w, 4)).astype(F32)
    img = mk.Image(tex, "2d", pitch=8)
    try:
        normalized = mode not in (HALF_BORDER, MIRROR_ONCE_HALF)
        xs, ys = edge_coords(w, normalized), edge_coords(h, normalized)
        got = sample(img, sampler(mode, filt, unnorm=int(not normalized)), np.stack([xs, ys], 1))
        want = ref_sample(rgba_f32(tex), "2d", list(zip(xs, ys)), filt, (mode,) * 2, normalized)
        np.testing.assert_allclose(got, want, rtol=2e-6, atol=2e-6)
    finally:
        img.free()


def test_subtexel_precision_and_trunc_coord():
    """A coordinate 1/1024 texel below a boundary snaps up to it (8-bit fixed point, round to nearest); with
    TRUNC_COORD it stays below.  Bilinear weights are multiples of 1/256: at 0.3 the weight is 77/256."""
    tex = np.arange(8, dtype=F32).reshape(1, 1, 8, 1)
    img = mk.Image(tex, "2d")
    try:
        below = np.array([k - 1 / 1024 for k in range(1, 8)] * 10)[:64].astype(F32)
        cs = np.stack([below, np.zeros(64, F32)], 1)
        got = sample(img, sampler(CLAMP, POINT, unnorm=1), cs, dmask=1)[:, 0]
        assert (got == np.ceil(below)).all()
        got = sample(img, sampler(CLAMP, POINT, unnorm=1, trunc=1), cs, dmask=1)[:, 0]
        assert (got == np.floor(below)).all()
        xs = (np.arange(64) % 7 + 0.5 + 0.3).astype(F32)        # 0.3 texel past a centre
        got = sample(img, sampler(CLAMP, BILINEAR, unnorm=1), np.stack([xs, np.zeros(64, F32)], 1), dmask=1)[:, 0]
        want = np.floor(xs - 0.5) + 77 / 256
        np.testing.assert_array_equal(got, want.astype(F32))
        assert not np.allclose(got, xs - 0.5)                   # an exact-float filter would differ
    finally:
        img.free()


@pytest.mark.parametrize("kind", ("1d", "1da", "2da", "3d"))
@pytest.mark.parametrize("filt", (POINT, BILINEAR))
def test_other_dimensions(kind, filt):
    shape = {"1d": (1, 1, 9), "1da": (3, 1, 9), "2da": (3, 4, 5), "3d": (4, 3, 5)}[kind]
    tex = rng.uniform(0, 10, shape + (2,)).astype(F32)
    img = mk.Image(tex, kind)
    try:
        d, h, w = shape
        cols = [edge_coords(w, True)]
        if kind in ("2da", "3d"):
            cols.append(edge_coords(h, True))
        if kind == "3d":
            cols.append(edge_coords(d, True))
        if kind in ("1da", "2da"):
            cols.append(rng.uniform(-1.7, d + 0.7, 64).astype(F32))           # slice: rounded and clamped
        modes = (WRAP, MIRROR, CLAMP)
        got = sample(img, sampler(modes, filt), np.stack(cols, 1), extra=" da" if kind.endswith("a") else "")
        want = ref_sample(rgba_f32(tex), kind, list(zip(*cols)), filt, modes, True)
        np.testing.assert_allclose(got, want, rtol=2e-6, atol=2e-6)
    finally:
        img.free()


def test_border_colours_and_swizzle():
    """Opaque white / opaque black borders on a swizzled two-channel image (R <- Y, G <- X, B = 0, A = 1): the
    border colour lands in result channels, constant channels stay constant, DMASK picks R, G, A."""
    tex = rng.uniform(0, 1, (1, 2, 2, 2)).astype(F32)
    img = mk.Image(tex, "2d", sel=(5, 4, 0, 1))
    try:
        xs = np.linspace(-1.5, 3.5, 64).astype(F32)
        ys = np.full(64, 0.75, F32)
        swizzled = np.zeros((1, 2, 2, 4))
        swizzled[..., 0], swizzled[..., 1], swizzled[..., 3] = tex[..., 1], tex[..., 0], 1
        for border, rg in ((2, 1.0), (1, 0.0)):
            got = sample(img, sampler(BORDER, BILINEAR, unnorm=1, border=border), np.stack([xs, ys], 1), dmask=0xB)
            want = ref_sample(swizzled, "2d", list(zip(xs, ys)), BILINEAR, (BORDER, BORDER), False,
                              border=(rg, rg, 0, 1))
            np.testing.assert_allclose(got[:, :3], want[:, [0, 1, 3]], rtol=1e-6, atol=1e-7)
            assert (got[:, 2] == 1).all()
    finally:
        img.free()


@pytest.mark.parametrize("fmt", ("unorm8", "snorm16", "half", "uint8", "sint16", "srgb8"))
def test_formats_point_and_linear(fmt):
    kinds = {"unorm8": (np.uint8, 0), "snorm16": (np.int16, 1), "half": (np.float16, 7), "uint8": (np.uint8, 4),
             "sint16": (np.int16, 5), "srgb8": (np.uint8, 9)}
    dt, nfmt = kinds[fmt]
    info = np.iinfo(dt) if np.dtype(dt).kind in "iu" else None
    raw = (rng.integers(info.min, info.max + 1, (1, 3, 4, 4)) if info else rng.uniform(-8, 8, (1, 3, 4, 4))).astype(dt)
    if fmt == "snorm16":
        raw[0, 0, 0, 0] = -32768                              # decodes to -1, like -32767
    img = mk.Image(raw, "2d", nfmt=nfmt)
    try:
        xs, ys = rng.uniform(-0.2, 1.2, 64).astype(F32), rng.uniform(-0.2, 1.2, 64).astype(F32)
        if fmt == "unorm8":
            comps = raw / 255.0
        elif fmt == "snorm16":
            comps = np.maximum(raw / 32767.0, -1.0)
        elif fmt == "srgb8":
            c = raw / 255.0
            comps = np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)
            comps[..., 3] = c[..., 3]                         # alpha stays linear
        else:
            comps = raw.astype(np.float64)
        for filt in (POINT, BILINEAR):
            got = sample(img, sampler(CLAMP, filt), np.stack([xs, ys], 1))
            integer = fmt in ("uint8", "sint16")
            want = ref_sample(comps, "2d", list(zip(xs, ys)), filt and not integer, (CLAMP, CLAMP), True)
            if integer:                                       # integer results are integers, never filtered
                np.testing.assert_array_equal(got.view(np.int32), want.astype(np.int64).astype(np.int32))
            else:
                np.testing.assert_allclose(got, want, rtol=3e-6, atol=1e-6)
    finally:
        img.free()


def test_d16_results_and_dmask():
    tex = rng.uniform(-3, 3, (1, 2, 3, 4)).astype(F32)
    img = mk.Image(tex, "2d")
    try:
        xs, ys = rng.uniform(0, 1, 64).astype(F32), rng.uniform(0, 1, 64).astype(F32)
        want = ref_sample(rgba_f32(tex), "2d", list(zip(xs, ys)), POINT, (CLAMP, CLAMP), True)
        got = mk.run("image_sample v[8:9], v4, s[12:19], s[20:23] dmask:0xe d16", img.t, sampler(),
                     f32bits(np.stack([xs, ys], 1)))
        halves = got[:, :2].view(np.uint16).view(np.float16).reshape(64, 4)[:, :3]
        np.testing.assert_array_equal(halves, want[:, 1:].astype(np.float16))
    finally:
        img.free()


def test_filter_min_max_reduction():
    tex = rng.uniform(0, 1, (1, 4, 4, 1)).astype(F32)
    img = mk.Image(tex, "2d")
    try:
        xs, ys = rng.uniform(0.6, 3.4, 64).astype(F32), rng.uniform(0.6, 3.4, 64).astype(F32)
        for mode, pick in ((1, min), (2, max)):
            got = sample(img, sampler(CLAMP, BILINEAR, unnorm=1, filter_mode=mode), np.stack([xs, ys], 1), dmask=1)
            for lane in range(64):
                taps = [(i, j) for i, wi in axis(xs[lane], 4, True, CLAMP) for j, wj in axis(ys[lane], 4, True, CLAMP)
                        if wi * wj > 0]
                assert got[lane, 0] == pick(tex[0, j, i, 0] for i, j in taps)
    finally:
        img.free()


def test_mag_min_filter_chosen_by_quad_lod():
    """XY_MAG point / XY_MIN bilinear: quads whose coordinates step less than a texel per lane magnify (point),
    quads stepping 2 texels minify (bilinear)."""
    tex = rng.uniform(0, 1, (1, 1, 64, 1)).astype(F32)
    img = mk.Image(tex, "2d")
    try:
        lane = np.arange(64)
        step = np.where(lane // 32 == 0, 0.25, 2.0)
        xs = (10.3 + (lane % 4) * step).astype(F32)
        got = sample(img, mk.words(mk.S, clamp_x=CLAMP, clamp_y=CLAMP, unnorm=1, mag=POINT, min=BILINEAR,
                                   max_lod=0xFFF), np.stack([xs, np.zeros(64, F32)], 1), dmask=1)[:, 0]
        point = ref_sample(rgba_f32(tex), "2d", list(zip(xs, np.zeros(64))), POINT, (CLAMP, CLAMP), False)[:, 0]
        lin = ref_sample(rgba_f32(tex), "2d", list(zip(xs, np.zeros(64))), BILINEAR, (CLAMP, CLAMP), False)[:, 0]
        np.testing.assert_array_equal(got[:32], point[:32])
        np.testing.assert_allclose(got[32:], lin[32:], rtol=1e-6)
    finally:
        img.free()


# ---- load / store / atomics / resinfo ---------------------------------------------------------------------------
def test_load_bounds_a16_and_mip(both):
    tex = rng.integers(0, 1 << 16, (3, 5, 7, 2)).astype(np.uint16)
    img = mk.Image(tex, "2da", nfmt=4, pitch=9)
    try:
        x, y, s = rng.integers(0, 9, 64), rng.integers(0, 7, 64), rng.integers(0, 4, 64)
        got = mk.run("image_load v[8:10], v4, s[12:19] dmask:0xb unorm da", img.t, None, np.stack([x, y, s], 1))
        inside = (x < 7) & (y < 5) & (s < 3)
        want = np.zeros((64, 3), np.uint32)
        want[inside, 2] = 1                     # A selects W: missing in RG -> 1; outside every component is 0
        want[inside, 0] = tex[s[inside], y[inside], x[inside], 0]
        want[inside, 1] = tex[s[inside], y[inside], x[inside], 1]
        np.testing.assert_array_equal(got[:, :3], want)
        packed = (x | y << 16).astype(np.uint32)               # A16: x, y in one VGPR, slice in the next
        got16 = mk.run("image_load v[8:10], v4, s[12:19] dmask:0xb unorm a16 da", img.t, None,
                       np.stack([packed, s], 1))
        np.testing.assert_array_equal(got16[:, :3], want)
        # load_mip: level 0 reads, a level past LAST_LEVEL reads 0
        lvl = rng.integers(0, 2, 64)
        gm = mk.run("image_load_mip v[8:9], v4, s[12:19] dmask:0x3 unorm da", img.t, None, np.stack([x, y, s, lvl], 1))
        np.testing.assert_array_equal(gm[:, :2], np.where((lvl == 0)[:, None], want[:, :2], 0))
    finally:
        img.free()


def test_store_formats_partial_dmask_and_bounds(both):
    tex = rng.integers(0, 256, (1, 4, 6, 4)).astype(np.uint8)
    img = mk.Image(tex, "2d", nfmt=0)                          # UNORM8 RGBA
    try:
        x, y = rng.integers(0, 8, 64), rng.integers(0, 5, 64)
        vals = rng.uniform(-0.2, 1.2, (64, 2)).astype(F32)
        uniq = {}
        for lane in range(64):                                  # one writer per texel (the last lane wins)
            uniq[(x[lane], y[lane])] = lane
        lanes = np.array(sorted(uniq.values()))
        mk.run("image_store v[6:7], v4, s[12:19] dmask:0x5 unorm", img.t, None,
               np.concatenate([np.stack([x, y], 1), f32bits(vals)], 1))
        want = tex.copy()
        for lane in lanes:
            if x[lane] < 6 and y[lane] < 4:
                enc = np.rint(np.clip(vals[lane].astype(np.float64), 0, 1) * 255)
                want[0, y[lane], x[lane], 0] = enc[0]          # channel X from the first VGPR
                want[0, y[lane], x[lane], 2] = enc[1]          # channel Z from the second; Y, W kept
        np.testing.assert_array_equal(img.read(), want)
    finally:
        img.free()


def test_store_d16_float_and_sint16(both):
    tex = np.zeros((1, 1, 64, 2), np.float32)
    img = mk.Image(tex, "1d")
    try:
        v = rng.uniform(-100, 100, (64, 2)).astype(np.float16)
        mk.run("image_store v6, v4, s[12:19] dmask:0x3 unorm d16", img.t, None,
               np.stack([np.arange(64), np.zeros(64), v.view(np.uint32).reshape(64)], 1))
        np.testing.assert_array_equal(img.read()[0, 0], v.astype(F32))
    finally:
        img.free()
    tex = np.zeros((1, 1, 64, 1), np.int32)
    img = mk.Image(tex, "1d", nfmt=5)
    try:
        v = rng.integers(-32768, 32768, 64).astype(np.int16)
        mk.run("image_store v6, v4, s[12:19] dmask:0x1 unorm d16", img.t, None,
               np.stack([np.arange(64), np.zeros(64), v.view(np.uint16).astype(np.uint32)], 1))
        np.testing.assert_array_equal(img.read()[0, 0, :, 0], v.astype(np.int32))   # sign-extended
    finally:
        img.free()


def test_atomics_contended_add_and_cmpswap(both):
    tex = rng.integers(0, 1000, (1, 2, 4, 1)).astype(np.uint32)
    img = mk.Image(tex, "2d", nfmt=4)
    try:
        x, y = np.arange(64) % 4, (np.arange(64) // 4) % 3          # y == 2 is outside: dropped
        v = rng.integers(1, 50, 64).astype(np.uint32)
        got = mk.run("image_atomic_add v6, v4, s[12:19] dmask:0x1 unorm glc", img.t, None, np.stack([x, y, v], 1),
                     post="  v_mov_b32 v8, v6\n")
        want, old = tex[0, :, :, 0].astype(np.int64).copy(), np.zeros(64, np.int64)
        for lane in range(64):                                   # lanes apply in order
            if y[lane] < 2:
                old[lane] = want[y[lane], x[lane]]
                want[y[lane], x[lane]] += v[lane]
        np.testing.assert_array_equal(img.read()[0, :, :, 0], want)
        returned = np.where(y < 2, old, v)                      # dropped lanes keep their data VGPR... or 0
        np.testing.assert_array_equal(got[y < 2, 0], returned[y < 2].astype(np.uint32))
        cur = img.read()[0, :, :, 0].copy()
        cmp = np.where(np.arange(64) % 2 == 0, cur[y % 2, x], 12345).astype(np.uint32)
        new = rng.integers(0, 1 << 32, 64, dtype=np.uint64).astype(np.uint32)
        mk.run("image_atomic_cmpswap v[6:7], v4, s[12:19] dmask:0x3 unorm glc", img.t, None,
               np.stack([x, y % 2, new, cmp], 1))
        ref = cur.copy()
        for lane in range(64):
            if ref[y[lane] % 2, x[lane]] == cmp[lane]:
                ref[y[lane] % 2, x[lane]] = new[lane]
        np.testing.assert_array_equal(img.read()[0, :, :, 0], ref)
    finally:
        img.free()


def test_get_resinfo(both):
    for kind, tex, want in (("2da", np.zeros((6, 3, 10, 1), F32), (10, 3, 6, 1)),
                            ("3d", np.zeros((5, 4, 9, 1), F32), (9, 4, 5, 1)),
                            ("1da", np.zeros((7, 1, 33, 1), F32), (33, 1, 7, 1)),
                            ("1d", np.zeros((1, 1, 17, 1), F32), (17, 1, 0, 1))):
        img = mk.Image(tex, kind)
        try:
            lvl = np.arange(64) % 2                               # level 1 does not exist: zeros
            got = mk.run("image_get_resinfo v[8:11], v4, s[12:19] dmask:0xf", img.t, None, lvl[:, None])
            np.testing.assert_array_equal(got[lvl == 0][0], want)
            assert not got[lvl == 1].any()
        finally:
            img.free()


def test_descriptor_outside_any_allocation_faults(exact_bounds, both):
    tex = np.zeros((1, 4, 4, 1), F32)
    img = mk.Image(tex, "2d")
    try:
        t = list(img.t)
        t[2] = (t[2] & ~0x3FFF) | 4095                           # WIDTH 4096: rows run past the allocation
        t[4] = (t[4] & ~(0xFFFF << 13)) | (4095 << 13)
        with pytest.raises(GPUFault) as e:
            mk.run("image_load v8, v4, s[12:19] dmask:0x1 unorm", t, None,
                   np.stack([np.arange(64) * 60, np.zeros(64)], 1))
        assert e.value.address is not None and e.value.lane is not None
        assert "image_load" in str(e.value)
    finally:
        img.free()


def test_unsupported_descriptors_fault_clearly():
    tex = np.zeros((1, 4, 4, 1), F32)
    img = mk.Image(tex, "2d")
    try:
        tiled = list(img.t)
        tiled[3] |= 9 << 20                                      # SW_MODE 9
        with pytest.raises(GPUFault, match="SW_MODE"):
            mk.run("image_load v8, v4, s[12:19] dmask:0x1 unorm", tiled, None, np.zeros((64, 2)))
        with pytest.raises(GPUFault, match="border colour register"):
            sample(img, sampler(BORDER, POINT, border=3), np.full((64, 2), -1, F32), dmask=1)
    finally:
        img.free()


def test_waves_see_their_own_exec_mask(both):
    tex = rng.uniform(0, 1, (1, 1, 8, 1)).astype(F32)
    img = mk.Image(tex, "1d")
    try:
        got = mk.run("image_load v8, v4, s[12:19] dmask:0x1 unorm", img.t, None, (np.arange(64) % 8)[:, None],
                     lanes=37)
        np.testing.assert_array_equal(got[:37, 0].view(F32), tex[0, 0, np.arange(37) % 8, 0])
    finally:
        img.free()



# ---- loads and stores of every format, on both engines ----------------------------------------------------------
def _quiet(bits):
    """A float32 NaN as a texel read returns it: quiet (the texel unit widens and narrows through binary64)."""
    bits = np.asarray(bits, np.uint32)
    nan = ((bits & 0x7F800000) == 0x7F800000) & ((bits & 0x7FFFFF) != 0)
    return np.where(nan, bits | 0x400000, bits).astype(np.uint32)


def _fields(v, widths):
    out, shift = [], 0
    for b in widths:
        out.append((v.astype(np.int64) >> shift) & ((1 << b) - 1))
        shift += b
    return out


def _signed(v, bits):
    return np.where(v >= 1 << (bits - 1), v - (1 << bits), v)


# name: (texel dtype, components, number format, data format or None, reference decode -> (..., 4) values, integer)
def _norm(raw, bits):
    return raw / float((1 << bits) - 1)


LOAD_FORMATS = {
    "unorm8x4": (np.uint8, 4, 0, None, lambda r: _norm(r.astype(np.int64), 8), False),
    "snorm16x2": (np.int16, 2, 1, None, lambda r: np.maximum(r / 32767.0, -1.0), False),
    "uscaled8x2": (np.uint8, 2, 2, None, lambda r: r.astype(np.float64), False),
    "sscaled16": (np.int16, 1, 3, None, lambda r: r.astype(np.float64), False),
    "uint16x4": (np.uint16, 4, 4, None, lambda r: r.astype(np.int64), True),
    "sint8x2": (np.int8, 2, 5, None, lambda r: r.astype(np.int64), True),
    "half4": (np.float16, 4, 7, None, None, False),
    "float2": (np.float32, 2, 7, None, None, False),
    "srgb8x4": (np.uint8, 4, 9, None, "srgb", False),
    "unorm565": (np.uint16, 1, 0, 16, lambda r: np.stack([f / float((1 << b) - 1) for f, b in
                                                          zip(_fields(r[..., 0], (5, 6, 5)), (5, 6, 5))], -1), False),
    "unorm10_10_10_2": (np.uint32, 1, 0, 9, lambda r: np.stack([f / float((1 << b) - 1) for f, b in zip(
        _fields(r[..., 0], (10, 10, 10, 2)), (10, 10, 10, 2))], -1), False),
    "sint2_10_10_10": (np.uint32, 1, 5, 8, lambda r: np.stack([_signed(f, b) for f, b in zip(
        _fields(r[..., 0], (2, 10, 10, 10)), (2, 10, 10, 10))], -1), True),
}


def _random_texels(dt, shape):
    dt = np.dtype(dt)
    if dt.kind == "f":
        t = rng.uniform(-50, 50, shape).astype(dt)
        flat = t.reshape(-1).view(np.uint16 if dt.itemsize == 2 else np.uint32)
        flat[:3] = (0x7C01, 0xFE00, 0x7BFF) if dt.itemsize == 2 else (0x7F800001, 0xFFC00000, 0x00000001)
        return t                                  # a signalling NaN, a quiet one, the largest / a denormal
    info = np.iinfo(dt)
    return rng.integers(info.min, info.max, shape, endpoint=True).astype(dt)


def _reference_channels(fmt, raw, sel):
    """(H, W) texels -> (H, W, 4) register values after DST_SEL (int64 values or float32 bits), independent of
    pyhip: decoded here from the format rules."""
    dt, c, nfmt, dfmt, decode, integer = LOAD_FORMATS[fmt]
    h, w = raw.shape[:2]
    if decode is None:                             # FLOAT: bits widened exactly, NaNs quieted
        comps = np.zeros((h, w, 4), np.uint32)
        comps[..., 3] = 0x3F800000
        comps[..., :c] = _quiet(raw.astype(np.float32).view(np.uint32))
    else:
        if decode == "srgb":
            lin = raw / 255.0
            vals = np.where(lin <= 0.04045, lin / 12.92, ((lin + 0.055) / 1.055) ** 2.4)
            vals[..., 3] = lin[..., 3]
        else:
            vals = decode(raw)
        n = vals.shape[-1]
        full = np.zeros((h, w, 4), np.int64 if integer else np.float64)
        full[..., 3] = 1
        full[..., :n] = vals
        comps = (full & 0xFFFFFFFF).astype(np.uint32) if integer else full.astype(F32).view(np.uint32)
    one = 1 if integer else 0x3F800000
    out = np.zeros((h, w, 4), np.uint32)
    for ch, s in enumerate(sel):
        out[..., ch] = one if s == 1 else comps[..., s - 4] if 4 <= s <= 7 else 0
    return out, one


@pytest.mark.parametrize("fmt", sorted(LOAD_FORMATS))
def test_load_formats_swizzles_and_d16(fmt, both):
    dt, c, nfmt, dfmt, _, integer = LOAD_FORMATS[fmt]
    h, w = 3, 5
    raw = _random_texels(dt, (1, h, w, c))
    sel = (7, 4, 1, 5) if fmt != "half4" else (4, 5, 6, 7)      # R <- W, G <- X, B = 1, A <- Y
    img = mk.Image(raw, "2d", nfmt=nfmt, pitch=7, sel=sel, dfmt=dfmt)
    try:
        x, y = rng.integers(0, 7, 64), rng.integers(0, 4, 64)    # some lanes outside (x >= 5, y >= 3)
        inside = (x < w) & (y < h)
        chans, one = _reference_channels(fmt, raw[0], sel)
        want = np.zeros((64, 4), np.uint32)
        want[inside] = chans[y[inside], x[inside]]
        want[~inside] = [one if s == 1 else 0 for s in sel]     # outside: every component 0, SEL_1 still 1
        got = mk.run("image_load v[8:11], v4, s[12:19] dmask:0xf unorm", img.t, None, np.stack([x, y], 1))
        np.testing.assert_array_equal(got, want)
        # D16, DMASK 0xd (R, B, A): two VGPRs, the last high half 0
        got = mk.run("image_load v[8:9], v4, s[12:19] dmask:0xd unorm d16", img.t, None, np.stack([x, y], 1))
        picked = want[:, [0, 2, 3]]
        halves = picked & 0xFFFF if integer else picked.view(F32).astype(np.float16).view(np.uint16)
        halves = halves.astype(np.uint32)
        np.testing.assert_array_equal(got[:, 0], halves[:, 0] | halves[:, 1] << 16)
        np.testing.assert_array_equal(got[:, 1], halves[:, 2])
    finally:
        img.free()


def test_store_packed_snorm_3d_and_array(both):
    # 5_6_5 UNORM, DMASK 0x5: X and Z written (the second data VGPR is Z), Y kept; NaN stores 0
    raw = rng.integers(0, 1 << 16, (1, 3, 4, 1)).astype(np.uint16)
    img = mk.Image(raw, "2d", nfmt=0, dfmt=16)
    try:
        x, y = rng.integers(0, 5, 64), rng.integers(0, 4, 64)
        vals = rng.uniform(-0.3, 1.3, (64, 2)).astype(F32)
        vals[5, 0] = np.nan
        mk.run("image_store v[6:7], v4, s[12:19] dmask:0x5 unorm", img.t, None,
               np.concatenate([np.stack([x, y], 1), f32bits(vals)], 1))
        want = raw[0, :, :, 0].astype(np.int64).copy()
        for lane in range(64):                                  # in lane order: the last writer wins
            if x[lane] < 4 and y[lane] < 3:
                v = np.nan_to_num(vals[lane].astype(np.float64), nan=0.0)
                r = int(np.rint(np.clip(v[0], 0, 1) * 31)), int(np.rint(np.clip(v[1], 0, 1) * 31))
                old = want[y[lane], x[lane]]
                want[y[lane], x[lane]] = r[0] | (old & (0x3F << 5)) | r[1] << 11
        np.testing.assert_array_equal(img.read()[0, :, :, 0], want)
    finally:
        img.free()
    # 3-D, one 32-bit float (the kit has four address + data dwords: x, y, z, value)
    raw = np.zeros((3, 2, 4, 1), F32)
    img = mk.Image(raw, "3d")
    try:
        x, y, z = rng.integers(0, 4, 64), rng.integers(0, 2, 64), rng.integers(0, 4, 64)
        vals = rng.uniform(-5, 5, (64, 1)).astype(F32)
        mk.run("image_store v7, v4, s[12:19] dmask:0x1 unorm", img.t, None,
               np.concatenate([np.stack([x, y, z], 1), f32bits(vals)], 1))
        want = raw.copy()
        for lane in range(64):
            if z[lane] < 3:
                want[z[lane], y[lane], x[lane]] = vals[lane]
        np.testing.assert_array_equal(img.read(), want)
    finally:
        img.free()
    # 1-D array of SNORM8 x4 (slice in the second address VGPR), DMASK 0xf
    raw = rng.integers(-128, 128, (3, 1, 6, 4)).astype(np.int8)
    img = mk.Image(raw, "1da", nfmt=1)
    try:
        x, s = rng.integers(0, 7, 64), rng.integers(0, 4, 64)
        perm = rng.permutation(64)
        x, s = x[perm], s[perm]
        vals = rng.uniform(-1.5, 1.5, (64, 2)).astype(F32)
        addr = np.concatenate([np.stack([x, s], 1), f32bits(vals)], 1)   # X, Y written: Z, W kept
        mk.run("image_store v[6:7], v4, s[12:19] dmask:0x3 unorm da", img.t, None, addr)
        want = raw.copy()
        for lane in range(64):
            if x[lane] < 6 and s[lane] < 3:
                want[s[lane], 0, x[lane], :2] = np.rint(np.clip(vals[lane].astype(np.float64), -1, 1) * 127)
        np.testing.assert_array_equal(img.read(), want)
    finally:
        img.free()


ATOMIC_REF = {
    "swap": lambda o, v: v, "add": lambda o, v: o + v, "sub": lambda o, v: o - v, "and": lambda o, v: o & v,
    "or": lambda o, v: o | v, "xor": lambda o, v: o ^ v, "umin": min, "umax": max,
    "inc": lambda o, v: 0 if o >= v else o + 1, "dec": lambda o, v: v if o == 0 or o > v else o - 1,
}


@pytest.mark.parametrize("op", ["swap", "sub", "and", "or", "xor", "umin", "umax", "inc", "dec", "smin", "smax"])
def test_atomic_ops_32(op, both):
    tex = rng.integers(0, 40, (1, 2, 3, 1)).astype(np.uint32)
    if op in ("smin", "smax"):
        tex = rng.integers(-40, 40, (1, 2, 3, 1)).astype(np.int32).view(np.uint32)
    img = mk.Image(tex, "2d", nfmt=5 if op.startswith("s") and op != "sub" and op != "swap" else 4)
    try:
        x, y = np.arange(64) % 4, (np.arange(64) // 4) % 2               # x == 3 is outside
        v = rng.integers(0, 45, 64).astype(np.uint32)
        if op in ("smin", "smax"):
            v = rng.integers(-45, 45, 64).astype(np.int32).view(np.uint32)
        got = mk.run(f"image_atomic_{op} v6, v4, s[12:19] dmask:0x1 unorm glc", img.t, None, np.stack([x, y, v], 1),
                     post="  v_mov_b32 v8, v6\n")
        cur = tex[0, :, :, 0].astype(np.int64).copy()
        old = np.zeros(64, np.int64)
        for lane in range(64):
            if x[lane] < 3:
                o = int(cur[y[lane], x[lane]])
                old[lane] = o
                if op in ("smin", "smax"):
                    so, sv = _signed(o, 32), _signed(int(v[lane]), 32)
                    cur[y[lane], x[lane]] = (min if op == "smin" else max)(so, sv) & 0xFFFFFFFF
                else:
                    cur[y[lane], x[lane]] = ATOMIC_REF[op](o, int(v[lane])) & 0xFFFFFFFF
        np.testing.assert_array_equal(img.read()[0, :, :, 0].astype(np.int64), cur)
        np.testing.assert_array_equal(got[:, 0], np.where(x < 3, old, 0).astype(np.uint32))  # outside: 0
    finally:
        img.free()


def test_atomic_64_bit_and_format_fault(both):
    tex = rng.integers(0, 1 << 62, (1, 1, 8, 1), dtype=np.uint64)
    img = mk.Image(tex.view(np.uint32).reshape(1, 1, 8, 2), "1d", nfmt=4)        # 32_32 UINT: 64-bit texels
    try:
        x = np.arange(64) % 9
        v = rng.integers(0, 1 << 40, 64, dtype=np.uint64)
        got = mk.run("image_atomic_add v[6:7], v4, s[12:19] dmask:0x3 unorm glc", img.t, None,
                     np.stack([x, np.zeros(64), v & 0xFFFFFFFF, v >> 32], 1).astype(np.uint64),
                     post="  v_mov_b32 v8, v6\n  v_mov_b32 v9, v7\n")
        cur = tex[0, 0, :, 0].astype(object).copy()
        old = np.zeros(64, object)
        for lane in range(64):
            if x[lane] < 8:
                old[lane] = cur[x[lane]]
                cur[x[lane]] = (cur[x[lane]] + int(v[lane])) % (1 << 64)
        np.testing.assert_array_equal(img.read().reshape(8, 2).view(np.uint64)[:, 0], cur.astype(np.uint64))
        want = np.where(x < 8, old, 0).astype(np.uint64)
        np.testing.assert_array_equal(got[:, 0] | got[:, 1].astype(np.uint64) << np.uint64(32), want)
    finally:
        img.free()
    img = mk.Image(np.zeros((1, 1, 8, 1), F32), "1d")
    try:
        with pytest.raises(GPUFault, match="image_atomic_add: atomics need a 32-bit UINT/SINT image format"):
            mk.run("image_atomic_add v6, v4, s[12:19] dmask:0x1 unorm glc", img.t, None, np.zeros((64, 3)))
    finally:
        img.free()


def test_mip_levels_fault_and_resinfo_levels(both):
    img = mk.Image(np.zeros((1, 2, 12, 1), F32), "2d")              # height 2: levels 1 and 2 are 1 high
    try:
        t = list(img.t)
        t[3] |= 2 << 16                                           # LAST_LEVEL 2: three levels
        got = mk.run("image_get_resinfo v[8:11], v4, s[12:19] dmask:0xf", t, None, (np.arange(64) % 4)[:, None])
        lvl = np.arange(64) % 4
        want = np.stack([np.maximum(12 >> lvl, 1), np.maximum(2 >> lvl, 1), np.zeros(64), np.full(64, 3)], 1)
        np.testing.assert_array_equal(got, np.where((lvl < 3)[:, None], want, 0))
        with pytest.raises(GPUFault, match="image_load_mip: mip level 1: mip levels are not emulated"):
            mk.run("image_load_mip v8, v4, s[12:19] dmask:0x1 unorm", t, None,
                   np.stack([np.zeros(64), np.zeros(64), np.arange(64) % 2], 1))
    finally:
        img.free()


# ---- sampling variants: LOD, bias, clamp, offsets, derivatives, gather4 --------------------------------------
def _quad_lod(xs, ys):
    """log2 of the longer texel-space derivative of each lane's 2x2 quad (x: lane 1 - lane 0, y: lane 2 - 0)."""
    q = np.arange(64) & ~3
    dx = (xs[q + 1] - xs[q]).astype(np.float64) ** 2 + (ys[q + 1] - ys[q]).astype(np.float64) ** 2
    dy = (xs[q + 2] - xs[q]).astype(np.float64) ** 2 + (ys[q + 2] - ys[q]).astype(np.float64) ** 2
    return np.log2(np.sqrt(np.maximum(dx, dy)))


RDNA = [("gfx1030", 32), ("gfx1030", 64), ("gfx1100", 32), ("gfx1100", 64)]


@pytest.mark.parametrize("target,wave", RDNA, ids=[f"{t}-w{w}" for t, w in RDNA])
def test_sample_variants_lod_bias_clamp_offsets(target, wave):
    """RDNA's sample variants.  XY_MAG point / XY_MIN bilinear: the LOD (given, quad + bias, quad clamped)
    picks the filter per lane; _o adds signed 6-bit texel offsets."""
    tex = rng.uniform(-2, 2, (1, 4, 8, 4)).astype(F32)
    img = mk.Image(tex, "2d", target=target)
    dim = " dim:SQ_RSRC_IMG_2D"
    kw = dict(target=target, wave=wave)
    try:
        samp = mk.words(mk.S, clamp_x=WRAP, clamp_y=MIRROR, unnorm=1, mag=POINT, min=BILINEAR, max_lod=0xFFF)
        xs, ys = rng.uniform(-3, 11, 64).astype(F32), rng.uniform(-2, 6, 64).astype(F32)
        comps, modes = rgba_f32(tex), (WRAP, MIRROR)
        point = ref_sample(comps, "2d", list(zip(xs, ys)), POINT, modes, False)
        lin = ref_sample(comps, "2d", list(zip(xs, ys)), BILINEAR, modes, False)
        lod = rng.uniform(-2, 2, 64).astype(F32)
        got = mk.run("image_sample_l v[8:11], v[4:6], s[12:19], s[20:23] dmask:0xf" + dim, img.t, samp, **kw, addr=
                     f32bits(np.stack([xs, ys, lod], 1))).view(F32)
        np.testing.assert_allclose(got, np.where((lod > 0)[:, None], lin, point), rtol=1e-6, atol=1e-6)
        quad = _quad_lod(xs, ys)
        bias = rng.uniform(-4, 1, 64).astype(F32)
        got = mk.run("image_sample_b v[8:11], v[4:6], s[12:19], s[20:23] dmask:0xf" + dim, img.t, samp, **kw, addr=
                     f32bits(np.stack([bias, xs, ys], 1))).view(F32)
        np.testing.assert_allclose(got, np.where((quad + bias > 0)[:, None], lin, point), rtol=1e-6, atol=1e-6)
        clamp = rng.uniform(-1, 1, 64).astype(F32)
        got = mk.run("image_sample_cl v[8:11], v[4:6], s[12:19], s[20:23] dmask:0xf" + dim, img.t, samp, **kw, addr=
                     f32bits(np.stack([xs, ys, clamp], 1))).view(F32)
        np.testing.assert_allclose(got, np.where((np.minimum(quad, clamp) > 0)[:, None], lin, point), rtol=1e-6,
                                   atol=1e-6)
        ox, oy = rng.integers(-32, 32, 64), rng.integers(-32, 32, 64)
        offs = ((ox & 0x3F) | (oy & 0x3F) << 8).astype(np.uint32)
        psamp = mk.words(mk.S, clamp_x=WRAP, clamp_y=MIRROR, unnorm=1, mag=POINT, min=POINT)
        got = mk.run("image_sample_o v[8:11], v[4:6], s[12:19], s[20:23] dmask:0xf" + dim, img.t, psamp, **kw, addr=
                     np.stack([offs, f32bits(xs), f32bits(ys)], 1)).view(F32)
        want = ref_sample(comps, "2d", list(zip(xs.astype(np.float64) + ox, ys.astype(np.float64) + oy)), POINT,
                          modes, False)
        np.testing.assert_array_equal(got, want)
    finally:
        img.free()


@pytest.mark.parametrize("target,wave", RDNA, ids=[f"{t}-w{w}" for t, w in RDNA])
def test_sample_derivatives_1d_and_gather4(target, wave):
    kw = dict(target=target, wave=wave)
    tex = rng.uniform(-2, 2, (1, 1, 16, 4)).astype(F32)
    img = mk.Image(tex, "1d", target=target)
    try:
        samp = mk.words(mk.S, clamp_x=CLAMP, unnorm=0, mag=POINT, min=BILINEAR, max_lod=0xFFF)
        xs = rng.uniform(-0.2, 1.2, 64).astype(F32)
        dh, dv = rng.uniform(-0.15, 0.15, (2, 64)).astype(F32)            # x 16 texels: |d| * 16 around 1
        got = mk.run("image_sample_d v[8:9], v[4:6], s[12:19], s[20:23] dmask:0x3 dim:SQ_RSRC_IMG_1D", img.t, samp,
                     **kw, addr=f32bits(np.stack([dh, dv, xs], 1))).view(F32)[:, :2]
        lod = np.log2(np.sqrt(np.maximum((dh * 16.0) ** 2, (dv * 16.0) ** 2)))
        comps = rgba_f32(tex)
        point = ref_sample(comps, "1d", [(x,) for x in xs], POINT, (CLAMP,), True)[:, :2]
        lin = ref_sample(comps, "1d", [(x,) for x in xs], BILINEAR, (CLAMP,), True)[:, :2]
        np.testing.assert_allclose(got, np.where((lod > 0)[:, None], lin, point), rtol=1e-6, atol=1e-6)
    finally:
        img.free()
    tex = rng.uniform(-2, 2, (1, 5, 6, 4)).astype(F32)
    img = mk.Image(tex, "2d", target=target)
    try:
        xs, ys = rng.uniform(-2, 8, 64).astype(F32), rng.uniform(-2, 7, 64).astype(F32)
        got = mk.run("image_gather4 v[8:11], v[4:5], s[12:19], s[20:23] dmask:0x2 dim:SQ_RSRC_IMG_2D", img.t,
                     sampler((MIRROR, BORDER, CLAMP), POINT, unnorm=1, border=2), **kw, addr=f32bits(np.stack([xs, ys], 1)))
        want = np.zeros((64, 4), np.float32)
        for lane in range(64):                                   # G of (x0,y1) (x1,y1) (x1,y0) (x0,y0)
            tx, ty = axis(xs[lane], 6, True, MIRROR), axis(ys[lane], 5, True, BORDER)
            for o, (i, j) in enumerate(((0, 1), (1, 1), (1, 0), (0, 0))):
                x, y = tx[i][0], ty[j][0]
                want[lane, o] = 1.0 if y is None else tex[0, y, x, 1]         # opaque white border
        np.testing.assert_array_equal(got.view(F32), want)
    finally:
        img.free()


@pytest.mark.parametrize("target", ["gfx90a", "gfx1030"])
def test_texture_corpus_kernels_lower_completely(target, both):
    """Every kernel of the hipcc 5.2 texture fixture (tex1D/2D/3D, layered, cube, surfaces, mip loads) lowers
    to native records: nothing reachable sends it to the numpy engine (the cube kernel's descriptor check runs
    natively and faults as the numpy engine does)."""
    from pathlib import Path

    from pyhip.emu.native.lower import NativeProgram
    from pyhip.loader import load
    g = asmkit.gpu(target)
    g.native_engine()
    path = Path(__file__).resolve().parents[1] / f"fixtures/bin/hipcc52/textures-{target}.hsaco"
    prog = g.load_program(load(path.read_bytes()).code_objects[0].code_object)
    try:
        nprog = NativeProgram(prog, g.context_for(prog, 64))
        images = sum(i.encoding.startswith("MIMG") for i in prog.instructions.values())
        assert images > 20
        kernels = 0
        for ko, k in prog.kernels.items():
            entry = ko + k.descriptor.kernel_code_entry_byte_offset
            reason, _ = nprog.kernel_support(entry, compiled=True)
            assert reason is None, (k.name, reason)
            kernels += 1
        assert kernels >= 10
    finally:
        g.unload_program(prog)
    mk.USED.discard(target)                     # nothing dispatched: no engine counts to check
