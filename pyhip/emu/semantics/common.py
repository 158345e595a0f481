"""Helpers shared by the VALU semantics: operand plumbing for VOP1/VOP2/VOPC/VOP3, float views,
VOP3 input/output modifiers, DPP lane permutations."""
from __future__ import annotations

import numpy as np

from ..operands import vreader, vreader64, write_v, write_v64
from ..state import LANES, VCC

F32, F64, U32, U64, I32, I64 = np.float32, np.float64, np.uint32, np.uint64, np.int32, np.int64
_LANE = np.arange(LANES)


def srcs(inst) -> list[int]:
    f = inst.fields
    if inst.encoding == "VOP2":
        return [f["src0"], 256 + f["vsrc1"]]
    if inst.encoding == "VOPC":
        return [f["src0"], 256 + f["vsrc1"]]
    if inst.encoding == "VOP1":
        return [f["src0"]]
    return [f["src0"], f["src1"], f["src2"]]


def dst(inst) -> int:
    return inst.fields.get("vdst", 0)


def fkind(width: int, is_float: bool) -> str:
    return ("f64" if is_float else "b64") if width == 64 else ("f32" if is_float else "b32")


# VOP3B instructions: bits 14:8 hold SDST, so the VOP3A abs/op_sel bits a decoder may report are not modifiers
VOP3B_NAMES = frozenset({
    "v_div_scale_f32", "v_div_scale_f64", "v_add_co_u32", "v_sub_co_u32", "v_subrev_co_u32", "v_addc_co_u32",
    "v_subb_co_u32", "v_subbrev_co_u32", "v_mad_u64_u32", "v_mad_i64_i32",
})


def readers(inst, n: int, widths=(32, 32, 32), is_float: bool = False, kinds=None):
    """Vector readers for the first ``n`` sources, with DPP applied to src0 and VOP3 abs/neg."""
    codes = srcs(inst)
    out = []
    for i in range(n):
        wdt = widths[i] if i < len(widths) else 32
        k = kinds[i] if kinds else fkind(wdt, is_float)
        rd = (vreader64 if wdt == 64 else vreader)(codes[i], inst.literal, k)
        if is_float and inst.encoding in ("VOP3", "VOP3B"):
            absf = 0 if inst.name in VOP3B_NAMES else inst.fields.get("abs", 0)
            rd = _float_mods(rd, absf >> i & 1, inst.fields.get("neg", 0) >> i & 1, wdt)
        if i == 0 and inst.dpp is not None:
            rd = dpp_reader(rd, inst.dpp)
        if inst.dpp is not None and is_float:
            rd = _float_mods(rd, inst.dpp.get(f"src{i}_abs", 0) if i < 2 else 0,
                             inst.dpp.get(f"src{i}_neg", 0) if i < 2 else 0, wdt)
        if inst.sdwa is not None:
            raise NotImplementedError("SDWA operands are not supported yet")
        out.append(rd)
    return out


def _float_mods(rd, a: int, n: int, width: int):
    if not a and not n:
        return rd
    sign = U64(1 << 63) if width == 64 else U32(1 << 31)

    def f(st, w):
        v = rd(st, w)
        if a:
            v = v & ~sign
        if n:
            v = v ^ sign
        return v
    return f


def output_mods(inst, is_float: bool, width: int = 32):
    """VOP3 clamp/omod on float results (arrays of float dtype) → function."""
    f = inst.fields if inst.encoding == "VOP3" else {}
    clamp, omod = f.get("clamp", 0), f.get("omod", 0)
    if inst.dpp is None and inst.encoding != "VOP3":
        return None
    if not is_float or (not clamp and not omod):
        return None
    scale = {0: 1.0, 1: 2.0, 2: 4.0, 3: 0.5}[omod]

    def g(x):
        if omod:
            x = x * x.dtype.type(scale)
        if clamp:
            x = np.where(np.isnan(x), x.dtype.type(0), np.clip(x, 0, 1))
        return x
    return g


def dpp_reader(rd, d):
    """Apply a DPP lane permutation to a source reader (GFX9 dpp_ctrl)."""
    ctrl = d["dpp_ctrl"]
    src_lane = np.full(LANES, -1)
    lane = _LANE
    row, inrow = lane // 16, lane % 16
    if ctrl <= 0xFF:                                    # quad_perm
        sel = np.array([(ctrl >> (2 * (i % 4))) & 3 for i in range(LANES)])
        src_lane = (lane & ~3) + sel
    elif 0x101 <= ctrl <= 0x10F:                        # row_shl
        n = ctrl & 0xF
        src_lane = np.where(inrow + n < 16, lane + n, -1)
    elif 0x111 <= ctrl <= 0x11F:                        # row_shr
        n = ctrl & 0xF
        src_lane = np.where(inrow - n >= 0, lane - n, -1)
    elif 0x121 <= ctrl <= 0x12F:                        # row_ror
        n = ctrl & 0xF
        src_lane = row * 16 + (inrow - n) % 16
    elif ctrl == 0x130:                                 # wave_shl1
        src_lane = np.where(lane + 1 < LANES, lane + 1, -1)
    elif ctrl == 0x134:                                 # wave_rol1
        src_lane = (lane + 1) % LANES
    elif ctrl == 0x138:                                 # wave_shr1
        src_lane = lane - 1
    elif ctrl == 0x13C:                                 # wave_ror1
        src_lane = (lane - 1) % LANES
    elif ctrl == 0x140:                                 # row_mirror
        src_lane = row * 16 + 15 - inrow
    elif ctrl == 0x141:                                 # row_half_mirror
        src_lane = (lane & ~7) + 7 - (lane & 7)
    elif ctrl == 0x142:                                 # row_bcast15
        src_lane = np.where(row > 0, row * 16 - 1, -1)
    elif ctrl == 0x143:                                 # row_bcast31
        src_lane = np.where(row > 1, 31, -1)
    else:
        raise NotImplementedError(f"DPP control 0x{ctrl:x}")
    valid_static = src_lane >= 0
    idx = np.where(valid_static, src_lane, 0)
    bound_zero = bool(d["bound_ctrl"])

    def f(st, w):
        v = rd(st, w)
        ex = st.exec_mask(w)
        out = v[:, idx]
        valid = valid_static[None, :] & ex[:, idx]
        if bound_zero:
            return np.where(valid, out, 0).astype(v.dtype)
        st._dpp_invalid = ~valid           # lanes that must not be written
        return out
    return f


def dpp_write_mask(inst, st, m):
    """EXEC restricted by DPP row/bank masks and, without bound_ctrl, by invalid source lanes."""
    d = inst.dpp
    if d is None:
        return m
    rows = np.array([(d["row_mask"] >> (l // 16)) & 1 for l in range(LANES)], dtype=bool)
    banks = np.array([(d["bank_mask"] >> ((l % 16) // 4)) & 1 for l in range(LANES)], dtype=bool)
    m = m & rows & banks
    inv = getattr(st, "_dpp_invalid", None)
    if inv is not None:
        m = m & ~inv
        st._dpp_invalid = None
    return m


def carry_dst(inst) -> int:
    """Where a VOP2/VOPC instruction writes its lane mask: VCC, or the VOP3B/VOP3 sdst."""
    if inst.encoding == "VOP3":
        return inst.fields["sdst"]
    return VCC


def store32(inst, st, w, value, m):
    write_v(st, w, dst(inst), value, dpp_write_mask(inst, st, m))


def store64(inst, st, w, value, m):
    write_v64(st, w, dst(inst), value, dpp_write_mask(inst, st, m))
