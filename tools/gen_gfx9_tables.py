#!/usr/bin/env python3
"""Generate pyhip/emu/isa/_tables_gfx9.py: for gfx90a and gfx942, every opcode of every GFX9 encoding
swept through llvm-mc-19's disassembler.  Per (target, encoding, opcode) the tables record: valid or not,
the LLVM mnemonic (without the _e32/_e64/_dpp/_sdwa suffix) and the operand text of a sample encoding
(operand order, registers per operand, fixed operands such as vcc/off); the bits that must keep the sample's value (each
bit of the sample flipped alone: llvm-mc rejects the word; usually unused fields that must be zero); the class of each source operand (what llvm
prints for 1/(2*pi) and a few literals in that slot: b32, f16, i16, f64, b64); whether the VOP1/VOP2/VOPC
opcode has DPP and SDWA forms.  FLAT opcodes are recorded under FLAT/GLOBAL/SCRATCH by the seg field.

Usage: python3 tools/gen_gfx9_tables.py      (needs llvm-mc-19; the output is committed, never edited)
"""
import re
import struct
from pathlib import Path

import sys

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from pyhip.emu.isa import formats as F  # noqa: E402

TARGETS = ("gfx90a", "gfx942")
V = lambda n: 256 + n  # noqa: E731  VGPR operand encoding


