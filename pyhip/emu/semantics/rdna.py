"""RDNA (GFX10.3, GFX11) semantics: the RDNA names of GFX9 operations (one implementation per operation,
registered under every name it has), the scalar and memory instructions RDNA added, cache and scheduling
hints.  RDNA's ALU instructions (wave32 EXEC forms of the SALU, xor3, the DX9-zero FMA family, 16-bit logic,
max-min, mixed-sign dot products, packed conversions) have no numpy code here: both engines generate them
from their descriptions (pyhip/emu/spec/rdna.py).  Lane-crossing RDNA operations without a description
(movrel, swaprel) live in ``rdna_lanes``, WMMA in ``wmma``."""
from __future__ import annotations

import time

import numpy as np

from ..memory import GPUFault
from ..operands import write_s, write_s64
from .registry import SEMANTICS, op, register

U32, U64 = np.uint32, np.uint64
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
