"""A kernel's object file (x86-64 ELF, relocatable: what the compiler writes and the disk cache keeps) put in
executable memory without LLVM: its allocated sections copied into one mapping, its relocations applied, the
mapping made read-only and executable.  Loading through MCJIT costs a process's first cached kernel ~4.5 ms
(LLVM's setup, a target machine, the engine's first finalisation); this costs ~0.2 ms.  Only what the JIT's
objects contain is taken — the small code model's PC-relative relocations (the sections are one block, so
they reach each other), calls to external functions (PLT32: direct when in a rel32's reach, else through a
stub the loader adds, ``jmp *slot(%rip)``), GOT-relative references (GOTPCREL*: a slot the loader adds), the
large code model's absolute 64-bit relocations, read-only data — anything else (writable data, TLS, other
relocation kinds, an unknown external symbol) makes ``load`` return None and the caller uses MCJIT.  Mapped code lives as long as the process (as code in the
shared execution engine does)."""
from __future__ import annotations

import ctypes
import mmap
import struct

_EHDR = struct.Struct("<16sHHIQQQIHHHHHH")
_SHDR = struct.Struct("<IIQQQQIIQQ")
_SYM = struct.Struct("<IBBHQQ")
_RELA = struct.Struct("<QQq")

SHT_PROGBITS, SHT_SYMTAB, SHT_RELA, SHT_NOBITS, SHT_REL = 1, 2, 4, 8, 9
SHF_WRITE, SHF_ALLOC, SHF_TLS = 0x1, 0x2, 0x400
SHT_X86_64_UNWIND = 0x70000001
SHN_UNDEF, SHN_ABS = 0, 0xFFF1
R_X86_64_64, R_X86_64_PC32, R_X86_64_PLT32, R_X86_64_GOTPCREL, R_X86_64_PC64 = 1, 2, 4, 9, 24
R_X86_64_GOTPCRELX, R_X86_64_REX_GOTPCRELX = 41, 42
_GOT_KINDS = (R_X86_64_GOTPCREL, R_X86_64_GOTPCRELX, R_X86_64_REX_GOTPCRELX)
_SLOT = 16                       # per external symbol: its address (8 bytes), then a stub jumping through it

_libc = ctypes.CDLL(None, use_errno=True)
_libc.mprotect.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int)
_process = ctypes.CDLL(None)
_kept: list = []                 # the mappings: code stays mapped for the process's life


def _cstr(blob: bytes, off: int) -> str:
    return blob[off:blob.index(b"\0", off)].decode()


def _external(name: str, symbols: dict) -> int | None:
    addr = symbols.get(name)
    if addr is not None:
        return addr
    try:
        return ctypes.cast(getattr(_process, name), ctypes.c_void_p).value
    except AttributeError:
        return None


