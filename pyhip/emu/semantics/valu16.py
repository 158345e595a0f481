"""16-bit VALU (VOP1/VOP2/VOP3 on f16/u16/i16), the GFX9 mixed-width integer ops (24-bit multiply-adds,
16-bit multiply-accumulate into 32 bits) and the VOP3-only legacy/packing conversions.

Sources read the low half of a VGPR, or the high half under VOP3 OP_SEL or an SDWA WORD_1 select; f16
arithmetic rounds once to nearest even (f16 products and sums are exact in float64, so computing there
and rounding to f16 is the IEEE result)."""
from __future__ import annotations

import numpy as np

from .. import fp
from . import register
from .common import F32, F64, I32, I64, U32, U64
from .valu import mad, reg

F16, U16, I16 = np.float16, np.uint16, np.int16
_F16_BELOW_ONE = F16(np.frombuffer(np.array([0x3BFF], U16).tobytes(), F16)[0])


def _h(fn):
    """An f16 op computed in float64 and rounded once to f16."""
    return lambda *a: fn(*(x.astype(F64) for x in a)).astype(F16)


def _sat(x, lo, hi, t):
    return np.clip(np.nan_to_num(x, nan=0), lo, hi).astype(t)


# ---- f16 arithmetic --------------------------------------------------------------------------------------
reg("v_add_f16", ("f16", "f16"), "f16", _h(lambda a, b: a + b))
reg("v_sub_f16", ("f16", "f16"), "f16", _h(lambda a, b: a - b))
reg("v_subrev_f16", ("f16", "f16"), "f16", _h(lambda a, b: b - a))
reg("v_mul_f16", ("f16", "f16"), "f16", _h(lambda a, b: a * b))
reg("v_max_f16", ("f16", "f16"), "f16", fp.fmax_mode)
reg("v_min_f16", ("f16", "f16"), "f16", fp.fmin_mode)
reg("v_ldexp_f16", ("f16", "i32"), "f16", lambda a, b: np.ldexp(a.astype(F64), np.clip(b, -100, 100)).astype(F16))
reg("v_fma_f16 v_fma_legacy_f16", ("f16", "f16", "f16"), "f16", _h(lambda a, b, c: a * b + c))
# MAD: multiply rounded to f16 first, then the add (not fused)
reg("v_mad_f16 v_mad_legacy_f16", ("f16", "f16", "f16"), "f16", mad(F16))
reg("v_max3_f16", ("f16", "f16", "f16"), "f16", lambda a, b, c: fp.fmax(fp.fmax(a, b), c))
reg("v_min3_f16", ("f16", "f16", "f16"), "f16", lambda a, b, c: fp.fmin(fp.fmin(a, b), c))
reg("v_med3_f16", ("f16", "f16", "f16"), "f16", lambda a, b, c: fp.fmax(fp.fmin(a, b), fp.fmin(fp.fmax(a, b), c)))
reg("v_sqrt_f16", ("f16",), "f16", _h(np.sqrt))
reg("v_rsq_f16", ("f16",), "f16", _h(lambda a: 1.0 / np.sqrt(a)))
reg("v_rcp_f16", ("f16",), "f16", _h(lambda a: 1.0 / a))
reg("v_log_f16", ("f16",), "f16", _h(np.log2))
reg("v_exp_f16", ("f16",), "f16", _h(np.exp2))
reg("v_sin_f16", ("f16",), "f16", _h(lambda a: np.sin(a * (2 * np.pi))))
reg("v_cos_f16", ("f16",), "f16", _h(lambda a: np.cos(a * (2 * np.pi))))
reg("v_ceil_f16", ("f16",), "f16", np.ceil)
reg("v_floor_f16", ("f16",), "f16", np.floor)
reg("v_trunc_f16", ("f16",), "f16", np.trunc)
reg("v_rndne_f16", ("f16",), "f16", np.rint)
reg("v_fract_f16", ("f16",), "f16", lambda a: np.where(np.isinf(a), F16(np.nan), np.minimum(a - np.floor(a), _F16_BELOW_ONE)))
reg("v_frexp_mant_f16", ("f16",), "f16", lambda a: np.where(np.isfinite(a), np.frexp(a.astype(F32))[0], a).astype(F16))
reg("v_frexp_exp_i16_f16", ("f16",), "i16", lambda a: np.where(np.isfinite(a), np.frexp(a.astype(F32))[1], 0).astype(I16))
reg("v_cvt_f16_u16", ("u16",), "f16", lambda a: a.astype(F16))
reg("v_cvt_f16_i16", ("i16",), "f16", lambda a: a.astype(F16))
reg("v_cvt_u16_f16", ("f16",), "u16", lambda a: _sat(np.trunc(a.astype(F32)), 0, 65535, U16))
reg("v_cvt_i16_f16", ("f16",), "i16", lambda a: _sat(np.trunc(a.astype(F32)), -32768, 32767, I16))
reg("v_cvt_norm_i16_f16", ("f16",), "i16", lambda a: _sat(np.rint(np.clip(a.astype(F32), -1, 1) * 32767), -32768, 32767, I16))
reg("v_cvt_norm_u16_f16", ("f16",), "u16", lambda a: _sat(np.rint(np.clip(a.astype(F32), 0, 1) * 65535), 0, 65535, U16))
reg("v_div_fixup_f16 v_div_fixup_legacy_f16", ("f16", "f16", "f16"), "f16",
    lambda q, d, n: np.where(np.isnan(d) | np.isnan(n) | (d == 0) | np.isinf(d) | np.isinf(n) | (n == 0),
                             (n.astype(F32) / d.astype(F32)).astype(F16),
                             np.copysign(np.abs(q), np.where(np.signbit(n) ^ np.signbit(d), F16(-1), F16(1)))))

