"""The state of a batch of waves, stepped together as numpy arrays.

``vgpr[r, w, lane]`` (uint32; on gfx90a/gfx94x the AGPRs follow the arch VGPRs at ``accum_offset``),
``sgpr[w, i]`` in the source-operand index space (0-101 SGPRs, 102/103 flat_scratch, 104/105
xnack_mask, 106/107 VCC, 108-123 TTMP, 124 M0, 126/127 EXEC), ``scc[w]``, ``pc[w]``.

The wave size (``lanes``) is a property of the batch: 64 on GFX9; 32 or 64 on RDNA (the descriptor's
wave32 bit).  A wave32 lane mask (EXEC, VCC, a compare result, a carry) is one 32-bit SGPR: EXEC_LO, VCC_LO
or the named register alone; the register after it is neither read nor written.
"""
from __future__ import annotations

import numpy as np

LANES = 64
VCC, M0, EXEC, FLAT_SCRATCH, XNACK = 106, 124, 126, 102, 104
_BITS = np.arange(LANES, dtype=np.uint64)


def mask_from_pair(lo: np.ndarray, hi: np.ndarray | None) -> np.ndarray:
    """Two uint32 halves per wave → bool lane masks (n, 64) (little-endian bit order: lane i = bit i);
    ``hi`` None: one word per wave → (n, 32) (wave32)."""
    words = np.empty((len(lo), 1 if hi is None else 2), dtype=np.uint32)
    words[:, 0] = lo
    if hi is not None:
        words[:, 1] = hi
    return np.unpackbits(words.view(np.uint8), axis=1, bitorder="little").view(bool)


def pair_from_mask(mask: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
    """bool lane masks → (lo, hi) uint32 words per wave (hi None for 32 lanes)."""
    words = np.packbits(mask, axis=1, bitorder="little").view(np.uint32)
    return words[:, 0], (words[:, 1] if words.shape[1] > 1 else None)


class WaveState:
    def __init__(self, n_waves: int, n_vgprs: int, n_groups: int, lds_bytes: int, private_bytes: int,
                 lanes: int = LANES, lds_alloc: int | None = None):
        self.n = n_waves
        self.lanes = lanes
        self.wave32 = lanes == 32
        self.vgpr = np.zeros((max(n_vgprs, 1), n_waves, lanes), dtype=np.uint32)
        # indexed [wave, register] but stored register-major: one register of all waves is contiguous
        # (scalar ops and the EXEC checks read registers across waves)
        self.sgpr = np.zeros((128, n_waves), dtype=np.uint32).T
        self.scc = np.zeros(n_waves, dtype=np.uint32)
        self.pc = np.zeros(n_waves, dtype=np.int64)
        self.done = np.zeros(n_waves, dtype=bool)
        self.at_barrier = np.zeros(n_waves, dtype=bool)
        self.at_gws = np.zeros(n_waves, dtype=bool)          # parked on a global wave sync resource
        self.gws = None                                      # GWS resources (semantics/gws.py)
        self.group = np.zeros(n_waves, dtype=np.int64)        # batch-local workgroup index of each wave
        self.group_ids = np.zeros((n_groups, 3), dtype=np.int64)
        self.wave_in_group = np.zeros(n_waves, dtype=np.int64)
        # lds_size: the group segment; lds_alloc: the LDS the hardware allocates for it (engine.lds_allocation,
        # by default the group segment): accesses beyond it read 0 / are dropped (semantics/ds.py lds_keep)
        self.lds_alloc = lds_bytes if lds_alloc is None else max(lds_alloc, lds_bytes)
        self.lds = np.zeros((n_groups, max((self.lds_alloc + 3) // 4 * 4, 4)), dtype=np.uint8)
        self.lds_size = lds_bytes
        self.private_bytes = private_bytes
        self.private = np.zeros((n_waves, lanes, private_bytes), dtype=np.uint8) if private_bytes else None
        self.mode = 0
        self.trap_sts = 0
        self._exec_cache = None
        self.shadow = None          # a check's per-batch state (pyhip/sanitizer racecheck), reset with the batch

    def reset(self, sgpr: bool = True) -> None:
        """Reuse for the next batch of the same shape.  VGPRs keep what the previous waves left (as on
        hardware, where a new wave's VGPRs are undefined); everything else starts from zero (the SGPRs
        too unless the caller overwrites them all)."""
        if sgpr:
            self.sgpr.fill(0)
        self.scc.fill(0)
        self.pc.fill(0)
        self.done.fill(False)
        self.at_barrier.fill(False)
        self.at_gws.fill(False)
        self.gws = None
        self.lds.fill(0)
        if self.private is not None:
            self.private.fill(0)
        self.mode = 0
        self.trap_sts = 0
        self._exec_cache = None
        self.shadow = None          # a check's per-batch state (pyhip/sanitizer racecheck), reset with the batch

    def exec_mask(self, w) -> np.ndarray:
        """EXEC as bool lanes; recomputed only when some wave's EXEC changed since the last call."""
        if self.wave32:
            key = self.sgpr[:, EXEC].tobytes()
        else:
            key = self.sgpr[:, EXEC].tobytes() + self.sgpr[:, EXEC + 1].tobytes()
        c = self._exec_cache
        if c is None or c[0] != key:
            c = self._exec_cache = (key, self.sgpr_mask(slice(None), EXEC))
        return c[1][w]

    def vcc_mask(self, w) -> np.ndarray:
        return self.sgpr_mask(w, VCC)

    def sgpr_mask(self, w, r: int) -> np.ndarray:
        """The lane mask held in SGPR ``r`` (and ``r + 1`` on wave64)."""
        return mask_from_pair(self.sgpr[w, r], None if self.wave32 else self.sgpr[w, r + 1])

    def set_sgpr_mask(self, w, r: int, mask: np.ndarray) -> None:
        lo, hi = pair_from_mask(mask)
        if r == 125 or r >= 128:
            return                  # NULL: discarded
        self.sgpr[w, r] = lo
        if hi is not None:
            self.sgpr[w, r + 1] = hi

    def mask_word(self, w, r: int) -> np.ndarray:
        """A lane-mask register as one integer per wave (uint64: EXEC/VCC/SGPR pair, or the wave32 word)."""
        lo = self.sgpr[w, r].astype(np.uint64)
        return lo if self.wave32 else lo | self.sgpr[w, r + 1].astype(np.uint64) << np.uint64(32)


def count(st: WaveState, w) -> int:
    """Number of waves selected by ``w`` (an index array, or ``slice(None)`` for all of them)."""
    return st.n if isinstance(w, slice) else len(w)


def indices(st: WaveState, w) -> np.ndarray:
    return np.arange(st.n) if isinstance(w, slice) else np.asarray(w)
