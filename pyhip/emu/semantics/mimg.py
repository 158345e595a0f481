"""MIMG (gfx90a, gfx1030, gfx1100): image_sample[_lz, _l], image_load[_mip], image_store[_mip],
image_atomic_*, image_get_resinfo; wave64 and wave32.

The resource is the 8-dword T# in SGPRs ``srsrc`` (fields: ``image_desc``, in the layout of the kernel's
generation: GFX9, GFX10.3 or GFX11), the sampler the 4-dword S# in ``ssamp``; both are wave-uniform, waves
with different descriptors are handled group by group.  The address dwords hold the coordinates the T#'s
TYPE needs (1D: x; 2D: x, y; 3D: x, y, z; 1D array: x, slice; 2D array: x, y, slice), then the LOD of
``image_sample_l`` or the mip level of the ``_mip`` forms (A16: two 16-bit coordinates per dword).  GFX9
takes them from consecutive VGPRs at ``vaddr``; RDNA from ``vaddr`` on, or, in the NSA forms, from the VGPRs
the instruction lists (``fields['vaddrs']``), and its DIM must name the T#'s TYPE (a fault otherwise).
TFE writes 0 (no fault) to the VGPR after the data.  Sample coordinates are floats, normalized unless the instruction's
UNORM or the S#'s FORCE_UNNORMALIZED is set (the slice is always an unnormalized index, rounded to nearest
even and clamped to the array); load/store/atomic coordinates are unsigned integers.

Results: one VGPR per DMASK channel (R, G, B, A after the T#'s DST_SEL), in channel order; D16 packs two
channels per VGPR (f16 for float formats, the low 16 bits of integers).  Stores write, per enabled DMASK
channel, memory component X/Y/Z/W from the consecutive data VGPRs (a partial DMASK keeps the other
components: a read-modify-write).  Bounds: a load, store or atomic outside the image (any coordinate
>= its size, a slice past the array, a mip level past LAST_LEVEL) reads 0 in every component (then
DST_SEL, so a SEL_1 channel still reads 1) / is dropped; an access through a descriptor whose texels lie
outside any allocation faults like any other memory access.  Images are linear (SW_MODE 0): element
(x, y, slice) is at base + ((slice * rows + y) * pitch + x) * bytes-per-element (rows = HEIGHT + 1, 1 for
1-D types).  Not emulated (each a fault naming it): tiled layouts, cube and MSAA types, mip levels other
than 0; ``image_*_pck*`` are not executable.  Sampling details (precision, addressing, border, LOD):
``sampler``; formats: ``texels``.
"""
from __future__ import annotations

import numpy as np

from .. import atomics
from ..image_desc import (ARRAY_TYPES, FLOAT, IMG_1D, IMG_1D_ARRAY, IMG_2D, IMG_2D_ARRAY, IMG_3D, SINT, UINT,
                          parse_ssharp, parse_tsharp)
from ..memory import GPUFault
from ..operands import write_v
from ..state import count
from . import sampler as S, texels
from .registry import register
from .vmem import _locating

U8, U16, U32, U64, I64, F16, F32, F64 = np.uint8, np.uint16, np.uint32, np.uint64, np.int64, np.float16, \
    np.float32, np.float64
_NCOORD = {IMG_1D: 1, IMG_2D: 2, IMG_3D: 3, IMG_1D_ARRAY: 2, IMG_2D_ARRAY: 3}
_ATOMICS = ("swap", "cmpswap", "add", "sub", "smin", "umin", "smax", "umax", "and", "or", "xor", "inc", "dec")
_FLOAT_ATOMICS = ("fcmpswap", "fmin", "fmax")          # GFX10: on 32-bit FLOAT images


# ---- descriptors ------------------------------------------------------------------------------------------
def _groups(st, w, regs):
    """Waves of ``w`` grouped by their descriptor words: yields (positions in w, words tuple)."""
    words = np.stack([st.sgpr[w, r] for r in regs], axis=1)
    if (words == words[0]).all():
        yield np.arange(len(words)), tuple(int(x) for x in words[0])
        return
    uniq, inverse = np.unique(words, axis=0, return_inverse=True)
    for k, row in enumerate(uniq):
        yield np.nonzero(inverse.reshape(-1) == k)[0], tuple(int(x) for x in row)


