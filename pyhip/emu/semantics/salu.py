"""Scalar ALU and program control: SOP1, SOP2, SOPC, SOPK, SOPP (branches, barrier, end of program)."""
from __future__ import annotations

import contextlib

import numpy as np

from ..operands import sreader, sreader64, write_s, write_s64
from ..state import count, indices, EXEC, VCC
from . import op, register

U32, U64, I32, I64 = np.uint32, np.uint64, np.int32, np.int64
ERR = contextlib.nullcontext()   # the engine runs every batch under np.errstate(all="ignore")


def _s2(fn, width=32, scc=None, signed=False):
    """SOP2 factory: D = fn(a, b); ``scc(a, b, r)`` computes SCC (None: SCC = result != 0 for bit ops)."""
    def factory(inst, K):
        f = inst.fields
        rd = sreader64 if width == 64 else sreader
        a_r, b_r = rd(f["ssrc0"], inst.literal), rd(f["ssrc1"], inst.literal)
        wr = write_s64 if width == 64 else write_s
        d = f["sdst"]

        def run(st, w):
            a, b = a_r(st, w), b_r(st, w)
            with ERR:
                r = fn(a, b)
            if scc is not None:
                st.scc[w] = scc(a, b, r).astype(U32)
            wr(st, w, d, r)
        return run
    return factory


def nz(a, b, r):
    return r != 0


def reg2(names, fn, width=32, scc=nz):
    for n in names.split():
        register(n, _s2(fn, width, scc))


M32, M64 = U64(0xFFFFFFFF), U64(0xFFFFFFFFFFFFFFFF)
reg2("s_add_u32", lambda a, b: a + b, scc=lambda a, b, r: (a.astype(U64) + b) > M32)
reg2("s_sub_u32", lambda a, b: a - b, scc=lambda a, b, r: b > a)
reg2("s_add_i32", lambda a, b: a + b, scc=lambda a, b, r: ((a ^ r) & (b ^ r) & U32(0x80000000)) != 0)
reg2("s_sub_i32", lambda a, b: a - b, scc=lambda a, b, r: ((a ^ b) & (a ^ r) & U32(0x80000000)) != 0)
reg2("s_mul_i32", lambda a, b: a * b, scc=None)
reg2("s_mul_hi_u32", lambda a, b: ((a.astype(U64) * b.astype(U64)) >> U64(32)).astype(U32), scc=None)
reg2("s_mul_hi_i32", lambda a, b: ((a.view(I32).astype(I64) * b.view(I32).astype(I64)) >> 32).astype(I32).view(U32), scc=None)
reg2("s_and_b32", lambda a, b: a & b)
reg2("s_or_b32", lambda a, b: a | b)
reg2("s_xor_b32", lambda a, b: a ^ b)
reg2("s_andn2_b32", lambda a, b: a & ~b)
reg2("s_orn2_b32", lambda a, b: a | ~b)
reg2("s_nand_b32", lambda a, b: ~(a & b))
reg2("s_nor_b32", lambda a, b: ~(a | b))
reg2("s_xnor_b32", lambda a, b: ~(a ^ b))
reg2("s_and_b64", lambda a, b: a & b, 64)
reg2("s_or_b64", lambda a, b: a | b, 64)
reg2("s_xor_b64", lambda a, b: a ^ b, 64)
reg2("s_andn2_b64", lambda a, b: a & ~b, 64)
reg2("s_orn2_b64", lambda a, b: a | ~b, 64)
reg2("s_nand_b64", lambda a, b: ~(a & b), 64)
reg2("s_nor_b64", lambda a, b: ~(a | b), 64)
reg2("s_xnor_b64", lambda a, b: ~(a ^ b), 64)
reg2("s_lshl_b32", lambda a, b: a << (b & U32(31)))
reg2("s_lshr_b32", lambda a, b: a >> (b & U32(31)))
reg2("s_ashr_i32", lambda a, b: (a.view(I32) >> (b & U32(31)).astype(I32)).view(U32))
reg2("s_lshl_b64", lambda a, b: a << (b & U64(63)), 64)
reg2("s_lshr_b64", lambda a, b: a >> (b & U64(63)), 64)
reg2("s_ashr_i64", lambda a, b: (a.view(I64) >> (b & U64(63)).astype(I64)).view(U64), 64)
reg2("s_min_u32", np.minimum, scc=lambda a, b, r: a < b)
reg2("s_max_u32", np.maximum, scc=lambda a, b, r: a > b)
reg2("s_min_i32", lambda a, b: np.minimum(a.view(I32), b.view(I32)).view(U32), scc=lambda a, b, r: a.view(I32) < b.view(I32))
reg2("s_max_i32", lambda a, b: np.maximum(a.view(I32), b.view(I32)).view(U32), scc=lambda a, b, r: a.view(I32) > b.view(I32))
reg2("s_bfm_b32", lambda a, b: (((U64(1) << (a & U32(31)).astype(U64)) - U64(1)) << (b & U32(31)).astype(U64)).astype(U32), scc=None)
reg2("s_bfe_u32", lambda a, b: np.where((b >> U32(16)) & U32(0x7F) == 0, U32(0),
                                       (a >> (b & U32(31))) & ((U64(1) << ((b >> U32(16)) & U32(0x7F)).astype(U64)) - U64(1)).astype(U32)))
