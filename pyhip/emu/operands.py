"""Operand readers and writers, specialised once per instruction at compile time.

A reader is ``f(st, w) -> ndarray``: scalar readers give ``(nw,)``, vector readers ``(nw, lanes)`` (64, or 32
for a wave32 batch); 64-bit readers give uint64.  Source encodings are the raw 8/9-bit codes of the ISA (see ``state.py``).
"""
from __future__ import annotations

import struct

import numpy as np

from .memory import PRIVATE_APERTURE, SHARED_APERTURE, APERTURE_SIZE
from .state import EXEC, VCC

U32, U64 = np.uint32, np.uint64
_F32_CONST = {240: 0.5, 241: -0.5, 242: 1.0, 243: -1.0, 244: 2.0, 245: -2.0, 246: 4.0, 247: -4.0}
_INV2PI32, _INV2PI64 = 0x3E22F983, 0x3FC45F306DC9C882
_INV2PI16 = 0x3118


def _f32bits(x: float) -> int:
    return struct.unpack("<I", struct.pack("<f", x))[0]


def _f64bits(x: float) -> int:
    return struct.unpack("<Q", struct.pack("<d", x))[0]


def _f16bits(x: float) -> int:
    return int(np.float16(x).view(np.uint16))


def constant(code: int, lit: int | None, kind: str = "b32") -> int | None:
    """The value of a constant operand code, or None for a register.  ``kind``: b32/f32/f16 (32-bit
    result) or b64/i64/f64 (64-bit result)."""
    wide = kind in ("b64", "i64", "f64", "u64")
    if 128 <= code <= 192:
        return code - 128
    if 193 <= code <= 208:
        v = -(code - 192)
        return v & ((1 << 64) - 1 if wide else 0xFFFFFFFF)
    if 240 <= code <= 248:
        if kind == "f64":
            return _INV2PI64 if code == 248 else _f64bits(_F32_CONST[code])
        if kind == "f16":
            return _INV2PI16 if code == 248 else _f16bits(_F32_CONST[code])
        if code == 248:
            return _INV2PI32
        return _f32bits(_F32_CONST[code])
    if code == 255:
        if lit is None:
            raise NotImplementedError("a literal operand where the encoding has no literal constant")
        if kind == "f64":
            return lit << 32
        return lit
    if code == 235:
        return SHARED_APERTURE >> 32 if not wide else SHARED_APERTURE
    if code == 236:
        return (SHARED_APERTURE + APERTURE_SIZE - 1) >> 32 if not wide else SHARED_APERTURE + APERTURE_SIZE - 1
    if code == 237:
        return PRIVATE_APERTURE >> 32 if not wide else PRIVATE_APERTURE
    if code == 238:
        return (PRIVATE_APERTURE + APERTURE_SIZE - 1) >> 32 if not wide else PRIVATE_APERTURE + APERTURE_SIZE - 1
    if code == 239:
        return 0
    return None


def sreader(code: int, lit: int | None, kind: str = "b32"):
    """Scalar 32-bit source → (nw,) uint32."""
    c = constant(code, lit, kind)
    if c is not None:
        c = U32(c & 0xFFFFFFFF)
        return lambda st, w: np.full(st.sgpr[w, 0].shape, c, dtype=U32)
    if code == 251:    # VCCZ
        return lambda st, w: (st.mask_word(w, VCC) == 0).astype(U32)
    if code == 252:    # EXECZ
        return lambda st, w: (st.mask_word(w, EXEC) == 0).astype(U32)
    if code == 253:    # SCC
        return lambda st, w: st.scc[w].astype(U32)
    if code < 128:
        return lambda st, w: st.sgpr[w, code]
    raise NotImplementedError(f"source operand {code} ({'LDS_DIRECT' if code == 254 else 'reserved'}) is not supported")


def sreader64(code: int, lit: int | None, kind: str = "b64"):
    c = constant(code, lit, kind)
    if c is not None:
        c = U64(c & ((1 << 64) - 1))
        return lambda st, w: np.full(st.sgpr[w, 0].shape, c, dtype=U64)
    if code < 128:
        return lambda st, w: st.sgpr[w, code].astype(U64) | (st.sgpr[w, code + 1].astype(U64) << U64(32))
    raise NotImplementedError(f"64-bit source operand {code} is not supported")


