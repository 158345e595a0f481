"""Vector ALU: VOP1, VOP2, VOP3 (incl. 64-bit and carry ops), packed f32, lane ops (readlane, mbcnt)."""
from __future__ import annotations

import contextlib

import numpy as np

from .. import fp
from ..operands import constant, sreader, vreader, write_s, write_v
from ..state import VCC
from . import op, register
from .common import (F32, F64, HALF_KINDS, I32, I64, U32, U64, carry_dst, dst, output_mods, readers, srcs, store32,
                     store64)

WIDTH = {"f32": 32, "u32": 32, "i32": 32, "f16": 32, "b32": 32, "f64": 64, "u64": 64, "i64": 64, "b64": 64,
         "u16": 32, "i16": 32}
FLOAT = {"f32", "f64", "f16"}
ERR = contextlib.nullcontext()   # the engine runs every batch under np.errstate(all="ignore")


def view(a, kind):
    if kind == "f32":
        return a.view(F32)
    if kind == "i32":
        return a.view(I32)
    if kind == "f64":
        return a.view(F64)
    if kind == "i64":
        return a.view(I64)
    if kind == "f16":
        return (a & U32(0xFFFF)).astype(np.uint16).view(np.float16)
    if kind == "u16":
        return (a & U32(0xFFFF)).astype(np.uint16)
    if kind == "i16":
        return (a & U32(0xFFFF)).astype(np.uint16).view(np.int16)
    return a


def bits(x, kind):
    if kind == "f16":
        return np.asarray(x, dtype=np.float16).view(np.uint16).astype(U32)
    if kind in ("u16", "i16"):
        return np.asarray(x).astype(np.uint16 if kind == "u16" else np.int16).view(np.uint16).astype(U32)
    x = np.asarray(x)
    if WIDTH[kind] == 64:
        return x.astype({"f64": F64, "i64": I64}.get(kind, U64), copy=False).view(U64)
    t = {"f32": F32, "i32": I32}.get(kind, U32)
    if x.dtype != t:
        x = x.astype(t)
    return x.view(U32)


def make(kinds_in, kind_out, fn):
    """Factory for a plain VALU op: sources of ``kinds_in`` → ``fn(*typed)`` → destination."""
    n = len(kinds_in)
    is_float = any(k in FLOAT for k in kinds_in)

    def factory(inst, K):
        rds = readers(inst, n, [WIDTH[k] for k in kinds_in], is_float, kinds=list(kinds_in))
        post = output_mods(inst, kind_out in FLOAT)
        store = store64 if WIDTH[kind_out] == 64 else store32
        if kind_out in HALF_KINDS:
            store = half_store(inst, K)

        fin = [k in FLOAT for k in kinds_in]
        mode_aware = getattr(fn, "mode_aware", False)
        call = fn
        if inst.encoding in ("VOP3", "VOP3B") and inst.fields.get("clamp") and inst.name in INT_CLAMP:
            call = _saturating(fn, kind_out)
        fout = kind_out in FLOAT
        # inline constants and literals enter element-wise ops as 0-d values: no full-size pass over a
        # broadcast constant (the result is broadcast to the lanes when every source is a constant)
        consts = {}
        if inst.dpp is None and inst.sdwa is None and (not is_float or inst.name in SIMPLE_FLOAT):
            for i, code in enumerate(srcs(inst)[:n]):
                if constant(code, inst.literal, "b64" if WIDTH[kinds_in[i]] == 64 else "b32") is not None:
                    consts[i] = np.asarray(rds[i](None, [0])[0, 0])
        full_rds = rds
        if consts:
            rds = [(lambda st, w, c=consts[i]: c) if i in consts else rd for i, rd in enumerate(rds)]

        def run(st, w):
            m = st.exec_mask(w)
            with ERR:
                args = [view(rd(st, w), k) for rd, k in zip(rds, kinds_in)]
                mode = st.mode
                if (mode & 0xF0) != 0xF0:          # a denormal mode other than "allow in and out"
                    args = [flush_denormals(a, mode, k, 0) if f else a for a, k, f in zip(args, kinds_in, fin)]
                try:
                    r = call(*args, mode=mode) if mode_aware else call(*args)
                except ValueError:
                    if not consts:
                        raise
                    # an op that builds arrays from an operand's shape: give it full-size operands
                    args = [view(rd(st, w), k) for rd, k in zip(full_rds, kinds_in)]
                    if (mode & 0xF0) != 0xF0:
                        args = [flush_denormals(a, mode, k, 0) if f else a for a, k, f in zip(args, kinds_in, fin)]
                    r = call(*args, mode=mode) if mode_aware else call(*args)
                if post is not None:
                    r = post(r, mode)
                if fout and (mode & 0xF0) != 0xF0:
                    r = flush_denormals(np.asarray(r), mode, kind_out, 1)
            if consts and np.shape(r) != m.shape:
                r = np.broadcast_to(r, m.shape)
            store(inst, st, w, bits(r, kind_out), m)
        return run
    return factory


