"""RDNA (GFX10.3, GFX11) semantics: the RDNA names of GFX9 operations (one implementation per operation,
registered under every name it has), wave32 EXEC forms of the SALU, cache and scheduling hints, and the
VALU operations RDNA added (xor3, the DX9-zero FMA family, 16-bit logic, max-min, mixed-sign dot products,
packed conversions).  Lane-crossing RDNA operations (permlane, movrel, VOPD) live in ``rdna_lanes``, WMMA
in ``wmma``."""
from __future__ import annotations

import time

import numpy as np

from .. import fp
from ..memory import GPUFault
from ..operands import sreader, sreader64, write_s, write_s64
from ..state import EXEC
from . import SEMANTICS, op, register
from .common import F32, F64, I32, I64, U32, U64, readers, store32
from .packed import _dot_factory, _fdot2
from .valu import make, reg

U16, I16, F16 = np.uint16, np.int16, np.float16
M32 = U64(0xFFFFFFFF)


# ---- GFX10/GFX11 names of GFX9 operations --------------------------------------------------------------
def _memory_aliases() -> dict:
    """GFX11's memory renames (global_load_b32 = global_load_dword, ds_load_b32 = ds_read_b32, ...)."""
    out = {}
    loads = {"b32": "dword", "b64": "dwordx2", "b96": "dwordx3", "b128": "dwordx4", "u8": "ubyte", "i8": "sbyte",
             "u16": "ushort", "i16": "sshort", "d16_b16": "short_d16", "d16_hi_b16": "short_d16_hi",
             "d16_u8": "ubyte_d16", "d16_i8": "sbyte_d16", "d16_hi_u8": "ubyte_d16_hi", "d16_hi_i8": "sbyte_d16_hi"}
    stores = {"b8": "byte", "b16": "short", "b32": "dword", "b64": "dwordx2", "b96": "dwordx3", "b128": "dwordx4",
              "d16_hi_b8": "byte_d16_hi", "d16_hi_b16": "short_d16_hi"}
    atomics = {"swap_b32": "swap", "swap_b64": "swap_x2", "add_u32": "add", "add_u64": "add_x2", "sub_u32": "sub",
               "sub_u64": "sub_x2", "min_i32": "smin", "min_i64": "smin_x2", "min_u32": "umin", "min_u64": "umin_x2",
               "max_i32": "smax", "max_i64": "smax_x2", "max_u32": "umax", "max_u64": "umax_x2", "and_b32": "and",
               "and_b64": "and_x2", "or_b32": "or", "or_b64": "or_x2", "xor_b32": "xor", "xor_b64": "xor_x2",
               "inc_u32": "inc", "inc_u64": "inc_x2", "dec_u32": "dec", "dec_u64": "dec_x2",
               "cmpswap_b32": "cmpswap", "cmpswap_b64": "cmpswap_x2", "cmpswap_f32": "fcmpswap",
               "min_f32": "fmin", "max_f32": "fmax", "csub_u32": "csub"}
    for p in ("global", "flat", "scratch", "buffer"):
        out.update({f"{p}_load_{k}": f"{p}_load_{v}" for k, v in loads.items()})
        out.update({f"{p}_store_{k}": f"{p}_store_{v}" for k, v in stores.items()})
        if p != "scratch":
            out.update({f"{p}_atomic_{k}": f"{p}_atomic_{v}" for k, v in atomics.items()})
    out.update({"global_load_addtid_b32": "global_load_dword_addtid", "global_store_addtid_b32": "global_store_dword_addtid"})
    for n, c in (("x", 1), ("xy", 2), ("xyz", 3), ("xyzw", 4)):
        for p in ("buffer", "tbuffer"):
            out[f"{p}_load_d16_format_{n}"] = f"{p}_load_format_d16_{n}"
            out[f"{p}_store_d16_format_{n}"] = f"{p}_store_format_d16_{n}"
    out.update({"buffer_load_d16_hi_format_x": "buffer_load_format_d16_hi_x",
                "buffer_store_d16_hi_format_x": "buffer_store_format_d16_hi_x"})
    for w in ("b32", "b64", "b128", "b256", "b512"):
        old = {"b32": "dword", "b64": "dwordx2", "b128": "dwordx4", "b256": "dwordx8", "b512": "dwordx16"}[w]
        out[f"s_load_{w}"], out[f"s_buffer_load_{w}"] = f"s_load_{old}", f"s_buffer_load_{old}"
    ds = {"load_b32": "read_b32", "load_b64": "read_b64", "load_b96": "read_b96", "load_b128": "read_b128",
          "load_u8": "read_u8", "load_i8": "read_i8", "load_u16": "read_u16", "load_i16": "read_i16",
          "load_u8_d16": "read_u8_d16", "load_u8_d16_hi": "read_u8_d16_hi", "load_i8_d16": "read_i8_d16",
          "load_i8_d16_hi": "read_i8_d16_hi", "load_u16_d16": "read_u16_d16", "load_u16_d16_hi": "read_u16_d16_hi",
          "load_2addr_b32": "read2_b32", "load_2addr_b64": "read2_b64", "load_2addr_stride64_b32": "read2st64_b32",
          "load_2addr_stride64_b64": "read2st64_b64", "load_addtid_b32": "read_addtid_b32",
          "store_b8": "write_b8", "store_b16": "write_b16", "store_b32": "write_b32", "store_b64": "write_b64",
          "store_b96": "write_b96", "store_b128": "write_b128", "store_b8_d16_hi": "write_b8_d16_hi",
          "store_b16_d16_hi": "write_b16_d16_hi", "store_2addr_b32": "write2_b32", "store_2addr_b64": "write2_b64",
          "store_2addr_stride64_b32": "write2st64_b32", "store_2addr_stride64_b64": "write2st64_b64",
          "store_addtid_b32": "write_addtid_b32", "storexchg_rtn_b32": "wrxchg_rtn_b32",
          "storexchg_rtn_b64": "wrxchg_rtn_b64", "storexchg_2addr_rtn_b32": "wrxchg2_rtn_b32",
          "storexchg_2addr_rtn_b64": "wrxchg2_rtn_b64", "storexchg_2addr_stride64_rtn_b32": "wrxchg2st64_rtn_b32",
          "storexchg_2addr_stride64_rtn_b64": "wrxchg2st64_rtn_b64"}
    out.update({f"ds_{k}": f"ds_{v}" for k, v in ds.items()})
    return out


