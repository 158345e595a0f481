"""``hipModuleLaunchKernel(..., extra=...)``: the explicit arguments packed by the caller.

hip-python's ``HipModuleLaunchKernel_extra`` packs a list/tuple of ctypes values (by value) and pointer-likes
(8-byte addresses), each aligned to min(its size, 8), and exposes the C config array {BUFFER_POINTER, buf,
BUFFER_SIZE, &size, END}; C callers (and hip-python users) may pass such an array themselves.  Either way the
runtime copies the bytes over the explicit arguments of the kernarg segment as they are.

The packing of a tuple is decided once per sequence of entry types (a ``struct`` format and the conversions
of the entries ``struct`` cannot read itself), so repeat launches pack with one ``struct`` call.
"""
from __future__ import annotations

import ctypes
import struct

import numpy as np

from ..errors import HipError, hipError_t
from ..runtime.kernargs import HIP_LAUNCH_PARAM_BUFFER_POINTER, HIP_LAUNCH_PARAM_BUFFER_SIZE, HIP_LAUNCH_PARAM_END, \
    read_extra
from .pointers import Pointer, address_of

CTYPES_SCALARS = (ctypes.c_bool, ctypes.c_char, ctypes.c_wchar, ctypes.c_byte, ctypes.c_ubyte, ctypes.c_short,
                  ctypes.c_ushort, ctypes.c_int, ctypes.c_uint, ctypes.c_long, ctypes.c_ulong, ctypes.c_longlong,
                  ctypes.c_ulonglong, ctypes.c_size_t, ctypes.c_ssize_t, ctypes.c_float, ctypes.c_double,
                  ctypes.c_longdouble, ctypes.c_char_p, ctypes.c_wchar_p, ctypes.c_void_p, ctypes.Structure,
                  ctypes.Union)


def _entry(t) -> tuple[int, str, object]:
    """How an entry of type ``t`` is packed: its size, its ``struct`` code, the conversion before ``struct``
    (None: ``struct`` reads it itself).  ctypes values by value (their own bytes; a c_void_p's are its
    address, NULL for None), anything else as the 8-byte address ``address_of`` gives."""
    if issubclass(t, CTYPES_SCALARS):
        n = ctypes.sizeof(t)
        return n, f"{n}s", bytes
    if t is int or (issubclass(t, np.integer) and t.__module__ == "numpy"):
        return 8, "Q", None                 # address_of(v) is int(v), what struct reads (bool is no address)
    return 8, "Q", address_of


class _TuplePacker:
    __slots__ = ("pack", "convs")

    def __init__(self, types):
        fmt, pos, convs = ["<"], 0, []
        for i, t in enumerate(types):
            size, code, conv = _entry(t)
            align = min(size, 8) or 1
            pad = -pos % align
            fmt.append(f"{pad}x{code}" if pad else code)
            pos += pad + size
            if conv is not None:
                convs.append((i, conv))
        self.pack = struct.Struct("".join(fmt)).pack
        self.convs = tuple(convs)

    def __call__(self, entries) -> bytes:
        if self.convs:
            entries = list(entries)
            for i, conv in self.convs:
                entries[i] = conv(entries[i])
        try:
            return self.pack(*entries)
        except struct.error as exc:         # an address outside [0, 2^64)
            raise OverflowError(f"extra: {exc}") from None


_packers: dict = {}


def pack_extra_tuple(entries) -> bytes:
    """hip-python's ``HipModuleLaunchKernel_extra`` packing of a list/tuple: ctypes values by value, anything
    else as an 8-byte pointer; each entry aligned to min(its size, 8)."""
    types = tuple(map(type, entries))
    packer = _packers.get(types)
    if packer is None:
        if len(_packers) > 256:
            _packers.clear()
        packer = _packers[types] = _TuplePacker(types)
    return packer(entries)


class HipModuleLaunchKernel_extra(Pointer):
    """``hip._hip_helpers.HipModuleLaunchKernel_extra``: a list/tuple of ctypes values and pointer-likes packed
    into an argument buffer, exposed as the C ``extra`` config array; other objects as Pointer."""

    def __init__(self, pyobj=None):
        if isinstance(pyobj, HipModuleLaunchKernel_extra):
            super().__init__(pyobj._ptr)
            self._keep = pyobj
            return
        if isinstance(pyobj, (list, tuple)):
            data = pack_extra_tuple(pyobj)
            self.args = ctypes.create_string_buffer(data, max(len(data), 1))
            self.args_size = ctypes.c_size_t(len(data))
            self.config = (ctypes.c_void_p * 5)(HIP_LAUNCH_PARAM_BUFFER_POINTER, ctypes.addressof(self.args),
                                                HIP_LAUNCH_PARAM_BUFFER_SIZE, ctypes.addressof(self.args_size),
                                                HIP_LAUNCH_PARAM_END)
            super().__init__(ctypes.addressof(self.config))
            self._keep = pyobj
            return
        super().__init__(pyobj)

    def packed(self) -> bytes:
        return read_extra(self._ptr, hipError_t.hipErrorInvalidValue)


def parse_extra(extra) -> bytes:
    """The explicit-argument bytes of hip-python's ``extra``: a list/tuple (packed as above), or a pointer to
    the C config array (a HipModuleLaunchKernel_extra, a ctypes array, an address)."""
    if isinstance(extra, (list, tuple)):
        return pack_extra_tuple(extra)
    if isinstance(extra, HipModuleLaunchKernel_extra):
        return extra.packed()
    try:
        addr = address_of(extra)
    except (TypeError, ValueError) as exc:
        raise HipError(hipError_t.hipErrorInvalidValue, f"extra: {exc}") from None
    return read_extra(addr, hipError_t.hipErrorInvalidValue)
