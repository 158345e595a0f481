"""Disassembly text in llvm-objdump-19's syntax for GFX9 (gfx90a, gfx942).

Operand order and widths come from the llvm-mc sample kept in the generated tables: each sample operand
is matched to the encoding field that produced it, so the formatter knows, per opcode, which field goes
where and how many registers it spans; values and modifiers come from the instruction itself.
"""
from __future__ import annotations

import functools
import re
import struct

from . import formats as F
from ._tables_gfx9 import INFO, OPCODES
from .decoder import _TARGET_TABLE, decode

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
    """[(role, kind, width)] for the opcode: role is a field name or a literal token (e.g. 'vcc', 'off')."""
    entry = OPCODES[_TARGET_TABLE[target]][enc][op]
    sample = bytes.fromhex(entry[3])
    w0 = struct.unpack_from("<I", sample)[0]
    w1 = struct.unpack_from("<I", sample, 4)[0] if len(sample) >= 8 else 0
    return entry[1], match_sample(entry[2], F.fields(enc, w0, w1), enc)


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


def _reg(kind: str, n: int, width: int) -> str:
    """Register text the way LLVM decodes it: SGPR/TTMP tuples drop the low bits (s[2:5] of a 4-dword
    operand reads as s[0:3])."""
    if kind == "s":
        if 108 <= n < 124:
            kind, n = "ttmp", n - 108
            if width > 1:
                n &= ~1 if width == 2 else ~3
        elif n in _PAIRS and width == 2:
            return _PAIRS[n]
        elif n in _SINGLE and width == 1:
            return _SINGLE[n]
        elif n in _SPECIAL:
            return _SPECIAL[n]
        elif width == 2 and n == 125:
            return "null"
        elif width > 1 and n < 102:
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


def _src(code: int, width: int, lit, kind_hint: str, typ="b32") -> str:
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
    if code == 255:
        return _literal(lit, typ)
    return _reg("s", code, width)


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


def _smem_offset(f) -> str:
    if f["imm"]:
        off = f["offset"]
        hx = f"0x{off:x}" if off >= 0 else f"-0x{-off:x}"
        return f"{_reg('s', f['soffset'], 1)} offset:{hx}" if f["soe"] else hx
    return _reg("s", f["soffset"] if f["soe"] else f["offset"] & 0x7F, 1)


# DS instructions llvm-objdump prints without "gds" even when the bit is set
_NO_GDS = re.compile(r"ds_(wrxchg2(st64)?_rtn|cmpst_rtn|mskor_rtn|wrap_rtn|add_rtn_f64)")


def _special(inst, proc: str, mnem: str):
    """Instructions whose operand list the table-driven template cannot infer."""
    f, name = inst.fields, inst.name
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
        return mnem + _cache_bits(f, proc.startswith("gfx94"), w_sc1=True)      # cache policy only
    return None


