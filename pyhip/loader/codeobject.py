"""AMDGPU code objects (HSACO): an ELF read with pyelftools into kernels, globals and relocations.

Accepted: ET_DYN, EM_AMDGPU, OSABI 64 (HSA), ABI versions 1-4 (code object V3-V6).  Facts:
docs/code-object.md §3-§6.  Every malformation raises :class:`LoaderError`.
"""
from __future__ import annotations

import functools
import io
import struct
from dataclasses import dataclass

import numpy as np

from elftools.elf.elffile import ELFFile
from elftools.elf.relocation import RelocationSection
from elftools.elf.sections import NoteSection, SymbolTableSection

from ..errors import LoaderError, hipError_t
from .descriptor import KD_SIZE, KernelDescriptor
from .metadata import ArgMeta, KernelMeta, amdgpu_metadata_notes, parse_metadata
from .names import NameIndex, demangle, full_signature
from .targetid import TargetID, target_from_eflags

EM_AMDGPU = 224
ELFOSABI_AMDGPU_HSA = 64
ABI_TO_VERSION = {1: 3, 2: 4, 3: 5, 4: 6}
RELOC_NAMES = {0: "R_AMDGPU_NONE", 1: "R_AMDGPU_ABS32_LO", 2: "R_AMDGPU_ABS32_HI", 3: "R_AMDGPU_ABS64",
               4: "R_AMDGPU_REL32", 5: "R_AMDGPU_REL64", 6: "R_AMDGPU_ABS32", 7: "R_AMDGPU_GOTPCREL",
               8: "R_AMDGPU_GOTPCREL32_LO", 9: "R_AMDGPU_GOTPCREL32_HI", 10: "R_AMDGPU_REL32_LO",
               11: "R_AMDGPU_REL32_HI", 13: "R_AMDGPU_RELATIVE64", 14: "R_AMDGPU_REL16"}
_EHDR = struct.Struct("<16sHHIQQQIHHHHHH")
_SHDR = struct.Struct("<IIQQQQIIQQ")
_PHDR = struct.Struct("<IIQQQQQQ")
MAX_HEADERS = 4096
_SYM = np.dtype([("name", "<u4"), ("info", "u1"), ("other", "u1"), ("shndx", "<u2"), ("value", "<u8"),
                 ("size", "<u8")])
_STT = {0: "STT_NOTYPE", 1: "STT_OBJECT", 2: "STT_FUNC", 3: "STT_SECTION", 4: "STT_FILE", 10: "STT_AMDGPU_HSA_KERNEL"}
_STB = {0: "STB_LOCAL", 1: "STB_GLOBAL", 2: "STB_WEAK"}
_IGNORED_GLOBAL_PREFIXES = ("__hip_cuid_", "_ZN17__HIP_Coordinates", "_DYNAMIC")


@dataclass(frozen=True)
class Symbol:
    name: str
    value: int
    size: int
    type: str
    bind: str
    shndx: object


@dataclass(frozen=True)
class GlobalVar:
    name: str
    vaddr: int
    size: int
    section: str

    @property
    def offset(self) -> int:
        return self.vaddr


@dataclass(frozen=True)
class Relocation:
    offset: int
    type: int
    symbol_name: str
    symbol_value: int
    addend: int

    @property
    def type_name(self) -> str:
        return RELOC_NAMES.get(self.type, f"R_AMDGPU_{self.type}")