# integer ops whose VOP3 CLAMP bit saturates the result to the destination type instead of wrapping
INT_CLAMP = frozenset("v_add_u32 v_sub_u32 v_subrev_u32 v_add_i32 v_sub_i32 v_add_u16 v_sub_u16 v_subrev_u16 "
                      "v_add_i16 v_sub_i16 v_add3_u32 v_add_lshl_u32 v_mad_u32_u24 v_mad_i32_i24 v_mad_u32_u16 "
                      "v_mad_i32_i16 v_mad_u16 v_mad_i16 "
                      # the RDNA names of the same operations
                      "v_add_nc_u32 v_sub_nc_u32 v_subrev_nc_u32 v_add_nc_i32 v_sub_nc_i32 v_add_nc_u16 v_sub_nc_u16 "
                      "v_add_nc_i16 v_sub_nc_i16".split())
_INT_RANGE = {"u32": (0, 2 ** 32 - 1), "i32": (-2 ** 31, 2 ** 31 - 1), "u16": (0, 65535), "i16": (-32768, 32767)}


def _saturating(fn, kind_out):
    """The op evaluated on exact (int64) operands, clamped to the destination type's range."""
    lo, hi = _INT_RANGE[kind_out]

    def g(*args):
        wide = [np.asarray(a).astype(np.int64) for a in args]
        return np.clip(fn(*wide), lo, hi)
    return g


# float ops that are plain element-wise numpy (safe with a 0-d constant operand)
SIMPLE_FLOAT = frozenset("v_add_f32 v_sub_f32 v_subrev_f32 v_mul_f32 v_max_f32 v_min_f32 v_add_f64 v_mul_f64 "
                         "v_max_f64 v_min_f64".split())


def flush_denormals(x, mode, kind, out):
    """MODE.FP_DENORM: bits 4/5 allow f32 input/output denormals, bits 6/7 the f64 (and f16) ones; a
    flushed denormal becomes a zero of the same sign."""
    bit = (4 if kind == "f32" else 6) + out
    if mode >> bit & 1:
        return x
    tiny = {"f32": F32(2.0 ** -126), "f16": np.float16(2.0 ** -14)}.get(kind, F64(2.0 ** -1022))
    return np.where((np.abs(x) < tiny) & (x != 0), np.copysign(np.zeros((), x.dtype), x), x)


# 16-bit results: GFX9 zeroes the high half, except the VOP3 ops with OP_SEL, which write the half
# OP_SEL[3] names and keep the other (LLVM: GCNSubtarget::zeroesHigh16BitsOfDest); GFX10+ keeps the other
# half for every 16-bit result (OP_SEL[3] picks the half in VOP3 forms)
OPSEL_DEST = frozenset("v_mad_f16 v_fma_f16 v_div_fixup_f16 v_mad_u16 v_mad_i16 v_add_i16 v_sub_i16 v_max3_f16 "
                       "v_min3_f16 v_med3_f16 v_max3_i16 v_min3_i16 v_med3_i16 v_max3_u16 v_min3_u16 "
                       "v_med3_u16".split())


def half_store(inst, K=None):
    d = dst(inst)
    rdna = K is not None and K.family >= 10 and inst.sdwa is None
    keep = inst.encoding == "VOP3" and inst.name in OPSEL_DEST or rdna
    hi = keep and inst.fields.get("opsel", 0) >> 3 & 1

    def store(inst_, st, w, value, m):
        if keep:
            old = st.vgpr[d, w]
            value = (old & U32(0xFFFF)) | (value << U32(16)) if hi else (old & U32(0xFFFF0000)) | (value & U32(0xFFFF))
        store32(inst_, st, w, value, m)
    return store


def reg(names, kinds_in, kind_out, fn):
    for n in names.split():
        register(n, make(kinds_in, kind_out, fn))


def _sh(b, mask):
    return (b & mask)


# ---- 32-bit float ------------------------------------------------------------------------------------
reg("v_add_f32", ("f32", "f32"), "f32", lambda a, b: a + b)
reg("v_sub_f32", ("f32", "f32"), "f32", lambda a, b: a - b)
reg("v_subrev_f32", ("f32", "f32"), "f32", lambda a, b: b - a)
reg("v_mul_f32", ("f32", "f32"), "f32", lambda a, b: a * b)
reg("v_max_f32", ("f32", "f32"), "f32", fp.fmax_mode)
reg("v_min_f32", ("f32", "f32"), "f32", fp.fmin_mode)
reg("v_fma_f32", ("f32", "f32", "f32"), "f32", fp.fma32)


