"""Helpers shared by the VALU semantics: operand plumbing for VOP1/VOP2/VOPC/VOP3, float views,
VOP3 input/output modifiers, DPP lane permutations."""
from __future__ import annotations

import functools

import numpy as np

from ..memory import GPUFault
from ..operands import vreader, vreader64, write_v, write_v64
from ..state import VCC

F32, F64, U32, U64, I32, I64 = np.float32, np.float64, np.uint32, np.uint64, np.int32, np.int64


def srcs(inst) -> list[int]:
    f = inst.fields
    if inst.encoding in ("VOP2", "VOPC"):
        # SDWA's S1 bit: VSRC1 names a scalar register or constant, not a VGPR
        return [f["src0"], f["vsrc1"] if inst.sdwa is not None and inst.sdwa["s1"] else 256 + f["vsrc1"]]
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
    "v_add_co_ci_u32", "v_sub_co_ci_u32", "v_subrev_co_ci_u32",          # RDNA names
})


# 16-bit operand kinds: VOP3 OP_SEL picks the high half of a source (and of the destination)
HALF_KINDS = frozenset({"f16", "u16", "i16", "b16"})
# SDWA selects: (shift, width) of BYTE_0..3, WORD_0/1, DWORD
SDWA_SEL = {0: (0, 8), 1: (8, 8), 2: (16, 8), 3: (24, 8), 4: (0, 16), 5: (16, 16), 6: (0, 32)}


def _reader_kind(k: str) -> str:
    """The constant encoding a source kind reads (inline float constants differ per width)."""
    return {"f16": "f16", "f32": "f32", "f64": "f64", "u64": "b64", "i64": "b64", "b64": "b64"}.get(k, "b32")


def readers(inst, n: int, widths=(32, 32, 32), is_float: bool = False, kinds=None):
    """Vector readers for the first ``n`` sources: SDWA source selects, VOP3 OP_SEL halves of 16-bit
    sources, DPP lane moves on src0, abs/neg on float sources (bit 15 for f16)."""
    codes = srcs(inst)
    out = []
    f = inst.fields
    vop3 = inst.encoding in ("VOP3", "VOP3B")
    for i in range(n):
        wdt = widths[i] if i < len(widths) else 32
        k = kinds[i] if kinds else fkind(wdt, is_float)
        rd = (vreader64 if wdt == 64 else vreader)(codes[i], inst.literal, _reader_kind(k))
        sbits = 64 if wdt == 64 else (16 if k == "f16" else 32)
        if (vop3 or f.get("t16")) and k in HALF_KINDS and f.get("opsel", 0) >> i & 1:
            rd = _high_half(rd)                 # VOP3 OP_SEL, or a GFX11 true16 .h operand
        if inst.sdwa is not None and i < 2:
            s = inst.sdwa
            rd = _sdwa_src(rd, s[f"src{i}_sel"], s[f"src{i}_sext"])
            if is_float:
                rd = _float_mods(rd, s[f"src{i}_abs"], s[f"src{i}_neg"], sbits)
        if is_float and vop3:
            absf = 0 if inst.name in VOP3B_NAMES else f.get("abs", 0)
            rd = _float_mods(rd, absf >> i & 1, f.get("neg", 0) >> i & 1, sbits)
        if i == 0 and inst.dpp is not None:
            rd = dpp_reader(rd, inst.dpp)
        if inst.dpp is not None and is_float:
            rd = _float_mods(rd, inst.dpp.get(f"src{i}_abs", 0) if i < 2 else 0,
                             inst.dpp.get(f"src{i}_neg", 0) if i < 2 else 0, sbits)
        out.append(rd)
    return out


def _high_half(rd):
    return lambda st, w: rd(st, w) >> U32(16)


