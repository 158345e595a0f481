"""Typed buffer access: buffer_load/store_format_* (format from the V#'s word 3 in the layout of the kernel's
generation, ``image_desc.buffer_format``: GFX9 NUM_FORMAT/DATA_FORMAT, GFX10/GFX11 a unified FORMAT) and tbuffer_load/store_format_* (format in the instruction), incl. the D16 forms
that pack each component into 16 bits.

Element formats and their conversions are ``texels``' (shared with the image instructions): uniform
8/16/32-bit components and the packed 10_10_10_2 / 2_10_10_10 formats; the packed 10/11-bit float formats
raise a fault.  Components the format lacks read as 0 (the fourth as 1 / 1.0); stores drop the ones it lacks."""

from __future__ import annotations

import numpy as np

from ..image_desc import DATA_FORMATS, buffer_format
from ..memory import GPUFault
from ..operands import write_v
from . import texels
from .registry import register
from .vmem import address_fn, read_lanes, write_lanes

U8, U16, U32, I32, F16, F32 = np.uint8, np.uint16, np.uint32, np.int32, np.float16, np.float32
UNORM, SNORM, USCALED, SSCALED, UINT, SINT, FLOAT = 0, 1, 2, 3, 4, 5, 7
_COMPS = {"x": 1, "xy": 2, "xyz": 3, "xyzw": 4}
_BUFFER_DFMTS = range(1, 15)        # BUF_DATA_FORMAT 1-14: the same layouts as the image formats


def _fmt(inst, st, w, gen=9):
    if inst.encoding == "MTBUF":
        return inst.fields["dfmt"], inst.fields["nfmt"]
    word3 = st.sgpr[w, inst.fields["srsrc"] + 3]
    if (word3 != word3[0]).any():
        fmts = {buffer_format(gen, int(x)) for x in word3}
        if len(fmts) > 1:
            raise GPUFault("buffer format differs between waves of one instruction")
    return buffer_format(gen, int(word3[0]))


def _layout(dfmt, nfmt):
    """Component widths of a buffer data format (X first)."""
    if dfmt not in _BUFFER_DFMTS or dfmt in (6, 7) and nfmt == FLOAT:
        raise GPUFault(f"buffer data format {dfmt} is not supported by the emulated device")
    comps = DATA_FORMATS[dfmt]
    if nfmt == FLOAT and comps[0] == 8:
        raise GPUFault("8-bit float buffer format is invalid")
    texels.check_format(comps, nfmt)
    return comps


PARTIAL_PACKED = "a partial store to a packed buffer format is not supported"


def layout_words(dfmt: int, nfmt: int) -> tuple[int, int]:
    """A format's element layout as the native handlers read it (native/engine/ops_format.h): word 0 the number
    format | data format << 8 | components << 16 | 1 << 24 (the device reads and writes it), word 1 the
    component widths (X first, 8 bits each); for a format :func:`_layout` refuses, word 0 without bit 24."""
    try:
        comps = _layout(dfmt, nfmt)
    except GPUFault:
        return (nfmt & 0xFF) | (dfmt & 0xFF) << 8, 0
    return nfmt | dfmt << 8 | len(comps) << 16 | 1 << 24, sum(b << 8 * i for i, b in enumerate(comps))


def layout_table(gen: int) -> list[int]:
    """:func:`layout_words` of the 128 format codes of a V#'s word 3 bits 18:12 in generation ``gen``'s layout."""
    out = []
    for code in range(128):
        out.extend(layout_words(*buffer_format(gen, code << 12)))
    return out


def format_fault(dfmt: int, nfmt: int, partial: bool) -> GPUFault:
    """The fault of a format the device does not take (``partial``: a partial store to a packed layout)."""
    if partial:
        return GPUFault(PARTIAL_PACKED)
    try:
        _layout(dfmt, nfmt)
    except GPUFault as exc:
        return exc
    return GPUFault(f"buffer format {dfmt}/{nfmt}")


