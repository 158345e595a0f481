"""The numpy engine's operations for every instruction the semantics description (pyhip/emu/spec) covers:
the description builds the instruction's graph (once per MODE value it runs under), the numpy backend turns
it into a function over the :class:`WaveState` of a batch of waves."""
from __future__ import annotations

import numpy as np

from ..memory import GPUFault
from ..spec import numpy_backend
from ..spec.lang import Node, Write
from ..spec.operands import DESCRIPTIONS, Build, Fault
from ..state import count


def _read_expr(copy_locs):
    def read_expr(n: Node) -> str:
        loc = n.attr
        kind = loc[0]
        if kind == "v":
            e = f"st.vgpr[{loc[1]}, w]"
        elif kind == "s":
            e = f"st.sgpr[w, {loc[1]}]"
        elif kind == "scc":
            return "(st.scc[w] != 0)"
        elif kind == "exec_lanes":
            return "st.exec_mask(w)"
        elif kind == "mask":
            return f"st.sgpr_mask(w, {loc[1]})"
        elif kind == "mode":
            return "np.full(_count(st, w), st.mode, np.uint32)"
        else:
            raise NotImplementedError(f"numpy engine: no machine state {loc}")
        return f"np.array({e})" if loc in copy_locs else e
    return read_expr


def _write_stmt(wr: Write, v: str, shape: str, m: str | None) -> str:
    loc = wr.loc
    kind = loc[0]
    if kind == "v":
        val = f"{v}[:, None]" if shape == "u" else v
        if m is None:
            return f"st.vgpr[{loc[1]}, w] = {val}"
        return f"_write_v(st, w, {loc[1]}, {val}, {m})"
    if kind == "s":
        return f"st.sgpr[w, {loc[1]}] = {v}"
    if kind == "scc":
        return f"st.scc[w] = {v}"
    if kind == "mask":
        val = f"np.broadcast_to({v}[:, None] if np.ndim({v}) == 1 else {v}, st.exec_mask(w).shape)"
        return f"st.set_sgpr_mask(w, {loc[1]}, {val})"
    if kind == "mode":
        return f"st.mode = int(np.asarray({v}).flat[0])"
    raise NotImplementedError(f"numpy engine: cannot write {loc}")


def _write_v(st, w, r, value, mask):
    if mask.all():
        st.vgpr[r, w] = value
        return
    st.vgpr[r, w] = np.where(mask, value, st.vgpr[r, w])


numpy_backend.HELPERS.update({"_write_v": _write_v, "_count": count})


def build(inst, K, mode):
    """The instruction's writes under ``mode`` (None: MODE read at run time), and whether MODE mattered."""
    b = Build(inst, K, mode)
    DESCRIPTIONS[inst.name](b)
    return b.writes, b.mode_used


def compile_numpy(inst, K, mode):
    writes, mode_used = build(inst, K, mode)
    written = []
    for w in writes:
        written.append(w.loc)
        if w.loc[0] == "mask":               # a mask write changes the SGPR(s) under it
            written += [("s", w.loc[1]), ("s", w.loc[1] + 1)]
        elif w.loc[0] == "s" and w.loc[1] in (126, 127):
            written.append(("exec_lanes",))
    copy_locs = set(written) if len(writes) > 1 else set()
    fn = numpy_backend.compile_function(writes, _read_expr(copy_locs), _write_stmt, K.lanes,
                                        name=inst.name.replace(".", "_"))
    return fn, mode_used


def factory(inst, K):
    """SEMANTICS factory for a described mnemonic: the function for the batch's MODE, built on first use."""
    try:
        first, mode_used = compile_numpy(inst, K, 0x3F0)          # also surfaces what cannot be built
    except Fault as exc:
        msg = str(exc)

        def faulting(st, w):
            raise GPUFault(msg)
        return faulting
    if not mode_used:
        return first
    versions = {0x3F0: first}

    def run(st, w):
        fn = versions.get(st.mode)
        if fn is None:
            fn = versions[st.mode] = compile_numpy(inst, K, st.mode)[0]
        fn(st, w)
    run.source = first.source
    return run


def install(semantics: dict) -> None:
    """Point SEMANTICS at the described operations (every mnemonic the description covers)."""
    for name in DESCRIPTIONS:
        semantics[name] = factory
