"""Repeat launches from Python with near-zero interpreter work (hipModuleLaunchKernel, ``Kernel.__call__``).

After a launch went through :meth:`Function.launch` (every check, the kernarg layout from the metadata), the
runtime prepares an :class:`Entry` for that (function, stream, grid, block, shared memory): a native launch
entry (native/aql_launch.c) holding the kernarg segment with the hidden arguments filled, the AQL packet with
the stream's counter signal, the queue, the stream's kernarg ring, and per explicit argument its offset and
how it is packed.  A repeat is one native call given

* the argument values (a kernelParams list/tuple, the Kernel call's arguments) of the *types* the entry was
  prepared with: the native launcher checks each value's type, reads and packs it as ``struct`` would with the
  code the runtime's rule gives it — how each value is read is kernargs.read_arg's rule, the one the full path
  uses: Python ints/floats/bools, numpy scalars, pointer objects (``__hip_pointer__``), int or numpy
  addresses, ctypes values (every type whose reading does not depend on the value) get a code, plus the
  reader's conversion where the value itself is not what is packed — then reserves, copies and publishes;
* or the explicit bytes prepacked (``extra``: hip-python's tuple, the C config array; a ``void**``
  kernelParams): copied as they are when they have the entry's size (:meth:`Entry.launch_raw`).

hipModuleLaunchKernel and ``Kernel.__call__`` reach the entry in that same native call (``native_hml``,
``native_kcall``: the entry lookup in ``Function.fast``, the null stream's device check, the thread's last
error); the native launcher reads numpy's integer and floating scalars and ctypes' own types itself (``_reader``:
from the value after a numpy scalar's header, from a ctypes object's buffer), every other reader is called.

Anything else — other types, a value the packing refuses (out of the code's range: the full path's ranges
are wider, and it reports the values it refuses), a reader failing, a closed queue — takes the full path,
which checks and reports exactly as before.  ``Entry.hits`` / :func:`hits` count the published repeats.

Entries ride on the stream's native launch state (:meth:`Stream.fast_state`, the protocol of the C ABI's fast
path): granted to one stream per device while no other stream has unfinished work; when another stream
submits, the grant ends and ``Device.launch_generation`` moves on, which retires every entry at once (the
native launcher compares it with the entry's).  On the
HSA backend (HsaFastLaunchState: ROCr's queues) the entry publishes as the C ABI does there: ROCr's ring and
doorbell, the counter's value word.
"""
from __future__ import annotations

import ctypes
import functools
import struct

import numpy as np

from ..aql import KernelDispatchPacket
from ..aql.native import ffi, lib
from .argreaders import _address_getter, _ct_bytes, _ct_value, _void_p, half_bytes, plain, read_arg

MAX_KERNARG = 2048
MAX_ARGS = 64

# native/aql_launch.c's codes
_CODES = {c: i + 1 for i, c in enumerate("bBhHiIqQfd")}
A_BYTES = len(_CODES) + 1
A_BUF = A_BYTES + 1                     # a ctypes value's own bytes (hip-python's ``extra`` tuple)
_INT_CODES = {1: "b", 2: "h", 4: "i", 8: "q"}

# what the native entry's slots were bound for (native/aql_launch.c's E_*)
E_RAW, E_ARGS, E_EXTRA = 0, 1, 2
# how the native launcher reads a value of ctypes' own types itself (its R_*: from the object's buffer, what
# the reader — ``.value``, ``bytes(memoryview(v))`` — gives); c_bool is read by its reader (a byte of 2 is True)
R_VALUE, R_CT_INT, R_CT_UINT, R_CT_FLOAT, R_CT_BYTES, R_NP_INT, R_NP_UINT, R_NP_FLOAT = range(8)
_CT_SIGNED = frozenset((ctypes.c_byte, ctypes.c_short, ctypes.c_int, ctypes.c_long, ctypes.c_longlong))
_CT_UNSIGNED = frozenset((ctypes.c_ubyte, ctypes.c_ushort, ctypes.c_uint, ctypes.c_ulong, ctypes.c_ulonglong))
_CT_OWN = _CT_SIGNED | _CT_UNSIGNED | {ctypes.c_float, ctypes.c_double, ctypes.c_void_p, ctypes.c_bool}
_INT_CODE_IDS = frozenset(_CODES[c] for c in "bBhHiIqQ")
_FLOAT_CODE_IDS = frozenset((_CODES["f"], _CODES["d"]))

