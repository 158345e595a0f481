"""Global wave sync (``ds_gws_*``, DS with the gds bit): barriers and semaphores shared by every wave of a
dispatch.  hipcc's ``cooperative_groups::this_grid().sync()`` is a workgroup barrier, then one wave per
workgroup executes ``ds_gws_barrier`` with the number of workgroups - 1 in its VGPR operand, then
another workgroup barrier.

Resource ids: ``M0[21:16] + offset0`` (AMD Vega/CDNA ISA, "GWS").  The wave's operand value is read from
its first active lane (LLVM encodes the register in the ADDR byte).  A wave waiting on a GWS barrier or
semaphore is parked (``st.at_gws``); the engine releases parked waves when the barrier's count arrived or
the semaphore was signalled (:func:`release`), and reports a deadlock when nothing can move.  A dispatch
whose code uses GWS runs all its workgroups in one batch (every wave resident, as a cooperative launch
guarantees on hardware).
"""
from __future__ import annotations

import numpy as np

from ..state import M0, indices
from .registry import op


class GWS:
    """Per-batch GWS resources: barriers {id: [needed, waiting waves]} and semaphores {id: count}."""

    def __init__(self):
        self.barriers: dict[int, list] = {}
        self.init: dict[int, int] = {}
        self.sema: dict[int, int] = {}
        self.sema_wait: dict[int, list] = {}


def _waves(st, w, inst):
    """(wave, resource id, operand value) of each wave in ``w`` with at least one active lane."""
    f = inst.fields
    reg, off = f.get("addr", 0), f.get("offset0", 0)
    m = st.exec_mask(w)
    out = []
    for i, wave in enumerate(indices(st, w)):
        lanes = np.nonzero(m[i])[0]
        if len(lanes) == 0:
            continue
        rid = ((int(st.sgpr[wave, M0]) >> 16) & 0x3F) + off
        out.append((int(wave), rid, int(st.vgpr[reg, wave, lanes[0]])))
    return out


def _state(st) -> GWS:
    g = getattr(st, "gws", None)
    if g is None:
        g = st.gws = GWS()
    return g


@op("ds_gws_init")
def _init(inst, K):
    def run(st, w):
        g = _state(st)
        for _, rid, value in _waves(st, w, inst):
            g.init[rid] = value + 1
    return run


@op("ds_gws_barrier")
def _barrier(inst, K):
    def run(st, w):
        g = _state(st)
        for wave, rid, value in _waves(st, w, inst):
            b = g.barriers.setdefault(rid, [value + 1, []])
            b[0] = g.init.get(rid, value + 1)
            b[1].append(wave)
            st.at_gws[wave] = True
    return run


@op("ds_gws_sema_v")
def _sema_v(inst, K):
    def run(st, w):
        g = _state(st)
        for _, rid, _ in _waves(st, w, inst):
            g.sema[rid] = g.sema.get(rid, 0) + 1
    return run


@op("ds_gws_sema_br")
def _sema_br(inst, K):
    def run(st, w):
        g = _state(st)
        for _, rid, value in _waves(st, w, inst):
            g.sema[rid] = g.sema.get(rid, 0) + value
    return run


@op("ds_gws_sema_p")
def _sema_p(inst, K):
    def run(st, w):
        g = _state(st)
        for wave, rid, _ in _waves(st, w, inst):
            g.sema_wait.setdefault(rid, []).append(wave)
            st.at_gws[wave] = True
    return run


@op("ds_gws_sema_release_all")
def _release_all(inst, K):
    def run(st, w):
        g = _state(st)
        for _, rid, _ in _waves(st, w, inst):
            for wave in g.sema_wait.pop(rid, []):
                st.at_gws[wave] = False
    return run


def release(st, on_barrier=()) -> bool:
    """Unpark the waves whose GWS barrier is complete or whose semaphore can be taken; True if any moved.
    ``on_barrier``: functions told of the waves (batch indices) each completed barrier releases."""
    g = getattr(st, "gws", None)
    if g is None:
        return False
    moved = False
    for rid, (needed, waiting) in list(g.barriers.items()):
        live = [x for x in waiting if not st.done[x]]
        if len(live) >= needed:
            for x in live:
                st.at_gws[x] = False
            del g.barriers[rid]
            for fn in on_barrier:
                fn(np.asarray(live, np.int64))
            moved = True
    for rid, waiting in list(g.sema_wait.items()):
        while waiting and g.sema.get(rid, 0) > 0:
            g.sema[rid] -= 1
            st.at_gws[waiting.pop(0)] = False
            moved = True
        if not waiting:
            del g.sema_wait[rid]
    return moved


def describe(st) -> str:
    g = getattr(st, "gws", None)
    if g is None:
        return ""
    parts = [f"GWS barrier {rid}: {len(w)} of {n} waves arrived" for rid, (n, w) in g.barriers.items()]
    parts += [f"GWS semaphore {rid}: {len(w)} waves waiting" for rid, w in g.sema_wait.items()]
    return "; ".join(parts)