def _d16_pack(vals, nfmt):
    """D16: each component as 16 bits (f16 for float-valued formats, the low 16 bits of integers)."""
    if nfmt in (UINT, SINT):
        return [(x & U32(0xFFFF)) for x in vals]
    return [x.view(F32).astype(F16).view(U16).astype(U32) for x in vals]


def _d16_unpack(vals, nfmt):
    if nfmt in (UINT, SINT):
        return vals
    return [(x & U32(0xFFFF)).astype(U16).view(F16).astype(F32).view(U32) for x in vals]


def _format_load(ncomp, d16=False, d16_hi=False):
    def factory(inst, K):
        addr = address_fn(inst, K)
        f = inst.fields
        d = f["vdata"] + (K.accum_offset if f.get("acc") else 0)

        def run(st, w):
            m = st.exec_mask(w)
            dfmt, nfmt = _fmt(inst, st, w, K.family)
            comps = _layout(dfmt, nfmt)
            size = sum(comps) // 8
            kind, a = addr(st, w)
            raw = read_lanes(K, st, w, kind, a, m, size, size)
            raw = raw.reshape(-1, size)
            regs = texels.float_registers(raw, comps) if nfmt == FLOAT else \
                texels.to_register(texels.decode(raw, comps, nfmt), nfmt)
            vals = [regs[:, i].reshape(m.shape) for i in range(ncomp)]
            if not d16:
                for i, v in enumerate(vals):
                    write_v(st, w, d + i, v, m)
                return
            halves = _d16_pack(vals, nfmt)
            if d16_hi:
                write_v(st, w, d, (st.vgpr[d, w] & U32(0xFFFF)) | (halves[0] << U32(16)), m)
                return
            for r in range((ncomp + 1) // 2):
                lo = halves[2 * r]
                hi = halves[2 * r + 1] << U32(16) if 2 * r + 1 < ncomp else (st.vgpr[d + r, w] & U32(0xFFFF0000))
                write_v(st, w, d + r, lo | hi, m)
        return run
    return factory


def _format_store(ncomp, d16=False, d16_hi=False):
    def factory(inst, K):
        addr = address_fn(inst, K)
        f = inst.fields
        src = f["vdata"] + (K.accum_offset if f.get("acc") else 0)

        def run(st, w):
            m = st.exec_mask(w)
            dfmt, nfmt = _fmt(inst, st, w, K.family)
            comps = _layout(dfmt, nfmt)
            if d16_hi:
                vals = _d16_unpack([st.vgpr[src, w] >> U32(16)], nfmt)
            elif d16:
                vals = _d16_unpack([(st.vgpr[src + i // 2, w] >> U32(16 * (i % 2))) & U32(0xFFFF)
                                    for i in range(ncomp)], nfmt)
            else:
                vals = [st.vgpr[src + i, w] for i in range(ncomp)]
            if ncomp < len(comps):
                if len(set(comps)) > 1 or comps[0] < 8:
                    raise GPUFault(PARTIAL_PACKED)
                comps = comps[:ncomp]               # uniform components: store the first ncomp only
            flat = [v.reshape(-1) for v in vals[:len(comps)]]
            data = texels.join(texels.encode(flat, comps, nfmt), comps)
            kind, a = addr(st, w)
            write_lanes(K, st, w, kind, a, m, data.reshape(m.shape + (data.shape[-1],)))
        return run
    return factory


for _pfx in ("buffer", "tbuffer"):
    for _s, _n in _COMPS.items():
        register(f"{_pfx}_load_format_{_s}", _format_load(_n))
        register(f"{_pfx}_store_format_{_s}", _format_store(_n))
        register(f"{_pfx}_load_format_d16_{_s}", _format_load(_n, d16=True))
        register(f"{_pfx}_store_format_d16_{_s}", _format_store(_n, d16=True))
register("buffer_load_format_d16_hi_x", _format_load(1, d16=True, d16_hi=True))
register("buffer_store_format_d16_hi_x", _format_store(1, d16=True, d16_hi=True))
