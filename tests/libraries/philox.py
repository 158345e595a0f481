"""Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC'11) in numpy: the host
reference for rocRAND's PHILOX4_32_10 generator.  Counter ``(x, y, z, w)``, key ``(k0, k1)``; rocRAND's
stream ``(seed, subsequence, offset)`` is element ``offset`` of the blocks at counters
``(c mod 2^64, subsequence)`` for c = 0, 1, ..., four 32-bit outputs per block."""
import numpy as np

M0, M1 = np.uint64(0xD2511F53), np.uint64(0xCD9E8D57)
W0, W1 = np.uint32(0x9E3779B9), np.uint32(0xBB67AE85)
MASK = np.uint64(0xFFFFFFFF)


def philox4x32_10(ctr: np.ndarray, key: tuple[int, int]) -> np.ndarray:
    """``ctr``: uint32 array of shape (n, 4) -> the (n, 4) uint32 outputs for ``key``."""
    c = [ctr[:, i].astype(np.uint64) for i in range(4)]
    k0, k1 = np.uint32(key[0]), np.uint32(key[1])
    for r in range(10):
        p0, p1 = M0 * c[0], M1 * c[2]
        hi0, lo0, hi1, lo1 = p0 >> np.uint64(32), p0 & MASK, p1 >> np.uint64(32), p1 & MASK
        c = [hi1 ^ c[1] ^ np.uint64(k0), lo1, hi0 ^ c[3] ^ np.uint64(k1), lo0]
        with np.errstate(over="ignore"):
            k0, k1 = k0 + W0, k1 + W1
    return np.stack(c, axis=1).astype(np.uint32)


def stream(seed: int, subsequence: int, offset: int, n: int) -> np.ndarray:
    """``n`` 32-bit outputs of rocRAND's Philox stream from ``offset`` on."""
    first, last = offset // 4, (offset + n + 3) // 4
    blocks = np.arange(first, last, dtype=np.uint64)
    ctr = np.zeros((len(blocks), 4), dtype=np.uint32)
    ctr[:, 0] = (blocks & MASK).astype(np.uint32)
    ctr[:, 1] = (blocks >> np.uint64(32)).astype(np.uint32)
    ctr[:, 2] = subsequence & 0xFFFFFFFF
    ctr[:, 3] = subsequence >> 32
    out = philox4x32_10(ctr, (seed & 0xFFFFFFFF, seed >> 32)).reshape(-1)
    return out[offset - 4 * first:offset - 4 * first + n]