def vreader(code: int, lit: int | None, kind: str = "b32"):
    """Vector 32-bit source (VGPR or broadcast scalar) → (nw, 64) uint32."""
    if code >= 256:
        r = code - 256
        return lambda st, w: st.vgpr[r, w]
    c = constant(code, lit, kind)
    if c is not None:       # the same value in every lane: a read-only broadcast view, no copy
        c = np.array(c & 0xFFFFFFFF, dtype=U32)
        return lambda st, w: np.broadcast_to(c, (len(w), 1) if st is None else (st.n if isinstance(w, slice) else len(w), st.lanes))
    s = sreader(code, lit, kind)
    return lambda st, w: np.repeat(s(st, w)[:, None], st.lanes, axis=1)


def vreader64(code: int, lit: int | None, kind: str = "b64"):
    if code >= 256:
        r = code - 256
        return lambda st, w: st.vgpr[r, w].astype(U64) | (st.vgpr[r + 1, w].astype(U64) << U64(32))
    c = constant(code, lit, kind)
    if c is not None:
        c = np.array(c & ((1 << 64) - 1), dtype=U64)
        return lambda st, w: np.broadcast_to(c, (len(w), 1) if st is None else (st.n if isinstance(w, slice) else len(w), st.lanes))
    s = sreader64(code, lit, kind)
    return lambda st, w: np.repeat(s(st, w)[:, None], st.lanes, axis=1)


def write_v(st, w, r: int, value: np.ndarray, mask: np.ndarray) -> None:
    if mask.all():
        st.vgpr[r, w] = value
        return
    old = st.vgpr[r, w]
    st.vgpr[r, w] = np.where(mask, value.astype(U32, copy=False), old)


def write_v64(st, w, r: int, value: np.ndarray, mask: np.ndarray) -> None:
    v = value.astype(U64, copy=False)
    write_v(st, w, r, (v & U64(0xFFFFFFFF)).astype(U32), mask)
    write_v(st, w, r + 1, (v >> U64(32)).astype(U32), mask)


def write_s(st, w, r: int, value: np.ndarray) -> None:
    if r == 125 or r >= 128:
        return          # null / unsupported destination: discard
    st.sgpr[w, r] = value.astype(U32, copy=False)


def write_s64(st, w, r: int, value: np.ndarray) -> None:
    v = value.astype(U64, copy=False)
    write_s(st, w, r, (v & U64(0xFFFFFFFF)).astype(U32))
    write_s(st, w, r + 1, (v >> U64(32)).astype(U32))


def write_loaded(st, w, reg: int, raw: np.ndarray, size: int, signed: bool, d16_hi: bool, mask: np.ndarray) -> int:
    """Write loaded bytes ``raw`` (nw, 64, ≥size) to VGPRs from ``reg``: dwords as they are, sub-dword
    values zero/sign-extended, or (d16_hi) into the high half keeping the low half.  Returns the next VGPR."""
    if size >= 4:
        words = np.ascontiguousarray(raw[:, :, :size]).view(U32)
        for i in range(size // 4):
            write_v(st, w, reg + i, words[:, :, i], mask)
        return reg + size // 4
    v = np.ascontiguousarray(raw[:, :, :size])
    if size == 1:
        val = v[:, :, 0].astype(np.int8).astype(np.int32).view(U32) if signed else v[:, :, 0].astype(U32)
    else:
        val = v.view(np.int16)[:, :, 0].astype(np.int32).view(U32) if signed else v.view(np.uint16)[:, :, 0].astype(U32)
    if d16_hi == "lo":                      # D16: the low half, the high half kept
        val = (st.vgpr[reg, w] & U32(0xFFFF0000)) | (val & U32(0xFFFF))
    elif d16_hi:
        val = (st.vgpr[reg, w] & U32(0xFFFF)) | (val << U32(16))
    write_v(st, w, reg, val, mask)
    return reg + 1
