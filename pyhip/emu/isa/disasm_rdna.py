"""Disassembly text in llvm-objdump-19's syntax for RDNA (gfx1030, gfx1100; wave32 syntax, as llvm-objdump
prints these targets).

Like ``disasm.py`` for GFX9: the operand order and widths come from the llvm-mc sample kept in the generated
tables (``match_sample``); values and modifiers come from the instruction.  RDNA specifics: DPP16 (row_share,
row_xmask, fi), DPP8, GFX11 VOP3 DPP, VOPD, the s_waitcnt layouts of GFX10/GFX11, s_delay_alu, the unified
buffer formats, and the dlc bit.
"""
from __future__ import annotations

import functools
import re
import struct

from . import formats_rdna as R
from .decoder_rdna import family, tables
from .disasm import (_FLOATS, _SINGLE, _SPECIAL, _literal, _mods, _parse_token, _sdwa_mods, _sdwa_suffix,
                     match_sample)

_SRC9 = {"src0", "src1", "src2"}


@functools.lru_cache(maxsize=None)
def template(fam: int, enc: str, op: int):
    entry = tables(fam).OPCODES[enc][op]
    sample = bytes.fromhex(entry[3])
    w0 = struct.unpack_from("<I", sample)[0]
    w1 = struct.unpack_from("<I", sample, 4)[0] if len(sample) >= 8 else 0
    return entry[1], match_sample(entry[2], R.fields(enc, w0, w1, fam), enc)


def _info(fam: int, enc: str, op: int) -> dict:
    return tables(fam).INFO[enc][op]


def _reg(kind: str, n: int, width: int) -> str:
    """Register text as LLVM decodes it for RDNA (s102-s105 are plain SGPRs; M0 = 124, NULL = 125 after the
    decoder's normalisation)."""
    if kind == "s":
        if 108 <= n < 124:
            kind, n = "ttmp", n - 108
            if width > 1:
                n &= ~1 if width == 2 else ~3
        elif n == 106 and width == 2:
            return "vcc"
        elif n == 126 and width == 2:
            return "exec"
        elif n in (106, 107, 126, 127) and width == 1:
            return _SINGLE[n]
        elif n in (124, 125) or n in _SPECIAL and n > 127:
            return _SPECIAL[n]
        elif width > 1 and n < 106:
            n &= ~1 if width == 2 else ~3
    return f"{kind}{n}" if width == 1 else f"{kind}[{n}:{n + width - 1}]"


def _src(code: int, width: int, lit, kind_hint: str, typ="b32") -> str:
    if code >= 256:
        return _reg("v", code - 256, width)
    if 128 <= code <= 192:
        return str(code - 128)
    if 193 <= code <= 208:
        return str(192 - code)
    if code in _FLOATS:
        if typ == "i16":
            return {240: "0x3800", 241: "0xb800", 242: "0x3c00", 243: "0xbc00", 244: "0x4000", 245: "0xc000",
                    246: "0x4400", 247: "0xc400", 248: "0x3118"}[code]
        if code == 248 and typ in ("f64", "b64"):
            return "0.15915494309189532"
        return _FLOATS[code]
    if code == 255:
        return f"0x{lit:x}" if typ == "b64" and not 0 <= lit <= 64 else _literal(lit, typ)
    return _reg("s", code, width)


