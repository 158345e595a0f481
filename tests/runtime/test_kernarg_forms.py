"""The one kernel-argument packer (pyhip/runtime/kernargs.py) in each form a launch brings its arguments in:
Python values (``ArgPacker.pack``), a C ``void** kernelParams`` array (``ArgPacker.gather``) and the ``extra``
config array around a caller-packed buffer (``read_extra`` + ``pack_raw``).

Random argument lists of every scalar C type, pointers and by-value structs: the kernel's metadata offsets
come from ctypes' C layout of the parameter list, the expected segment from ``struct.pack`` in native
(C-aligned) mode, the values for ``gather`` from ``struct``/ctypes one argument at a time — three
independent encodings of what hipcc's caller-side ABI gives."""
import ctypes
import random
import struct

import pytest

from pyhip.errors import HipError, hipError_t
from pyhip.loader.metadata import ArgMeta, KernelMeta
from pyhip.runtime.kernargs import (HIP_LAUNCH_PARAM_BUFFER_POINTER, HIP_LAUNCH_PARAM_BUFFER_SIZE,
                                    HIP_LAUNCH_PARAM_END, ArgPacker, param_types, read_extra)

# (Itanium mangling, demangled C type, struct code, ctypes type for the layout)
SCALARS = [
    ("b", "bool", "?", ctypes.c_bool), ("c", "char", "b", ctypes.c_byte), ("a", "signed char", "b", ctypes.c_byte),
    ("h", "unsigned char", "B", ctypes.c_ubyte), ("s", "short", "h", ctypes.c_short),
    ("t", "unsigned short", "H", ctypes.c_ushort), ("i", "int", "i", ctypes.c_int),
    ("j", "unsigned int", "I", ctypes.c_uint), ("l", "long", "q", ctypes.c_long),
    ("m", "unsigned long", "Q", ctypes.c_ulong), ("x", "long long", "q", ctypes.c_longlong),
    ("y", "unsigned long long", "Q", ctypes.c_ulonglong), ("f", "float", "f", ctypes.c_float),
    ("d", "double", "d", ctypes.c_double), ("Dh", "half", "e", ctypes.c_uint16),
]
POINTERS = [("Pf", "float*"), ("Pi", "int*"), ("Pd", "double*")]
FIELD_TYPES = [ctypes.c_char, ctypes.c_short, ctypes.c_int, ctypes.c_float, ctypes.c_double, ctypes.c_longlong]
ALIGN_CODE = {1: "b", 2: "h", 4: "i", 8: "q"}          # in native mode "0q" pads to an 8-byte boundary


def _seq_id(i: int) -> str:
    """Itanium substitution S_, S0_, S1_ … S9_, SA_ …"""
    if i == 0:
        return "S_"
    digits, n = "", i - 1
    while True:
        digits = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"[n % 36] + digits
        n //= 36
        if n == 0:
            return f"S{digits}_"


class Slot:
    """One kernel parameter: how it is mangled and laid out, and one random value for it in each encoding."""

    def __init__(self, rng: random.Random, index: int):
        r = rng.random()
        self.value_kind = "by_value"
        if r < 0.2:
            self.mangled, self.ctype = rng.choice(POINTERS)
            self.fmt, self.layout, self.value_kind = "P", ctypes.c_void_p, "global_buffer"
            v = rng.choice([0, rng.getrandbits(64), rng.getrandbits(48)])
            self.value = rng.choice([v, None if v == 0 else v, ctypes.c_void_p(v)])
            self.scalar = v
        elif r < 0.35:
            fields = [(f"f{k}", rng.choice(FIELD_TYPES)) for k in range(rng.randint(1, 4))]
            name = f"S{index}"
            self.mangled, self.ctype = f"{len(name)}{name}", name
            self.layout = type(name, (ctypes.Structure,), {"_fields_": fields})
            inst = self.layout.from_buffer_copy(bytes(rng.getrandbits(8) for _ in range(ctypes.sizeof(self.layout))))
            self.bytes = bytes(inst)
            self.fmt = f"0{ALIGN_CODE[ctypes.alignment(self.layout)]}{len(self.bytes)}s"
            self.value = rng.choice([inst, self.bytes])
            self.scalar = self.bytes
        else:
            self.mangled, self.ctype, self.fmt, self.layout = rng.choice(SCALARS)
            n = struct.calcsize(self.fmt)
            if self.fmt == "?":
                self.value = self.scalar = rng.randint(0, 1)
            elif self.fmt in "fde":
                self.value = self.scalar = rng.uniform(-1e3, 1e3)
            elif self.fmt.isupper():
                self.value = rng.choice([rng.getrandbits(8 * n), -1])     # C converts -1 to the maximum
                self.scalar = self.value & ((1 << 8 * n) - 1)
            else:
                self.value = self.scalar = rng.randint(-(1 << (8 * n - 1)), (1 << (8 * n - 1)) - 1)
        if self.fmt[-1] != "s":
            self.bytes = struct.pack("@" + self.fmt, self.scalar)


