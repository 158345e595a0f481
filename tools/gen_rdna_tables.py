#!/usr/bin/env python3
"""Generate pyhip/emu/isa/_tables_gfx10.py (gfx1030) and _tables_gfx11.py (gfx1100): every opcode of every
RDNA compute encoding swept through llvm-mc-19's disassembler, the way tools/gen_gfx9_tables.py does it for
GFX9.  Per (encoding, opcode) the tables record: the LLVM mnemonic (without _e32/_e64/_dpp/_sdwa) and the
operand text of a sample encoding; the bits that must keep the sample's value (each bit flipped alone:
llvm-mc rejects the word); the class of each source operand (what llvm prints for 1/(2*pi) and a few
literals in that slot); VOP3 abs/neg/op_sel; which VOP1/VOP2/VOPC (and, GFX11, VOP3/VOP3P) opcodes have DPP16,
DPP8 and (GFX10) SDWA forms.  FLAT opcodes are recorded under FLAT/GLOBAL/SCRATCH by the seg field; GFX11
VOPD halves under VOPDX/VOPDY.  MIMG: how LLVM sizes each image opcode's data and address operands
(tools/gen_rdna_mimg.py).  BUF_FORMATS: the unified MTBUF format names (code → name).

Usage: python3 tools/gen_rdna_tables.py      (needs llvm-mc-19; the output is committed, never edited)
"""
import re
import struct
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from gen_gfx9_tables import HexInt, _slot_token, _type_of  # noqa: E402
import gen_rdna_mimg  # noqa: E402
from pyhip.emu.isa import formats as R  # noqa: E402
from pyhip.emu.isa import llvm_mc  # noqa: E402

TARGETS = {10: "gfx1030", 11: "gfx1100"}
V = lambda n: 256 + n  # noqa: E731  VGPR operand encoding
# distinct registers in every slot so the disassembler can tell the fields apart in the sample text
VD, VA, VB, VC = 24, 0, 8, 16


def _pack(*w):
    return struct.pack(f"<{len(w)}I", *w)


