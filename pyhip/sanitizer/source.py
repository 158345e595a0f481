"""Source positions of code object addresses from their DWARF line tables (``hipcc -g``: ``.debug_line``, read
with pyelftools).  A code object without line tables answers None."""
from __future__ import annotations

import bisect
import io
import os
import weakref

from elftools.elf.elffile import ELFFile

_TABLES: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()   # CodeObject -> (addresses, positions)


def _rows(data: bytes) -> list[tuple[int, str, int]]:
    """``(address, file, line)`` of every line-table row that starts a sequence of instructions."""
    elf = ELFFile(io.BytesIO(data))
    if not elf.has_dwarf_info():
        return []
    dwarf = elf.get_dwarf_info(relocate_dwarf_sections=False)
    rows = []
    for cu in dwarf.iter_CUs():
        prog = dwarf.line_program_for_CU(cu)
        if prog is None:
            continue
        header = prog.header
        version = header["version"]
        names = header["file_entry"]
        dirs = header["include_directory"]

        def file_name(index):
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
    rows.sort(key=lambda r: r[0])
    return rows


def line_for(code_object, pc: int) -> str | None:
    """``file:line`` of the instruction at ``pc`` (an address of the code object, as fault reports give it)."""
    table = _TABLES.get(code_object)
    if table is None:
        try:
            rows = _rows(code_object.data)
        except Exception:           # pyelftools reports damaged DWARF with many exception types
            rows = []
        table = _TABLES[code_object] = ([r[0] for r in rows], [(r[1], r[2]) for r in rows])
    addrs, where = table
    i = bisect.bisect_right(addrs, pc) - 1
    if i < 0:
        return None
    name, line = where[i]
    return f"{name}:{line}"
