"""Running described instructions on the compiled engine against the numpy engine, on the same random wave
states: the check that binds the two backends of the semantics language (tests/emu/test_spec_backends.py)."""
from __future__ import annotations

import copy

import numpy as np

from ..spec.samples import random_state, snapshot
from .kernel import Unsupported


class Runner:
    """Compiles straight-line sequences of described instructions and runs them on one wave at a time."""

    def __init__(self):
        from ..native import module
        from . import KernelCache
        from .compiler import bind_runtime
        m = module()
        self.ffi, self.lib = m.ffi, m.lib
        self.kc = KernelCache(self.ffi, self.lib)
        bind_runtime(self.ffi, self.lib)
        self._fns = {}

    def function(self, insts, K, mode):
        from .compiler import compile_ir
        from .kernel import straight_line
        key = (tuple(id(i) for i in insts), K.lanes, K.family, mode)
        hit = self._fns.get(key)
        if hit is None:
            ir = straight_line(insts, K, mode, self.kc._layout())
            comp = compile_ir(ir, "seq")
            hit = self._fns[key] = (comp, self.ffi.cast("int(*)(Wave*, Ctx*)", comp.address), insts)
        return hit[1]

    def batch(self, insts, K, mode):
        """One compiled module holding a function per instruction of ``insts`` (those the compiled engine
        refuses: None); returns the callables in order (one LLVM run for many instructions)."""
        from .compiler import compile_ir
        from .kernel import straight_line
        bodies, decls, names, triple, meta = [], set(), [], None, {}
        for i, inst in enumerate(insts):
            try:
                ir = straight_line([inst], K, mode, self.kc._layout(), name=f"f{i}")
            except Unsupported:
                names.append(None)
                continue
            names.append(f"f{i}")
            for ln in ir.splitlines():
                if ln.startswith("target triple"):
                    triple = ln
                elif ln.startswith("declare "):
                    decls.add(ln)
                elif ln.startswith("!"):                # the same metadata in every function
                    meta.setdefault(ln.split("=")[0].strip(), ln)
                else:
                    bodies.append(ln)
        if triple is None:
            return [None] * len(insts)
        comp = compile_ir("\n".join([triple, *sorted(decls), *bodies, *meta.values()]),
                          next(n for n in names if n is not None))
        out = []
        for n in names:
            out.append(None if n is None else
                       self.ffi.cast("int(*)(Wave*, Ctx*)", comp.function_address(n)))
        self._fns[("batch", id(comp))] = (comp, None, insts)        # keeps the code alive
        return out

    def run_fn(self, fn, st):
        """Run the compiled function ``fn`` on every wave of the numpy WaveState ``st`` (in place)."""
        ffi = self.ffi
        nrows = st.vgpr.shape[0]
        rows = np.zeros((nrows, 64), dtype=np.uint32)
        w = ffi.new("Wave*")
        c = ffi.new("Ctx*")
        c.jit_limit = 1 << 62
        for i in range(st.n):
            rows[:, :st.lanes] = st.vgpr[:, i, :]
            w.v = ffi.cast("uint32_t*", rows.ctypes.data)
            ffi.memmove(w.s, np.ascontiguousarray(st.sgpr[i]).astype(np.uint32), 128 * 4)
            w.scc = int(st.scc[i])
            w.mode = st.mode
            fn(w, c)
            st.vgpr[:, i, :] = rows[:, :st.lanes]
            st.sgpr[i] = np.frombuffer(ffi.buffer(w.s), dtype=np.uint32)
            st.scc[i] = w.scc
        st.mode = int(w.mode)

    def run(self, insts, K, st):
        """Run ``insts`` on every wave of the numpy WaveState ``st`` (in place)."""
        self.run_fn(self.function(insts, K, st.mode), st)


def compare_one(runner, inst, K, rng, new_factory, fn=None, mode=None):
    """(ok, message) for one instruction on one random state: numpy (described) vs compiled (``fn``: its
    function from Runner.batch compiled for MODE ``mode``, else compiled here for the state's MODE)."""
    from ..memory import GPUFault
    st = random_state(rng, K)
    if mode is not None:
        st.mode = mode
    s0 = snapshot(st)
    st2 = copy.deepcopy(st)
    try:
        op = new_factory(inst, K)
        with np.errstate(all="ignore"):
            op(st, slice(None))
    except (NotImplementedError, GPUFault):
        return True, "numpy refuses"
    try:
        if fn is None:
            runner.run([inst], K, st2)
        else:
            runner.run_fn(fn, st2)
    except Unsupported as exc:
        return True, f"jit refuses: {exc}"
    if not np.array_equal(st.sgpr, st2.sgpr):
        w, r = np.argwhere(st.sgpr != st2.sgpr)[0]
        return False, f"s{r} wave {w}: numpy {st.sgpr[w, r]:08x} jit {st2.sgpr[w, r]:08x}"
    if not np.array_equal(st.scc, st2.scc) or st.mode != st2.mode:
        return False, f"scc/mode: numpy {st.scc} {st.mode:#x} jit {st2.scc} {st2.mode:#x}"
    if not np.array_equal(st.vgpr, st2.vgpr):
        r, w, lane = np.argwhere(st.vgpr != st2.vgpr)[0]
        ins = [hex(int(x)) for x in s0[0][:8, w, lane]]
        return False, (f"v{r} wave {w} lane {lane}: numpy {st.vgpr[r, w, lane]:08x} jit {st2.vgpr[r, w, lane]:08x}; "
                       f"v0-7 {ins} s0-3 {[hex(int(x)) for x in s0[1][w, :4]]} mode {s0[3]:#x} lit {inst.literal}")
    return True, ""
