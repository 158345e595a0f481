"""Kernel arguments packed from the code object's own metadata.

Explicit arguments go at their metadata offsets, checked against the kernel's parameter types (taken
from the demangled signature when the name is mangled); hidden arguments are filled from the launch
geometry: the V4 hidden block (global offsets, hostcall/printf, multigrid) and the V5/V6 256-byte
implicit block (block counts, group sizes, remainders, grid dims, dynamic LDS size, ...).
Facts: docs/code-object.md §4.4 (argument kinds), §9 (hidden arguments).  Every problem raises HipError(hipErrorInvalidValue)
before anything is queued.

The one place where a launch's explicit arguments become bytes, whatever form they come in: Python values
(:meth:`ArgPacker.pack`), a C ``void**`` kernelParams array (:meth:`ArgPacker.gather`), or an already packed
buffer behind an ``extra`` config array (:func:`read_extra`); every face (pyhip.hip, the C ABI, graphs)
calls these.
"""
from __future__ import annotations

import ctypes
import re
import struct
from dataclasses import dataclass

from ..errors import HipError, hipError_t
from ..loader.names import _split, demangle
from .argreaders import _bad, checked_pointer, half_bytes, pointer_reader, read_arg

_FLOAT_TYPES = {"float": ("f", 4), "double": ("d", 8), "_Float16": ("e", 2), "__half": ("e", 2),
                "half": ("e", 2)}
_INT_TYPES = {
    "bool": (1, False), "char": (1, True), "signed char": (1, True), "unsigned char": (1, False),
    "short": (2, True), "unsigned short": (2, False), "int": (4, True), "unsigned int": (4, False),
    "long": (8, True), "unsigned long": (8, False), "long long": (8, True),
    "unsigned long long": (8, False), "int8_t": (1, True), "uint8_t": (1, False), "int16_t": (2, True),
    "uint16_t": (2, False), "int32_t": (4, True), "uint32_t": (4, False), "int64_t": (8, True),
    "uint64_t": (8, False), "size_t": (8, False), "char16_t": (2, False), "char32_t": (4, False),
    "wchar_t": (4, True),
}


def split_params(params: str) -> list[str]:
    """``(float*, float, int)`` -> ``['float*', 'float', 'int']`` (template commas respected)."""
    inner = params.strip()[1:-1].strip()
    if not inner or inner == "void":
        return []
    out, depth, cur = [], 0, ""
    for c in inner:
        if c in "<([":
            depth += 1
        elif c in ">)]":
            depth -= 1
        if c == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += c
    out.append(cur.strip())
    return out


def param_types(kernel_name: str) -> list[str] | None:
    """C++ parameter types from a mangled kernel name; None for extern "C" kernels."""
    d = demangle(kernel_name)
    if d == kernel_name:
        return None
    return split_params(_split(d)[1])


@dataclass(frozen=True)
class ParamKind:
    kind: str            # 'pointer' | 'float' | 'int' | 'other'
    size: int
    fmt: str = ""        # struct format for scalars
    signed: bool = True
    ctype: str = ""


def classify(ctype: str | None, size: int, value_kind: str) -> ParamKind:
    if value_kind in ("global_buffer", "image", "sampler", "pipe", "queue"):
        return ParamKind("pointer", size, "<Q", False, ctype or "pointer")
    if value_kind == "dynamic_shared_pointer":
        return ParamKind("int", size, "<I", False, ctype or "lds offset")
    if ctype is not None:
        t = re.sub(r"\b(const|volatile)\b", "", ctype).strip()
        t = re.sub(r"\s+", " ", t)
        if t.endswith("*") or t.endswith("&"):
            return ParamKind("pointer", size, "<Q", False, ctype)
        if t in _FLOAT_TYPES:
            return ParamKind("float", size, "<" + _FLOAT_TYPES[t][0], True, ctype)
        if t in _INT_TYPES:
            n, signed = _INT_TYPES[t]
            fmt = {1: "b", 2: "h", 4: "i", 8: "q"}[n]
            return ParamKind("int", size, "<" + (fmt if signed else fmt.upper()), signed, ctype)
        return ParamKind("other", size, "", True, ctype)
    return ParamKind("other", size, "", True, "")


