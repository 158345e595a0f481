"""Pinned host memory at one address for the host and every device: hipHostMalloc's, and what the runtime pins
for itself (hostcall buffers of device printf and malloc, the sync blocks of cooperative launches), which
kernels are handed by address.

On the HSA backend it comes from ROCr's fine-grained system pool, which every GPU reaches at its host address
with or without SVM — as AMD's HIP allocates it.  Locking ordinary host memory instead (hsa_amd_memory_lock)
would give the GPUs another address where libhsakmt has no SVM (``PYHIP_THUNK_QUIRKS=no-svm``), and a kernel
handed the host address would fault.  On the emulator backend: zeroed host memory mapped into each device at
its own address.
"""
from __future__ import annotations

import ctypes

import numpy as np

from ..errors import HipError, hipError_t


def pin(devices, size: int, align: int = 4096, zero: bool = True) -> tuple[int, np.ndarray]:
    """``(address, bytes)`` of ``size`` bytes every device in ``devices`` reaches at that address, zeroed
    unless ``zero`` is False (hipHostMalloc's memory need not be: ROCr's pool may hand back used pages)."""
    own = getattr(devices[0].backend, "alloc_host", None) if devices else None
    if own is not None:             # one ROCr allocation, accessible to every GPU of the process
        addr = own(size)
        arr = np.ctypeslib.as_array((ctypes.c_ubyte * size).from_address(addr))
        if zero:
            arr[:] = 0
        return addr, arr
    try:
        raw = np.zeros(size + align, dtype=np.uint8)
    except (MemoryError, ValueError, OverflowError):           # more than the host has (or can address)
        raise HipError(hipError_t.hipErrorOutOfMemory, f"cannot pin {size} bytes of host memory") from None
    start = -raw.ctypes.data % align
    arr = raw[start:start + size]
    addr = int(arr.ctypes.data)
    for dev in devices:
        dev.backend.map_host(addr, arr)
    return addr, arr


def reach(device, addr: int, arr: np.ndarray) -> None:
    """Make memory of :func:`pin` reachable from one more device: ROCr's system memory already is; the emulator
    maps it."""
    if getattr(device.backend, "alloc_host", None) is None:
        device.backend.map_host(addr, arr)


def unpin(devices, addr: int) -> None:
    """Give back memory of :func:`pin` (the devices are done with it)."""
    own = getattr(devices[0].backend, "free_host", None) if devices else None
    if own is None or not own(addr):
        for dev in devices:
            dev.backend.unmap_host(addr)
