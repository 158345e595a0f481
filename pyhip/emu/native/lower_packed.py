"""Lowering of packed math (packed.py: VOP3P v_pk_* on 16-bit halves, dot products, v_fma_mix*, v_mac_f16 & co.;
valu.py: the packed f32 ops)."""
from __future__ import annotations

from ..semantics.common import srcs
from .lower_valu import valu
from .lowerbase import Unsupported, sdesc

# native/engine/packed_math.h PK_* (the order of the numpy registration in packed.py)
PK16 = {n: i for i, n in enumerate(
    "v_pk_add_f16 v_pk_mul_f16 v_pk_fma_f16 v_pk_max_f16 v_pk_min_f16 v_pk_add_u16 v_pk_add_i16 v_pk_sub_u16 "
    "v_pk_sub_i16 v_pk_mul_lo_u16 v_pk_lshlrev_b16 v_pk_lshrrev_b16 v_pk_ashrrev_i16 v_pk_max_u16 v_pk_min_u16 "
    "v_pk_max_i16 v_pk_min_i16 v_pk_mad_u16 v_pk_mad_i16".split())}
PK_F32 = {"v_pk_mul_f32": 0, "v_pk_add_f32": 1, "v_pk_fma_f32": 2}
DOT = {"v_dot2_f32_f16": 0, "v_dot2c_f32_f16": 0, "v_dot2_i32_i16": 1, "v_dot2_u32_u16": 2, "v_dot4_i32_i8": 3,
       "v_dot4_u32_u8": 4, "v_dot8_i32_i4": 5, "v_dot8_u32_u4": 6, "v_dot2c_i32_i16": 1, "v_dot4c_i32_i8": 3,
       "v_dot8c_i32_i4": 5}
MIX = {"v_fma_mix_f32": 0, "v_fma_mixlo_f16": 1, "v_fma_mixhi_f16": 2, "v_mad_mix_f32": 0, "v_mad_mixlo_f16": 1,
       "v_mad_mixhi_f16": 2}


def _vop3p_bits(f) -> int:
    opsel_hi = f["opsel_hi"] | (f["opsel_hi2"] << 2)
    return f["opsel"] | (opsel_hi << 3) | (f["neg"] << 6) | (f["neg_hi"] << 9) | (f.get("clamp", 0) << 12)


def _plain_sources(rec, inst, kinds):
    codes = srcs(inst)
    for i, k in enumerate(kinds):
        rec.src(i, *sdesc(codes[i], inst.literal, k))
        if codes[i] >= 256:
            rec.touch(codes[i] - 256 + 2)


def lower_packed(rec, inst, K) -> bool:
    name, f = inst.name, inst.fields
    if name in PK16:
        if inst.encoding != "VOP3P":
            raise Unsupported(name)
        op = PK16[name]
        n = 3 if name in ("v_pk_fma_f16", "v_pk_mad_u16", "v_pk_mad_i16") else 2
        _plain_sources(rec, inst, ["f16" if op <= 4 else "b32"] * n)
        rec.op, rec.x, rec.a0, rec.d = "v_pk16", op, _vop3p_bits(f), f["vdst"]
        rec.touch(rec.d + 1)
        return True
    if name in PK_F32:
        op = PK_F32[name]
        _plain_sources(rec, inst, ["b32"] * (3 if op == 2 else 2))
        rec.op, rec.x, rec.a0, rec.d = "v_pk_f32", op, _vop3p_bits(f) & 0xFFF, f["vdst"]
        rec.touch(rec.d + 2)
        return True
    if name == "v_pk_mov_b32":
        c0, c1 = srcs(inst)[:2]
        rec.src(0, *sdesc(c0 + (f["opsel"] & 1), None))
        rec.src(1, *sdesc(c1 + (f["opsel"] >> 1 & 1), None))
        rec.op, rec.d = name, f["vdst"]
        rec.touch(max(c0, c1, 256) - 256 + 2)
        rec.touch(rec.d + 2)
        return True
    if name in DOT:
        accumulate = "c_" in name
        valu(rec, inst, "v_dot", ("b32",) * (2 if accumulate else 3), "b32", flush=False, out_mods=False)
        rec.a0 = 0
        rec.x = DOT[name]
        imm = int(accumulate)
        if inst.encoding == "VOP3P" and name == "v_dot2_f32_f16":
            imm |= (f["neg"] << 6) | (f["neg_hi"] << 9)
        rec.imm = imm
        return True
    if name in MIX:
        opsel_hi = f["opsel_hi"] | (f["opsel_hi2"] << 2)
        _plain_sources(rec, inst, ["f16" if opsel_hi >> i & 1 else "f32" for i in range(3)])
        rec.op, rec.x, rec.a0, rec.d = "v_fma_mix", MIX[name], _vop3p_bits(f), f["vdst"]
        rec.touch(rec.d + 1)
        return True
    if name in ("v_mac_f16", "v_madmk_f16", "v_madak_f16"):
        valu(rec, inst, "v_mac16", ("f16", "f16"), "f16", flush=False, out_mods=False)
        rec.a0 = 0
        rec.x = {"v_mac_f16": 0, "v_madmk_f16": 1, "v_madak_f16": 2}[name]
        rec.imm = (inst.literal or 0) & 0xFFFF
        return True
    if name == "v_pk_fmac_f16":
        valu(rec, inst, name, ("b32", "b32"), "b32", flush=False, out_mods=False)
        return True
    return False
