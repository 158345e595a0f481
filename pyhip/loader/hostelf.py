"""Host ELF files (executables, shared libraries) that embed offload bundles in ``.hip_fatbin``.

The bundles are found through the ``__hip_fatbin_wrapper`` records in ``.hipFatBinSegment``
(magic ``HIPF``, version 1, pointer to the bundle; the pointer may be a RELATIVE relocation) and, as a
fallback, by scanning ``.hip_fatbin`` for bundle magics at 4096-byte boundaries (docs/code-object.md §2.3).
"""
from __future__ import annotations

import io
import struct

from elftools.elf.elffile import ELFFile
from elftools.elf.relocation import RelocationSection

from ..errors import LoaderError
from .bundle import BUNDLE_MAGIC, CCOB_MAGIC

HIPF_MAGIC = 0x48495046
_WRAPPER = struct.Struct("<IIQQ")
R_X86_64_RELATIVE = 8
R_X86_64_64 = 1


def fatbin_offsets(data: bytes) -> list[tuple[int, int]]:
    """``[(file_offset, limit)]`` of each bundle embedded in a host ELF (limit = end of .hip_fatbin)."""
    try:
        elf = ELFFile(io.BytesIO(data))
        fat = elf.get_section_by_name(".hip_fatbin")
        if fat is None:
            raise LoaderError("host ELF has no .hip_fatbin section (no device code)")
        f_addr, f_off, f_size = fat["sh_addr"], fat["sh_offset"], fat["sh_size"]
        if fat["sh_type"] == "SHT_NOBITS" or f_off > len(data) or f_size > len(data) - f_off:
            raise LoaderError(".hip_fatbin section is outside the file")
        limit = f_off + f_size
        starts: list[int] = []
        seg = elf.get_section_by_name(".hipFatBinSegment")
        if seg is not None and seg["sh_type"] != "SHT_NOBITS":
            s_addr, s_off, s_size = seg["sh_addr"], seg["sh_offset"], seg["sh_size"]
            if s_off > len(data) or s_size > len(data) - s_off:
                raise LoaderError(".hipFatBinSegment section is outside the file")
            relative = {}
            for sec in elf.iter_sections():
                if isinstance(sec, RelocationSection) and sec.is_RELA():
                    if sec.num_relocations() > 1 << 22:
                        raise LoaderError("absurd relocation count in host ELF")
                    for r in sec.iter_relocations():
                        if s_addr <= r["r_offset"] < s_addr + s_size and r["r_info_type"] == R_X86_64_RELATIVE:
                            relative[r["r_offset"]] = r["r_addend"]
            for i in range(s_size // _WRAPPER.size):
                magic, version, ptr, _ = _WRAPPER.unpack_from(data, s_off + i * _WRAPPER.size)
                if magic != HIPF_MAGIC:
                    continue
                if version != 1:
                    raise LoaderError(f"fat binary wrapper {i} has version {version}, expected 1")
                ptr = relative.get(s_addr + i * _WRAPPER.size + 8, ptr)
                if ptr == 0:
                    continue  # relocated against a symbol we do not resolve: fall back to scanning
                if not f_addr <= ptr < f_addr + f_size:
                    raise LoaderError(f"fat binary wrapper {i} points outside .hip_fatbin (0x{ptr:x})")
                starts.append(f_off + ptr - f_addr)
        if not starts:
            for off in range(f_off, limit, 4096):
                if data[off:off + 24] == BUNDLE_MAGIC or data[off:off + 4] == CCOB_MAGIC:
                    starts.append(off)
        if not starts:
            raise LoaderError(".hip_fatbin holds no offload bundle")
        return [(s, limit) for s in sorted(set(starts))]
    except LoaderError:
        raise
    except Exception as exc:
        raise LoaderError(f"corrupt host ELF ({type(exc).__name__}: {str(exc)[:120]})") from None