ALIASES = {
    **_memory_aliases(),
    # carries, no-carry adds (GFX10 names)
    "v_add_co_ci_u32": "v_addc_co_u32", "v_sub_co_ci_u32": "v_subb_co_u32", "v_subrev_co_ci_u32": "v_subbrev_co_u32",
    "v_sub_nc_u32": "v_sub_u32", "v_subrev_nc_u32": "v_subrev_u32", "v_add_nc_i32": "v_add_i32",
    "v_sub_nc_i32": "v_sub_i32", "v_add_nc_u16": "v_add_u16", "v_sub_nc_u16": "v_sub_u16",
    "v_add_nc_i16": "v_add_i16", "v_sub_nc_i16": "v_sub_i16",
    # GFX11 renames
    "v_mul_dx9_zero_f32": "v_mul_legacy_f32", "v_dot2acc_f32_f16": "v_dot2c_f32_f16",
    "v_cvt_pk_rtz_f16_f32": "v_cvt_pkrtz_f16_f32", "v_cvt_pk_norm_i16_f32": "v_cvt_pknorm_i16_f32",
    "v_cvt_pk_norm_u16_f32": "v_cvt_pknorm_u16_f32", "v_cvt_pk_norm_i16_f16": "v_cvt_pknorm_i16_f16",
    "v_cvt_pk_norm_u16_f16": "v_cvt_pknorm_u16_f16", "v_cvt_floor_i32_f32": "v_cvt_flr_i32_f32",
    "v_cvt_nearest_i32_f32": "v_cvt_rpi_i32_f32", "v_clz_i32_u32": "v_ffbh_u32", "v_ctz_i32_b32": "v_ffbl_b32",
    "v_cls_i32": "v_ffbh_i32",
    "s_and_not1_b32": "s_andn2_b32", "s_and_not1_b64": "s_andn2_b64", "s_or_not1_b32": "s_orn2_b32",
    "s_or_not1_b64": "s_orn2_b64", "s_and_not1_saveexec_b64": "s_andn2_saveexec_b64",
    "s_and_not0_saveexec_b64": "s_andn1_saveexec_b64", "s_or_not1_saveexec_b64": "s_orn2_saveexec_b64",
    "s_or_not0_saveexec_b64": "s_orn1_saveexec_b64", "s_and_not1_wrexec_b64": "s_andn2_wrexec_b64",
    "s_and_not0_wrexec_b64": "s_andn1_wrexec_b64", "s_ctz_i32_b32": "s_ff1_i32_b32", "s_ctz_i32_b64": "s_ff1_i32_b64",
    "s_clz_i32_u32": "s_flbit_i32_b32", "s_clz_i32_u64": "s_flbit_i32_b64", "s_cls_i32": "s_flbit_i32",
    "s_cls_i32_i64": "s_flbit_i32_i64",
}