class Kernel:
    """A kernel: its metadata (attributes delegated to :class:`KernelMeta`) plus its descriptor."""

    def __init__(self, meta: KernelMeta, descriptor: KernelDescriptor, descriptor_vaddr: int,
                 code_size: int, code_object: "CodeObject"):
        self.meta = meta
        self.descriptor = descriptor
        self.descriptor_vaddr = descriptor_vaddr
        self.entry_vaddr = descriptor_vaddr + descriptor.kernel_code_entry_byte_offset
        self.code_size = code_size
        self.code_object = code_object

    def __getattr__(self, item):
        if item == "meta":
            raise AttributeError(item)
        return getattr(self.meta, item)

    @property
    def demangled(self) -> str:
        return full_signature(self.meta.name)

    def __repr__(self) -> str:
        return f"<Kernel {self.demangled} on {self.code_object.target}>"

    def summary(self) -> dict:
        m = self.meta
        d = {"name": m.name, "symbol": m.symbol, "demangled": self.demangled,
             "kernarg_size": m.kernarg_segment_size, "kernarg_align": m.kernarg_segment_align,
             "group_segment_size": m.group_segment_fixed_size,
             "private_segment_size": m.private_segment_fixed_size, "wavefront_size": m.wavefront_size,
             "sgpr_count": m.sgpr_count, "vgpr_count": m.vgpr_count, "agpr_count": m.agpr_count,
             "max_flat_workgroup_size": m.max_flat_workgroup_size,
             "sgpr_spill_count": m.sgpr_spill_count, "vgpr_spill_count": m.vgpr_spill_count,
             "uses_dynamic_stack": m.uses_dynamic_stack,
             "args": [a.as_dict() for a in m.args]}
        return d


def _check_layout(data: bytes) -> tuple:
    """Validate the ELF header and the header tables' bounds before pyelftools touches them."""
    if len(data) < 64:
        raise LoaderError(f"code object truncated ({len(data)} bytes, ELF header needs 64)")
    ident, e_type, e_machine, e_version, e_entry, e_phoff, e_shoff, e_flags, e_ehsize, e_phentsize, \
        e_phnum, e_shentsize, e_shnum, e_shstrndx = _EHDR.unpack_from(data, 0)
    if ident[:4] != b"\x7fELF":
        raise LoaderError("not an ELF file (bad magic)")
    if ident[4] != 2 or ident[5] != 1:
        raise LoaderError("not a 64-bit little-endian ELF")
    if e_machine != EM_AMDGPU:
        raise LoaderError(f"ELF machine {e_machine} is not AMDGPU ({EM_AMDGPU})")
    if ident[7] != ELFOSABI_AMDGPU_HSA:
        raise LoaderError(f"ELF OSABI {ident[7]} is not AMDGPU HSA ({ELFOSABI_AMDGPU_HSA})")
    if ident[8] not in ABI_TO_VERSION:
        raise LoaderError(f"unsupported code object ABI version {ident[8]} (supported: V3-V6)")
    if e_type != 3:
        raise LoaderError(f"ELF type {e_type} is not a linked shared object (ET_DYN); "
                          "relocatable objects must be linked with ld.lld first")
    for name, off, num, entsize, want in (("program", e_phoff, e_phnum, e_phentsize, 56),
                                          ("section", e_shoff, e_shnum, e_shentsize, 64)):
        if num and entsize != want:
            raise LoaderError(f"ELF {name} header entry size {entsize} != {want}")
        if num > MAX_HEADERS or off > len(data) or num * want > len(data) - off:
            raise LoaderError(f"ELF {name} header table ({num} entries at {off}) is outside the file")
    if e_shnum and e_shstrndx >= e_shnum:
        raise LoaderError("ELF section name table index out of range")
    for i in range(e_shnum):
        sh = _SHDR.unpack_from(data, e_shoff + i * 64)
        sh_type, sh_offset, sh_size = sh[1], sh[4], sh[5]
        if sh_type != 8 and sh_type != 0 and (sh_offset > len(data) or sh_size > len(data) - sh_offset):
            raise LoaderError(f"ELF section {i} [{sh_offset}, +{sh_size}) is outside the file")
        if sh[9] and sh[9] not in (16, 24) and sh_type in (2, 11, 4):
            raise LoaderError(f"ELF section {i} has a bad entry size {sh[9]}")
    for i in range(e_phnum):
        ph = _PHDR.unpack_from(data, e_phoff + i * 56)
        p_type, p_offset, p_filesz, p_memsz = ph[0], ph[2], ph[5], ph[6]
        if p_offset > len(data) or p_filesz > len(data) - p_offset:
            raise LoaderError(f"ELF segment {i} [{p_offset}, +{p_filesz}) is outside the file")
        if p_type == 1 and (p_memsz < p_filesz or p_memsz > (1 << 32)):
            raise LoaderError(f"ELF segment {i} has an absurd memory size {p_memsz}")
    return ident[8], e_flags