reg2("s_lshl1_add_u32", lambda a, b: (a << U32(1)) + b, scc=lambda a, b, r: ((a.astype(U64) << U64(1)) + b) > M32)
reg2("s_lshl2_add_u32", lambda a, b: (a << U32(2)) + b, scc=lambda a, b, r: ((a.astype(U64) << U64(2)) + b) > M32)
reg2("s_lshl3_add_u32", lambda a, b: (a << U32(3)) + b, scc=lambda a, b, r: ((a.astype(U64) << U64(3)) + b) > M32)
reg2("s_lshl4_add_u32", lambda a, b: (a << U32(4)) + b, scc=lambda a, b, r: ((a.astype(U64) << U64(4)) + b) > M32)
reg2("s_pack_ll_b32_b16", lambda a, b: (a & U32(0xFFFF)) | (b << U32(16)), scc=None)
reg2("s_pack_lh_b32_b16", lambda a, b: (a & U32(0xFFFF)) | (b & U32(0xFFFF0000)), scc=None)
reg2("s_pack_hh_b32_b16", lambda a, b: (a >> U32(16)) | (b & U32(0xFFFF0000)), scc=None)
reg2("s_absdiff_i32", lambda a, b: np.abs(a.view(I32).astype(I64) - b.view(I32)).astype(U32))


@op("s_addc_u32", "s_subb_u32")
def _carry(inst, K):
    f = inst.fields
    a_r, b_r = sreader(f["ssrc0"], inst.literal), sreader(f["ssrc1"], inst.literal)
    add = inst.name == "s_addc_u32"

    def run(st, w):
        a, b, c = a_r(st, w).astype(U64), b_r(st, w).astype(U64), st.scc[w].astype(U64)
        if add:
            r = a + b + c
            st.scc[w] = (r > M32).astype(U32)
        else:
            r = a - b - c
            st.scc[w] = ((b + c) > a).astype(U32)
        write_s(st, w, f["sdst"], (r & M32).astype(U32))
    return run


@op("s_cselect_b32", "s_cselect_b64")
def _cselect(inst, K):
    f = inst.fields
    wide = inst.name.endswith("64")
    rd = sreader64 if wide else sreader
    a_r, b_r = rd(f["ssrc0"], inst.literal), rd(f["ssrc1"], inst.literal)

    def run(st, w):
        r = np.where(st.scc[w] != 0, a_r(st, w), b_r(st, w))
        (write_s64 if wide else write_s)(st, w, f["sdst"], r)
    return run


# ---- SOP1 -------------------------------------------------------------------------------------------------
def _s1(fn, width=32, scc=None, out_width=None):
    def factory(inst, K):
        f = inst.fields
        a_r = (sreader64 if width == 64 else sreader)(f["ssrc0"], inst.literal)
        ow = out_width or width
        wr = write_s64 if ow == 64 else write_s

        def run(st, w):
            a = a_r(st, w)
            r = fn(a)
            if scc is not None:
                st.scc[w] = scc(a, r).astype(U32)
            wr(st, w, f["sdst"], r)
        return run
    return factory