def samples(fam: int):
    """(encoding, opcode, bytes) candidates: per opcode, operand fields in several plausible shapes
    (llvm-mc rejects some encodings with unused fields set, others need them)."""
    fx = R.ENCODING_FIXED[fam]
    null = R.NULL if fam == 10 else R.NULL11
    for op in range(128):                                   # SOP2
        for sd, a, b in ((4, 0, 2), (4, 2, 0x80), (0, 0, 0), (4, 0xC1, 2)):
            yield "SOP2", op, _pack(fx["SOP2"] | op << 23 | sd << 16 | b << 8 | a)
            yield "SOP2", op, _pack(fx["SOP2"] | op << 23 | sd << 16 | b << 8 | a, 0x12345)
    for op in range(32):                                    # SOPK
        for sd, imm in ((4, 0x10), (0, 0), (null, 0), (4, 0x1801)):
            yield "SOPK", op, _pack(fx["SOPK"] | op << 23 | sd << 16 | imm)
            yield "SOPK", op, _pack(fx["SOPK"] | op << 23 | sd << 16 | imm, 0x12345)
    for op in range(256):                                   # SOP1
        for sd, a in ((4, 2), (0, 0), (4, 0), (null, 2)):
            yield "SOP1", op, _pack(fx["SOP1"] | sd << 16 | op << 8 | a)
    for op in range(128):                                   # SOPC / SOPP
        for a, b in ((2, 4), (0, 0), (0x80, 2)):
            yield "SOPC", op, _pack(fx["SOPC"] | op << 16 | b << 8 | a)
        for imm in (0, 1, 0x10):
            yield "SOPP", op, _pack(fx["SOPP"] | op << 16 | imm)
    for op in range(256):                                   # SMEM
        glc = 1 << (16 if fam == 10 else 14)
        for w0, w1 in ((2 | 16 << 6, 0x10 | null << 25), (2 | 16 << 6, 7 << 25), (4 | 16 << 6, 0x10 | null << 25),
                       (0, null << 25), (0, 0), (2 | 16 << 6 | glc, 0x10 | null << 25), (2 | 0x30 << 6, 0x10 | null << 25)):
            yield "SMEM", op, _pack(fx["SMEM"] | op << 18 | w0, w1)
    for op in range(64):                                    # VOP2
        for a, b in ((V(VA), VB), (0, VB), (V(VA), 0)):
            yield "VOP2", op, _pack(fx["VOP2"] | op << 25 | VD << 17 | b << 9 | a)
            yield "VOP2", op, _pack(fx["VOP2"] | op << 25 | VD << 17 | b << 9 | a, 0x12345)
    for op in range(256):                                   # VOP1 / VOPC
        for a, d in ((V(VA), VD), (0, VD), (V(VA), 0), (0, 0)):
            yield "VOP1", op, _pack(fx["VOP1"] | d << 17 | op << 9 | a)
        for a, b in ((V(VA), VB), (0, VB), (0, 0)):
            yield "VOPC", op, _pack(fx["VOPC"] | op << 17 | b << 9 | a)
    for op in range(1024):                                  # VOP3 (A and B)
        for w0, s in ((VD, (V(VA), V(VB), V(VC))), (VD, (V(VA), 2, 6)), (VD, (V(VA), 2, 0)), (VD, (2, 6, 0)),
                      (VD | 4 << 8, (V(VA), V(VB), V(VC))), (VD, (V(VA), 2, V(VC))),
                      (VD, (V(VA), V(VB), 2)), (VD | 4 << 8, (V(VA), V(VB), 2)), (VD, (2, V(VB), V(VC))),
                      (VD, (V(VA), V(VB), 0)), (VD, (V(VA), 0, 0)), (VD, (0, 0, 0)), (4, (V(VA), 2, 0)),
                      (4, (V(VA), V(VB), 0)), (4, (2, 0x80, 0)), (VD, (2, 6, 0)), (VD, (2, 6, V(VC))), (0, (0, 0, 0))):
            yield "VOP3", op, _pack(fx["VOP3"] | op << 16 | w0, s[2] << 18 | s[1] << 9 | s[0])
    for op in range(128):                                   # VOP3P
        for w0, s, hi in ((VD | 1 << 14, (V(VA), V(VB), V(VC)), 3), (VD, (V(VA), V(VB), V(VC)), 0),
                          (VD | 1 << 14, (V(VA), V(VB), V(VA)), 3), (VD, (V(VA), V(VB), V(VA)), 0),
                          (VD, (V(VA), V(VB), 0), 0), (VD, (V(VA), V(VB), 0), 3), (0, (0, 0, 0), 0)):
            yield "VOP3P", op, _pack(fx["VOP3P"] | op << 16 | w0, hi << 27 | s[2] << 18 | s[1] << 9 | s[0])
    for op in range(256):                                   # DS
        for w0, w1 in ((4, VD << 24 | VC << 16 | VB << 8 | VA), (4, VC << 16 | VB << 8 | VA), (4, VD << 24 | VB << 8 | VA),
                       (4, VD << 24 | VA), (4, VB << 8 | VA), (4, VA), (4, VD << 24), (0, 0)):
            yield "DS", op, _pack(fx["DS"] | op << 18 | w0, w1)
    for seg in (0, 1, 2):                                   # FLAT / SCRATCH / GLOBAL
        segbits = seg << (14 if fam == 10 else 16)
        for op in range(128):
            for sa, a, data, d, sve in ((null, VA, VB, VD, 0), (2, VA, VB, VD, 0), (null, VA, 0, VD, 0),
                                        (null, VA, VB, 0, 0), (2, VA, 0, VD, 0), (2, VA, VB, 0, 0),
                                        (null, VA, VB, VD, 1), (2, VA, VB, VD, 1), (2, 0, VB, VD, 0),
                                        (2, 0, 0, VD, 0), (2, 0, VB, 0, 0), (null, 0, 0, 0, 0), (0x7F, VA, VB, VD, 0)):
                if sve and fam == 10:
                    continue
                w1 = d << 24 | sve << 23 | sa << 16 | data << 8 | a
                yield "FLAT", op, _pack(fx["FLAT"] | op << 18 | segbits | 16, w1)
    for op in range(256):                                   # MUBUF (GFX10: op[7] is bit 25)
        opbits = (op & 0x7F) << 18 | (op >> 7) << 25 if fam == 10 else op << 18
        for so in (3, null, 0x80):
            for idx in ((1 << 12,) if fam == 10 else (1 << 22 + 32,)) + (0,):
                w0 = fx["MUBUF"] | opbits | 16
                w1 = so << 24 | 2 << 16 | VD << 8 | VA
                if idx >> 32:
                    w1 |= idx >> 32
                else:
                    w0 |= idx
                yield "MUBUF", op, _pack(w0, w1)
    for op in range(16):                                    # MTBUF
        for fmt in (1, 22, 0):
            for so in (3, null):
                if fam == 10:
                    w0 = fx["MTBUF"] | fmt << 19 | (op & 7) << 16 | 1 << 12 | 16
                    w1 = so << 24 | (op >> 3) << 21 | 2 << 16 | VD << 8 | VA
                else:
                    w0 = fx["MTBUF"] | fmt << 19 | op << 15 | 16
                    w1 = so << 24 | 1 << 22 | 2 << 16 | VD << 8 | VA
                yield "MTBUF", op, _pack(w0, w1)
    for op, b in gen_rdna_mimg.samples(fam):                # MIMG
        yield "MIMG", op, b
    if fam == 11:                                           # VOPD: each half against a few partners
        partners = ((4, 6, 7), (8, 0, 0))                   # (partner op, its vsrc1, the other vsrc1)
        for opx in range(16):
            for opy, vy1, _ in partners:
                for vx1 in (6, 0):
                    for sx in (V(0), 2):
                        w0 = fx["VOPD"] | opx << 22 | opy << 17 | vx1 << 9 | sx
                        w1 = 24 << 24 | (13 >> 1) << 17 | vy1 << 9 | V(1)
                        yield "VOPDX", opx, _pack(w0, w1, 0x12345)
                        yield "VOPDX", opx, _pack(w0, w1)
        for opy in range(32):
            for opx, vx1, _ in partners:
                for vy1 in (7, 0):
                    for sy in (V(1), 2):
                        w0 = fx["VOPD"] | opx << 22 | opy << 17 | vx1 << 9 | V(0)
                        w1 = 24 << 24 | (13 >> 1) << 17 | vy1 << 9 | sy
                        yield "VOPDY", opy, _pack(w0, w1, 0x12345)
                        yield "VOPDY", opy, _pack(w0, w1)
    for enc, fixed in fx.items():                           # last resort: every opcode, other fields zero
        if enc == "VOPD":
            continue
        shift, bits = R.OPCODE_FIELD[fam][enc]
        for op in range(1 << bits):
            w0 = fixed | op << shift
            if enc == "MTBUF" and fam == 10:
                yield enc, op, _pack(fixed | (op & 7) << 16, (op >> 3) << 21)
            elif enc in R.SHORT:
                yield enc, op, _pack(w0)
            else:
                yield enc, op, _pack(w0, 0)


