"""Source positions of code object addresses from their DWARF line tables (``hipcc -g``: ``.debug_line``, read
with pyelftools), followed out of inlined library code (HIP's headers: atomicAdd, __syncthreads ...) to the
line that called it (``.debug_info``'s inlined subroutines).  A code object without line tables answers None."""
from __future__ import annotations

import bisect
import io
import os
import weakref

from elftools.elf.elffile import ELFFile

_TABLES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()   # CodeObject -> (addresses, positions, inlines)
SYSTEM = ("/usr/include/", "/usr/lib/", "/opt/rocm")                 # library code: report its caller instead


def _ranges(dwarf, cu, die) -> list[tuple[int, int]]:
    a = die.attributes
    if "DW_AT_low_pc" in a and "DW_AT_high_pc" in a:
        lo = a["DW_AT_low_pc"].value
        hi = a["DW_AT_high_pc"].value
        if a["DW_AT_high_pc"].form != "DW_FORM_addr":          # an offset from low_pc
            hi += lo
        return [(lo, hi)]
    if "DW_AT_ranges" in a:
        out = []
        rl = dwarf.range_lists()
        if rl is None:
            return out
        base = cu.get_top_DIE().attributes.get("DW_AT_low_pc")
        base = base.value if base is not None else 0
        for e in rl.get_range_list_at_offset(a["DW_AT_ranges"].value, cu=cu):
            if hasattr(e, "begin_offset"):
                b = getattr(e, "is_absolute", False)
                out.append((e.begin_offset if b else base + e.begin_offset, e.end_offset if b else base + e.end_offset))
            elif hasattr(e, "base_address"):
                base = e.base_address
        return out
    return []


def _rows(data: bytes):
    """``(address, file, line)`` of every line-table row that starts a sequence of instructions, and the
    inlined subroutines ``(low, high, depth, call file, call line)``."""
    elf = ELFFile(io.BytesIO(data))
    if not elf.has_dwarf_info():
        return [], []
    dwarf = elf.get_dwarf_info(relocate_dwarf_sections=False)
    rows, inlines = [], []
    for cu in dwarf.iter_CUs():
        prog = dwarf.line_program_for_CU(cu)
        if prog is None:
            continue
        header = prog.header
        version = header["version"]
        names = header["file_entry"]
        dirs = header["include_directory"]

        def file_name(index, version=version, names=names, dirs=dirs):
            i = index if version >= 5 else index - 1          # DWARF 5 numbers files from 0
            if not 0 <= i < len(names):
                return "?"
            entry = names[i]
            name = entry.name.decode(errors="replace")
            d = entry.dir_index if version >= 5 else entry.dir_index - 1
            if not os.path.isabs(name) and 0 <= d < len(dirs):
                name = os.path.join(dirs[d].decode(errors="replace"), name)
            return name

        for e in prog.get_entries():
            st = e.state
            if st is None or st.end_sequence or st.line == 0:
                continue
            rows.append((st.address, file_name(st.file), st.line))
        stack = [(cu.get_top_DIE(), 0)]
        while stack:
            die, depth = stack.pop()
            if die.tag == "DW_TAG_inlined_subroutine" and "DW_AT_call_line" in die.attributes:
                where = (file_name(die.attributes["DW_AT_call_file"].value), die.attributes["DW_AT_call_line"].value)
                for lo, hi in _ranges(dwarf, cu, die):
                    inlines.append((lo, hi, depth, *where))
            stack.extend((child, depth + 1) for child in die.iter_children())
    rows.sort(key=lambda r: r[0])
    return rows, inlines


def line_for(code_object, pc: int) -> str | None:
    """``file:line`` of the instruction at ``pc`` (an address of the code object, as fault reports give it)."""
    table = _TABLES.get(code_object)
    if table is None:
        try:
            rows, inlines = _rows(code_object.data)
        except Exception:           # noqa: BLE001 (pyelftools reports damaged DWARF with many exception types)
            rows, inlines = [], []
        table = _TABLES[code_object] = ([r[0] for r in rows], [(r[1], r[2]) for r in rows], inlines)
    addrs, where, inlines = table
    i = bisect.bisect_right(addrs, pc) - 1
    if i < 0:
        return None
    # the instruction's own line, then the call sites of the inlined code it is in, innermost first
    chain = [where[i]] + [(f, ln) for lo, hi, d, f, ln in sorted(inlines, key=lambda x: -x[2]) if lo <= pc < hi]
    name, line = next((c for c in chain if not c[0].startswith(SYSTEM)), chain[0])
    return f"{name}:{line}"