def mad(ft):
    """V_MAD_F32/F16 (not fused): the product rounded to the format first (and flushed when the mode
    flushes output denormals), then the sum rounded again.  Float64 holds the exact product, and a sum of two
    floats of at most 24 significant bits rounds correctly through float64."""
    bit = 5 if ft is F32 else 7
    tiny = ft(2.0 ** -126) if ft is F32 else ft(2.0 ** -14)

    def fn(a, b, c, mode=0xF0):
        p = (a.astype(F64) * b.astype(F64)).astype(ft)
        if not mode >> bit & 1:
            p = np.where((np.abs(p) < tiny) & (p != 0), np.copysign(np.zeros((), ft), p), p)
        return (p.astype(F64) + c.astype(F64)).astype(ft)
    fn.mode_aware = True
    return fn


reg("v_mad_f32", ("f32", "f32", "f32"), "f32", mad(F32))
reg("v_ldexp_f32", ("f32", "i32"), "f32", lambda a, b: np.ldexp(a, np.clip(b, -300, 300)).astype(F32))
reg("v_max3_f32", ("f32", "f32", "f32"), "f32", lambda a, b, c: fp.fmax(fp.fmax(a, b), c))
reg("v_min3_f32", ("f32", "f32", "f32"), "f32", lambda a, b, c: fp.fmin(fp.fmin(a, b), c))
reg("v_med3_f32", ("f32", "f32", "f32"), "f32", lambda a, b, c: fp.fmax(fp.fmin(a, b), fp.fmin(fp.fmax(a, b), c)))
reg("v_rcp_f32 v_rcp_iflag_f32", ("f32",), "f32", lambda a: F32(1) / a)
reg("v_rsq_f32", ("f32",), "f32", lambda a: (1.0 / np.sqrt(a.astype(F64))).astype(F32))
reg("v_sqrt_f32", ("f32",), "f32", np.sqrt)
reg("v_exp_f32", ("f32",), "f32", lambda a: np.exp2(a.astype(F64)).astype(F32))
reg("v_log_f32", ("f32",), "f32", lambda a: np.log2(a.astype(F64)).astype(F32))
reg("v_trunc_f32", ("f32",), "f32", np.trunc)
reg("v_floor_f32", ("f32",), "f32", np.floor)
reg("v_ceil_f32", ("f32",), "f32", np.ceil)
reg("v_rndne_f32", ("f32",), "f32", np.rint)
reg("v_fract_f32", ("f32",), "f32", lambda a: np.minimum(a - np.floor(a), F32(0.99999994)))
reg("v_sin_f32", ("f32",), "f32", lambda a: np.sin(a.astype(F64) * (2 * np.pi)).astype(F32))
reg("v_cos_f32", ("f32",), "f32", lambda a: np.cos(a.astype(F64) * (2 * np.pi)).astype(F32))
reg("v_frexp_mant_f32", ("f32",), "f32", lambda a: np.where(np.isfinite(a), np.frexp(a)[0], a).astype(F32))
reg("v_frexp_exp_i32_f32", ("f32",), "i32", lambda a: np.where(np.isfinite(a), np.frexp(a)[1], 0).astype(I32))
reg("v_cvt_f32_u32", ("u32",), "f32", lambda a: a.astype(F32))
reg("v_cvt_f32_i32", ("i32",), "f32", lambda a: a.astype(F32))
reg("v_cvt_u32_f32", ("f32",), "u32", lambda a: np.clip(np.nan_to_num(np.trunc(a.astype(np.float64)), nan=0), 0, 4294967295).astype(U32))
reg("v_cvt_i32_f32", ("f32",), "i32", lambda a: np.clip(np.nan_to_num(np.trunc(a.astype(np.float64)), nan=0), -2147483648, 2147483647).astype(I32))
reg("v_cvt_f64_f32", ("f32",), "f64", lambda a: a.astype(F64))
reg("v_cvt_f32_f64", ("f64",), "f32", lambda a: a.astype(F32))
reg("v_cvt_f64_i32", ("i32",), "f64", lambda a: a.astype(F64))
reg("v_cvt_f64_u32", ("u32",), "f64", lambda a: a.astype(F64))
reg("v_cvt_i32_f64", ("f64",), "i32", lambda a: np.clip(np.nan_to_num(np.trunc(a), nan=0), -2147483648, 2147483647).astype(I32))
reg("v_cvt_u32_f64", ("f64",), "u32", lambda a: np.clip(np.nan_to_num(np.trunc(a), nan=0), 0, 4294967295).astype(U32))
reg("v_cvt_f16_f32", ("f32",), "f16", lambda a: a.astype(np.float16))
reg("v_cvt_f32_f16", ("f16",), "f32", lambda a: a.astype(F32))
reg("v_cvt_pkrtz_f16_f32", ("f32", "f32"), "u32",
    lambda a, b: a.astype(np.float16).view(np.uint16).astype(U32) | (b.astype(np.float16).view(np.uint16).astype(U32) << U32(16)))

