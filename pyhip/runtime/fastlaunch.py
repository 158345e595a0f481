"""Repeat launches from Python with near-zero interpreter work (hipModuleLaunchKernel, ``Kernel.__call__``).

After a launch went through :meth:`Function.launch` (every check, the kernarg layout from the metadata), the
runtime prepares an :class:`Entry` for that (function, stream, grid, block, shared memory): the kernarg segment
with the hidden arguments filled and a native launch record (the AQL packet with the stream's counter signal,
the queue, the stream's kernarg ring).  A repeat is one native call (``pyhip_engine_launch``: reserve, copy,
publish) given the explicit argument bytes, which come

* from argument values (a kernelParams list/tuple, the Kernel call's arguments) of the *types* the entry was
  prepared with: one ``struct`` format packs them.  How each value is read is kernargs.read_arg's rule, the
  one the full path uses: Python ints/floats/bools, numpy scalars, pointer objects (``__hip_pointer__``),
  int or numpy addresses, ctypes values — every type whose reading does not depend on the value — get a
  ``struct`` code, plus the reader's conversion where ``struct`` cannot read the object itself;
* or prepacked (``extra``: hip-python's tuple, the C config array; a ``void**`` kernelParams): copied as they
  are when they have the entry's size (:meth:`Entry.launch_raw`).

Anything else — other types, a value ``struct`` refuses (out of the format's range: the full path's ranges
are wider, and it reports the values it refuses), a reader failing, a closed queue — takes the full path,
which checks and reports exactly as before.  ``Entry.hits`` / :func:`hits` count the published repeats.

Entries ride on the stream's native launch state (:meth:`Stream.fast_state`, the protocol of the C ABI's fast
path): granted to one stream per device while no other stream has unfinished work; when another stream
submits, the grant ends and ``Device.launch_generation`` moves on, which retires every entry at once.  On the
HSA backend (HsaFastLaunchState: ROCr's queues) no entry is prepared: repeats from Python take the full path.
"""
from __future__ import annotations

import struct

from ..aql import KernelDispatchPacket
from .argreaders import half_bytes, plain, read_arg

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


_INT_CODES = {1: "b", 2: "h", 4: "i", 8: "q"}


def _code(pk, size: int, conv, value, t):
    """The ``struct`` code of one explicit argument read by ``conv`` (kernargs.read_arg) from a ``t``, and the
    conversion to apply before ``struct`` packs it (None: ``struct`` reads ``t`` as the runtime does).  Within
    the ranges ``struct`` accepts, its bytes are encode_arg's; outside them it refuses and the full path runs.
    None when the slot has no such code."""
    direct = conv in (int, float) and plain(t)
    if pk.kind == "pointer":
        return ("Q", None if direct else conv) if size == 8 else None
    if pk.kind in ("int", "float"):
        if not pk.fmt or struct.calcsize(pk.fmt) != size:
            return None
        if pk.fmt == "<e":                  # numpy's float16 rounding, as the runtime encodes it
            return f"{size}s", (lambda v, c=conv: half_bytes(c(v)))
        return pk.fmt[1:], None if direct else conv
    if type(value) is int and size in _INT_CODES:
        return _INT_CODES[size], None if direct else conv
    if type(value) is float and size in (4, 8):
        return ("f" if size == 4 else "d"), None if direct else conv
    if type(value) is bytes and len(value) == size:     # by_type: every value of t has this size
        return f"{size}s", conv
    return None


def plan(packer, args):
    """``(struct format, conversions, explicit bytes)`` packing arguments of the types of ``args`` (which the
    runtime just accepted) the way kernargs.encode_arg does, or None when a type is read per value."""
    if len(args) != len(packer.explicit):
        return None
    fmt, pos, convs = ["<"], 0, []
    for i, (a, pk, v) in enumerate(zip(packer.explicit, packer.kinds, args)):
        if a.offset < pos:
            return None
        if a.offset > pos:
            fmt.append(f"{a.offset - pos}x")
        conv, by_type = read_arg(pk, v, f"argument {i}")
        if not by_type:
            return None
        code = _code(pk, a.size, conv, conv(v), type(v))
        if code is None:
            return None
        fmt.append(code[0])
        if code[1] is not None:
            convs.append((i, code[1]))
        pos = a.offset + a.size
    return "".join(fmt), tuple(convs), pos