# the keys of an ``extra`` config array: {BUFFER_POINTER, buf, BUFFER_SIZE, &size, END}
HIP_LAUNCH_PARAM_BUFFER_POINTER = 0x01
HIP_LAUNCH_PARAM_BUFFER_SIZE = 0x02
HIP_LAUNCH_PARAM_END = 0x03


def read_extra(config: int, malformed: hipError_t = hipError_t.hipErrorNotInitialized) -> bytes:
    """The packed explicit arguments behind a C ``void* extra[]`` at address ``config``:
    {HIP_LAUNCH_PARAM_BUFFER_POINTER, buf, HIP_LAUNCH_PARAM_BUFFER_SIZE, &size, HIP_LAUNCH_PARAM_END}.
    A malformed array raises HipError(``malformed``): hipamd 5.2 (ihipLaunchKernel_validate) answers
    hipErrorNotInitialized; pyhip.hip has always answered hipErrorInvalidValue, as for its other bad
    arguments."""
    if not config:
        raise HipError(malformed, "extra is NULL")
    cfg = (ctypes.c_void_p * 5).from_address(config)
    if (cfg[0] or 0) != HIP_LAUNCH_PARAM_BUFFER_POINTER or (cfg[2] or 0) != HIP_LAUNCH_PARAM_BUFFER_SIZE or \
            (cfg[4] or 0) != HIP_LAUNCH_PARAM_END or not cfg[3]:
        raise HipError(malformed, "extra is not {HIP_LAUNCH_PARAM_BUFFER_POINTER, buf, HIP_LAUNCH_PARAM_BUFFER_SIZE, "
                                  "&size, HIP_LAUNCH_PARAM_END}")
    size = ctypes.c_size_t.from_address(cfg[3]).value
    if size and not cfg[1]:
        raise HipError(malformed, f"extra: a {size}-byte argument buffer at NULL")
    return ctypes.string_at(cfg[1], size) if size else b""


def _as_pointer(value, where: str) -> int:
    return checked_pointer(pointer_reader(value, where)[0](value), where)


def encode_arg(pk: ParamKind, value, where: str) -> bytes:
    v = read_arg(pk, value, where)[0](value)
    if pk.kind == "pointer":
        return struct.pack("<Q", checked_pointer(v, where))[:pk.size].ljust(pk.size, b"\0")
    if pk.kind == "float":
        if pk.fmt == "<e":
            return half_bytes(v)
        return struct.pack(pk.fmt, v)
    if pk.kind == "int":
        v = int(v)
        bits = pk.size * 8
        if not -(1 << (bits - 1)) <= v < 1 << bits:   # C's conversions: -1 is a valid unsigned
            raise _bad(f"{where}: {v} does not fit {pk.ctype or f'{pk.size}-byte integer'}")
        return (v & ((1 << bits) - 1)).to_bytes(pk.size, "little")
    if type(v) is int:
        if not -(1 << (pk.size * 8 - 1)) <= v < 1 << (pk.size * 8):
            raise _bad(f"{where}: {v} does not fit {pk.size} bytes")
        b = (v & ((1 << (pk.size * 8)) - 1)).to_bytes(pk.size, "little")
    elif type(v) is float:
        if pk.size == 4:
            b = struct.pack("<f", v)
        elif pk.size == 8:
            b = struct.pack("<d", v)
        else:
            raise _bad(f"{where}: a float does not fit a {pk.size}-byte argument")
    else:
        b = v
    if len(b) != pk.size:
        raise _bad(f"{where}: argument is {len(b)} bytes, the kernel expects {pk.size}")
    return b