def samples():
    """Candidate encodings for every opcode of every encoding: one with all other fields zero, one with
    plain register operands (llvm-mc rejects some encodings with unused fields set, others need them)."""
    for op in range(128):
        yield struct.pack("<I", (2 << 30) | (op << 23))
        yield struct.pack("<I", (2 << 30) | (op << 23) | (4 << 16) | (2 << 8) | 0)
    for op in range(32):
        yield struct.pack("<I", (0xB << 28) | (op << 23) | (4 << 16) | 0x10)
    for op in range(256):
        yield struct.pack("<I", 0xBE800000 | (4 << 16) | (op << 8) | 2)
        yield struct.pack("<I", 0xBE800000 | (op << 8))
    for op in range(128):
        yield struct.pack("<I", 0xBF000000 | (op << 16) | (2 << 8) | 0)
        yield struct.pack("<I", 0xBF800000 | (op << 16) | 1)
        yield struct.pack("<I", 0xBF800000 | (op << 16))
    for op in range(256):
        yield struct.pack("<II", (0x30 << 26) | (op << 18) | (1 << 17) | (4 << 6) | 2, 16)
        yield struct.pack("<II", (0x30 << 26) | (op << 18) | (1 << 17), 0)
    for op in range(64):
        yield struct.pack("<I", (op << 25) | (3 << 17) | (2 << 9) | V(1))
        yield struct.pack("<I", (op << 25) | (4 << 17) | (2 << 9) | V(0))
    for op in range(256):
        yield struct.pack("<I", (0x3F << 25) | (4 << 17) | (op << 9) | V(2))
        yield struct.pack("<I", (0x3E << 25) | (op << 17) | (2 << 9) | V(4))
    for op in range(1024):
        yield struct.pack("<II", (0x34 << 26) | (op << 16) | 4, (V(4) << 18) | (V(2) << 9) | V(0))
        # SGPR operands where the instruction takes only those (v_cndmask's carry-in, v_readlane's lane select,
        # v_writelane's value and lane), numbered apart so the operands map to fields unambiguously
        yield struct.pack("<II", (0x34 << 26) | (op << 16) | 4, (4 << 18) | (V(2) << 9) | V(0))
        yield struct.pack("<II", (0x34 << 26) | (op << 16) | 4, (V(2) << 9) | V(0))
        yield struct.pack("<II", (0x34 << 26) | (op << 16) | 4, (2 << 9) | V(0))
        yield struct.pack("<II", (0x34 << 26) | (op << 16) | 4, (2 << 9) | 6)
        yield struct.pack("<II", (0x34 << 26) | (op << 16) | 4, V(0))
        yield struct.pack("<II", (0x34 << 26) | (op << 16) | (6 << 8) | 4, (V(4) << 18) | (V(2) << 9) | V(0))
        yield struct.pack("<II", (0x34 << 26) | (op << 16), 0)
    for op in range(128):
        yield struct.pack("<II", (0x1A7 << 23) | (op << 16) | 4, (V(8) << 18) | (V(4) << 9) | V(0))
        yield struct.pack("<II", (0x1A7 << 23) | (op << 16) | 4, (V(4) << 9) | V(0))
        yield struct.pack("<II", (0x1A7 << 23) | (op << 16) | (1 << 15) | 4, (V(8) << 18) | (V(4) << 9) | V(0))
        yield struct.pack("<II", (0x1A7 << 23) | (op << 16) | (1 << 15), (0 << 18) | (V(4) << 9) | V(0))
    for op in range(256):
        for w1 in ((8 << 24) | (4 << 16) | (2 << 8), (8 << 24) | (2 << 8), (8 << 24), (4 << 16) | (2 << 8), (2 << 8), 0):
            yield struct.pack("<II", (0x36 << 26) | (op << 17) | 4, w1)
        for w1 in (4, 0):                                # global wave sync (ds_gws_*): only with the gds bit
            yield struct.pack("<II", (0x36 << 26) | (op << 17) | (1 << 16), w1)
    for seg in (0, 1, 2):
        for op in range(128):
            for w1 in ((8 << 24) | (0x7F << 16) | 2, (0x7F << 16) | (4 << 8) | 2, (8 << 24) | (0x7F << 16) | (4 << 8) | 2,
                       (8 << 24) | (0x7F << 16), (0x7F << 16) | (4 << 8), (8 << 24) | (2 << 16) | 2,
                       (8 << 24) | 2, (4 << 8) | 2, (8 << 24) | (4 << 8) | 2):
                yield struct.pack("<II", (0x37 << 26) | (op << 18) | (seg << 14), w1)
    for op in range(128):
        yield struct.pack("<II", (0x38 << 26) | (op << 18), (0x80 << 24) | (1 << 16) | (4 << 8) | 2)
        yield struct.pack("<II", (0x38 << 26) | (op << 18) | (1 << 12), (0x80 << 24) | (1 << 16) | (4 << 8) | 2)
    for op in range(16):
        yield struct.pack("<II", (0x3A << 26) | (1 << 23) | (4 << 19) | (op << 15), (0x80 << 24) | (1 << 16) | (4 << 8) | 2)
    for op in range(128):           # MIMG: dmask 1, v2 <- v0, T# s[4:11]; with and without the sampler s[8:11]
        for ssamp in (2, 0):
            yield struct.pack("<II", (0x3C << 26) | (op << 18) | (1 << 8), (ssamp << 21) | (1 << 16) | (2 << 8))

    for enc, fixed in F.ENCODING_FIXED[9].items():        # last resort: every opcode with all other fields zero
        shift, bits = F.OPCODE_FIELD[9][enc]
        for op in range(1 << bits):
            w0 = fixed | op << shift
            if enc in ("FLAT", "MUBUF", "MTBUF", "SMEM", "VOP3", "VOP3P", "DS", "MIMG"):
                for seg in ((0, 1, 2) if enc == "FLAT" else (0,)):
                    yield struct.pack("<II", w0 | seg << 14, 0)
                    yield struct.pack("<II", w0 | seg << 14, 0x7F0000 if enc == "FLAT" else 0)
            else:
                yield struct.pack("<I", w0)


def _llvm_mc():
    from pyhip.emu.isa import llvm_mc
    return llvm_mc


def _one(res):
    return res is not None and len(res) == 1 and not res[0].startswith("<")


