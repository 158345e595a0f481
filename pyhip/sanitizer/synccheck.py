"""synccheck: an ``s_barrier`` reached by only some waves of a workgroup — others have ended (a divergent
``__syncthreads()`` with an early ``return``), or wait at another ``s_barrier`` (``__syncthreads()`` in both
arms of a branch that differs between waves).

Execution is not changed: as on hardware, waves that ended do not count towards a barrier and any
``s_barrier`` of the workgroup's waves releases it.  The numpy engine tells the check of each barrier release
(pyhip/emu/engine.py ``BARRIER_CHECKS``); the native engine records the waves at ``s_barrier`` and
``s_endpgm`` (native/engine/state.h ``sync_check``), taken with memcheck's records.  A report is made at the
waiting wave's barrier and names the other wave and where it is (its ``s_endpgm`` or its barrier)."""
from __future__ import annotations

import numpy as np

ENDED, OTHER_BARRIER = 1, 2


def report(kernel, workgroup, wave: int, pc, instruction, other: int, how: int, other_pc) -> dict:
    """The report of ``wave`` waiting at the barrier at ``pc`` while wave ``other`` ended (at ``other_pc``) or
    waits at another barrier (at ``other_pc``)."""
    at = f" at pc 0x{other_pc:x}" if isinstance(other_pc, int) else ""
    if how == ENDED:
        kind, msg = "barrier-after-exit", f"wave {wave} waits at s_barrier; wave {other} of its workgroup ended{at} without reaching it"
    else:
        kind, msg = "divergent-barrier", f"wave {wave} waits at this s_barrier; wave {other} of its workgroup at another one{at}"
    r = {"checker": "synccheck", "kind": kind, "message": msg, "kernel": kernel, "workgroup": list(workgroup),
         "wave": wave, "pc": pc, "instruction": instruction, "other_wave": other}
    if isinstance(other_pc, int):
        r["other_pc"] = other_pc
    return r


def _barrier_pcs(program) -> dict:
    """``{pc after an s_barrier: its pc}`` (a waiting wave of the numpy engine is at the instruction after)."""
    got = getattr(program, "_sync_barriers", None)
    if got is None:
        got = {pc + i.size: pc for pc, i in program.instructions.items() if i.name == "s_barrier"}
        program._sync_barriers = got
    return got


def numpy_release(dispatch, st, ready, add) -> None:
    """Before the numpy engine releases the barriers of the ``ready`` workgroups: ``add(report)`` for each
    waiting wave whose workgroup has a wave that ended, or waits at another barrier."""
    from ..emu.engine import describe
    bad = _suspect(st, ready)
    if not bad.any():
        return
    prog = dispatch.program
    pcs = _barrier_pcs(prog)
    kernel = dispatch.kernel.demangled if dispatch.kernel is not None else None
    for g in np.nonzero(bad)[0]:
        waves = np.nonzero(st.group == g)[0]
        done = [int(w) for w in waves if st.done[w]]
        at = {int(w): pcs.get(int(st.pc[w])) for w in waves if st.at_barrier[w] and not st.done[w]}
        if not done and len(set(at.values())) < 2:
            continue
        wg = [int(x) for x in st.group_ids[g]]
        for w, pc in at.items():
            inst = prog.instructions.get(pc) if pc is not None else None
            text = describe(inst, dispatch.processor) if inst is not None else None
            pairs = [(o, ENDED, _ended_at(prog, int(st.pc[o]))) for o in done]
            pairs += [(o, OTHER_BARRIER, opc) for o, opc in at.items() if opc != pc]
            for o, how, opc in pairs:
                add(report(kernel, wg, int(st.wave_in_group[w]), pc - prog.base if pc is not None else None, text,
                           int(st.wave_in_group[o]), how, opc - prog.base if opc is not None else None))


def _suspect(st, ready) -> np.ndarray:
    """The ``ready`` workgroups (a mask) with a wave that ended, or waves waiting at different PCs."""
    in_ready = ready[st.group]
    bad = np.zeros(len(ready), dtype=bool)
    bad[st.group[in_ready & st.done]] = True
    waiting = in_ready & st.at_barrier & ~st.done
    g, pc = st.group[waiting], st.pc[waiting]
    lo = np.full(len(ready), np.iinfo(np.int64).max)
    hi = np.full(len(ready), -1)
    np.minimum.at(lo, g, pc)
    np.maximum.at(hi, g, pc)
    return bad | (ready & (hi >= 0) & (lo != hi))


def _ended_at(program, pc: int):
    """The s_endpgm a wave of the numpy engine ended at (its PC is there or just after)."""
    for p in (pc, *(q for q, i in program.instructions.items() if q + i.size == pc)):
        i = program.instructions.get(p)
        if i is not None and i.name == "s_endpgm":
            return p
    return None


def native_report(hit, ctx: dict, other_ctx: dict) -> dict:
    """The report of a native engine's synccheck record (native/engine/state.h ``sync_hit``)."""
    return report(ctx.get("kernel"), [int(x) for x in hit.wg], int(hit.wave), ctx.get("pc"), ctx.get("instruction"),
                  int(hit.size), int(hit.write), other_ctx.get("pc"))