def mangle(slots) -> str:
    out, subs = ["_Z6kernel"], []
    for s in slots:
        if s.mangled.startswith("P") or s.value_kind == "by_value" and s.mangled[0].isdigit():
            if s.mangled in subs:
                out.append(_seq_id(subs.index(s.mangled)))
                continue
            subs.append(s.mangled)
        out.append(s.mangled)
    return "".join(out)


HIDDEN = [("hidden_block_count_x", 4), ("hidden_block_count_y", 4), ("hidden_block_count_z", 4),
          ("hidden_group_size_x", 2), ("hidden_group_size_y", 2), ("hidden_group_size_z", 2),
          ("hidden_dynamic_lds_size", 4)]


def kernel(slots, hidden: bool) -> KernelMeta:
    layout = type("Args", (ctypes.Structure,), {"_fields_": [(f"a{i}", s.layout) for i, s in enumerate(slots)]})
    args = [ArgMeta(getattr(layout, f"a{i}").offset, ctypes.sizeof(s.layout), s.value_kind)
            for i, s in enumerate(slots)]
    end = max((a.offset + a.size for a in args), default=0)
    if hidden:
        pos = -(-end // 8) * 8
        for kind, size in HIDDEN:
            args.append(ArgMeta(pos, size, kind))
            pos += size
        end = pos
    name = mangle(slots)
    return KernelMeta(name, name + ".kd", tuple(args), -(-end // 8) * 8, 8, 0, 0, 64, 16, 16, 256)


def reference(slots) -> bytes:
    """The explicit arguments as C lays them out, by ``struct`` alone."""
    return struct.pack("@" + "".join(s.fmt for s in slots), *(s.scalar for s in slots))


class CArgs:
    """A ``void* kernelParams[]`` and an ``extra`` config array in host memory."""

    def __init__(self, slots, blob: bytes):
        self.cells = [ctypes.create_string_buffer(s.bytes, len(s.bytes)) for s in slots]
        self.params = (ctypes.c_void_p * max(len(slots), 1))(*[ctypes.addressof(c) for c in self.cells])
        self.buf = ctypes.create_string_buffer(blob, max(len(blob), 1))
        self.size = ctypes.c_size_t(len(blob))
        self.extra = (ctypes.c_void_p * 5)(HIP_LAUNCH_PARAM_BUFFER_POINTER, ctypes.addressof(self.buf),
                                           HIP_LAUNCH_PARAM_BUFFER_SIZE, ctypes.addressof(self.size),
                                           HIP_LAUNCH_PARAM_END)

    @property
    def params_address(self) -> int:
        return ctypes.addressof(self.params)

    @property
    def extra_address(self) -> int:
        return ctypes.addressof(self.extra)


@pytest.mark.parametrize("seed", range(40))
def test_three_forms_match_struct_pack(seed):
    rng = random.Random(seed)
    slots = [Slot(rng, i) for i in range(rng.randint(0, 12))]
    k = kernel(slots, hidden=seed % 2 == 0)
    p = ArgPacker(k)
    assert param_types(k.name) == [s.ctype for s in slots]     # the typed path, not the untyped fallback
    blob = reference(slots)
    assert len(blob) == p.explicit_end
    grid, block = (rng.randint(1, 99), rng.randint(1, 9), 3), (rng.randint(1, 256), 2, 1)

    packed = bytes(p.pack([s.value for s in slots], grid, block, dynamic_lds=48))
    assert packed[:len(blob)] == blob
    c = CArgs(slots, blob)
    gathered = p.gather(c.params_address)
    assert gathered == blob
    assert p.from_c(c.params_address, 0) == blob
    extra = read_extra(c.extra_address)
    assert extra == blob and p.from_c(0, c.extra_address) == blob
    assert bytes(p.pack_raw(extra, grid, block, dynamic_lds=48)) == packed
    assert bytes(p.pack_raw(gathered, grid, block, dynamic_lds=48)) == packed
    for a in k.hidden_args:                                      # hidden arguments from the geometry
        v = int.from_bytes(packed[a.offset:a.offset + a.size], "little")
        axis = "xyz".index(a.value_kind[-1]) if a.value_kind[-2] == "_" else None
        want = {"hidden_block_count": grid, "hidden_group_size": block}.get(a.value_kind[:-2])
        assert v == (want[axis] if want else 48)
    gap = bytes(packed[len(blob):k.hidden_args[0].offset]) if k.hidden_args else bytes(packed[len(blob):])
    assert gap == bytes(len(gap))


def _ints_kernel():
    slots = [Slot.__new__(Slot) for _ in range(3)]
    for s, (m, t, f, lay) in zip(slots, [SCALARS[2], SCALARS[13], SCALARS[6]]):   # signed char, double, int
        s.mangled, s.ctype, s.fmt, s.layout, s.value_kind = m, t, f, lay, "by_value"
    return ArgPacker(kernel(slots, hidden=False))


def test_gather_refuses_null():
    p = _ints_kernel()
    with pytest.raises(HipError) as ei:
        p.gather(0)
    assert ei.value.code == hipError_t.hipErrorInvalidValue and "kernelParams is NULL" in str(ei.value)
    cell = ctypes.c_double(1.0)
    params = (ctypes.c_void_p * 3)(ctypes.addressof(cell), ctypes.addressof(cell), None)
    with pytest.raises(HipError) as ei:
        p.gather(ctypes.addressof(params))
    assert ei.value.code == hipError_t.hipErrorInvalidValue and "argument 2" in str(ei.value)
    empty = ArgPacker(kernel([], hidden=True))
    assert empty.gather(0) == b"" and empty.from_c(0, 0) == b""


def test_both_forms_at_once_refused():
    p = _ints_kernel()
    c = CArgs([], b"\0" * 24)
    with pytest.raises(HipError) as ei:
        p.from_c(c.params_address, c.extra_address)
    assert ei.value.code == hipError_t.hipErrorInvalidValue


@pytest.mark.parametrize("code", [hipError_t.hipErrorNotInitialized, hipError_t.hipErrorInvalidValue])
def test_malformed_extra(code):
    c = CArgs([], b"\1" * 24)
    for i, bad in [(0, 7), (2, 1), (4, 0), (3, None)]:
        cfg = (ctypes.c_void_p * 5).from_buffer_copy(c.extra)
        cfg[i] = bad
        with pytest.raises(HipError) as ei:
            read_extra(ctypes.addressof(cfg), code)
        assert ei.value.code == code, (i, bad)
    with pytest.raises(HipError) as ei:
        read_extra(0, code)
    assert ei.value.code == code
    cfg = (ctypes.c_void_p * 5).from_buffer_copy(c.extra)
    cfg[1] = None                                                 # 24 bytes at NULL
    with pytest.raises(HipError) as ei:
        read_extra(ctypes.addressof(cfg), code)
    assert ei.value.code == code
    zero = ctypes.c_size_t(0)
    cfg[3] = ctypes.addressof(zero)                               # an empty buffer may be NULL
    assert read_extra(ctypes.addressof(cfg), code) == b""
    with pytest.raises(HipError) as ei:                           # the C face's default: hipamd 5.2's answer
        read_extra(ctypes.addressof((ctypes.c_void_p * 5)()))
    assert ei.value.code == hipError_t.hipErrorNotInitialized


def test_value_errors():
    p = _ints_kernel()
    cases = [[1, 2.0], [1, 2.0, 3, 4], [256, 2.0, 3], [-129, 2.0, 3], [1, 2.0, 1.5], [1, "x", 3], [1, 2.0, 1 << 32]]
    for args in cases:
        with pytest.raises(HipError) as ei:
            p.pack(args, (1, 1, 1), (1, 1, 1))
        assert ei.value.code == hipError_t.hipErrorInvalidValue, args
    with pytest.raises(HipError) as ei:                           # a buffer shorter than the explicit args
        p.pack_raw(b"\0" * (p.explicit_end - 1), (1, 1, 1), (1, 1, 1))
    assert ei.value.code == hipError_t.hipErrorInvalidValue
    s = Slot.__new__(Slot)
    s.mangled, s.ctype, s.value_kind = "2S0", "S0", "by_value"
    s.layout = type("S0", (ctypes.Structure,), {"_fields_": [("a", ctypes.c_int), ("b", ctypes.c_double)]})
    q = ArgPacker(kernel([s], hidden=False))
    assert bytes(q.pack([bytes(range(16))], (1, 1, 1), (1, 1, 1))) == bytes(range(16))
    for bad in (bytes(15), bytes(17)):                            # a struct of the wrong size
        with pytest.raises(HipError) as ei:
            q.pack([bad], (1, 1, 1), (1, 1, 1))
        assert ei.value.code == hipError_t.hipErrorInvalidValue
