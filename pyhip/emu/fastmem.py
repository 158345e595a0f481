"""The common case of a vector memory instruction, done in as few numpy passes as possible: every lane of
every selected wave active, dword-sized data, addresses 4-byte aligned and all inside one arena allocation.
Each lane's naturally aligned 8-byte value (and each 8-byte half of a 16-byte one) is read or written by one
element copy, so it is whole against other host threads (docs/memory-model.md).

``global_offsets`` returns word indices into the arena (int64, (waves, 64)) after a bounds check on the
extremes (min/max of the 32-bit address halves), or None when the access is not of that shape — then the
caller takes the general path, which checks every lane and reports faults precisely.  No fault is ever
raised from here.
"""
from __future__ import annotations

import numpy as np

I64, U32, U64 = np.int64, np.uint32, np.uint64
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
    if memory.shadow is not None:           # initcheck: every lane through DeviceMemory (its shadow)
        return None
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


def _lanes(memory, idx, nwords: int):
    """The arena as words of 8 bytes (``nwords`` even and every lane's value at an 8-byte boundary: each lane's
    naturally aligned 8-byte half copied whole, docs/memory-model.md) or 4 bytes, and the lanes' word indices."""
    if nwords % 2 == 0 and memory.arena.nbytes % 8 == 0 and not np.any(np.asarray(idx) & 1):
        return memory.arena.view(U64), idx >> 1, nwords // 2
    return memory.arena.view(U32), idx, nwords


def load(memory, st, w, parts, dreg: int, nwords: int) -> bool:
    idx = global_offsets(memory, st, w, parts, 4 * nwords)
    if idx is None:
        return False
    if nwords == 1:
        words = memory.arena.view(U32)
        if isinstance(idx, int):
            shape = st.vgpr[dreg, w].shape
            st.vgpr[dreg, w] = words[idx:idx + shape[0] * shape[1]].reshape(shape)
        else:
            st.vgpr[dreg, w] = words[idx]
        return True
    # one pass over memory (every lane's value read at once), then the registers from that copy
    words, i, n = _lanes(memory, idx, nwords)
    shape = st.vgpr[dreg, w].shape
    if isinstance(i, int):
        data = words[i:i + shape[0] * shape[1] * n].copy()
    else:
        data = words[i[..., None] + np.arange(n)]
    data = data.view(U32).reshape(shape + (nwords,))
    for k in range(nwords):
        st.vgpr[dreg + k, w] = data[..., k]
    return True


def store(memory, st, w, parts, sreg: int, nwords: int) -> bool:
    idx = global_offsets(memory, st, w, parts, 4 * nwords)
    if idx is None:
        return False
    if nwords == 1:
        words = memory.arena.view(U32)
        if isinstance(idx, int):
            shape = st.vgpr[sreg, w].shape
            words[idx:idx + shape[0] * shape[1]] = st.vgpr[sreg, w].reshape(-1)
        else:
            words[idx.reshape(-1)] = st.vgpr[sreg, w].reshape(-1)     # later lanes win, as in hardware order
        return True
    # the lanes' values interleaved first, then written in one pass (every lane's value by whole words)
    data = np.stack([st.vgpr[sreg + k, w] for k in range(nwords)], axis=-1)
    words, i, n = _lanes(memory, idx, nwords)
    data = data.reshape(-1).view(words.dtype)
    if isinstance(i, int):
        words[i:i + len(data)] = data
    else:
        words[(i[..., None] + np.arange(n)).reshape(-1)] = data
    return True
