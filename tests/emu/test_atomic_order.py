"""The vectorized atomic sequencer against a plain sequential reference: lanes hitting one address apply
in lane order, every operation, 32 and 64 bits, from one address for all lanes to almost no contention."""
import numpy as np
import pytest

from pyhip.emu.atomics import Groups, apply

RNG = np.random.default_rng(99)
FLOAT = {"fadd": np.add, "fmin": np.fmin, "fmax": np.fmax}


def reference(name, dt, init, keys, v, c):
    is64 = np.dtype(dt).itemsize == 8
    it, ft = (np.int64, np.float64) if is64 else (np.int32, np.float32)
    mem = dict(zip(np.unique(keys).tolist(), init.tolist()))
    old = np.empty(len(keys), dtype=dt)
    mask = (1 << (64 if is64 else 32)) - 1
    for i, k in enumerate(keys.tolist()):
        o, x, y = mem[k], int(v[i]), int(c[i])
        old[i] = o
        if name in FLOAT:
            a, b = np.array([o], dt).view(ft), np.array([x], dt).view(ft)
            with np.errstate(all="ignore"):
                n = int(FLOAT[name](a, b).view(dt)[0])
        elif name in ("smin", "smax"):
            a, b = int(np.array([o], dt).view(it)[0]), int(np.array([x], dt).view(it)[0])
            n = (min(a, b) if name == "smin" else max(a, b)) & mask
        else:
            n = {"add": lambda: o + x, "sub": lambda: o - x, "rsub": lambda: x - o, "xor": lambda: o ^ x,
                 "and": lambda: o & x, "or": lambda: o | x, "swap": lambda: x, "umin": lambda: min(o, x),
                 "umax": lambda: max(o, x), "inc": lambda: 0 if o >= x else o + 1,
                 "dec": lambda: x if o == 0 or o > x else o - 1, "mskor": lambda: (o & ~x) | y,
                 "cmpswap": lambda: x if o == y else o}[name]() & mask
        mem[k] = n
    return old, np.array([mem[k] for k in np.unique(keys).tolist()], dtype=dt)


@pytest.mark.parametrize("name", ["add", "sub", "rsub", "xor", "and", "or", "swap", "umin", "umax", "smin", "smax",
                                  "inc", "dec", "mskor", "cmpswap", "fadd", "fmin", "fmax"])
@pytest.mark.parametrize("dt", [np.uint32, np.uint64])
def test_sequential_equivalence(name, dt):
    n = 300
    for distinct in (1, 3, 40, 290):
        keys = RNG.integers(0, distinct, n) * 8 + 0x1000
        nk = len(np.unique(keys))
        if name in FLOAT:
            ft = np.float32 if dt == np.uint32 else np.float64
            v = RNG.standard_normal(n).astype(ft).view(dt)
            v[::17] = np.array([np.nan], ft).view(dt)[0]            # fmin/fmax NaN handling
            c = v
            init = RNG.standard_normal(nk).astype(ft).view(dt)
        elif name in ("inc", "dec", "cmpswap"):
            v, c = RNG.integers(0, 12, n).astype(dt), RNG.integers(0, 3, n).astype(dt)
            init = RNG.integers(0, 3, nk).astype(dt)
        else:
            hi = np.iinfo(dt).max
            v, c = RNG.integers(0, hi, n, dtype=dt), RNG.integers(0, hi, n, dtype=dt)
            init = RNG.integers(0, hi, nk, dtype=dt)
        old, final = apply(name, dt, init, v, c, Groups(keys))
        r_old, r_final = reference(name, dt, init, keys, v, c)
        assert np.array_equal(old, r_old), (name, distinct)
        assert np.array_equal(final, r_final), (name, distinct)
