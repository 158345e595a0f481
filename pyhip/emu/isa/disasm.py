"""Disassembly text in llvm-objdump-19's syntax for GFX9 (gfx90a, gfx942) and RDNA (gfx1030, gfx1100; wave32
syntax, as llvm-objdump prints these targets).

Operand order and widths come from the llvm-mc sample kept in the generated tables: each sample operand is
matched to the encoding field that produced it (``match_sample``), so the formatter knows, per opcode, which
field goes where and how many registers it spans; values and modifiers come from the instruction itself.
What the families print differently is data or a small hook chosen by the family: register names (GFX9's
flat_scratch / xnack_mask pairs), s_waitcnt layouts, SMEM offsets, DPP controls (GFX9's wave shifts and row
broadcasts; RDNA's row_share, row_xmask, fi, DPP8), cache bits (gfx94x's sc0/sc1/nt, RDNA's dlc), buffer
formats, scratch and image operands, and RDNA's VOPD, s_delay_alu and GFX11 VOP3 DPP.
"""
from __future__ import annotations

import functools
import re
import struct

from . import formats as F
from .decoder import decode
from .families import family, module, tables

_FLOATS = {240: "0.5", 241: "-0.5", 242: "1.0", 243: "-1.0", 244: "2.0", 245: "-2.0", 246: "4.0", 247: "-4.0",
           248: "0.15915494"}
_SPECIAL = {235: "src_shared_base", 236: "src_shared_limit", 237: "src_private_base", 238: "src_private_limit",
            239: "src_pops_exiting_wave_id", 251: "src_vccz", 252: "src_execz", 253: "src_scc",
            254: "src_lds_direct", 124: "m0", 125: "null"}
_PAIRS = {102: "flat_scratch", 104: "xnack_mask", 106: "vcc", 126: "exec"}
_SINGLE = {102: "flat_scratch_lo", 103: "flat_scratch_hi", 104: "xnack_mask_lo", 105: "xnack_mask_hi",
           106: "vcc_lo", 107: "vcc_hi", 126: "exec_lo", 127: "exec_hi"}
_TOKEN = re.compile(r"^(-?\|?)(v|s|a|ttmp)(?:\[(\d+):(\d+)\]|(\d+))(\.[lh])?\|?$")
_ROLES = {
    "SOP2": ("sdst", "ssrc0", "ssrc1"), "SOPK": ("sdst",), "SOP1": ("sdst", "ssrc0"), "SOPC": ("ssrc0", "ssrc1"),
    "SMEM": ("sdata", "sbase"), "VOP1": ("vdst", "src0"), "VOP2": ("vdst", "src0", "vsrc1"),
    "VOPC": ("src0", "vsrc1"), "VOP3": ("vdst", "sdst", "src0", "src1", "src2"),
    "VOP3P": ("vdst", "src0", "src1", "src2"), "DS": ("vdst", "addr", "data0", "data1"),
    "FLAT": ("vdst", "addr", "data", "saddr"), "GLOBAL": ("vdst", "addr", "data", "saddr"),
    "SCRATCH": ("vdst", "addr", "data", "saddr"), "MUBUF": ("vdata", "vaddr", "srsrc", "soffset"),
    "MTBUF": ("vdata", "vaddr", "srsrc", "soffset"),
}
_SRC9 = {"src0", "src1", "src2"}
_KINDS = {"sdst": "s", "ssrc0": "s", "ssrc1": "s", "sdata": "s", "sbase": "s", "srsrc": "s", "saddr": "s",
          "soffset": "s", "vsrc1": ("v", "a", "v16"), "addr": "va", "data": "va", "data0": "va", "data1": "va",
          "vdata": "va", "vaddr": "va", "vdst": ("v", "s", "a", "v16"), "src0": ("v", "s", "v16"),
          "src1": ("v", "s", "v16"), "src2": ("v", "s", "v16")}
_CONST_ROLES = {"src0", "src1", "src2", "ssrc0", "ssrc1", "soffset"}


def _const_code(tok: str):
    if re.fullmatch(r"-?\d+", tok):
        v = int(tok)
        if 0 <= v <= 64:
            return 128 + v
        if -16 <= v < 0:
            return 192 - v
    for code, text in _FLOATS.items():
        if tok == text:
            return code
    return None


def _parse_token(tok: str):
    m = _TOKEN.match(tok)
    if not m:
        return None
    kind = m.group(2) + ("16" if m.group(6) else "")
    if m.group(5) is not None:
        n, width = int(m.group(5)), 1
    else:
        n, width = int(m.group(3)), int(m.group(4)) - int(m.group(3)) + 1
    return kind, n, width


@functools.lru_cache(maxsize=None)
def template(target: str, enc: str, op: int):
    """(LLVM mnemonic, [(role, kind, width)]) for the opcode: role is a field name or a literal token (e.g.
    'vcc', 'off')."""
    entry = tables(target)[0][enc][op]
    sample = bytes.fromhex(entry[3])
    w0 = struct.unpack_from("<I", sample)[0]
    w1 = struct.unpack_from("<I", sample, 4)[0] if len(sample) >= 8 else 0
    return entry[1], match_sample(entry[2], F.fields(enc, w0, w1, family(target)), enc)