def _one(res):
    return res is not None and len(res) == 1 and not res[0].startswith("<")


def _base_mnemonic(m: str) -> str:
    return re.sub(r"_(e32|e64)$", "", m)


def sweep(fam: int):
    """OPCODES and INFO for one family."""
    target = TARGETS[fam]
    items = list(samples(fam))
    res = llvm_mc.disassemble([b for _, _, b in items], target)
    table, base, alts = {}, {}, {}
    for (enc, op, b), r in zip(items, res):
        if r is not None and any(re.search(r"0xbf8fbee|0xbfb5bee|-1.*bee", t) for t in r):
            continue                                        # the sample swallowed a marker word
        if enc in ("VOPDX", "VOPDY"):
            if r is None or len(r) != 1 or "::" not in r[0]:
                continue
            x, _, y = r[0].partition("::")
            part = x if enc == "VOPDX" else y
            mnem, _, operands = part.strip().partition(" ")
            if (enc, op) not in table:
                table[(enc, op)] = (mnem, mnem, operands.strip(), b.hex())
                base[(enc, op)] = b
            continue
        if not _one(r):
            continue
        w0 = struct.unpack_from("<I", b)[0]
        w1 = struct.unpack_from("<I", b, 4)[0] if len(b) >= 8 else 0
        if R.classify(w0, fam) != ("FLAT" if enc == "FLAT" else enc):
            continue
        key_enc = R.flat_segment(w0, fam) if enc == "FLAT" else enc
        if R.opcode(enc, w0, w1, fam) != op:
            continue
        mnem, _, operands = r[0].partition(" ")
        if mnem.endswith(("_dpp", "_sdwa")):
            continue
        size = 4 if enc in R.SHORT else 8
        if len(b) > size and not _needs_literal(r[0], b):
            b = b[:size]
        if (key_enc, op) in table:
            if "/*" in table[(key_enc, op)][2] and "/*" not in operands and table[(key_enc, op)][1] == mnem:
                table[(key_enc, op)] = (_base_mnemonic(mnem), mnem, operands.strip(), b.hex())   # a valid sample
                base[(key_enc, op)] = b
                alts[(key_enc, op)].insert(0, b)
            elif table[(key_enc, op)][1] == mnem and len(b) == len(base[(key_enc, op)]):
                alts[(key_enc, op)].append(b)
            continue
        table[(key_enc, op)] = (_base_mnemonic(mnem), mnem, operands.strip(), b.hex())
        base[(key_enc, op)] = b
        alts[(key_enc, op)] = [b]
    info = {k: {} for k in table}
    _must_bits(fam, target, alts, info)
    _src_types(fam, target, base, table, info)
    _vop3_mods(fam, target, base, info)
    _dpp_forms(fam, target, base, info)
    for op, m in gen_rdna_mimg.info(fam, target, table, llvm_mc.disassemble).items():
        info[("MIMG", op)]["mimg"] = m
    return table, info