# the native launcher and its binder (CPython builtins; cffi gives no function a Python object, so they come
# back as an address: a new reference to the (launch, bind, hml, kcall, configure) tuple); hml and kcall are
# hipModuleLaunchKernel's and Kernel.__call__'s repeats (hip/launch.py, api.py), configure sets hml up
_functions = ctypes.cast(int(ffi.cast("uintptr_t", lib.pyhip_launch_functions())), ctypes.py_object).value
if len(_functions) != 6:
    raise ImportError("pyhip._native_aql is stale (its launch functions are an older set); rebuild it with "
                      "`pip install -e .` or `python native/build_aql.py`")
_native_launch, _native_bind, native_hml, native_kcall, native_configure, _native_ctypes_layout = _functions

_HEAD = object.__basicsize__            # sizeof(PyObject): what follows is a numpy scalar's value, a ctypes b_ptr


def _numpy_inline() -> dict:
    """numpy's integer and floating scalar types whose value follows the object header (numpy's
    PyArrayScalar_VAL), checked on two values each: {type: R_NP_* code}."""
    out = {}
    for t in {np.dtype(c).type for c in "bBhHiIlLqQfd"}:
        kind = np.dtype(t).kind
        samples = (t(-5), t(77)) if kind in "if" else (t(5), t(200))
        if all(ctypes.string_at(id(x) + _HEAD, x.itemsize) == x.tobytes() for x in samples):
            out[t] = {"i": R_NP_INT, "u": R_NP_UINT, "f": R_NP_FLOAT}[kind]
    return out


def _ctypes_bptr() -> bool:
    """Whether ctypes objects keep their buffer's address right after the header (CDataObject's b_ptr) for
    every type the native launcher reads: the native launcher then reads it instead of asking for a buffer."""
    for t in tuple(_CT_SIGNED) + tuple(_CT_UNSIGNED) + (ctypes.c_float, ctypes.c_double, ctypes.c_void_p):
        x = t()
        if ctypes.c_void_p.from_address(id(x) + _HEAD).value != ctypes.addressof(x):
            return False
    class _S(ctypes.Structure):
        _fields_ = [("a", ctypes.c_int)]
    s = _S()
    return ctypes.c_void_p.from_address(id(s) + _HEAD).value == ctypes.addressof(s)


# the runtime's thread-locals (its current device per thread), what an entry's null-stream check reads; set by
# runtime/context.py, which this module does not import
thread_locals = None

_NP_INLINE = _numpy_inline()
_native_ctypes_layout(_ctypes_bptr())


def _reader(t, conv, code: int) -> tuple[int, int]:
    """``(R_* code, size)``: how the native launcher reads a ``t`` that ``conv`` reads, packed with ``code``."""
    if conv is _ct_value:
        if t in _CT_SIGNED and code in _INT_CODE_IDS:
            return R_CT_INT, ctypes.sizeof(t)
        if t in _CT_UNSIGNED and code in _INT_CODE_IDS:
            return R_CT_UINT, ctypes.sizeof(t)
        if t in (ctypes.c_float, ctypes.c_double) and code in _FLOAT_CODE_IDS:
            return R_CT_FLOAT, ctypes.sizeof(t)
    elif conv is _void_p and t is ctypes.c_void_p and code == _CODES["Q"]:
        return R_CT_UINT, ctypes.sizeof(t)
    elif conv is _ct_bytes and code == A_BYTES and issubclass(t, (ctypes.Structure, ctypes.Union)):
        return R_CT_BYTES, ctypes.sizeof(t)
    elif conv is None and t in _NP_INLINE:
        r = _NP_INLINE[t]
        if (code in _INT_CODE_IDS) if r != R_NP_FLOAT else (code in _FLOAT_CODE_IDS):
            return r, np.dtype(t).itemsize
    return R_VALUE, 0