def register_aliases() -> None:
    for new, old in ALIASES.items():
        if old in SEMANTICS and new not in SEMANTICS:
            SEMANTICS[new] = SEMANTICS[old]


# ---- wave32 EXEC forms of the SALU -------------------------------------------------------------------------------
_EXEC_FNS = {"and": lambda a, e: a & e, "or": lambda a, e: a | e, "xor": lambda a, e: a ^ e,
             "andn2": lambda a, e: a & ~e, "orn2": lambda a, e: a | ~e, "nand": lambda a, e: ~(a & e),
             "nor": lambda a, e: ~(a | e), "xnor": lambda a, e: ~(a ^ e), "andn1": lambda a, e: ~a & e,
             "orn1": lambda a, e: ~a | e}
_GFX11_EXEC = {"andn2": "and_not1", "orn2": "or_not1", "andn1": "and_not0", "orn1": "or_not0"}


def _saveexec32(fn):
    """s_*_saveexec_b32: D = EXEC_LO; EXEC_LO = fn(S0, EXEC_LO); SCC = EXEC_LO != 0."""
    def factory(inst, K):
        f = inst.fields
        a_r = sreader(f["ssrc0"], inst.literal)

        def run(st, w):
            ex = st.sgpr[w, EXEC].copy()
            new = fn(a_r(st, w), ex)
            write_s(st, w, f["sdst"], ex)
            st.sgpr[w, EXEC] = new
            st.scc[w] = (new != 0).astype(U32)
        return run
    return factory


def _wrexec32(fn):
    """s_*_wrexec_b32: EXEC_LO = fn(S0, EXEC_LO); D = the new EXEC_LO; SCC = EXEC_LO != 0."""
    def factory(inst, K):
        f = inst.fields
        a_r = sreader(f["ssrc0"], inst.literal)

        def run(st, w):
            new = fn(a_r(st, w), st.sgpr[w, EXEC])
            st.sgpr[w, EXEC] = new
            write_s(st, w, f["sdst"], new)
            st.scc[w] = (new != 0).astype(U32)
        return run
    return factory


for _n, _f in _EXEC_FNS.items():
    register(f"s_{_n}_saveexec_b32", _saveexec32(_f))
    if _n in _GFX11_EXEC:
        register(f"s_{_GFX11_EXEC[_n]}_saveexec_b32", _saveexec32(_f))
for _n in ("andn1", "andn2"):
    register(f"s_{_n}_wrexec_b32", _wrexec32(_EXEC_FNS[_n]))
    register(f"s_{_GFX11_EXEC[_n]}_wrexec_b32", _wrexec32(_EXEC_FNS[_n]))


@op("s_pack_hl_b32_b16")
def _pack_hl(inst, K):
    f = inst.fields
    a_r, b_r = sreader(f["ssrc0"], inst.literal), sreader(f["ssrc1"], inst.literal)
    return lambda st, w: write_s(st, w, f["sdst"], (a_r(st, w) >> U32(16)) | (b_r(st, w) << U32(16)))


@op("s_movrelsd_2_b32")
def _movrelsd2(inst, K):
    """SGPR[D + M0[25:16]] = SGPR[S0 + M0[9:0]]."""
    f = inst.fields
    s, d = f["ssrc0"], f["sdst"]

    def run(st, w):
        m0 = st.sgpr[w, 124].astype(np.int64)
        rows = np.arange(st.sgpr[w].shape[0])
        block = st.sgpr[w]
        block[rows, np.clip(d + (m0 >> 16 & 0x3FF), 0, 127)] = block[rows, np.clip(s + (m0 & 0x3FF), 0, 127)]
        st.sgpr[w] = block
    return run


@op("s_round_mode", "s_denorm_mode")
def _mode_bits(inst, K):
    """MODE[3:0] (rounding) or MODE[7:4] (denormals) = SIMM16[3:0]."""
    v, shift = inst.fields["simm16"] & 0xF, 0 if inst.name == "s_round_mode" else 4

    def run(st, w):
        st.mode = (st.mode & ~(0xF << shift)) | v << shift
    return run


