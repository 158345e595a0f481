"""Loading a code object onto the emulated device: segments placed in one allocation, dynamic
relocations applied, kernel descriptors and globals exposed at device addresses, code decoded once."""
from __future__ import annotations

import struct

import numpy as np

from ..errors import HipError, LoaderError, hipError_t
from ..loader.codeobject import CodeObject
from ..loader.metadata import amdgpu_metadata_notes, parse_metadata
from .isa.decoder import decode
from .memory import GPUFault

R_ABS32_LO, R_ABS32_HI, R_ABS64, R_ABS32, R_RELATIVE64 = 1, 2, 3, 6, 13


class LoadedProgram:
    def __init__(self, gpu, co: CodeObject):
        self.gpu = gpu
        self.code_object = co
        mem = gpu.memory
        size = (co.load_size + 4095) // 4096 * 4096
        self.base = mem.alloc(size, kind="code", align=4096)
        self.size = size
        try:
            for vaddr, memsz, data in co.load_segments():
                if data:
                    mem.write(self.base + vaddr, data)
            self._relocate()
        except HipError:
            mem.free(self.base)
            raise
        self.kernels = {}                       # kernel_object -> Kernel
        for k in co.kernels.values():
            self.kernels[self.base + k.descriptor_vaddr] = k
        self._instructions = None
        self.unloaded = False

    @property
    def function_starts(self) -> list[int]:
        """Addresses of the code object's functions (its STT_FUNC symbols, kernels included): where an
        indirect call (s_swappc_b64 to a non-inlined or recursive device function) can land."""
        try:
            syms = self.code_object.symbols.values()
        except HipError:               # no readable symbol table: only kernel entries and return addresses
            return []
        return sorted(self.base + s.value for s in syms if s.type == "STT_FUNC" and s.value < self.size)

    def _relocate(self) -> None:
        mem = self.gpu.memory
        for r in self.code_object.relocations:
            where = self.base + r.offset
            if r.type == R_RELATIVE64:
                mem.write(where, struct.pack("<Q", (self.base + r.addend) & (2 ** 64 - 1)))
                continue
            if r.symbol_value is None:
                raise HipError(hipError_t.hipErrorSharedObjectSymbolNotFound,
                               f"code object needs the undefined symbol {r.symbol_name!r}")
            value = (self.base + r.symbol_value + r.addend) & (2 ** 64 - 1)
            if r.type == R_ABS64:
                mem.write(where, struct.pack("<Q", value))
            elif r.type in (R_ABS32_LO, R_ABS32):
                mem.write(where, struct.pack("<I", value & 0xFFFFFFFF))
            elif r.type == R_ABS32_HI:
                mem.write(where, struct.pack("<I", value >> 32))
            elif r.type == 0:
                continue
            else:
                raise HipError(hipError_t.hipErrorInvalidImage, f"unsupported relocation type {r.type_name}")

    def kernel_object(self, name) -> int:
        k = self.code_object.find_kernel(name)
        return self.base + k.descriptor_vaddr

    def global_address(self, name: str) -> int:
        return self.base + self.code_object.symbol_vaddr(name)

    @property
    def instructions(self) -> dict:
        """Decoded ``.text``: absolute device address → Instruction (decoded on first use)."""
        if self._instructions is None:
            vaddr, text = self.code_object.section_bytes(".text")
            insts = decode(text, self.code_object.processor, base=self.base + vaddr, tolerant=True)
            self._instructions = {i.pc: i for i in insts}
        return self._instructions

    def contains(self, addr: int) -> bool:
        return self.base <= addr < self.base + self.size


PT_LOAD, PT_DYNAMIC, PT_NOTE, PF_X = 1, 2, 4, 1
DT_NULL, DT_STRTAB, DT_SYMTAB, DT_STRSZ = 0, 5, 6, 10


class ForeignKernel:
    """A kernel found in a code object some other loader (e.g. ROCr's) placed in device memory."""

    def __init__(self, symbol: str, hidden_args: tuple = ()):
        self.name = symbol[:-3] if symbol.endswith(".kd") else symbol
        self.symbol = symbol
        self.hidden_args = hidden_args      # from the image's metadata note (a hostcall buffer is found by it)

    @property
    def demangled(self) -> str:
        from ..loader.names import full_signature
        try:
            return full_signature(self.name)
        except Exception:  # noqa: BLE001 - a name for reports only
            return self.name


class ForeignCode:
    """``code_object`` stand-in for a :class:`MemoryProgram`: what the engine asks of it."""

    def __init__(self, processor: str):
        self.processor = processor