def match_sample(operand_text: str, fl: dict, enc: str) -> tuple:
    """Match each operand of an llvm-mc sample's text to the encoding field that produced it (by value):
    ((role, kind, width), ...) with role a field name or fixed text such as 'vcc' or 'off'."""
    text = re.sub(r"/\*.*?\*/", "", operand_text)
    text = re.sub(r"\s\w+:\[[^\]]*\]", "", text)          # bracketed modifiers such as op_sel:[0,1]
    parts = [p.strip() for p in text.split(",")] if text else []
    if parts:
        parts[-1] = parts[-1].split(" ")[0]
    out, used = [], set()
    roles = _ROLES.get(enc, ())
    if enc in ("DS", "FLAT", "GLOBAL", "SCRATCH", "MUBUF", "MTBUF"):     # results match last on ties
        roles = tuple(r for r in roles if r not in ("vdst", "vdata")) + tuple(r for r in roles if r in ("vdst", "vdata"))
    for tok in parts:
        tok = re.sub(r"/\*.*?\*/", "", tok).strip()
        t = _parse_token(tok)
        if t is None:
            const = _const_code(tok)
            role = None
            if const is not None:
                for r in roles:
                    if r not in used and r in fl and r in _CONST_ROLES and fl[r] == const:
                        role = r
                        break
            if role is None and tok == "off":
                r = {"GLOBAL": "saddr", "MUBUF": "vaddr", "MTBUF": "vaddr",
                     "SCRATCH": "addr" if fl.get("saddr") != 0x7F else "saddr"}.get(enc)
                if r is not None and r not in used:
                    role = r
            if role is None and tok.startswith("0x") and enc in ("VOP1", "VOP2", "VOP3"):
                out.append(("literal", "lit", 1))
                continue
            if role is not None:
                used.add(role)
                out.append((role, "s", 1))
            elif enc not in ("SOPP", "SOPK", "SMEM"):
                out.append((tok, None, 1))    # fixed text: vcc, off, ...
            continue
        kind, n, width = t
        role = None
        for r in roles:
            if r in used or r not in fl or kind not in _KINDS.get(r, "vsa"):
                continue
            v = fl[r]
            match = (v - 256 == n) if (r in _SRC9 and kind in ("v", "a", "v16")) else (v == n)
            if match:
                role = r
                break
        if role is None:
            out.append((tok, None, 1))
        else:
            used.add(role)
            out.append((role, kind, width))
    return tuple(out)


# SGPR codes named as pairs / halves: GFX9 has flat_scratch and xnack_mask there, RDNA plain s102-s105
_PAIRS = {102: "flat_scratch", 104: "xnack_mask", 106: "vcc", 126: "exec"}
_SINGLE = {102: "flat_scratch_lo", 103: "flat_scratch_hi", 104: "xnack_mask_lo", 105: "xnack_mask_hi",
           106: "vcc_lo", 107: "vcc_hi", 126: "exec_lo", 127: "exec_hi"}
_FIRST_NAMED = {9: 102, 10: 106, 11: 106}


def _reg(kind: str, n: int, width: int, fam: int = 9) -> str:
    """Register text the way LLVM decodes it: SGPR/TTMP tuples drop the low bits (s[2:5] of a 4-dword
    operand reads as s[0:3]); M0 = 124, NULL = 125 (after the decoder's normalisation)."""
    if kind == "s":
        named = _FIRST_NAMED[fam]
        if 108 <= n < 124:
            kind, n = "ttmp", n - 108
            if width > 1:
                n &= ~1 if width == 2 else ~3
        elif n in _PAIRS and width == 2 and n >= named:
            return _PAIRS[n]
        elif n in _SINGLE and width == 1 and n >= named:
            return _SINGLE[n]
        elif n in _SPECIAL:
            return _SPECIAL[n]
        elif width > 1 and n < named:
            n &= ~1 if width == 2 else ~3
    return f"{kind}{n}" if width == 1 else f"{kind}[{n}:{n + width - 1}]"
_F16_INLINE = {0x3800: "0.5", 0xB800: "-0.5", 0x3C00: "1.0", 0xBC00: "-1.0", 0x4000: "2.0", 0xC000: "-2.0",
               0x4400: "4.0", 0xC400: "-4.0", 0x3118: "0.15915494"}
_F32_INLINE = {0x3F000000: "0.5", 0xBF000000: "-0.5", 0x3F800000: "1.0", 0xBF800000: "-1.0", 0x40000000: "2.0",
               0xC0000000: "-2.0", 0x40800000: "4.0", 0xC0800000: "-4.0", 0x3E22F983: "0.15915494"}
_F64_INLINE = {0x3FE00000: "0.5", 0xBFE00000: "-0.5", 0x3FF00000: "1.0", 0xBFF00000: "-1.0", 0x40000000: "2.0",
               0xC0000000: "-2.0", 0x40100000: "4.0", 0xC0100000: "-4.0"}
_I16_FLOATS = {240: "0x3800", 241: "0xb800", 242: "0x3c00", 243: "0xbc00", 244: "0x4000", 245: "0xc000",
               246: "0x4400", 247: "0xc400", 248: "0x3118"}


def _literal(lit: int, typ) -> str:
    """A 32-bit literal as LLVM prints it for the operand class (inlinable values print inline)."""
    if typ in ("f16", "i16"):
        v = lit & 0xFFFF
        sv = v - 0x10000 if v & 0x8000 else v
        if typ == "i16":
            sv = lit - (1 << 32) if lit & 0x80000000 else lit
        if -16 <= sv <= 64:
            return str(sv)
        if typ == "f16" and v in _F16_INLINE:
            return _F16_INLINE[v]
        return f"0x{v:x}"
    if typ == "f64":
        if lit == 0:
            return "0"
        return _F64_INLINE.get(lit, f"0x{lit:x}")
    signed = lit - (1 << 32) if lit & 0x80000000 else lit
    if -16 <= signed <= 64:
        return str(signed)
    if typ == "b64":
        return f"0x{lit:x}"
    return _F32_INLINE.get(lit, f"0x{lit:x}")


def _src(code: int, width: int, lit, kind_hint: str, typ="b32", fam: int = 9) -> str:
    if code >= 256:
        return _reg("a" if kind_hint == "a" else "v", code - 256, width)
    if 128 <= code <= 192:
        return str(code - 128)
    if 193 <= code <= 208:
        return str(192 - code)
    if code in _FLOATS:
        if typ == "i16":
            return _I16_FLOATS[code]
        if code == 248 and typ in ("f64", "b64"):
            return "0.15915494309189532"
        return _FLOATS[code]
    if code == 255:                 # RDNA prints a 64-bit literal outside 0..64 in hex
        return f"0x{lit:x}" if fam > 9 and typ == "b64" and not 0 <= lit <= 64 else _literal(lit, typ)
    return _reg("s", code, width, fam)
