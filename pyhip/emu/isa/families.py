"""The processor families the decoder and disassembler cover, and their generated tables.

GFX9 (gfx90a; gfx940-gfx942 share gfx942's tables), GFX10.3 (gfx1030-gfx1036) and GFX11 (gfx1100-gfx1103); the
per-opcode facts are the generated ``_tables_gfx9`` (one table per target), ``_tables_gfx10`` and
``_tables_gfx11`` (one per family, plus the RDNA message, hardware-register and buffer-format names).
"""
from __future__ import annotations

import importlib

FAMILIES = {"gfx90a": 9, "gfx940": 9, "gfx941": 9, "gfx942": 9,
            **{f"gfx103{i}": 10 for i in range(7)}, "gfx10-3-generic": 10,
            **{f"gfx110{i}": 11 for i in range(4)}, "gfx11-generic": 11}
GFX9_TABLE = {"gfx90a": "gfx90a", "gfx940": "gfx942", "gfx941": "gfx942", "gfx942": "gfx942"}


def family(target: str) -> int | None:
    """9, 10 or 11 for the processors these tables cover (features ignored), else None."""
    return FAMILIES.get(target.split(":")[0])


def rdna(target: str) -> int | None:
    """10 or 11 for the RDNA processors, else None."""
    fam = family(target)
    return fam if fam != 9 else None


_MODULES: dict = {}


def module(fam: int):
    """The generated table module of a family (OPCODES, INFO; RDNA also BUF_FORMATS, HWREGS, SENDMSG)."""
    m = _MODULES.get(fam)
    if m is None:
        m = _MODULES[fam] = importlib.import_module(f"._tables_gfx{fam}", __package__)
    return m


def tables(target: str) -> tuple[dict, dict]:
    """(OPCODES, INFO) of a target: {encoding: {opcode: entry}} and {encoding: {opcode: facts}}; KeyError for a
    processor without tables."""
    proc = target.split(":")[0]
    fam = FAMILIES[proc]
    m = module(fam)
    if fam == 9:
        return m.OPCODES[GFX9_TABLE[proc]], m.INFO[GFX9_TABLE[proc]]
    return m.OPCODES, m.INFO


def opcodes(target: str) -> dict:
    """{encoding: {opcode: (name, llvm mnemonic, operand text, sample hex)}} of a target ({} without tables)."""
    return tables(target)[0] if family(target) else {}