class MemoryProgram:
    """A code object that another loader placed in device memory (ROCr's loader, through pyhip's drop-in
    KFD thunk): found from a kernel object by the ELF image at the start of its load segment — the first
    PT_LOAD holds the ELF and program headers and the dynamic symbols — and decoded from the executable
    PT_LOAD segment.  It stays valid while the allocation holding it does (``serial``)."""

    def __init__(self, gpu, start: int, end: int, serial: int):
        self.gpu = gpu
        mem = gpu.memory
        self.base, self.size, self.serial = start, end - start, serial
        self.code_object = ForeignCode(gpu.processor)
        self.kernels = {}
        self._instructions = None
        self.unloaded = False
        head = mem.read(start, 64)
        if head[:4] != b"\x7fELF" or head[4] != 2:
            # no image: a kernel object followed by its code in one allocation (ROCr's own blit kernels:
            # an amd_kernel_code_t header, then the shader), decoded from the entry to the allocation's end
            self._text = None
            return
        phoff, = struct.unpack_from("<Q", head, 32)
        phentsize, phnum = struct.unpack_from("<HH", head, 54)
        if phentsize != 56 or not 0 < phnum < 64 or phoff + phnum * 56 > self.size:
            raise GPUFault(f"bad program headers in the image at 0x{start:x}",
                           code=hipError_t.hipErrorInvalidDeviceFunction, address=start)
        phdrs = [struct.unpack_from("<IIQQQQQQ", mem.read(start + phoff + i * 56, 56)) for i in range(phnum)]
        text = [(p[3], p[6]) for p in phdrs if p[0] == PT_LOAD and p[1] & PF_X]
        if not text or any(v + sz > self.size for v, sz in text):
            raise GPUFault(f"no executable segment in the image at 0x{start:x}",
                           code=hipError_t.hipErrorInvalidDeviceFunction, address=start)
        self._text = text
        hidden = self._read_hidden_args([(p[3], p[6]) for p in phdrs if p[0] == PT_NOTE])
        dyn = [p for p in phdrs if p[0] == PT_DYNAMIC]
        if dyn:
            self._read_symbols(dyn[0][3], dyn[0][6], hidden)

    def _read_hidden_args(self, notes) -> dict:
        """Kernel symbol -> its hidden arguments, from the metadata note the loader placed with the image
        (empty when there is none or it cannot be read: the kernels then run without host services)."""
        for vaddr, size in notes:
            if not 0 < size <= 1 << 20 or vaddr + size > self.size:
                continue
            try:
                blobs = amdgpu_metadata_notes(self.gpu.memory.read(self.base + vaddr, size), 0, size)
                if blobs:
                    meta = parse_metadata(blobs[0])
                    return {k.symbol: k.hidden_args for k in meta.kernels}
            except LoaderError:
                pass
        return {}

    def _read_symbols(self, vaddr: int, size: int, hidden: dict) -> None:
        mem, tags = self.gpu.memory, {}
        raw = mem.read(self.base + vaddr, min(size, 4096))
        for i in range(0, len(raw) - 15, 16):
            tag, val = struct.unpack_from("<qQ", raw, i)
            if tag == DT_NULL:
                break
            tags[tag] = val
        if not {DT_STRTAB, DT_SYMTAB} <= tags.keys():
            return
        strtab, symtab = tags[DT_STRTAB], tags[DT_SYMTAB]
        strsz = tags.get(DT_STRSZ, 0)
        nsyms = (strtab - symtab) // 24 if strtab > symtab else 0      # .dynsym precedes .dynstr
        if not 0 < nsyms < 100000 or strtab + strsz > self.size:
            return
        strings = mem.read(self.base + strtab, strsz)
        syms = mem.read(self.base + symtab, nsyms * 24)
        for i in range(nsyms):
            name_off, info, _, _, value, _ = struct.unpack_from("<IBBHQQ", syms, i * 24)
            if name_off >= len(strings):
                continue
            name = strings[name_off:strings.index(b"\0", name_off)].decode(errors="replace")
            if name.endswith(".kd") and value + 64 <= self.size:
                self.kernels[self.base + value] = ForeignKernel(name, hidden.get(name, ()))

    def entry_seen(self, entry: int) -> None:
        """A kernel of an image-less allocation enters at ``entry``: its code runs from there."""
        if self._text is None and self._instructions is None:
            self._text = [(entry - self.base, self.size - (entry - self.base))]

    @property
    def instructions(self) -> dict:
        if self._instructions is None:
            out = {}
            for vaddr, size in self._text or ():
                code = self.gpu.memory.read(self.base + vaddr, size)
                out.update((i.pc, i) for i in decode_tolerant(code, self.gpu.processor, self.base + vaddr))
            self._instructions = out
        return self._instructions

    def contains(self, addr: int) -> bool:
        return self.base <= addr < self.base + self.size


def uses_gws(program) -> bool:
    """Whether a program (loaded or found in memory) has global wave sync instructions: its dispatches need
    every wave resident at once.  Cached on the program."""
    u = getattr(program, "_uses_gws", None)
    if u is None:
        u = any(i.name.startswith("ds_gws_") for i in program.instructions.values())
        program._uses_gws = u
    return u


def decode_tolerant(code: bytes, target: str, base: int) -> list:
    """A linear sweep that steps over words that are not instructions (data, padding) instead of failing:
    for code found in memory, where section boundaries are not known.  Jumping to a skipped word faults."""
    from .isa.decoder import DecodeError, decode_one, table_for

    table, out, off, n = table_for(target), [], 0, len(code)
    while off + 4 <= n:
        try:
            inst = decode_one(code, off, target, table)
        except DecodeError:
            off += 4
            continue
        inst.pc = base + off
        out.append(inst)
        off += inst.size
    return out
