"""Executable coverage of the RDNA ISA (gfx1030, gfx1100): the `pyhip disasm --coverage` report (≥ 99% of
the compute mnemonics LLVM 19 decodes per target, ≥ 95% per category; MIMG: every image instruction HIP's
texture, surface and image functions compile to, and the image_sample/image_gather4 variants but depth
compare and 16-bit derivatives), and every mnemonic counted as executable
compiles to an operation for real encodings of it (decoded from the RDNA opcode sweep's samples), in wave32
and wave64, so a registered name cannot hide a factory that fails."""
import random
import re
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from samples_rdna import encodings, sample  # noqa: E402

from pyhip.emu.engine import KernelContext  # noqa: E402
from pyhip.emu.isa.families import module  # noqa: E402
from pyhip.emu.isa.cli_disasm import coverage_by_category  # noqa: E402
from pyhip.emu.isa.decoder import decode_one  # noqa: E402
from pyhip.emu.isa.instruction import DecodeError  # noqa: E402
from pyhip.emu.semantics import SEMANTICS, load_all  # noqa: E402

TARGETS = {"gfx1030": 10, "gfx1100": 11}
REQUIRED = ("SALU", "SMEM", "VALU", "DS", "FLAT/GLOBAL/SCRATCH", "MUBUF", "MTBUF")


@pytest.mark.parametrize("target", sorted(TARGETS))
def test_coverage_report(target):
    r = subprocess.run([sys.executable, "-m", "pyhip", "disasm", "--coverage", "--mcpu", target, "-v"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    rows = {m.group(1).strip(): (int(m.group(2)), int(m.group(3)))
            for m in re.finditer(r"^  (\S[\w/ ]*?)\s+(\d+)\s+(\d+)\s+[\d.]+%(?:\s+\d+\s+[\d.]+%)?$", r.stdout, re.M)}
    for cat in REQUIRED:
        decoded, ok = rows[cat]
        assert decoded > 0 and ok / decoded >= 0.95, f"{target} {cat}: {ok}/{decoded}\n{r.stdout}"
    decoded, ok = rows["all"]
    assert (ok - rows["MIMG"][1]) / (decoded - rows["MIMG"][0]) >= 0.99, r.stdout
    cats_ = coverage_by_category(target)
    names, runs = cats_["MIMG"]
    hip_forms = {"image_sample", "image_sample_lz", "image_sample_l", "image_sample_d", "image_gather4",
                 "image_gather4_lz", "image_gather4_l", "image_load", "image_load_mip", "image_store",
                 "image_store_mip", "image_get_resinfo"} | {f"image_atomic_{o}" for o in (
                     "swap", "cmpswap", "add", "sub", "smin", "umin", "smax", "umax", "and", "or", "xor", "inc", "dec")}
    assert hip_forms <= set(runs), sorted(hip_forms - set(runs))
    variants = [n for n in names if n.startswith(("image_sample", "image_gather4_")) and "_c" not in n[12:]
                and not n.endswith("_g16")]
    assert set(variants) <= set(runs), sorted(set(variants) - set(runs))
    cats = coverage_by_category(target)
    assert {c: (len(n), len(k)) for c, (n, k) in cats.items()} == {c: rows[c] for c in cats}


class _GPU:
    memory = None


@pytest.mark.parametrize("target", sorted(TARGETS))
def test_every_executable_mnemonic_compiles(target):
    """Each opcode's llvm-mc sample from the tables (plain VGPR/SGPR operands), then random samples of the
    opcode sweep: the factory must accept at least one real encoding, in wave32 and in wave64."""
    load_all()
    fam = TARGETS[target]
    contexts = [KernelContext(_GPU(), target, 0, lanes) for lanes in (32, 64)]
    rng = random.Random(11)
    built, seen, failures = set(), set(), {}

    def attempt(code):
        try:
            inst = decode_one(code, 0, target)
        except DecodeError:
            return
        if inst.name not in SEMANTICS:
            return
        key = inst.name if inst.name != "vopd" else (inst.fields["namex"], inst.fields["namey"])
        seen.add(key)
        if key in built:
            return
        try:
            for K in contexts:
                SEMANTICS[inst.name](inst, K)
            built.add(key)
        except NotImplementedError as exc:
            failures.setdefault(key, str(exc))

    for ops in module(fam).OPCODES.values():
        for entry in ops.values():
            attempt(bytes.fromhex(entry[3]) + bytes(8))
    for enc, (bits, _) in encodings(fam).items():
        for op in range(1 << bits):
            for _ in range(20):
                attempt(sample(rng, fam, enc, op, 2))
    never = sorted(map(str, seen - built))
    executable = sum(len(ok) for _, ok in coverage_by_category(target).values())
    assert len(seen) > 0.9 * executable, (len(seen), executable)
    assert not never, f"executable mnemonics whose factory rejected every sample: {[(n, failures.get(n)) for n in never]}"