def format_instruction(inst, target: str) -> str:
    fam = family(target)
    enc, f = inst.encoding, inst.fields
    if enc == "VOPD":
        return _vopd(inst, fam)
    if enc == "MIMG":
        return _mimg(inst, fam)
    try:
        mnem, tmpl = template(fam, enc, inst.opcode)
    except KeyError:
        return f"<unknown {enc} {inst.opcode}>"
    if inst.dpp is not None:
        mnem = _info(fam, enc, inst.opcode).get("dpp_name") or re.sub(r"_e32$", "", mnem) + "_dpp"
    sd = inst.sdwa
    if sd is not None:
        mnem = re.sub(r"_e32$", "", mnem) + "_sdwa"
    special = _special(inst, fam, mnem)
    if special is not None:
        return special
    info = _info(fam, enc, inst.opcode)
    types = info.get("src_types", {})
    mods = info.get("mods", 0)
    vop3b = enc == "VOP3" and any(r == "sdst" for r, k, w in tmpl)
    ops = []
    for role, kind, width in tmpl:
        if kind is None:
            ops.append(role)
            continue
        if kind == "lit":
            ops.append(f"0x{inst.literal:x}")
            continue
        v = f[role]
        if kind == "v16" and not (role in _SRC9 and v < 256):
            ops.append(f"v{v - 256 if v >= 256 else v}.{'h' if _t16_hi(f, role) else 'l'}")
            continue
        if enc in ("MUBUF", "MTBUF") and role == "vdata" and f.get("tfe"):
            width += 1
        if enc == "MUBUF" and role == "vdata" and f.get("lds") and "load" in inst.name:
            continue
        if enc in ("GLOBAL", "SCRATCH", "FLAT") and role == "addr":
            if enc == "SCRATCH":
                ops.append(_reg("v", v, 1) if _scratch_vaddr(f, fam) else "off")
            elif enc == "FLAT":
                ops.append(_reg(kind, v, width))
            else:
                ops.append(_reg(kind, v, 1 if f["saddr"] != R.SADDR_OFF else 2))
            continue
        if enc in ("MUBUF", "MTBUF") and role == "vaddr":
            n = 2 if f["offen"] and f["idxen"] else 1
            ops.append(_reg("v", v, n) if f["offen"] or f["idxen"] else "off")
            continue
        if role in _SRC9:
            idx = int(role[-1])
            text = _src(v, width, inst.literal, kind, types.get(role) or "b32")
            if sd is not None:
                ops.append(_sdwa_mods(text, 0, sd))
            elif inst.dpp is not None and enc in ("VOP1", "VOP2", "VOPC") and idx == 0:
                ops.append(_dpp_mods(text, 0, inst.dpp))
            elif enc == "VOP3P" and "_mix" in inst.name:
                ops.append(_mods(text, idx, f, enc, mix=True))
            else:
                ops.append(_mods(text, idx, f, enc, vop3b, mods))
        elif role == "vsrc1":
            if sd is not None:
                text = _src(v, width, inst.literal, "s", "b32") if sd["s1"] else _reg(kind, v, width)
                ops.append(_sdwa_mods(text, 1, sd))
            elif inst.dpp is not None:
                ops.append(_dpp_mods(_reg(kind, v, width), 1, inst.dpp))
            else:
                ops.append(_reg(kind, v, width))
        elif role in ("ssrc0", "ssrc1") or role == "soffset" and enc != "SMEM":
            ops.append(_src(v, width, inst.literal, "s", types.get(role) or "b32"))
        elif role == "saddr":
            ops.append("off" if v == R.SADDR_OFF else _reg("s", v, 1 if enc == "SCRATCH" else 2))
        else:
            ops.append(_reg(kind, v, width))
    if f.get("t16"):                                   # GFX11 true16 high halves (newer LLVM's syntax)
        ops = [o + ".h" if kind in ("v", "vs") and r in ("src0", "vsrc1", "vdst") and _t16_hi(f, r)
               and re.fullmatch(r"-?\|?v\d+\|?", o) and (r != "src0" or f["src0"] >= 256) else o
               for o, (r, kind, w) in zip(ops, [t for t in tmpl if t[1] != "lit"] + [(None, None, 1)] * 8)]
    if sd is not None and enc == "VOPC" and sd["sd"] and ops and ops[0] == "vcc":
        ops[0] = _reg("s", sd["sdst"], 2)
    if enc in ("GLOBAL", "FLAT") and "atomic" in inst.name and f["glc"] and not any(r == "vdst" for r, k, w in tmpl):
        dwidth = next((w for r, k, w in tmpl if r == "data"), 1)
        ops.insert(0, _reg("v", f["vdst"], dwidth // 2 if "cmpswap" in inst.name else dwidth))
    text = mnem + (" " + ", ".join(ops) if ops else "")
    return text + _suffix(inst, fam, mnem, tmpl)


def _t16_hi(f, role) -> bool:
    return bool(f.get("opsel", 0) >> {"src0": 0, "vsrc1": 1, "vdst": 3}.get(role, 9) & 1)


def _scratch_vaddr(f, fam) -> bool:
    return bool(f["sve"]) if fam == 11 else f["saddr_raw"] == R.NULL


def _dpp_mods(text: str, i: int, d: dict) -> str:
    if d.get(f"src{i}_abs"):
        text = f"|{text}|"
    return f"-{text}" if d.get(f"src{i}_neg") else text


def _special(inst, fam, mnem):
    f, name = inst.fields, inst.name
    if inst.encoding == "SCRATCH":
        return _scratch(inst, fam, mnem)
    if name in ("s_setreg_b32", "s_setreg_imm32_b32"):
        src = _reg("s", f["sdst"], 1) if name == "s_setreg_b32" else _literal(inst.literal, "b32").replace("0.15915494", "0x3e22f983")
        return f"{mnem} {_hwreg(f['simm16'], fam)}, {src}"
    if name == "s_getreg_b32":
        return f"{mnem} {_reg('s', f['sdst'], 1)}, {_hwreg(f['simm16'], fam)}"
    if name in ("s_atc_probe", "s_atc_probe_buffer"):      # a probe-type immediate, then the base
        v = f["sdata"]
        base = _reg("s", f["sbase"], 4 if name.endswith("buffer") else 2)
        _, tmpl = template(fam, inst.encoding, inst.opcode)
        text = f"{mnem} {v if v <= 64 else f'0x{v:x}'}, {base}" + _suffix(inst, fam, mnem, tmpl)
        return re.sub(r"( glc| dlc)+$", "", text)
    if name == "s_version":
        return f"{mnem} {_version(f['simm16'])}"
    if name in ("s_sendmsg_rtn_b32", "s_sendmsg_rtn_b64"):
        return f"{mnem} {_reg('s', f['sdst'], 2 if name.endswith('64') else 1)}, {_sendmsg(f['ssrc0'], fam, rtn=True)}"
    return None


def _scratch(inst, fam, mnem):
    """scratch_* operands: [vdst,] vaddr|off, [data,] saddr|off."""
    f, name = inst.fields, inst.name
    _, tmpl = template(fam, inst.encoding, inst.opcode)
    width = {r: w for r, k, w in tmpl}
    ops = []
    if "vdst" in width:
        ops.append(_reg("v", f["vdst"], width["vdst"]))
    ops.append(_reg("v", f["addr"], 1) if _scratch_vaddr(f, fam) else "off")
    if "data" in width:
        ops.append(_reg("v", f["data"], width["data"]))
    ops.append("off" if f["saddr"] == R.SADDR_OFF else _reg("s", f["saddr"], 1))
    return mnem + " " + ", ".join(ops) + _suffix(inst, fam, mnem, tmpl)


def _vopd(inst, fam):
    f = inst.fields
    halves = []
    for enc, op, d, s0, s1 in (("VOPDX", f["opx"], "vdstx", "srcx0", "vsrcx1"), ("VOPDY", f["opy"], "vdsty", "srcy0", "vsrcy1")):
        mnem = tables(fam).OPCODES[enc][op][1]
        entry = tables(fam).OPCODES[enc][op][2]
        n = len([p for p in entry.split(",") if p.strip()])
        typ = tables(fam).INFO[enc][op].get("src_types", {}).get("src0") or "b32"
        ops = [_reg("v", f[d], 1), _src(f[s0], 1, inst.literal, "v", typ)]
        if "fmamk" in mnem:
            ops += [f"0x{inst.literal:x}", _reg("v", f[s1], 1)]
        elif "fmaak" in mnem:
            ops += [_reg("v", f[s1], 1), f"0x{inst.literal:x}"]
        elif n >= 3:
            ops.append(_reg("v", f[s1], 1))
        halves.append(mnem + " " + ", ".join(ops))
    return " :: ".join(halves)


_DIMS = ("1D", "2D", "3D", "CUBE", "1D_ARRAY", "2D_ARRAY", "2D_MSAA", "2D_MSAA_ARRAY")


def _mimg(inst, fam):
    """image_*: data, address (one tuple, or the NSA list), T# (4 dwords for BVH), [S#], then the modifiers;
    operand sizes from the decoder (``data_regs``, ``addr_regs``)."""
    f = inst.fields
    m = _info(fam, "MIMG", inst.opcode)["mimg"]
    widths = f["addr_regs"]
    if f["nsa"]:
        regs = [f["vaddr"]] + [inst.words[2 + i // 4] >> 8 * (i % 4) & 0xFF for i in range(4 * f["nsa"])]
        addr = "[" + ", ".join(_reg("v", regs[i], w) for i, w in enumerate(widths)) + "]"
    else:
        addr = _reg("v", f["vaddr"], widths[0])
    null = R.NULL if fam == 10 else R.NULL11      # MIMG SGPR fields are not renumbered
    ops = [_reg("v", f["vdata"], f["data_regs"]), addr,
           "null" if f["srsrc"] == null else _reg("s", f["srsrc"], 8 if m["dim"] else 4)]
    if m["samp"]:
        ops.append("null" if f["ssamp"] == null else _reg("s", f["ssamp"], 4))
    out = inst.name + " " + ", ".join(ops)
    if m["dim"]:
        if f["dmask"]:
            out += f" dmask:0x{f['dmask']:x}"
        out += f" dim:SQ_RSRC_IMG_{_DIMS[f['dim']]}"
    for bit in ("unorm", "glc", "slc", "dlc", "r128", "a16", "tfe", "lwe", "d16"):
        if f.get(bit):
            out += " " + bit
    return out


def _hwreg(v: int, fam: int) -> str:
    rid, off, size = v & 0x3F, v >> 6 & 0x1F, (v >> 11 & 0x1F) + 1
    name = tables(fam).HWREGS.get(rid, str(rid))
    return f"hwreg({name})" if off == 0 and size == 32 else f"hwreg({name}, {off}, {size})"


def _sendmsg(v: int, fam: int, rtn: bool = False) -> str:
    if rtn:
        names = {128: "MSG_RTN_GET_DOORBELL", 129: "MSG_RTN_GET_DDID", 130: "MSG_RTN_GET_TMA",
                 131: "MSG_RTN_GET_REALTIME", 132: "MSG_RTN_SAVE_WAVE", 133: "MSG_RTN_GET_TBA"}
        return f"sendmsg({names[v]})" if v in names else f"sendmsg({v}, 0, 0)"
    text = tables(fam).SENDMSG.get(v & 0x3FF if fam == 10 else v, str(v))
    if v > 0x3FF and not text.startswith("sendmsg(MSG_"):       # GFX10 ignores the bits above 9 when the
        return str(v)                                          # rest names a message, else prints the value
    return text


_UC_VERSION = {0: "UC_VERSION_GFX7", 4: "UC_VERSION_GFX10", 6: "UC_VERSION_GFX11", 9: "UC_VERSION_GFX12"}


def _version(v: int) -> str:
    if v & 0x1F00:
        return f"0x{v:x}" if v > 64 else str(v)
    flags = [n for b, n in ((13, "UC_VERSION_W64_BIT"), (14, "UC_VERSION_W32_BIT"), (15, "UC_VERSION_MDP_BIT")) if v >> b & 1]
    low = v & 0xFF
    text = _UC_VERSION.get(low, str(low) if flags or low <= 64 else f"0x{low:x}")
    for i, fl in enumerate(flags):
        text = ("(" + text + ")" if i else text) + "|" + fl
    return text


# s_waitcnt_depctr fields: (name, shift, width), printed in this order; bits 5 and 6 must be zero
_DEPCTR = (("depctr_hold_cnt", 7, 1), ("depctr_sa_sdst", 0, 1), ("depctr_va_vdst", 12, 4), ("depctr_va_sdst", 9, 3),
           ("depctr_va_ssrc", 8, 1), ("depctr_va_vcc", 1, 1), ("depctr_vm_vsrc", 2, 3))


def _depctr(v: int) -> str:
    if v & 0x60:
        return f"0x{v:x}" if v > 64 else str(v)
    vals = [(n, v >> sh & ((1 << w) - 1), (1 << w) - 1) for n, sh, w in _DEPCTR]
    shown = [(n, x) for n, x, d in vals if x != d] or [(n, x) for n, x, d in vals]
    return " ".join(f"{n}({x})" for n, x in shown)


_INSTID = ("NO_DEP", "VALU_DEP_1", "VALU_DEP_2", "VALU_DEP_3", "VALU_DEP_4", "TRANS32_DEP_1", "TRANS32_DEP_2",
           "TRANS32_DEP_3", "FMA_ACCUM_CYCLE_1", "SALU_CYCLE_1", "SALU_CYCLE_2", "SALU_CYCLE_3")
_SKIP = ("SAME", "NEXT", "SKIP_1", "SKIP_2", "SKIP_3", "SKIP_4")


def _delay_alu(v: int) -> str:
    id0, skip, id1 = v & 0xF, v >> 4 & 7, v >> 7 & 0xF
    bad_id, bad_skip = "/* invalid instid value */", "/* invalid instskip value */"
    parts = []
    if id0:
        parts.append(f"instid0({_INSTID[id0] if id0 < len(_INSTID) else bad_id})")
    if skip:
        parts.append(f"instskip({_SKIP[skip] if skip < len(_SKIP) else bad_skip})")
    if id1:
        parts.append(f"instid1({_INSTID[id1] if id1 < len(_INSTID) else bad_id})")
    return " | ".join(parts) if parts else "0"


def _waitcnt(v: int, fam: int) -> str:
    if fam == 10:
        vm, exp, lgkm = (v & 0xF) | (v >> 14 & 3) << 4, v >> 4 & 7, v >> 8 & 0x3F
    else:
        vm, exp, lgkm = v >> 10 & 0x3F, v & 7, v >> 4 & 0x3F
    parts = []
    if vm != 0x3F:
        parts.append(f"vmcnt({vm})")
    if exp != 7:
        parts.append(f"expcnt({exp})")
    if lgkm != 0x3F:
        parts.append(f"lgkmcnt({lgkm})")
    if not parts:
        return "vmcnt(63) expcnt(7) lgkmcnt(63)"
    return " ".join(parts)


def _suffix(inst, fam: int, mnem: str, tmpl) -> str:
    enc, f, name = inst.encoding, inst.fields, inst.name
    out = ""
    if enc == "SOPP":
        v = f["simm16"]
        if name == "s_waitcnt":
            return " " + _waitcnt(v, fam)
        if name == "s_delay_alu":
            return " " + _delay_alu(v)
        if name in ("s_endpgm", "s_barrier", "s_icache_inv", "s_endpgm_saved", "s_code_end", "s_wakeup",
                    "s_ttracedata", "s_endpgm_ordered_ps_done", "s_wait_idle") and v == 0:
            return ""
        if name.startswith(("s_branch", "s_cbranch", "s_endpgm")):
            return f" {v}"
        if name in ("s_sendmsg", "s_sendmsghalt"):
            return " " + _sendmsg(v, fam)
        if name == "s_waitcnt_depctr":
            return " " + _depctr(v)
        if name == "s_denorm_mode":
            return f" {v}" if v <= 64 else f" 0x{v:x}"
        return f" {v}" if v <= 64 and name not in _HEX_SOPP else f" 0x{v:x}"
    if enc == "SOPK":
        v = f["simm16"]
        if name in ("s_subvector_loop_begin", "s_subvector_loop_end", "s_call_b64") or name.startswith("s_cbranch"):
            return f", {v}"
        return f", 0x{v:x}"
    if enc == "SMEM":
        off = f["offset"]
        hx = f"0x{off:x}" if off >= 0 else f"-0x{-off:x}"
        if f["soe"] or not off:
            s = f", {_reg('s', f['soffset'], 1)}" + (f" offset:{hx}" if off else "")
        else:
            s = f", {hx}"
        if not any(r == "sbase" for r, k, w in tmpl):
            return ""
        if f["glc"]:
            s += " glc"
        if f["dlc"]:
            s += " dlc"
        return s
    if enc in ("VOP3", "VOP3P"):
        if enc == "VOP3P":
            nsrc = sum(1 for r, k, w in tmpl if r in _SRC9)
            opsel = [f["opsel"] >> i & 1 for i in range(nsrc)]
            opsel_hi = [(f["opsel_hi"] | f["opsel_hi2"] << 2) >> i & 1 for i in range(nsrc)]
            mix = "_mix" in name
            if any(opsel):
                out += f" op_sel:[{','.join(map(str, opsel))}]"
            if (any(opsel_hi) if mix else not all(opsel_hi)):
                out += f" op_sel_hi:[{','.join(map(str, opsel_hi))}]"
            if f["neg"] & ((1 << nsrc) - 1) and not mix:
                out += f" neg_lo:[{','.join(str(f['neg'] >> i & 1) for i in range(nsrc))}]"
            if f["neg_hi"] & ((1 << nsrc) - 1) and not mix:
                out += f" neg_hi:[{','.join(str(f['neg_hi'] >> i & 1) for i in range(nsrc))}]"
            if f["clamp"]:
                out += " clamp"
            return out + _dpp_suffix(inst)
        info = _info(fam, enc, inst.opcode)
        if info.get("opsel") and f["opsel"]:
            nsrc = sum(1 for r, k, w in tmpl if r in _SRC9)
            bits = [f["opsel"] >> i & 1 for i in range(nsrc)] + [f["opsel"] >> 3 & 1]
            if name.startswith("v_permlane"):           # op_sel = [FI, BOUND_CTRL]
                bits = [f["opsel"] & 1, f["opsel"] >> 1 & 1]
            out += f" op_sel:[{','.join(map(str, bits))}]"
        if f["clamp"]:
            out += " clamp"
        if f["omod"]:
            out += {1: " mul:2", 2: " mul:4", 3: " div:2"}[f["omod"]]
        return out + _dpp_suffix(inst)
    if inst.sdwa is not None:
        return _sdwa_suffix(inst)
    if inst.dpp is not None:
        return _dpp_suffix(inst)
    if enc == "DS":
        if re.match(r"ds_\w*(read|write|wrxchg)2|ds_\w*2addr", name):
            if f["offset0"]:
                out += f" offset0:{f['offset0']}"
            if f["offset1"]:
                out += f" offset1:{f['offset1']}"
        else:
            off = f["offset0"] | f["offset1"] << 8
            if off:
                out += f" offset:{off}"
        if f["gds"]:
            out += " gds"
        return out
    if enc in ("FLAT", "GLOBAL", "SCRATCH"):
        if f["offset"]:
            out += f" offset:{f['offset']}"
        return out + _cache_bits(f)
    if enc in ("MUBUF", "MTBUF"):
        if enc == "MTBUF" and f["format"] != 1:
            fmt = tables(fam).BUF_FORMATS.get(f["format"], str(f["format"]))
            out += f" format:[{fmt}]" if fmt.startswith("BUF_") else f" format:{fmt}"
        if f["idxen"] and f["offen"]:
            out += " idxen offen"
        elif f["offen"]:
            out += " offen"
        elif f["idxen"]:
            out += " idxen"
        if f["offset"]:
            out += f" offset:{f['offset']}"
        out += _cache_bits(f)
        if f.get("tfe"):
            out += " tfe"
        if enc == "MUBUF" and f.get("lds"):
            out += " lds"
        return out
    return out


_WAVE_SHIFT = {0x130: "wave_shl", 0x134: "wave_rol", 0x138: "wave_shr", 0x13C: "wave_ror"}
_HEX_SOPP = frozenset(("s_clause", "s_inst_prefetch", "s_set_inst_prefetch_distance", "s_round_mode",
                       "s_ttracedata_imm", "s_waitcnt_depctr"))


def _cache_bits(f) -> str:
    return "".join(" " + b for b in ("glc", "slc", "dlc") if f.get(b))


def _dpp_suffix(inst) -> str:
    d = inst.dpp
    if d is None:
        return ""
    if "sel" in d:
        return f" dpp8:[{','.join(map(str, d['sel']))}]" + (" fi:1" if d["fi"] else "")
    c = d["dpp_ctrl"]
    if c <= 0xFF:
        ctl = f"quad_perm:[{c & 3},{c >> 2 & 3},{c >> 4 & 3},{c >> 6 & 3}]"
    elif 0x101 <= c <= 0x10F:
        ctl = f"row_shl:{c & 0xF}"
    elif 0x111 <= c <= 0x11F:
        ctl = f"row_shr:{c & 0xF}"
    elif 0x121 <= c <= 0x12F:
        ctl = f"row_ror:{c & 0xF}"
    elif c == 0x140:
        ctl = "row_mirror"
    elif c == 0x141:
        ctl = "row_half_mirror"
    elif 0x150 <= c <= 0x15F:
        ctl = f"row_share:{c & 0xF}"
    elif 0x160 <= c <= 0x16F:
        ctl = f"row_xmask:{c & 0xF}"
    elif c in (0x130, 0x134, 0x138, 0x13C):
        ctl = f"/* {_WAVE_SHIFT[c]} is not supported starting from GFX10 */"
    elif c in (0x142, 0x143):
        ctl = "/* row_bcast is not supported starting from GFX10 */"
    else:
        ctl = "/* Invalid dpp_ctrl value */"
    out = f" {ctl} row_mask:0x{d['row_mask']:x} bank_mask:0x{d['bank_mask']:x}"
    if d["bound_ctrl"]:
        out += " bound_ctrl:1"
    if d["fi"]:
        out += " fi:1"
    return out
