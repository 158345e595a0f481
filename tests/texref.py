"""A numpy texture sampler written from the rules (not from pyhip's code), for the tests that sample through
HIP's API: what tex1D/2D/3D/1DLayered/2DLayered return on gfx90a under HIP 5.2.

Point sampling returns texel floor(x * size) (the device library snaps the coordinate to a texel corner on
gfx90a, so the hardware's 8-bit sub-texel rounding never moves it); linear filtering takes the texels
around x * size - 0.5 with weights quantized to 1/256 (rounded to nearest even) and blends in double.
HIP 5.2 programs one addressing mode for all axes (addressMode[0]); with unnormalized coordinates wrap and
mirror act as clamp; border addressing returns 0 in every channel the format has (A = 1 when it has none)."""
from __future__ import annotations

import numpy as np

WRAP, CLAMP, MIRROR, BORDER = 0, 1, 2, 3


def effective_mode(mode: int, normalized: bool) -> int:
    return CLAMP if not normalized and mode in (WRAP, MIRROR) else mode


def wrap(i: np.ndarray, n: int, mode: int):
    """-> (index, valid) after the addressing mode."""
    if mode == WRAP:
        return np.mod(i, n), np.ones(i.shape, bool)
    if mode == MIRROR:
        k = np.mod(i, 2 * n)
        return np.where(k < n, k, 2 * n - 1 - k), np.ones(i.shape, bool)
    if mode == CLAMP:
        return np.clip(i, 0, n - 1), np.ones(i.shape, bool)
    return np.clip(i, 0, n - 1), (i >= 0) & (i < n)


def taps(x: np.ndarray, n: int, linear: bool, mode: int, normalized: bool):
    """[(index, valid, weight)] per axis."""
    x = np.asarray(x, np.float32)
    if not linear:
        t = np.floor(x * np.float32(n)) if normalized else np.floor(x)
        i, ok = wrap(t.astype(np.int64), n, mode)
        return [(i, ok, np.ones(x.shape))]
    t = x.astype(np.float64) * (n if normalized else 1) - 0.5
    q = np.rint(t * 256) / 256
    i0 = np.floor(q).astype(np.int64)
    a = q - i0
    out = []
    for i, w in ((i0, 1 - a), (i0 + 1, a)):
        idx, ok = wrap(i, n, mode)
        out.append((idx, ok, w))
    return out


def sample(tex: np.ndarray, coords: list, linear: bool, mode: int, normalized: bool, layer=None,
           border_alpha: bool = False) -> np.ndarray:
    """tex: (D, H, W, C) decoded texel values (D: depth or layers; H = 1 for 1-D); coords: per spatial axis
    (x[, y[, z]]); layer: integer layers for layered textures.  -> (n, C) float64."""
    mode = effective_mode(mode, normalized)
    d, h, w, c = tex.shape
    sizes = (w, h, d)[:len(coords)]
    axes = [taps(x, s, linear, mode, normalized) for x, s in zip(coords, sizes)]
    n = len(coords[0])
    acc = np.zeros((n, c))
    for combo in np.ndindex(*[len(a) for a in axes]):
        sel = [axes[k][j] for k, j in enumerate(combo)]
        ok = np.logical_and.reduce([s[1] for s in sel])
        wgt = np.prod([s[2] for s in sel], axis=0)
        x = sel[0][0]
        y = sel[1][0] if len(sel) > 1 else np.zeros(n, np.int64)
        z = sel[2][0] if len(sel) > 2 else (np.clip(layer, 0, d - 1) if layer is not None else np.zeros(n, np.int64))
        val = tex[z, y, x]
        if border_alpha:
            val = np.where(ok[:, None], val, np.array([0.0] * (c - 1) + [1.0]))
        else:
            val = np.where(ok[:, None], val, 0.0)
        acc += wgt[:, None] * val
    return acc
