"""Scalar ALU beyond the everyday set: bit-field/bit-count variants, quad masks, relative SGPR moves
(s_movrels/s_movreld by M0), s_call_b64, EXEC-writing and-not forms, program-control messages and hints,
and VGPR index mode (s_set_gpr_idx_*: the VALU instructions between _on and _off address VGPRs relative
to M0[7:0])."""
from __future__ import annotations

import copy

import numpy as np

from ..operands import sreader, sreader64, write_s, write_s64
from ..state import EXEC, M0
from . import op, register
from .salu import _branch_target, _s1, _s2, _simm

U32, U64, I32, I64 = np.uint32, np.uint64, np.int32, np.int64


def _bits(a, width):
    return [(a >> a.dtype.type(i)) & a.dtype.type(1) for i in range(width)]


def _bfe(width, signed):
    def fn(a, b):
        b = b.astype(U64)
        off = (b & U64(width - 1)).astype(U64)
        n = ((b >> U64(16)) & U64(0x7F)).astype(np.int64)
        n = np.minimum(n, width)
        v = (a.astype(U64) >> off)
        mask = np.where(n >= 64, U64(0xFFFFFFFFFFFFFFFF), (U64(1) << n.astype(U64)) - U64(1))
        v = v & mask
        if signed:
            sign = np.where(n > 0, (v >> np.maximum(n - 1, 0).astype(U64)) & U64(1), U64(0))
            v = np.where(sign.astype(bool) & (n < 64), v | ~mask, v)
        v = np.where(n == 0, U64(0), v)
        return v.astype(U32) if width == 32 else v
    return fn


register("s_bfe_i32", _s2(_bfe(32, True), scc=lambda a, b, r: r != 0))
register("s_bfe_u64", _s2(lambda a, b: _bfe(64, False)(a, b & U64(0xFFFFFFFF)), 64, scc=lambda a, b, r: r != 0))
register("s_bfe_i64", _s2(lambda a, b: _bfe(64, True)(a, b & U64(0xFFFFFFFF)), 64, scc=lambda a, b, r: r != 0))
register("s_bfm_b64", _s2(lambda a, b: ((U64(1) << (a & U64(63))) - U64(1)) << (b & U64(63)), 64))


def _popc(a, width):
    return sum(x.astype(U32) for x in _bits(a, width)).astype(U32)


register("s_bcnt0_i32_b32", _s1(lambda a: U32(32) - _popc(a, 32), scc=lambda a, r: r != 0))
register("s_bcnt0_i32_b64", _s1(lambda a: U32(64) - _popc(a, 64), 64, scc=lambda a, r: r != 0, out_width=32))


def _ff0(a, width):
    out = np.full(a.shape, 0xFFFFFFFF, dtype=U32)
    for i in range(width - 1, -1, -1):
        out = np.where((a >> a.dtype.type(i)) & a.dtype.type(1) == 0, U32(i), out)
    return out


register("s_ff0_i32_b32", _s1(lambda a: _ff0(a, 32)))
register("s_ff0_i32_b64", _s1(lambda a: _ff0(a, 64), 64, out_width=32))


def _flbit_signed(a, width):
    """Bits from the MSB before the first one that differs from the sign bit; -1 when all are equal."""
    ut = U64 if width == 64 else U32
    sign = (a >> ut(width - 1)) & ut(1)
    x = np.where(sign.astype(bool), ~a, a).astype(ut)
    out = np.full(a.shape, 0xFFFFFFFF, dtype=U32)
    for i in range(width):
        out = np.where((x >> ut(i)) & ut(1) != 0, U32(width - 1 - i), out)
    return out


register("s_flbit_i32", _s1(lambda a: _flbit_signed(a, 32)))
register("s_flbit_i32_i64", _s1(lambda a: _flbit_signed(a, 64), 64, out_width=32))


def _brev64(a):
    out = np.zeros(a.shape, U64)
    for i, b in enumerate(_bits(a, 64)):
        out |= b << U64(63 - i)
    return out


register("s_brev_b64", _s1(_brev64, 64))


