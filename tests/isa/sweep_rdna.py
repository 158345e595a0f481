"""The RDNA opcode sweep (gfx1030, gfx1100) shared by test_opcode_sweep_rdna.py and
``python tests/isa/sweep_rdna.py [per_op] [encodings...]`` (a report); see sweep.py for the GFX9 one."""
from __future__ import annotations

import random
import sys
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from pyhip.emu.isa import llvm_mc  # noqa: E402
from samples_rdna import encodings, sample  # noqa: E402
import sweep  # noqa: E402

from pyhip.emu.isa.decoder import decode_one  # noqa: E402
from pyhip.emu.isa.disasm import format_instruction  # noqa: E402
from pyhip.emu.isa.instruction import DecodeError  # noqa: E402

TARGETS = {"gfx1030": 10, "gfx1100": 11}


def classify(enc, op, code, ours, llvm):
    """Like sweep.classify; RDNA DPP mnemonics may carry both _e64 and _dpp (v_fma_f32_e64_dpp)."""
    if ours is not None and llvm and len(llvm) == 1 and ours[2] == llvm[0]:
        return "ok"
    if ours is not None and llvm and len(llvm) == 1 and llvm[0].split()[0].endswith("_e64_dpp"):
        return "ok" if ours[1] == llvm[0].split()[0][:-8] and ours[2] == llvm[0] else "text"
    return sweep.classify(enc, op, code, ours, llvm)


def run(target: str, per_op: int = 3, seed: int = 1, encs=None):
    """[(enc, op, bytes, ours, llvm)] like sweep.run."""
    fam = TARGETS[target]
    rng = random.Random(f"{seed}-{target}")
    cases = []
    for enc, (bits, nwords) in encodings(fam).items():
        if encs and enc not in encs:
            continue
        for op in range(1 << bits):
            for k in range(per_op):
                code = sample(rng, fam, enc, op, k % 3)
                try:
                    inst = decode_one(code, 0, target)
                    try:
                        text = " ".join(format_instruction(inst, target).split())
                    except Exception as exc:  # noqa: BLE001  a crash is a mismatch like any other
                        text = f"<{type(exc).__name__}: {exc}>"
                    name = inst.name if inst.encoding != "VOPD" else "v_dual_" + text.split()[0][7:]
                    ours = (inst.size, name, text)
                    feed = code[:inst.size]
                except DecodeError:
                    ours = None
                    feed = code[:4 * nwords]
                cases.append((enc, op, feed, ours))
    ref = llvm_mc.disassemble([c[2] for c in cases], target)
    return [c + (r,) for c, r in zip(cases, ref)]


if __name__ == "__main__":
    per_op = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    encs = sys.argv[2:] or None
    for t in TARGETS:
        res = run(t, per_op, encs=encs)
        stats = defaultdict(Counter)
        examples = defaultdict(list)
        for c in res:
            k = classify(*c)
            stats[c[0]][k] += 1
            if k != "ok":
                examples[(c[0], k)].append(c)
        for enc in stats:
            print(t, enc, dict(stats[enc]))
        for (enc, k), ex in sorted(examples.items()):
            print(f"--- {t} {enc} {k}: {len(ex)}")
            for c in ex[:8]:
                print("   ", c[1], c[2].hex(), "| ours:", c[3] and c[3][2], "| llvm:", c[4])