# ---- 16-bit integer ---------------------------------------------------------------------------------------
reg("v_add_u16", ("u16", "u16"), "u16", lambda a, b: a + b)
reg("v_sub_u16", ("u16", "u16"), "u16", lambda a, b: a - b)
reg("v_subrev_u16", ("u16", "u16"), "u16", lambda a, b: b - a)
reg("v_add_i16", ("i16", "i16"), "i16", lambda a, b: a + b)
reg("v_sub_i16", ("i16", "i16"), "i16", lambda a, b: a - b)
reg("v_mul_lo_u16", ("u16", "u16"), "u16", lambda a, b: a * b)
reg("v_lshlrev_b16", ("u16", "u16"), "u16", lambda a, b: b << (a & U16(15)))
reg("v_lshrrev_b16", ("u16", "u16"), "u16", lambda a, b: b >> (a & U16(15)))
reg("v_ashrrev_i16", ("u16", "i16"), "i16", lambda a, b: b >> (a & U16(15)).astype(I16))
reg("v_max_u16", ("u16", "u16"), "u16", np.maximum)
reg("v_min_u16", ("u16", "u16"), "u16", np.minimum)
reg("v_max_i16", ("i16", "i16"), "i16", np.maximum)
reg("v_min_i16", ("i16", "i16"), "i16", np.minimum)
reg("v_mad_u16 v_mad_legacy_u16", ("u16", "u16", "u16"), "u16", lambda a, b, c: a * b + c)
reg("v_mad_i16 v_mad_legacy_i16", ("i16", "i16", "i16"), "i16", lambda a, b, c: a * b + c)
reg("v_max3_u16", ("u16", "u16", "u16"), "u16", lambda a, b, c: np.maximum(np.maximum(a, b), c))
reg("v_min3_u16", ("u16", "u16", "u16"), "u16", lambda a, b, c: np.minimum(np.minimum(a, b), c))
reg("v_med3_u16", ("u16", "u16", "u16"), "u16", lambda a, b, c: np.maximum(np.minimum(a, b), np.minimum(np.maximum(a, b), c)))
reg("v_max3_i16", ("i16", "i16", "i16"), "i16", lambda a, b, c: np.maximum(np.maximum(a, b), c))
reg("v_min3_i16", ("i16", "i16", "i16"), "i16", lambda a, b, c: np.minimum(np.minimum(a, b), c))
reg("v_med3_i16", ("i16", "i16", "i16"), "i16", lambda a, b, c: np.maximum(np.minimum(a, b), np.minimum(np.maximum(a, b), c)))
reg("v_mad_u32_u16", ("u16", "u16", "u32"), "u32", lambda a, b, c: a.astype(U32) * b.astype(U32) + c)
reg("v_mad_i32_i16", ("i16", "i16", "i32"), "i32", lambda a, b, c: (a.astype(I32) * b.astype(I32) + c).astype(I32))