def _sdwa_src(rd, sel: int, sext: int):
    if sel == 6:
        return rd
    if sel not in SDWA_SEL:
        raise NotImplementedError(f"reserved SDWA select {sel}")
    sh, wd = SDWA_SEL[sel]
    mask = U32((1 << wd) - 1)

    def f(st, w):
        v = (rd(st, w) >> U32(sh)) & mask
        if sext:
            v = ((v.view(np.int32) << np.int32(32 - wd)) >> np.int32(32 - wd)).view(U32)
        return v
    return f


def sdwa_dest(inst, st, w, value):
    """An SDWA result placed by DST_SEL: the rest of the register zeroed, sign-extended or preserved."""
    s = inst.sdwa
    sel = s["dst_sel"]
    if sel == 6:
        return value
    sh, wd = SDWA_SEL[sel]
    mask = (1 << wd) - 1
    v = np.asarray(value, dtype=U32) & U32(mask)
    if s["dst_unused"] == 2:                              # UNUSED_PRESERVE
        return (st.vgpr[dst(inst), w] & U32(~(mask << sh) & 0xFFFFFFFF)) | (v << U32(sh))
    if s["dst_unused"] == 1:                              # UNUSED_SEXT
        v = ((v.view(np.int32) << np.int32(32 - wd)) >> np.int32(32 - wd)).view(U32)
    return v << U32(sh)


def _float_mods(rd, a: int, n: int, width: int):
    if not a and not n:
        return rd
    sign = U64(1 << 63) if width == 64 else U32(1 << (width - 1))

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
    if inst.encoding == "VOP3":
        f = inst.fields
    elif inst.sdwa is not None and inst.encoding != "VOPC":
        f = inst.sdwa
    elif inst.dpp is None:
        return None
    else:
        f = {}
    clamp, omod = f.get("clamp", 0), f.get("omod", 0)
    if not is_float or (not clamp and not omod):
        return None
    scale = {0: 1.0, 1: 2.0, 2: 4.0, 3: 0.5}[omod]

    def g(x, mode=0x300):
        if omod:
            x = x * x.dtype.type(scale)
        if clamp:
            # MODE.DX10_CLAMP (bit 8): a clamped NaN becomes 0; without it the NaN passes through
            x = np.where(np.isnan(x), x.dtype.type(0) if mode & 0x100 else x, np.clip(x, 0, 1))
        return x
    return g


@functools.lru_cache(maxsize=None)
def dpp_lanes(ctrl, lanes: int):
    """Source lane of every lane (-1: none) for a DPP16 control (GFX9 and GFX10+ row_share/row_xmask) or, for
    a tuple, the DPP8 lane selects."""
    lane = np.arange(lanes)
    row, inrow = lane // 16, lane % 16
    if isinstance(ctrl, tuple):                         # DPP8: within groups of 8 lanes
        return (lane & ~7) + np.array(ctrl)[lane & 7]
    if ctrl <= 0xFF:                                    # quad_perm
        sel = np.array([(ctrl >> (2 * (i % 4))) & 3 for i in range(lanes)])
        return (lane & ~3) + sel
    if 0x101 <= ctrl <= 0x10F:                          # row_shl
        n = ctrl & 0xF
        return np.where(inrow + n < 16, lane + n, -1)
    if 0x111 <= ctrl <= 0x11F:                          # row_shr
        n = ctrl & 0xF
        return np.where(inrow - n >= 0, lane - n, -1)
    if 0x121 <= ctrl <= 0x12F:                          # row_ror
        return row * 16 + (inrow - (ctrl & 0xF)) % 16
    if ctrl == 0x130:                                   # wave_shl1
        return np.where(lane + 1 < lanes, lane + 1, -1)
    if ctrl == 0x134:                                   # wave_rol1
        return (lane + 1) % lanes
    if ctrl == 0x138:                                   # wave_shr1
        return lane - 1
    if ctrl == 0x13C:                                   # wave_ror1
        return (lane - 1) % lanes
    if ctrl == 0x140:                                   # row_mirror
        return row * 16 + 15 - inrow
    if ctrl == 0x141:                                   # row_half_mirror
        return (lane & ~7) + 7 - (lane & 7)
    if ctrl == 0x142:                                   # row_bcast15
        return np.where(row > 0, row * 16 - 1, -1)
    if ctrl == 0x143:                                   # row_bcast31
        return np.where(row > 1, 31, -1)
    if 0x150 <= ctrl <= 0x15F:                          # row_share (GFX10+): lane n of the row
        return row * 16 + (ctrl & 0xF)
    if 0x160 <= ctrl <= 0x16F:                          # row_xmask (GFX10+): lane ^ n within the row
        return row * 16 + (inrow ^ (ctrl & 0xF))
    raise NotImplementedError(f"DPP control 0x{ctrl:x}")