@op("s_clause", "s_delay_alu", "s_inst_prefetch", "s_set_inst_prefetch_distance", "s_ttracedata_imm",
    "s_wait_idle", "s_wait_event", "s_waitcnt_vmcnt", "s_waitcnt_expcnt", "s_waitcnt_lgkmcnt", "s_version",
    "buffer_gl0_inv", "buffer_gl1_inv", "s_gl1_inv", "v_pipeflush")
def _hint(inst, K):
    """Scheduling hints, counters and cache invalidations: the emulator runs each instruction to completion
    and keeps no caches, so these change no state."""
    return lambda st, w: None


@op("s_sendmsg_rtn_b32", "s_sendmsg_rtn_b64")
def _sendmsg_rtn(inst, K):
    """MSG_RTN_GET_REALTIME (131) returns a nanosecond counter; the other messages return 0."""
    f = inst.fields
    msg = f["ssrc0"]
    wide = inst.name.endswith("64")

    def run(st, w):
        v = np.full(st.sgpr[w, 0].shape, time.monotonic_ns() if msg == 131 else 0, dtype=U64)
        (write_s64 if wide else write_s)(st, w, f["sdst"], v if wide else (v & M32).astype(U32))
    return run


@op("v_illegal")
def _illegal(inst, K):
    def run(st, w):
        raise GPUFault("v_illegal executed (illegal instruction)", code=710)
    return run


# ---- VALU additions ----------------------------------------------------------------------------------------------
def _dx9_mul(a, b):
    """DX9 rule: 0 times anything (Inf and NaN too) is +0."""
    return np.where((a == 0) | (b == 0), F32(0), a * b)


def _dx9_fma(a, b, c):
    return np.where((a == 0) | (b == 0), c + F32(0), fp.fma32(a, b, c))


reg("v_xor3_b32", ("u32", "u32", "u32"), "u32", lambda a, b, c: a ^ b ^ c)
reg("v_fma_legacy_f32 v_fma_dx9_zero_f32", ("f32", "f32", "f32"), "f32", _dx9_fma)
reg("v_maxmin_f32", ("f32", "f32", "f32"), "f32", lambda a, b, c: fp.fmin(fp.fmax(a, b), c))
reg("v_minmax_f32", ("f32", "f32", "f32"), "f32", lambda a, b, c: fp.fmax(fp.fmin(a, b), c))
reg("v_maxmin_f16", ("f16", "f16", "f16"), "f16", lambda a, b, c: fp.fmin(fp.fmax(a, b), c))
reg("v_minmax_f16", ("f16", "f16", "f16"), "f16", lambda a, b, c: fp.fmax(fp.fmin(a, b), c))
reg("v_maxmin_i32", ("i32", "i32", "i32"), "i32", lambda a, b, c: np.minimum(np.maximum(a, b), c))
reg("v_minmax_i32", ("i32", "i32", "i32"), "i32", lambda a, b, c: np.maximum(np.minimum(a, b), c))
reg("v_maxmin_u32", ("u32", "u32", "u32"), "u32", lambda a, b, c: np.minimum(np.maximum(a, b), c))
reg("v_minmax_u32", ("u32", "u32", "u32"), "u32", lambda a, b, c: np.maximum(np.minimum(a, b), c))
reg("v_and_b16", ("u16", "u16"), "u16", lambda a, b: a & b)
reg("v_or_b16", ("u16", "u16"), "u16", lambda a, b: a | b)
reg("v_xor_b16", ("u16", "u16"), "u16", lambda a, b: a ^ b)
reg("v_not_b16", ("u16",), "u16", lambda a: ~a)
reg("v_mov_b16", ("u16",), "u16", lambda a: a)
reg("v_cvt_i32_i16", ("i16",), "i32", lambda a: a.astype(I32))
reg("v_cvt_u32_u16", ("u16",), "u32", lambda a: a.astype(U32))
reg("v_cvt_pk_i16_f32", ("f32", "f32"), "u32",
    lambda a, b: _sat16(a, -32768, 32767) | (_sat16(b, -32768, 32767) << U32(16)))
reg("v_cvt_pk_u16_f32", ("f32", "f32"), "u32", lambda a, b: _sat16(a, 0, 65535) | (_sat16(b, 0, 65535) << U32(16)))


def _sat16(x, lo, hi):
    """f32 → 16-bit integer, truncated toward zero and saturated (NaN → 0), as the low 16 bits of a uint32."""
    v = np.clip(np.nan_to_num(np.trunc(x.astype(F64)), nan=0), lo, hi).astype(np.int64)
    return (v & 0xFFFF).astype(U32)


