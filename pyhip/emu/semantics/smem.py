"""Scalar memory: s_load_dword{,x2,x4,x8,x16}, s_buffer_load_*, s_memtime/s_memrealtime."""
from __future__ import annotations

import time

import numpy as np

from ..memory import GPUFault
from ..operands import sreader, write_s, write_s64
from . import register

U32, U64 = np.uint32, np.uint64


def _load(n, buffer=False):
    def factory(inst, K):
        f = inst.fields
        base = f["sbase"]
        if f["imm"]:
            off_imm = f["offset"]
            soff = sreader(f["soffset"], None) if f["soe"] else None
        else:
            off_imm = 0
            soff = sreader(f["offset"] & 0x7F, None)
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
                try:
                    vals = np.frombuffer(mem.read(a, 4 * n), dtype=U32)
                except GPUFault:        # report it as a lane access
                    vals = mem.gather(np.uint64(a) + word_off, 4).view(U32).reshape(n)
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
            if len(addr) > 1 and addr.min() == addr.max():      # the usual case: one address for all waves
                vals = np.broadcast_to(mem.gather(addr[0] + word_off, 4).view(U32).reshape(1, n), (len(addr), n))
            else:
                vals = mem.gather((addr[:, None] + word_off).reshape(-1), 4).view(U32).reshape(len(addr), n)
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

    def run(st, w):
        t = U64(time.monotonic_ns() // 10)      # a 100 MHz counter, as the device reports
        write_s64(st, w, d, np.full(st.sgpr[w, 0].shape, t, dtype=U64))
    return run


register("s_memtime", _time)
register("s_memrealtime", _time)