def dpp_reader(rd, d):
    """Apply a DPP lane permutation to a source reader.  A source lane that does not exist, or (without
    FI, GFX10+) is inactive, reads 0 with BOUND_CTRL (always, for DPP8) and otherwise disables the write.
    GFX10+ DPP words carry ``fi``; row_share/row_xmask exist only there, the wave shifts and row
    broadcasts only on GFX9."""
    ctrl = tuple(d["sel"]) if "sel" in d else d["dpp_ctrl"]
    rdna = "fi" in d
    if not isinstance(ctrl, tuple) and (not rdna and 0x150 <= ctrl <= 0x16F
                                        or rdna and (ctrl in (0x130, 0x134, 0x138, 0x13C, 0x142, 0x143))):
        raise NotImplementedError(f"DPP control 0x{ctrl:x} does not exist on this target")
    dpp_lanes(ctrl, 64)                                 # reject an invalid control at compile time
    fetch_inactive = bool(d.get("fi", 0))
    bound_zero = bool(d.get("bound_ctrl", 0)) or isinstance(ctrl, tuple)

    def f(st, w):
        src_lane = dpp_lanes(ctrl, st.lanes)
        valid_static = src_lane >= 0
        idx = np.where(valid_static, src_lane, 0)
        v = rd(st, w)
        out = v[:, idx]
        valid = np.broadcast_to(valid_static[None, :], out.shape)
        if not fetch_inactive:
            valid = valid & st.exec_mask(w)[:, idx]
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
    if "row_mask" in d:
        rows, banks = _row_bank(d["row_mask"], d["bank_mask"], m.shape[1])
        m = m & rows & banks
    inv = getattr(st, "_dpp_invalid", None)
    if inv is not None:
        m = m & ~inv
        st._dpp_invalid = None
    return m


@functools.lru_cache(maxsize=None)
def _row_bank(row_mask: int, bank_mask: int, lanes: int):
    rows = np.array([(row_mask >> (lane // 16)) & 1 for lane in range(lanes)], dtype=bool)
    banks = np.array([(bank_mask >> ((lane % 16) // 4)) & 1 for lane in range(lanes)], dtype=bool)
    return rows, banks


def carry_dst(inst) -> int:
    """Where a VOP2/VOPC instruction writes its lane mask: VCC, the VOP3B/VOP3 sdst, or (VOPC SDWA with
    SD set) the SDWA word's SDST."""
    if inst.encoding == "VOP3":
        return inst.fields["sdst"]
    if inst.sdwa is not None and inst.sdwa["sd"]:
        return inst.sdwa["sdst"]
    return VCC


def store32(inst, st, w, value, m):
    if inst.sdwa is not None and inst.sdwa["dst_sel"] not in SDWA_SEL:
        raise GPUFault(f"reserved SDWA destination select {inst.sdwa['dst_sel']}")
    if inst.sdwa is not None:
        value = sdwa_dest(inst, st, w, value)
    write_v(st, w, dst(inst), value, dpp_write_mask(inst, st, m))


def store64(inst, st, w, value, m):
    write_v64(st, w, dst(inst), value, dpp_write_mask(inst, st, m))