@op("v_fmac_legacy_f32", "v_fmac_dx9_zero_f32")
def _fmac_dx9(inst, K):
    """D = S0 * S1 + D with the DX9 zero rule."""
    rds = readers(inst, 2, is_float=True)
    d = inst.fields["vdst"]

    def run(st, w):
        m = st.exec_mask(w)
        with np.errstate(all="ignore"):
            r = _dx9_fma(rds[0](st, w).view(F32), rds[1](st, w).view(F32), st.vgpr[d, w].view(F32))
        store32(inst, st, w, r.astype(F32).view(U32), m)
    return run


@op("v_cndmask_b16")
def _cndmask16(inst, K):
    """VOP3: D.half = S2 lane bit ? S1.half : S0.half (OP_SEL picks source and destination halves)."""
    rds = readers(inst, 2, kinds=("u16", "u16"))
    f = inst.fields
    sel_reg = f["src2"]
    hi = f["opsel"] >> 3 & 1
    d = f["vdst"]

    def run(st, w):
        m = st.exec_mask(w)
        v = np.where(st.sgpr_mask(w, sel_reg), rds[1](st, w), rds[0](st, w)) & U32(0xFFFF)
        old = st.vgpr[d, w]
        v = (old & U32(0xFFFF)) | (v << U32(16)) if hi else (old & U32(0xFFFF0000)) | v
        store32(inst, st, w, v, m)
    return run


# ---- fp16 accumulate forms -----------------------------------------------------------------------------------------
def _h(x):
    return (x & U32(0xFFFF)).astype(U16).view(F16)


def _half_result(inst, st, w, d, r16, m, hi=0):
    bits = r16.astype(F16).view(U16).astype(U32)
    old = st.vgpr[d, w]
    v = (old & U32(0xFFFF)) | (bits << U32(16)) if hi else (old & U32(0xFFFF0000)) | bits
    store32(inst, st, w, v, m)


@op("v_fmac_f16")
def _fmac16(inst, K):
    """D.f16 = fma(S0, S1, D) (the high half of D kept on GFX10+; VOP3 OP_SEL[3] the half of D)."""
    rds = readers(inst, 2, is_float=True, kinds=("f16", "f16"))
    d = inst.fields["vdst"]
    hi = inst.fields.get("opsel", 0) >> 3 & 1              # VOP3 OP_SEL[3] or a GFX11 true16 .h destination

    def run(st, w):
        m = st.exec_mask(w)
        acc = st.vgpr[d, w] >> U32(16) if hi else st.vgpr[d, w]
        with np.errstate(all="ignore"):
            r = _h(rds[0](st, w)).astype(F64) * _h(rds[1](st, w)).astype(F64) + _h(acc).astype(F64)
        _half_result(inst, st, w, d, r, m, hi)
    return run


@op("v_fmamk_f16", "v_fmaak_f16")
def _fmak16(inst, K):
    rds = readers(inst, 2, is_float=True, kinds=("f16", "f16"))
    k = F64(np.array([inst.literal & 0xFFFF], U16).view(F16)[0])
    mk = "mk" in inst.name
    d = inst.fields["vdst"]

    def run(st, w):
        m = st.exec_mask(w)
        a, b = _h(rds[0](st, w)).astype(F64), _h(rds[1](st, w)).astype(F64)
        with np.errstate(all="ignore"):
            r = a * k + b if mk else a * b + k
        _half_result(inst, st, w, d, r, m)
    return run


# ---- dot products RDNA added ------------------------------------------------------------------------------------------
def _bf16(x):
    return (x.astype(U32) << U32(16)).view(F32).astype(F64)


def _fdot2_bf16(a, b, c):
    """bf16 pairs: exact products summed with the f32 accumulator, one rounding to f32."""
    ah = [_bf16((a >> U32(s)) & U32(0xFFFF)) for s in (0, 16)]
    bh = [_bf16((b >> U32(s)) & U32(0xFFFF)) for s in (0, 16)]
    return (ah[0] * bh[0] + ah[1] * bh[1] + c.view(F32).astype(F64)).astype(F32).view(U32)


register("v_dot2_f32_bf16", _dot_factory(_fdot2_bf16, False, True))


def _to_bf16_bits(x):
    """float64 → bf16 bits (through f32, nearest even)."""
    u = x.astype(F32).view(U32).astype(U64)
    r = ((u + U64(0x7FFF) + ((u >> U64(16)) & U64(1))) >> U64(16)).astype(U32)
    return np.where(np.isnan(x), U32(0x7FC0), r & U32(0xFFFF))