# ---- 24-bit and 32-bit integer extras ----------------------------------------------------------------------
def _i24(a):
    return (a.astype(I32) << 8) >> 8


reg("v_mul_hi_u32_u24", ("u32", "u32"), "u32",
    lambda a, b: (((a & U32(0xFFFFFF)).astype(U64) * (b & U32(0xFFFFFF)).astype(U64)) >> U64(32)).astype(U32))
reg("v_mul_hi_i32_i24", ("u32", "u32"), "i32", lambda a, b: ((_i24(a).astype(I64) * _i24(b).astype(I64)) >> 32).astype(I32))
reg("v_mad_i32_i24", ("u32", "u32", "i32"), "i32", lambda a, b, c: (_i24(a).astype(I64) * _i24(b).astype(I64) + c).astype(I32))
reg("v_add_i32", ("i32", "i32"), "i32", lambda a, b: a + b)
reg("v_sub_i32", ("i32", "i32"), "i32", lambda a, b: a - b)
reg("v_bfm_b32", ("u32", "u32"), "u32",
    lambda a, b: (((U64(1) << (a & U32(31)).astype(U64)) - U64(1)).astype(U32) << (b & U32(31))))


# ---- conversions -------------------------------------------------------------------------------------------
for _i in range(4):
    reg(f"v_cvt_f32_ubyte{_i}", ("u32",), "f32", lambda a, s=_i: ((a >> U32(8 * s)) & U32(0xFF)).astype(F32))
reg("v_cvt_flr_i32_f32", ("f32",), "i32", lambda a: _sat(np.floor(a.astype(F64)), -2147483648, 2147483647, I32))
reg("v_cvt_rpi_i32_f32", ("f32",), "i32", lambda a: _sat(np.floor(a.astype(F64) + 0.5), -2147483648, 2147483647, I32))
reg("v_cvt_off_f32_i4", ("u32",), "f32", lambda a: ((((a & U32(0xF)).astype(I32) ^ 8) - 8).astype(F32) / F32(16)))
reg("v_sat_pk_u8_i16", ("u32",), "u32",
    lambda a: np.clip((a & U32(0xFFFF)).astype(U16).view(I16), 0, 255).astype(U32)
    | (np.clip((a >> U32(16)).astype(U16).view(I16), 0, 255).astype(U32) << U32(8)))
reg("v_cvt_pk_i16_i32", ("i32", "i32"), "u32",
    lambda a, b: np.clip(a, -32768, 32767).astype(I16).view(U16).astype(U32)
    | (np.clip(b, -32768, 32767).astype(I16).view(U16).astype(U32) << U32(16)))
reg("v_cvt_pk_u16_u32", ("u32", "u32"), "u32",
    lambda a, b: np.minimum(a, U32(65535)) | (np.minimum(b, U32(65535)) << U32(16)))


def _norm_i16(x):
    return _sat(np.rint(np.clip(x.astype(F32), -1, 1) * F32(32767)), -32768, 32767, I16).view(U16).astype(U32)


def _norm_u16(x):
    return _sat(np.rint(np.clip(x.astype(F32), 0, 1) * F32(65535)), 0, 65535, U16).astype(U32)


reg("v_cvt_pknorm_i16_f32", ("f32", "f32"), "u32", lambda a, b: _norm_i16(a) | (_norm_i16(b) << U32(16)))
reg("v_cvt_pknorm_u16_f32", ("f32", "f32"), "u32", lambda a, b: _norm_u16(a) | (_norm_u16(b) << U32(16)))
reg("v_cvt_pknorm_i16_f16", ("f16", "f16"), "u32", lambda a, b: _norm_i16(a) | (_norm_i16(b) << U32(16)))
reg("v_cvt_pknorm_u16_f16", ("f16", "f16"), "u32", lambda a, b: _norm_u16(a) | (_norm_u16(b) << U32(16)))
reg("v_pack_b32_f16", ("f16", "f16"), "u32",
    lambda a, b: a.astype(F16).view(U16).astype(U32) | (b.astype(F16).view(U16).astype(U32) << U32(16)))


def _u8(x):
    return _sat(np.rint(x.astype(F64)), 0, 255, U32)


reg("v_cvt_pk_u8_f32", ("f32", "u32", "u32"), "u32",
    lambda a, b, c: (c & ~(U32(0xFF) << (U32(8) * (b & U32(3))))) | (_u8(a) << (U32(8) * (b & U32(3)))))