class Entry:
    __slots__ = ("generation", "device", "types", "convs", "pack", "nbytes", "whole", "cdata", "call", "lib",
                 "keep", "hits")

    def __init__(self, generation, device, types, convs, fmt, nbytes, whole, cdata, lib, keep):
        self.generation = generation
        self.device = device
        self.types = types                      # None: an entry for prepacked argument buffers only
        self.convs = convs
        self.pack = struct.Struct(fmt).pack if fmt is not None else None
        self.nbytes = nbytes                    # the explicit bytes each launch brings
        self.whole = whole                      # they are the whole segment: a longer buffer is cut (as HIP does)
        self.cdata = cdata
        self.lib = lib
        self.call = lib.pyhip_engine_launch
        self.keep = keep
        self.hits = 0                           # launches published here (tests, benchmarks)

    def launch(self, args) -> bool:
        """Publish a repeat; False when it must take the runtime's full path instead."""
        if tuple(map(type, args)) != self.types:
            return False
        try:
            if self.convs:
                args = list(args)
                for i, conv in self.convs:
                    args[i] = conv(args[i])
            blob = self.pack(*args)
        except Exception:                       # a value struct (or a reader) refuses: the full path reports it
            return False
        if self.call(self.cdata, blob, len(blob)):
            self.hits += 1
            return True
        return False

    def launch_raw(self, blob: bytes) -> bool:
        """Publish a repeat whose explicit arguments come packed (``extra``, a ``void**`` kernelParams): copied
        as they are over the template; False (the full path) for a buffer of another size."""
        n = len(blob)
        if n != self.nbytes:
            if not (self.whole and n > self.nbytes):
                return False
            blob = blob[:self.nbytes]
        if not self.call(self.cdata, blob, self.nbytes):
            return False
        self.hits += 1
        return True


    def covers(self, args, raw, generation) -> bool:
        """Whether this entry would take a repeat of a launch with ``args`` (or the prepacked ``raw``): the
        runtime then keeps it instead of preparing the same entry again (a value ``struct`` refuses)."""
        if generation != self.generation:
            return False
        if raw is not None:
            return len(raw) == self.nbytes or (self.whole and len(raw) > self.nbytes)
        return tuple(map(type, args)) == self.types


def hits(function) -> int:
    """Launches of ``function`` published by its current entries."""
    return sum(e.hits for e in function.fast.values())


def prepare(function, stream, grid, block, shared: int, args, raw=None):
    """An Entry for repeats of a launch that just went through the runtime, or None when this launch cannot
    be repeated natively (arguments of a kind read per value, a stream without the native launch grant, no
    native engine).  ``raw``: the launch's prepacked explicit arguments (an entry for buffers of that size);
    otherwise ``args``, whose types the entry then packs."""
    packer = function.packer
    if packer.size > MAX_KERNARG:
        return None
    if raw is not None:
        pos = min(len(raw), packer.size)    # the runtime copies at most the segment
        if not packer.explicit_end <= pos <= packer.hidden_start:   # a longer buffer brings its own hidden arguments
            return None
        fmt, convs, types = None, (), None
    else:
        p = plan(packer, args)
        if p is None:
            return None
        fmt, convs, pos = p
        types = tuple(type(v) for v in args)
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
    packet = KernelDispatchPacket(dims, tuple(block), items, stream.device.private_segment_size(kernel),
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
    return Entry(generation, dev.index, types, convs, fmt, pos, pos == packer.size, e, m.lib, (fs, stream))