class CodeObject:
    """One AMDGPU code object.  Construction validates the header; the rest is parsed on first use."""

    def __init__(self, data: bytes | memoryview, origin: str = "<bytes>"):
        self.data = bytes(data)
        self.origin = origin
        abi, self.e_flags = _check_layout(self.data)
        self.version = ABI_TO_VERSION[abi]
        self.target: TargetID = target_from_eflags(self.e_flags, abi)

    @property
    def processor(self) -> str:
        return self.target.processor

    def __repr__(self) -> str:
        return f"<CodeObject {self.target} V{self.version} from {self.origin}>"

    # -- lazily parsed parts ----------------------------------------------------------------------
    def _guard(self, fn, what: str):
        try:
            return fn()
        except LoaderError:
            raise
        except RecursionError:
            raise LoaderError(f"{what}: structure too deep") from None
        except Exception as exc:  # pyelftools reports corruption with many exception types
            raise LoaderError(f"{what}: corrupt ELF ({type(exc).__name__}: {str(exc)[:120]})") from None

    def _section_headers(self) -> list[tuple[int, int, int]]:
        """``(sh_type, sh_offset, sh_size)`` per section (bounds were checked at construction)."""
        e_shoff, e_shnum = struct.unpack_from("<Q", self.data, 40)[0], struct.unpack_from("<H", self.data, 60)[0]
        out = []
        for i in range(e_shnum):
            sh = _SHDR.unpack_from(self.data, e_shoff + i * 64)
            out.append((sh[1], sh[4], sh[5]))
        return out

    @functools.cached_property
    def _elf(self) -> ELFFile:
        return self._guard(lambda: ELFFile(io.BytesIO(self.data)), "ELF")

    @functools.cached_property
    def segments(self) -> list[tuple[int, int, int, int, int, int]]:
        """PT_LOAD segments as ``(vaddr, memsz, offset, filesz, flags, align)``."""
        def read():
            out = []
            for seg in self._elf.iter_segments():
                if seg["p_type"] == "PT_LOAD":
                    out.append((seg["p_vaddr"], seg["p_memsz"], seg["p_offset"], seg["p_filesz"],
                                seg["p_flags"], seg["p_align"]))
            return out
        segs = self._guard(read, "program headers")
        if not segs:
            raise LoaderError("code object has no loadable segment")
        return segs

    def load_segments(self) -> list[tuple[int, int, bytes]]:
        """``[(vaddr, memsz, file_bytes)]`` — what a loader copies to ``base + vaddr``."""
        return [(v, m, self.data[o:o + f]) for v, m, o, f, _, _ in self.segments]

    @property
    def load_size(self) -> int:
        return max(v + m for v, m, *_ in self.segments)

    def read_vaddr(self, vaddr: int, size: int, what: str = "data") -> bytes:
        """File bytes backing ``[vaddr, vaddr+size)``; raises if they are not in the file."""
        for v, m, o, f, _, _ in self.segments:
            if v <= vaddr and vaddr + size <= v + f:
                return self.data[o + vaddr - v:o + vaddr - v + size]
        raise LoaderError(f"{what} at 0x{vaddr:x} (+{size}) is outside the file's loaded contents")

    @functools.cached_property
    def symbols(self) -> dict[str, Symbol]:
        """``.dynsym`` (what ROCr uses) over ``.symtab``; the tables are decoded with numpy, not one
        pyelftools object per symbol, so a code object with thousands of kernels indexes in milliseconds."""
        def read():
            found: dict[str, Symbol] = {}
            for secname in (".symtab", ".dynsym"):
                sec = self._elf.get_section_by_name(secname)
                if not isinstance(sec, SymbolTableSection):
                    continue
                raw = sec.data()
                if sec["sh_entsize"] != _SYM.itemsize or len(raw) % _SYM.itemsize:
                    raise LoaderError(f"{secname} has a bad entry size")
                strtab = self._elf.get_section(sec["sh_link"]).data()
                for name_off, info, shndx, value, size in np.frombuffer(raw, _SYM)[
                        ["name", "info", "shndx", "value", "size"]].tolist():
                    if not name_off:
                        continue
                    if name_off >= len(strtab):
                        raise LoaderError(f"{secname}: symbol name offset past the string table")
                    end = strtab.find(b"\0", name_off)
                    name = strtab[name_off:end if end >= 0 else len(strtab)].decode("utf-8", "replace")
                    found[name] = Symbol(name, value, size, _STT.get(info & 0xF, f"STT_{info & 0xF}"),
                                         _STB.get(info >> 4, f"STB_{info >> 4}"),
                                         "SHN_UNDEF" if shndx == 0 else ("SHN_ABS" if shndx == 0xFFF1 else shndx))
            return found
        return self._guard(read, "symbol table")

    def symbol_vaddr(self, name: str) -> int:
        sym = self.symbols.get(name)
        if sym is None or sym.shndx == "SHN_UNDEF":
            raise LoaderError(f"symbol {name!r} not defined in the code object", hipError_t.hipErrorNotFound)
        return sym.value

    @functools.cached_property
    def metadata(self):
        blobs = []
        for sh_type, off, size in self._section_headers():
            if sh_type != 7:                      # SHT_NOTE
                continue
            blobs += amdgpu_metadata_notes(self.data, off, off + size)
        if not blobs:
            raise LoaderError("code object has no AMDGPU metadata note")
        if len(blobs) > 1:
            raise LoaderError("code object has more than one AMDGPU metadata note")
        meta = parse_metadata(blobs[0])
        if meta.target is not None:
            try:
                declared = TargetID.parse(meta.target, self.target.generic_version)
            except LoaderError as exc:
                raise LoaderError(f"metadata amdhsa.target: {exc.message}") from None
            if declared.processor != self.target.processor:
                raise LoaderError(f"metadata target {meta.target} disagrees with e_flags ({self.target})")
        return meta

    @property
    def _kernel_meta(self) -> dict[str, int]:
        return self.metadata.names

    def kernel(self, name: str) -> Kernel:
        """The kernel with this exact (mangled) name, built on first use."""
        cache = self.__dict__.setdefault("_kernel_cache", {})
        k = cache.get(name)
        if k is None:
            i = self._kernel_meta.get(name)
            if i is None:
                raise LoaderError(f"no kernel named {name!r}", hipError_t.hipErrorNotFound)
            k = cache[name] = self._build_kernel(self.metadata.kernel(i))
        return k

    def _build_kernel(self, km: KernelMeta) -> Kernel:
        sym = self.symbols.get(km.symbol)
        if sym is None or sym.shndx == "SHN_UNDEF":
            raise LoaderError(f"kernel {km.name!r}: descriptor symbol {km.symbol!r} is missing")
        kd = KernelDescriptor.from_bytes(self.read_vaddr(sym.value, KD_SIZE, f"descriptor {km.symbol}"),
                                         self.processor)
        entry = sym.value + kd.kernel_code_entry_byte_offset
        code = self.symbols.get(km.name)
        code_size = code.size if code is not None and code.value == entry else 0
        self.read_vaddr(entry, 4, f"entry of kernel {km.name}")
        if kd.kernel_code_entry_byte_offset % 4:
            raise LoaderError(f"kernel {km.name!r}: misaligned entry offset")
        return Kernel(km, kd, sym.value, code_size, self)

    @functools.cached_property
    def kernels(self) -> dict[str, Kernel]:
        return {name: self.kernel(name) for name in self._kernel_meta}

    @functools.cached_property
    def name_index(self) -> NameIndex:
        return NameIndex(self._kernel_meta)

    def find_kernel(self, name) -> Kernel:
        """By mangled, extern "C", full demangled signature or unambiguous short name (the demangled
        index is only built when the name is not an exact kernel name)."""
        if isinstance(name, (bytes, bytearray)):
            name = bytes(name).decode("utf-8", "replace")
        if isinstance(name, str) and name in self._kernel_meta:
            return self.kernel(name)
        return self.kernel(self.name_index.lookup(name))

    @functools.cached_property
    def globals(self) -> list[GlobalVar]:
        kernel_syms = {k.symbol for k in self.kernels.values()}
        def read():
            out = []
            for s in self.symbols.values():
                if s.type != "STT_OBJECT" or s.shndx == "SHN_UNDEF" or s.name in kernel_syms:
                    continue
                if s.name.startswith(_IGNORED_GLOBAL_PREFIXES) or s.bind == "STB_LOCAL":
                    continue
                sec = self._elf.get_section(s.shndx) if isinstance(s.shndx, int) else None
                out.append(GlobalVar(s.name, s.value, s.size, sec.name if sec is not None else ""))
            return sorted(out, key=lambda g: g.vaddr)
        return self._guard(read, "globals")

    @functools.cached_property
    def relocations(self) -> list[Relocation]:
        def read():
            out = []
            for sec in self._elf.iter_sections():
                if not isinstance(sec, RelocationSection) or not sec.is_RELA():
                    continue
                if sec.num_relocations() > 1 << 20:
                    raise LoaderError("absurd relocation count")
                symtab = self._elf.get_section(sec["sh_link"]) if sec["sh_link"] else None
                for r in sec.iter_relocations():
                    name, value = "", 0
                    if r["r_info_sym"] and isinstance(symtab, SymbolTableSection):
                        sym = symtab.get_symbol(r["r_info_sym"])
                        if sym is None:
                            raise LoaderError("relocation refers to a missing symbol")
                        name, value = sym.name, (sym["st_value"] if sym["st_shndx"] != "SHN_UNDEF" else None)
                    out.append(Relocation(r["r_offset"], r["r_info_type"], name, value, r["r_addend"]))
            return out
        return self._guard(read, "relocations")

    def dynamic_relocations(self) -> list[tuple[int, int, str, int | None, int]]:
        return [(r.offset, r.type, r.symbol_name, r.symbol_value, r.addend) for r in self.relocations]

    def section_bytes(self, name: str) -> tuple[int, bytes]:
        """``(vaddr, bytes)`` of a section, e.g. ``.text``."""
        def read():
            sec = self._elf.get_section_by_name(name)
            if sec is None:
                raise LoaderError(f"code object has no {name} section", hipError_t.hipErrorNotFound)
            return sec["sh_addr"], sec.data()
        return self._guard(read, f"section {name}")

    def validate(self) -> "CodeObject":
        """Parse everything now (metadata, kernels, globals, relocations)."""
        self.kernels, self.globals, self.relocations  # noqa: B018
        return self

    def summary(self) -> dict:
        return {"target": str(self.target), "triple": self.target.triple_name, "version": self.version,
                "e_flags": f"0x{self.e_flags:x}",
                "kernels": [k.summary() for k in self.kernels.values()],
                "globals": [{"name": g.name, "offset": g.vaddr, "size": g.size} for g in self.globals],
                "relocations": [{"offset": r.offset, "type": r.type_name, "symbol": r.symbol_name,
                                 "addend": r.addend} for r in self.relocations]}
