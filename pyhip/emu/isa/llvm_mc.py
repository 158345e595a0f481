"""Reference disassembly: run llvm-mc-19 over many encodings at once and map each back to its input (used by
tools/gen_gfx9_tables.py and the tests; never by the decoder itself).

Every sample goes on its own line followed by a marker line: three ``s_setprio 0xbee0`` words after even
samples, three ``s_setprio 0xbee1`` words after odd ones.  llvm-mc reads the input as one byte stream (an
instruction may take its literal from the next line), so the marker is tripled (a sample that swallows up to two words
still leaves one) and alternates (a change of marker is a sample boundary, so empty
samples are still counted).  The warnings' line numbers say which samples llvm-mc rejected.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile

TOOL = "llvm-mc-19"
MARKERS = (bytes.fromhex("e0be8fbf") * 3, bytes.fromhex("e1be8fbf") * 3)
MARKERS_GFX11 = (bytes.fromhex("e0beb5bf") * 3, bytes.fromhex("e1beb5bf") * 3)     # s_setprio is SOPP 0x35 there
MARKER_TEXT = {"s_setprio 0xbee0": 0, "s_setprio 0xbee1": 1}


def available() -> bool:
    return shutil.which(TOOL) is not None


CRASH = ["<llvm-mc crashed>"]


def disassemble(samples: list[bytes], target: str) -> list[list[str] | None]:
    """For each sample: None if llvm-mc rejects (any of) its bytes, else the instruction texts it printed
    (exactly one when llvm-mc decoded the sample as a single instruction of that length).  Samples on
    which llvm-mc itself crashes, or whose bytes run into the markers so the output cannot be attributed,
    give :data:`CRASH`; the rest are disassembled by a fresh run."""
    if len(samples) > 4000:             # several llvm-mc processes at once
        from concurrent.futures import ThreadPoolExecutor

        chunks = [samples[i:i + 2000] for i in range(0, len(samples), 2000)]
        with ThreadPoolExecutor(max(2, os.cpu_count() or 2)) as pool:
            return [x for part in pool.map(lambda c: disassemble(c, target), chunks) for x in part]
    out = _run(samples, target)
    if out is not None:
        return out
    if len(samples) == 1:
        return [CRASH]
    half = len(samples) // 2            # llvm-mc loses buffered output when it crashes: bisect
    return disassemble(samples[:half], target) + disassemble(samples[half:], target)


def _run(samples: list[bytes], target: str) -> list | None:
    markers = MARKERS_GFX11 if target.startswith(("gfx11", "gfx12")) else MARKERS
    marks = [" ".join(f"0x{x:02x}" for x in m) for m in markers]
    with tempfile.NamedTemporaryFile("w", suffix=".txt") as f:
        for i, b in enumerate(samples):
            f.write(" ".join(f"0x{x:02x}" for x in b) + "\n" + marks[i & 1] + "\n")
        f.flush()
        r = subprocess.run([TOOL, "-disassemble", "-triple=amdgcn-amd-amdhsa", f"-mcpu={target}", f.name],
                           capture_output=True, text=True)
    bad = {int(m.group(1)) for m in re.finditer(r":(\d+):\d+: warning:", r.stderr)}
    groups: list[list[str]] = [[]]
    parity = None
    for line in r.stdout.splitlines():
        line = " ".join(line.split(";")[0].split())
        if not line or line.startswith("."):
            continue
        p = MARKER_TEXT.get(line)
        if p is not None:
            if p != parity:
                parity = p
                groups.append([])
            continue
        groups[-1].append(line)
    if r.returncode != 0 and "Stack dump" in r.stderr:
        return None
    if len(groups) != len(samples) + 1:     # some sample's bytes (after a rejected word) swallowed every marker
        return None
    return [None if (2 * i + 1) in bad else groups[i] for i in range(len(samples))]
