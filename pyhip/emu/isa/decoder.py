"""The decoder: code bytes → :class:`Instruction` objects (fields per ``instruction.py``), for GFX9 (gfx90a,
gfx940-942), GFX10.3 (gfx1030-gfx1036) and GFX11 (gfx1100-gfx1103), one decode loop driven by the family's
formats (``formats.py``) and generated tables (``families.py``).

Everything per opcode comes from the tables (llvm-mc-19 sweeps): the mnemonic, the bits that must keep a fixed
value (unused fields; a word that violates them is not a valid instruction), which sources exist (a 255 there
takes a 32-bit literal), and whether a VALU opcode has DPP (src0 = 250), SDWA (src0 = 249) and DPP8 (src0
233, or 234 with FI) forms.

GFX9: VOP3A/VOP3B are reported as ``encoding == 'VOP3'`` (the engine's convention); VOP3 opcodes 0x000-0x0ff
are VOPC, 0x100-0x13f VOP2 and 0x140-0x17f VOP1 promoted to VOP3 (LLVM mnemonic with ``_e64``), the rest are
VOP3-only; VOP3/VOP3P have no literals.  FLAT's seg field selects FLAT/GLOBAL/SCRATCH; the global/scratch
offset is 13-bit signed, the flat one 12-bit unsigned; the SMEM offset is 21-bit signed.  MIMG exists on
gfx90a only (gfx94x has no image instructions) and encodes no address count (the T#'s type decides it).

RDNA: any VALU/SALU encoding may carry one 32-bit literal (VOP3 and VOP3P too, and MUBUF/MTBUF soffset); GFX11
VOP3/VOP3P DPP (src0 250/233/234 and a third dword); GFX11 VOPD dual issue (``encoding == 'VOPD'``, name
``'vopd'``, the halves' names in ``fields['namex']``/``['namey']``).  Scalar operand codes are normalised to
M0 = 124, NULL = 125 (GFX11 encodes them the other way round) and FLAT ``saddr`` "off" to 0x7F, so the
execution semantics see one convention.
"""
from __future__ import annotations

import re
import struct

from . import formats as F
from .families import GFX9_TABLE, family, tables
from .instruction import DecodeError, Instruction

_KMK = frozenset(("v_madmk_f32", "v_madak_f32", "v_fmamk_f32", "v_fmaak_f32", "v_madmk_f16", "v_madak_f16",
                  "v_fmamk_f16", "v_fmaak_f16", "v_dual_fmaak_f32", "v_dual_fmamk_f32", "s_setreg_imm32_b32"))
_SRC_LIT = {"SOP2": ("ssrc0", "ssrc1"), "SOP1": ("ssrc0",), "SOPC": ("ssrc0", "ssrc1"), "VOP1": ("src0",),
            "VOP2": ("src0",), "VOPC": ("src0",), "VOP3": ("src0", "src1", "src2"),
            "VOP3P": ("src0", "src1", "src2")}
_SRC_LIT_RDNA = {**_SRC_LIT, "MUBUF": ("soffset",), "MTBUF": ("soffset",)}
# fields that always hold scalar operand codes (GFX11's M0/NULL swap is undone in them)
_SCALAR = {"SOP2": ("sdst", "ssrc0", "ssrc1"), "SOPK": ("sdst",), "SOP1": ("sdst", "ssrc0"),
           "SOPC": ("ssrc0", "ssrc1"), "SMEM": ("sdata", "soffset", "sbase"), "MUBUF": ("soffset", "srsrc"),
           "MTBUF": ("soffset", "srsrc"), "GLOBAL": ("saddr",), "SCRATCH": ("saddr",), "FLAT": ("saddr",)}
_SGPR_TOKEN = re.compile(r"^(s\d|s\[|ttmp|vcc|exec|m0|null|flat_scratch)")
_U32 = struct.Struct("<I")
_H16 = ("f16", "i16", "u16", "b16")
INVALID = "<invalid>"


