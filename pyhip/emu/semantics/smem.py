"""Scalar memory: s_load_dword{,x2,x4,x8,x16}, s_buffer_load_*, s_memtime/s_memrealtime."""
from __future__ import annotations

import time

import numpy as np

from ..clocks import counter_khz, ticks
from ..memory import GPUFault
from ..operands import sreader, write_s, write_s64
from ..state import count
from .registry import register
from .vmem import GLOBAL_CHECKS, check_scalar

U32, U64 = np.uint32, np.uint64


def _offsets(f):
    """(immediate byte offset, reader of the SGPR offset or None) of an SMEM instruction."""
    if f["imm"]:
        return f["offset"], (sreader(f["soffset"], None) if f["soe"] else None)
    return 0, sreader(f["offset"] & 0x7F, None)


def _words(mem, addr, word_off):
    """Each wave's ``len(word_off)`` dwords from its (dword-aligned) address as one access: in naturally aligned
    8-byte pieces where the address allows, so a 64-bit value is read whole against other host threads
    (docs/memory-model.md).  A fault is reported per dword, as the native engine reports it."""
    n = len(word_off)
    try:
        return mem.gather(addr, 4 * n).view(U32).reshape(len(addr), n)
    except GPUFault:
        return mem.gather((addr[:, None] + word_off).reshape(-1), 4).view(U32).reshape(len(addr), n)


def _load(n, buffer=False):
    def factory(inst, K):
        f = inst.fields
        base = f["sbase"]
        off_imm, soff = _offsets(f)
        d = f["sdata"]
        mem = K.memory
        word_off = np.arange(n, dtype=U64) * U64(4)

        ndst = max(0, min(n, 106 - d))

        def run(st, w):
            pair = st.sgpr[w, base:base + 2]
            if soff is None and (pair == pair[0]).all():
                # one address for every wave (kernel arguments, dispatch packet): read it once
                a = int(pair[0, 0]) | (int(pair[0, 1]) & (0xFFFF if buffer else 0xFFFFFFFF)) << 32
                a = (a + off_imm) & ~3 & 0xFFFFFFFFFFFFFFFF
                if GLOBAL_CHECKS:               # racecheck: each wave's load
                    check_scalar(st, w, np.full(count(st, w), a, dtype=U64), n)
                try:
                    vals = np.frombuffer(mem.read(a, 4 * n), dtype=U32)
                except GPUFault:        # report it as a lane access
                    vals = mem.gather(np.uint64(a) + word_off, 4).view(U32).reshape(n)
                if mem.shadow is not None:      # initcheck: each wave's load reads the bytes (as the handler)
                    mem.gather(np.full(count(st, w), a, dtype=U64), 4 * n)
                st.sgpr[w, d:d + ndst] = vals[:ndst]
                return
            lo = pair[:, 0].astype(U64)
            hi = pair[:, 1].astype(U64)
            if buffer:
                addr = lo | ((hi & U64(0xFFFF)) << U64(32))
            else:
                addr = lo | (hi << U64(32))
            addr = addr + U64(off_imm & 0xFFFFFFFFFFFFFFFF) if off_imm >= 0 else addr - U64(-off_imm)
            if soff is not None:
                addr = addr + soff(st, w).astype(U64)
            addr = addr & ~U64(3)
            if GLOBAL_CHECKS:
                check_scalar(st, w, addr, n)
            if len(addr) > 1 and addr.min() == addr.max():      # the usual case: one address for all waves
                vals = np.broadcast_to(_words(mem, addr[:1], word_off), (len(addr), n))
            else:
                vals = _words(mem, addr, word_off)
            for i in range(n):
                if d + i < 106:
                    st.sgpr[w, d + i] = vals[:, i]
        return run
    return factory


for _n in (1, 2, 4, 8, 16):
    sfx = "" if _n == 1 else f"x{_n}"
    register(f"s_load_dword{sfx}", _load(_n))
    register(f"s_buffer_load_dword{sfx}", _load(_n, buffer=True))
    register(f"s_scratch_load_dword{sfx}", _load(_n))


def _time(inst, K):
    d = inst.fields["sdata"]
    khz = counter_khz(inst.name, getattr(K.gpu, "processor", K.processor))     # shader clock or the constant real-time clock

    def run(st, w):
        t = U64(ticks(time.monotonic_ns(), khz))
        write_s64(st, w, d, np.full(st.sgpr[w, 0].shape, t, dtype=U64))
    return run