def _ff1(a, width):
    out = np.full(a.shape, 0xFFFFFFFF, dtype=U32)
    for i in range(width - 1, -1, -1):
        out = np.where((a >> a.dtype.type(i)) & a.dtype.type(1) != 0, U32(i), out)
    return out


def _flbit(a, width):
    out = np.full(a.shape, 0xFFFFFFFF, dtype=U32)
    for i in range(width):
        out = np.where((a >> a.dtype.type(i)) & a.dtype.type(1) != 0, U32(width - 1 - i), out)
    return out


def _bcnt(a, width):
    return np.array([bin(int(x)).count("1") for x in a], dtype=U32) if a.size else a.astype(U32)


register("s_mov_b32", _s1(lambda a: a))
register("s_mov_b64", _s1(lambda a: a, 64))
register("s_not_b32", _s1(lambda a: ~a, scc=lambda a, r: r != 0))
register("s_not_b64", _s1(lambda a: ~a, 64, scc=lambda a, r: r != 0))
register("s_brev_b32", _s1(lambda a: np.array([int(f"{int(x):032b}"[::-1], 2) for x in a], dtype=U32)))
register("s_ff1_i32_b32", _s1(lambda a: _ff1(a, 32)))
register("s_ff1_i32_b64", _s1(lambda a: _ff1(a, 64), 64, out_width=32))
register("s_flbit_i32_b32", _s1(lambda a: _flbit(a, 32)))
register("s_flbit_i32_b64", _s1(lambda a: _flbit(a, 64), 64, out_width=32))
register("s_bcnt1_i32_b32", _s1(lambda a: _bcnt(a, 32), scc=lambda a, r: r != 0))
register("s_bcnt1_i32_b64", _s1(lambda a: _bcnt(a, 64), 64, scc=lambda a, r: r != 0, out_width=32))
register("s_sext_i32_i8", _s1(lambda a: a.astype(np.int8).astype(I32).view(U32)))
register("s_sext_i32_i16", _s1(lambda a: a.astype(np.int16).astype(I32).view(U32)))
register("s_abs_i32", _s1(lambda a: np.abs(a.view(I32)).view(U32), scc=lambda a, r: r != 0))


@op("s_cmov_b32", "s_cmov_b64")
def _cmov(inst, K):
    f = inst.fields
    wide = inst.name.endswith("64")
    a_r = (sreader64 if wide else sreader)(f["ssrc0"], inst.literal)
    old_r = (sreader64 if wide else sreader)(f["sdst"], None)

    def run(st, w):
        r = np.where(st.scc[w] != 0, a_r(st, w), old_r(st, w))
        (write_s64 if wide else write_s)(st, w, f["sdst"], r)
    return run


def _saveexec(fn):
    def factory(inst, K):
        f = inst.fields
        a_r = sreader64(f["ssrc0"], inst.literal)

        def run(st, w):
            ex = st.sgpr[w, EXEC].astype(U64) | (st.sgpr[w, EXEC + 1].astype(U64) << U64(32))
            a = a_r(st, w)
            new = fn(a, ex)
            write_s64(st, w, f["sdst"], ex)
            st.sgpr[w, EXEC] = (new & M32).astype(U32)
            st.sgpr[w, EXEC + 1] = (new >> U64(32)).astype(U32)
            st.scc[w] = (new != 0).astype(U32)
        return run
    return factory


for _n, _f in (("and", lambda a, e: a & e), ("or", lambda a, e: a | e), ("xor", lambda a, e: a ^ e),
               ("andn2", lambda a, e: a & ~e), ("orn2", lambda a, e: a | ~e), ("nand", lambda a, e: ~(a & e)),
               ("nor", lambda a, e: ~(a | e)), ("xnor", lambda a, e: ~(a ^ e)),
               ("andn1", lambda a, e: ~a & e), ("orn1", lambda a, e: ~a | e)):
    register(f"s_{_n}_saveexec_b64", _saveexec(_f))