def _code(pk, size: int, conv, value, t):
    """How one explicit argument read by ``conv`` (kernargs.read_arg) from a ``t`` is packed: ``(struct code,
    the conversion to apply first or None when the code reads a ``t`` as the runtime does)``.  Within the
    ranges the code accepts, its bytes are encode_arg's; outside them the launch is refused and the full path
    runs.  None when the slot has no such code."""
    direct = conv in (int, float) and plain(t)
    if pk.kind == "pointer":
        return ("Q", None if direct else conv) if size == 8 else None
    if pk.kind in ("int", "float"):
        if not pk.fmt or struct.calcsize(pk.fmt) != size:
            return None
        if pk.fmt == "<e":                  # numpy's float16 rounding, as the runtime encodes it
            return "s", (lambda v, c=conv: half_bytes(c(v)))
        return pk.fmt[1:], None if direct else conv
    if type(value) is int and size in _INT_CODES:
        return _INT_CODES[size], None if direct else conv
    if type(value) is float and size in (4, 8):
        return ("f" if size == 4 else "d"), None if direct else conv
    if type(value) is bytes and len(value) == size:     # by_type: every value of t has this size
        return "s", conv
    return None


def plan(packer, args):
    """``(slots, explicit bytes)`` packing arguments of the types of ``args`` (which the runtime just accepted)
    the way kernargs.encode_arg does — a slot is ``(offset, size, code, conversion or None, R_* reader, its
    size)`` — or None when a
    type is read per value."""
    if len(args) != len(packer.explicit) or len(args) > MAX_ARGS:
        return None
    slots, pos = [], 0
    for i, (a, pk, v) in enumerate(zip(packer.explicit, packer.kinds, args)):
        if a.offset < pos:
            return None
        conv, by_type = read_arg(pk, v, f"argument {i}")
        if not by_type:
            return None
        code = _code(pk, a.size, conv, conv(v), type(v))
        if code is None:
            return None
        cid = A_BYTES if code[0] == "s" else _CODES[code[0]]
        slots.append((a.offset, a.size, cid, code[1]) + _reader(type(v), code[1], cid))
        pos = a.offset + a.size
    return slots, pos


def _refuse(args) -> bool:
    return False