class ArgPacker:
    """Precomputed per-kernel packing plan (built once per kernel, used for every launch)."""

    def __init__(self, kernel):
        meta = kernel.meta if hasattr(kernel, "meta") else kernel
        self.name = meta.name
        self.size = meta.kernarg_segment_size
        self.align = max(16, meta.kernarg_segment_align)
        self.explicit = meta.explicit_args
        self.hidden = meta.hidden_args
        self.version = getattr(getattr(kernel, "code_object", None), "version", 5)
        types = param_types(meta.name)
        if types is not None and len(types) != len(self.explicit):
            types = None          # e.g. empty structs take no kernarg slot: fall back to sizes
        self.kinds = [classify(types[i] if types else None, a.size, a.value_kind)
                      for i, a in enumerate(self.explicit)]
        self.hidden_start = min((a.offset for a in self.hidden), default=self.size)
        self.explicit_end = max((a.offset + a.size for a in self.explicit), default=0)
        self._slots = tuple((a.offset, a.size) for a in self.explicit)

    def pack(self, args, grid_blocks, block, *, dynamic_lds: int = 0, extra_hidden: dict | None = None) -> bytearray:
        if len(args) != len(self.explicit):
            raise _bad(f"kernel {demangle(self.name)} takes {len(self.explicit)} arguments, got {len(args)}")
        buf = bytearray(self.size)
        for i, (a, pk, v) in enumerate(zip(self.explicit, self.kinds, args)):
            buf[a.offset:a.offset + a.size] = encode_arg(pk, v, f"argument {i} of {demangle(self.name)}")
        self.fill_hidden(buf, grid_blocks, block, dynamic_lds, extra_hidden or {})
        return buf

    def gather(self, params: int) -> bytes:
        """The explicit arguments of a C ``void** kernelParams`` at address ``params``: one pointer per
        explicit argument, in order; each argument's bytes are copied from where its pointer points to its
        metadata offset (the padding between them is zero)."""
        if not self._slots:
            return b""
        if not params:
            raise _bad("kernel has parameters but kernelParams is NULL")
        ptrs = (ctypes.c_void_p * len(self._slots)).from_address(params)
        blob = bytearray(self.explicit_end)
        for i, ((offset, size), p) in enumerate(zip(self._slots, ptrs)):
            if not p:
                raise _bad(f"kernel argument {i} is a null pointer")
            blob[offset:offset + size] = ctypes.string_at(p, size)
        return bytes(blob)

    def from_c(self, params: int, extra: int, malformed_extra: hipError_t = hipError_t.hipErrorNotInitialized) -> bytes:
        """The explicit arguments of a module launch given ``kernelParams`` or ``extra`` (addresses, 0 for
        NULL), never both."""
        if params and extra:
            raise _bad("pass either kernelParams or extra, not both")
        if extra:
            return read_extra(extra, malformed_extra)
        return self.gather(params)

    def pack_raw(self, blob: bytes, grid_blocks, block, *, dynamic_lds: int = 0, extra_hidden=None) -> bytearray:
        """``extra`` launches: a packed explicit-argument buffer; hidden args are still filled."""
        blob = bytes(blob)
        if len(blob) < self.explicit_end:
            raise _bad(f"argument buffer of {len(blob)} bytes is smaller than the {self.explicit_end} bytes of "
                       f"explicit arguments")
        buf = bytearray(self.size)
        blob = blob[:self.size]             # like HIP: each argument is copied from its offset; padding is ignored
        buf[:len(blob)] = blob
        if len(blob) < self.size or not self.hidden:      # a full segment brings its own hidden args
            self.fill_hidden(buf, grid_blocks, block, dynamic_lds, extra_hidden or {})
        return buf

    def fill_hidden(self, buf: bytearray, grid_blocks, block, dynamic_lds: int, extra: dict) -> None:
        gx, gy, gz = grid_blocks
        bx, by, bz = block
        dims = 3                                  # HIP always launches 3-D ranges (ROCclr)
        values = {
            # grid here is in blocks; the AQL grid is blocks*block work-items, so counts are exact
            "hidden_block_count_x": gx, "hidden_block_count_y": gy, "hidden_block_count_z": gz,
            "hidden_group_size_x": bx, "hidden_group_size_y": by, "hidden_group_size_z": bz,
            "hidden_remainder_x": 0, "hidden_remainder_y": 0, "hidden_remainder_z": 0,
            "hidden_grid_dims": dims, "hidden_dynamic_lds_size": dynamic_lds,
            "hidden_global_offset_x": 0, "hidden_global_offset_y": 0, "hidden_global_offset_z": 0,
        }
        values.update(extra)
        for a in self.hidden:
            v = values.get(a.value_kind, 0)
            buf[a.offset:a.offset + a.size] = (int(v) & ((1 << (8 * a.size)) - 1)).to_bytes(a.size, "little")
