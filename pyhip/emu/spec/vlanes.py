"""VALU operations that cross lanes: v_readlane/v_readfirstlane/v_writelane (VGPR lane <-> SGPR), v_mbcnt
(the count of mask bits below the lane), v_swap_b32, the RDNA v_permlane16/x16/64 lane permutations, and the
GFX11 dual-issue VOPD (two VALU operations, each built from its own description, all reads before any
write).  From AMD's Vega/CDNA and RDNA ISA manuals."""
from __future__ import annotations

from ..isa.instruction import Instruction
from .lang import U32, U64, const, cttz, ctpop, lane_gather, lane_id, lane_read, lane_shuffle, mask_word, select
from .operands import DESCRIPTIONS, Build, describe


# ---- VGPR lane <-> SGPR ----------------------------------------------------------------------------------------------
@describe("v_readlane_b32")
def _readlane(b: Build) -> None:
    """SDST = S0[lane S1 mod W] (an SGPR destination in the VDST field; a scalar S0 reads as itself)."""
    f = b.inst.fields
    v = b.vector(f["src0"])
    b.write_sreg(f["vdst"], v if v.uniform else lane_read(v, b.scalar(f["src1"])))


@describe("v_readfirstlane_b32")
def _readfirstlane(b: Build) -> None:
    """SDST = S0 at the lowest active lane (lane 0 when EXEC is 0)."""
    f = b.inst.fields
    v = b.vector(f["src0"])
    if not v.uniform:
        first = cttz(mask_word(b.exec, b.lanes))          # W when EXEC is 0: lane W mod W = 0
        v = lane_read(v, first.trunc(U32) if first.ty is U64 else first)
    b.write_sreg(f["vdst"], v)


@describe("v_writelane_b32")
def _writelane(b: Build) -> None:
    """VDST[lane S1 mod W] = S0 (scalar sources), whatever EXEC holds."""
    f = b.inst.fields
    value = b.scalar(f["src0"])
    lane = b.scalar(f["src1"]) & (b.lanes - 1)
    b.write_vgpr(f["vdst"], value, mask=lane_id(b.lanes).eq(lane))


@describe("v_mbcnt_lo_u32_b32", "v_mbcnt_hi_u32_b32")
def _mbcnt(b: Build) -> None:
    """D = popcount(S0 & the lanes below this one, low (lo) or high (hi) half of the 64-bit lane mask) + S1."""
    mask, acc = b.src(0, "u32", False), b.src(1, "u32", False)
    below = (const(1, U64) << lane_id(b.lanes).zext(U64)) - 1          # the lanes below, as a 64-bit mask
    half = (below >> 32) if b.inst.name == "v_mbcnt_hi_u32_b32" else below
    b.write_d(ctpop(mask & half.trunc(U32)) + acc, "u32")


@describe("v_swap_b32")
def _swap(b: Build) -> None:
    """Exchange VDST and the VGPR S0 in active lanes."""
    f = b.inst.fields
    if f["src0"] < 256:
        raise NotImplementedError("v_swap_b32 needs a VGPR source")
    d, s = f["vdst"], f["src0"] - 256
    vd, vs = b.vgpr(d), b.vgpr(s)
    b.write_vgpr(d, vs)
    b.write_vgpr(s, vd)


# ---- RDNA lane permutations ------------------------------------------------------------------------------------------
def _permlane(cross: bool):
    """v_permlane16_b32 / v_permlanex16_b32 D, S0, S1, S2: lane i of each row of 16 reads lane
    ({S2, S1} >> 4 * (i % 16)) & 15 of its own row (x16: of the other row of its pair).  OP_SEL[0] = FI
    (inactive source lanes are read too), OP_SEL[1] = BOUND_CTRL (an inactive source lane gives 0 instead of
    keeping D)."""
    def build(b: Build) -> None:
        f = b.inst.fields
        src = b.vector(f["src0"])
        sel = b.scalar(f["src1"]).zext(U64) | (b.scalar(f["src2"]).zext(U64) << 32)
        fi, bound = f.get("opsel", 0) & 1, f.get("opsel", 0) >> 1 & 1
        if sel.is_const:                                  # a static lane map
            lane_map = [(i & ~15 ^ (16 if cross else 0)) + (sel.attr >> 4 * (i & 15) & 15) for i in range(b.lanes)]
            out = src if src.uniform else lane_shuffle(src, lane_map)
            active = None if fi else lane_shuffle(b.exec, lane_map)
        else:
            lid = lane_id(b.lanes)
            nib = ((sel >> ((lid & 15) << 2).zext(U64)) & 15).trunc(U32)
            idx = (((lid & 0xFFFFFFF0) ^ 16) if cross else (lid & 0xFFFFFFF0)) + nib
            out = src if src.uniform else lane_gather(src, idx)
            active = None if fi else lane_gather(b.exec, idx)
        if active is not None:
            out = select(active, out, const(0, U32) if bound else b.vgpr(f["vdst"]))
        b.write_vgpr(f["vdst"], out)
    return build


