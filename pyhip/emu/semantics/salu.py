"""Scalar program control and system instructions: branches, calls (s_call_b64 and through SGPRs), hardware
registers, barrier, end of program, waits, messages and hints.  The scalar ALU (SOP1, SOP2, SOPC, SOPK arithmetic) has no
numpy code here: both engines generate it from its description (pyhip/emu/spec/salu.py)."""
from __future__ import annotations

import numpy as np

from ..operands import sreader, sreader64, write_s, write_s64
from ..state import EXEC, M0, VCC
from .registry import op, register

U64 = np.uint64
U32 = np.uint32


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


def _simm(inst, signed=True):
    v = inst.fields["simm16"]
    return v - 0x10000 if signed and v & 0x8000 else v


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


@op("s_endpgm", "s_endpgm_saved", "s_endpgm_ordered_ps_done")
def _endpgm(inst, K):
    def run(st, w):
        st.done[w] = True
    return run


@op("s_call_b64")
def _call(inst, K):
    target = _branch_target(inst)
    d = inst.fields["sdst"]

    def run(st, w):
        write_s64(st, w, d, st.pc[w].astype(U64))        # the engine already advanced pc past this instruction
        st.pc[w] = target
    return run


# messages to the SPI (but MSG_INTERRUPT) and performance / power hints have no effect on the emulated device;
# the debugger branches are never taken (no debugger is attached)
MSG_INTERRUPT = 1


@op("s_sendmsg", "s_sendmsghalt")
def _sendmsg(inst, K):
    # the message id is simm16[3:0] on GFX9, simm16[7:0] from GFX10; MSG_INTERRUPT carries M0[7:0] to the
    # driver (ockl's signal update after a hostcall: the event id it stored in the signal's mailbox)
    v = inst.fields["simm16"]
    if (v & (0xF if K.family == 9 else 0xFF)) != MSG_INTERRUPT:
        return lambda st, w: None
    gpu = K.gpu

    def run(st, w):
        for data in np.atleast_1d(st.sgpr[w, M0]):
            gpu.on_interrupt(int(data) & 0xFF)
    return run


@op("s_incperflevel", "s_decperflevel", "s_wakeup", "s_setkill",
    "s_cbranch_cdbgsys", "s_cbranch_cdbguser", "s_cbranch_cdbgsys_or_user", "s_cbranch_cdbgsys_and_user")
def _no_effect(inst, K):
    return lambda st, w: None


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


@op("s_waitcnt", "s_setprio", "s_sethalt", "s_icache_inv", "s_dcache_wb", "s_dcache_inv",
    "s_dcache_inv_vol", "s_dcache_wb_vol", "s_waitcnt_vscnt", "s_trap", "s_ttracedata", "s_set_gpr_idx_off",
    "buffer_wbinvl1", "buffer_wbinvl1_vol", "buffer_wbl2", "buffer_inv", "s_waitcnt_depctr", "s_code_end",
    "v_clrexcp")
def _noop(inst, K):
    if inst.name == "s_trap":
        from ..memory import GPUFault

        def trap(st, w):
            raise GPUFault("s_trap executed (assert or trap in the kernel)", code=710)
        return trap
    return lambda st, w: None
