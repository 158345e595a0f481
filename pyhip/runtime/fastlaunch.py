"""Repeat launches from Python with near-zero interpreter work (hipModuleLaunchKernel, ``Kernel.__call__``).

After a launch went through :meth:`Function.launch` (every check, the kernarg layout from the metadata), the
runtime prepares an :class:`Entry` for that (function, stream, grid, block, shared memory) and the *types* of
the arguments it was given: the kernarg segment with the hidden arguments filled, a ``struct`` format for the
explicit ones (padding included), which arguments are pointer objects to convert, and a native launch record
(the AQL packet with the stream's counter signal, the queue, the stream's kernarg ring).  A repeat with
arguments of the same types packs them with that ``struct`` and makes one native call
(``pyhip_engine_launch``: reserve, copy, publish).  Anything else — other types, a value ``struct`` refuses,
a closed queue — takes the full path, which checks and reports exactly as before.

Entries ride on the stream's native launch state (:meth:`Stream.fast_state`, the protocol of the C ABI's fast
path): granted to one stream per device while no other stream has unfinished work; when another stream
submits, the grant ends and ``Device.launch_generation`` moves on, which retires every entry at once.
"""
from __future__ import annotations

import struct

from ..aql import KernelDispatchPacket

MAX_KERNARG = 2048


EMU_FUNCTIONS = ("pyhip_queue_reserve", "pyhip_queue_publish", "pyhip_signal_add")
_ready = None            # the queue functions the engine was given (one backend per process)


def _engine(names=EMU_FUNCTIONS):
    """The native engine module, told where the queue functions of this process's backend are (once): the
    emulator's AQL queues, or ROCr's rings and signals on the HSA backend (HsaFastLaunchState names them).
    None when there is no engine, or it was set up for other queue functions."""
    global _ready
    from ..emu import native
    if not native.available():
        return None
    m = native.module()
    if _ready is None:
        from ..aql.native import ffi as aql_ffi, lib as aql_lib
        fns = [aql_ffi.cast("uintptr_t", aql_ffi.addressof(aql_lib, n)) for n in names]
        m.lib.pyhip_engine_set_queue_fns(*(m.ffi.cast("void*", int(f)) for f in fns))
        _ready = names
    return m if _ready == names else None


def _pointer_conv(t):
    """How the runtime turns an object of type ``t`` into a device address (kernargs._as_pointer)."""
    if t is int:
        return None
    if hasattr(t, "__hip_pointer__"):
        hp = t.__hip_pointer__
        return lambda v: int(hp(v))
    if hasattr(t, "ptr"):
        return lambda v: int(v.ptr)
    return False


class Entry:
    __slots__ = ("generation", "device", "types", "convs", "pack", "cdata", "call", "lib", "keep")

    def __init__(self, generation, device, types, convs, fmt, cdata, lib, keep):
        self.generation = generation
        self.device = device
        self.types = types
        self.convs = convs
        self.pack = struct.Struct(fmt).pack
        self.cdata = cdata
        self.lib = lib
        self.call = lib.pyhip_engine_launch
        self.keep = keep

    def launch(self, args) -> bool:
        """Publish a repeat; False when it must take the runtime's full path instead."""
        if tuple(map(type, args)) != self.types:
            return False
        if self.convs:
            args = list(args)
            for i, conv in self.convs:
                args[i] = conv(args[i])
        try:
            blob = self.pack(*args)
        except (struct.error, OverflowError):
            return False
        return bool(self.call(self.cdata, blob, len(blob)))


def prepare(function, stream, grid, block, shared: int, args):
    """An Entry for repeats of a launch that just went through the runtime, or None when this launch cannot
    be repeated natively (arguments of a kind the struct packer does not cover, a stream without the native
    launch grant, no native engine)."""
    packer = function.packer
    if packer.size > MAX_KERNARG or len(args) != len(packer.explicit):
        return None
    fmt, pos, convs = ["<"], 0, []
    for i, (a, pk, v) in enumerate(zip(packer.explicit, packer.kinds, args)):
        if a.offset < pos:
            return None
        fmt.append(f"{a.offset - pos}x" if a.offset > pos else "")
        if pk.kind == "pointer":
            if a.size != 8:
                return None
            conv = _pointer_conv(type(v))
            if conv is False:
                return None
            if conv is not None:
                convs.append((i, conv))
            fmt.append("Q")
        elif pk.kind in ("int", "float") and pk.fmt and struct.calcsize(pk.fmt) == a.size:
            if pk.kind == "float" and type(v) not in (float, int):
                return None                     # numpy scalars etc.: the full path checks their width
            if pk.kind == "int" and type(v) not in (int, bool):
                return None
            fmt.append(pk.fmt[1:])
        elif pk.kind == "other" and type(v) is int and a.size in (1, 2, 4, 8):
            # untyped by-value argument (extern "C" kernels' metadata names no type): a Python int as the
            # full path writes it; out of the signed range, struct refuses and the full path takes over
            fmt.append({1: "b", 2: "h", 4: "i", 8: "q"}[a.size])
        elif pk.kind == "other" and type(v) is float and a.size in (4, 8):
            fmt.append("f" if a.size == 4 else "d")
        else:
            return None
        pos = a.offset + a.size
    dev = stream.device
    generation = dev.launch_generation
    fs = stream.fast_state()
    if fs is None or packer.size > fs.SLOT:
        return None
    if getattr(fs, "publish_functions", None) is not None:
        # ROCr's queues (HSA backend): after a fault the queue needs the runtime's full path (seen to hang
        # test_fault_matrix's repeat after a misaligned atomic); repeats from Python take the full path there
        return None
    m = _engine(EMU_FUNCTIONS)
    if m is None:
        return None
    template = bytes(packer.pack_raw(bytes(pos), grid, block, dynamic_lds=shared))
    kernel = function.kernel
    items = tuple(g * b for g, b in zip(grid, block))
    dims = 3 if items[2] > 1 or block[2] > 1 else (2 if items[1] > 1 or block[1] > 1 else 1)
    packet = KernelDispatchPacket(dims, tuple(block), items, kernel.private_segment_fixed_size,
                                  kernel.group_segment_fixed_size + shared, function.kernel_object, 0,
                                  fs.signal.handle).pack()
    ffi = m.ffi
    e = ffi.new("LaunchEntry*")
    ffi.memmove(e.kernarg, template, len(template))
    e.kernarg_size = len(template)
    e.explicit_size = pos
    ffi.memmove(e.packet, packet, 64)
    e.queue = ffi.cast("void*", fs.queue.address)
    e.ring = ffi.cast("uint8_t*", fs.ring_address)
    e.slot_size = fs.SLOT
    e.queue_mask = fs.queue.size - 1
    e.counter = ffi.cast("void*", fs.signal.handle)
    e.launches = ffi.cast("uint64_t*", fs.launches.address)
    return Entry(generation, dev.index, tuple(type(v) for v in args), tuple(convs), "".join(fmt), e, m.lib,
                 (fs, stream))
