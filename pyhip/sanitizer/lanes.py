"""Where a bad lane access that does not end its dispatch happened (memcheck going on after a bad access,
docs/check.md): the kernel, workgroup, wave, lane, PC and instruction, as a :class:`GPUFault` would carry them.

numpy engine: device memory tells the sanitizer of the bad lanes from inside the instruction's semantics, so
the dispatch's state is found on the stack — the engine's frame that runs the instructions (engine, wave state, selection,
instruction) and the nearest frame that selected the lanes (``widx``/``lidx``, or a ``sel`` / ``mask`` in
wave-major order), without a hook in the engine.  The native engine records its bad accesses itself
(native/engine/state.h ``check_hit``) with the code address; :func:`native_context` names them."""
from __future__ import annotations

import os
import sys

import numpy as np

_ENGINE_FILE = os.path.join("emu", "engine.py")


def _lanes_of(frame, n: int):
    """``(widx, lidx)``: the wave (position in the instruction's selection) and lane of each of the ``n``
    addresses checked, from the frame that selected them."""
    loc = frame.f_locals
    widx, lidx = loc.get("widx"), loc.get("lidx")
    if isinstance(widx, np.ndarray) and isinstance(lidx, np.ndarray) and len(widx) == n == len(lidx):
        return widx, lidx
    for name in ("sel", "mask"):            # (vmem's selections; mimg's _gather / _scatter take a mask)
        sel = loc.get(name)
        if isinstance(sel, np.ndarray) and sel.dtype == bool and sel.ndim == 2 and int(sel.sum()) == n:
            return np.nonzero(sel)
    return None


def _is_engine(frame) -> bool:
    """Whether ``frame`` is the numpy engine's loop running a block of instructions."""
    return frame.f_code.co_filename.endswith(_ENGINE_FILE) and "pcs" in frame.f_locals and "st" in frame.f_locals


def running():
    """``(engine, pc)``: the numpy engine's dispatch and the absolute PC of the instruction it runs now (None
    when not called from inside a dispatch)."""
    f = sys._getframe(1)
    while f is not None and not _is_engine(f):
        f = f.f_back
    if f is None:
        return None
    loc = f.f_locals
    return loc["self"], loc["pcs"][loc.get("i", 0)]


def numpy_context(first: int, n: int) -> dict:
    """The context of the ``first`` of ``n`` lane addresses an instruction of the numpy engine is accessing
    now (empty when not called from inside a dispatch)."""
    from ..emu.engine import describe
    from ..emu.state import indices
    f = sys._getframe(1)
    lanes = None
    while f is not None:
        if lanes is None:
            lanes = _lanes_of(f, n)
        if _is_engine(f):
            break
        f = f.f_back
    if f is None:
        return {}
    loc = f.f_locals
    eng, st, w, pcs, i = loc["self"], loc["st"], loc["w"], loc["pcs"], loc.get("i", 0)
    p = pcs[i]
    inst = eng.program.instructions.get(p)
    out = {"kernel": eng.kernel.demangled if eng.kernel is not None else None, "pc": p - eng.program.base,
           "instruction": describe(inst, eng.processor) if inst is not None else None, "program": eng.program}
    sel = indices(st, w)
    if lanes is not None:
        wave = int(sel[lanes[0][first]])
        out["lane"] = int(lanes[1][first])
    else:
        wave = int(sel[0]) if len(sel) else 0
    out["workgroup"] = [int(x) for x in st.group_ids[st.group[wave]]]
    out["wave"] = int(st.wave_in_group[wave])
    return out


def native_context(gpus, code_address: int) -> dict:
    """The program, kernel, PC and instruction of an absolute code address (a native engine's record)."""
    from ..emu.engine import describe
    for gpu in gpus:
        for p in list(gpu.programs):
            if not p.base <= code_address < p.base + p.size:
                continue
            out = {"pc": code_address - p.base, "program": p}
            inst = p.instructions.get(code_address)
            if inst is not None:
                out["instruction"] = describe(inst, gpu.target.split(":")[0])
            out["kernel"] = _kernel_at(p, code_address)
            return out
    return {"pc": code_address}


def _kernel_at(p, address: int) -> str | None:
    """The kernel whose code holds ``address``: the nearest kernel entry at or below it."""
    entries = [(p.base + k.entry_vaddr, k.demangled) for k in p.kernels.values() if p.base + k.entry_vaddr <= address]
    return max(entries)[1] if entries else None