register("s_memtime", _time)
register("s_memrealtime", _time)


# ---- scalar stores and atomics (write through to memory: there is no scalar cache to write back) ------------------
def _address(inst, buffer=False):
    """→ f(st, w) per-wave byte addresses (nw,) uint64, as for the scalar loads."""
    f = inst.fields
    base = f["sbase"]
    off_imm, soff = _offsets(f)

    def addr(st, w):
        pair = st.sgpr[w, base:base + 2]
        a = pair[:, 0].astype(U64) | ((pair[:, 1] & U32(0xFFFF if buffer else 0xFFFFFFFF)).astype(U64) << U64(32))
        a = a + U64(off_imm & 0xFFFFFFFFFFFFFFFF)
        if soff is not None:
            a = a + soff(st, w).astype(U64)
        return a
    return addr


def _store(n, buffer=False):
    def factory(inst, K):
        addr = _address(inst, buffer)
        d = inst.fields["sdata"]
        mem = K.memory
        word_off = np.arange(n, dtype=U64) * U64(4)

        def run(st, w):
            a = addr(st, w) & ~U64(3)
            data = np.ascontiguousarray(st.sgpr[w, d:d + n]).view(np.uint8).reshape(-1, 4)
            if GLOBAL_CHECKS:
                check_scalar(st, w, a, n, data, "write")
            for i in range(len(a)):                      # waves store in order (later waves win)
                try:                                     # one access (whole 8-byte pieces, as _words reads)
                    mem.scatter(a[i:i + 1], data[i * n:(i + 1) * n].reshape(1, 4 * n))
                except GPUFault:                         # the fault names the first bad dword
                    mem.scatter(a[i] + word_off, data[i * n:(i + 1) * n])
        return run
    return factory


for _n in (1, 2, 4):
    sfx = "" if _n == 1 else f"x{_n}"
    register(f"s_store_dword{sfx}", _store(_n))
    register(f"s_buffer_store_dword{sfx}", _store(_n, buffer=True))
    register(f"s_scratch_store_dword{sfx}", _store(_n))


def _satomic(opname, wide, buffer=False):
    def factory(inst, K):
        from .. import atomics
        addr = _address(inst, buffer)
        f = inst.fields
        d = f["sdata"]
        returns = bool(f["glc"])
        dt, size = (U64, 8) if wide else (U32, 4)

        def reg(st, w, r):
            v = st.sgpr[w, r].astype(U64)
            return v | (st.sgpr[w, r + 1].astype(U64) << U64(32)) if wide else v.astype(U32)

        def run(st, w):
            a = addr(st, w)
            if (a & U64(size - 1)).any():
                raise GPUFault(f"misaligned scalar atomic: address not aligned to {size} bytes",
                               address=int(a[np.argmax((a & U64(size - 1)) != 0)]), access=f"{size}-byte atomic")
            val = reg(st, w, d)
            cmp = reg(st, w, d + (2 if wide else 1)) if opname == "cmpswap" else None
            if GLOBAL_CHECKS:
                check_scalar(st, w, a, size // 4, kind="atomic")
            groups = atomics.Groups(a)
            f0 = groups.first
            with atomics.LOCK:               # read, apply, write back: one step for other host threads
                init = K.memory.gather(a[f0], size).view(dt).reshape(-1)
                old, final = atomics.apply(opname, dt, init, val, cmp, groups)
                K.memory.scatter(a[f0], final.astype(dt).view(np.uint8).reshape(-1, size))
            if returns:
                if wide:
                    write_s64(st, w, d, old)
                else:
                    write_s(st, w, d, old.astype(U32))
        return run
    return factory


for _op in ("swap", "cmpswap", "add", "sub", "smin", "umin", "smax", "umax", "and", "or", "xor", "inc", "dec"):
    for _pfx, _buf in (("s_atomic", False), ("s_buffer_atomic", True)):
        register(f"{_pfx}_{_op}", _satomic(_op, False, _buf))
        register(f"{_pfx}_{_op}_x2", _satomic(_op, True, _buf))


def _cache_hint(inst, K):
    return lambda st, w: None


for _n in ("s_dcache_discard", "s_dcache_discard_x2", "s_atc_probe", "s_atc_probe_buffer"):
    register(_n, _cache_hint)