@op("s_getpc_b64")
def _getpc(inst, K):
    d = inst.fields["sdst"]
    return lambda st, w: write_s64(st, w, d, st.pc[w].astype(U64))   # pc already points past this instruction


@op("s_setpc_b64")
def _setpc(inst, K):
    a_r = sreader64(inst.fields["ssrc0"], None)

    def run(st, w):
        st.pc[w] = a_r(st, w).astype(np.int64)
    return run


@op("s_swappc_b64")
def _swappc(inst, K):
    f = inst.fields
    a_r = sreader64(f["ssrc0"], None)

    def run(st, w):
        target = a_r(st, w).astype(np.int64)
        write_s64(st, w, f["sdst"], st.pc[w].astype(U64))
        st.pc[w] = target
    return run


# ---- SOPC ---------------------------------------------------------------------------------------------------
def _sc(fn, width=32, signed=False):
    def factory(inst, K):
        f = inst.fields
        rd = sreader64 if width == 64 else sreader
        a_r, b_r = rd(f["ssrc0"], inst.literal), rd(f["ssrc1"], inst.literal)

        def run(st, w):
            a, b = a_r(st, w), b_r(st, w)
            if signed:
                a, b = a.view(I32), b.view(I32)
            st.scc[w] = fn(a, b).astype(U32)
        return run
    return factory


for _o, _fn in (("eq", np.equal), ("lg", np.not_equal), ("gt", np.greater), ("ge", np.greater_equal),
                ("lt", np.less), ("le", np.less_equal)):
    register(f"s_cmp_{_o}_i32", _sc(_fn, signed=True))
    register(f"s_cmp_{_o}_u32", _sc(_fn))
register("s_cmp_eq_u64", _sc(np.equal, 64))
register("s_cmp_lg_u64", _sc(np.not_equal, 64))
register("s_bitcmp0_b32", _sc(lambda a, b: ((a >> (b & U32(31))) & U32(1)) == 0))
register("s_bitcmp1_b32", _sc(lambda a, b: ((a >> (b & U32(31))) & U32(1)) == 1))
register("s_bitcmp0_b64", _sc(lambda a, b: ((a >> (b & U64(63))) & U64(1)) == 0, 64))
register("s_bitcmp1_b64", _sc(lambda a, b: ((a >> (b & U64(63))) & U64(1)) == 1, 64))


# ---- SOPK ---------------------------------------------------------------------------------------------------
def _simm(inst, signed=True):
    v = inst.fields["simm16"]
    return v - 0x10000 if signed and v & 0x8000 else v


@op("s_movk_i32")
def _movk(inst, K):
    v = U32(_simm(inst) & 0xFFFFFFFF)
    d = inst.fields["sdst"]
    return lambda st, w: write_s(st, w, d, np.full(count(st, w), v, dtype=U32))


@op("s_addk_i32")
def _addk(inst, K):
    v = U32(_simm(inst) & 0xFFFFFFFF)
    d = inst.fields["sdst"]

    def run(st, w):
        a = st.sgpr[w, d]
        r = a + v
        st.scc[w] = (((a ^ r) & (v ^ r) & U32(0x80000000)) != 0).astype(U32)
        write_s(st, w, d, r)
    return run


@op("s_mulk_i32")
def _mulk(inst, K):
    v = U32(_simm(inst) & 0xFFFFFFFF)
    d = inst.fields["sdst"]
    return lambda st, w: write_s(st, w, d, st.sgpr[w, d] * v)


@op("s_cmovk_i32")
def _cmovk(inst, K):
    v = U32(_simm(inst) & 0xFFFFFFFF)
    d = inst.fields["sdst"]
    return lambda st, w: write_s(st, w, d, np.where(st.scc[w] != 0, v, st.sgpr[w, d]))


def _cmpk(fn, signed):
    def factory(inst, K):
        d = inst.fields["sdst"]
        v = _simm(inst, signed)

        def run(st, w):
            a = st.sgpr[w, d]
            a = a.view(I32).astype(I64) if signed else a.astype(I64)
            st.scc[w] = fn(a, v).astype(U32)
        return run
    return factory