def _t16_fields(name: str, enc: str) -> tuple:
    """GFX11 true16: in the 32-bit encodings of 16-bit operations, bit 7 of a VGPR field selects the high half
    of VGPR n - 128 (LLVM 19 only decodes the low halves; newer LLVM, e.g. Triton's, emits both).  → ((field,
    bit of the field's bit 7 in the instruction), ...) for the 16-bit operands of ``name``."""
    parts = name.split("_")
    if "pk" in parts and not name.startswith("v_sat_pk") or "dot2" in name:
        return ()
    if parts[1] == "cvt" or name.startswith(("v_frexp_exp", "v_sat_pk")):
        types = [p for p in parts[2:] if p in _H16 or p in ("f32", "i32", "u32", "f64", "u8")]
        dst16, src16 = (types[0] in _H16, types[-1] in _H16) if len(types) >= 2 else (False, False)
        if name.startswith("v_sat_pk"):
            dst16, src16 = True, False
    elif any(p in _H16 for p in parts):
        dst16 = src16 = True
    else:
        return ()
    out = []
    if src16:
        out.append(("src0", 7))
        if enc != "VOP1":
            out.append(("vsrc1", 16))
    if dst16 and enc != "VOPC":
        out.append(("vdst", 24))
    return tuple(out)


class _Op:
    """Decoding facts of one (target, encoding, opcode)."""
    __slots__ = ("name", "llvm", "must_mask", "must_value", "lit_slots", "dpp", "dpp8", "sdwa", "kmk",
                 "src_types", "vdst_scalar", "nsrc", "t16", "unused", "mimg", "interp")

    def __init__(self, entry, info, enc, fam):
        self.name, self.llvm = entry[0], entry[1]
        self.must_mask, self.must_value = info.get("must_mask", 0), info.get("must_value", 0)
        self.src_types = info.get("src_types", {})
        slots = (_SRC_LIT if fam == 9 else _SRC_LIT_RDNA).get(enc, ())
        self.lit_slots = tuple(s for s in slots if self.src_types.get(s) is not None or s == "soffset")
        if self.name == "s_set_gpr_idx_on":
            self.lit_slots = ("ssrc0",)
        if self.name.startswith("s_sendmsg_rtn"):       # SSRC0 holds a message id, not an operand
            self.lit_slots = ()
        self.dpp, self.dpp8, self.sdwa = info.get("dpp", False), info.get("dpp8", False), info.get("sdwa", False)
        # RDNA's unused VOP3 source fields: LLVM 19 wants 0, newer LLVM (Triton's) writes the inline constant 0
        self.unused = tuple(shift for slot, shift in (("src1", 41), ("src2", 50))
                            if fam > 9 and enc in ("VOP3", "VOP3P") and self.src_types.get(slot) is None)
        self.kmk = self.name in _KMK
        self.t16 = _t16_fields(self.name, enc) if fam == 11 and enc in ("VOP1", "VOP2", "VOPC") else ()
        for _, bit in self.t16:
            self.must_mask &= ~(1 << bit)
            self.must_value &= ~(1 << bit)
        first = entry[2].split(",")[0].strip() if entry[2] else ""
        self.vdst_scalar = enc in ("VOP1", "VOP3") and bool(_SGPR_TOKEN.match(first))
        self.nsrc = len([p for p in entry[2].split(",") if p.strip()]) if entry[2] else 0
        self.mimg = info.get("mimg")
        self.interp = fam > 9 and self.name.startswith("v_interp")   # RDNA: SRC0 may hold an attribute code


class Table(dict):
    """{(encoding, opcode): _Op} of a target, and its ``family`` (9, 10 or 11)."""
    family: int


_CACHE: dict = {}


def table_for(target: str) -> Table:
    """The decoding table of a target (``gfx90a``, ``gfx940``-``gfx942``, ``gfx1030``-``gfx1036``,
    ``gfx1100``-``gfx1103``, features ignored)."""
    proc = target.split(":")[0]
    fam = family(proc)
    if fam is None:
        raise DecodeError(0, 0, f"no decoder tables for {proc} (supported: gfx90a, gfx940-942, gfx1030-1036, "
                                f"gfx1100-1103)")
    key = GFX9_TABLE[proc] if fam == 9 else fam
    t = _CACHE.get(key)
    if t is None:
        opcodes, info = tables(proc)
        t = Table(((enc, op), _Op(entry, info[enc][op], enc, fam)) for enc, ops in opcodes.items()
                  for op, entry in ops.items())
        t.family = fam
        _CACHE[key] = t
    return t


def op_info(target: str, enc: str, opcode: int) -> "_Op":
    return table_for(target)[(enc, opcode)]


