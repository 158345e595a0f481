#!/usr/bin/env python3
"""Generate tests/emu/data/wmma_layouts.json.zst: the register layouts of every RDNA3 (gfx1100) WMMA
instruction, for wave32 and wave64, as AMD's matrix instruction calculator prints them (--matrix-layout --csv;
the f16/bf16-output forms also with OPSEL[2], the high halves), so the WMMA tests check the emulator against
AMD's description rather than against the emulator's own formulas.

    git clone https://github.com/ROCm/amd_matrix_instruction_calculator /tmp/mic
    pip install tabulate
    python tools/gen_wmma_layouts.py /tmp/mic/matrix_calculator.py

Output: {"wave32"|"wave64": {instruction: {"A"|"B"|"C"|"D"|"D_opsel": [[gpr, bit, width, lane, [[i, k, 0], ...]],
...]}}} in the cell format of tools/gen_mfma_layouts.py (A and B list one cell per replica lane).
"""
import json
import subprocess
import sys
from pathlib import Path

import zstandard

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gen_mfma_layouts import COL, ENTRY  # noqa: E402

OUT = Path(__file__).resolve().parents[1] / "tests/emu/data/wmma_layouts.json.zst"


def layout(calc, inst, matrix, wave, opsel=0):
    cmd = [sys.executable, calc, "-a", "rdna3", "-i", inst, f"-{matrix}", "-M", "-c", "-w", str(wave)]
    if opsel:
        cmd += ["--opsel", str(opsel)]
    rows = [ln for ln in subprocess.run(cmd, capture_output=True, text=True, check=True).stdout.splitlines()
            if ln and not ln.startswith(("Architecture", "Instruction"))]
    cols = []
    for h in rows[0].split(",")[1:]:
        m = COL.match(h)
        cols.append((int(m.group(1)), int(m.group(3)), int(m.group(2)) - int(m.group(3)) + 1) if m.group(2)
                    else (int(m.group(1)), 0, 32))
    cells = []
    for row in rows[1:]:
        parts = row.split(",")
        for (gpr, bit, width), cell in zip(cols, parts[1:]):
            elems = [[int(i), int(k), 0] for _, i, k, _ in ENTRY.findall(cell)]
            if elems:
                cells.append([gpr, bit, width, int(parts[0]), elems])
    return cells


def main(calc: str) -> None:
    out = subprocess.run([sys.executable, calc, "-a", "rdna3", "-L"], capture_output=True, text=True, check=True).stdout
    insts = [ln.strip() for ln in out.splitlines() if ln.strip().startswith("v_wmma")]
    data = {}
    for wave in (32, 64):
        data[f"wave{wave}"] = {}
        for inst in insts:
            lay = {m: layout(calc, inst, m, wave) for m in "ABCD"}
            if inst.startswith(("v_wmma_f16", "v_wmma_bf16")):
                lay["D_opsel"] = layout(calc, inst, "D", wave, 4)
            data[f"wave{wave}"][inst] = lay
            print(f"wave{wave} {inst}", file=sys.stderr)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_bytes(zstandard.ZstdCompressor(level=19).compress(json.dumps(data, separators=(",", ":")).encode()))
    print(f"wrote {OUT} ({OUT.stat().st_size} bytes)")


if __name__ == "__main__":
    main(sys.argv[1])