for _o, _fn in (("eq", np.equal), ("lg", np.not_equal), ("gt", np.greater), ("ge", np.greater_equal),
                ("lt", np.less), ("le", np.less_equal)):
    register(f"s_cmpk_{_o}_i32", _cmpk(_fn, True))
    register(f"s_cmpk_{_o}_u32", _cmpk(_fn, False))


@op("s_getreg_b32")
def _getreg(inst, K):
    v = inst.fields["simm16"]
    hwreg, offset, size = v & 0x3F, v >> 6 & 0x1F, (v >> 11 & 0x1F) + 1
    d = inst.fields["sdst"]

    from ..memory import PRIVATE_APERTURE, SHARED_APERTURE
    sh_mem_bases = ((SHARED_APERTURE >> 48) << 16) | (PRIVATE_APERTURE >> 48)   # HW_REG_SH_MEM_BASES

    def run(st, w):
        val = {1: st.mode, 3: st.trap_sts, 15: sh_mem_bases}.get(hwreg, 0)
        write_s(st, w, d, np.full(st.sgpr[w, 0].shape, (val >> offset) & ((1 << size) - 1), dtype=U32))
    return run


@op("s_setreg_b32", "s_setreg_imm32_b32")
def _setreg(inst, K):
    v = inst.fields["simm16"]
    hwreg, offset, size = v & 0x3F, v >> 6 & 0x1F, (v >> 11 & 0x1F) + 1
    src = sreader(inst.fields["sdst"], None) if inst.name == "s_setreg_b32" else None
    lit = inst.literal

    def run(st, w):
        val = int(src(st, w)[0]) if src is not None else int(lit)
        if hwreg == 1:
            mask = ((1 << size) - 1) << offset
            st.mode = (st.mode & ~mask) | ((val << offset) & mask)
    return run


# ---- SOPP: control --------------------------------------------------------------------------------------------
def _branch_target(inst):
    return inst.pc + 4 + 4 * _simm(inst)


def _cbranch(cond):
    def factory(inst, K):
        target = _branch_target(inst)

        def run(st, w):
            c = cond(st, w)
            st.pc[w] = np.where(c, target, st.pc[w])
        return run
    return factory


register("s_branch", _cbranch(lambda st, w: True))
register("s_cbranch_scc0", _cbranch(lambda st, w: st.scc[w] == 0))
register("s_cbranch_scc1", _cbranch(lambda st, w: st.scc[w] != 0))
register("s_cbranch_vccz", _cbranch(lambda st, w: st.mask_word(w, VCC) == 0))
register("s_cbranch_vccnz", _cbranch(lambda st, w: st.mask_word(w, VCC) != 0))
register("s_cbranch_execz", _cbranch(lambda st, w: st.mask_word(w, EXEC) == 0))
register("s_cbranch_execnz", _cbranch(lambda st, w: st.mask_word(w, EXEC) != 0))


@op("s_endpgm")
def _endpgm(inst, K):
    def run(st, w):
        st.done[w] = True
    return run


@op("s_barrier")
def _barrier(inst, K):
    def run(st, w):
        st.at_barrier[w] = True
    return run


@op("s_sleep")
def _sleep(inst, K):
    # a sleeping wave waits for something outside it: let the host serve this dispatch's hostcalls
    gpu = K.gpu
    return lambda st, w: gpu.on_sleep()


@op("s_waitcnt", "s_nop", "s_setprio", "s_sethalt", "s_icache_inv", "s_dcache_wb", "s_dcache_inv",
    "s_dcache_inv_vol", "s_dcache_wb_vol", "s_waitcnt_vscnt", "s_trap", "s_ttracedata", "s_set_gpr_idx_off",
    "buffer_wbinvl1", "buffer_wbinvl1_vol", "buffer_wbl2", "buffer_inv", "s_waitcnt_depctr", "s_code_end")
def _noop(inst, K):
    if inst.name == "s_trap":
        from ..memory import GPUFault

        def trap(st, w):
            raise GPUFault("s_trap executed (assert or trap in the kernel)", code=710)
        return trap
    return lambda st, w: None