describe("v_permlane16_b32")(_permlane(False))
describe("v_permlanex16_b32")(_permlane(True))


@describe("v_permlane64_b32")
def _permlane64(b: Build) -> None:
    """wave64: the two halves of the wave exchange values; wave32: a move."""
    f = b.inst.fields
    v = b.vector(f["src0"])
    if b.lanes == 64 and not v.uniform:
        v = lane_shuffle(v, [*range(32, 64), *range(32)])
    b.write_vgpr(f["vdst"], v)


# ---- VOPD ----------------------------------------------------------------------------------------------------------------
# the VOP1/VOP2 operation behind each half (GFX11 ISA, VOPD opcode tables)
VOPD_OPS = {"v_dual_fmac_f32": "v_fmac_f32", "v_dual_fmaak_f32": "v_fmaak_f32", "v_dual_fmamk_f32": "v_fmamk_f32",
            "v_dual_mul_f32": "v_mul_f32", "v_dual_add_f32": "v_add_f32", "v_dual_sub_f32": "v_sub_f32",
            "v_dual_subrev_f32": "v_subrev_f32", "v_dual_mul_dx9_zero_f32": "v_mul_dx9_zero_f32",
            "v_dual_mov_b32": "v_mov_b32", "v_dual_cndmask_b32": "v_cndmask_b32", "v_dual_max_f32": "v_max_f32",
            "v_dual_min_f32": "v_min_f32", "v_dual_dot2acc_f32_f16": "v_dot2acc_f32_f16",
            "v_dual_add_nc_u32": "v_add_nc_u32", "v_dual_lshlrev_b32": "v_lshlrev_b32", "v_dual_and_b32": "v_and_b32"}
# the GFX9 names of the same operations (a description may be registered under those only)
_GFX9_NAMES = {"v_mul_dx9_zero_f32": "v_mul_legacy_f32", "v_dot2acc_f32_f16": "v_dot2c_f32_f16"}


def vopd_half(inst, half: str):
    """The X or Y half of a VOPD instruction as the VOP1/VOP2 instruction it performs."""
    f = inst.fields
    name = VOPD_OPS[f["name" + half]]
    fields = {"src0": f[f"src{half}0"], "vsrc1": f[f"vsrc{half}1"], "vdst": f[f"vdst{half}"]}
    return Instruction(pc=inst.pc, size=inst.size, encoding="VOP1" if name == "v_mov_b32" else "VOP2", opcode=0,
                       name=name, fields=fields, literal=inst.literal, words=inst.words)


@describe("vopd")
def _vopd(b: Build) -> None:
    """Both halves read their operands before either writes (Y reading X's destination sees the old value):
    the halves' writes follow all the instruction's reads, as every description's do."""
    for half in ("x", "y"):
        sub = vopd_half(b.inst, half)
        if sub.name not in DESCRIPTIONS and _GFX9_NAMES.get(sub.name) in DESCRIPTIONS:
            sub.name = _GFX9_NAMES[sub.name]
        fn = DESCRIPTIONS.get(sub.name)
        if fn is None:
            raise NotImplementedError(f"VOPD half {sub.name} is not described")
        sb = Build(sub, b.K, b.mode_value)
        fn(sb)
        b.writes.extend(sb.writes)
        b.mode_used |= sb.mode_used