# ---- 64-bit float --------------------------------------------------------------------------------------
reg("v_add_f64", ("f64", "f64"), "f64", lambda a, b: a + b)
reg("v_mul_f64", ("f64", "f64"), "f64", lambda a, b: a * b)
reg("v_max_f64", ("f64", "f64"), "f64", fp.fmax_mode)
reg("v_min_f64", ("f64", "f64"), "f64", fp.fmin_mode)
reg("v_fma_f64", ("f64", "f64", "f64"), "f64", fp.fma64)
reg("v_ldexp_f64", ("f64", "i32"), "f64", lambda a, b: np.ldexp(a, np.clip(b, -3000, 3000)))
reg("v_rcp_f64", ("f64",), "f64", lambda a: 1.0 / a)
reg("v_rsq_f64", ("f64",), "f64", lambda a: 1.0 / np.sqrt(a))
reg("v_sqrt_f64", ("f64",), "f64", np.sqrt)
reg("v_trunc_f64", ("f64",), "f64", np.trunc)
reg("v_floor_f64", ("f64",), "f64", np.floor)
reg("v_ceil_f64", ("f64",), "f64", np.ceil)
reg("v_rndne_f64", ("f64",), "f64", np.rint)
reg("v_fract_f64", ("f64",), "f64", lambda a: np.minimum(a - np.floor(a), 0.9999999999999999))
reg("v_frexp_mant_f64", ("f64",), "f64", lambda a: np.where(np.isfinite(a), np.frexp(a)[0], a))
reg("v_frexp_exp_i32_f64", ("f64",), "i32", lambda a: np.where(np.isfinite(a), np.frexp(a)[1], 0).astype(I32))

# ---- 32-bit integer -------------------------------------------------------------------------------------
reg("v_add_u32 v_add_nc_u32", ("u32", "u32"), "u32", lambda a, b: a + b)
reg("v_sub_u32", ("u32", "u32"), "u32", lambda a, b: a - b)
reg("v_subrev_u32", ("u32", "u32"), "u32", lambda a, b: b - a)
reg("v_and_b32", ("u32", "u32"), "u32", lambda a, b: a & b)
reg("v_or_b32", ("u32", "u32"), "u32", lambda a, b: a | b)
reg("v_xor_b32", ("u32", "u32"), "u32", lambda a, b: a ^ b)
reg("v_xnor_b32", ("u32", "u32"), "u32", lambda a, b: ~(a ^ b))
reg("v_lshlrev_b32", ("u32", "u32"), "u32", lambda a, b: b << (a & U32(31)))
reg("v_lshrrev_b32", ("u32", "u32"), "u32", lambda a, b: b >> (a & U32(31)))
reg("v_ashrrev_i32", ("u32", "i32"), "i32", lambda a, b: b >> (a & U32(31)).astype(I32))
reg("v_lshl_b32", ("u32", "u32"), "u32", lambda a, b: a << (b & U32(31)))
reg("v_max_u32", ("u32", "u32"), "u32", np.maximum)
reg("v_min_u32", ("u32", "u32"), "u32", np.minimum)
reg("v_max_i32", ("i32", "i32"), "i32", np.maximum)
reg("v_min_i32", ("i32", "i32"), "i32", np.minimum)
reg("v_mul_lo_u32 v_mul_lo_i32", ("u32", "u32"), "u32", lambda a, b: a * b)
reg("v_mul_hi_u32", ("u32", "u32"), "u32", lambda a, b: ((a.astype(U64) * b.astype(U64)) >> U64(32)).astype(U32))
reg("v_mul_hi_i32", ("i32", "i32"), "i32", lambda a, b: ((a.astype(I64) * b.astype(I64)) >> 32).astype(I32))
reg("v_mul_u32_u24", ("u32", "u32"), "u32", lambda a, b: (a & U32(0xFFFFFF)) * (b & U32(0xFFFFFF)))
reg("v_mul_i32_i24", ("u32", "u32"), "i32",
    lambda a, b: (((a.astype(I32) << 8) >> 8).astype(I64) * ((b.astype(I32) << 8) >> 8).astype(I64)).astype(I32))