def _swap(v: int) -> int:
    return 249 - v if v == 124 or v == 125 else v


def decode_one(code: bytes, offset: int, target: str, table: Table | None = None) -> Instruction:
    table = table or table_for(target)
    fam = table.family
    n = len(code)
    if offset + 4 > n:
        raise DecodeError(offset, 0, "truncated instruction")
    w0 = _U32.unpack_from(code, offset)[0]
    enc = F.classify(w0, fam)
    if enc is None:
        raise DecodeError(offset, w0, "unknown or graphics-only encoding")
    if enc in F.SHORT:
        size, w1 = 4, 0
    else:
        if offset + 8 > n:
            raise DecodeError(offset, w0, "truncated 64-bit instruction")
        size, w1 = 8, _U32.unpack_from(code, offset + 4)[0]
    if enc == "VOPD":
        return _vopd(code, offset, w0, w1, table)
    op = F.opcode(enc, w0, w1, fam)
    if enc == "MIMG" and fam > 9:
        return _mimg(code, offset, w0, w1, op, table)
    if enc == "FLAT":
        enc = F.flat_segment(w0, fam)
    o = table.get((enc, op))
    if o is None:
        raise DecodeError(offset, w0, f"invalid {enc} opcode {op}")
    x = w0 | w1 << 32
    if x & o.must_mask != o.must_value:
        for shift in o.unused:
            if x >> shift & 0x1FF == 128:
                x &= ~(0x1FF << shift)
        if x & o.must_mask != o.must_value:
            raise DecodeError(offset, w0, f"invalid {o.name} encoding (fixed bits)")
    fl = F.fields(enc, w0, w1, fam)
    if enc == "MIMG" and o.name.endswith("cmpswap") and fl["vdata"] == 255:
        raise DecodeError(offset, w0, f"{o.name}: data registers past v255")
    words = [w0, w1] if size == 8 else [w0]
    inst = Instruction(pc=offset, size=size, encoding=enc, opcode=op, name=o.name, fields=fl)
    vop3 = enc == "VOP3" or enc == "VOP3P"
    if enc[0] == "V":
        size = _extension(code, offset, inst, o, words, fam)
    if o.t16:
        hi = 0
        for k, _ in o.t16:
            v = fl[k]
            if k == "src0" and v < 256:
                continue
            if v & 0x80:
                fl[k] = v & ~0x80
                hi |= {"src0": 1, "vsrc1": 2, "vdst": 8}[k]
        fl["opsel"], fl["t16"] = hi, 1
    if fam == 11:
        _normalise_scalars(enc, fl, o)
    if enc == "MTBUF" and fam > 9:
        fl["dfmt"], fl["nfmt"] = F.unified_format(fam, fl["format"]) or (0, 0)
    lit = False
    for s in o.lit_slots:
        v = fl[s]
        if v == F.LITERAL:
            if vop3 and fam == 9:
                raise DecodeError(offset, w0, "GFX9 VOP3 has no literal constants")
            lit = True
        elif (209 <= v <= 234 or (v == F.SDWA or v == F.DPP) and (vop3 or fam > 9)) and s != "soffset" \
                and not o.interp:
            raise DecodeError(offset, w0, f"reserved source operand {v}")
    if lit or o.kmk:
        if offset + size + 4 > n:
            raise DecodeError(offset, w0, "truncated literal")
        inst.literal = _U32.unpack_from(code, offset + size)[0]
        words.append(inst.literal)
        inst.size = size + 4
    inst.words = tuple(words)
    return inst


