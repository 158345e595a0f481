"""Our decoder + disassembler against llvm-objdump-19 -d --mcpu=… on every instruction of every gfx90a /
gfx942 / gfx1030 / gfx1100 fixture (hipcc 5.2, clang-19, Triton): mnemonic, encoding words and text
(whitespace normalized)."""
import re
import subprocess
import sys

import pytest

from conftest import fixture_files, fixture_path, require_tool
from pyhip.emu.isa.decoder import decode
from pyhip.emu.isa.disasm import format_instruction
from pyhip.loader import load

GFX9 = [e for e in fixture_files("hsaco") if any(t.split(":")[0] in ("gfx90a", "gfx942") for t in e["targets"])]
RDNA = [e for e in fixture_files("hsaco") if any(t.split(":")[0] in ("gfx1030", "gfx1100") for t in e["targets"])]


def _objdump(path, mcpu):
    out = subprocess.run([require_tool("llvm-objdump-19"), "-d", f"--mcpu={mcpu}", str(path)],
                         capture_output=True, text=True, check=True).stdout
    ref = {}
    for line in out.splitlines():
        m = re.match(r"\s+(\S.*?)\s*// ([0-9A-F]+): ([0-9A-F ]+)", line)
        if m:
            ref[int(m.group(2), 16)] = (" ".join(m.group(1).split()), tuple(int(w, 16) for w in m.group(3).split()))
    return ref


@pytest.mark.parametrize("entry", GFX9 + RDNA, ids=lambda e: e["file"])
def test_every_instruction_matches_objdump(entry):
    path = fixture_path(entry)
    co = load(path).code_objects[0].code_object
    vaddr, text = co.section_bytes(".text")
    ref = _objdump(path, co.processor)
    compared, mismatches = 0, []
    seen = set()
    for inst in decode(text, co.processor, vaddr):
        if inst.pc not in ref:
            assert inst.words[0] == 0 or inst.pc >= max(ref), f"objdump has no instruction at 0x{inst.pc:x}"
            continue
        r_text, r_words = ref[inst.pc]
        seen.add(inst.pc)
        compared += 1
        ours = " ".join(format_instruction(inst, co.processor).split())
        if ours != r_text or inst.words != r_words:
            mismatches.append((hex(inst.pc), ours, r_text))
    assert seen == set(ref), "objdump decoded instructions we skipped"
    assert compared > 50 and not mismatches, mismatches[:10]


def test_cli_disasm_and_coverage():
    entry = next(e for e in GFX9 if e["file"] == "hipcc52/basic-gfx90a.hsaco")
    r = subprocess.run([sys.executable, "-m", "pyhip", "disasm", str(fixture_path(entry)), "--kernel", "vadd"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "<_Z4vaddPKfS0_Pfi>:" in r.stdout and "global_load_dword" in r.stdout and "s_endpgm" in r.stdout
    assert "use_globals" not in r.stdout
    r = subprocess.run([sys.executable, "-m", "pyhip", "disasm", str(fixture_path(entry)), "--coverage"],
                       capture_output=True, text=True)
    m = re.search(r"^  all\s+(\d+)\s+(\d+)\s+[\d.]+%$", r.stdout, re.M)
    assert m and int(m.group(2)) > 0.95 * int(m.group(1)), r.stdout
