#!/usr/bin/env python3
"""Generate tests/emu/data/mfma_layouts.json.zst: the register layouts of every CDNA2 (gfx90a) and CDNA3
(gfx942) matrix instruction as AMD's matrix instruction calculator prints them (--matrix-layout --csv), so the
MFMA tests check the emulator against AMD's description rather than against the emulator's own formulas.

    git clone https://github.com/ROCm/amd_matrix_instruction_calculator /tmp/mic
    pip install tabulate
    python tools/gen_mfma_layouts.py /tmp/mic/matrix_calculator.py

Output: {arch: {instruction: {"A"|"B"|"C"|"D"|"K": [[gpr, bit, width, lane, [[i, k, block], ...]], ...]}}}
where each cell is one register field (``width`` bits at ``bit`` of GPR ``gpr`` of ``lane``, 64-bit values
spanning two GPRs) and the list holds the matrix elements it carries, low bits first (several for packed
8-bit data; for the sparse A matrix and the compression indices K, the four dense k positions of a group).
"""
import json
import re
import subprocess
import sys
from pathlib import Path

import zstandard

OUT = Path(__file__).resolve().parents[1] / "tests/emu/data/mfma_layouts.json.zst"
ARCHS = {"gfx90a": "cdna2", "gfx942": "cdna3"}
COL = re.compile(r"v(\d+)(?:\.\[(\d+):(\d+)\])?$|v\[(\d+):(\d+)\]$")
ENTRY = re.compile(r"([ABCDK])\[(\d+)\]\[(\d+)\](?:\.B(\d+))?")


def instructions(calc, arch):
    out = subprocess.run([sys.executable, calc, "-a", arch, "-L"], capture_output=True, text=True, check=True).stdout
    return [ln.strip() for ln in out.splitlines() if ln.strip().startswith(("v_mfma", "v_smfmac"))]


def layout(calc, arch, inst, matrix):
    flag = "-k" if matrix == "K" else f"-{matrix}"
    out = subprocess.run([sys.executable, calc, "-a", arch, "-i", inst, flag, "-M", "-c"],
                         capture_output=True, text=True, check=True).stdout
    rows = [ln for ln in out.splitlines() if ln and not ln.startswith(("Architecture", "Instruction"))]
    header = rows[0].split(",")[1:]
    cols = []
    for h in header:
        m = COL.match(h)
        if m.group(4) is not None:                      # v[1:0]: a 64-bit value in a GPR pair
            cols.append((int(m.group(5)), 0, 64))
        elif m.group(2) is not None:                    # v0.[15:0]
            cols.append((int(m.group(1)), int(m.group(3)), int(m.group(2)) - int(m.group(3)) + 1))
        else:
            cols.append((int(m.group(1)), 0, 32))
    cells = []
    for row in rows[1:]:
        parts = row.split(",")
        lane = int(parts[0])
        for (gpr, bit, width), cell in zip(cols, parts[1:]):
            elems = [[int(i), int(k), int(b or 0)] for _, i, k, b in ENTRY.findall(cell)]
            if elems:
                cells.append([gpr, bit, width, lane, elems])
    return cells


def main(calc: str) -> None:
    data = {}
    for target, arch in ARCHS.items():
        data[target] = {}
        for inst in instructions(calc, arch):
            mats = "ABDK" if inst.startswith("v_smfmac") else "ABCD"
            data[target][inst] = {m: layout(calc, arch, inst, m) for m in mats}
            print(f"{target} {inst}", file=sys.stderr)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_bytes(zstandard.ZstdCompressor(level=19).compress(json.dumps(data, separators=(",", ":")).encode()))
    print(f"wrote {OUT} ({OUT.stat().st_size} bytes)")


if __name__ == "__main__":
    main(sys.argv[1])
