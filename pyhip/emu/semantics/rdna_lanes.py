"""RDNA lane-crossing and dual-issue operations: VOPD (GFX11 dual issue), v_permlane16/x16/64, and the
M0-relative VGPR moves (v_movrels/movreld/movrelsd/movrelsd_2, v_swaprel)."""
from __future__ import annotations

import numpy as np

from ..isa.instruction import Instruction
from ..operands import sreader, vreader, write_v
from ..state import M0
from . import SEMANTICS, op, register
from .common import U32, U64

# ---- VOPD ---------------------------------------------------------------------------------------------------------
# the VOP1/VOP2 operation behind each half (GFX11 ISA, VOPD opcode tables)
_VOPD_OPS = {"v_dual_fmac_f32": "v_fmac_f32", "v_dual_fmaak_f32": "v_fmaak_f32", "v_dual_fmamk_f32": "v_fmamk_f32",
             "v_dual_mul_f32": "v_mul_f32", "v_dual_add_f32": "v_add_f32", "v_dual_sub_f32": "v_sub_f32",
             "v_dual_subrev_f32": "v_subrev_f32", "v_dual_mul_dx9_zero_f32": "v_mul_dx9_zero_f32",
             "v_dual_mov_b32": "v_mov_b32", "v_dual_cndmask_b32": "v_cndmask_b32", "v_dual_max_f32": "v_max_f32",
             "v_dual_min_f32": "v_min_f32", "v_dual_dot2acc_f32_f16": "v_dot2acc_f32_f16",
             "v_dual_add_nc_u32": "v_add_nc_u32", "v_dual_lshlrev_b32": "v_lshlrev_b32", "v_dual_and_b32": "v_and_b32"}


def vopd_half(inst, half: str) -> Instruction:
    """The X or Y half of a VOPD instruction as the VOP1/VOP2 instruction it performs."""
    f = inst.fields
    name = _VOPD_OPS[f["name" + half]]
    fields = {"src0": f[f"src{half}0"], "vsrc1": f[f"vsrc{half}1"], "vdst": f[f"vdst{half}"]}
    return Instruction(pc=inst.pc, size=inst.size, encoding="VOP1" if name == "v_mov_b32" else "VOP2", opcode=0,
                       name=name, fields=fields, literal=inst.literal, words=inst.words)


def _reads(sub: Instruction) -> set:
    """VGPRs a VOPD half reads."""
    f = sub.fields
    out = {f["src0"] - 256} if f["src0"] >= 256 else set()
    if sub.encoding == "VOP2":
        out.add(f["vsrc1"])
    if sub.name in ("v_fmac_f32", "v_dot2acc_f32_f16"):
        out.add(f["vdst"])
    return out


@op("vopd")
def _vopd(inst, K):
    """Both halves read their operands before either writes: when Y reads X's destination, Y sees the old
    value (X's result is put back after Y ran).  The halves' destinations differ (one even, one odd)."""
    x, y = vopd_half(inst, "x"), vopd_half(inst, "y")
    fx, fy = SEMANTICS[x.name](x, K), SEMANTICS[y.name](y, K)
    dx = x.fields["vdst"]
    if dx not in _reads(y):
        def run(st, w):
            fx(st, w)
            fy(st, w)
        return run

    def run_shadowed(st, w):
        old = st.vgpr[dx, w].copy()
        fx(st, w)
        new = st.vgpr[dx, w].copy()
        st.vgpr[dx, w] = old
        fy(st, w)
        st.vgpr[dx, w] = new
    return run_shadowed