def format_instruction(inst, target: str) -> str:
    proc = target.split(":")[0]
    if proc not in _TARGET_TABLE:
        from .disasm_rdna import format_instruction as rdna
        return rdna(inst, proc)
    enc, f = inst.encoding, inst.fields
    try:
        mnem, tmpl = template(proc, enc, inst.opcode)
    except KeyError:
        return f"<unknown {enc} {inst.opcode}>"
    if inst.dpp is not None:
        mnem = re.sub(r"_e32$", "", mnem) + "_dpp"
    sd = inst.sdwa
    if sd is not None:
        mnem = re.sub(r"_e32$", "", mnem) + "_sdwa"
    if enc == "SCRATCH":
        return _scratch(inst, proc, mnem)
    if enc == "MIMG":
        return _mimg(inst, mnem)
    special = _special(inst, proc, mnem)
    if special is not None:
        return special
    if inst.name == "s_set_gpr_idx_on":
        v = f["ssrc1"]
        return f"{mnem} {_src(f['ssrc0'], 1, inst.literal, 's')}, {_gpr_idx(v) if v <= 15 else f'0x{v:x}'}"
    if inst.name == "s_setreg_b32":
        return f"{mnem} {_hwreg(f['simm16'], proc)}, {_reg('s', f['sdst'], 1)}"
    if inst.name == "s_setreg_imm32_b32":
        return f"{mnem} {_hwreg(f['simm16'], proc)}, {_literal(inst.literal, 'b32').replace('0.15915494', '0x3e22f983')}"
    ops = []
    mai = enc == "VOP3P" and ("mfma" in inst.name or "smfmac" in inst.name)
    vop3b = enc == "VOP3" and any(r == "sdst" for r, k, w in tmpl)
    info = INFO[_TARGET_TABLE[proc]][enc][inst.opcode]
    types = info.get("src_types", {})
    mods = info.get("mods", 0)
    for role, kind, width in tmpl:
        if kind is None:
            if sd is not None and enc == "VOPC" and role == "vcc" and sd["sd"]:
                role = _src(sd["sdst"], 2, None, "s")          # SDWA VOPC with SD: an SGPR pair
            ops.append(role)
            continue
        if kind == "lit":
            ops.append(f"0x{inst.literal:x}")
            continue
        v = f[role]
        if f.get("acc") and role in ("vdst", "vdata", "data", "data0", "data1") and kind == "v" \
                and enc in ("DS", "FLAT", "GLOBAL", "MUBUF", "MTBUF"):
            kind = "a"
        if mai and kind == "v" and (role in ("vdst", "src2") and f["acc_cd"]
                                    or role == "src0" and f["opsel_hi"] & 1 or role == "src1" and f["opsel_hi"] & 2):
            kind = "a"
        if enc == "MUBUF" and role == "vdata" and f.get("lds") and "load" in inst.name:
            continue
        if enc in ("GLOBAL", "SCRATCH", "FLAT") and role == "addr":
            if enc == "SCRATCH" and f["saddr"] != 0x7F and not (proc.startswith("gfx94") and f["lds"]):
                ops.append("off")
                continue
            if enc == "SCRATCH" and f["saddr"] == 0x7F or enc == "FLAT":
                ops.append(_reg(kind, v, width if enc == "FLAT" else 1))
                continue
            ops.append(_reg(kind, v, 1 if f["saddr"] != 0x7F else 2))
            continue
        if enc in ("MUBUF", "MTBUF") and role == "vaddr":
            n = 2 if f["offen"] and f["idxen"] else 1
            ops.append(_reg("v", v, n) if f["offen"] or f["idxen"] else "off")
            continue
        if role in _SRC9:
            idx = int(role[-1])
            text = _src(v, width, inst.literal, kind, types.get(role) or "b32")
            ops.append(_sdwa_mods(text, 0, sd) if sd is not None else
                       _mods(text, idx, f, enc, vop3b, mods, enc == "VOP3P" and "_mix" in inst.name))
        elif role == "vsrc1":
            if sd is not None:
                text = _src(v, width, inst.literal, "s", "b32") if sd["s1"] else _reg(kind, v, width)
                ops.append(_sdwa_mods(text, 1, sd))
            else:
                ops.append(_reg(kind, v, width))

        elif role in ("ssrc0", "ssrc1", "soffset") and enc not in ("SMEM",):
            ops.append(_src(v, width, inst.literal, "s", types.get(role) or "b32"))
        elif role == "saddr":
            ops.append("off" if v == 0x7F else _reg("s", v, 1 if enc == "SCRATCH" else 2))
        else:
            ops.append(_reg(kind, v, width))
    if enc in ("GLOBAL", "FLAT") and "atomic" in inst.name and (f["sc0"] if proc.startswith("gfx94") else f["glc"]) \
            and not any(r == "vdst" for r, k, w in tmpl):
        dwidth = next((w for r, k, w in tmpl if r == "data"), 1)
        ops.insert(0, _reg("a" if f.get("acc") else "v", f["vdst"], dwidth // 2 if "cmpswap" in inst.name else dwidth))
    text = mnem + (" " + ", ".join(ops) if ops else "")
    return text + _suffix(inst, proc, mnem)


_WIDTH = {"byte": 1, "sbyte": 1, "ubyte": 1, "short": 1, "sshort": 1, "ushort": 1, "dword": 1, "dwordx2": 2,
          "dwordx3": 3, "dwordx4": 4}


def _scratch(inst, proc: str, mnem: str) -> str:
    """scratch_* operands: [vdst,] vaddr|off, [data,] saddr|off (gfx94x: vaddr only with SVE)."""
    f, name = inst.fields, inst.name
    kind = name.split("_")[1]
    width = _WIDTH.get(name.split("_")[2].replace("_d16", ""), 1) if len(name.split("_")) > 2 else 1
    width = _WIDTH.get(name[len(f"scratch_{kind}_"):].split("_d16")[0], 1)
    use_v = f["saddr"] == 0x7F if not proc.startswith("gfx94") else bool(f["lds"])
    if not proc.startswith("gfx94") and f["saddr"] != 0x7F:
        use_v = False
    ops = []
    lds = name.startswith("scratch_load_lds_") or (f["lds"] and not proc.startswith("gfx94"))
    if kind == "load" and not lds:                  # loads into LDS have no VGPR destination
        ops.append(_reg("a" if f["acc"] else "v", f["vdst"], width))
    ops.append(_reg("v", f["addr"], 1) if use_v else "off")
    if kind == "store":
        ops.append(_reg("a" if f["acc"] else "v", f["data"], width))
    ops.append("off" if f["saddr"] == 0x7F else _reg("s", f["saddr"], 1))
    lds_flag = " lds" if lds and not name.startswith("scratch_load_lds_") else ""
    return mnem + " " + ", ".join(ops) + _suffix(inst, proc, mnem) + lds_flag


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


def _mimg(inst, mnem: str) -> str:
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


def _suffix(inst, proc: str, mnem: str) -> str:
    enc, f, name = inst.encoding, inst.fields, inst.name
    gfx94 = proc.startswith("gfx94")
    out = ""
    if enc == "SOPP":
        v = f["simm16"]
        if name == "s_waitcnt":
            vm = (v & 0xF) | ((v >> 14) & 3) << 4
            exp, lgkm = (v >> 4) & 7, (v >> 8) & 0xF
            parts = []
            if vm != 0x3F:
                parts.append(f"vmcnt({vm})")
            if exp != 7:
                parts.append(f"expcnt({exp})")
            if lgkm != 0xF:
                parts.append(f"lgkmcnt({lgkm})")
            if not parts and v == 0xFFFF or not parts and (vm, exp, lgkm) == (0x3F, 7, 0xF):
                parts = ["vmcnt(63)", "expcnt(7)", "lgkmcnt(15)"]
            return " " + " ".join(parts) if parts else " 0"
        if name in ("s_endpgm", "s_barrier", "s_icache_inv", "s_endpgm_saved", "s_code_end", "s_wakeup",
                    "s_ttracedata", "s_set_gpr_idx_off", "s_endpgm_ordered_ps_done") and v == 0:
            return ""
        if name.startswith(("s_branch", "s_cbranch", "s_endpgm")):
            return f" {v}"
        if name in ("s_sendmsg", "s_sendmsghalt"):
            return " " + _sendmsg(v)
        if name == "s_set_gpr_idx_mode" and v <= 15:
            return " " + _gpr_idx(v)
        return f" {v}" if v <= 64 else f" 0x{v:x}"
    if enc == "SOPK":
        v = f["simm16"]
        if name == "s_getreg_b32":
            return ", " + _hwreg(v, proc)
        if name.startswith("s_cbranch") or name == "s_call_b64":
            return f", {v}"
        return f", 0x{v:x}"
    if enc == "SMEM":
        if f["imm"]:
            off = f["offset"]
            hx = f"0x{off:x}" if off >= 0 else f"-0x{-off:x}"
            s = f", {hx}"
            if f["soe"]:
                s = f", {_reg('s', f['soffset'], 1)} offset:{hx}"
        elif f["soe"]:
            s = f", {_reg('s', f['soffset'], 1)}"
        else:
            s = f", {_reg('s', f['offset'] & 0x7F, 1)}"
        if f["glc"]:
            s += " glc"
        return s
    if enc in ("VOP3", "VOP3P"):
        if enc == "VOP3P":
            nsrc = sum(1 for r, k, w in template(proc, enc, inst.opcode)[1] if r in _SRC9)
            if "mfma" in name:
                f64_neg = gfx94 and "f64" in name               # gfx94x f64 MFMA: the BLGP bits are NEG
                for key, val in (("cbsz", f["cbsz"]), ("abid", f["abid"]), ("blgp", 0 if f64_neg else f["blgp"])):
                    if val:
                        out += f" {key}:{val}"
                if f64_neg and f["blgp"]:
                    out += f" neg:[{','.join(str(f['blgp'] >> i & 1) for i in range(3))}]"
                return out
            opsel = [f["opsel"] >> i & 1 for i in range(nsrc)]
            opsel_hi = [(f["opsel_hi"] | f["opsel_hi2"] << 2) >> i & 1 for i in range(nsrc)]
            if any(opsel):
                out += f" op_sel:[{','.join(map(str, opsel))}]"
            mix = "_mix" in name
            if (any(opsel_hi) if mix else not all(opsel_hi)):
                out += f" op_sel_hi:[{','.join(map(str, opsel_hi))}]"
            if f["neg"] & ((1 << nsrc) - 1) and not mix:
                out += f" neg_lo:[{','.join(str(f['neg'] >> i & 1) for i in range(nsrc))}]"
            if f["neg_hi"] & ((1 << nsrc) - 1) and not mix:
                out += f" neg_hi:[{','.join(str(f['neg_hi'] >> i & 1) for i in range(nsrc))}]"
            if f["clamp"]:
                out += " clamp"
            return out
        info = INFO[_TARGET_TABLE[proc]][enc][inst.opcode]
        if info.get("opsel") and f["opsel"]:
            nsrc = sum(1 for r, k, w in template(proc, enc, inst.opcode)[1] if r in _SRC9)
            bits = [f["opsel"] >> i & 1 for i in range(nsrc)] + [f["opsel"] >> 3 & 1]
            out += f" op_sel:[{','.join(map(str, bits))}]"
        if f["clamp"]:
            out += " clamp"
        if f["omod"]:
            out += {1: " mul:2", 2: " mul:4", 3: " div:2"}[f["omod"]]
        return out
    if inst.sdwa is not None:
        return _sdwa_suffix(inst)
    if inst.dpp is not None:
        d = inst.dpp
        c = d["dpp_ctrl"]
        if c <= 0xFF:
            ctl = f"quad_perm:[{c & 3},{c >> 2 & 3},{c >> 4 & 3},{c >> 6 & 3}]"
        elif 0x101 <= c <= 0x10F:
            ctl = f"row_shl:{c & 0xF}"
        elif 0x111 <= c <= 0x11F:
            ctl = f"row_shr:{c & 0xF}"
        elif 0x121 <= c <= 0x12F:
            ctl = f"row_ror:{c & 0xF}"
        else:
            ctl = {0x130: "wave_shl:1", 0x134: "wave_rol:1", 0x138: "wave_shr:1", 0x13C: "wave_ror:1",
                   0x140: "row_mirror", 0x141: "row_half_mirror", 0x142: "row_bcast:15", 0x143: "row_bcast:31"}.get(c, f"0x{c:x}")
        out = f" {ctl} row_mask:0x{d['row_mask']:x} bank_mask:0x{d['bank_mask']:x}"
        if d["bound_ctrl"]:
            out += " bound_ctrl:1"
        return out
    if enc == "DS":
        if re.match(r"ds_(read|write|wrxchg)2", name):
            if f["offset0"]:
                out += f" offset0:{f['offset0']}"
            if f["offset1"]:
                out += f" offset1:{f['offset1']}"
        else:
            off = f["offset0"] | f["offset1"] << 8
            if off:
                out += f" offset:{off}"
        if f["gds"] and not _NO_GDS.match(name):
            out += " gds"
        return out
    if enc in ("FLAT", "GLOBAL", "SCRATCH"):
        if f["offset"]:
            out += f" offset:{f['offset']}"
        out += _cache_bits(f, gfx94, w_sc1=True)
        return out
    if enc in ("MUBUF", "MTBUF"):
        if enc == "MTBUF" and (f["dfmt"] != 1 or f["nfmt"] != 0):
            parts = ([f"BUF_DATA_FORMAT_{_DFMT[f['dfmt']]}"] if f["dfmt"] != 1 else []) + \
                ([f"BUF_NUM_FORMAT_{_NFMT[f['nfmt']]}"] if f["nfmt"] != 0 else [])
            out += f" format:[{','.join(parts)}]"
        if f["idxen"] and f["offen"]:
            out += " idxen offen"
        elif f["offen"]:
            out += " offen"
        elif f["idxen"]:
            out += " idxen"
        if f["offset"]:
            out += f" offset:{f['offset']}"
        out += _cache_bits(f, gfx94, w_sc1=True)
        if enc == "MUBUF" and f.get("lds"):
            out += " lds"
        return out
    return out


_HWREG = {1: "HW_REG_MODE", 2: "HW_REG_STATUS", 3: "HW_REG_TRAPSTS", 4: "HW_REG_HW_ID", 5: "HW_REG_GPR_ALLOC",
          6: "HW_REG_LDS_ALLOC", 7: "HW_REG_IB_STS", 15: "HW_REG_SH_MEM_BASES", 16: "HW_REG_TBA_LO",
          17: "HW_REG_TBA_HI", 18: "HW_REG_TMA_LO", 19: "HW_REG_TMA_HI"}
_HWREG_GFX940 = {20: "HW_REG_XCC_ID", 21: "HW_REG_SQ_PERF_SNAPSHOT_DATA", 22: "HW_REG_SQ_PERF_SNAPSHOT_DATA1",
                 23: "HW_REG_SQ_PERF_SNAPSHOT_PC_LO", 24: "HW_REG_SQ_PERF_SNAPSHOT_PC_HI"}


def _hwreg(v: int, proc: str) -> str:
    rid, off, size = v & 0x3F, v >> 6 & 0x1F, (v >> 11 & 0x1F) + 1
    name = _HWREG.get(rid) or (_HWREG_GFX940.get(rid) if proc.startswith("gfx94") else None) or str(rid)
    return f"hwreg({name})" if off == 0 and size == 32 else f"hwreg({name}, {off}, {size})"


_MSG = {1: "MSG_INTERRUPT", 2: "MSG_GS", 3: "MSG_GS_DONE", 4: "MSG_SAVEWAVE", 5: "MSG_STALL_WAVE_GEN",
        6: "MSG_HALT_WAVES", 7: "MSG_ORDERED_PS_DONE", 8: "MSG_EARLY_PRIM_DEALLOC", 9: "MSG_GS_ALLOC_REQ",
        10: "MSG_GET_DOORBELL", 15: "MSG_SYSMSG"}
_SYSMSG = {1: "SYSMSG_OP_ECC_ERR_INTERRUPT", 2: "SYSMSG_OP_REG_RD", 3: "SYSMSG_OP_HOST_TRAP_ACK",
           4: "SYSMSG_OP_TTRACE_PC"}
_GS_OP = {0: "GS_OP_NOP", 1: "GS_OP_CUT", 2: "GS_OP_EMIT", 3: "GS_OP_EMIT_CUT"}


def _sendmsg(v: int) -> str:
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


def _gpr_idx(v: int) -> str:
    return "gpr_idx(" + ",".join(n for i, n in enumerate(("SRC0", "SRC1", "SRC2", "DST")) if v >> i & 1) + ")"


_DFMT = ("INVALID", "8", "16", "8_8", "32", "16_16", "10_11_11", "11_11_10", "10_10_10_2", "2_10_10_10", "8_8_8_8",
         "32_32", "16_16_16_16", "32_32_32", "32_32_32_32", "RESERVED_15")
_NFMT = ("UNORM", "SNORM", "USCALED", "SSCALED", "UINT", "SINT", "RESERVED_6", "FLOAT")


def _cache_bits(f, gfx94: bool, w_sc1: bool) -> str:
    if gfx94:
        bits = []
        if f.get("sc0"):
            bits.append("sc0")
        if f.get("nt"):
            bits.append("nt")
        if f.get("sc1"):
            bits.append("sc1")
        return "".join(" " + b for b in bits)
    bits = []
    if f.get("glc"):
        bits.append("glc")
    if f.get("slc"):
        bits.append("slc")
    if f.get("sc1"):
        bits.append("scc")
    return "".join(" " + b for b in bits)


def disassemble(code: bytes, target: str, base: int = 0):
    """[(pc, words, text)] for a range of code."""
    return [(i.pc, i.words, format_instruction(i, target)) for i in decode(code, target, base)]