# ---- legacy f32 (DX9 rules: 0 * anything, Inf and NaN included, is 0) --------------------------------------------


def _mul_legacy(a, b):
    return np.where((a == 0) | (b == 0), F32(0), a * b)


reg("v_mul_legacy_f32", ("f32", "f32"), "f32", _mul_legacy)
reg("v_mad_legacy_f32", ("f32", "f32", "f32"), "f32", lambda a, b, c: _mul_legacy(a, b) + c)
reg("v_exp_legacy_f32", ("f32",), "f32", lambda a: np.exp2(a.astype(F64)).astype(F32))
reg("v_log_legacy_f32", ("f32",), "f32", lambda a: np.log2(a.astype(F64)).astype(F32))


# ---- byte SADs and lerp ----------------------------------------------------------------------------------------
def _bytes(x):
    return [((x >> U32(8 * i)) & U32(0xFF)).astype(I32) for i in range(4)]


def _sad8(a, b, masked=False):
    total = np.zeros(a.shape, I32)
    for x, y in zip(_bytes(a), _bytes(b)):
        d = np.abs(x - y)
        total = total + (np.where(y == 0, 0, d) if masked else d)
    return total.astype(U32)


reg("v_sad_u8", ("u32", "u32", "u32"), "u32", lambda a, b, c: _sad8(a, b) + c)
reg("v_msad_u8", ("u32", "u32", "u32"), "u32", lambda a, b, c: _sad8(a, b, True) + c)
reg("v_sad_hi_u8", ("u32", "u32", "u32"), "u32", lambda a, b, c: (_sad8(a, b) << U32(16)) + c)
reg("v_sad_u16", ("u32", "u32", "u32"), "u32",
    lambda a, b, c: (np.abs((a & U32(0xFFFF)).astype(I32) - (b & U32(0xFFFF)).astype(I32))
                     + np.abs((a >> U32(16)).astype(I32) - (b >> U32(16)).astype(I32))).astype(U32) + c)
reg("v_lerp_u8", ("u32", "u32", "u32"), "u32",
    lambda a, b, c: sum(((((x + y + (z & 1)) >> 1) & 0xFF).astype(U32) << U32(8 * i))
                        for i, (x, y, z) in enumerate(zip(_bytes(a), _bytes(b), _bytes(c)))))


def _qsad(a, b, c, masked):
    """Four byte-SADs of the 32-bit reference ``b`` against the 4-byte windows of the 64-bit ``a``, each
    added to a 16-bit accumulator of ``c`` (saturating)."""
    out = np.zeros(a.shape, U64)
    for i in range(4):
        win = ((a >> U64(8 * i)) & U64(0xFFFFFFFF)).astype(U32)
        acc = ((c >> U64(16 * i)) & U64(0xFFFF)).astype(U32)
        v = np.minimum(_sad8(win, b, masked) + acc, U32(0xFFFF))
        out |= v.astype(U64) << U64(16 * i)
    return out


reg("v_qsad_pk_u16_u8", ("u64", "u32", "u64"), "u64", lambda a, b, c: _qsad(a, b, c, False))
reg("v_mqsad_pk_u16_u8", ("u64", "u32", "u64"), "u64", lambda a, b, c: _qsad(a, b, c, True))


# ---- cube map coordinates (ISA: face id 0..5 for +x,-x,+y,-y,+z,-z; sc, tc and 2 * major axis) ---------------
def _cube_axes(x, y, z):
    ax, ay, az = np.abs(x), np.abs(y), np.abs(z)
    zmaj = (az >= ax) & (az >= ay)
    ymaj = ~zmaj & (ay >= ax)
    return zmaj, ymaj, ~zmaj & ~ymaj


def _cubeid(x, y, z):
    zm, ym, xm = _cube_axes(x, y, z)
    return np.select([zm, ym], [np.where(z < 0, 5, 4), np.where(y < 0, 3, 2)], np.where(x < 0, 1, 0)).astype(F32)


def _cubesc(x, y, z):
    zm, ym, xm = _cube_axes(x, y, z)
    return np.select([zm, ym], [np.where(z < 0, -x, x), x], np.where(x < 0, z, -z)).astype(F32)


