"""Lowering of vector ALU instructions: operand descriptors and the modifier record (ModInfo) that the native
general path applies exactly as the numpy readers()/make()/store32() do (semantics/common.py, valu.py).

Operand kinds come from the numpy registry itself: every op registered through ``valu.make`` carries
``factory.spec = (kinds_in, kind_out)``; the other ops name their kinds here, next to the numpy factory
they mirror."""
from __future__ import annotations

import numpy as np

from ..semantics import SEMANTICS
from ..semantics.common import HALF_KINDS, SDWA_SEL, VOP3B_NAMES, carry_dst, fkind, srcs
from ..semantics.valu import FLOAT, INT_CLAMP, OPSEL_DEST, WIDTH
from ..state import VCC
from .layout import F_MODS, K_F16, K_F32, K_F64, K_INT
from .lowerbase import Unsupported, sdesc

KCODE = {"f32": K_F32, "f16": K_F16, "f64": K_F64}
# numpy factories registered under several names run one native handler
ALIAS = {"v_rcp_iflag_f32": "v_rcp_f32", "v_add_nc_u32": "v_add_u32", "v_mul_lo_i32": "v_mul_lo_u32",
         "v_fma_legacy_f16": "v_fma_f16", "v_mad_legacy_f16": "v_mad_f16", "v_mad_legacy_u16": "v_mad_u16",
         "v_mad_legacy_i16": "v_mad_i16", "v_div_fixup_legacy_f16": "v_div_fixup_f16"}


def _reader_kind(k: str) -> str:
    return {"f16": "f16", "f32": "f32", "f64": "f64", "u64": "b64", "i64": "b64", "b64": "b64"}.get(k, "b32")


def dpp_lanes(d) -> np.ndarray:
    """common.dpp_reader's source lane of every lane (-1: invalid)."""
    ctrl = d["dpp_ctrl"]
    lane = np.arange(64)
    row, inrow = lane // 16, lane % 16
    if ctrl <= 0xFF:
        src = (lane & ~3) + np.array([(ctrl >> (2 * (i % 4))) & 3 for i in range(64)])
    elif 0x101 <= ctrl <= 0x10F:
        n = ctrl & 0xF
        src = np.where(inrow + n < 16, lane + n, -1)
    elif 0x111 <= ctrl <= 0x11F:
        n = ctrl & 0xF
        src = np.where(inrow - n >= 0, lane - n, -1)
    elif 0x121 <= ctrl <= 0x12F:
        n = ctrl & 0xF
        src = row * 16 + (inrow - n) % 16
    elif ctrl == 0x130:
        src = np.where(lane + 1 < 64, lane + 1, -1)
    elif ctrl == 0x134:
        src = (lane + 1) % 64
    elif ctrl == 0x138:
        src = lane - 1
    elif ctrl == 0x13C:
        src = (lane - 1) % 64
    elif ctrl == 0x140:
        src = row * 16 + 15 - inrow
    elif ctrl == 0x141:
        src = (lane & ~7) + 7 - (lane & 7)
    elif ctrl == 0x142:
        src = np.where(row > 0, row * 16 - 1, -1)
    elif ctrl == 0x143:
        src = np.where(row > 1, 31, -1)
    else:
        raise Unsupported(f"DPP control 0x{ctrl:x}")
    return src.astype(np.int8)


class Mods(dict):
    """ModInfo fields of one instruction (only what is not the default)."""

    def effective(self) -> bool:
        lists = any(any(self.get(k, ())) for k in ("hi", "absm", "negm"))
        flags = any(self.get(k) for k in ("dpp", "clamp", "omod", "half_keep"))
        sel = any(s != 6 for s in self.get("sel", ()))
        return lists or flags or sel or bool(self.get("sdwa_dst") and self.get("dst_sel", 6) != 6)