def _quad(a, width, wqm):
    ut = a.dtype.type
    out = np.zeros(a.shape, a.dtype)
    for q in range(width // 4):
        anyq = ((a >> ut(4 * q)) & ut(0xF)) != 0
        out |= np.where(anyq, ut(0xF << 4 * q) if wqm else ut(1 << q), ut(0))
    return out


register("s_quadmask_b32", _s1(lambda a: _quad(a, 32, False), scc=lambda a, r: r != 0))
register("s_quadmask_b64", _s1(lambda a: _quad(a, 64, False), 64, scc=lambda a, r: r != 0))
register("s_wqm_b32", _s1(lambda a: _quad(a, 32, True), scc=lambda a, r: r != 0))
register("s_wqm_b64", _s1(lambda a: _quad(a, 64, True), 64, scc=lambda a, r: r != 0))


def _bitreplicate(a):
    out = np.zeros(a.shape, U64)
    for i, b in enumerate(_bits(a.astype(U32), 32)):
        out |= (b.astype(U64) * U64(3)) << U64(2 * i)
    return out


register("s_bitreplicate_b64_b32", _s1(_bitreplicate, 32, out_width=64))


def _bitset(width, value):
    """s_bitset0/1: set bit S0[4:0] (S0[5:0] for 64-bit) of D to 0/1, the rest of D unchanged."""
    def factory(inst, K):
        f = inst.fields
        rd = sreader(f["ssrc0"], inst.literal)
        d = f["sdst"]

        def run(st, w):
            bit = (rd(st, w) & U32(width - 1)).astype(U64)
            cur = st.sgpr[w, d].astype(U64)
            if width == 64:
                cur = cur | (st.sgpr[w, d + 1].astype(U64) << U64(32))
            m = U64(1) << bit
            new = (cur | m) if value else (cur & ~m)
            (write_s64 if width == 64 else write_s)(st, w, d, new if width == 64 else new.astype(U32))
        return run
    return factory


for _w in (32, 64):
    register(f"s_bitset0_b{_w}", _bitset(_w, 0))
    register(f"s_bitset1_b{_w}", _bitset(_w, 1))


def _wrexec(fn):
    """s_andn{1,2}_wrexec_b64: EXEC = fn(S0, EXEC); D = the new EXEC; SCC = EXEC != 0."""
    def factory(inst, K):
        f = inst.fields
        rd = sreader64(f["ssrc0"], inst.literal)

        def run(st, w):
            ex = st.sgpr[w, EXEC].astype(U64) | (st.sgpr[w, EXEC + 1].astype(U64) << U64(32))
            new = fn(rd(st, w), ex)
            write_s64(st, w, EXEC, new)
            write_s64(st, w, f["sdst"], new)
            st.scc[w] = (new != 0).astype(U32)
        return run
    return factory


register("s_andn1_wrexec_b64", _wrexec(lambda a, e: ~a & e))
register("s_andn2_wrexec_b64", _wrexec(lambda a, e: a & ~e))


def _movrel(width, source_relative):
    """s_movrels: D = SGPR[S0 + M0]; s_movreld: SGPR[D + M0] = S0 (per wave M0)."""
    def factory(inst, K):
        f = inst.fields
        s, d = f["ssrc0"], f["sdst"]
        rd = (sreader64 if width == 64 else sreader)(s, inst.literal)

        def run(st, w):
            m0 = st.sgpr[w, M0].astype(np.int64)
            rows = np.arange(st.sgpr[w].shape[0])
            for k in range(width // 32):
                if source_relative:
                    idx = np.clip(s + m0 + k, 0, 127)
                    st.sgpr[w, d + k] = st.sgpr[w][rows, idx]
                else:
                    v = rd(st, w)
                    part = ((v >> U64(32 * k)) & U64(0xFFFFFFFF)).astype(U32) if width == 64 else v
                    idx = np.clip(d + m0 + k, 0, 127)
                    block = st.sgpr[w]
                    block[rows, idx] = part
                    st.sgpr[w] = block
        return run
    return factory


register("s_movrels_b32", _movrel(32, True))
register("s_movrels_b64", _movrel(64, True))
register("s_movreld_b32", _movrel(32, False))
register("s_movreld_b64", _movrel(64, False))


@op("s_call_b64")
def _call(inst, K):
    target = _branch_target(inst)
    d = inst.fields["sdst"]

    def run(st, w):
        write_s64(st, w, d, st.pc[w].astype(U64))        # the engine already advanced pc past this instruction
        st.pc[w] = target
    return run


@op("s_endpgm_saved", "s_endpgm_ordered_ps_done")
def _endpgm(inst, K):
    def run(st, w):
        st.done[w] = True
    return run


# messages to the SPI and performance / power hints have no effect on the emulated device; the debugger
# branches are never taken (no debugger is attached)
@op("s_sendmsg", "s_sendmsghalt", "s_incperflevel", "s_decperflevel", "s_wakeup", "s_setkill",
    "s_cbranch_cdbgsys", "s_cbranch_cdbguser", "s_cbranch_cdbgsys_or_user", "s_cbranch_cdbgsys_and_user")
def _no_effect(inst, K):
    return lambda st, w: None


# ---- VGPR index mode ---------------------------------------------------------------------------------------------------
GPR_IDX_SRC0, GPR_IDX_SRC1, GPR_IDX_SRC2, GPR_IDX_DST = 1, 2, 4, 8


@op("s_set_gpr_idx_on")
def _gpr_idx_on(inst, K):
    rd = sreader(inst.fields["ssrc0"], inst.literal)
    mode = inst.fields["ssrc1"] & 0xF

    def run(st, w):
        m0 = st.sgpr[w, M0]
        st.sgpr[w, M0] = (m0 & ~U32(0xF0FF)) | (rd(st, w) & U32(0xFF)) | U32(mode << 12)
    return run


@op("s_set_gpr_idx_idx")
def _gpr_idx_idx(inst, K):
    rd = sreader(inst.fields["ssrc0"], inst.literal)

    def run(st, w):
        st.sgpr[w, M0] = (st.sgpr[w, M0] & ~U32(0xFF)) | (rd(st, w) & U32(0xFF))
    return run


@op("s_set_gpr_idx_mode")
def _gpr_idx_mode(inst, K):
    mode = _simm(inst, signed=False) & 0xF

    def run(st, w):
        st.sgpr[w, M0] = (st.sgpr[w, M0] & ~U32(0xF000)) | U32(mode << 12)
    return run


def gpr_index_modes(instructions: dict) -> dict:
    """pc → operand mode bits for the VALU instructions inside s_set_gpr_idx_on ... _off regions (compilers
    emit them as straight-line sequences; a branch ends a region)."""
    out, mode = {}, 0
    for pc, inst in instructions.items():
        n = inst.name
        if n == "s_set_gpr_idx_on":
            mode = inst.fields["ssrc1"] & 0xF
        elif n == "s_set_gpr_idx_mode":
            mode = inst.fields.get("simm16", 0) & 0xF
        elif n == "s_set_gpr_idx_off" or n.startswith(("s_branch", "s_cbranch", "s_setpc", "s_endpgm")):
            mode = 0
        elif mode and inst.encoding[0] == "V":
            out[pc] = mode
    return out


def indexed(inst, K, mode, compile_fn):
    """Wrap a VALU instruction so its VGPR operands named by ``mode`` are offset by M0[7:0] of each wave."""
    cache = {}

    def variant(idx):
        fn = cache.get(idx)
        if fn is None:
            v = copy.copy(inst)
            f = dict(inst.fields)
            for bit, key in ((GPR_IDX_SRC0, "src0"), (GPR_IDX_SRC1, "src1"), (GPR_IDX_SRC2, "src2")):
                if mode & bit and key in f and f[key] >= 256:
                    f[key] += idx
            if mode & GPR_IDX_SRC1 and "vsrc1" in f:
                f["vsrc1"] += idx
            if mode & GPR_IDX_DST and "vdst" in f:
                f["vdst"] += idx
            v.fields = f
            fn = cache[idx] = compile_fn(v, K)
        return fn

    def run(st, w):
        idx = (st.sgpr[w, M0] & U32(0xFF)).astype(np.int64)
        first = int(idx[0])
        if (idx == first).all():
            return variant(first)(st, w)
        ws = np.arange(st.n)[w] if isinstance(w, slice) else np.asarray(w)
        for v in np.unique(idx):
            variant(int(v))(st, ws[idx == v])
    return run