reg("v_mad_u32_u24", ("u32", "u32", "u32"), "u32", lambda a, b, c: (a & U32(0xFFFFFF)) * (b & U32(0xFFFFFF)) + c)
reg("v_mov_b32", ("u32",), "u32", lambda a: a)
reg("v_not_b32", ("u32",), "u32", lambda a: ~a)
reg("v_bfrev_b32", ("u32",), "u32", lambda a: _bitrev32(a))
reg("v_ffbh_u32", ("u32",), "u32", lambda a: np.where(a == 0, U32(0xFFFFFFFF), U32(31) - _log2(a)))
reg("v_ffbl_b32", ("u32",), "u32", lambda a: np.where(a == 0, U32(0xFFFFFFFF), _log2(a & (~a + U32(1)))))
reg("v_ffbh_i32", ("i32",), "u32", lambda a: _ffbh_i32(a))
reg("v_bcnt_u32_b32", ("u32", "u32"), "u32", lambda a, b: _popcount(a) + b)
reg("v_add3_u32", ("u32", "u32", "u32"), "u32", lambda a, b, c: a + b + c)
reg("v_xad_u32", ("u32", "u32", "u32"), "u32", lambda a, b, c: (a ^ b) + c)
reg("v_lshl_add_u32", ("u32", "u32", "u32"), "u32", lambda a, b, c: (a << (b & U32(31))) + c)
reg("v_add_lshl_u32", ("u32", "u32", "u32"), "u32", lambda a, b, c: (a + b) << (c & U32(31)))
reg("v_lshl_or_b32", ("u32", "u32", "u32"), "u32", lambda a, b, c: (a << (b & U32(31))) | c)
reg("v_and_or_b32", ("u32", "u32", "u32"), "u32", lambda a, b, c: (a & b) | c)
reg("v_or3_b32", ("u32", "u32", "u32"), "u32", lambda a, b, c: a | b | c)
reg("v_bfi_b32", ("u32", "u32", "u32"), "u32", lambda a, b, c: (a & b) | (~a & c))
reg("v_bfe_u32", ("u32", "u32", "u32"), "u32", lambda a, b, c: _bfe_u(a, b, c))
reg("v_bfe_i32", ("u32", "u32", "u32"), "i32", lambda a, b, c: _bfe_i(a, b, c))
reg("v_alignbit_b32", ("u32", "u32", "u32"), "u32",
    lambda a, b, c: (((a.astype(U64) << U64(32)) | b.astype(U64)) >> (c & U32(31)).astype(U64)).astype(U32))
reg("v_alignbyte_b32", ("u32", "u32", "u32"), "u32",
    lambda a, b, c: (((a.astype(U64) << U64(32)) | b.astype(U64)) >> (U64(8) * (c & U32(3)).astype(U64))).astype(U32))
reg("v_max3_u32", ("u32", "u32", "u32"), "u32", lambda a, b, c: np.maximum(np.maximum(a, b), c))
reg("v_min3_u32", ("u32", "u32", "u32"), "u32", lambda a, b, c: np.minimum(np.minimum(a, b), c))
reg("v_max3_i32", ("i32", "i32", "i32"), "i32", lambda a, b, c: np.maximum(np.maximum(a, b), c))
reg("v_min3_i32", ("i32", "i32", "i32"), "i32", lambda a, b, c: np.minimum(np.minimum(a, b), c))
reg("v_med3_i32", ("i32", "i32", "i32"), "i32", lambda a, b, c: np.maximum(np.minimum(a, b), np.minimum(np.maximum(a, b), c)))
reg("v_med3_u32", ("u32", "u32", "u32"), "u32", lambda a, b, c: np.maximum(np.minimum(a, b), np.minimum(np.maximum(a, b), c)))
reg("v_perm_b32", ("u32", "u32", "u32"), "u32", lambda a, b, c: _perm(a, b, c))
reg("v_sad_u32", ("u32", "u32", "u32"), "u32", lambda a, b, c: np.where(a > b, a - b, b - a) + c)

# ---- 64-bit integer -------------------------------------------------------------------------------------
def _shift64(kind, general):
    """64-bit shifts; by an inline-constant amount (the usual index scaling) they run on the two 32-bit
    halves without building 64-bit lanes."""
    def factory(inst, K):
        f = inst.fields
        code = f["src0"]
        if inst.encoding != "VOP3" or not 128 <= code <= 192 or f.get("clamp", 0) or f.get("omod", 0) \
                or f.get("neg", 0) or f.get("abs", 0) or f.get("src1", 0) < 256:
            return general(inst, K)
        k, r, d = code - 128, f["src1"] - 256, f["vdst"]

        def run(st, w):
            m = st.exec_mask(w)
            lo, hi = st.vgpr[r, w], st.vgpr[r + 1, w]
            if kind == "lshl":
                nlo = lo << U32(k) if k < 32 else np.zeros_like(lo)
                nhi = ((hi << U32(k)) | (lo >> U32(32 - k)) if k else hi.copy()) if k < 32 else lo << U32(k - 32)
            else:
                hs = hi if kind == "lshr" else hi.view(I32)
                nlo = ((lo >> U32(k)) | (hi << U32(32 - k)) if k else lo.copy()) if k < 32 else \
                    (hs >> hs.dtype.type(k - 32)).view(U32)
                if kind == "lshr":
                    nhi = hi >> U32(k) if k < 32 else np.zeros_like(hi)
                else:
                    nhi = (hs >> I32(min(k, 31))).view(U32)
            write_v(st, w, d, nlo, m)
            write_v(st, w, d + 1, nhi, m)
        return run
    return factory