def _dot2_16(bf16):
    """v_dot2_f16_f16 / v_dot2_bf16_bf16 (GFX11 VOP3): D.16 = S0.lo*S1.lo + S0.hi*S1.hi + S2.16, rounded once;
    the other half of D kept (OP_SEL[3] picks the half, OP_SEL[2] the half of S2)."""
    def factory(inst, K):
        rds = readers(inst, 3)
        f = inst.fields
        d, hi, c_hi = f["vdst"], f["opsel"] >> 3 & 1, f["opsel"] >> 2 & 1
        conv = _bf16 if bf16 else (lambda x: _h(x).astype(F64))

        def run(st, w):
            m = st.exec_mask(w)
            a, b, c = rds[0](st, w), rds[1](st, w), rds[2](st, w)
            with np.errstate(all="ignore"):
                r = sum(conv((a >> U32(s)) & U32(0xFFFF)) * conv((b >> U32(s)) & U32(0xFFFF)) for s in (0, 16))
                r = r + conv(((c >> U32(16)) if c_hi else c) & U32(0xFFFF))
            bits = _to_bf16_bits(r) if bf16 else r.astype(F16).view(U16).astype(U32)
            old = st.vgpr[d, w]
            v = (old & U32(0xFFFF)) | (bits << U32(16)) if hi else (old & U32(0xFFFF0000)) | bits
            store32(inst, st, w, v, m)
        return run
    return factory


register("v_dot2_f16_f16", _dot2_16(False))
register("v_dot2_bf16_bf16", _dot2_16(True))


def _idot_iu(bits):
    """v_dot4_i32_iu8 / v_dot8_i32_iu4: NEG_LO[0] / NEG_LO[1] say whether S0 / S1 elements are signed."""
    def factory(inst, K):
        rds = readers(inst, 3)
        sa, sb = inst.fields["neg"] & 1, inst.fields["neg"] >> 1 & 1
        n = 32 // bits

        def elems(x, signed):
            out = []
            for i in range(n):
                v = ((x >> U32(bits * i)) & U32((1 << bits) - 1)).astype(I64)
                out.append(np.where(v >= 1 << (bits - 1), v - (1 << bits), v) if signed else v)
            return out

        def run(st, w):
            m = st.exec_mask(w)
            a, b, c = rds[0](st, w), rds[1](st, w), rds[2](st, w)
            acc = c.view(I32).astype(I64)
            for x, y in zip(elems(a, sa), elems(b, sb)):
                acc = acc + x * y
            if inst.fields["clamp"]:
                acc = np.clip(acc, -2 ** 31, 2 ** 31 - 1)
            store32(inst, st, w, (acc & 0xFFFFFFFF).astype(U32), m)
        return run
    return factory


register("v_dot4_i32_iu8", _idot_iu(8))
register("v_dot8_i32_iu4", _idot_iu(4))


# ---- memory additions --------------------------------------------------------------------------------------------
def _vmem():
    from . import vmem
    return vmem


for _p in ("global", "flat", "buffer"):
    for _o, _k in (("fmin", "fmin"), ("fmax", "fmax"), ("fcmpswap", "fcmpswap")):
        register(f"{_p}_atomic_{_o}", _vmem()._atomic(_k, False))
        register(f"{_p}_atomic_{_o}_x2", _vmem()._atomic(_k, True))
    register(f"{_p}_atomic_csub", _vmem()._atomic("csub", False))
register("global_load_dword_addtid", _vmem().addtid_global(False))
register("global_store_dword_addtid", _vmem().addtid_global(True))
for _n, _sz, _sg in (("b32", 4, False), ("u8", 1, False), ("i8", 1, True), ("u16", 2, False), ("i16", 2, True)):
    register(f"buffer_load_lds_{_n}", _vmem()._load_lds(_sz, _sg))


def _ds_cmpstore():
    """GFX11 ds_cmpstore_*: the new value in DATA0, the compare value in DATA1 (GFX9's ds_cmpst has them the
    other way round)."""
    from .ds import _atomic
    for t, size, name in (("b32", 4, "cmpswap"), ("f32", 4, "fcmpswap"), ("b64", 8, "cmpswap"), ("f64", 8, "fcmpswap")):
        register(f"ds_cmpstore_{t}", _atomic(name, False, False, size))
        register(f"ds_cmpstore_rtn_{t}", _atomic(name, True, False, size))


_ds_cmpstore()
register_aliases()
_ = (make, sreader64, write_s64, _fdot2)