def _neg(text: str) -> str:
    """LLVM writes the NEG modifier of an integer constant as neg(...): "-1" would read as the constant -1."""
    return f"neg({text})" if re.fullmatch(r"-?(\d+(\.\d+)?|0x[0-9a-f]+)", text) else f"-{text}"


def _mods(text: str, i: int, f: dict, enc: str, vop3b: bool = False, mods: int = 7, mix: bool = False) -> str:
    if mix:
        if f["neg_hi"] >> i & 1:
            text = f"|{text}|"
        return _neg(text) if f["neg"] >> i & 1 else text
    if enc == "VOP3" and mods >> i & 1:
        if not vop3b and f["abs"] >> i & 1:               # VOP3B holds SDST where VOP3A has ABS
            text = f"|{text}|"
        if f["neg"] >> i & 1:
            text = _neg(text)
    return text


_SDWA_SEL = ("BYTE_0", "BYTE_1", "BYTE_2", "BYTE_3", "WORD_0", "WORD_1", "DWORD")
_SDWA_UNUSED = ("UNUSED_PAD", "UNUSED_SEXT", "UNUSED_PRESERVE")


def _sdwa_mods(text: str, i: int, sd: dict) -> str:
    if sd[f"src{i}_sext"]:
        text = f"sext({text})"
    if sd[f"src{i}_abs"]:
        text = f"|{text}|"
    return f"-{text}" if sd[f"src{i}_neg"] else text


def _sdwa_suffix(inst) -> str:
    sd = inst.sdwa
    sel = lambda v: _SDWA_SEL[v] if v < len(_SDWA_SEL) else str(v)   # noqa: E731
    out = ""
    if inst.encoding != "VOPC":
        if sd["clamp"]:
            out += " clamp"
        if sd["omod"]:
            out += {1: " mul:2", 2: " mul:4", 3: " div:2"}[sd["omod"]]
        unused = _SDWA_UNUSED[sd["dst_unused"]] if sd["dst_unused"] < 3 else str(sd["dst_unused"])
        out += f" dst_sel:{sel(sd['dst_sel'])} dst_unused:{unused}"
    out += f" src0_sel:{sel(sd['src0_sel'])}"
    if inst.encoding != "VOP1":
        out += f" src1_sel:{sel(sd['src1_sel'])}"
    return out


def _dpp_mods(text: str, i: int, d: dict) -> str:
    if d.get(f"src{i}_abs"):
        text = f"|{text}|"
    return f"-{text}" if d.get(f"src{i}_neg") else text


def _smem_offset(f) -> str:
    if f["imm"]:
        off = f["offset"]
        hx = f"0x{off:x}" if off >= 0 else f"-0x{-off:x}"
        return f"{_reg('s', f['soffset'], 1)} offset:{hx}" if f["soe"] else hx
    return _reg("s", f["soffset"] if f["soe"] else f["offset"] & 0x7F, 1)


# DS instructions GFX9's llvm-objdump prints without "gds" even when the bit is set
_NO_GDS = re.compile(r"ds_(wrxchg2(st64)?_rtn|cmpst_rtn|mskor_rtn|wrap_rtn|add_rtn_f64)")


def _special9(inst, proc: str, fam: int, mnem: str):
    """GFX9 instructions whose operand list the table-driven template cannot infer."""
    f, name = inst.fields, inst.name
    if inst.encoding == "SCRATCH":
        return _scratch9(inst, proc, mnem)
    if inst.encoding == "MIMG":
        return _mimg9(inst, mnem)
    if name in ("s_atc_probe", "s_atc_probe_buffer"):      # a probe-type immediate, then the base
        v = f["sdata"]
        base = _reg("s", f["sbase"], 4 if name.endswith("buffer") else 2)
        return f"{mnem} {v if v <= 64 else f'0x{v:x}'}, {base}, {_smem_offset(f)}"
    if name in ("s_dcache_discard", "s_dcache_discard_x2"):
        return f"{mnem} {_reg('s', f['sbase'], 2)}, {_smem_offset(f)}"
    if name in ("s_memtime", "s_memrealtime"):
        return f"{mnem} {_reg('s', f['sdata'], 2)}"
    if inst.encoding == "SMEM" and name.startswith(("s_dcache_", "s_icache_")):
        return mnem
    if name in ("s_cbranch_g_fork", "s_rfe_restore_b64"):
        return f"{mnem} {_src(f['ssrc0'], 2, inst.literal, 's')}, " \
            f"{_src(f['ssrc1'], 2 if name == 's_cbranch_g_fork' else 1, inst.literal, 's')}"
    if name == "v_accvgpr_mov_b32":
        src = f"a{f['src0'] - 256}" if f["src0"] >= 256 else _src(f["src0"], 1, inst.literal, "s")
        return f"{mnem} a{f['vdst']}, {src}"
    if name in ("buffer_wbl2", "buffer_invl2", "buffer_wbinvl1", "buffer_wbinvl1_vol", "buffer_inv"):
        return mnem + _cache_bits(f, proc)      # cache policy only
    if name == "s_set_gpr_idx_on":
        v = f["ssrc1"]
        return f"{mnem} {_src(f['ssrc0'], 1, inst.literal, 's')}, {_gpr_idx(v) if v <= 15 else f'0x{v:x}'}"
    if name in ("s_setreg_b32", "s_setreg_imm32_b32"):
        return _setreg(inst, proc, 9, mnem)
    return None


def _setreg(inst, proc: str, fam: int, mnem: str) -> str:
    f = inst.fields
    src = _reg("s", f["sdst"], 1, fam) if inst.name == "s_setreg_b32" else \
        _literal(inst.literal, "b32").replace("0.15915494", "0x3e22f983")
    return f"{mnem} {_hwreg(f['simm16'], proc)}, {src}"