def _extension(code, offset, inst, o, words, fam) -> int:
    """A VALU instruction's DPP / DPP8 / SDWA dword, read into ``inst.dpp`` / ``inst.sdwa`` with the real
    ``src0`` put in the fields → the instruction's size so far."""
    fl, size, w0 = inst.fields, inst.size, words[0]
    s0 = fl["src0"]
    dpp8 = s0 == F.DPP8 or s0 == F.DPP8FI
    if size == 4 and (s0 == F.DPP and o.dpp or s0 == F.SDWA and o.sdwa or dpp8 and o.dpp8) \
            or size == 8 and inst.encoding in ("VOP3", "VOP3P") and (s0 == F.DPP and o.dpp or dpp8 and o.dpp8):
        if offset + size + 4 > len(code):
            raise DecodeError(offset, w0, "truncated DPP/SDWA word")
        x = _U32.unpack_from(code, offset + size)[0]
        words.append(x)
        inst.size = size = size + 4
        if s0 == F.DPP:
            inst.dpp = F.dpp_fields(x, fam)
            fl["src0"] = 256 + inst.dpp["src0"]
        elif s0 == F.SDWA:
            inst.sdwa = F.sdwa_fields(x)
            fl["src0"] = inst.sdwa["src0"] + (0 if inst.sdwa["s0"] else 256)
        else:
            inst.dpp = F.dpp8_fields(x, s0 - F.DPP8)
            fl["src0"] = 256 + inst.dpp["src0"]
    elif fam == 9 and size == 4 and (s0 == F.DPP or s0 == F.SDWA) \
            or fam > 9 and (s0 in (F.DPP, F.SDWA) or dpp8) and "src0" in o.lit_slots and not o.interp:
        raise DecodeError(offset, w0, f"{o.name} has no {'SDWA' if s0 == F.SDWA else 'DPP'} form")
    return size


def _normalise_scalars(enc, fl, o):
    """GFX11's M0 (125) and NULL (124) codes → GFX9's (124, 125) in the fields that hold scalar operands."""
    for k in _SCALAR.get(enc, ()):
        fl[k] = _swap(fl[k])
    if enc[0] == "V":
        for k in ("src0", "src1", "src2"):
            if k in fl and fl[k] < 256:
                fl[k] = _swap(fl[k])
        if o.vdst_scalar:
            fl["vdst"] = _swap(fl["vdst"])
        if enc == "VOP3" and "sdst" in fl:
            fl["sdst"] = _swap(fl["sdst"])


def _vopd(code, offset, w0, w1, table):
    fl = F.fields("VOPD", w0, w1, 11)
    ox, oy = table.get(("VOPDX", fl["opx"])), table.get(("VOPDY", fl["opy"]))
    if ox is None or oy is None:
        raise DecodeError(offset, w0, f"invalid VOPD opcodes {fl['opx']}/{fl['opy']}")
    for o, k in ((ox, "vsrcx1"), (oy, "vsrcy1")):
        if o.nsrc < 3 and fl[k]:
            raise DecodeError(offset, w0, f"{o.name}: unused VSRC1 must be 0")
    for k in ("srcx0", "srcy0"):
        if fl[k] < 256:
            fl[k] = _swap(fl[k])
        if 209 <= fl[k] <= 234 or fl[k] in (F.SDWA, F.DPP):
            raise DecodeError(offset, w0, f"reserved VOPD source operand {fl[k]}")
    fl["namex"], fl["namey"] = ox.name, oy.name
    inst = Instruction(pc=offset, size=8, encoding="VOPD", opcode=fl["opx"] << 5 | fl["opy"], name="vopd", fields=fl)
    words = [w0, w1]
    if F.LITERAL in (fl["srcx0"], fl["srcy0"]) or ox.kmk or oy.kmk:
        if offset + 12 > len(code):
            raise DecodeError(offset, w0, "truncated literal")
        inst.literal = _U32.unpack_from(code, offset + 8)[0]
        words.append(inst.literal)
        inst.size = 12
    inst.words = tuple(words)
    return inst


def _sgpr_tuple_ok(first: int, n: int, null: int) -> bool:
    """An SGPR tuple LLVM decodes: s0-s105 or ttmp0-ttmp15, not running past either, or NULL."""
    return first + n <= 106 or 108 <= first and first + n <= 124 or first == null


