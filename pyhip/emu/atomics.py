"""Vectorized atomics: lanes that hit the same address apply one after another in lane order (the order
the lanes are given in), without a Python loop per lane.

:func:`apply` takes every active lane's address key, operand and compare value plus the initial memory
value of each distinct address, and returns each lane's pre-op value and each address's final value.
Integer add/sub/xor and swap use segmented prefix scans; min/max use a group-offset cumulative max;
operations with a numpy ufunc (float add, fmin/fmax, and/or, 64-bit min/max) use ``ufunc.accumulate``
per address when addresses are few and lane-rank rounds otherwise (exactly sequential, also for the
rounding of float adds); compare-and-swap runs one round per successful exchange per address (a CAS
loop's contending lanes all fail after the first success, so that is one or two rounds); the rest
(inc/dec, rsub, mskor) use lane-rank rounds.
"""
from __future__ import annotations

import threading

import numpy as np

U32, U64, I32, I64, F32, F64 = np.uint32, np.uint64, np.int32, np.int64, np.float32, np.float64

# The numpy engine's global-memory atomics read, apply and write back in three steps; dispatches of different
# queues run on different host threads, so the three steps of one instruction hold this lock (atomic against
# every other numpy-engine atomic; the native engine's are host atomics, see docs/memory-model.md).
LOCK = threading.Lock()


class Groups:
    """Lanes sorted stably by address key: ``perm`` (sorted → original), ``gid`` per sorted lane,
    ``starts``/``counts`` per distinct address, ``first`` = original index of each address's first lane."""

    def __init__(self, keys: np.ndarray):
        n = len(keys)
        self.n = n
        if n and keys.min() == keys.max():               # every lane on one address (a contended counter)
            self.perm = np.arange(n)
            self.starts = np.zeros(1, np.int64)
            self.gid = np.zeros(n, np.int64)
            self.counts = np.array([n])
            self.first = self.starts
            self.G, self.max_count = 1, n
            return
        self.perm = np.argsort(keys, kind="stable")
        sk = keys[self.perm]
        new = np.ones(n, dtype=bool)
        new[1:] = sk[1:] != sk[:-1]
        self.starts = np.nonzero(new)[0]
        self.gid = np.cumsum(new) - 1
        self.counts = np.diff(np.append(self.starts, n))
        self.first = self.perm[self.starts]
        self.G = len(self.starts)
        self.max_count = int(self.counts.max()) if n else 0


def _view(x, kind):
    return x.view({"i32": I32, "i64": I64, "f32": F32, "f64": F64}[kind]) if kind else x


# name -> (ufunc, view kind or None) for the accumulate-able operations
def _ufunc(name, is64):
    it, ft = ("i64", "f64") if is64 else ("i32", "f32")
    return {"and": (np.bitwise_and, None), "or": (np.bitwise_or, None), "umin": (np.minimum, None),
            "umax": (np.maximum, None), "smin": (np.minimum, it), "smax": (np.maximum, it),
            "fadd": (np.add, ft), "fmin": (np.fmin, ft), "fmax": (np.fmax, ft)}.get(name)


def _seq_fn(name, dt, is64):
    """Element-wise f(old, v, c) for the round-based path."""
    it, ft = (I64, F64) if is64 else (I32, F32)
    one = dt(1)
    table = {
        "inc": lambda o, v, c: np.where(o >= v, dt(0), o + one),
        "dec": lambda o, v, c: np.where((o == 0) | (o > v), v, o - one),
        "rsub": lambda o, v, c: v - o,
        "mskor": lambda o, v, c: (o & ~v) | c,
        "add": lambda o, v, c: o + v, "sub": lambda o, v, c: o - v, "xor": lambda o, v, c: o ^ v,
        "swap": lambda o, v, c: v,
        "csub": lambda o, v, c: np.where(o >= v, o - v, dt(0)),      # GFX10.3 subtract clamped at 0
        # float compare-and-store (ds_cmpst_f32/f64): -0 matches +0, NaN never matches
        "fcmpswap": lambda o, v, c: np.where(o.view(ft) == c.view(ft), v, o),
        "wrap": lambda o, v, c: np.where(o >= v, o - v, o + c),
        "pk_add_f16": lambda o, v, c: _pk_add(o, v, False),
        "pk_add_bf16": lambda o, v, c: _pk_add(o, v, True),
    }
    if name in table:
        return table[name]
    uf, kind = _ufunc(name, is64)
    return lambda o, v, c: uf(_view(o, kind), _view(v, kind)).view(dt)


def _bf16_round(x):
    """float32 → bf16 bits (nearest even; NaN stays a quiet NaN)."""
    u = x.view(U32).astype(U64)
    r = ((u + U64(0x7FFF) + ((u >> U64(16)) & U64(1))) >> U64(16)).astype(U32)
    return np.where(np.isnan(x), (x.view(U32) >> U32(16)) | U32(0x40), r) & U32(0xFFFF)


def _pk_add(o, v, bf16):
    """Two independent 16-bit float adds (f16 or bf16) in each 32-bit word."""
    out = np.zeros(o.shape, U32)
    for sh in (0, 16):
        a, b = (((x >> U32(sh)) & U32(0xFFFF)) for x in (o.astype(U32), v.astype(U32)))
        if bf16:
            r = _bf16_round((a << U32(16)).view(F32) + (b << U32(16)).view(F32))
        else:
            r = (a.astype(np.uint16).view(np.float16) + b.astype(np.uint16).view(np.float16)).view(np.uint16).astype(U32)
        out |= r << U32(sh)
    return out