def load(data: bytes, name: str, symbols: dict, owner: list | None = None,
         functions: dict | None = None) -> tuple[int, int] | None:
    """(address, size) of function ``name`` of the object file ``data`` loaded into fresh executable memory
    (``symbols``: the runtime's entry points by name), or None when the object needs what this loader does not
    do (the caller then loads it through LLVM).  The mapping stays for the process's life, or, with ``owner``,
    is appended to it: the caller unmaps it (``close()``) once the code can no longer run.  ``functions``, when
    given, receives the address of every function the object defines, by name."""
    if len(data) < _EHDR.size or data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        return None
    eh = _EHDR.unpack_from(data)
    if eh[1] != 1 or eh[2] != 62:                 # ET_REL, EM_X86_64
        return None
    shoff, shnum = eh[6], eh[12]
    shdrs = [_SHDR.unpack_from(data, shoff + i * _SHDR.size) for i in range(shnum)]
    # lay out the allocated sections (unwind tables are left out: nothing unwinds through kernels)
    place, size = {}, 0
    for i, (_, typ, flags, _, _, ssize, _, _, align, _) in enumerate(shdrs):
        if not flags & SHF_ALLOC or typ == SHT_X86_64_UNWIND or ssize == 0:
            continue
        if flags & (SHF_WRITE | SHF_TLS) or typ not in (SHT_PROGBITS, SHT_NOBITS):
            return None
        align = max(align, 1)
        size = (size + align - 1) // align * align
        place[i] = size
        size += ssize
    if not place:
        return None
    # external symbols that calls (PLT32) name, and symbols GOT references name, get a slot each after the sections
    sym_hdr = next((h for h in shdrs if h[1] == SHT_SYMTAB), None)
    if sym_hdr is None:
        return None
    relas = {h[7]: list(_RELA.iter_unpack(data[h[4]:h[4] + h[5] // _RELA.size * _RELA.size]))
             for h in shdrs if h[1] == SHT_RELA and h[7] in place}
    slots: dict[int, int] = {}
    for rs in relas.values():
        for _, r_info, _ in rs:
            kind, sym = r_info & 0xFFFFFFFF, r_info >> 32
            if (kind == R_X86_64_PLT32 or kind in _GOT_KINDS) and sym not in slots and \
                    (kind != R_X86_64_PLT32 or _SYM.unpack_from(data, sym_hdr[4] + sym * _SYM.size)[3] == SHN_UNDEF):
                slots[sym] = -1
    size = (size + _SLOT - 1) // _SLOT * _SLOT
    for sym in slots:
        slots[sym] = size
        size += _SLOT
    length = (size + mmap.PAGESIZE - 1) // mmap.PAGESIZE * mmap.PAGESIZE
    mem = mmap.mmap(-1, length, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS, prot=mmap.PROT_READ | mmap.PROT_WRITE)
    view = ctypes.c_char.from_buffer(mem)
    base = ctypes.addressof(view)
    del view
    for i, off in place.items():
        _, typ, _, _, foff, ssize = shdrs[i][:6]
        if typ == SHT_PROGBITS:
            mem[off:off + ssize] = data[foff:foff + ssize]
    # symbols
    strtab = shdrs[sym_hdr[6]]
    strs = data[strtab[4]:strtab[4] + strtab[5]]
    values, entry = [], None
    for k in range(sym_hdr[5] // _SYM.size):
        st_name, info, _, shndx, value, st_size = _SYM.unpack_from(data, sym_hdr[4] + k * _SYM.size)
        sname = _cstr(strs, st_name) if st_name else ""
        if shndx == SHN_UNDEF:
            values.append(_external(sname, symbols) if sname else 0)
        elif shndx == SHN_ABS:
            values.append(value)
        elif shndx in place:
            values.append(base + place[shndx] + value)
            if info & 0xF == 2:                           # STT_FUNC
                if sname == name:
                    entry = values[-1], st_size
                if functions is not None and sname:
                    functions[sname] = values[-1]
        else:
            values.append(None)                           # in a section not loaded (only the unwind tables)
    if entry is None:
        return _give_up(mem)
    for sym, off in slots.items():
        if values[sym] is None:
            return _give_up(mem)
        # the slot: the address, then jmp *-14(%rip) (ff 25 rel32: back to the address), int3 padding
        struct.pack_into("<QBBiBB", mem, off, values[sym], 0xFF, 0x25, -14, 0xCC, 0xCC)
    # relocations of the loaded sections
    if any(h[1] == SHT_REL for h in shdrs):
        return _give_up(mem)
    for sec, rs in relas.items():
        target = place[sec]
        for r_off, r_info, addend in rs:
            kind, s = r_info & 0xFFFFFFFF, values[r_info >> 32]
            if s is None:
                return _give_up(mem)
            where = target + r_off
            p = base + where
            if kind == R_X86_64_64:
                struct.pack_into("<Q", mem, where, (s + addend) & (2 ** 64 - 1))
            elif kind == R_X86_64_PC64:
                struct.pack_into("<q", mem, where, s + addend - p)
            elif kind in (R_X86_64_PC32, R_X86_64_PLT32) or kind in _GOT_KINDS:
                if kind in _GOT_KINDS:
                    s = base + slots[r_info >> 32]                          # the address's slot
                v = s + addend - p
                if kind == R_X86_64_PLT32 and not -2 ** 31 <= v < 2 ** 31 and r_info >> 32 in slots:
                    v = base + slots[r_info >> 32] + 8 + addend - p          # through the stub
                if not -2 ** 31 <= v < 2 ** 31:
                    return _give_up(mem)
                struct.pack_into("<i", mem, where, v)
            else:
                return _give_up(mem)
    if _libc.mprotect(base, length, mmap.PROT_READ | mmap.PROT_EXEC) != 0:
        return _give_up(mem)
    (_kept if owner is None else owner).append(mem)
    return entry


def _give_up(mem) -> None:
    mem.close()
    return None
