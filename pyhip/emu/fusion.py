"""Fusing adjacent instructions of a block whose combined effect can be computed with fewer passes.

The one pattern today is the 64-bit add that compilers emit for every address computation::

    v_add_co_u32  v_lo, vcc, a, b
    v_addc_co_u32 v_hi, vcc, c, d, vcc

Run separately, the carry goes through VCC as packed bits (pack, then unpack for the second instruction).
Fused, the carry stays a lane mask; VCC receives only the final carry — the same architectural state as
running the two instructions one after the other (the intermediate VCC is overwritten by the second).
A fused pair keeps both PCs in the block (the second entry does nothing), so faults and the watchdog
see the same instruction stream.
"""
from __future__ import annotations

import numpy as np

from .operands import write_v
from .semantics.common import readers
from .state import VCC


def _plain_vop2(inst, name: str) -> bool:
    return inst.name == name and inst.encoding == "VOP2" and inst.dpp is None and inst.sdwa is None


def fuse_pair(a, b, K):
    """A function doing instructions ``a`` then ``b``, or None when they do not form a known pattern."""
    if not (_plain_vop2(a, "v_add_co_u32") and _plain_vop2(b, "v_addc_co_u32")):
        return None
    if b.fields["src0"] in (VCC, VCC + 1):
        return None                      # b reads VCC as a value: it must see a's carries as bits
    ra, rb = readers(a, 2), readers(b, 2)
    da, db = a.fields["vdst"], b.fields["vdst"]

    def run(st, w):
        m = st.exec_mask(w)
        full = m.all()
        x, y = ra[0](st, w), ra[1](st, w)
        r = x + y
        c = r < y
        write_v(st, w, da, r, m)
        if not full:
            c &= m                       # inactive lanes carried 0 through VCC
        x, y = rb[0](st, w), rb[1](st, w)    # read after the first write: b may use a's result
        r = x + y
        c2 = r < y
        cin = c.view(np.uint8)
        r += cin
        c2 |= r < cin
        write_v(st, w, db, r, m)
        st.set_sgpr_mask(w, VCC, c2 if full else c2 & m)
    return run


def nothing(st, w) -> None:
    return None
