"""VALU operations on 32- and 64-bit values (VOP1, VOP2, VOP3): their arithmetic, from AMD's Vega/CDNA and
RDNA ISA manuals.  Sources arrive typed with their modifiers applied; see ``operands.valu``."""
from __future__ import annotations

from . import fpops
from .fpops import ldexp
from .lang import (F32, F64, I32, I64, U32, U64, bitrev, ceil, const, ctlz, ctpop, cttz, fbits, floor, fma, fptoint,
                   ftrunc, isinf, isnan, maximum, minimum, rint, select, sqrt)
from .operands import valu

# ---- 32-bit float --------------------------------------------------------------------------------------------------
valu("v_add_f32", ("f32", "f32"), "f32", lambda a, b: a + b)
valu("v_sub_f32", ("f32", "f32"), "f32", lambda a, b: a - b)
valu("v_subrev_f32", ("f32", "f32"), "f32", lambda a, b: b - a)
valu("v_mul_f32", ("f32", "f32"), "f32", lambda a, b: a * b)
valu("v_max_f32", ("f32", "f32"), "f32", fpops.fmax, mode_aware=True)
valu("v_min_f32", ("f32", "f32"), "f32", fpops.fmin, mode_aware=True)
valu("v_fma_f32", ("f32", "f32", "f32"), "f32", fma)


def mad(a, b, c, mode=0):
    """V_MAD_F32/F16 (not fused): the product rounded to the format (and flushed when the mode flushes output
    denormals), then the sum rounded again."""
    return fpops.flush(a * b, mode, True) + c


valu("v_mad_f32", ("f32", "f32", "f32"), "f32", mad, mode_aware=True)
valu("v_ldexp_f32", ("f32", "i32"), "f32", ldexp)
valu("v_max3_f32", ("f32", "f32", "f32"), "f32", lambda a, b, c: fpops.fmax(fpops.fmax(a, b), c))
valu("v_min3_f32", ("f32", "f32", "f32"), "f32", lambda a, b, c: fpops.fmin(fpops.fmin(a, b), c))
valu("v_med3_f32", ("f32", "f32", "f32"), "f32",
     lambda a, b, c: fpops.fmax(fpops.fmin(a, b), fpops.fmin(fpops.fmax(a, b), c)))
valu("v_rcp_f32 v_rcp_iflag_f32", ("f32",), "f32", lambda a: const(1.0, F32) / a)
valu("v_rsq_f32", ("f32",), "f32", lambda a: (const(1.0, F64) / sqrt(a.to(F64))).to(F32))
valu("v_sqrt_f32", ("f32",), "f32", sqrt)
valu("v_exp_f32", ("f32",), "f32", lambda a: fpops.exp2_f32(a))
valu("v_log_f32", ("f32",), "f32", lambda a: fpops.log2_f64(a.to(F64)).to(F32))
valu("v_trunc_f32", ("f32",), "f32", ftrunc)
valu("v_floor_f32", ("f32",), "f32", floor)
valu("v_ceil_f32", ("f32",), "f32", ceil)
valu("v_rndne_f32", ("f32",), "f32", rint)
valu("v_fract_f32", ("f32",), "f32", lambda a: fpops.fract(a, 0x3F7FFFFF))
valu("v_sin_f32", ("f32",), "f32", lambda a: fpops.sin_turns(a.to(F64)).to(F32))
valu("v_cos_f32", ("f32",), "f32", lambda a: fpops.cos_turns(a.to(F64)).to(F32))
valu("v_frexp_mant_f32", ("f32",), "f32", fpops.frexp_mant)
valu("v_frexp_exp_i32_f32", ("f32",), "i32", fpops.frexp_exp)
valu("v_cvt_f32_u32", ("u32",), "f32", lambda a: a.to(F32))
valu("v_cvt_f32_i32", ("i32",), "f32", lambda a: a.to(F32))
valu("v_cvt_u32_f32", ("f32",), "u32", lambda a: fptoint(a, U32))
valu("v_cvt_i32_f32", ("f32",), "i32", lambda a: fptoint(a, I32))
valu("v_cvt_f64_f32", ("f32",), "f64", lambda a: a.to(F64))
valu("v_cvt_f32_f64", ("f64",), "f32", lambda a: a.to(F32))
valu("v_cvt_f64_i32", ("i32",), "f64", lambda a: a.to(F64))
valu("v_cvt_f64_u32", ("u32",), "f64", lambda a: a.to(F64))
valu("v_cvt_i32_f64", ("f64",), "i32", lambda a: fptoint(a, I32))
valu("v_cvt_u32_f64", ("f64",), "u32", lambda a: fptoint(a, U32))
valu("v_cvt_f16_f32", ("f32",), "f16", lambda a: a.to(fpops.F16))
valu("v_cvt_f32_f16", ("f16",), "f32", lambda a: a.to(F32))
valu("v_cvt_pkrtz_f16_f32", ("f32", "f32"), "u32",
     lambda a, b: a.to(fpops.F16).bits().zext(U32) | (b.to(fpops.F16).bits().zext(U32) << 16))