def _cubetc(x, y, z):
    zm, ym, xm = _cube_axes(x, y, z)
    return np.select([zm, ym], [-y, np.where(y < 0, -z, z)], -y).astype(F32)


def _cubema(x, y, z):
    zm, ym, xm = _cube_axes(x, y, z)
    return (F32(2) * np.select([zm, ym], [z, y], x)).astype(F32)


reg("v_cubeid_f32", ("f32", "f32", "f32"), "f32", _cubeid)
reg("v_cubesc_f32", ("f32", "f32", "f32"), "f32", _cubesc)
reg("v_cubetc_f32", ("f32", "f32", "f32"), "f32", _cubetc)
reg("v_cubema_f32", ("f32", "f32", "f32"), "f32", _cubema)


# ---- V_TRIG_PREOP_F64: 53-bit segments of 2/pi for large-argument range reduction -------------------------------
def _two_over_pi_bits(nbits: int) -> int:
    """floor(2/pi * 2^nbits), from Machin's formula in integer arithmetic with 64 guard bits."""
    g = nbits + 64
    one = 1 << g

    def arctan_inv(x):
        total, term, k, sign = 0, one // x, 1, 1
        while term:
            total += sign * (term // k)
            term //= x * x
            k += 2
            sign = -sign
        return total
    pi_scaled = 4 * (4 * arctan_inv(5) - arctan_inv(239))          # pi * 2^g
    return (2 << (nbits + g)) // pi_scaled


_TWO_OVER_PI = _two_over_pi_bits(1201)          # bit 1200 is the 2^-1 bit of 2/pi = 0.1010001...b


def _trig_preop(a, b):
    """53 bits of 2/pi starting S1 * 53 bits in (further in for huge S0), as a double scaled by 2^-(53+shift)."""
    e = ((a.view(U64) >> U64(52)) & U64(0x7FF)).astype(np.int64)
    shift = (b & U32(31)).astype(np.int64) * 53 + np.maximum(e - 1077, 0)
    out = np.zeros(a.shape, F64)
    for s in np.unique(shift):                        # a handful of distinct shifts per wave
        k = 1148 - int(s)                              # past the table's end the segment fills with zeros
        seg = ((_TWO_OVER_PI >> k) if k >= 0 else (_TWO_OVER_PI << -k)) & ((1 << 53) - 1)
        out = np.where(shift == s, np.ldexp(F64(seg), -53 - int(s)), out)
    return np.where(e >= 1968, np.ldexp(out, 128), out)


reg("v_trig_preop_f64", ("f64", "u32"), "f64", _trig_preop)


# ---- gfx942 8-bit floats (FNUZ E4M3 "fp8" and E5M2 "bf8") ------------------------------------------------------
def _fp8_codec(values):
    """(decode table, encode fn) for an FNUZ format given its 256 decoded values (0x80 = NaN)."""
    pos = values[:0x80]                                   # codes 0..0x7F: +0 and the positive values, ascending
    top = pos[-1]

    def encode(x, saturate):
        """float32 array → codes: nearest, ties to the even code; NaN → 0x80; beyond the largest value →
        the largest (saturate) or NaN; -0 → 0 (there is no negative zero)."""
        a = np.abs(x.astype(F64))
        hi = np.clip(np.searchsorted(pos, a), 1, 0x7F)
        lo_ = hi - 1
        d_lo, d_hi = a - pos[lo_], pos[hi] - a
        code = np.where((d_hi < d_lo) | ((d_hi == d_lo) & (hi % 2 == 0)), hi, lo_)
        code = np.where(a >= top, 0x7F, code)
        over = (a > top) & ~saturate
        # values past the largest normal round to it while within half an ulp (round-to-nearest behaviour)
        half_ulp = (top - pos[-2]) / 2
        over = over & (a >= top + half_ulp)
        code = np.where(np.signbit(x) & (code != 0), code | 0x80, code)
        return np.where(np.isnan(x) | over, 0x80, code).astype(U32)
    return values, encode


def _fp8(name):
    from .mfma import BF8_VALUES, FP8_VALUES
    return _fp8_codec(FP8_VALUES if name == "fp8" else BF8_VALUES)


def _byte_sel(inst):
    """Which byte (or, for the packed forms, which word) of S0 a conversion reads: SDWA src0_sel or VOP3 OP_SEL."""
    if inst.sdwa is not None:
        sel = inst.sdwa["src0_sel"]
        return {0: 0, 1: 1, 2: 2, 3: 3, 4: 0, 5: 2, 6: 0}.get(sel, 0)
    if inst.encoding == "VOP3":
        return inst.fields.get("opsel", 0) & 3
    return 0


def _cvt_from8(kind, packed):
    def factory(inst, K):
        from ..operands import vreader, write_v
        f = inst.fields
        rd = vreader(f["src0"], inst.literal)
        sel = _byte_sel(inst)
        if packed:
            sel = 2 if (inst.sdwa is not None and inst.sdwa["src0_sel"] == 5) or \
                (inst.encoding == "VOP3" and f.get("opsel", 0) & 1) else 0
        table, _ = _fp8(kind)
        table32 = table.astype(F32)
        d = f["vdst"]

        def run(st, w):
            m = st.exec_mask(w)
            v = rd(st, w)
            for k in range(2 if packed else 1):
                code = (v >> U32(8 * (sel + k))) & U32(0xFF)
                write_v(st, w, d + k, table32[code].view(U32), m)
        return run
    return factory


def _cvt_pk_to8(kind):
    """v_cvt_pk_{fp8,bf8}_f32: D.word[OP_SEL[3]] = {8-bit(S1), 8-bit(S0)}, the other word kept; CLAMP saturates."""
    def factory(inst, K):
        from ..operands import write_v
        from .common import readers
        f = inst.fields
        rds = readers(inst, 2, is_float=True)
        hi = f.get("opsel", 0) >> 3 & 1
        sat = bool(f.get("clamp", 0))
        _, enc = _fp8(kind)
        d = f["vdst"]

        def run(st, w):
            m = st.exec_mask(w)
            a, b = rds[0](st, w).view(F32), rds[1](st, w).view(F32)
            word = enc(a, sat) | (enc(b, sat) << U32(8))
            old = st.vgpr[d, w]
            val = (old & U32(0xFFFF)) | (word << U32(16)) if hi else (old & U32(0xFFFF0000)) | word
            write_v(st, w, d, val, m)
        return run
    return factory


for _k in ("fp8", "bf8"):
    register(f"v_cvt_f32_{_k}", _cvt_from8(_k, False))
    register(f"v_cvt_pk_f32_{_k}", _cvt_from8(_k, True))
    register(f"v_cvt_pk_{_k}_f32", _cvt_pk_to8(_k))


def _pkaccum(inst, K):
    """v_cvt_pkaccum_u8_f32: byte S1[1:0] of D = S0 converted to u8 (rounded, clamped to 0..255), rest of D kept."""
    from ..operands import write_v
    from .common import readers
    rds = readers(inst, 2, kinds=["f32", "u32"], is_float=True)
    d = inst.fields["vdst"]

    def run(st, w):
        m = st.exec_mask(w)
        x, s = rds[0](st, w).view(F32), rds[1](st, w)
        sh = U32(8) * (s & U32(3))
        byte = _u8(x)
        old = st.vgpr[d, w]
        write_v(st, w, d, (old & ~(U32(0xFF) << sh)) | (byte << sh), m)
    return run


register("v_cvt_pkaccum_u8_f32", _pkaccum)


def _mqsad_u32(inst, K):
    """v_mqsad_u32_u8: four masked byte SADs of the 32-bit reference S1 against the byte windows of the
    64-bit S0, each added to the matching dword of the 128-bit S2 accumulator (saturating at 2^32 - 1)."""
    from ..operands import vreader, vreader64, write_v
    from .common import srcs
    c0, c1, c2 = srcs(inst)
    a_r, b_r = vreader64(c0, inst.literal), vreader(c1, inst.literal)
    acc = [vreader(c2 + k if c2 >= 256 else c2, inst.literal) for k in range(4)]
    d = inst.fields["vdst"]

    def run(st, w):
        m = st.exec_mask(w)
        a, b = a_r(st, w), b_r(st, w)
        outs = []
        for i in range(4):
            win = ((a >> U64(8 * i)) & U64(0xFFFFFFFF)).astype(U32)
            total = _sad8(win, b, True).astype(U64) + acc[i](st, w).astype(U64)
            outs.append(np.minimum(total, U64(0xFFFFFFFF)).astype(U32))
        for i, v in enumerate(outs):
            write_v(st, w, d + i, v, m)
    return run


register("v_mqsad_u32_u8", _mqsad_u32)