register("v_lshlrev_b64", _shift64("lshl", make(("u32", "u64"), "u64", lambda a, b: b << (a & U32(63)).astype(U64))))
register("v_lshrrev_b64", _shift64("lshr", make(("u32", "u64"), "u64", lambda a, b: b >> (a & U32(63)).astype(U64))))
register("v_ashrrev_i64", _shift64("ashr", make(("u32", "i64"), "i64", lambda a, b: b >> (a & U32(63)).astype(I64))))
reg("v_lshl_add_u64", ("u64", "u32", "u64"), "u64", lambda a, b, c: (a << (b & U32(7)).astype(U64)) + c)
reg("v_mov_b64", ("u64",), "u64", lambda a: a)


def _log2(a):
    out = np.zeros(a.shape, dtype=U32)
    v = a.astype(U64)
    for s in (16, 8, 4, 2, 1):
        big = v >= (U64(1) << U64(s))
        out += np.where(big, U32(s), U32(0))
        v = np.where(big, v >> U64(s), v)
    return out


def _ffbh_i32(a):
    x = np.where(a < 0, ~a, a).astype(U32)
    r = np.where(x == 0, U32(0xFFFFFFFF), U32(31) - _log2(np.maximum(x, U32(1))))
    return np.where((a == 0) | (a == -1), U32(0xFFFFFFFF), r)


def _popcount(a):
    a = a.astype(U32)
    a = a - ((a >> U32(1)) & U32(0x55555555))
    a = (a & U32(0x33333333)) + ((a >> U32(2)) & U32(0x33333333))
    return (((a + (a >> U32(4))) & U32(0x0F0F0F0F)) * U32(0x01010101)) >> U32(24)


def _bitrev32(a):
    a = a.astype(U32)
    for s, m in ((1, 0x55555555), (2, 0x33333333), (4, 0x0F0F0F0F), (8, 0x00FF00FF)):
        a = ((a >> U32(s)) & U32(m)) | ((a & U32(m)) << U32(s))
    return (a >> U32(16)) | (a << U32(16))


def _bfe_u(a, b, c):
    off, width = b & U32(31), c & U32(31)
    mask = ((U64(1) << width.astype(U64)) - U64(1)).astype(U32)
    return np.where(width == 0, U32(0), (a >> off) & mask)


def _bfe_i(a, b, c):
    off, width = (b & U32(31)).astype(I64), (c & U32(31)).astype(I64)
    v = (a.astype(U32).astype(I64) >> off) & ((I64(1) << width) - 1)
    sign = (v >> np.maximum(width - 1, 0)) & 1
    v = np.where(sign.astype(bool), v - (I64(1) << width), v)
    return np.where(width == 0, 0, v).astype(I32)


def _perm(a, b, c):
    data = (a.astype(U64) << U64(32)) | b.astype(U64)
    out = np.zeros(a.shape, dtype=U32)
    for i in range(4):
        sel = (c >> U32(8 * i)) & U32(0xFF)
        byte = ((data >> (U64(8) * (sel & U32(7)).astype(U64))) & U64(0xFF)).astype(U32)
        sign_src = np.select([sel == 8, sel == 9, sel == 10, sel == 11],
                             [(data >> U64(15)) & U64(1), (data >> U64(31)) & U64(1),
                              (data >> U64(47)) & U64(1), (data >> U64(63)) & U64(1)], 0).astype(U32)
        byte = np.where(sel < 8, byte, np.where(sel < 12, sign_src * U32(0xFF), np.where(sel == 12, U32(0), U32(0xFF))))
        out |= byte << U32(8 * i)
    return out


