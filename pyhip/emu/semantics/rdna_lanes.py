"""RDNA's M0-relative VGPR moves (v_movrels/movreld/movrelsd/movrelsd_2, v_swaprel).  The other RDNA
lane-crossing and dual-issue operations (VOPD, v_permlane16/x16/64) have no numpy code here: both engines
generate them from their descriptions (pyhip/emu/spec/vlanes.py)."""
from __future__ import annotations

import numpy as np

from ..operands import vreader
from ..state import M0
from .registry import register


# ---- M0-relative VGPR moves ------------------------------------------------------------------------------------------
def _movrel(kind):
    """v_movrels: D = VGPR[S0 + M0]; v_movreld: VGPR[D + M0] = S0; v_movrelsd: VGPR[D + M0] = VGPR[S0 + M0];
    v_movrelsd_2: VGPR[D + M0[25:16]] = VGPR[S0 + M0[9:0]]; v_swaprel: swap VGPR[D + M0[25:16]] and
    VGPR[S0 + M0[9:0]] (M0 per wave; active lanes only)."""
    def factory(inst, K):
        f = inst.fields
        s, d = f["src0"], f["vdst"]
        if kind != "movreld" and s < 256:
            raise NotImplementedError(f"{inst.name} needs a VGPR source")
        s -= 256 if s >= 256 else 0
        value = vreader(f["src0"], inst.literal) if kind == "movreld" else None

        def run(st, w):
            m = st.exec_mask(w)
            m0 = st.sgpr[w, M0].astype(np.int64)
            nreg = st.vgpr.shape[0]
            if kind in ("movrelsd_2", "swaprel"):
                so, do = m0 & 0x3FF, m0 >> 16 & 0x3FF
            else:
                so = do = m0
            waves = np.arange(st.n)[w]
            for k, wave in enumerate(np.atleast_1d(waves)):
                sr, dr = s + int(so[k]), d + int(do[k])
                if kind != "movreld" and sr >= nreg or kind != "movrels" and dr >= nreg:
                    from ..memory import GPUFault
                    raise GPUFault(f"{inst.name}: VGPR index beyond the wave's registers", batch_wave=k)
                mk = m[k]
                if kind == "movrels":
                    st.vgpr[d, wave] = np.where(mk, st.vgpr[sr, wave], st.vgpr[d, wave])
                elif kind == "movreld":
                    st.vgpr[dr, wave] = np.where(mk, value(st, [wave])[0], st.vgpr[dr, wave])
                elif kind == "swaprel":
                    a, b = st.vgpr[sr, wave].copy(), st.vgpr[dr, wave].copy()
                    st.vgpr[dr, wave] = np.where(mk, a, b)
                    st.vgpr[sr, wave] = np.where(mk, b, a)
                else:
                    st.vgpr[dr, wave] = np.where(mk, st.vgpr[sr, wave], st.vgpr[dr, wave])
        return run
    return factory


for _k in ("movrels", "movreld", "movrelsd", "movrelsd_2", "swaprel"):
    register(f"v_{_k}_b32", _movrel(_k))