def source_mods(inst, n, widths, is_float, kinds) -> Mods:
    """readers(): OP_SEL high halves, SDWA selects and abs/neg, VOP3 abs/neg, DPP lane move and abs/neg."""
    f = inst.fields
    vop3 = inst.encoding in ("VOP3", "VOP3B")
    m = Mods(hi=[0, 0, 0], sel=[6, 6, 6], sext=[0, 0, 0], absm=[0, 0, 0], negm=[0, 0, 0])
    for i in range(n):
        wdt = widths[i] if i < len(widths) else 32
        k = kinds[i]
        sbits = 64 if wdt == 64 else (16 if k == "f16" else 32)
        sign = 1 << (sbits - 1)
        if vop3 and k in HALF_KINDS and f.get("opsel", 0) >> i & 1:
            m["hi"][i] = 1
        a = ng = 0
        if inst.sdwa is not None and i < 2:
            if wdt == 64:
                raise Unsupported("SDWA on a 64-bit source")
            s = inst.sdwa
            if s[f"src{i}_sel"] not in SDWA_SEL:
                raise Unsupported("reserved SDWA select")
            m["sel"][i], m["sext"][i] = s[f"src{i}_sel"], s[f"src{i}_sext"]
            if is_float:
                a, ng = s[f"src{i}_abs"], s[f"src{i}_neg"]
        if is_float and vop3:
            absf = 0 if inst.name in VOP3B_NAMES else f.get("abs", 0)
            a, ng = absf >> i & 1, f.get("neg", 0) >> i & 1
        if inst.dpp is not None:
            if wdt == 64:
                raise Unsupported("DPP on a 64-bit source")
            if is_float and i < 2:
                a, ng = inst.dpp.get(f"src{i}_abs", 0), inst.dpp.get(f"src{i}_neg", 0)
        m["absm"][i] = sign if a else 0
        m["negm"][i] = sign if ng else 0
    if inst.dpp is not None:
        d = inst.dpp
        m["dpp"] = 1
        m["bound_zero"] = int(bool(d["bound_ctrl"]))
        m["dpp_src"] = dpp_lanes(d)
        wm = 0
        for lane in range(64):
            if (d["row_mask"] >> (lane // 16)) & 1 and (d["bank_mask"] >> ((lane % 16) // 4)) & 1:
                wm |= 1 << lane
        m["write_mask"] = wm
    return m


def output_mods(inst, m: Mods, is_float: bool) -> None:
    """common.output_mods: VOP3 (or SDWA) clamp/omod on float results."""
    if inst.encoding == "VOP3":
        f = inst.fields
    elif inst.sdwa is not None and inst.encoding != "VOPC":
        f = inst.sdwa
    else:
        f = {}
    if is_float and (f.get("clamp", 0) or f.get("omod", 0)):
        m["clamp"], m["omod"] = f.get("clamp", 0), f.get("omod", 0)


def dest_mods(inst, m: Mods, half: bool) -> None:
    """valu.half_store (16-bit results: keep a half under VOP3 OP_SEL) and store32's SDWA destination."""
    if half and inst.encoding == "VOP3" and inst.name in OPSEL_DEST:
        m["half_keep"] = 2 if inst.fields.get("opsel", 0) >> 3 & 1 else 1
    if inst.sdwa is not None and inst.encoding != "VOPC":
        if inst.sdwa["dst_sel"] not in SDWA_SEL:
            raise Unsupported("reserved SDWA destination select")
        m["sdwa_dst"] = 1
        m["dst_sel"], m["dst_unused"] = inst.sdwa["dst_sel"], inst.sdwa["dst_unused"]


def set_sources(rec, inst, n, kinds, widths):
    codes = srcs(inst)
    for i in range(n):
        wide = widths[i] == 64
        rec.src(i, *sdesc(codes[i], inst.literal, _reader_kind(kinds[i]), wide))
        if codes[i] >= 256:
            rec.touch(codes[i] - 256 + (2 if wide else 1))


# valu.INT_CLAMP ops with the CLAMP bit: native/engine/ops_valu.h SAT_* (the numpy op on int64, clipped)
SATURATING = {n: i for i, n in enumerate(
    "v_add_u32 v_sub_u32 v_subrev_u32 v_add_i32 v_sub_i32 v_add_u16 v_sub_u16 v_subrev_u16 v_add_i16 v_sub_i16 "
    "v_add3_u32 v_add_lshl_u32 v_mad_u32_u24 v_mad_i32_i24 v_mad_u32_u16 v_mad_i32_i16 v_mad_u16 v_mad_i16".split())}


def valu(rec, inst, cop, kinds_in, kind_out, *, is_float=None, flush=True, out_mods=True, dest=True, vdst=True):
    """A VALU op the native general path handles like make(): sources, modifiers, result kind."""
    n = len(kinds_in)
    widths = [WIDTH.get(k, 32) for k in kinds_in]
    if is_float is None:
        is_float = any(k in FLOAT for k in kinds_in)
    f = inst.fields
    if inst.encoding in ("VOP3", "VOP3B") and f.get("clamp") and inst.name in INT_CLAMP:
        if inst.name not in SATURATING:
            raise Unsupported("integer clamp (saturating) form")
        cop = "v_sat"
        rec.x = SATURATING[inst.name]
    rec.op = cop
    set_sources(rec, inst, n, kinds_in, widths)
    m = source_mods(inst, n, widths, is_float, kinds_in)
    if out_mods:
        output_mods(inst, m, kind_out in FLOAT)
    if dest:
        dest_mods(inst, m, kind_out in HALF_KINDS)
    if m.effective():
        rec.mods = m
    a0 = 0
    if flush:
        for i, k in enumerate(kinds_in):
            a0 |= KCODE.get(k, K_INT) << (4 * i)
        if kind_out in FLOAT:
            a0 |= 1 << 16
    if out_mods and kind_out in FLOAT:
        a0 |= KCODE[kind_out] << 12
    rec.a0 = a0
    if vdst:
        rec.d = f.get("vdst", 0)
        rec.touch(rec.d + (2 if WIDTH.get(kind_out, 32) == 64 else 1))


# ---- ops with their own numpy factory (kinds as those factories read them) ------------------------------------
def lower_make(rec, inst, K):
    """Every op registered through valu.make (the registry's spec gives its kinds)."""
    spec = getattr(SEMANTICS.get(inst.name), "spec", None)
    if spec is None:
        return False
    kinds_in, kind_out = spec
    valu(rec, inst, ALIAS.get(inst.name, inst.name), kinds_in, kind_out)
    return True


def lower_special(rec, inst, K):
    name, f = inst.name, inst.fields
    vop3 = inst.encoding == "VOP3"
    if name in ("v_add_co_u32", "v_addc_co_u32", "v_sub_co_u32", "v_subb_co_u32", "v_subrev_co_u32",
                "v_subbrev_co_u32"):
        kind = {"v_add_co_u32": 0, "v_addc_co_u32": 1, "v_sub_co_u32": 2, "v_subb_co_u32": 3,
                "v_subrev_co_u32": 4, "v_subbrev_co_u32": 5}[name]
        valu(rec, inst, "v_carry", ("b32", "b32"), "b32", flush=False, out_mods=False)
        rec.x = kind
        if kind in (1, 3, 5):
            cin = f["src2"] if vop3 else VCC
            if cin > 126:
                raise Unsupported("carry-in operand")
            rec.s[2] = cin
        rec.sd = carry_dst(inst)
        if rec.sd > 126:
            raise Unsupported("carry-out operand")
        return True
    if name == "v_cndmask_b32":
        valu(rec, inst, "v_cndmask_b32", ("b32", "b32"), "b32", flush=False, out_mods=False)
        sel = f["src2"] if vop3 else VCC
        if sel > 126:
            raise Unsupported("select operand")
        rec.s[2] = sel
        if vop3:
            rec.x = (f.get("abs", 0) & 3) | ((f.get("neg", 0) & 3) << 2)
        return True
    if name in ("v_fmac_f32", "v_mac_f32"):
        valu(rec, inst, name, ("f32", "f32"), "f32", flush=False, dest=True)
        rec.a0 = K_F32 << 12                     # output_mods apply; no denormal flushing
        rec.touch(rec.d + 1)
        return True
    if name == "v_fmac_f64":
        valu(rec, inst, name, ("f64", "f64"), "f64", flush=False, out_mods=False, dest=False)
        rec.a0 = 0
        return True
    if name in ("v_madmk_f32", "v_fmamk_f32", "v_madak_f32", "v_fmaak_f32"):
        valu(rec, inst, "v_fmak_f32", ("f32", "f32"), "f32", flush=False, out_mods=False)
        rec.a0 = 0
        rec.x = 1 if "mk" in name else 0
        rec.imm = inst.literal
        return True
    if name in ("v_mad_u64_u32", "v_mad_i64_i32"):
        valu(rec, inst, name, ("b32", "b32", "b64"), "b64", flush=False, out_mods=False)
        rec.sd = f["sdst"]
        if rec.sd > 126:
            raise Unsupported("carry-out operand")
        return True
    if name in ("v_div_scale_f32", "v_div_scale_f64"):
        k = "f64" if name.endswith("64") else "f32"
        valu(rec, inst, name, (k, k, k), k, flush=False, out_mods=False, dest=False)
        rec.a0 = 0
        rec.sd = f["sdst"]
        if rec.sd > 126:
            raise Unsupported("VCC operand")
        return True
    if name in ("v_div_fmas_f32", "v_div_fmas_f64", "v_div_fixup_f32", "v_div_fixup_f64"):
        k = "f64" if name.endswith("64") else "f32"
        valu(rec, inst, name, (k, k, k), k, flush=False, out_mods=False, dest=False)
        rec.a0 = 0
        return True
    if name in ("v_lshlrev_b64", "v_lshrrev_b64", "v_ashrrev_i64"):
        # valu._shift64 takes a shortcut for inline-constant amounts that differs at 64
        if inst.encoding == "VOP3" and f["src0"] == 192 and f.get("src1", 0) >= 256:
            raise Unsupported("64-bit shift by the constant 64")
        valu(rec, inst, name, ("u32", "i64" if "ashr" in name else "u64"), "u64", flush=False)
        return True
    if name == "v_mbcnt_lo_u32_b32" or name == "v_mbcnt_hi_u32_b32":
        valu(rec, inst, name, ("b32", "b32"), "b32", flush=False, out_mods=False)
        return True
    if name == "v_readlane_b32":
        if f["src0"] < 256:
            raise Unsupported("readlane of a scalar")
        rec.op, rec.d = name, f["vdst"]
        rec.s[0] = f["src0"] - 256
        rec.touch(rec.s[0] + 1)
        rec.src(1, *sdesc(f["src1"], inst.literal))
        return True
    if name == "v_readfirstlane_b32":
        rec.op, rec.d = name, f["vdst"]
        rec.src(0, *sdesc(f["src0"], inst.literal))
        if f["src0"] >= 256:
            rec.touch(f["src0"] - 255)
        return True
    if name == "v_writelane_b32":
        rec.op, rec.d = name, f["vdst"]
        rec.touch(rec.d + 1)
        rec.src(0, *sdesc(f["src0"], inst.literal))
        rec.src(1, *sdesc(f["src1"], inst.literal))
        return True
    if name == "v_swap_b32":
        if f["src0"] < 256 or inst.dpp is not None or inst.sdwa is not None:
            raise Unsupported("v_swap_b32 form")
        rec.op, rec.d = name, f["vdst"]
        rec.s[0] = f["src0"] - 256
        rec.touch(max(rec.d, rec.s[0]) + 1)
        return True
    if name.startswith(("v_cvt_f32_fp8", "v_cvt_f32_bf8", "v_cvt_pk_f32_fp8", "v_cvt_pk_f32_bf8")):
        from ..semantics.valu16 import _byte_sel
        packed = name.startswith("v_cvt_pk_")
        if packed:
            sel = 2 if (inst.sdwa is not None and inst.sdwa["src0_sel"] == 5) or \
                (vop3 and f.get("opsel", 0) & 1) else 0
        else:
            sel = _byte_sel(inst)
        rec.op, rec.d = "v_cvt_from8", f["vdst"]
        rec.x = sel | (16 if packed else 0) | (32 if name.endswith("bf8") else 0)
        rec.src(0, *sdesc(f["src0"], inst.literal))
        if f["src0"] >= 256:
            rec.touch(f["src0"] - 255)
        rec.touch(rec.d + 2)
        return True
    if name in ("v_cvt_pk_fp8_f32", "v_cvt_pk_bf8_f32"):
        valu(rec, inst, "v_cvt_pk_to8", ("f32", "f32"), "f32", flush=False, out_mods=False, dest=False)
        rec.a0 = 0
        rec.x = (f.get("opsel", 0) >> 3 & 1) | (2 if f.get("clamp", 0) else 0) | (4 if "bf8" in name else 0)
        return True
    if name == "v_cvt_pkaccum_u8_f32":
        valu(rec, inst, name, ("f32", "u32"), "u32", is_float=True, flush=False, out_mods=False, dest=False)
        rec.a0 = 0
        return True
    if name == "v_mqsad_u32_u8":
        c0, c1, c2 = srcs(inst)
        rec.op, rec.d = name, f["vdst"]
        rec.src(0, *sdesc(c0, inst.literal, "b64", True))
        rec.src(1, *sdesc(c1, inst.literal))
        rec.src(2, *sdesc(c2, inst.literal))
        for code, n in ((c0, 2), (c1, 1), (c2, 4)):
            if code >= 256:
                rec.touch(code - 256 + n)
        rec.touch(rec.d + 4)
        return True
    if name in ("v_nop", "v_clrexcp"):
        rec.op = "v_nop"
        return True
    if name in ("v_accvgpr_read_b32", "v_accvgpr_read", "v_accvgpr_write_b32", "v_accvgpr_write",
                "v_accvgpr_mov_b32"):
        acc = K.accum_offset
        src, dst = f["src0"], f["vdst"]
        rec.op = "v_mov_b32"
        if "read" in name:
            rec.s[0], rec.d = src - 256 + acc, dst
        elif "write" in name:
            rec.src(0, *sdesc(src, inst.literal)) if src < 256 else None
            if src >= 256:
                rec.s[0] = src - 256
            rec.d = dst + acc
        else:
            rec.s[0], rec.d = src - 256 + acc, dst + acc
        if rec.s[0] < 0x4000:
            rec.touch(rec.s[0] + 1)
        rec.touch(rec.d + 1)
        return True
    return False


# ---- compares -----------------------------------------------------------------------------------------------
FCOND = {c: i for i, c in enumerate("f lt eq le gt lg ge o u nge nlg ngt nle neq nlt tru".split())}
FCOND["t"] = 15
ICOND = {"f": 0, "lt": 1, "eq": 2, "le": 3, "gt": 4, "ne": 5, "lg": 5, "ge": 6, "t": 7, "tru": 7}
CMP_TYPES = {"f32": (32, True), "f64": (64, True), "f16": (32, True), "i32": (32, False), "u32": (32, False),
             "i64": (64, False), "u64": (64, False), "i16": (32, False), "u16": (32, False)}


def lower_vcmp(rec, inst, K):
    name = inst.name
    if not name.startswith(("v_cmp_", "v_cmpx_")) or SEMANTICS.get(name) is None:
        return False
    parts = name.split("_")
    writes_exec = parts[1] == "cmpx"
    cond, t = parts[2], parts[3]
    if t not in CMP_TYPES:
        raise Unsupported(f"compare type {t}")
    width, is_float = CMP_TYPES[t]
    if cond == "class":
        if t == "f16":
            raise Unsupported("v_cmp_class_f16")
        kinds = (fkind(width, True), "f32")
        valu(rec, inst, f"vcmp_class_{t}", kinds, "b32", is_float=True, flush=False, out_mods=False, dest=False,
             vdst=False)
        rec.sd = inst.fields["vdst"] if inst.encoding == "VOP3" else VCC
    else:
        kinds = (t, t) if t in ("f16", "i16", "u16") else (fkind(width, is_float),) * 2
        valu(rec, inst, f"vcmp_{t}", kinds, "b32", is_float=is_float, flush=False, out_mods=False, dest=False,
             vdst=False)
        rec.x = FCOND[cond] if is_float else ICOND[cond]
        rec.sd = inst.fields["vdst"] if inst.encoding == "VOP3" else carry_dst(inst)
    rec.a0 = 0
    if writes_exec:
        rec.x |= 16
    if rec.sd > 126:
        raise Unsupported("compare destination")
    return True
