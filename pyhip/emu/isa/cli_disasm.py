"""``pyhip disasm FILE [--kernel K] [--mcpu T] [--coverage]``: our own disassembly of a code object."""
from __future__ import annotations

import argparse

from ...errors import HipError
from ...loader import load
from .decoder import decode
from .disasm import format_instruction


# report categories: encodings → the class the ISA documents group them in
CATEGORIES = {"SALU": ("SOP1", "SOP2", "SOPC", "SOPK", "SOPP"), "SMEM": ("SMEM",),
              "VALU": ("VOP1", "VOP2", "VOP3", "VOP3P", "VOPC"), "DS": ("DS",),
              "FLAT/GLOBAL/SCRATCH": ("FLAT", "GLOBAL", "SCRATCH"), "MUBUF": ("MUBUF",), "MTBUF": ("MTBUF",),
              "MIMG": ("MIMG",)}


def coverage(target: str) -> tuple[list[str], list[str]]:
    """Mnemonics the decoder knows for ``target`` and those the emulator can execute."""
    names, ok = set(), set()
    for cat_names, cat_ok in coverage_by_category(target).values():
        names |= set(cat_names)
        ok |= set(cat_ok)
    return sorted(names), sorted(ok)


def coverage_by_category(target: str) -> dict:
    """category → (mnemonics LLVM 19 decodes for ``target`` in it, those the emulator executes).  RDNA's
    VOPD halves (v_dual_*) count under VALU, executable when the operation they perform is."""
    from ..semantics import SEMANTICS, load_all
    from ..spec.vlanes import VOPD_OPS
    from .families import family, tables

    load_all()
    fam = family(target)
    table = tables(target)[0]
    out = {}
    for cat, encs in CATEGORIES.items():
        if cat == "VALU" and fam == 11:
            encs = encs + ("VOPDX", "VOPDY")
        names = sorted({e[0] for enc in encs for e in table.get(enc, {}).values()})
        out[cat] = (names, [n for n in names if n in SEMANTICS or VOPD_OPS.get(n) in SEMANTICS])
    return out


def print_coverage(target: str, verbose: bool = False) -> None:
    """Per category: mnemonics decoded, executable by the emulator (the numpy engine, the reference) and
    executed by the compiled engine (pyhip/emu/jit with the native runtime's handlers; a kernel using anything
    else runs whole on the numpy engine)."""
    from ..native.coverage import native_mnemonics

    cats = coverage_by_category(target)
    native = native_mnemonics(target)
    print(f"{target}: mnemonics decoded vs executable on the emulated device (numpy engine) and compiled engine"
          + ("" if native else " (none: the compiled engine is off)"))
    print(f"  {'category':<22}{'decoded':>8}{'executable':>12}{'%':>8}{'compiled':>9}{'%':>8}")
    tn = tk = tv = 0
    for cat, (names, ok) in cats.items():
        nat = [n for n in ok if n in native]
        tn, tk, tv = tn + len(names), tk + len(ok), tv + len(nat)
        print(f"  {cat:<22}{len(names):>8}{len(ok):>12}{100 * len(ok) / max(len(names), 1):>7.1f}%"
              f"{len(nat):>9}{100 * len(nat) / max(len(names), 1):>7.1f}%")
        if verbose and len(ok) < len(names):
            print("      not executable: " + " ".join(sorted(set(names) - set(ok))))
        if verbose and native and len(nat) < len(ok):
            print("      numpy engine only: " + " ".join(sorted(set(ok) - set(nat))))
    print(f"  {'all':<22}{tn:>8}{tk:>12}{100 * tk / max(tn, 1):>7.1f}%{tv:>9}{100 * tv / max(tn, 1):>7.1f}%")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="pyhip disasm")
    p.add_argument("file", nargs="?", help="code object, bundle or binary (not needed with --coverage --mcpu)")
    p.add_argument("--kernel")
    p.add_argument("--mcpu")
    p.add_argument("--coverage", action="store_true",
                   help="per ISA category: mnemonics LLVM 19 decodes vs those the emulator executes")
    p.add_argument("-v", "--verbose", action="store_true", help="with --coverage: list what is not executable")
    a = p.parse_args(argv)
    if a.coverage and (a.file is None or a.mcpu):
        for proc in (a.mcpu.split(":")[0],) if a.mcpu else ("gfx90a", "gfx942", "gfx1030", "gfx1100"):
            print_coverage(proc, a.verbose)
        return 0
    if a.file is None:
        p.error("a file is needed (or --coverage with --mcpu)")
    binary = load(a.file)
    refs = binary.code_objects
    if a.mcpu:
        refs = [r for r in refs if r.target.processor == a.mcpu.split(":")[0]] or refs
    for ref in refs:
        co = ref.code_object
        proc = a.mcpu.split(":")[0] if a.mcpu else co.processor
        if a.coverage:
            print_coverage(proc, a.verbose)
            continue
        vaddr, text = co.section_bytes(".text")
        kernels = {k.entry_vaddr: k for k in co.kernels.values()}
        if a.kernel:
            k = co.find_kernel(a.kernel)
            start = k.entry_vaddr - vaddr
            end = start + (k.code_size or len(text) - start)
            text, vaddr, kernels = text[start:end], k.entry_vaddr, {k.entry_vaddr: k}
        print(f"{co.origin}: {co.target}")
        try:
            insts = decode(text, proc, vaddr)
        except ValueError as exc:
            raise HipError(200, f"cannot disassemble for {proc}: {exc}") from None
        for inst in insts:
            if inst.pc in kernels:
                print(f"\n{inst.pc:016x} <{kernels[inst.pc].name}>:")
            words = " ".join(f"{w:08X}" for w in inst.words)
            print(f"\t{format_instruction(inst, proc):<58} // {inst.pc:012X}: {words}")
    return 0