def mip_fault(name: str, level: int) -> GPUFault:
    return GPUFault(f"{name}: mip level {level}: mip levels are not emulated")


def base_level_fault(name: str, level: int) -> GPUFault:
    return GPUFault(f"{name}: BASE_LEVEL {level}: mip levels are not emulated")


def gather_fault(name: str) -> GPUFault:
    return GPUFault(f"{name}: gather4 needs a 2-D image")


def atomic_format_fault(name: str, opname: str, num_format: int, bpe: int, is64: bool):
    """The fault of an image atomic on a format it does not take, or None."""
    if opname in _FLOAT_ATOMICS:
        if num_format != FLOAT or bpe != 4 or is64:
            return GPUFault(f"{name}: float atomics need a 32-bit FLOAT image format")
    elif num_format not in (UINT, SINT) or bpe != (8 if is64 else 4):
        return GPUFault(f"{name}: atomics need a {8 * (8 if is64 else 4)}-bit UINT/SINT image format")
    return None


def _image(words, what: str, I=None):
    try:
        img = parse_tsharp(words, I.gen if I is not None else 9)
    except ValueError as exc:
        raise GPUFault(f"{what}: {exc}") from None
    if I is not None and I.dim is not None and I.dim + IMG_1D != img.type:
        raise GPUFault(f"{what}: DIM {I.dim} does not match the resource's type {img.type}")
    if img.sw_mode:
        raise GPUFault(f"{what}: tiled image layout (SW_MODE {img.sw_mode}) is not emulated; pyhip images are linear")
    if img.type not in _NCOORD:
        raise GPUFault(f"{what}: image type {img.type} (cube / MSAA) is not emulated")
    texels.check_format(img.comps, img.num_format)
    return img


# ---- operands -----------------------------------------------------------------------------------------------
def _vgprs(st, w, first, n: int) -> list[np.ndarray]:
    """n VGPRs as (nw, lanes) uint32: consecutive from ``first``, or the first n of a list of registers
    (registers past the file read as 0)."""
    regs = range(first, first + n) if isinstance(first, int) else list(first[:n]) + [1 << 30] * (n - len(first))
    out = []
    for r in regs:
        out.append(st.vgpr[r, w] if r < st.vgpr.shape[0] else np.zeros((count(st, w), st.lanes), U32))
    return out


