"""Typed buffer access: buffer_load/store_format_* (format from the V#: NUM_FORMAT in word 3 bits 14:12,
DATA_FORMAT bits 18:15) and tbuffer_load/store_format_* (format in the instruction), incl. the D16 forms
that pack each component into 16 bits.

Supported data formats are those whose components all have one width (8, 16, 32 bits: 8, 16, 8_8, 32,
16_16, 8_8_8_8, 32_32, 16_16_16_16, 32_32_32, 32_32_32_32); the packed 10/11-bit formats raise a fault.
Components the format lacks read as 0 (the fourth as 1 / 1.0); stores drop the ones it lacks."""
from __future__ import annotations

import numpy as np

from ..memory import GPUFault
from ..operands import write_v
from . import register
from .vmem import address_fn, read_lanes, write_lanes

U8, U16, U32, I32, F16, F32 = np.uint8, np.uint16, np.uint32, np.int32, np.float16, np.float32
# DATA_FORMAT → (bits per component, components)
DFMT = {1: (8, 1), 2: (16, 1), 3: (8, 2), 4: (32, 1), 5: (16, 2), 10: (8, 4), 11: (32, 2), 12: (16, 4),
        13: (32, 3), 14: (32, 4)}
UNORM, SNORM, USCALED, SSCALED, UINT, SINT, FLOAT = 0, 1, 2, 3, 4, 5, 7
_COMPS = {"x": 1, "xy": 2, "xyz": 3, "xyzw": 4}


def _fmt(inst, st, w):
    if inst.encoding == "MTBUF":
        return inst.fields["dfmt"], inst.fields["nfmt"]
    word3 = st.sgpr[w, inst.fields["srsrc"] + 3]
    dfmt, nfmt = (word3 >> U32(15)) & U32(0xF), (word3 >> U32(12)) & U32(7)
    if (dfmt != dfmt[0]).any() or (nfmt != nfmt[0]).any():
        raise GPUFault("buffer format differs between waves of one instruction")
    return int(dfmt[0]), int(nfmt[0])


def _layout(dfmt, nfmt):
    if dfmt not in DFMT:
        raise GPUFault(f"buffer data format {dfmt} is not supported by the emulated device")
    if nfmt == FLOAT and DFMT[dfmt][0] == 8:
        raise GPUFault("8-bit float buffer format is invalid")
    return DFMT[dfmt]


def _decode(raw, bits, nfmt):
    """Raw unsigned component values → 32-bit register values (float bits or integers)."""
    sbits = np.int64(bits)
    signed = raw.astype(np.int64)
    if bits < 32:
        signed = np.where(signed >= 1 << (bits - 1), signed - (1 << bits), signed)
    else:
        signed = raw.astype(U32).view(I32).astype(np.int64)
    if nfmt == UNORM:
        return (raw.astype(np.float64) / ((1 << bits) - 1)).astype(F32).view(U32)
    if nfmt == SNORM:
        return np.maximum(signed / float((1 << (bits - 1)) - 1), -1.0).astype(F32).view(U32)
    if nfmt == USCALED:
        return raw.astype(F32).view(U32)
    if nfmt == SSCALED:
        return signed.astype(F32).view(U32)
    if nfmt == UINT:
        return raw.astype(U32)
    if nfmt == SINT:
        return signed.astype(I32).view(U32)
    if nfmt == FLOAT:
        if bits == 16:
            return raw.astype(U16).view(F16).astype(F32).view(U32)
        return raw.astype(U32)
    raise GPUFault(f"buffer number format {nfmt} is not supported ({sbits}-bit)")


def _encode(v, bits, nfmt):
    """32-bit register values → raw component values of ``bits`` bits."""
    mask = (1 << bits) - 1
    f = v.view(F32).astype(np.float64)
    if nfmt == UNORM:
        r = np.rint(np.clip(np.nan_to_num(f), 0, 1) * mask)
    elif nfmt == SNORM:
        h = (1 << (bits - 1)) - 1
        r = np.rint(np.clip(np.nan_to_num(f), -1, 1) * h)
    elif nfmt in (USCALED, SSCALED):
        r = np.trunc(np.nan_to_num(f))
    elif nfmt in (UINT, SINT):
        return (v.astype(np.uint64) & np.uint64(mask)).astype(np.uint64)
    elif nfmt == FLOAT:
        if bits == 16:
            return v.view(F32).astype(F16).view(U16).astype(np.uint64)
        return v.astype(np.uint64)
    else:
        raise GPUFault(f"buffer number format {nfmt} is not supported")
    return (r.astype(np.int64) & mask).astype(np.uint64)


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
            dfmt, nfmt = _fmt(inst, st, w)
            bits, have = _layout(dfmt, nfmt)
            size = bits * have // 8
            kind, a = addr(st, w)
            raw = read_lanes(K, st, w, kind, a, m, size, 16)
            word = {8: U8, 16: U16, 32: U32}[bits]
            comps = np.ascontiguousarray(raw).view(word)
            one = U32(0x3F800000) if nfmt in (UNORM, SNORM, USCALED, SSCALED, FLOAT) else U32(1)
            vals = [_decode(comps[:, :, i], bits, nfmt) if i < have else
                    np.full(m.shape, one if i == 3 else 0, U32) for i in range(ncomp)]
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
            dfmt, nfmt = _fmt(inst, st, w)
            bits, have = _layout(dfmt, nfmt)
            n = min(ncomp, have)
            if d16_hi:
                vals = _d16_unpack([st.vgpr[src, w] >> U32(16)], nfmt)
            elif d16:
                vals = _d16_unpack([(st.vgpr[src + i // 2, w] >> U32(16 * (i % 2))) & U32(0xFFFF)
                                    for i in range(ncomp)], nfmt)
            else:
                vals = [st.vgpr[src + i, w] for i in range(ncomp)]
            word = {8: U8, 16: U16, 32: U32}[bits]
            comps = np.zeros(m.shape + (n,), word)
            for i in range(n):
                comps[:, :, i] = _encode(vals[i], bits, nfmt).astype(word)
            size = bits * n // 8
            data = comps.view(U8).reshape(m.shape + (size,))
            kind, a = addr(st, w)
            write_lanes(K, st, w, kind, a, m, data)
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
