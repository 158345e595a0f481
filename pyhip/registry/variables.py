"""Device variables the program registered by their host shadows (``__hipRegisterVar``, ``__hipRegisterSurface``,
``__hipRegisterTexture``, ``__hipRegisterManagedVar``): what the registry records of each, managed memory
(allocated at registration, bound into each device's copy of the code object as it loads) and the bounds rule
of the symbol API."""
from __future__ import annotations

import ctypes
import struct
from dataclasses import dataclass

from ..errors import HipError, hipError_t


@dataclass(frozen=True)
class VarInfo:
    fatbin: int                       # the fat binary's handle
    host_address: int
    name: str
    size: int
    constant: bool = False
    managed: bool = False
    managed_address: int = 0          # __hipRegisterManagedVar: the managed allocation the device variable points to


def managed_memory(allocate, pointer: int, init: int, size: int):
    """``__hipRegisterManagedVar``'s memory: ``allocate(size)`` (the runtime's managed memory: pinned host memory
    every device maps at its own address) filled with ``size`` bytes from host ``init`` (0: none), its address
    stored in the program's host pointer at ``pointer``.  Returns the allocation (the caller keeps it)."""
    mem = allocate(max(int(size), 1))
    address = int(mem)
    if init and size:
        ctypes.memmove(address, init, int(size))
    ctypes.c_void_p.from_address(pointer).value = address
    return mem


def bind_managed(variables, module, device) -> None:
    """A code object just loaded on ``device`` as ``module``: each managed variable's device-side pointer gets
    its managed allocation's address (hipErrorInvalidSymbol when the device variable is not pointer-sized)."""
    for v in variables:
        if v.managed and v.managed_address:
            where, size = module.global_var(v.name)[:2]
            if size < 8:
                raise HipError(hipError_t.hipErrorInvalidSymbol, f"managed variable {v.name} is not a pointer")
            device.backend.write(where, struct.pack("<Q", v.managed_address))


def address_in(info: VarInfo, module, offset: int = 0, size: int = 0) -> int:
    """The device address of ``info``'s variable in ``module`` plus ``offset``; [offset, offset + size) must lie
    inside the variable (hipErrorInvalidValue otherwise, as HIP 5.2's ihipMemcpySymbol_validate)."""
    base, nbytes = module.global_var(info.name)[:2]
    if int(offset) + int(size) > nbytes:
        raise HipError(hipError_t.hipErrorInvalidValue,
                       f"{info.name}: bytes [{int(offset)}, {int(offset) + int(size)}) outside its {nbytes} bytes")
    return base + int(offset)