# ---- permlanes ------------------------------------------------------------------------------------------------------
def _permlane(cross: bool):
    """v_permlane16_b32 / v_permlanex16_b32 D, S0, S1, S2: lane i of each row of 16 reads lane
    ({S2, S1} >> 4 * (i % 16)) & 15 of its own row (x16: of the other row of its pair).  OP_SEL[0] = FI (read
    inactive source lanes), OP_SEL[1] = BOUND_CTRL (an inactive source lane gives 0 instead of keeping D)."""
    def factory(inst, K):
        f = inst.fields
        src = vreader(f["src0"], inst.literal)
        s1, s2 = sreader(f["src1"], inst.literal), sreader(f["src2"], inst.literal)
        fi, bc = f["opsel"] & 1, f["opsel"] >> 1 & 1
        d = f["vdst"]

        def run(st, w):
            m = st.exec_mask(w)
            lanes = st.lanes
            lane = np.arange(lanes)
            sel = s1(st, w).astype(U64) | (s2(st, w).astype(U64) << U64(32))
            nib = ((sel[:, None] >> (U64(4) * (lane % 16).astype(U64))[None, :]) & U64(0xF)).astype(np.int64)
            row = lane // 16
            base = ((row ^ 1) if cross else row) * 16
            idx = base[None, :] + nib
            v = src(st, w)
            rows = np.arange(v.shape[0])[:, None]
            out = v[rows, idx]
            if not fi:
                active = m[rows, idx]
                out = np.where(active, out, U32(0) if bc else st.vgpr[d, w])
            write_v(st, w, d, out.astype(U32), m)
        return run
    return factory


register("v_permlane16_b32", _permlane(False))
register("v_permlanex16_b32", _permlane(True))


@op("v_permlane64_b32")
def _permlane64(inst, K):
    """wave64: the two halves of the wave swap values; wave32: a move."""
    src = vreader(inst.fields["src0"], inst.literal)
    d = inst.fields["vdst"]

    def run(st, w):
        m = st.exec_mask(w)
        v = src(st, w)
        if st.lanes == 64:
            v = np.concatenate([v[:, 32:], v[:, :32]], axis=1)
        write_v(st, w, d, v, m)
    return run


# ---- M0-relative VGPR moves ------------------------------------------------------------------------------------------
def _movrel(kind):
    """v_movrels: D = VGPR[S0 + M0]; v_movreld: VGPR[D + M0] = S0; v_movrelsd: VGPR[D + M0] = VGPR[S0 + M0];
    v_movrelsd_2: VGPR[D + M0[25:16]] = VGPR[S0 + M0[9:0]]; v_swaprel: swap VGPR[D + M0[25:16]] and
    VGPR[S0 + M0[9:0]] (M0 per wave; active lanes only)."""
    def factory(inst, K):
        f = inst.fields
        s, d = f["src0"], f["vdst"]
        if kind != "movreld" and s < 256:
            raise NotImplementedError(f"{inst.name} needs a VGPR source")
        s -= 256 if s >= 256 else 0
        value = vreader(f["src0"], inst.literal) if kind == "movreld" else None

        def run(st, w):
            m = st.exec_mask(w)
            m0 = st.sgpr[w, M0].astype(np.int64)
            nreg = st.vgpr.shape[0]
            if kind in ("movrelsd_2", "swaprel"):
                so, do = m0 & 0x3FF, m0 >> 16 & 0x3FF
            else:
                so = do = m0
            waves = np.arange(st.n)[w]
            for k, wave in enumerate(np.atleast_1d(waves)):
                sr, dr = s + int(so[k]), d + int(do[k])
                if kind != "movreld" and sr >= nreg or kind != "movrels" and dr >= nreg:
                    from ..memory import GPUFault
                    raise GPUFault(f"{inst.name}: VGPR index beyond the wave's registers", batch_wave=k)
                mk = m[k]
                if kind == "movrels":
                    st.vgpr[d, wave] = np.where(mk, st.vgpr[sr, wave], st.vgpr[d, wave])
                elif kind == "movreld":
                    st.vgpr[dr, wave] = np.where(mk, value(st, [wave])[0], st.vgpr[dr, wave])
                elif kind == "swaprel":
                    a, b = st.vgpr[sr, wave].copy(), st.vgpr[dr, wave].copy()
                    st.vgpr[dr, wave] = np.where(mk, a, b)
                    st.vgpr[sr, wave] = np.where(mk, b, a)
                else:
                    st.vgpr[dr, wave] = np.where(mk, st.vgpr[sr, wave], st.vgpr[dr, wave])
        return run
    return factory


for _k in ("movrels", "movreld", "movrelsd", "movrelsd_2", "swaprel"):
    register(f"v_{_k}_b32", _movrel(_k))