def _needs_literal(text: str, b: bytes) -> bool:
    return "0x12345" in text or "74565" in text


def _must_bits(fam, target, alts, info):
    """The bits that must keep a fixed value: a bit is fixed when every accepted sample of the opcode has the
    same value there and llvm-mc rejects each of them with that bit flipped alone."""
    probes, keys = [], []
    for key, samples_ in alts.items():
        enc = key[0]
        if enc in ("VOPDX", "VOPDY"):       # operand bank rules tie the halves together: no per-bit facts
            continue
        nbits = 32 if enc in R.SHORT else 64
        ebits = R.ENCODING_BITS[fam]["FLAT" if enc in ("GLOBAL", "SCRATCH") else enc]
        free = R.MIMG_SIZED_BITS[fam] if enc == "MIMG" else 0
        for si, b in enumerate(samples_[:6]):
            words = list(struct.unpack(f"<{len(b) // 4}I", b))
            for bit in range(nbits):
                if bit < 32 and ebits >> bit & 1 or free >> bit & 1:
                    continue
                w = list(words)
                w[bit // 32] ^= 1 << (bit % 32)
                probes.append(struct.pack(f"<{len(w)}I", *w))
                keys.append((key, si, bit))
    rejected = {}
    for (key, si, bit), r in zip(keys, llvm_mc.disassemble(probes, target)):
        ok = r is not None and len(r) == 1 and not r[0].startswith("<")
        rejected.setdefault((key, bit), []).append(not ok)
    for key, d in info.items():
        samples_ = alts.get(key, [])[:6]
        vals = [int.from_bytes((b + bytes(8))[:8], "little") for b in samples_]
        mask = 0
        for bit in range(64):
            flags = rejected.get((key, bit))
            if flags and all(flags) and len({v >> bit & 1 for v in vals}) == 1:
                mask |= 1 << bit
        d["must_mask"] = mask
        d["must_value"] = (vals[0] if vals else 0) & mask


SRC_SLOTS = {
    "SOP2": {"ssrc0": (0, 0, 8), "ssrc1": (0, 8, 8)}, "SOP1": {"ssrc0": (0, 0, 8)},
    "SOPC": {"ssrc0": (0, 0, 8), "ssrc1": (0, 8, 8)},
    "VOP1": {"src0": (0, 0, 9)}, "VOP2": {"src0": (0, 0, 9)}, "VOPC": {"src0": (0, 0, 9)},
    "VOP3": {"src0": (1, 0, 9), "src1": (1, 9, 9), "src2": (1, 18, 9)},
    "VOP3P": {"src0": (1, 0, 9), "src1": (1, 9, 9), "src2": (1, 18, 9)},
    "VOPDX": {"src0": (0, 0, 9)}, "VOPDY": {"src0": (1, 0, 9)},
}


def _src_types(fam, target, base, table, info):
    """What llvm prints for 1/(2*pi), 1.0 and a few literals in each source slot."""
    probes, keys = [], []
    for key, b in base.items():
        enc = key[0]
        for slot, (word, shift, width) in SRC_SLOTS.get(enc, {}).items():
            words = list(struct.unpack(f"<{len(b) // 4}I", b))
            if enc in ("VOPDX", "VOPDY"):
                words = words[:2]
            for code, lit in ((248, None), (242, None), (255, 0x3C00), (255, 0x3F800000), (255, 0x40), (255, 0xC0000000)):
                w = list(words)
                w[word] = (w[word] & ~(((1 << width) - 1) << shift)) | code << shift
                if lit is not None:
                    w.append(lit)
                probes.append(struct.pack(f"<{len(w)}I", *w))
                keys.append((key, slot, code, lit))
    for (key, slot, code, lit), r in zip(keys, llvm_mc.disassemble(probes, target)):
        if key[0] in ("VOPDX", "VOPDY"):
            ok = r is not None and len(r) == 1 and "::" in r[0]
            part = (r[0].split("::")[0] if key[0] == "VOPDX" else r[0].split("::")[1]).strip() if ok else None
            tok = _slot_token(part, table[key][1] + " " + table[key][2]) if ok else None
        else:
            tok = _slot_token(r[0], table[key][1] + " " + table[key][2]) if _one(r) else None
        info[key].setdefault("src_probe", {}).setdefault(slot, []).append(tok)
    for key in info:
        info[key]["src_types"] = {s: _type_of(t) for s, t in info[key].pop("src_probe", {}).items()}


def _vop3_mods(fam, target, base, info):
    """VOP3 source modifiers and op_sel: printed for which sources?"""
    probes, keys = [], []
    for key, b in base.items():
        if key[0] != "VOP3":
            continue
        w0, w1 = struct.unpack_from("<II", b)
        for i in range(3):
            probes.append(struct.pack("<II", w0 | 1 << (8 + i), w1))
            keys.append((key, "abs", i))
            probes.append(struct.pack("<II", w0, w1 | 1 << (29 + i)))
            keys.append((key, "neg", i))
        probes.append(struct.pack("<II", w0 | 0xF << 11, w1))
        keys.append((key, "opsel", 0))
    for (key, what, i), r in zip(keys, llvm_mc.disassemble(probes, target)):
        d = info[key]
        if what == "opsel":
            d["opsel"] = bool(_one(r) and "op_sel:" in r[0])
        elif _one(r) and ("|" in r[0] if what == "abs" else re.search(r"[ ,]-[^0-9 ,]|[ ,]-\d+\.|neg\(", r[0])):
            d["mods"] = d.get("mods", 0) | 1 << i


def _dpp_forms(fam, target, base, info):
    """DPP16, DPP8 and (GFX10) SDWA forms of VOP1/VOP2/VOPC; GFX11 also VOP3/VOP3P DPP."""
    probes, keys = [], []
    for key, b in base.items():
        enc = key[0]
        if enc in ("VOP1", "VOP2", "VOPC"):
            w0 = struct.unpack_from("<I", b)[0] & ~0x1FF
            probes.append(struct.pack("<II", w0 | 250, 0xFF0000E4 | 1))
            keys.append((key, "dpp"))
            probes.append(struct.pack("<II", w0 | 233, 0x00FAC688 | 1 << 0))
            keys.append((key, "dpp8"))
            if fam == 10:
                probes.append(struct.pack("<II", w0 | 249, {"VOP1": 0x00060601, "VOP2": 0x06060601, "VOPC": 0x06060001}[enc]))
                keys.append((key, "sdwa"))
        elif enc in ("VOP3", "VOP3P") and fam == 11:
            w0, w1 = struct.unpack_from("<II", b)
            w1 = (w1 & ~0x1FF)
            probes.append(struct.pack("<III", w0, w1 | 250, 0xFF0000E4 | 1))
            keys.append((key, "dpp"))
            probes.append(struct.pack("<III", w0, w1 | 233, 0x00FAC688 | 1))
            keys.append((key, "dpp8"))
    for (key, form), r in zip(keys, llvm_mc.disassemble(probes, target)):
        good = _one(r) and (("dpp8:" in r[0]) == (form == "dpp8")) and \
            ("sdwa" in r[0].split()[0] if form == "sdwa" else ("row_mask" in r[0] or "dpp8:" in r[0]))
        info[key][form] = bool(good)
        if good and form == "dpp":
            info[key]["dpp_name"] = r[0].split()[0]


def buf_formats(fam: int) -> dict:
    """code → unified buffer format name, from tbuffer_load_format_x with every format code."""
    fx = R.ENCODING_FIXED[fam]
    items = []
    for code in range(128):
        if fam == 10:
            items.append(_pack(fx["MTBUF"] | code << 19 | 16, R.NULL << 24 | 2 << 16 | VD << 8 | VA))
        else:
            items.append(_pack(fx["MTBUF"] | code << 19 | 16, R.NULL11 << 24 | 2 << 16 | VD << 8 | VA))
    out = {}
    for code, r in enumerate(llvm_mc.disassemble(items, TARGETS[fam])):
        if _one(r):
            m = re.search(r"format:\[?([A-Z0-9_]+)", r[0])
            if m:
                out[code] = m.group(1)
            elif "format:" not in r[0]:
                out[code] = "DEFAULT"
            else:
                m = re.search(r"format:(\d+)", r[0])
                out[code] = m.group(1) if m else r[0]
    return out


def symbolic(fam: int) -> tuple[dict, dict]:
    """HWREG names (id → name, from s_getreg_b32 with every id) and s_sendmsg operand texts (simm16 → text,
    for the 10-bit message/operation/stream space) as llvm-mc prints them."""
    target, fx = TARGETS[fam], R.ENCODING_FIXED[fam]
    t = TABLE_OPS[fam]
    getreg = [_pack(fx["SOPK"] | t["s_getreg_b32"] << 23 | 3 << 16 | 31 << 11 | i) for i in range(64)]
    hw = {}
    for i, r in enumerate(llvm_mc.disassemble(getreg, target)):
        m = re.search(r"hwreg\((\w+)\)", r[0]) if _one(r) else None
        if m and not m.group(1).isdigit():
            hw[i] = m.group(1)
    msgs = [_pack(fx["SOPP"] | t["s_sendmsg"] << 16 | v) for v in range(1024)]
    sm = {}
    for v, r in enumerate(llvm_mc.disassemble(msgs, target)):
        if _one(r):
            sm[v] = r[0].partition(" ")[2]
    return hw, sm


TABLE_OPS = {}


def main() -> None:
    for fam, target in TARGETS.items():
        table, info = sweep(fam)
        TABLE_OPS[fam] = {e[0]: op for (enc, op), e in table.items() if enc in ("SOPK", "SOPP")}
        hwregs, sendmsgs = symbolic(fam)
        lines = [f'"""{target} (GFX{fam}) opcode tables generated by tools/gen_rdna_tables.py from llvm-mc-19 sweeps.',
                 "Do not edit.", "",
                 "OPCODES[encoding][opcode] = (mnemonic, llvm_mnemonic_with_suffix, sample_operands, sample_hex)",
                 "INFO[encoding][opcode] = {'must_mask', 'must_value': (word1 << 32 | word0) & must_mask must equal",
                 "    must_value, 'src_types': {slot: 'b32' | 'f16' | 'i16' | 'f64' | 'b64' | None}, 'dpp', 'dpp8',",
                 "    'sdwa': bool, VOP3: 'mods': bit i set if source i takes abs/neg, 'opsel': op_sel printed}",
                 "BUF_FORMATS[code] = unified MTBUF format name; HWREGS[id] = hwreg name;",
                 "SENDMSG[simm16] = s_sendmsg operand text",
                 '"""', "", f"TARGET = {target!r}", "", "OPCODES = {"]
        for enc in sorted({k[0] for k in table}):
            lines.append(f"    {enc!r}: {{")
            for (e, op), entry in sorted(table.items()):
                if e == enc:
                    lines.append(f"        {op}: {entry!r},")
            lines.append("    },")
        lines += ["}", "", "INFO = {"]
        for enc in sorted({k[0] for k in info}):
            lines.append(f"    {enc!r}: {{")
            for (e, op), d in sorted(info.items()):
                if e == enc:
                    d = dict(sorted(d.items()))
                    for k in ("must_mask", "must_value"):
                        d[k] = HexInt(d[k])
                    lines.append(f"        {op}: {d!r},")
            lines.append("    },")
        lines += ["}", "", "BUF_FORMATS = {"]
        for code, name in sorted(buf_formats(fam).items()):
            lines.append(f"    {code}: {name!r},")
        lines.append("}")
        lines += ["", f"HWREGS = {hwregs!r}", "", "SENDMSG = {"]
        for v, text in sorted(sendmsgs.items()):
            lines.append(f"    {v}: {text!r},")
        lines.append("}")
        out = Path(__file__).resolve().parent.parent / "pyhip" / "emu" / "isa" / f"_tables_gfx{fam}.py"
        out.write_text("\n".join(lines) + "\n")
        print(f"{target}: {len(table)} opcodes -> {out}")


if __name__ == "__main__":
    main()