# ---- ops with carries and lane masks ---------------------------------------------------------------------
def _carry_factory(kind):
    def factory(inst, K):
        n = 3 if kind in ("addc", "subb", "subbrev") else 2
        rds = readers(inst, 2)
        if n == 3:
            cin_reg = inst.fields["src2"] if inst.encoding == "VOP3" else VCC
        cout = carry_dst(inst)

        def run(st, w):
            m = st.exec_mask(w)
            a = rds[0](st, w)
            b = rds[1](st, w)
            if kind in ("add", "addc"):                 # 32-bit arithmetic, carries from unsigned wrap
                r = a + b
                c = r < b
                if n == 3:
                    cin = st.sgpr_mask(w, cin_reg).view(np.uint8)
                    r += cin
                    c |= r < cin
            else:
                x, y = (a, b) if kind in ("sub", "subb") else (b, a)
                r = x - y
                c = y > x
                if n == 3:
                    cin = st.sgpr_mask(w, cin_reg)
                    c |= cin & (r == 0)
                    r = r - cin.astype(U32)
            store32(inst, st, w, r, m)
            st.set_sgpr_mask(w, cout, c if m.all() else m & c)       # inactive lanes write 0
        return run
    return factory


for _n, _k in (("v_add_co_u32", "add"), ("v_addc_co_u32", "addc"), ("v_sub_co_u32", "sub"),
               ("v_subb_co_u32", "subb"), ("v_subrev_co_u32", "subrev"), ("v_subbrev_co_u32", "subbrev")):
    register(_n, _carry_factory(_k))


@op("v_cndmask_b32")
def _cndmask(inst, K):
    rds = readers(inst, 2)
    sel_reg = inst.fields["src2"] if inst.encoding == "VOP3" else VCC
    f = inst.fields
    absn = (f.get("abs", 0), f.get("neg", 0)) if inst.encoding == "VOP3" else (0, 0)

    def run(st, w):
        m = st.exec_mask(w)
        a, b = rds[0](st, w), rds[1](st, w)
        if absn[0] & 1:
            a = a & U32(0x7FFFFFFF)
        if absn[1] & 1:
            a = a ^ U32(0x80000000)
        if absn[0] & 2:
            b = b & U32(0x7FFFFFFF)
        if absn[1] & 2:
            b = b ^ U32(0x80000000)
        sel = st.sgpr_mask(w, sel_reg)
        store32(inst, st, w, np.where(sel, b, a), m)
    return run


@op("v_fmac_f32", "v_mac_f32")
def _fmac32(inst, K):
    rds = readers(inst, 2, is_float=True)
    d = dst(inst)
    post = output_mods(inst, True)
    mac = mad(F32) if inst.name == "v_mac_f32" else None

    def run(st, w):
        m = st.exec_mask(w)
        with ERR:
            a, b, c = rds[0](st, w).view(F32), rds[1](st, w).view(F32), st.vgpr[d, w].view(F32)
            r = mac(a, b, c, st.mode) if mac is not None else fp.fma32(a, b, c)
            if post is not None:
                r = post(r, st.mode)
        store32(inst, st, w, r.view(U32), m)
    return run


@op("v_fmac_f64")
def _fmac64(inst, K):
    rds = readers(inst, 2, (64, 64), is_float=True)
    d = dst(inst)

    def run(st, w):
        m = st.exec_mask(w)
        acc = (st.vgpr[d, w].astype(U64) | (st.vgpr[d + 1, w].astype(U64) << U64(32))).view(F64)
        with ERR:
            r = fp.fma64(rds[0](st, w).view(F64), rds[1](st, w).view(F64), acc)
        store64(inst, st, w, r.view(U64), m)
    return run


@op("v_madmk_f32", "v_fmamk_f32", "v_madak_f32", "v_fmaak_f32")
def _madk(inst, K):
    rds = readers(inst, 2, is_float=True)
    k = np.array([inst.literal], dtype=U32).view(F32)[0]
    mk = "mk" in inst.name

    def run(st, w):
        m = st.exec_mask(w)
        a, b = rds[0](st, w).view(F32), rds[1](st, w).view(F32)
        with ERR:
            r = fp.fma32(a, np.full_like(a, k), b) if mk else fp.fma32(a, b, np.full_like(a, k))
        store32(inst, st, w, r.view(U32), m)
    return run


@op("v_mad_u64_u32", "v_mad_i64_i32")
def _mad64(inst, K):
    rds = readers(inst, 3, (32, 32, 64))
    signed = "i64" in inst.name
    sdst = inst.fields["sdst"]

    def run(st, w):
        m = st.exec_mask(w)
        a, b, c = rds[0](st, w), rds[1](st, w), rds[2](st, w)
        if signed:
            prod = a.view(I32).astype(I64) * b.view(I32).astype(I64)
            r = prod.view(U64) + c
            carry = np.zeros(a.shape, bool)
        else:
            prod = a.astype(U64) * b.astype(U64)
            r = prod + c
            carry = r < c
        store64(inst, st, w, r, m)
        st.set_sgpr_mask(w, sdst, carry & m) if sdst < 106 or sdst == VCC else None
    return run


