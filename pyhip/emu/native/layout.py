"""numpy record types with exactly the C layouts of native/engine/engine.h (offsets from cffi, which takes
them from the compiler), the native op numbering, and the source-operand descriptors."""
from __future__ import annotations

import numpy as np

from . import module

SRC_V, SRC_S, SRC_K, SRC_SCC, SRC_VCCZ, SRC_EXECZ = 0x0000, 0x4000, 0x8000, 0x8001, 0x8002, 0x8003
F_BLOCK_END, F_GLC = 1, 4

_FIELDS = {
    "NInst": [("op", "u2", 1), ("flags", "u2", 1), ("pc", "u4", 1), ("next", "i4", 1), ("target", "i4", 1),
              ("d", "u2", 1), ("sd", "u2", 1), ("s", "u2", 3), ("size", "u1", 1), ("x", "u1", 1), ("k", "u4", 3),
              ("khi", "u4", 3), ("imm", "i4", 1), ("a0", "u4", 1)],
    "Region": [("start", "u8", 1), ("end", "u8", 1), ("host", "u8", 1)],
}


def _dtype(name: str) -> np.dtype:
    ffi = module().ffi
    names, formats, offsets = [], [], []
    for field, fmt, n in _FIELDS[name]:
        names.append(field)
        formats.append((fmt, (n,)) if n > 1 else fmt)
        offsets.append(ffi.offsetof(name, field))
    return np.dtype({"names": names, "formats": formats, "offsets": offsets, "itemsize": ffi.sizeof(name)})


_CACHE: dict = {}


def dtype(name: str) -> np.dtype:
    d = _CACHE.get(name)
    if d is None:
        d = _CACHE[name] = _dtype(name)
    return d


def op_ids() -> dict[str, int]:
    """Native handler name -> op number (the C enum's order)."""
    d = _CACHE.get("ops")
    if d is None:
        m = module()
        d = _CACHE["ops"] = {m.ffi.string(m.lib.pyhip_engine_op_name(i)).decode(): i
                            for i in range(m.lib.pyhip_engine_op_count())}
    return d
