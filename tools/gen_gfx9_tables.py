#!/usr/bin/env python3
"""Generate pyhip/emu/isa/_tables_gfx9.py: for gfx90a and gfx942, every opcode of every GFX9 encoding
swept through llvm-mc-19's disassembler; the table records which opcodes are valid and their LLVM
mnemonic (without the _e32/_e64/_dpp/_sdwa suffix), plus the operand text of the sample encoding.

Usage: python3 tools/gen_gfx9_tables.py      (needs llvm-mc-19; the output is committed, never edited)
"""
import re
import struct
import subprocess
import tempfile
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
        yield struct.pack("<II", (0x34 << 26) | (op << 16) | 4, (V(2) << 9) | V(0))
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


def sweep(target: str) -> dict:
    items = list(samples())
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
        for b in items:
            f.write(" ".join(f"0x{x:02x}" for x in b) + "\n")
        path = f.name
    out = subprocess.run(["llvm-mc-19", "-disassemble", "-triple=amdgcn-amd-amdhsa", f"-mcpu={target}",
                          "-show-encoding", path], capture_output=True, text=True).stdout
    table = {}
    for line in out.splitlines():
        m = re.match(r"\s*(\S+)(.*?)\s*; encoding: \[(.*)\]", line)
        if not m:
            continue
        enc = bytes(int(x, 16) for x in m.group(3).split(","))
        w0 = struct.unpack_from("<I", enc)[0]
        fmt = F.classify(w0)
        if fmt is None:
            continue
        op = F.opcode(fmt, w0)
        if fmt == "FLAT":
            fmt = F.flat_segment(w0)
        mnem = m.group(1)
        if mnem.endswith(("_dpp", "_sdwa")):
            continue
        base = re.sub(r"_(e32|e64)$", "", mnem)
        table.setdefault(fmt, {}).setdefault(op, (base, mnem, m.group(2).strip(), enc.hex()))
    return table


def main() -> None:
    lines = ['"""GFX9 opcode tables generated by tools/gen_gfx9_tables.py from llvm-mc-19 sweeps. Do not edit.',
             "", "OPCODES[target][encoding][opcode] = (mnemonic, llvm_mnemonic_with_suffix, sample_operands, sample_hex)", '"""',
             "", "OPCODES = {"]
    for t in TARGETS:
        table = sweep(t)
        lines.append(f"    {t!r}: {{")
        for enc in sorted(table):
            lines.append(f"        {enc!r}: {{")
            for op, entry in sorted(table[enc].items()):
                lines.append(f"            {op}: {entry!r},")
            lines.append("        },")
        lines.append("    },")
    lines.append("}")
    Path(__file__).resolve().parent.parent.joinpath("pyhip", "emu", "isa", "_tables_gfx9.py").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