def _special_rdna(inst, proc: str, fam: int, mnem: str):
    """RDNA instructions whose operand list the table-driven template cannot infer."""
    f, name = inst.fields, inst.name
    if inst.encoding == "SCRATCH":
        return _scratch_rdna(inst, proc, fam, mnem)
    if name in ("s_setreg_b32", "s_setreg_imm32_b32"):
        return _setreg(inst, proc, fam, mnem)
    if name == "s_getreg_b32":
        return f"{mnem} {_reg('s', f['sdst'], 1, fam)}, {_hwreg(f['simm16'], proc)}"
    if name in ("s_atc_probe", "s_atc_probe_buffer"):      # a probe-type immediate, then the base
        v = f["sdata"]
        base = _reg("s", f["sbase"], 4 if name.endswith("buffer") else 2, fam)
        _, tmpl = template(proc, inst.encoding, inst.opcode)
        text = f"{mnem} {v if v <= 64 else f'0x{v:x}'}, {base}" + _suffix(inst, proc, fam, tmpl)
        return re.sub(r"( glc| dlc)+$", "", text)
    if name == "s_version":
        return f"{mnem} {_version(f['simm16'])}"
    if name in ("s_sendmsg_rtn_b32", "s_sendmsg_rtn_b64"):
        return f"{mnem} {_reg('s', f['sdst'], 2 if name.endswith('64') else 1, fam)}, {_sendmsg_rtn(f['ssrc0'])}"
    return None


_SPECIALS = {9: _special9, 10: _special_rdna, 11: _special_rdna}


