"""What the texture unit does between a sample's coordinates and its result, vectorized over lanes:
addressing, point / bilinear / trilinear filtering, border colour, min/max reduction, the component swizzle.

Precision model (the D3D11/12 functional spec's texture rules, which GCN/CDNA texture units follow:
D3D12_SUBTEXEL_FRACTIONAL_BIT_COUNT = 8): the coordinate, scaled to texels (and, for linear filtering,
minus half a texel), is converted to fixed point with 8 fractional bits, rounding to nearest even; point
sampling takes the integer part of that (so a coordinate within 1/512 texel below a texel boundary selects
the next texel), linear filtering takes the two texels around it with weights (1 - a, a) where a is the
8-bit fraction (0, 1/256, ..., 255/256).  With the S#'s TRUNC_COORD set, point sampling truncates instead
(exact ``floor``).  Filtered values are combined in float64 and rounded once to f32.

Addressing applies to each tap's integer texel index: wrap (index mod N), mirror (period 2N), clamp to
the last texel, mirror once then clamp, border (taps outside [0, N) take the border colour), and the
half-border modes (the coordinate is first clamped to [-0.5, N + 0.5] texels, then taps outside take the
border colour).  Border colours are the S#'s three fixed ones (transparent black, opaque black, opaque
white: 1 for integer formats); the border-colour register table (type 3) is not emulated (a fault).  The
border colour is given in result channels (R, G, B, A after the T#'s DST_SEL), so a border tap holds, in
each memory component, the colour of the channel that component is selected into.

Integer (UINT/SINT) images are not filterable: linear filtering samples them as point.  Only the base
mip level is sampled (mip chains are not emulated); with different XY_MAG/XY_MIN filters, the level of
detail that chooses between them is computed from the coordinates of each 2x2 quad of lanes (lanes 4k..4k+3:
x-derivative lane 1 - lane 0, y-derivative lane 2 - lane 0), plus the S#'s LOD bias and clamp.
"""
from __future__ import annotations

import numpy as np

from ..image_desc import (BORDER_OPAQUE_BLACK, BORDER_OPAQUE_WHITE, BORDER_REGISTER, CLAMP_BORDER, CLAMP_HALF_BORDER,
                          CLAMP_LAST_TEXEL, FILTER_MAX, FILTER_MIN, MIRROR, MIRROR_ONCE_BORDER,
                          MIRROR_ONCE_HALF_BORDER, MIRROR_ONCE_LAST_TEXEL, SEL_0, SEL_1, SEL_X, WRAP, XY_ANISO_BILINEAR,
                          XY_BILINEAR, Z_LINEAR, Z_POINT)
from ..memory import GPUFault

F64, I64 = np.float64, np.int64
SUBTEXEL = 256                    # 8 fractional bits
_LIMIT = float(1 << 22)           # coordinates are clamped to +-2^22 texels before the fixed-point conversion


def to_fixed(t: np.ndarray, truncate: bool = False) -> np.ndarray:
    """Texel-space coordinates -> fixed point with 8 fractional bits (int64 counts of 1/256 texel)."""
    t = np.clip(np.nan_to_num(t, nan=0.0, posinf=_LIMIT, neginf=-_LIMIT), -_LIMIT, _LIMIT) * SUBTEXEL
    return (np.floor(t) if truncate else np.rint(t)).astype(I64)


def address(i: np.ndarray, n: int, mode: int):
    """Texel indices after the addressing mode -> (index in [0, n), border mask)."""
    if mode == WRAP:
        return np.mod(i, n), np.zeros(i.shape, bool)
    if mode == MIRROR:
        m = np.mod(i, 2 * n)
        return np.where(m < n, m, 2 * n - 1 - m), np.zeros(i.shape, bool)
    if mode in (MIRROR_ONCE_LAST_TEXEL, MIRROR_ONCE_HALF_BORDER, MIRROR_ONCE_BORDER):
        i = np.where(i < 0, -1 - i, i)
    if mode in (CLAMP_LAST_TEXEL, MIRROR_ONCE_LAST_TEXEL):
        return np.clip(i, 0, n - 1), np.zeros(i.shape, bool)
    if mode in (CLAMP_BORDER, MIRROR_ONCE_BORDER, CLAMP_HALF_BORDER, MIRROR_ONCE_HALF_BORDER):
        out = (i < 0) | (i >= n)
        return np.clip(i, 0, n - 1), out
    raise GPUFault(f"sampler clamp mode {mode} is not supported")


