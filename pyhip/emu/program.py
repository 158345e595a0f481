"""Loading a code object onto the emulated device: segments placed in one allocation, dynamic
relocations applied, kernel descriptors and globals exposed at device addresses, code decoded once."""
from __future__ import annotations

import struct

import numpy as np

from ..errors import HipError, hipError_t
from ..loader.codeobject import CodeObject
from .isa.decoder import decode

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

    @property
    def uses_gws(self) -> bool:
        """Whether the code has global wave sync instructions (its dispatches need every wave resident)."""
        u = getattr(self, "_uses_gws", None)
        if u is None:
            u = self._uses_gws = any(i.name.startswith("ds_gws_") for i in self.instructions.values())
        return u

    def contains(self, addr: int) -> bool:
        return self.base <= addr < self.base + self.size