def format_instruction(inst, target: str) -> str:
    proc = target.split(":")[0]
    fam = family(proc)
    enc, f = inst.encoding, inst.fields
    if enc == "VOPD":
        return _vopd(inst, proc)
    if enc == "MIMG" and fam > 9:
        return _mimg_rdna(inst, proc, fam)
    try:
        mnem, tmpl = template(proc, enc, inst.opcode)
    except KeyError:
        return f"<unknown {enc} {inst.opcode}>"
    info = tables(proc)[1][enc][inst.opcode]
    if inst.dpp is not None:
        mnem = info.get("dpp_name") or re.sub(r"_e32$", "", mnem) + "_dpp"
    sd = inst.sdwa
    if sd is not None:
        mnem = re.sub(r"_e32$", "", mnem) + "_sdwa"
    special = _SPECIALS[fam](inst, proc, fam, mnem)
    if special is not None:
        return special
    types = info.get("src_types", {})
    mods = info.get("mods", 0)
    mai = enc == "VOP3P" and ("mfma" in inst.name or "smfmac" in inst.name)
    vop3b = enc == "VOP3" and any(r == "sdst" for r, k, w in tmpl)
    ops = []
    for role, kind, width in tmpl:
        if kind is None:
            if sd is not None and enc == "VOPC" and role == "vcc" and sd["sd"]:
                role = _reg("s", sd["sdst"], 2, fam)          # SDWA VOPC with SD: an SGPR pair
            ops.append(role)
            continue
        if kind == "lit":
            ops.append(f"0x{inst.literal:x}")
            continue
        v = f[role]
        if kind == "v16" and not (role in _SRC9 and v < 256):
            ops.append(f"v{v - 256 if v >= 256 else v}.{'h' if _t16_hi(f, role) else 'l'}")
            continue
        if f.get("acc") and role in ("vdst", "vdata", "data", "data0", "data1") and kind == "v" \
                and enc in ("DS", "FLAT", "GLOBAL", "MUBUF", "MTBUF"):
            kind = "a"
        if mai and kind == "v" and (role in ("vdst", "src2") and f["acc_cd"]
                                    or role == "src0" and f["opsel_hi"] & 1 or role == "src1" and f["opsel_hi"] & 2):
            kind = "a"
        if enc in ("MUBUF", "MTBUF") and role == "vdata" and f.get("tfe"):
            width += 1
        if enc == "MUBUF" and role == "vdata" and f.get("lds") and "load" in inst.name:
            continue
        if enc in ("GLOBAL", "FLAT") and role == "addr":
            ops.append(_reg(kind, v, width if enc == "FLAT" else 1 if f["saddr"] != F.SADDR_OFF else 2))
            continue
        if enc in ("MUBUF", "MTBUF") and role == "vaddr":
            n = 2 if f["offen"] and f["idxen"] else 1
            ops.append(_reg("v", v, n) if f["offen"] or f["idxen"] else "off")
            continue
        if role in _SRC9:
            idx = int(role[-1])
            text = _src(v, width, inst.literal, kind, types.get(role) or "b32", fam)
            if sd is not None:
                ops.append(_sdwa_mods(text, 0, sd))
            elif fam > 9 and inst.dpp is not None and enc in ("VOP1", "VOP2", "VOPC") and idx == 0:
                ops.append(_dpp_mods(text, 0, inst.dpp))
            else:
                ops.append(_mods(text, idx, f, enc, vop3b, mods, enc == "VOP3P" and "_mix" in inst.name))
        elif role == "vsrc1":
            if sd is not None:
                text = _src(v, width, inst.literal, "s", "b32", fam) if sd["s1"] else _reg(kind, v, width)
                ops.append(_sdwa_mods(text, 1, sd))
            elif fam > 9 and inst.dpp is not None:
                ops.append(_dpp_mods(_reg(kind, v, width), 1, inst.dpp))
            else:
                ops.append(_reg(kind, v, width))
        elif role in ("ssrc0", "ssrc1") or role == "soffset" and enc != "SMEM":
            ops.append(_src(v, width, inst.literal, "s", types.get(role) or "b32", fam))
        elif role == "saddr":
            ops.append("off" if v == F.SADDR_OFF else _reg("s", v, 2, fam))
        else:
            ops.append(_reg(kind, v, width, fam))
    if f.get("t16"):                                   # GFX11 true16 high halves (newer LLVM's syntax)
        ops = [o + ".h" if kind in ("v", "vs") and r in ("src0", "vsrc1", "vdst") and _t16_hi(f, r)
               and re.fullmatch(r"-?\|?v\d+\|?", o) and (r != "src0" or f["src0"] >= 256) else o
               for o, (r, kind, w) in zip(ops, [t for t in tmpl if t[1] != "lit"] + [(None, None, 1)] * 8)]
    if enc in ("GLOBAL", "FLAT") and "atomic" in inst.name and (f["sc0"] if proc.startswith("gfx94") else f["glc"]) \
            and not any(r == "vdst" for r, k, w in tmpl):
        dwidth = next((w for r, k, w in tmpl if r == "data"), 1)
        ops.insert(0, _reg("a" if f.get("acc") else "v", f["vdst"], dwidth // 2 if "cmpswap" in inst.name else dwidth))
    text = mnem + (" " + ", ".join(ops) if ops else "")
    return text + _suffix(inst, proc, fam, tmpl)


def _t16_hi(f, role) -> bool:
    return bool(f.get("opsel", 0) >> {"src0": 0, "vsrc1": 1, "vdst": 3}.get(role, 9) & 1)


_WIDTH = {"byte": 1, "sbyte": 1, "ubyte": 1, "short": 1, "sshort": 1, "ushort": 1, "dword": 1, "dwordx2": 2,
          "dwordx3": 3, "dwordx4": 4}


def _scratch9(inst, proc: str, mnem: str) -> str:
    """GFX9 scratch_* operands: [vdst,] vaddr|off, [data,] saddr|off (gfx94x: vaddr only with SVE)."""
    f, name = inst.fields, inst.name
    kind = name.split("_")[1]
    width = _WIDTH.get(name[len(f"scratch_{kind}_"):].split("_d16")[0], 1)
    gfx94 = proc.startswith("gfx94")
    use_v = bool(f["lds"]) if gfx94 else f["saddr"] == 0x7F
    ops = []
    lds = name.startswith("scratch_load_lds_") or (f["lds"] and not gfx94)
    if kind == "load" and not lds:                  # loads into LDS have no VGPR destination
        ops.append(_reg("a" if f["acc"] else "v", f["vdst"], width))
    ops.append(_reg("v", f["addr"], 1) if use_v else "off")
    if kind == "store":
        ops.append(_reg("a" if f["acc"] else "v", f["data"], width))
    ops.append("off" if f["saddr"] == 0x7F else _reg("s", f["saddr"], 1))
    lds_flag = " lds" if lds and not name.startswith("scratch_load_lds_") else ""
    return mnem + " " + ", ".join(ops) + _suffix(inst, proc, 9, ()) + lds_flag


def _scratch_rdna(inst, proc: str, fam: int, mnem: str) -> str:
    """RDNA scratch_* operands: [vdst,] vaddr|off, [data,] saddr|off."""
    f = inst.fields
    _, tmpl = template(proc, inst.encoding, inst.opcode)
    width = {r: w for r, k, w in tmpl}
    ops = []
    if "vdst" in width:
        ops.append(_reg("v", f["vdst"], width["vdst"]))
    vaddr = f["sve"] if fam == 11 else f["saddr_raw"] == F.NULL
    ops.append(_reg("v", f["addr"], 1) if vaddr else "off")
    if "data" in width:
        ops.append(_reg("v", f["data"], width["data"]))
    ops.append("off" if f["saddr"] == F.SADDR_OFF else _reg("s", f["saddr"], 1, fam))
    return mnem + " " + ", ".join(ops) + _suffix(inst, proc, fam, tmpl)
def mimg_data_width(inst) -> int:
    """VGPRs of an MIMG instruction's data operand as llvm-objdump-19 prints it: one per DMASK component
    (at least one), halved with D16; for atomics LLVM widens only to the forms it defines (1/2 dwords,
    cmpswap 2/4, and a 5-dword form for four components).  The execution width is ``semantics.mimg``'s."""
    f, name = inst.fields, inst.name
    n = max(bin(f["dmask"]).count("1"), 1)
    default = 2 if name.endswith("cmpswap") else 1          # the width LLVM decodes before widening
    if "_atomic_" in name:
        width = (4 if n == 4 else 2) if name.endswith("cmpswap") else {2: 2, 4: 5}.get(n, 1)
    else:
        width = (n + 1) // 2 if f["d16"] else n
    return width if f["vdata"] + width <= 256 else default       # no wider tuple past v255: left as decoded


def _mimg9(inst, mnem: str) -> str:
    """image_*: data, address (one VGPR: GFX9 encodes no address count), T#, [S#], then the modifiers."""
    f = inst.fields
    ops = [_reg("a" if f["acc"] else "v", f["vdata"], mimg_data_width(inst)), f"v{f['vaddr']}",
           _reg("s", f["srsrc"], 8)]
    if inst.name.startswith(("image_sample", "image_gather")):
        ops.append(_reg("s", f["ssamp"], 4))
    out = mnem + " " + ", ".join(ops)
    if f["dmask"]:
        out += f" dmask:0x{f['dmask']:x}"
    for bit in ("unorm", "glc", "slc", "scc", "a16", "lwe", "da", "d16"):
        if f[bit]:
            out += " " + bit
    return out


def _vopd(inst, proc: str) -> str:
    f = inst.fields
    opcodes, info = tables(proc)
    halves = []
    for enc, op, d, s0, s1 in (("VOPDX", f["opx"], "vdstx", "srcx0", "vsrcx1"), ("VOPDY", f["opy"], "vdsty", "srcy0", "vsrcy1")):
        mnem, entry = opcodes[enc][op][1:3]
        n = len([p for p in entry.split(",") if p.strip()])
        typ = info[enc][op].get("src_types", {}).get("src0") or "b32"
        ops = [_reg("v", f[d], 1), _src(f[s0], 1, inst.literal, "v", typ, 11)]
        if "fmamk" in mnem:
            ops += [f"0x{inst.literal:x}", _reg("v", f[s1], 1)]
        elif "fmaak" in mnem:
            ops += [_reg("v", f[s1], 1), f"0x{inst.literal:x}"]
        elif n >= 3:
            ops.append(_reg("v", f[s1], 1))
        halves.append(mnem + " " + ", ".join(ops))
    return " :: ".join(halves)


_DIMS = ("1D", "2D", "3D", "CUBE", "1D_ARRAY", "2D_ARRAY", "2D_MSAA", "2D_MSAA_ARRAY")


def _mimg_rdna(inst, proc: str, fam: int) -> str:
    """RDNA image_*: data, address (one tuple, or the NSA list), T# (4 dwords for BVH), [S#], then the
    modifiers; operand sizes from the decoder (``data_regs``, ``addr_regs``)."""
    f = inst.fields
    m = tables(proc)[1]["MIMG"][inst.opcode]["mimg"]
    widths = f["addr_regs"]
    if f["nsa"]:
        regs = [f["vaddr"]] + [inst.words[2 + i // 4] >> 8 * (i % 4) & 0xFF for i in range(4 * f["nsa"])]
        addr = "[" + ", ".join(_reg("v", regs[i], w) for i, w in enumerate(widths)) + "]"
    else:
        addr = _reg("v", f["vaddr"], widths[0])
    null = F.NULL if fam == 10 else F.NULL11      # MIMG SGPR fields are not renumbered
    ops = [_reg("v", f["vdata"], f["data_regs"]), addr,
           "null" if f["srsrc"] == null else _reg("s", f["srsrc"], 8 if m["dim"] else 4, fam)]
    if m["samp"]:
        ops.append("null" if f["ssamp"] == null else _reg("s", f["ssamp"], 4, fam))
    out = inst.name + " " + ", ".join(ops)
    if m["dim"]:
        if f["dmask"]:
            out += f" dmask:0x{f['dmask']:x}"
        out += f" dim:SQ_RSRC_IMG_{_DIMS[f['dim']]}"
    for bit in ("unorm", "glc", "slc", "dlc", "r128", "a16", "tfe", "lwe", "d16"):
        if f.get(bit):
            out += " " + bit
    return out


_HWREG = {1: "HW_REG_MODE", 2: "HW_REG_STATUS", 3: "HW_REG_TRAPSTS", 4: "HW_REG_HW_ID", 5: "HW_REG_GPR_ALLOC",
          6: "HW_REG_LDS_ALLOC", 7: "HW_REG_IB_STS", 15: "HW_REG_SH_MEM_BASES", 16: "HW_REG_TBA_LO",
          17: "HW_REG_TBA_HI", 18: "HW_REG_TMA_LO", 19: "HW_REG_TMA_HI"}
_HWREG_GFX940 = {20: "HW_REG_XCC_ID", 21: "HW_REG_SQ_PERF_SNAPSHOT_DATA", 22: "HW_REG_SQ_PERF_SNAPSHOT_DATA1",
                 23: "HW_REG_SQ_PERF_SNAPSHOT_PC_LO", 24: "HW_REG_SQ_PERF_SNAPSHOT_PC_HI"}


def _hwreg(v: int, proc: str) -> str:
    """hwreg(...): GFX9's register names are written here, RDNA's come with the generated tables."""
    rid, off, size = v & 0x3F, v >> 6 & 0x1F, (v >> 11 & 0x1F) + 1
    fam = family(proc)
    if fam > 9:
        name = module(fam).HWREGS.get(rid, str(rid))
    else:
        name = _HWREG.get(rid) or (_HWREG_GFX940.get(rid) if proc.startswith("gfx94") else None) or str(rid)
    return f"hwreg({name})" if off == 0 and size == 32 else f"hwreg({name}, {off}, {size})"


_MSG = {1: "MSG_INTERRUPT", 2: "MSG_GS", 3: "MSG_GS_DONE", 4: "MSG_SAVEWAVE", 5: "MSG_STALL_WAVE_GEN",
        6: "MSG_HALT_WAVES", 7: "MSG_ORDERED_PS_DONE", 8: "MSG_EARLY_PRIM_DEALLOC", 9: "MSG_GS_ALLOC_REQ",
        10: "MSG_GET_DOORBELL", 15: "MSG_SYSMSG"}
_SYSMSG = {1: "SYSMSG_OP_ECC_ERR_INTERRUPT", 2: "SYSMSG_OP_REG_RD", 3: "SYSMSG_OP_HOST_TRAP_ACK",
           4: "SYSMSG_OP_TTRACE_PC"}
_GS_OP = {0: "GS_OP_NOP", 1: "GS_OP_CUT", 2: "GS_OP_EMIT", 3: "GS_OP_EMIT_CUT"}
_MSG_RTN = {128: "MSG_RTN_GET_DOORBELL", 129: "MSG_RTN_GET_DDID", 130: "MSG_RTN_GET_TMA",
            131: "MSG_RTN_GET_REALTIME", 132: "MSG_RTN_SAVE_WAVE", 133: "MSG_RTN_GET_TBA"}


def _sendmsg(v: int, fam: int) -> str:
    """sendmsg(...): GFX9's messages are decoded here, RDNA's names come with the generated tables."""
    if fam > 9:
        text = module(fam).SENDMSG.get(v & 0x3FF if fam == 10 else v, str(v))
        if v > 0x3FF and not text.startswith("sendmsg(MSG_"):   # GFX10 ignores the bits above 9 when the
            return str(v)                                      # rest names a message, else prints the value
        return text
    if v >> 10:
        return str(v)
    mid, op, stream = v & 0xF, v >> 4 & 7, v >> 8 & 3
    name = _MSG.get(mid)
    if name is None:
        return f"sendmsg({mid}, {op}, {stream})"
    if mid in (2, 3):
        if mid == 2 and op == 0 or op not in _GS_OP:
            return f"sendmsg({mid}, {op}, {stream})"
        return f"sendmsg({name}, {_GS_OP[op]}, {stream})" if op else f"sendmsg({name}, {_GS_OP[op]})"
    if mid == 15:
        if op in _SYSMSG and not stream:
            return f"sendmsg({name}, {_SYSMSG[op]})"
        return f"sendmsg({mid}, {op}, {stream})"
    if op or stream:
        return f"sendmsg({mid}, {op}, {stream})"
    return f"sendmsg({name})"


def _sendmsg_rtn(v: int) -> str:
    return f"sendmsg({_MSG_RTN[v]})" if v in _MSG_RTN else f"sendmsg({v}, 0, 0)"


def _gpr_idx(v: int) -> str:
    return "gpr_idx(" + ",".join(n for i, n in enumerate(("SRC0", "SRC1", "SRC2", "DST")) if v >> i & 1) + ")"


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
    """s_waitcnt's counters (GFX9 has a 4-bit LGKM count, RDNA a 6-bit one; GFX11 moved all three)."""
    if fam < 11:
        vm, exp, lgkm = (v & 0xF) | (v >> 14 & 3) << 4, v >> 4 & 7, v >> 8 & (0xF if fam == 9 else 0x3F)
    else:
        vm, exp, lgkm = v >> 10 & 0x3F, v & 7, v >> 4 & 0x3F
    lgkm_max = 0xF if fam == 9 else 0x3F
    parts = []
    if vm != 0x3F:
        parts.append(f"vmcnt({vm})")
    if exp != 7:
        parts.append(f"expcnt({exp})")
    if lgkm != lgkm_max:
        parts.append(f"lgkmcnt({lgkm})")
    return " ".join(parts) or f"vmcnt(63) expcnt(7) lgkmcnt({lgkm_max})"


_HEX_SOPP = frozenset(("s_clause", "s_inst_prefetch", "s_set_inst_prefetch_distance", "s_round_mode",
                       "s_ttracedata_imm", "s_waitcnt_depctr"))
_NO_OPERAND = ("s_endpgm", "s_barrier", "s_icache_inv", "s_endpgm_saved", "s_code_end", "s_wakeup", "s_ttracedata",
               "s_set_gpr_idx_off", "s_endpgm_ordered_ps_done", "s_wait_idle")


def _sopp(inst, proc: str, fam: int) -> str:
    name, v = inst.name, inst.fields["simm16"]
    if name == "s_waitcnt":
        return " " + _waitcnt(v, fam)
    if name == "s_delay_alu":
        return " " + _delay_alu(v)
    if name in _NO_OPERAND and v == 0:
        return ""
    if name.startswith(("s_branch", "s_cbranch", "s_endpgm")):
        return f" {v}"
    if name in ("s_sendmsg", "s_sendmsghalt"):
        return " " + _sendmsg(v, fam)
    if name == "s_set_gpr_idx_mode" and v <= 15:
        return " " + _gpr_idx(v)
    if name == "s_waitcnt_depctr":
        return " " + _depctr(v)
    return f" {v}" if v <= 64 and name not in _HEX_SOPP else f" 0x{v:x}"


def _smem_suffix(inst, fam: int, tmpl) -> str:
    f = inst.fields
    if fam == 9:
        s = ", " + _smem_offset(f)
    else:
        if not any(r == "sbase" for r, k, w in tmpl):
            return ""
        off = f["offset"]
        hx = f"0x{off:x}" if off >= 0 else f"-0x{-off:x}"
        s = f", {_reg('s', f['soffset'], 1, fam)}" + (f" offset:{hx}" if off else "") if f["soe"] or not off \
            else f", {hx}"
    return s + "".join(" " + b for b in ("glc", "dlc") if f.get(b))


def _vop3p_suffix(inst, proc: str, nsrc: int) -> str:
    f, name, out = inst.fields, inst.name, ""
    if "mfma" in name:
        f64_neg = proc.startswith("gfx94") and "f64" in name     # gfx94x f64 MFMA: the BLGP bits are NEG
        for key, val in (("cbsz", f["cbsz"]), ("abid", f["abid"]), ("blgp", 0 if f64_neg else f["blgp"])):
            if val:
                out += f" {key}:{val}"
        if f64_neg and f["blgp"]:
            out += f" neg:[{','.join(str(f['blgp'] >> i & 1) for i in range(3))}]"
        return out
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
    return out + _dpp_suffix(inst.dpp)


def _vop3_suffix(inst, proc: str, nsrc: int) -> str:
    f, out = inst.fields, ""
    if tables(proc)[1]["VOP3"][inst.opcode].get("opsel") and f["opsel"]:
        bits = [f["opsel"] >> i & 1 for i in range(nsrc)] + [f["opsel"] >> 3 & 1]
        if inst.name.startswith("v_permlane"):           # op_sel = [FI, BOUND_CTRL]
            bits = [f["opsel"] & 1, f["opsel"] >> 1 & 1]
        out += f" op_sel:[{','.join(map(str, bits))}]"
    if f["clamp"]:
        out += " clamp"
    if f["omod"]:
        out += {1: " mul:2", 2: " mul:4", 3: " div:2"}[f["omod"]]
    return out + _dpp_suffix(inst.dpp)


def _ds_suffix(inst, fam: int) -> str:
    f, name, out = inst.fields, inst.name, ""
    if re.match(r"ds_\w*(read|write|wrxchg)2|ds_\w*2addr", name):
        if f["offset0"]:
            out += f" offset0:{f['offset0']}"
        if f["offset1"]:
            out += f" offset1:{f['offset1']}"
    else:
        off = f["offset0"] | f["offset1"] << 8
        if off:
            out += f" offset:{off}"
    if f["gds"] and not (fam == 9 and _NO_GDS.match(name)):
        out += " gds"
    return out


_DFMT = ("INVALID", "8", "16", "8_8", "32", "16_16", "10_11_11", "11_11_10", "10_10_10_2", "2_10_10_10", "8_8_8_8",
         "32_32", "16_16_16_16", "32_32_32", "32_32_32_32", "RESERVED_15")
_NFMT = ("UNORM", "SNORM", "USCALED", "SSCALED", "UINT", "SINT", "RESERVED_6", "FLOAT")


def _buffer_suffix(inst, proc: str, fam: int) -> str:
    enc, f, out = inst.encoding, inst.fields, ""
    if enc == "MTBUF" and fam == 9 and (f["dfmt"] != 1 or f["nfmt"] != 0):
        parts = ([f"BUF_DATA_FORMAT_{_DFMT[f['dfmt']]}"] if f["dfmt"] != 1 else []) + \
            ([f"BUF_NUM_FORMAT_{_NFMT[f['nfmt']]}"] if f["nfmt"] != 0 else [])
        out += f" format:[{','.join(parts)}]"
    elif enc == "MTBUF" and fam > 9 and f["format"] != 1:
        fmt = module(fam).BUF_FORMATS.get(f["format"], str(f["format"]))
        out += f" format:[{fmt}]" if fmt.startswith("BUF_") else f" format:{fmt}"
    if f["idxen"] and f["offen"]:
        out += " idxen offen"
    elif f["offen"]:
        out += " offen"
    elif f["idxen"]:
        out += " idxen"
    if f["offset"]:
        out += f" offset:{f['offset']}"
    out += _cache_bits(f, proc)
    if f.get("tfe"):
        out += " tfe"
    if enc == "MUBUF" and f.get("lds"):
        out += " lds"
    return out


def _suffix(inst, proc: str, fam: int, tmpl) -> str:
    enc, f, name = inst.encoding, inst.fields, inst.name
    if enc == "SOPP":
        return _sopp(inst, proc, fam)
    if enc == "SOPK":
        v = f["simm16"]
        if name == "s_getreg_b32":
            return ", " + _hwreg(v, proc)
        if name in ("s_subvector_loop_begin", "s_subvector_loop_end", "s_call_b64") or name.startswith("s_cbranch"):
            return f", {v}"
        return f", 0x{v:x}"
    if enc == "SMEM":
        return _smem_suffix(inst, fam, tmpl)
    if enc in ("VOP3", "VOP3P"):
        nsrc = sum(1 for r, k, w in tmpl if r in _SRC9)
        return (_vop3_suffix if enc == "VOP3" else _vop3p_suffix)(inst, proc, nsrc)
    if inst.sdwa is not None:
        return _sdwa_suffix(inst)
    if inst.dpp is not None:
        return _dpp_suffix(inst.dpp)
    if enc == "DS":
        return _ds_suffix(inst, fam)
    if enc in ("FLAT", "GLOBAL", "SCRATCH"):
        return (f" offset:{f['offset']}" if f["offset"] else "") + _cache_bits(f, proc)
    if enc in ("MUBUF", "MTBUF"):
        return _buffer_suffix(inst, proc, fam)
    return ""


_WAVE_SHIFT = {0x130: "wave_shl", 0x134: "wave_rol", 0x138: "wave_shr", 0x13C: "wave_ror"}


def _dpp_control(c: int, rdna: bool) -> str:
    """dpp_ctrl as LLVM prints it: GFX9 has wave shifts and row broadcasts, RDNA row_share and row_xmask."""
    if c <= 0xFF:
        return f"quad_perm:[{c & 3},{c >> 2 & 3},{c >> 4 & 3},{c >> 6 & 3}]"
    if 0x101 <= c <= 0x12F and c & 0xF:
        return f"{('row_shl', 'row_shr', 'row_ror')[c - 0x100 >> 4]}:{c & 0xF}"
    if c == 0x140:
        return "row_mirror"
    if c == 0x141:
        return "row_half_mirror"
    if not rdna:
        return {**{k: f"{v}:1" for k, v in _WAVE_SHIFT.items()}, 0x142: "row_bcast:15",
                0x143: "row_bcast:31"}.get(c, f"0x{c:x}")
    if 0x150 <= c <= 0x16F:
        return f"{'row_share' if c < 0x160 else 'row_xmask'}:{c & 0xF}"
    if c in _WAVE_SHIFT:
        return f"/* {_WAVE_SHIFT[c]} is not supported starting from GFX10 */"
    if c in (0x142, 0x143):
        return "/* row_bcast is not supported starting from GFX10 */"
    return "/* Invalid dpp_ctrl value */"


def _dpp_suffix(d) -> str:
    if d is None:
        return ""
    if "sel" in d:
        return f" dpp8:[{','.join(map(str, d['sel']))}]" + (" fi:1" if d["fi"] else "")
    out = f" {_dpp_control(d['dpp_ctrl'], 'fi' in d)} row_mask:0x{d['row_mask']:x} bank_mask:0x{d['bank_mask']:x}"
    if d["bound_ctrl"]:
        out += " bound_ctrl:1"
    if d.get("fi"):
        out += " fi:1"
    return out


def _cache_bits(f, proc: str) -> str:
    """gfx94x: sc0 nt sc1; other GFX9: glc slc scc; RDNA: glc slc dlc."""
    names = ("sc0", "nt", "sc1") if proc.startswith("gfx94") else ("glc", "slc", "sc1", "dlc")
    return "".join(" " + ("scc" if b == "sc1" and names[0] == "glc" else b) for b in names if f.get(b))


def disassemble(code: bytes, target: str, base: int = 0):
    """[(pc, words, text)] for a range of code."""
    return [(i.pc, i.words, format_instruction(i, target)) for i in decode(code, target, base)]