# ---- packed f32 (gfx90a/gfx94x) -----------------------------------------------------------------------------
def _pk(fn, nsrc):
    def factory(inst, K):
        f = inst.fields
        codes = srcs(inst)[:nsrc]
        rds = [vreader(c, inst.literal, "b32") for c in codes]
        rds_hi = [vreader(c + 1 if c >= 256 or c < 102 else c, inst.literal, "b32") for c in codes]
        opsel, opsel_hi = f["opsel"], f["opsel_hi"] | (f["opsel_hi2"] << 2)
        neg, neg_hi = f["neg"], f["neg_hi"]
        d = dst(inst)

        def run(st, w):
            m = st.exec_mask(w)
            lo_in, hi_in = [], []
            for i in range(nsrc):
                lo = (rds_hi[i] if opsel >> i & 1 else rds[i])(st, w)
                hi = (rds_hi[i] if opsel_hi >> i & 1 else rds[i])(st, w)
                if neg >> i & 1:
                    lo = lo ^ U32(0x80000000)
                if neg_hi >> i & 1:
                    hi = hi ^ U32(0x80000000)
                lo_in.append(lo.view(F32).copy())
                hi_in.append(hi.view(F32).copy())
            with ERR:
                rl, rh = fn(*lo_in), fn(*hi_in)
            write_v(st, w, d, rl.astype(F32).view(U32), m)
            write_v(st, w, d + 1, rh.astype(F32).view(U32), m)
        return run
    return factory


register("v_pk_mul_f32", _pk(lambda a, b: a * b, 2))
register("v_pk_add_f32", _pk(lambda a, b: a + b, 2))
register("v_pk_fma_f32", _pk(fp.fma32, 3))
register("v_pk_mov_b32", _pk(lambda a, b: np.stack([a, b])[0], 2))


@op("v_pk_mov_b32")
def _pk_mov(inst, K):
    f = inst.fields
    c0, c1 = srcs(inst)[:2]
    r0 = [vreader(c0, None, "b32"), vreader(c0 + 1, None, "b32")]
    r1 = [vreader(c1, None, "b32"), vreader(c1 + 1, None, "b32")]
    opsel = f["opsel"]
    d = dst(inst)

    def run(st, w):
        m = st.exec_mask(w)
        lo = r0[opsel & 1](st, w).copy()          # copies: the destination may overlap the sources
        hi = r1[opsel >> 1 & 1](st, w).copy()
        write_v(st, w, d, lo, m)
        write_v(st, w, d + 1, hi, m)
    return run


# ---- cross-lane -------------------------------------------------------------------------------------------
@op("v_readlane_b32")
def _readlane(inst, K):
    f = inst.fields
    src = f["src0"] - 256
    lane = sreader(f["src1"], inst.literal)
    sd = f["vdst"]

    def run(st, w):
        ln = lane(st, w) & U32(st.lanes - 1)
        write_s(st, w, sd, st.vgpr[src, w][np.arange(len(ln)), ln.astype(np.int64)])
    return run


@op("v_readfirstlane_b32")
def _readfirstlane(inst, K):
    src = inst.fields["src0"]
    rd = vreader(src, inst.literal)
    sd = inst.fields["vdst"]

    def run(st, w):
        ex = st.exec_mask(w)
        first = np.where(ex.any(axis=1), ex.argmax(axis=1), 0)
        write_s(st, w, sd, rd(st, w)[np.arange(len(first)), first])
    return run


@op("v_writelane_b32")
def _writelane(inst, K):
    f = inst.fields
    val = sreader(f["src0"], inst.literal)
    lane = sreader(f["src1"], inst.literal)
    d = f["vdst"]

    def run(st, w):
        ln = (lane(st, w) & U32(st.lanes - 1)).astype(np.int64)
        v = st.vgpr[d, w]
        v[np.arange(len(ln)), ln] = val(st, w)
        st.vgpr[d, w] = v
    return run


@op("v_mbcnt_lo_u32_b32", "v_mbcnt_hi_u32_b32")
def _mbcnt(inst, K):
    rds = readers(inst, 2)
    hi = "hi" in inst.name
    lane = np.arange(K.lanes, dtype=np.uint64)

    def run(st, w):
        m = st.exec_mask(w)
        mask = rds[0](st, w).astype(U64)
        if hi:
            below = np.where(lane >= 32, (U64(1) << (lane - U64(32))) - U64(1), U64(0))
            below = np.where(lane >= 63, U64(0x7FFFFFFF), below)
        else:
            below = np.where(lane >= 32, U64(0xFFFFFFFF), (U64(1) << lane) - U64(1))
        cnt = _popcount((mask & below).astype(U32))
        store32(inst, st, w, cnt + rds[1](st, w), m)
    return run


@op("v_nop", "s_nop")
def _nop(inst, K):
    return lambda st, w: None
