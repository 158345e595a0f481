"""``pyhip disasm FILE [--kernel K] [--mcpu T] [--coverage]``: our own disassembly of a code object."""
from __future__ import annotations

import argparse

from ...errors import HipError
from ...loader import load
from .decoder import decode
from .disasm import format_instruction


def coverage(target: str) -> tuple[list[str], list[str]]:
    """Mnemonics the decoder knows for ``target`` and those the emulator can execute."""
    from ..semantics import SEMANTICS, load_all
    from ._tables_gfx9 import OPCODES
    from .decoder import _TARGET_TABLE

    load_all()
    names = sorted({e[0] for enc in OPCODES[_TARGET_TABLE[target]].values() for e in enc.values()})
    return names, [n for n in names if n in SEMANTICS]


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="pyhip disasm")
    p.add_argument("file")
    p.add_argument("--kernel")
    p.add_argument("--mcpu")
    p.add_argument("--coverage", action="store_true")
    a = p.parse_args(argv)
    binary = load(a.file)
    refs = binary.code_objects
    if a.mcpu:
        refs = [r for r in refs if r.target.processor == a.mcpu.split(":")[0]] or refs
    for ref in refs:
        co = ref.code_object
        proc = a.mcpu.split(":")[0] if a.mcpu else co.processor
        if a.coverage:
            names, ok = coverage(proc)
            print(f"{proc}: {len(names)} mnemonics decoded, {len(ok)} executable ({100 * len(ok) / len(names):.1f}%)")
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
