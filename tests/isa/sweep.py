"""The opcode sweep shared by test_opcode_sweep.py and ``python tests/isa/sweep.py`` (a report)."""
from __future__ import annotations

import random
import re
import sys
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from pyhip.emu.isa import llvm_mc  # noqa: E402
from samples import ENCODINGS, sample  # noqa: E402

from pyhip.emu.isa.decoder import decode_one  # noqa: E402
from pyhip.emu.isa.disasm import format_instruction  # noqa: E402
from pyhip.emu.isa.instruction import DecodeError  # noqa: E402

TARGETS = ("gfx90a", "gfx942")


def base_name(text: str) -> str:
    return re.sub(r"_(e32|e64|dpp|sdwa)$", "", text.split()[0])


def run(target: str, per_op: int = 3, seed: int = 1, encodings=None):
    """[(enc, op, bytes, ours, llvm)]: ours is None or (size, name, text); llvm is None or [texts]."""
    rng = random.Random(f"{seed}-{target}")
    cases = []
    for enc, (_, _, bits, nwords) in ENCODINGS.items():
        if encodings and enc not in encodings:
            continue
        for op in range(1 << bits):
            for k in range(per_op):
                code = sample(rng, enc, op, k % 3)
                try:
                    inst = decode_one(code, 0, target)
                    try:
                        text = " ".join(format_instruction(inst, target).split())
                    except Exception as exc:  # noqa: BLE001  a crash is a mismatch like any other
                        text = f"<{type(exc).__name__}: {exc}>"
                    ours = (inst.size, inst.name, text)
                    feed = code[:inst.size]
                except DecodeError:
                    ours = None
                    feed = code[:4 * nwords]
                cases.append((enc, op, feed, ours))
    ref = llvm_mc.disassemble([c[2] for c in cases], target)
    return [c + (r,) for c, r in zip(cases, ref)]


def classify(enc, op, code, ours, llvm):
    """'ok', or a mismatch kind."""
    lv = llvm is not None and len(llvm) == 1
    if ours is None and not lv:
        return "ok"
    if ours is None:
        return "we_reject"
    if not lv:
        return "llvm_rejects" if llvm is None or not llvm else "size"
    if ours[1] != base_name(llvm[0]):
        return "mnemonic"
    if ours[2] != llvm[0]:
        return "text"
    return "ok"


if __name__ == "__main__":
    encs = sys.argv[2:] or None
    per_op = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    for t in TARGETS:
        res = run(t, per_op, encodings=encs)
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
            for c in ex[:6]:
                print("   ", c[1], c[2].hex(), "| ours:", c[3] and c[3][2], "| llvm:", c[4])