def axis_taps(t: np.ndarray, n: int, linear: bool, mode: int, truncate: bool):
    """One axis: texel-space coordinates (k,) -> list of (index, border mask, weight) taps."""
    if mode in (CLAMP_HALF_BORDER, MIRROR_ONCE_HALF_BORDER):
        if mode == MIRROR_ONCE_HALF_BORDER:
            t = np.abs(t)
        t = np.clip(t, -0.5, n + 0.5)
    if not linear:
        i = to_fixed(t, truncate) >> 8
        idx, border = address(i, n, mode)
        return [(idx, border, np.ones(t.shape, F64))]
    q = to_fixed(t - 0.5)
    i0, a = q >> 8, (q & 0xFF) / SUBTEXEL
    taps = []
    for i, wgt in ((i0, 1.0 - a), (i0 + 1, a)):
        idx, border = address(i, n, mode)
        taps.append((idx, border, wgt))
    return taps


def border_components(border_type: int, dst_sel: tuple, integer: bool) -> np.ndarray:
    """The border colour in memory-component space (X, Y, Z, W) for a T#'s DST_SEL."""
    if border_type == BORDER_REGISTER:
        raise GPUFault("the border colour register table (S# BORDER_COLOR_TYPE 3) is not emulated")
    one = 1
    rgba = {BORDER_OPAQUE_BLACK: (0, 0, 0, one), BORDER_OPAQUE_WHITE: (one,) * 4}.get(border_type, (0, 0, 0, 0))
    comps = np.zeros(4, I64 if integer else F64)
    for channel, sel in enumerate(dst_sel):
        if SEL_X <= sel <= SEL_X + 3:
            comps[sel - SEL_X] = rgba[channel]
    return comps


def swizzle(comps: np.ndarray, dst_sel: tuple, integer: bool) -> np.ndarray:
    """(n, 4) memory components -> (n, 4) result channels by DST_SEL (0, 1, X, Y, Z, W)."""
    out = np.zeros(comps.shape, comps.dtype)
    for channel, sel in enumerate(dst_sel):
        if sel == SEL_1:
            out[:, channel] = 1
        elif SEL_X <= sel <= SEL_X + 3:
            out[:, channel] = comps[:, sel - SEL_X]
        elif sel != SEL_0:
            out[:, channel] = 0                   # reserved selects read 0
    return out


def is_linear(filter_: int) -> bool:
    return filter_ in (XY_BILINEAR, XY_ANISO_BILINEAR)


def quad_lod(texel_coords: list) -> np.ndarray:
    """The LOD of each lane (flat over waves x lanes) from its 2x2 quad (lanes 4k..4k+3: x derivative from
    lanes 1 - 0, y from 2 - 0): log2 of the longer texel-space derivative.  ``texel_coords``: one
    (n_waves, lanes) array of texel-space coordinates per axis."""
    sq_x = sq_y = 0.0
    for t in texel_coords:
        quad = t.reshape(t.shape[0], -1, 4)
        sq_x = sq_x + np.repeat(quad[:, :, 1] - quad[:, :, 0], 4, axis=1) ** 2
        sq_y = sq_y + np.repeat(quad[:, :, 2] - quad[:, :, 0], 4, axis=1) ** 2
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.log2(np.sqrt(np.maximum(sq_x, sq_y))).reshape(-1)


def xy_filter_at_lod(samp, lod: np.ndarray) -> np.ndarray:
    """Per lane: True where bilinear.  The magnification filter applies at LOD <= 0 (after the S#'s bias and
    clamps), the minification one above; the LOD only matters when the two differ."""
    mag, mn = is_linear(samp.mag_filter), is_linear(samp.min_filter)
    if mag == mn:
        return np.full(len(lod), mag)
    lod = np.clip(np.nan_to_num(lod + samp.lod_bias, nan=0.0), samp.min_lod, samp.max_lod)
    return np.where(lod <= 0, mag, mn)


def z_linear(samp, xy_linear: np.ndarray) -> np.ndarray:
    """Per lane: True where the volume's Z axis is filtered linearly (Z_FILTER none: like the XY filter)."""
    if samp.z_filter in (Z_POINT, Z_LINEAR):
        return np.full(xy_linear.shape, samp.z_filter == Z_LINEAR)
    return xy_linear


def combine(samp, values: list, weights: list, borders: list, border: np.ndarray, integer: bool) -> np.ndarray:
    """Taps -> (n, 4) component values: weighted blend (float64), or min / max over the taps that carry
    weight (the S#'s FILTER_MODE)."""
    vals = [np.where(b[:, None], border[None, :], v) if b.any() else v for v, b in zip(values, borders)]
    if integer:
        return vals[0]
    if samp.filter_mode in (FILTER_MIN, FILTER_MAX):
        pick = np.minimum if samp.filter_mode == FILTER_MIN else np.maximum
        fill = np.inf if samp.filter_mode == FILTER_MIN else -np.inf
        out = None
        for v, w in zip(vals, weights):
            v = np.where((w > 0)[:, None], v, fill)
            out = v if out is None else pick(out, v)
        return out
    out = np.zeros(vals[0].shape, F64)
    for v, w in zip(vals, weights):
        out += v * w[:, None]
    return out