def _mimg(code, offset, w0, w1, op, table):
    """An image instruction: 8 bytes plus the NSA address dwords.  How many data and address VGPRs it has is
    not encoded; the generated ``mimg`` facts say, per opcode, DIM, A16, DMASK, D16 and TFE, what LLVM
    decodes (``fields``: ``data_regs`` the data VGPR count, ``addr_regs`` the widths of the address
    operands, ``vaddrs`` the address VGPR of each address dword)."""
    fam = table.family
    o = table.get(("MIMG", op))
    if o is None or o.mimg is None:
        raise DecodeError(offset, w0, f"invalid MIMG opcode {op}")
    if (w0 | w1 << 32) & o.must_mask != o.must_value:
        raise DecodeError(offset, w0, f"invalid {o.name} encoding (fixed bits)")
    m = o.mimg
    fl = F.fields("MIMG", w0, w1, fam)
    key = fl["dim"] * 2 + fl["a16"]
    ch = bin(fl["dmask"]).count("1")
    data = m["data"][(ch * 2 + fl["d16"]) * 2 + fl["tfe"]]
    if data is None:
        raise DecodeError(offset, w0, f"{o.name}: invalid DMASK/D16/TFE combination")
    dregs, default_addr = data
    plain = m["addr"][2 if m["dim"] else 0]
    k = fl["nsa"]
    size = 8 + 4 * k
    if offset + size > len(code):
        raise DecodeError(offset, w0, "truncated MIMG NSA address dwords")
    if k:
        ent = m["nsa"].get(k, m["nsa"].get(str(k)))
        ent = ent[key] if ent is not None else None
        if ent is None:
            raise DecodeError(offset, w0, f"{o.name}: invalid NSA form")
        if isinstance(ent, list):          # LLVM's default operand sizes
            ent, dregs = ent
        elif default_addr != plain and k in m["default"]:     # ... for this data size
            ent, dregs = m["default"][k]
        widths = (1,) * ent if isinstance(ent, int) else tuple(ent)
        regs = [fl["vaddr"]] + list(code[offset + 8:offset + size])
        vaddrs = []
        for i, wd in enumerate(widths):
            if regs[i] + wd > 256:
                raise DecodeError(offset, w0, f"{o.name}: address registers past v255")
            vaddrs.extend(range(regs[i], regs[i] + wd))
        fl["vaddrs"] = tuple(vaddrs)
    else:
        a = m["addr"][key]
        if a is None:
            raise DecodeError(offset, w0, f"{o.name}: invalid DIM/A16 combination")
        if isinstance(a, list):            # LLVM's default operand sizes
            a, dregs = a
        elif default_addr != plain:        # ... for this data size
            a = default_addr
        widths = (a,)
        fl["vaddrs"] = None
    if fl["vdata"] + dregs > 256 or not k and fl["vaddr"] + widths[0] > 256:
        # a tuple past v255: LLVM keeps the operand sizes of the variant it decoded
        dflt = m["default"].get(k, m["default"].get(str(k)))
        if dflt is None:
            raise DecodeError(offset, w0, f"{o.name}: data registers past v255")
        w_, dregs = dflt
        widths = (w_,) if isinstance(w_, int) else tuple(w_)
    null = F.NULL if fam == 10 else F.NULL11
    if fl["vdata"] + dregs > 256 or not k and fl["vaddr"] + widths[0] > 256 or \
            not _sgpr_tuple_ok(fl["srsrc"], 8 if m["dim"] else 4, null) or \
            m["samp"] and not _sgpr_tuple_ok(fl["ssamp"], 4, null):
        raise DecodeError(offset, w0, f"{o.name}: register tuple out of range")
    fl["data_regs"], fl["addr_regs"] = dregs, widths
    words = struct.unpack_from(f"<{size // 4}I", code, offset)
    inst = Instruction(pc=offset, size=size, encoding="MIMG", opcode=op, name=o.name, fields=fl)
    inst.words = tuple(words)
    return inst


def decode(code: bytes, target: str, base: int = 0, stop_at_endpgm: bool = False,
           tolerant: bool = False) -> list[Instruction]:
    """Linear sweep over ``code``; ``pc`` values are offsets plus ``base``.  ``tolerant``: a word that is
    not a valid instruction becomes a 4-byte :data:`INVALID` placeholder (with the decoder's message in
    ``fields['error']``) instead of an error — the engine faults only if a wave executes it, so one odd
    word does not make every kernel of a code object unusable."""
    table = table_for(target)
    out, off, n = [], 0, len(code)
    while off < n:
        try:
            inst = decode_one(code, off, target, table)
        except DecodeError as exc:
            if not tolerant or off + 4 > n:
                raise
            inst = Instruction(pc=off, size=4, encoding="INVALID", opcode=-1, name=INVALID,
                               fields={"error": str(exc)}, words=(exc.word,))
        inst.pc = base + off
        out.append(inst)
        off += inst.size
        if stop_at_endpgm and inst.name == "s_endpgm":
            break
    return out
