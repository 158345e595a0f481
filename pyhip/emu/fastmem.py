"""The common case of a vector memory instruction, done in as few numpy passes as possible: every lane of
every selected wave active, dword-sized data, addresses 4-byte aligned and all inside one arena allocation.

``global_offsets`` returns word indices into the arena (int64, (waves, 64)) after a bounds check on the
extremes (min/max of the 32-bit address halves), or None when the access is not of that shape — then the
caller takes the general path, which checks every lane and reports faults precisely.  No fault is ever
raised from here.
"""
from __future__ import annotations

import numpy as np

I64, U32 = np.int64, np.uint32
OFF = 0x7F


def address_parts(inst):
    """``(vaddr register, 64-bit vaddr?, saddr register or None, offset)`` for GLOBAL/FLAT, or None."""
    f = inst.fields
    if inst.encoding == "GLOBAL":
        sa = f["saddr"]
        return (f["addr"], sa == OFF, None if sa == OFF else sa, f.get("offset", 0))
    if inst.encoding == "FLAT":
        return (f["addr"], True, None, f.get("offset", 0))
    return None


def global_offsets(memory, st, w, parts, size: int):
    vr, wide, sa, off = parts
    lo = st.vgpr[vr, w]
    if wide:
        hi = st.vgpr[vr + 1, w]
        h = int(hi.min())
        if h != int(hi.max()):
            return None
        base = h << 32
    else:
        s_lo, s_hi = st.sgpr[w, sa], st.sgpr[w, sa + 1]
        b = int(s_lo.min())
        if b != int(s_lo.max()) or int(s_hi.min()) != int(s_hi.max()):
            return None
        base = int(s_hi[0]) << 32 | b if len(s_hi) else 0
    const = base + off - memory.base
    lo_min, lo_max = int(lo.min()), int(lo.max())
    n = lo.size
    contiguous = lo_max - lo_min == (n - 1) * size and n <= len(_RAMP) and \
        (lo - U32(lo_min) == _ramp(size, n).reshape(lo.shape)).all()
    if contiguous:              # lane-consecutive (coalesced): a slice instead of a gather
        if (const + lo_min) & 3:
            return None
    elif const & 3 or int(np.bitwise_or.reduce(lo, axis=None)) & 3:
        return None
    start, end = memory.base + const + lo_min, memory.base + const + lo_max + size
    starts, ends, ext, _ = memory._index
    i = int(np.searchsorted(starts, np.uint64(start), side="right")) - 1 if len(starts) else -1
    if i < 0 or end > int(ends[i]) or ext[i] or start < int(starts[i]):
        return None
    if contiguous:
        return (const + lo_min) >> 2
    idx = (lo >> U32(2)).astype(I64)
    idx += const >> 2
    return idx


_RAMPS: dict = {}


def _ramp(size: int, n: int) -> np.ndarray:
    r = _RAMPS.get(size)
    if r is None:
        r = _RAMPS[size] = _RAMP * U32(size)
    return r[:n]


_RAMP = np.arange(1 << 16, dtype=U32)


def load(memory, st, w, parts, dreg: int, nwords: int) -> bool:
    idx = global_offsets(memory, st, w, parts, 4 * nwords)
    if idx is None:
        return False
    words = memory.arena.view(U32)
    if isinstance(idx, int):
        shape = st.vgpr[dreg, w].shape
        data = words[idx:idx + shape[0] * shape[1] * nwords].reshape(shape + (nwords,))
        for k in range(nwords):
            st.vgpr[dreg + k, w] = data[..., k]
        return True
    if nwords == 1:
        st.vgpr[dreg, w] = words[idx]
        return True
    data = words[idx[..., None] + np.arange(nwords)]
    for k in range(nwords):
        st.vgpr[dreg + k, w] = data[..., k]
    return True


def store(memory, st, w, parts, sreg: int, nwords: int) -> bool:
    idx = global_offsets(memory, st, w, parts, 4 * nwords)
    if idx is None:
        return False
    words = memory.arena.view(U32)
    if isinstance(idx, int):
        shape = st.vgpr[sreg, w].shape
        dst = words[idx:idx + shape[0] * shape[1] * nwords].reshape(shape + (nwords,))
        for k in range(nwords):
            dst[..., k] = st.vgpr[sreg + k, w]
        return True
    if nwords == 1:
        words[idx.reshape(-1)] = st.vgpr[sreg, w].reshape(-1)     # later lanes win, as in hardware order
        return True
    data = np.stack([st.vgpr[sreg + k, w] for k in range(nwords)], axis=-1)
    words[(idx[..., None] + np.arange(nwords)).reshape(-1)] = data.reshape(-1)
    return True
