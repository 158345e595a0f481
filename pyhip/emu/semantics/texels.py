"""Texel and typed-buffer element formats: raw element bytes <-> component values, for every data format of
``image_desc.DATA_FORMATS`` (uniform 8/16/32-bit components and the packed 5/6/10/11-bit ones; X in the low
bits) and the number formats UNORM, SNORM, USCALED, SSCALED, UINT, SINT, FLOAT (16/32-bit) and SRGB.

Reads give float64 component values for float-valued number formats and int64 for UINT/SINT; components
the format lacks read as 0, the fourth as 1.  Writes take 32-bit register values: UNORM/SNORM are clamped,
scaled and rounded to nearest even, USCALED/SSCALED truncated toward zero, UINT/SINT keep the low bits,
FLOAT 16 rounds to nearest even.  Shared by the MIMG semantics and buffer/tbuffer_*_format.
"""
from __future__ import annotations

import numpy as np

from ..image_desc import FLOAT, SINT, SNORM, SRGB, SSCALED, UINT, UNORM, USCALED
from ..memory import GPUFault

U8, U16, U32, U64, I64, F16, F32, F64 = np.uint8, np.uint16, np.uint32, np.uint64, np.int64, np.float16, np.float32, \
    np.float64


def is_integer(num_format: int) -> bool:
    return num_format in (UINT, SINT)


def check_format(comps: tuple, num_format: int) -> None:
    """Raise GPUFault for combinations the emulated device does not read or write."""
    if num_format not in (UNORM, SNORM, USCALED, SSCALED, UINT, SINT, FLOAT, SRGB):
        raise GPUFault(f"number format {num_format} is not supported by the emulated device")
    if num_format == FLOAT and any(b not in (16, 32) for b in comps):
        raise GPUFault(f"float format with {'/'.join(map(str, comps))}-bit components is not supported")
    if num_format == SRGB and comps not in ((8, 8, 8, 8), (8,), (8, 8)):
        raise GPUFault("SRGB needs 8-bit components")


def split(raw: np.ndarray, comps: tuple) -> list[np.ndarray]:
    """Element bytes (n, bpe) uint8 -> raw unsigned component values (n,) uint64, X first."""
    raw = np.ascontiguousarray(raw)
    if len(set(comps)) == 1 and comps[0] in (8, 16, 32):
        words = raw.view({8: U8, 16: U16, 32: U32}[comps[0]])
        return [words[:, i].astype(U64) for i in range(len(comps))]
    total = sum(comps)
    word = raw.view(U16 if total == 16 else U32)[:, 0].astype(U64)
    out, shift = [], 0
    for b in comps:
        out.append((word >> U64(shift)) & U64((1 << b) - 1))
        shift += b
    return out


def join(values: list[np.ndarray], comps: tuple) -> np.ndarray:
    """Raw component values -> element bytes (n, bpe) uint8 (inverse of :func:`split`)."""
    n = len(values[0])
    if len(set(comps)) == 1 and comps[0] in (8, 16, 32):
        dt = {8: U8, 16: U16, 32: U32}[comps[0]]
        return np.stack([v.astype(dt) for v in values], axis=1).view(U8).reshape(n, -1)
    word = np.zeros(n, U64)
    shift = 0
    for v, b in zip(values, comps):
        word |= (v.astype(U64) & U64((1 << b) - 1)) << U64(shift)
        shift += b
    return word.astype(U16 if sum(comps) == 16 else U32).view(U8).reshape(n, -1)


def _signed(v: np.ndarray, bits: int) -> np.ndarray:
    s = v.astype(I64)
    return np.where(s >= 1 << (bits - 1), s - (1 << bits), s)


def _srgb_to_linear(c: np.ndarray) -> np.ndarray:
    return np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)


def decode(raw: np.ndarray, comps: tuple, num_format: int, degamma: bool = False) -> np.ndarray:
    """Element bytes (n, bpe) -> (n, 4) component values: float64, or int64 for UINT/SINT."""
    n = raw.shape[0]
    if num_format == FLOAT and comps in ((32,), (32, 32), (32, 32, 32, 32)):       # the common float layouts
        out = np.zeros((n, 4), F64)
        out[:, 3] = 1
        out[:, :len(comps)] = np.ascontiguousarray(raw).view(F32).reshape(n, len(comps))
        return out
    vals = split(raw, comps)
    integer = is_integer(num_format)
    out = np.zeros((n, 4), I64 if integer else F64)
    out[:, 3] = 1
    for i, (v, b) in enumerate(zip(vals, comps)):
        if num_format in (UNORM, SRGB):
            c = v.astype(F64) / ((1 << b) - 1)
            if (num_format == SRGB or degamma) and i < 3:
                c = _srgb_to_linear(c)
            out[:, i] = c
        elif num_format == SNORM:
            out[:, i] = np.maximum(_signed(v, b) / float((1 << (b - 1)) - 1), -1.0)
        elif num_format == USCALED:
            out[:, i] = v.astype(F64)
        elif num_format == SSCALED:
            out[:, i] = _signed(v, b).astype(F64)
        elif num_format == UINT:
            out[:, i] = v.astype(I64)
        elif num_format == SINT:
            out[:, i] = _signed(v, b)
        elif num_format == FLOAT:
            out[:, i] = v.astype(U16).view(F16).astype(F64) if b == 16 else v.astype(U32).view(F32).astype(F64)
        else:
            raise GPUFault(f"number format {num_format} is not supported by the emulated device")
    return out


def float_registers(raw: np.ndarray, comps: tuple) -> np.ndarray:
    """FLOAT elements (n, bpe) -> (n, 4) register values with no trip through binary64: 32-bit components as
    they are (a signalling NaN stays one), 16-bit ones widened exactly; absent components 0, the fourth 1.0."""
    out = np.zeros((raw.shape[0], 4), U32)
    out[:, 3] = 0x3F800000
    for i, (v, b) in enumerate(zip(split(raw, comps), comps)):
        out[:, i] = v.astype(U16).view(F16).astype(F32).view(U32) if b == 16 else v.astype(U32)
    return out


def to_register(vals: np.ndarray, num_format: int) -> np.ndarray:
    """Component values (from :func:`decode` or filtering) -> 32-bit register values (f32 bits or ints)."""
    if is_integer(num_format):
        return (vals.astype(I64) & 0xFFFFFFFF).astype(U32)
    return vals.astype(F32).view(U32)


def encode(regs: list[np.ndarray], comps: tuple, num_format: int) -> list[np.ndarray]:
    """32-bit register values (one (n,) uint32 per component) -> raw component values for :func:`join`."""
    out = []
    for v, b in zip(regs, comps):
        mask = (1 << b) - 1
        if num_format in (UINT, SINT):
            out.append(v.astype(U64) & U64(mask))
            continue
        f = v.astype(U32).view(F32).astype(F64)
        if num_format == FLOAT:
            out.append((v.view(F32).astype(F16).view(U16) if b == 16 else v).astype(U64))
            continue
        f = np.nan_to_num(f, nan=0.0)
        if num_format in (UNORM, SRGB):
            r = np.rint(np.clip(f, 0.0, 1.0) * mask)
        elif num_format == SNORM:
            h = (1 << (b - 1)) - 1
            r = np.rint(np.clip(f, -1.0, 1.0) * h)
        elif num_format in (USCALED, SSCALED):
            r = np.trunc(np.clip(f, -2.0 ** 62, 2.0 ** 62))
        else:
            raise GPUFault(f"number format {num_format} is not supported for stores")
        out.append((r.astype(I64) & mask).astype(U64))
    return out