def _coords(st, w, vaddr, n: int, a16: bool) -> list[np.ndarray]:
    """n address components as raw (nw, lanes) uint32 (A16: 16-bit values, two per dword); ``vaddr``: the
    first address VGPR or the NSA list."""
    if not a16:
        return _vgprs(st, w, vaddr, n)
    regs = _vgprs(st, w, vaddr, (n + 1) // 2)
    return [(regs[i // 2] >> U32(16 * (i % 2))) & U32(0xFFFF) for i in range(n)]


def _as_float(raw: np.ndarray, a16: bool) -> np.ndarray:
    return raw.astype(U16).view(F16).astype(F64) if a16 else raw.view(F32).astype(F64)


def _texel_address(img, x, y, z):
    """Element addresses (uint64) of in-range integer coordinates; z is the 3D depth or the array slice."""
    rows = 1 if img.type in (IMG_1D, IMG_1D_ARRAY) else img.height
    elem = (z.astype(U64) * U64(rows) + y.astype(U64)) * U64(img.pitch) + x.astype(U64)
    return U64(img.base) + elem * U64(img.bpe)


def _split_xyz(img, c):
    """Coordinate list in the T#'s order -> (x, y, z) with z the depth / slice (missing ones 0)."""
    zero = np.zeros_like(c[0])
    if img.type == IMG_1D:
        return c[0], zero, zero
    if img.type == IMG_1D_ARRAY:
        return c[0], zero, c[1]
    if img.type == IMG_2D:
        return c[0], c[1], zero
    return c[0], c[1], c[2]


def _gather(K, mask, addrs, size):
    with _locating(mask):
        return K.memory.gather(addrs, size)


def _scatter(K, mask, addrs, data):
    with _locating(mask):
        K.memory.scatter(addrs, data)


def _results(channels: np.ndarray, dmask: int, d16: bool, integer: bool) -> list[np.ndarray]:
    """(n, 4) register values per channel -> the values of the data VGPRs, in order."""
    picked = [channels[:, c] for c in range(4) if dmask >> c & 1]
    if not d16:
        return picked
    halves = [(p & U32(0xFFFF)) if integer else p.view(F32).astype(F16).view(U16).astype(U32) for p in picked]
    return [halves[i] | (halves[i + 1] << U32(16) if i + 1 < len(halves) else U32(0))
            for i in range(0, len(halves), 2)]


def _data_values(st, w, reg: int, dmask: int, d16: bool, num_format: int) -> dict:
    """Store data: channel -> (nw, 64) uint32 register values (D16 unpacked to 32 bits: f16 widened for
    float formats, 16-bit integers zero- (UINT) or sign-extended (SINT))."""
    chans = [c for c in range(4) if dmask >> c & 1]
    if not d16:
        return dict(zip(chans, _vgprs(st, w, reg, len(chans))))
    regs = _vgprs(st, w, reg, (len(chans) + 1) // 2)
    out = {}
    for i, c in enumerate(chans):
        h = (regs[i // 2] >> U32(16 * (i % 2))) & U32(0xFFFF)
        if num_format == SINT:
            out[c] = h.astype(U16).view(np.int16).astype(np.int32).view(U32)
        elif num_format == UINT:
            out[c] = h
        else:
            out[c] = h.astype(U16).view(F16).astype(F32).view(U32)
    return out


class _Inst:
    """Compile-time facts of one MIMG instruction."""

    def __init__(self, inst, K):
        f = inst.fields
        self.name = inst.name
        self.dmask, self.d16, self.a16 = f["dmask"], bool(f["d16"]), bool(f["a16"])
        self.unorm = bool(f["unorm"])
        self.srsrc, self.ssamp = f["srsrc"], f["ssamp"]
        self.vaddr = f["vaddrs"] if f.get("vaddrs") else f["vaddr"]
        self.vdata = f["vdata"] + (K.accum_offset if f["acc"] else 0)
        self.glc = bool(f["glc"])
        self.gen = K.family
        self.dim = f.get("dim") if K.family >= 10 else None
        self.tfe = bool(f.get("tfe"))

    def write(self, st, w, outs: list, m: np.ndarray) -> None:
        for i, v in enumerate(outs):
            write_v(st, w, self.vdata + i, v, m)
        if self.tfe:                        # the texel-fail status: no partially resident textures
            write_v(st, w, self.vdata + len(outs), np.zeros(m.shape, U32), m)


def _nouts(dmask: int, d16: bool) -> int:
    n = bin(dmask).count("1")
    return (n + 1) // 2 if d16 else n


# ---- image_sample / image_gather4 -------------------------------------------------------------------------
# address dwords in order: [offset] [bias] [z-compare] [derivatives] coordinates [LOD | LOD clamp]
_SAMPLE_FLAGS = ("c", "d", "cd", "b", "l", "lz", "cl", "o", "g16")


def sample_flags(name: str) -> frozenset:
    """The variant flags of an image_sample* / image_gather4* mnemonic (``image_sample_d_cl_o``: d, cl, o)."""
    return frozenset(name.split("_")[2:])


def executable_sample(name: str) -> bool:
    """The sample/gather4 variants the emulator runs: all but depth compare (_c), 16-bit derivatives (_g16)
    and gather4h."""
    if not name.startswith(("image_sample", "image_gather4")) or name.startswith("image_gather4h"):
        return False
    f = sample_flags(name)
    return f <= set(_SAMPLE_FLAGS) and not f & {"c", "g16"}


def _sample(inst, K):
    I = _Inst(inst, K)
    I.flags = sample_flags(inst.name)
    I.gather = inst.name.startswith("image_gather4")
    nout = _nouts(0xF if I.gather else I.dmask, I.d16)

    def run(st, w):
        m = st.exec_mask(w)
        outs = np.zeros((nout, count(st, w), st.lanes), U32)
        regs = list(range(I.srsrc, I.srsrc + 8)) + list(range(I.ssamp, I.ssamp + 4))
        for pos, words in _groups(st, w, regs):
            gm = np.zeros(m.shape, bool)
            gm[pos] = m[pos]
            if not gm.any():
                continue
            img, samp = _image(words[:8], inst.name, I), parse_ssharp(words[8:], I.gen)
            if img.base_level:
                raise base_level_fault(inst.name, img.base_level)
            res = _sample_lanes(K, st, w, I, img, samp, gm)
            integer = texels.is_integer(img.num_format)
            for i, v in enumerate(_results(res, 0xF if I.gather else I.dmask, I.d16, integer)):
                outs[i][gm] = v
        I.write(st, w, list(outs), m)
    return run


def _addresses(st, w, I, img, ncoord: int, spatial: int):
    """(offsets, bias, derivatives, coordinate values (raw), LOD/clamp value (raw) or None) of the lanes."""
    fl = I.flags
    nextra = ("o" in fl) + ("b" in fl) + ("c" in fl)
    nderiv = 2 * spatial if fl & {"d", "cd"} else 0
    if nderiv and I.a16:
        raise GPUFault(f"{I.name}: 16-bit derivatives are not emulated")
    nlod = 1 if fl & {"l", "cl"} else 0
    ncrd = ncoord + nlod
    ndw = nextra + nderiv + ((ncrd + 1) // 2 if I.a16 else ncrd)
    regs = I.vaddr if not isinstance(I.vaddr, int) else tuple(range(I.vaddr, I.vaddr + ndw))
    dw = _vgprs(st, w, regs, nextra + nderiv)
    k = 0
    offs = bias = None
    if "o" in fl:
        offs, k = dw[k], k + 1
    if "b" in fl:
        bias, k = _as_float(dw[k], I.a16), k + 1
    k += "c" in fl
    derivs = [dw[k + i].view(F32).astype(F64) for i in range(nderiv)]
    k += nderiv
    raw = _coords(st, w, regs[k:], ncrd, I.a16)
    return offs, bias, derivs, raw[:ncoord], (raw[ncoord] if nlod else None)


def _sample_lanes(K, st, w, I, img, samp, gm):
    """(n, 4) result register values for the lanes of ``gm`` (gather4: the four texels' selected channel)."""
    ncoord = _NCOORD[img.type]
    spatial = ncoord - (1 if img.type in ARRAY_TYPES else 0)
    offs, bias, derivs, raw, lodarg = _addresses(st, w, I, img, ncoord, spatial)
    integer = texels.is_integer(img.num_format)
    normalized = not (I.unorm or samp.unnormalized)
    sizes = (img.width, img.height, img.depth)[:spatial]
    texel_coords = []
    for k in range(spatial):
        t = _as_float(raw[k], I.a16)
        t = t * sizes[k] if normalized else t
        if offs is not None:                      # 6-bit signed texel offsets: x 5:0, y 13:8, z 21:16
            o = ((offs >> U32(8 * k)) & U32(0x3F)).astype(np.int64)
            t = t + np.where(o >= 32, o - 64, o)
        texel_coords.append(t)
    lanes = np.nonzero(gm.reshape(-1))[0]
    fl = I.flags
    if "lz" in fl:
        lod = np.zeros(len(lanes))
    elif "l" in fl:
        lod = _as_float(lodarg, I.a16)[gm]
    elif derivs:
        scale = [sz if normalized else 1 for sz in sizes]
        dh = sum((derivs[k][gm] * scale[k]) ** 2 for k in range(spatial))
        dv = sum((derivs[spatial + k][gm] * scale[k]) ** 2 for k in range(spatial))
        with np.errstate(divide="ignore", invalid="ignore"):
            lod = np.log2(np.sqrt(np.maximum(dh, dv)))
    else:
        lod = S.quad_lod(texel_coords)[lanes]
    if bias is not None:
        lod = lod + bias[gm]
    if "cl" in fl:
        lod = np.minimum(lod, _as_float(lodarg, I.a16)[gm])
    xy_linear = np.full(len(lanes), True) if I.gather else S.xy_filter_at_lod(samp, lod)
    if integer and not I.gather:
        xy_linear[:] = False                      # integer formats are not filterable
    per_axis = []
    for k in range(spatial):
        t = texel_coords[k][gm]
        linear = S.z_linear(samp, xy_linear) if k == 2 else xy_linear
        pt = S.axis_taps(t, sizes[k], False, samp.clamp[k], samp.trunc_coord)
        if linear.any():
            lt = S.axis_taps(t, sizes[k], True, samp.clamp[k], samp.trunc_coord)
            # lanes filtered linearly take two taps; point lanes repeat their texel with weight 0
            idx0, b0, _ = pt[0]
            taps = [(np.where(linear, lt[j][0], idx0), np.where(linear, lt[j][1], b0),
                     np.where(linear, lt[j][2], 1.0 if j == 0 else 0.0)) for j in range(2)]
        else:
            taps = pt
        per_axis.append(taps)
    n = len(lanes)
    if img.type in ARRAY_TYPES:
        s = _as_float(raw[ncoord - 1], I.a16)[gm]
        layer = np.clip(np.rint(np.nan_to_num(s, nan=0.0)), 0, img.layers - 1).astype(I64) + img.base_array
    else:
        layer = None
    border = S.border_components(samp.border_type, img.dst_sel, integer)
    values, weights, borders = [], [], []
    zero = np.zeros(n, I64)
    for combo in np.ndindex(*[len(t) for t in per_axis]):
        idx = [per_axis[k][j][0] for k, j in enumerate(combo)]
        bd = np.zeros(n, bool)
        wt = np.ones(n, F64)
        for k, j in enumerate(combo):
            bd |= per_axis[k][j][1]
            wt = wt * per_axis[k][j][2]
        x = idx[0]
        y = idx[1] if spatial > 1 else zero
        z = idx[2] if spatial > 2 else (layer if layer is not None else zero)
        fetch = ~bd
        if fetch.all():                       # the common case: no border tap, no masking
            raw_t = _gather(K, gm, _texel_address(img, x, y, z), img.bpe)
            vals = texels.decode(raw_t, img.comps, img.num_format, samp.force_degamma)
        else:
            vals = np.zeros((n, 4), I64 if integer else F64)
            if fetch.any():
                mask = gm.copy()
                mask[gm] = fetch
                raw_t = _gather(K, mask, _texel_address(img, x[fetch], y[fetch], z[fetch]), img.bpe)
                vals[fetch] = texels.decode(raw_t, img.comps, img.num_format, samp.force_degamma)
        values.append(vals)
        weights.append(wt)
        borders.append(bd)
    if I.gather:                              # taps (x0,y0) (x1,y0) (x0,y1) (x1,y1) -> (x0,y1) (x1,y1) (x1,y0) (x0,y0)
        if spatial != 2:
            raise gather_fault(I.name)
        ch = (I.dmask & -I.dmask).bit_length() - 1
        picked = []
        for v, b in zip(values, borders):
            v = np.where(b[:, None], border[None, :], v) if b.any() else v
            picked.append(S.swizzle(v, img.dst_sel, integer)[:, ch])
        return texels.to_register(np.stack([picked[1], picked[3], picked[2], picked[0]], axis=1), img.num_format)
    comps = S.combine(samp, values, weights, borders, border, integer)
    return texels.to_register(S.swizzle(comps, img.dst_sel, integer), img.num_format)


# ---- image_load / image_store ---------------------------------------------------------------------------------
def _integer_coords(st, w, I, img, mip: bool):
    """(x, y, z, in-range mask) of every lane as (nw, 64) arrays."""
    n = _NCOORD[img.type] + (1 if mip else 0)
    c = [v.astype(I64) for v in _coords(st, w, I.vaddr, n, I.a16)]
    x, y, z = _split_xyz(img, c)
    ok = (x < img.width)
    if img.type not in (IMG_1D, IMG_1D_ARRAY):
        ok &= y < img.height
    if img.type == IMG_3D:
        ok &= z < img.depth
    elif img.type in ARRAY_TYPES:
        ok &= z < img.layers
        z = z + img.base_array
    if mip:
        level = img.base_level + c[-1]
        ok &= level <= img.last_level
        if (ok & (level != 0)).any():
            raise mip_fault(I.name, int(level[ok & (level != 0)][0]))
    return x, y, z, ok


def _load(mip: bool):
    def factory(inst, K):
        I = _Inst(inst, K)
        nout = _nouts(I.dmask, I.d16)

        def run(st, w):
            m = st.exec_mask(w)
            outs = np.zeros((nout, count(st, w), st.lanes), U32)
            for pos, words in _groups(st, w, range(I.srsrc, I.srsrc + 8)):
                gm = np.zeros(m.shape, bool)
                gm[pos] = m[pos]
                if not gm.any():
                    continue
                img = _image(words, inst.name, I)
                integer = texels.is_integer(img.num_format)
                x, y, z, ok = _integer_coords(st, w, I, img, mip)
                comps = np.zeros((int(gm.sum()), 4), I64 if integer else F64)
                inside = ok[gm]
                if inside.any():
                    mask = gm & ok
                    raw = _gather(K, mask, _texel_address(img, x[mask], y[mask], z[mask]), img.bpe)
                    comps[inside] = texels.decode(raw, img.comps, img.num_format)
                res = texels.to_register(S.swizzle(comps, img.dst_sel, integer), img.num_format)
                for i, v in enumerate(_results(res, I.dmask, I.d16, integer)):
                    outs[i][gm] = v
            I.write(st, w, list(outs), m)
        return run
    return factory


def _store(mip: bool):
    def factory(inst, K):
        I = _Inst(inst, K)

        def run(st, w):
            m = st.exec_mask(w)
            for pos, words in _groups(st, w, range(I.srsrc, I.srsrc + 8)):
                gm = np.zeros(m.shape, bool)
                gm[pos] = m[pos]
                img = _image(words, inst.name, I)
                x, y, z, ok = _integer_coords(st, w, I, img, mip)
                mask = gm & ok
                if not mask.any():
                    continue
                data = _data_values(st, w, I.vdata, I.dmask, I.d16, img.num_format)
                ncomp = len(img.comps)
                addrs = _texel_address(img, x[mask], y[mask], z[mask])
                if all(c in data for c in range(ncomp)):
                    old = None
                else:                                 # a partial write keeps the components not written
                    old = texels.split(_gather(K, mask, addrs, img.bpe), img.comps)
                new = texels.encode([data[c][mask] if c in data else np.zeros(int(mask.sum()), U32)
                                     for c in range(ncomp)], img.comps, img.num_format)
                if old is not None:
                    new = [n_ if c in data else o for c, (n_, o) in enumerate(zip(new, old))]
                _scatter(K, mask, addrs, texels.join(new, img.comps))
        return run
    return factory


# ---- atomics ------------------------------------------------------------------------------------------------
def _atomic(opname: str):
    def factory(inst, K):
        I = _Inst(inst, K)
        nbits = bin(I.dmask).count("1")
        is64 = nbits == (4 if opname.endswith("cmpswap") else 2)
        dt, size = (U64, 8) if is64 else (U32, 4)

        def rd(st, w, r):
            v = _vgprs(st, w, r, 2 if is64 else 1)
            return v[0].astype(U64) | v[1].astype(U64) << U64(32) if is64 else v[0]

        def run(st, w):
            m = st.exec_mask(w)
            result = np.zeros((count(st, w), st.lanes), dt)
            for pos, words in _groups(st, w, range(I.srsrc, I.srsrc + 8)):
                gm = np.zeros(m.shape, bool)
                gm[pos] = m[pos]
                img = _image(words, inst.name, I)
                exc = atomic_format_fault(inst.name, opname, img.num_format, img.bpe, is64)
                if exc is not None:
                    raise exc
                x, y, z, ok = _integer_coords(st, w, I, img, False)
                mask = gm & ok
                if not mask.any():
                    continue
                addrs = _texel_address(img, x[mask], y[mask], z[mask])
                val = rd(st, w, I.vdata)[mask]
                cmp = rd(st, w, I.vdata + (2 if is64 else 1))[mask] if opname.endswith("cmpswap") else None
                groups = atomics.Groups(addrs)
                f0 = groups.first                     # one lane per distinct texel, in group order
                order = np.argsort(f0)
                firsts = mask.copy()
                firsts[mask] = np.isin(np.arange(len(addrs)), f0)
                init = np.empty(len(f0), dt)
                with atomics.LOCK:                    # read, apply, write back: one step (docs/memory-model.md)
                    init[order] = np.ascontiguousarray(_gather(K, firsts, addrs[f0[order]], size)).view(dt).reshape(-1)
                    old, final = atomics.apply(opname, dt, init, val, cmp, groups)
                    data = final.astype(dt)[order].view(U8).reshape(len(f0), size)
                    _scatter(K, firsts, addrs[f0[order]], data)
                result[mask] = old
            if I.tfe:                           # the texel-fail status after the returned value
                write_v(st, w, I.vdata + (2 if is64 else 1), np.zeros(m.shape, U32), m)
            if I.glc:
                if is64:
                    write_v(st, w, I.vdata, (result & U64(0xFFFFFFFF)).astype(U32), m)
                    write_v(st, w, I.vdata + 1, (result >> U64(32)).astype(U32), m)
                else:
                    write_v(st, w, I.vdata, result, m)
        return run
    return factory


# ---- image_get_resinfo --------------------------------------------------------------------------------------
def _resinfo(inst, K):
    I = _Inst(inst, K)
    nout = _nouts(I.dmask, False)

    def run(st, w):
        m = st.exec_mask(w)
        outs = np.zeros((nout, count(st, w), st.lanes), U32)
        for pos, words in _groups(st, w, range(I.srsrc, I.srsrc + 8)):
            gm = np.zeros(m.shape, bool)
            gm[pos] = m[pos]
            if not gm.any():
                continue
            img = _image(words, inst.name, I)
            level = _vgprs(st, w, I.vaddr, 1)[0].astype(I64)[gm]
            levels = img.last_level - img.base_level + 1
            lv = img.base_level + level
            ok = level < levels
            sh = np.clip(lv, 0, 31)
            width = np.maximum(img.width >> sh, 1)
            height = np.ones_like(width) if img.type in (IMG_1D, IMG_1D_ARRAY) else np.maximum(img.height >> sh, 1)
            if img.type == IMG_3D:
                third = np.maximum(img.depth >> sh, 1)
            elif img.type in ARRAY_TYPES:
                third = np.full(width.shape, img.layers)
            else:
                third = np.zeros_like(width)
            chans = np.stack([width, height, third, np.full(width.shape, levels)], axis=1)
            chans = np.where(ok[:, None], chans, 0).astype(U32)
            for i, v in enumerate(_results(chans, I.dmask, False, True)):
                outs[i][gm] = v
        I.write(st, w, list(outs), m)
    return run


def _register_samples():
    from ..isa.families import opcodes
    names = {e[0] for t in ("gfx90a", "gfx942", "gfx1030", "gfx1100") for e in opcodes(t).get("MIMG", {}).values()}
    for n in sorted(names):
        if executable_sample(n):
            register(n, _sample)


_register_samples()
register("image_load", _load(False))
register("image_load_mip", _load(True))
register("image_store", _store(False))
register("image_store_mip", _store(True))
register("image_get_resinfo", _resinfo)
for _op in _ATOMICS + _FLOAT_ATOMICS:
    register(f"image_atomic_{_op}", _atomic(_op))