class Entry:
    __slots__ = ("generation", "device", "types", "nbytes", "whole", "cdata", "address", "launch", "keep", "extra",
                 "extra_types", "extra_keep")

    def __init__(self, generation, device, types, nbytes, whole, cdata, keep):
        self.generation = generation
        self.device = device
        self.types = types                      # None: an entry for prepacked argument buffers only
        self.nbytes = nbytes                    # the explicit bytes each launch brings
        self.whole = whole                      # they are the whole segment: a longer buffer is cut (as HIP does)
        self.cdata = cdata
        self.address = int(ffi.cast("uintptr_t", cdata))      # what native_hml / native_kcall read
        self.keep = keep
        # launch(args) -> bool: publish a repeat; False when it must take the runtime's full path instead
        self.launch = _refuse if types is None else \
            functools.partial(_native_launch, self.address)
        self.extra = self.extra_types = self.extra_keep = None      # see launch_extra

    def launch_extra(self, entries: tuple, layout) -> bool:
        """Publish a repeat given hip-python's ``extra`` tuple (ctypes values by value, anything else as an 8-byte
        address; ``layout(type)`` -> (size, struct code, conversion), hip/packed_args.py's rule) with no ctypes
        work per launch: the tuple's layout is bound into this prepacked-argument entry once per tuple of entry
        types, then the native launcher packs it (the value's bytes, or the address as ``struct`` packs "Q").
        False: the caller packs the tuple itself (a layout of another size) or takes the full path."""
        if self.extra is not None:
            if self.extra(entries):
                return True
            if tuple(map(type, entries)) == self.extra_types:
                return False                    # refused as the packing would be, or a stale entry
        if self.types is not None or not self._bind_extra(entries, layout):
            return False
        return self.extra(entries)

    def _bind_extra(self, entries, layout) -> bool:
        types = tuple(map(type, entries))
        slots, pos = [], 0
        for t in types:
            size, code, conv = layout(t)
            if conv is not None and code == "Q" and hasattr(t, "__hip_pointer__") and t is not type(None) and \
                    not issubclass(t, ctypes.c_void_p):
                # what the layout's address reading calls first for such a type (its C-level getter if it names one)
                conv = _address_getter(t) or t.__hip_pointer__
            pos += -pos % (min(size, 8) or 1)
            slots.append((pos, size, _CODES["Q"] if code == "Q" else A_BUF, conv if code == "Q" else None))
            pos += size
        if pos != self.nbytes or len(slots) > MAX_ARGS:
            return False
        e = self.cdata
        e.nargs = len(slots)
        for i, (offset, size, code, _) in enumerate(slots):
            e.arg[i].offset, e.arg[i].size, e.arg[i].code = offset, size, code
            # ctypes' own types: their bytes read by the native launcher (as ``bytes(v)`` gives them)
            ct = code == A_BUF and (types[i] in _CT_OWN or issubclass(types[i], (ctypes.Structure, ctypes.Union)))
            e.arg[i].read, e.arg[i].read_size = (R_CT_BYTES, size) if ct else (R_VALUE, 0)
        e.kind = E_EXTRA
        convs = tuple(sl[3] for sl in slots)
        address = int(ffi.cast("uintptr_t", e))
        _native_bind(address, types, convs)
        self.extra_keep = (types, convs)        # the native entry borrows them
        self.extra_types = types
        self.extra = functools.partial(_native_launch, address)
        return True

    @property
    def hits(self) -> int:
        """Launches published through this entry (tests, benchmarks)."""
        return int(self.cdata.hits)

    def launch_raw(self, blob: bytes) -> bool:
        """Publish a repeat whose explicit arguments come packed (``extra``, a ``void**`` kernelParams): copied
        as they are over the template; False (the full path) for a buffer of another size."""
        n = len(blob)
        if n != self.nbytes:
            if not (self.whole and n > self.nbytes):
                return False
            blob = blob[:self.nbytes]
        return bool(lib.pyhip_launch_publish(self.cdata, blob, self.nbytes))

    def launch_config(self, address: int) -> bool:
        """Publish a repeat whose explicit arguments are behind a C ``extra`` config array at ``address``
        (checked and read in C); False (the full path) for a malformed array or a buffer of another size."""
        return bool(lib.pyhip_launch_publish_config(self.cdata, ffi.cast("void**", address), self.whole))

    def covers(self, args, raw, generation) -> bool:
        """Whether this entry would take a repeat of a launch with ``args`` (or the prepacked ``raw``): the
        runtime then keeps it instead of preparing the same entry again (a value the packing refuses)."""
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
        slots, types = (), None
    else:
        p = plan(packer, args)
        if p is None:
            return None
        slots, pos = p
        types = tuple(type(v) for v in args)
    dev = stream.device
    generation = dev.launch_generation
    fs = stream.fast_state()
    if fs is None or packer.size > fs.SLOT:
        return None
    template = bytes(packer.pack_raw(bytes(pos), grid, block, dynamic_lds=shared))
    kernel = function.kernel
    items = tuple(g * b for g, b in zip(grid, block))
    dims = 3 if items[2] > 1 or block[2] > 1 else (2 if items[1] > 1 or block[1] > 1 else 1)
    packet = KernelDispatchPacket(dims, tuple(block), items, stream.device.private_segment_size(kernel),
                                  kernel.group_segment_fixed_size + shared, function.kernel_object, 0,
                                  fs.signal.handle).pack()
    e = ffi.new("pyhip_launch_entry*")
    e.nargs = len(slots)
    for i, (offset, size, code, _, read, read_size) in enumerate(slots):
        e.arg[i].offset, e.arg[i].size, e.arg[i].code = offset, size, code
        e.arg[i].read, e.arg[i].read_size = read, read_size
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
    e.generation_word = dev.generation_word.u64(0)
    e.generation = generation
    # ROCr's queue and signal (HSA backend): a fault there moves the generation before any waiter hears of it
    # (HsaBackend.lose_queues, Device.drop_native_launches), so no repeat publishes into the dead queue
    e.foreign = int(getattr(fs, "publish_functions", None) is not None)
    # the launches' own checks (native_hml / native_kcall): the null stream's device, what the slots are for
    tls = thread_locals() if thread_locals is not None else None
    e.device = dev.index
    e.tls = ffi.cast("void*", id(tls) if tls is not None else 0)       # none: no repeat on the null stream
    e.whole = int(pos == packer.size)
    e.kind = E_RAW if types is None else E_ARGS
    convs = tuple(s[3] for s in slots)
    if types is not None:
        _native_bind(int(ffi.cast("uintptr_t", e)), types, convs)
    return Entry(generation, dev.index, types, pos, pos == packer.size, e, (fs, stream, dev, types, convs, tls))