def apply(name: str, dt, init: np.ndarray, vals: np.ndarray, cmps, groups: Groups):
    """→ (old per lane in the original order, final value per distinct address)."""
    g = groups
    n = g.n
    is64 = np.dtype(dt).itemsize == 8
    v = vals[g.perm].astype(dt, copy=False)
    c = cmps[g.perm].astype(dt, copy=False) if cmps is not None else None
    init = init.astype(dt, copy=True)
    ends = g.starts + g.counts - 1
    old = np.empty(n, dtype=dt)
    with np.errstate(all="ignore"):
        if name in ("add", "sub", "xor"):
            if name == "xor":
                cs = np.bitwise_xor.accumulate(v)
                excl = cs ^ v
                pref = excl ^ excl[g.starts][g.gid]
                old = init[g.gid] ^ pref
                final = old[ends] ^ v[ends]
            else:
                cs = np.cumsum(v, dtype=dt)
                excl = cs - v
                pref = excl - excl[g.starts][g.gid]
                old = init[g.gid] + pref if name == "add" else init[g.gid] - pref
                final = old[ends] + v[ends] if name == "add" else old[ends] - v[ends]
        elif name == "swap":
            old[1:] = v[:-1]
            old[g.starts] = init
            final = v[ends]
        elif name in ("umin", "umax", "smin", "smax") and not is64:
            # one cumulative max over keys whose high word orders the addresses: it restarts per address
            u = v.astype(U64)
            iu = init.astype(U64)
            if name[0] == "s":
                u ^= U64(0x80000000)
                iu ^= U64(0x80000000)
            if name.endswith("min"):
                u, iu = U64(0xFFFFFFFF) - u, U64(0xFFFFFFFF) - iu
            hi = g.gid.astype(U64) << U64(32)
            keyed = np.maximum(hi | u, (hi | iu[g.gid]))
            cm = np.maximum.accumulate(keyed) & U64(0xFFFFFFFF)
            excl = np.empty(n, dtype=U64)
            excl[1:] = cm[:-1]
            excl[g.starts] = iu
            fin = cm[ends]
            if name.endswith("min"):
                excl, fin = U64(0xFFFFFFFF) - excl, U64(0xFFFFFFFF) - fin
            if name[0] == "s":
                excl ^= U64(0x80000000)
                fin ^= U64(0x80000000)
            old = excl.astype(dt)
            final = fin.astype(dt)
        elif name == "cmpswap":
            old, final = _cmpswap(init, v, c, g, dt)
        elif _ufunc(name, is64) is not None and g.G <= g.max_count:
            uf, kind = _ufunc(name, is64)
            final = init.copy()
            for k in range(g.G):            # few addresses, many lanes each: one accumulate per address
                s, e = g.starts[k], ends[k] + 1
                seq = np.concatenate([init[k:k + 1], v[s:e]])
                acc = uf.accumulate(_view(seq, kind)).view(dt)
                old[s:e] = acc[:-1]
                final[k] = acc[-1]
        else:
            old, final = _rounds(_seq_fn(name, dt, is64), init, v, c, g, dt)
    out = np.empty(n, dtype=dt)
    out[g.perm] = old
    return out, final


def _rounds(fn, init, v, c, g, dt):
    """Round r applies the r-th lane of every address (as many rounds as the most-contended address)."""
    state = init.copy()
    old = np.empty(g.n, dtype=dt)
    order = np.argsort(g.counts, kind="stable")[::-1]      # addresses by contention, most first
    counts_sorted = g.counts[order]
    for r in range(g.max_count):
        grp = order[:np.count_nonzero(counts_sorted > r)]          # addresses with more than r lanes
        pos = g.starts[grp] + r
        old[pos] = state[grp]
        state[grp] = fn(state[grp], v[pos], c[pos] if c is not None else None)
    return old, state


def _cmpswap(init, v, c, g, dt):
    """Sequential compare-and-swap in one round per successful exchange per address."""
    n = g.n
    if g.G == 1:                             # one address: walk from success to success
        state, pos = init[0], 0
        old = np.empty(n, dtype=dt)
        while pos < n:
            hits = np.flatnonzero(c[pos:] == state)
            if not len(hits):
                old[pos:] = state
                break
            h = pos + int(hits[0])
            old[pos:h + 1] = state
            state = v[h]
            pos = h + 1
        return old, np.array([state], dtype=dt)
    state = init.copy()
    old = np.empty(n, dtype=dt)
    idx = np.arange(n)
    pos = g.starts.copy()                   # first lane not yet applied, per address
    ends = g.starts + g.counts              # exclusive
    big = np.int64(n)
    while True:
        live = pos < ends
        if not live.any():
            break
        match = (c == state[g.gid]) & (idx >= pos[g.gid])
        cand = np.where(match, idx, big)
        firstm = np.minimum.reduceat(cand, g.starts)
        stop = np.where(live, np.minimum(firstm, ends - 1), pos - 1)   # last lane applied this round
        # lanes pos..stop (inclusive) read the current state
        span = (idx >= pos[g.gid]) & (idx <= stop[g.gid])
        old[span] = state[g.gid[span]]
        hit = live & (firstm < ends)
        state[hit] = v[firstm[hit]]
        pos = np.where(live, stop + 1, pos)
        if not hit.any():
            break
    return old, state
