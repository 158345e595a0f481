"""Image instructions (gfx90a MIMG) against per-lane references written here from the rules (D3D11/12
texture precision: 8-bit subtexel fixed point, round to nearest even; GFX9 addressing modes and border
colours; format conversions), on random images and coordinates that cross every edge."""
import math

import numpy as np
import pytest

import asmkit
import mimgkit as mk
from pyhip.emu.memory import GPUFault

F32 = np.float32
WRAP, MIRROR, CLAMP, MIRROR_ONCE, HALF_BORDER, MIRROR_ONCE_HALF, BORDER, MIRROR_ONCE_BORDER = range(8)
POINT, BILINEAR = 0, 1
rng = np.random.default_rng(16)


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
def test_load_bounds_a16_and_mip():
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


def test_store_formats_partial_dmask_and_bounds():
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


def test_store_d16_float_and_sint16():
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


def test_atomics_contended_add_and_cmpswap():
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


def test_get_resinfo():
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


def test_descriptor_outside_any_allocation_faults(exact_bounds):
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


def test_waves_see_their_own_exec_mask():
    tex = rng.uniform(0, 1, (1, 1, 8, 1)).astype(F32)
    img = mk.Image(tex, "1d")
    try:
        got = mk.run("image_load v8, v4, s[12:19] dmask:0x1 unorm", img.t, None, (np.arange(64) % 8)[:, None],
                     lanes=37)
        np.testing.assert_array_equal(got[:37, 0].view(F32), tex[0, 0, np.arange(37) % 8, 0])
    finally:
        img.free()