# ---- 64-bit float --------------------------------------------------------------------------------------------------
valu("v_add_f64", ("f64", "f64"), "f64", lambda a, b: a + b)
valu("v_mul_f64", ("f64", "f64"), "f64", lambda a, b: a * b)
valu("v_max_f64", ("f64", "f64"), "f64", fpops.fmax, mode_aware=True)
valu("v_min_f64", ("f64", "f64"), "f64", fpops.fmin, mode_aware=True)
valu("v_fma_f64", ("f64", "f64", "f64"), "f64", fma)
valu("v_ldexp_f64", ("f64", "i32"), "f64", ldexp)
valu("v_rcp_f64", ("f64",), "f64", lambda a: const(1.0, F64) / a)
valu("v_rsq_f64", ("f64",), "f64", lambda a: const(1.0, F64) / sqrt(a))
valu("v_sqrt_f64", ("f64",), "f64", sqrt)
valu("v_trunc_f64", ("f64",), "f64", ftrunc)
valu("v_floor_f64", ("f64",), "f64", floor)
valu("v_ceil_f64", ("f64",), "f64", ceil)
valu("v_rndne_f64", ("f64",), "f64", rint)
valu("v_fract_f64", ("f64",), "f64", lambda a: fpops.fract(a, 0x3FEFFFFFFFFFFFFF))
valu("v_frexp_mant_f64", ("f64",), "f64", fpops.frexp_mant)
valu("v_frexp_exp_i32_f64", ("f64",), "i32", fpops.frexp_exp)


# ---- 32-bit integer ------------------------------------------------------------------------------------------------
def _mulhi(a, b):
    wide = I64 if a.ty.signed else U64
    return ((a.to(wide) * b.to(wide)) >> 32).trunc(a.ty)


def _i24(a):
    return (a.view(I32) << 8) >> 8


valu("v_add_u32 v_add_nc_u32", ("u32", "u32"), "u32", lambda a, b: a + b)
valu("v_sub_u32", ("u32", "u32"), "u32", lambda a, b: a - b)
valu("v_subrev_u32", ("u32", "u32"), "u32", lambda a, b: b - a)
valu("v_and_b32", ("u32", "u32"), "u32", lambda a, b: a & b)
valu("v_or_b32", ("u32", "u32"), "u32", lambda a, b: a | b)
valu("v_xor_b32", ("u32", "u32"), "u32", lambda a, b: a ^ b)
valu("v_xnor_b32", ("u32", "u32"), "u32", lambda a, b: ~(a ^ b))
valu("v_lshlrev_b32", ("u32", "u32"), "u32", lambda a, b: b << (a & 31))
valu("v_lshrrev_b32", ("u32", "u32"), "u32", lambda a, b: b >> (a & 31))
valu("v_ashrrev_i32", ("u32", "i32"), "i32", lambda a, b: b >> (a & 31).view(I32))
valu("v_lshl_b32", ("u32", "u32"), "u32", lambda a, b: a << (b & 31))
valu("v_max_u32", ("u32", "u32"), "u32", maximum)
valu("v_min_u32", ("u32", "u32"), "u32", minimum)
valu("v_max_i32", ("i32", "i32"), "i32", maximum)
valu("v_min_i32", ("i32", "i32"), "i32", minimum)
valu("v_mul_lo_u32 v_mul_lo_i32", ("u32", "u32"), "u32", lambda a, b: a * b)
valu("v_mul_hi_u32", ("u32", "u32"), "u32", _mulhi)
valu("v_mul_hi_i32", ("i32", "i32"), "i32", _mulhi)
valu("v_mul_u32_u24", ("u32", "u32"), "u32", lambda a, b: (a & 0xFFFFFF) * (b & 0xFFFFFF))
valu("v_mul_i32_i24", ("u32", "u32"), "i32", lambda a, b: _i24(a) * _i24(b))
valu("v_mad_u32_u24", ("u32", "u32", "u32"), "u32", lambda a, b, c: (a & 0xFFFFFF) * (b & 0xFFFFFF) + c)
valu("v_mov_b32", ("u32",), "u32", lambda a: a)
valu("v_not_b32", ("u32",), "u32", lambda a: ~a)
valu("v_bfrev_b32", ("u32",), "u32", bitrev)
valu("v_ffbh_u32", ("u32",), "u32", lambda a: select(a.eq(0), const(0xFFFFFFFF, U32), ctlz(a)))
valu("v_ffbl_b32", ("u32",), "u32", lambda a: select(a.eq(0), const(0xFFFFFFFF, U32), cttz(a)))
valu("v_ffbh_i32", ("i32",), "u32",
     lambda a: select(a.eq(0) | a.eq(-1), const(0xFFFFFFFF, U32), ctlz(select(a < 0, ~a, a).view(U32))))