def sweep(target: str):
    """OPCODES and INFO for one target."""
    mc = _llvm_mc()
    items = list(samples())
    res = mc.disassemble(items, target)
    table, base = {}, {}
    for b, r in zip(items, res):
        if not _one(r) or "Invalid" in r[0]:      # (llvm-mc prints some encodings it rejects, with a comment)
            continue
        w0 = struct.unpack_from("<I", b)[0]
        fmt = F.classify(w0, 9)
        if fmt is None:
            continue
        op = F.opcode(fmt, w0, 0, 9)
        if fmt == "FLAT":
            fmt = F.flat_segment(w0, 9)
        text = r[0]
        mnem, _, operands = text.partition(" ")
        if mnem.endswith(("_dpp", "_sdwa")) or (fmt, op) in table:
            continue
        table[(fmt, op)] = (re.sub(r"_(e32|e64)$", "", mnem), mnem, operands.strip(), b.hex())
        base[(fmt, op)] = b
    info = {k: {} for k in table}
    # 1. which bits must be zero: flip every bit outside the encoding/opcode fields of the base sample
    probes, keys = [], []
    for key, b in base.items():
        words = list(struct.unpack(f"<{len(b) // 4}I", b))
        nbits = 64 if len(words) >= 2 else 32
        fixed = _fixed_mask(key[0], words[0])
        for bit in range(nbits):
            if bit < 32 and fixed >> bit & 1:
                continue
            w = list(words)
            w[bit // 32] ^= 1 << (bit % 32)
            probes.append(struct.pack(f"<{len(w)}I", *w))
            keys.append((key, bit))
    for (key, bit), r in zip(keys, mc.disassemble(probes, target)):
        if not _one(r):
            info[key]["must_mask"] = info[key].get("must_mask", 0) | 1 << bit
    for key, d in info.items():
        b = base[key] + bytes(8)
        d["must_mask"] = d.get("must_mask", 0)
        d["must_value"] = int.from_bytes(b[:8], "little") & d["must_mask"]
    # 2. source operand types: what llvm prints for 1/(2*pi) and for a few literals in each source slot
    probes, keys = [], []
    for key, b in base.items():
        enc = key[0]
        for slot, (word, shift, width) in SRC_SLOTS.get(enc, {}).items():
            words = list(struct.unpack(f"<{len(b) // 4}I", b))
            if word >= len(words):
                continue
            for code, lit in ((248, None), (242, None), (255, 0x3C00), (255, 0x3F800000), (255, 0x40), (255, 0xC0000000)):
                w = list(words)
                w[word] = (w[word] & ~(((1 << width) - 1) << shift)) | code << shift
                if lit is not None:
                    w.append(lit)
                probes.append(struct.pack(f"<{len(w)}I", *w))
                keys.append((key, slot, code, lit))
    for (key, slot, code, lit), r in zip(keys, mc.disassemble(probes, target)):
        base_text = table[key][1] + " " + table[key][2]
        tok = _slot_token(r[0], base_text) if _one(r) else None
        info[key].setdefault("src_probe", {}).setdefault(slot, []).append(tok)
    for key in info:
        info[key]["src_types"] = {s: _type_of(t) for s, t in info[key].pop("src_probe", {}).items()}
    # 3. VOP3 source modifiers and op_sel: printed for which sources?
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
    for (key, what, i), r in zip(keys, mc.disassemble(probes, target)):
        d = info[key]
        if what == "opsel":
            d["opsel"] = bool(_one(r) and "op_sel:" in r[0])
        elif _one(r) and ("|" in r[0] if what == "abs" else re.search(r"[ ,]-[^0-9 ,]|[ ,]-\d+\.", r[0])):
            d["mods"] = d.get("mods", 0) | 1 << i
    # 4. DPP and SDWA forms of VOP1/VOP2/VOPC
    probes, keys = [], []
    for key, b in base.items():
        if key[0] not in ("VOP1", "VOP2", "VOPC"):
            continue
        w0 = struct.unpack_from("<I", b)[0] & ~0x1FF
        probes.append(struct.pack("<II", w0 | 250, 0xFF0000E4 | 1))          # quad_perm:[0,1,2,3] v1
        keys.append((key, "dpp"))
        probes.append(struct.pack("<II", w0 | 249, {"VOP1": 0x00060601, "VOP2": 0x06060601, "VOPC": 0x06060001}[key[0]]))
        keys.append((key, "sdwa"))
    for (key, form), r in zip(keys, mc.disassemble(probes, target)):
        info[key][form] = bool(_one(r) and r[0].split()[0].endswith("_" + form))
    return table, info


# (word index, shift, width) of each source field that can hold an inline constant or a literal
SRC_SLOTS = {
    "SOP2": {"ssrc0": (0, 0, 8), "ssrc1": (0, 8, 8)}, "SOP1": {"ssrc0": (0, 0, 8)},
    "SOPC": {"ssrc0": (0, 0, 8), "ssrc1": (0, 8, 8)},
    "VOP1": {"src0": (0, 0, 9)}, "VOP2": {"src0": (0, 0, 9)}, "VOPC": {"src0": (0, 0, 9)},
    "VOP3": {"src0": (1, 0, 9), "src1": (1, 9, 9), "src2": (1, 18, 9)},
    "VOP3P": {"src0": (1, 0, 9), "src1": (1, 9, 9), "src2": (1, 18, 9)},
}

def _operands(text: str) -> list:
    text = re.sub(r"/\*.*?\*/", "", text.partition(" ")[2])
    text = re.sub(r"\s\w+:\[[^\]]*\]", "", text)
    return [o.strip() for o in re.split(r"[, ]+", text) if o.strip()]


def _slot_token(text: str, base_text: str):
    """The printed source operand: the first operand that differs from the base sample's text."""
    a, b = _operands(text), _operands(base_text)
    for i, tok in enumerate(a):
        if i >= len(b) or tok != b[i]:
            return tok
    return None


def _type_of(tokens):
    """Source operand class from the printed probes (1/(2pi), 1.0, literal 0x3c00, 0x3f800000, 0x40,
    0xc0000000): 'f16', 'i16', 'b32', 'f64', 'b64', or None (no such source / probe failed)."""
    inv, one, h, f, i, neg = tokens
    if inv is None:
        return None
    if inv == "0.15915494309189532":
        return "f64" if i == "0x40" else "b64"
    if inv == "0x3118":
        return "i16"
    if h == "1.0":
        return "f16"
    if f == "1.0" or (inv == "0.15915494" and h is None):      # VOP3 has no literals on GFX9
        return "b32"
    return "?" + "|".join(str(t) for t in tokens)


def _fixed_mask(enc: str, w0: int) -> int:
    """Bits of word 0 that select the encoding and opcode (not flipped by the probes)."""
    return F.ENCODING_BITS[9][enc if enc not in ("GLOBAL", "SCRATCH") else "FLAT"]


def main() -> None:
    lines = ['"""GFX9 opcode tables generated by tools/gen_gfx9_tables.py from llvm-mc-19 sweeps. Do not edit.',
             "",
             "OPCODES[target][encoding][opcode] = (mnemonic, llvm_mnemonic_with_suffix, sample_operands, sample_hex)",
             "INFO[target][encoding][opcode] = {'must_mask', 'must_value': (word1 << 32 | word0) & must_mask must equal",
             "    must_value (bits llvm-mc rejects when flipped alone in the sample),",
             "    'src_types': {slot: 'b32' | 'f16' | 'i16' | 'f64' | 'b64' | None}, 'dpp': bool, 'sdwa': bool,",
             "    VOP3: 'mods': bit i set if source i takes abs/neg, 'opsel': op_sel printed}",
             '"""', "", "OPCODES = {"]
    infos = {}
    for t in TARGETS:
        table, info = sweep(t)
        infos[t] = info
        lines.append(f"    {t!r}: {{")
        for enc in sorted({k[0] for k in table}):
            lines.append(f"        {enc!r}: {{")
            for (e, op), entry in sorted(table.items()):
                if e == enc:
                    lines.append(f"            {op}: {entry!r},")
            lines.append("        },")
        lines.append("    },")
    lines.append("}")
    lines.append("")
    lines.append("INFO = {")
    for t, info in infos.items():
        lines.append(f"    {t!r}: {{")
        for enc in sorted({k[0] for k in info}):
            lines.append(f"        {enc!r}: {{")
            for (e, op), d in sorted(info.items()):
                if e == enc:
                    d = dict(sorted(d.items()))
                    for k in ("must_mask", "must_value"):
                        d[k] = HexInt(d[k])
                    lines.append(f"            {op}: {d!r},")
            lines.append("        },")
        lines.append("    },")
    lines.append("}")
    Path(__file__).resolve().parent.parent.joinpath("pyhip", "emu", "isa", "_tables_gfx9.py").write_text("\n".join(lines) + "\n")


class HexInt(int):
    def __repr__(self):
        return f"0x{int(self):x}"


if __name__ == "__main__":
    main()