valu("v_bcnt_u32_b32", ("u32", "u32"), "u32", lambda a, b: ctpop(a) + b)
valu("v_add3_u32", ("u32", "u32", "u32"), "u32", lambda a, b, c: a + b + c)
valu("v_xad_u32", ("u32", "u32", "u32"), "u32", lambda a, b, c: (a ^ b) + c)
valu("v_lshl_add_u32", ("u32", "u32", "u32"), "u32", lambda a, b, c: (a << (b & 31)) + c)
valu("v_add_lshl_u32", ("u32", "u32", "u32"), "u32", lambda a, b, c: (a + b) << (c & 31))
valu("v_lshl_or_b32", ("u32", "u32", "u32"), "u32", lambda a, b, c: (a << (b & 31)) | c)
valu("v_and_or_b32", ("u32", "u32", "u32"), "u32", lambda a, b, c: (a & b) | c)
valu("v_or3_b32", ("u32", "u32", "u32"), "u32", lambda a, b, c: a | b | c)
valu("v_bfi_b32", ("u32", "u32", "u32"), "u32", lambda a, b, c: (a & b) | (~a & c))


def _bfe_u(a, b, c):
    off, width = b & 31, c & 31
    mask = ((const(1, U64) << width.zext(U64)) - 1).trunc(U32)
    return select(width.eq(0), const(0, U32), (a >> off) & mask)


def _bfe_i(a, b, c):
    off, width = (b & 31).zext(I64), (c & 31).zext(I64)
    v = (a.zext(I64) >> off) & ((const(1, I64) << width) - 1)
    sign = (v >> select(width > 0, width - 1, const(0, I64))) & 1
    v = select(sign.ne(0), v - (const(1, I64) << width), v)
    return select(width.eq(0), const(0, I32), v.trunc(I32))


def _perm(a, b, c):
    data = (a.zext(U64) << 32) | b.zext(U64)
    out = const(0, U32)
    for i in range(4):
        sel = (c >> (8 * i)) & 0xFF
        byte = ((data >> ((sel & 7).zext(U64) * 8)) & 0xFF).trunc(U32)
        sign = const(0, U32)
        for k, bitpos in ((8, 15), (9, 31), (10, 47), (11, 63)):
            sign = select(sel.eq(k), ((data >> bitpos) & 1).trunc(U32), sign)
        byte = select(sel < 8, byte, select(sel < 12, sign * 0xFF, select(sel.eq(12), const(0, U32), const(0xFF, U32))))
        out = out | (byte << (8 * i))
    return out


valu("v_bfe_u32", ("u32", "u32", "u32"), "u32", _bfe_u)
valu("v_bfe_i32", ("u32", "u32", "u32"), "i32", _bfe_i)
valu("v_alignbit_b32", ("u32", "u32", "u32"), "u32",
     lambda a, b, c: (((a.zext(U64) << 32) | b.zext(U64)) >> (c & 31).zext(U64)).trunc(U32))
valu("v_alignbyte_b32", ("u32", "u32", "u32"), "u32",
     lambda a, b, c: (((a.zext(U64) << 32) | b.zext(U64)) >> ((c & 3).zext(U64) * 8)).trunc(U32))
valu("v_max3_u32", ("u32", "u32", "u32"), "u32", lambda a, b, c: maximum(maximum(a, b), c))
valu("v_min3_u32", ("u32", "u32", "u32"), "u32", lambda a, b, c: minimum(minimum(a, b), c))
valu("v_max3_i32", ("i32", "i32", "i32"), "i32", lambda a, b, c: maximum(maximum(a, b), c))
valu("v_min3_i32", ("i32", "i32", "i32"), "i32", lambda a, b, c: minimum(minimum(a, b), c))
valu("v_med3_i32", ("i32", "i32", "i32"), "i32", lambda a, b, c: maximum(minimum(a, b), minimum(maximum(a, b), c)))
valu("v_med3_u32", ("u32", "u32", "u32"), "u32", lambda a, b, c: maximum(minimum(a, b), minimum(maximum(a, b), c)))
valu("v_perm_b32", ("u32", "u32", "u32"), "u32", _perm)
valu("v_sad_u32", ("u32", "u32", "u32"), "u32", lambda a, b, c: select(a > b, a - b, b - a) + c)

# ---- 64-bit integer ------------------------------------------------------------------------------------------------
valu("v_lshlrev_b64", ("u32", "u64"), "u64", lambda a, b: b << (a & 63).zext(U64))
valu("v_lshrrev_b64", ("u32", "u64"), "u64", lambda a, b: b >> (a & 63).zext(U64))
valu("v_ashrrev_i64", ("u32", "i64"), "i64", lambda a, b: b >> (a & 63).zext(I64))
valu("v_lshl_add_u64", ("u64", "u32", "u64"), "u64", lambda a, b, c: (a << (b & 7).zext(U64)) + c)
valu("v_mov_b64", ("u64",), "u64", lambda a: a)

__all__ = ["mad", "isinf", "isnan", "fbits"]
