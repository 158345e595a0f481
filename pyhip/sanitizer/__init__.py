"""pyhip's sanitizer: checks only an emulator can make, on every lane's every access (docs/check.md).

Three ways in: ``pyhip exec --check CHECKS PROGRAM`` (a hipcc program), ``PYHIP_CHECK=CHECKS`` (any process
that imports pyhip) and ``with pyhip.check(CHECKS) as session:`` (Python).  CHECKS is a comma list of
:data:`CHECKS` or ``all``.  Each finding is a report (a dict: checker, kind, kernel, workgroup, wave, lane,
pc, instruction, address, allocation, source file:line when the code object has DWARF line tables),
de-duplicated per kernel and PC, printed to stderr when first seen and written to the JSON-lines log.
"""
from __future__ import annotations

import atexit
import contextlib
import json
import os
import sys
import threading
import weakref

import numpy as np

from ..errors import HipError, LoaderError, hipError_t
from . import devheap, globalrace, initcheck, leaks, memcheck, native, racecheck, synccheck
from .origin import where

CHECKS = ("memcheck", "leaks", "synccheck", "initcheck", "racecheck")   # the checks that exist (docs/check.md)
_ORIGINS = ("memcheck", "leaks")        # the checks that record where allocations are made and freed


def parse(spec: str) -> tuple[str, ...]:
    """``"all"`` or a comma list of check names -> the checks, in :data:`CHECKS` order."""
    names = {s.strip() for s in spec.split(",") if s.strip()}
    if not names:
        raise HipError(hipError_t.hipErrorInvalidValue, "no check named (use a comma list or 'all')")
    if "all" in names:
        return CHECKS
    unknown = names - set(CHECKS)
    if unknown:
        raise HipError(hipError_t.hipErrorInvalidValue,
                       f"unknown check {', '.join(sorted(unknown))} (available: {', '.join(CHECKS)}, all)")
    return tuple(c for c in CHECKS if c in names)


def _hex(v):
    return f"0x{v:x}" if isinstance(v, int) else v


def format_report(r: dict, repeats: int = 1) -> str:
    """A report as the lines printed to stderr."""
    head = f"pyhip check: {r['checker']}: {r['kind']}: {r['message']}"
    lines = [head]
    where_ = ", ".join(f"{k} {r[k] if k != 'pc' else _hex(r[k])}" for k in ("kernel", "workgroup", "wave", "lane", "pc")
                       if r.get(k) is not None)
    if where_:
        lines.append(f"    at {where_}")
    if r.get("source"):
        lines.append(f"    source {r['source']}")
    if r.get("instruction"):
        lines.append(f"    instruction {r['instruction']}")
    if r.get("other_instruction"):           # racecheck: the other access
        lines.append(f"    other access: wave {r.get('other_wave')}, lane {r.get('other_lane')}, pc {_hex(r.get('other_pc'))}: "
                     f"{r['other_instruction']}" + (f" ({r['other_source']})" if r.get("other_source") else ""))
    if r.get("address") is not None:
        lines.append(f"    address {_hex(r['address'])}" + (f" ({r['access']})" if r.get("access") else ""))
    a = r.get("allocation")
    if a:
        lines.append(f"    allocation [0x{a['start']:x}, +{a['size']}) ({a['kind']})")
        for k in ("allocated", "freed"):
            if a.get(k):
                lines.append(f"      {k} by {a[k]}")
    if repeats > 1:
        lines.append(f"    (seen {repeats} times)")
    return "\n".join(lines)


class Session:
    """The checks that are on, and what they found.  ``reports``: the distinct reports (first occurrence);
    ``count(report)``: how many times each was seen."""

    def __init__(self, checks: tuple[str, ...], log: str | None = None, echo: bool = True):
        self.checks = checks
        self.reports: list[dict] = []
        self._seen: dict[tuple, int] = {}
        self._lock = threading.Lock()
        self._log = open(log, "a", encoding="utf-8") if log else None      # noqa: SIM115 (the session's)
        self.echo = echo
        self.lost = 0           # native engine: bad lanes that found no record slot (counted, not named)

    @staticmethod
    def key(r: dict) -> tuple:
        """Reports at one instruction are one (a leak: one per allocation; a race: one per pair of instructions)."""
        return (r["checker"], r["kind"], r.get("kernel"), r.get("pc") if r.get("pc") is not None else r.get("address"),
                r.get("other_pc") if r["checker"] == "racecheck" else None)

    def count(self, r: dict) -> int:
        return self._seen.get(self.key(r), 0)

    def add(self, r: dict, times: int = 1) -> None:
        k = self.key(r)
        with self._lock:
            n = self._seen.get(k, 0)
            self._seen[k] = n + times
            if n:
                return
            self.reports.append(r)
            if self._log is not None:
                self._log.write(json.dumps(r, default=str) + "\n")
                self._log.flush()
        if self.echo:
            print(format_report(r), file=sys.stderr, flush=True)

    def summary(self) -> str:
        collect()
        return summarize(self.reports, [self.count(r) for r in self.reports])

    def close(self) -> None:
        if self._log is not None:
            self._log.write(json.dumps({"totals": [self.count(r) for r in self.reports]}) + "\n")
            self._log.close()
            self._log = None


def summarize(reports: list[dict], counts: list[int] | None = None) -> str:
    if not reports:
        return "pyhip check: no errors found"
    by = {}
    for r in reports:
        by[(r["checker"], r["kind"])] = by.get((r["checker"], r["kind"]), 0) + 1
    # "1 memcheck out-of-bounds"; a checker whose kind only repeats its name once: "3 leaks" (not "3 leaks leak")
    kinds = ", ".join(f"{n} {c}" if c.startswith(k) else f"{n} {c} {k}" for (c, k), n in sorted(by.items()))
    total = sum(counts) if counts else len(reports)
    line = f"pyhip check: {len(reports)} distinct error(s) found ({kinds}); {total} occurrence(s)"
    lost = leaks.total(reports)
    return line + ("\n" + lost if lost else "")


_SESSION: Session | None = None


def active() -> Session | None:
    return _SESSION


def _on_fault(gpu, fault) -> None:
    s = _SESSION
    if s is None or gpu is None or "memcheck" not in s.checks:
        return
    _report(s, gpu.memory, fault, fault.details, _program_of(gpu, fault.details.get("kernel")))


def _report(s: Session, memory, fault, details: dict, program, times: int = 1) -> None:
    """A memcheck report of ``fault`` (classified against ``memory``, or the checked memory whose arena holds the
    address: another device's) at ``details`` (kernel, wave, pc ...)."""
    if fault.address is not None:
        memory = _owner(fault.address, memory)
    got = memcheck.classify(memory, fault)
    if got is None:
        return
    kind, message, allocation = got
    r = {"checker": "memcheck", "kind": kind, "message": message}
    for k in ("kernel", "workgroup", "wave", "lane", "pc", "instruction", "address", "access"):
        v = details.get(k)
        if v is not None:
            r[k] = list(v) if isinstance(v, tuple) else v
    if allocation is not None:
        r["allocation"] = allocation
    s.add(with_source(r, program), times)


def with_source(r: dict, program) -> dict:
    """``r`` with the source file:line of its PC when ``program``'s code object has DWARF line tables."""
    if program is not None and r.get("pc") is not None:
        from .source import line_for
        src = line_for(program.code_object, r["pc"])
        if src is not None:
            r["source"] = src
    return r


def _owner(address: int, default):
    """The checked device memory whose arena holds ``address`` (``default`` if none does)."""
    return next((m for m in _CHECKER.memories if m.base <= address < m.base + len(m.arena)), default)


class _Checker:
    """What device memory tells memcheck (pyhip/emu/memory.py ``set_memcheck``): lanes that accessed bytes
    outside the exact allocations and went on as the GPU would (numpy engine); the memories it is on for
    (the native engine is told their arenas, and records its own bad lanes: :func:`collect` takes them)."""

    def __init__(self):
        self.memories: weakref.WeakSet = weakref.WeakSet()

    def bad_access(self, memory, addrs, size: int, bad, write: bool) -> None:
        from ..emu.memory import GPUFault
        s = _SESSION
        if s is None:
            return
        lanes, first, ctx = _bad_lanes(addrs, bad)
        ctx.update(address=int(addrs[first]), access=f"{size} bytes, {'write' if write else 'read'}")
        fault = GPUFault("memory access outside any allocation", address=int(addrs[first]))
        _report(s, memory, fault, ctx, ctx.get("program"), len(lanes))

    def checked(self, memory) -> None:
        self.memories.add(memory)
        if memory.exact:
            native.arm(True, [m for m in self.memories if m.exact])

    def freeing(self, memory) -> None:
        collect()


_CHECKER = _Checker()


def collect() -> None:
    """The native engine's records of bad lanes since the last call, as reports of the session."""
    from ..emu.memory import GPUFault
    from .lanes import native_context
    hits, lost = native.take()
    s = _SESSION
    if s is None or not hits:
        return
    from ..emu.device import GPUS
    memories = list(_CHECKER.memories)
    gpus = list(GPUS)
    for h in hits:
        if h.pad == native.CHECK_SYNC:
            if "synccheck" in s.checks:
                ctx = native_context(gpus, int(h.code))
                s.add(with_source(synccheck.native_report(h, ctx, native_context(gpus, int(h.address))),
                                  ctx.get("program")), int(h.count))
            continue
        ctx = native_context(gpus, int(h.code))
        ctx.update(workgroup=[int(x) for x in h.wg], wave=int(h.wave), lane=int(h.lane))
        if h.pad == native.CHECK_INIT:
            mem = next((g.memory for g in gpus if g.memory.base <= h.address < g.memory.base + len(g.memory.arena)),
                       None)
            if "initcheck" in s.checks and mem is not None:
                if h.lane < 0:                  # (a scalar access has no lane)
                    del ctx["lane"]
                r = initcheck.report(mem, int(h.address), int(h.size), int(h.lds_alloc), ctx)
                s.add(with_source(r, ctx.get("program")), int(h.count))
            continue
        if h.pad >= native.CHECK_RACE_LDS:
            if "racecheck" in s.checks and ctx.get("program") is not None:
                _race_report(s, h, ctx)
            continue
        if h.pad == native.CHECK_LDS:
            if "memcheck" in s.checks:
                r = memcheck.lds_report(int(h.address), int(h.size), bool(h.write), int(h.lds_size),
                                        int(h.lds_alloc), ctx)
                s.add(with_source(r, ctx.get("program")), int(h.count))
            continue
        mem = _owner(int(h.address), memories[0] if memories else None)
        if mem is None:
            continue
        ctx.update(address=int(h.address), access=f"{h.size} bytes, {'write' if h.write else 'read'}")
        if h.lane < 0:                          # (a scalar access has no lane)
            del ctx["lane"]
        fault = GPUFault("memory access outside any allocation", address=int(h.address))
        _report(s, mem, fault, ctx, ctx.get("program"), int(h.count))
    if lost:
        s.lost += lost


def _on_dispatch(gpu) -> None:
    collect()


def _program_of(gpu, kernel: str | None):
    """The loaded program holding the kernel named ``kernel`` (for its line tables)."""
    if kernel is None:
        return None
    for p in list(gpu.programs):
        co = getattr(p, "code_object", None)
        if co is None:
            continue
        try:
            if any(k.demangled == kernel for k in co.kernels.values()):
                return p
        except LoaderError:            # a code object whose kernels cannot be listed: no source position
            continue
    return None


def enable(checks="all", log: str | None = None, echo: bool = True) -> Session:
    """Turn the checks on for every device (now and later) and start a new session."""
    global _SESSION
    from ..emu import device, memory
    if isinstance(checks, str):
        checks = parse(checks)
    disable()
    s = _SESSION = Session(tuple(checks), log, echo)
    if _on_fault not in device.FAULT_LISTENERS:
        device.FAULT_LISTENERS.append(_on_fault)
    if _on_dispatch not in device.DISPATCH_LISTENERS:
        device.DISPATCH_LISTENERS.append(_on_dispatch)
    memory.set_memcheck("memcheck" in s.checks, where if set(_ORIGINS) & set(s.checks) else None, _CHECKER)
    if "memcheck" in s.checks:
        from ..emu.semantics import ds
        ds.LDS_BOUNDS.append(_on_lds_bounds)
        _watch_device_heap(s)
    if "initcheck" in s.checks:
        memory.set_initcheck(_shadow)
    if "synccheck" in s.checks:
        from ..emu import engine
        engine.BARRIER_CHECKS.append(_on_barriers)
        native.sync(True)
    if "racecheck" in s.checks:
        from ..emu import engine
        from ..emu.semantics import ds
        from ..emu.semantics import vmem
        device.RACE_FLAGS = _race_flags             # the native engine's race shadows (native/engine/race.h)
        ds.LDS_CHECKS.append(_on_lds)               # (and the numpy engine's, for what runs there)
        vmem.GLOBAL_CHECKS.append(_on_global)
        engine.BARRIER_CHECKS.append(_lds_barriers)
        engine.GWS_CHECKS.append(_gws_barrier)
    return s


_HEAP: list = [None]          # the session's device-malloc heap (devheap.Heap) while memcheck is on


def _watch_device_heap(s: Session) -> None:
    """memcheck of device malloc and free (devheap.py): the numpy engine's instructions recompiled with the hooks,
    programs with device malloc kept off the native engine, global accesses checked once a block exists."""
    from ..emu import device
    from ..emu.semantics import vmem

    def report(r: dict, times: int) -> None:
        prog = r.pop("_program", None)
        s.add(with_source(r, prog), times)

    def on_global(st, w, widx, lidx, addrs, size, _data, kind):
        heap.access(st, w, widx, lidx, addrs, size, kind)

    heap = _HEAP[0] = devheap.Heap(report, lambda: vmem.GLOBAL_CHECKS.append(on_global))
    heap.on_global = on_global
    device.PC_HOOKS.append(heap.hook)
    device.NATIVE_VETOES.append(devheap.veto)
    for g in list(device.GPUS):
        g.recompile()


def _unwatch_device_heap() -> None:
    from ..emu import device
    from ..emu.semantics import vmem
    heap, _HEAP[0] = _HEAP[0], None
    if heap is None:
        return
    device.PC_HOOKS.remove(heap.hook)
    device.NATIVE_VETOES.remove(devheap.veto)
    if heap.on_global in vmem.GLOBAL_CHECKS:
        vmem.GLOBAL_CHECKS.remove(heap.on_global)
    for g in list(device.GPUS):
        g.recompile()


def _bad_lanes(addrs, bad):
    """(the bad lanes, the first of them, its numpy-engine context) of a numpy-engine access."""
    from .lanes import numpy_context
    lanes = np.nonzero(bad)[0]
    first = int(lanes[0])
    return lanes, first, numpy_context(first, len(addrs))


_SHADOWS: weakref.WeakSet = weakref.WeakSet()     # initcheck's shadows: the native engine is told of each
_RETIRED: list = []                                # shadows of sessions that ended (kept: see disable)


def _shadow(memory) -> "initcheck.Shadow":
    """initcheck's shadow of ``memory``'s arena, which the native engine then marks and reads too."""
    sh = initcheck.Shadow(memory, _on_unwritten)
    _SHADOWS.add(sh)
    native.arm_init(list(_SHADOWS))
    return sh


def _on_unwritten(memory, addrs, size: int, bad, got) -> None:
    """initcheck: lanes of a numpy-engine load that read bytes nothing wrote (``got``: per lane and byte)."""
    s = _SESSION
    if s is None:
        return
    lanes, first, ctx = _bad_lanes(addrs, bad)
    r = initcheck.report(memory, int(addrs[first]), size, int(size - got[first].sum()), ctx)
    s.add(with_source(r, ctx.get("program")), len(lanes))


RACE_MAX_INSTRUCTIONS = 1 << 21      # an access names its instruction in 21 bits (native/engine/race.h RW)


def _race_flags(nprog) -> np.ndarray | None:
    """racecheck's flags per instruction of a native program (native/engine/race.h RC_*): the plain loads that
    start a compare-and-swap loop (LDS, global), and the accesses that are atomics to the check (coherent loads
    and stores, publishing stores) — the numpy engine's hooks decide the same from the same functions.  None for
    a program of more instructions than the C shadow can name (its kernels then run on the numpy engine)."""
    got = getattr(nprog, "_race_flags", None)
    if got is not None:
        return got
    if len(nprog.code) >= RACE_MAX_INSTRUCTIONS:
        return None
    prog = nprog.program
    lds_cas, global_cas = racecheck.cas_loads(prog), globalrace.cas_loads(prog)
    publish = globalrace.publish_stores(prog)
    flags = np.zeros(max(1, len(nprog.code)), np.uint8)
    for i, off in enumerate(nprog.code["pc"].tolist()):
        pc = nprog.base + int(off)
        inst = prog.instructions.get(pc)
        if inst is None:
            continue
        if devheap.in_library(prog, pc):           # (the device libraries' own accesses: _on_global)
            flags[i] = native.RC_SKIP_GLOBAL | native.RC_ATOMIC
            continue
        flags[i] = ((native.RC_SKIP_LDS if pc in lds_cas else 0) | (native.RC_SKIP_GLOBAL if pc in global_cas else 0)
                    | (native.RC_ATOMIC if globalrace.coherent(inst) or pc in publish else 0))
    nprog._race_flags = flags
    return flags


def _race_report(s: Session, h, ctx: dict) -> None:
    """racecheck: a native engine's race record as the numpy engine's report."""
    from .lanes import _kernel_at
    prog = ctx["program"]
    if h.kernel_code:                   # (the dispatch's kernel: the access may be in a function of its own)
        ctx["kernel"] = _kernel_at(prog, int(h.kernel_code))
    opc = ctx["pc"] + int(h.other_delta)
    wg, owg = [int(x) for x in h.wg], [int(x) for x in h.other_wg]
    access = native.RACE_ACCESS[h.write]
    if h.pad < native.CHECK_RACE_GLOBAL:
        r = racecheck.build(native.RACES[h.pad - native.CHECK_RACE_LDS], prog, ctx.get("kernel"), wg, int(h.wave),
                            int(h.lane), ctx["pc"], int(h.address), int(h.size), access, int(h.lds_size),
                            int(h.other_wave), int(h.other_lane), opc)
    else:
        from ..emu.device import GPUS
        mem = next((g.memory for g in list(GPUS) if g.memory.find(int(h.address)) is not None), None)
        r = globalrace.build(native.RACES[h.pad - native.CHECK_RACE_GLOBAL], prog, ctx.get("kernel"), wg,
                             int(h.wave), int(h.lane), ctx["pc"], int(h.address), int(h.size), access, mem, owg,
                             int(h.other_wave), int(h.other_lane), opc)
    s.add(with_source(r, prog), int(h.count))


def _on_lds(st, w, widx, lidx, o, size: int, data, kind: str) -> None:
    """racecheck: an LDS access of the numpy engine (pyhip/emu/semantics/ds.py ``LDS_CHECKS``)."""
    from .lanes import running
    s = _SESSION
    at = running() if s is not None else None
    if at is None:
        return
    eng, pc = at
    if kind == "read" and pc in racecheck.cas_loads(eng.program):
        return                                  # (the atomic's own load: racecheck.py)
    pc -= eng.program.base
    for hazard in racecheck.access(st, w, widx, lidx, o, size, data, kind, pc):
        r = racecheck.report(eng, st, w, widx, lidx, size, hazard, pc, kind)
        s.add(with_source(r, eng.program), hazard[-1])


def _on_lds_bounds(st, w, widx, lidx, o, size: int, write: bool) -> None:
    """memcheck: lanes of a numpy-engine LDS access past the group segment (semantics/ds.py ``LDS_BOUNDS``)."""
    from .lanes import numpy_context
    s = _SESSION
    if s is None:
        return
    ctx = numpy_context(0, len(o))
    r = memcheck.lds_report(int(o[0]), size, write, st.lds_size, st.lds_alloc, ctx)
    s.add(with_source(r, ctx.get("program")), len(o))


def _on_global(st, w, widx, lidx, addrs, size: int, data, kind: str) -> None:
    """racecheck: a global-memory access of the numpy engine (pyhip/emu/semantics/vmem.py ``GLOBAL_CHECKS``)."""
    from .lanes import running
    s = _SESSION
    at = running() if s is not None else None
    if at is None:
        return
    eng, pc = at
    prog = eng.program
    if kind == "read" and pc in globalrace.cas_loads(prog):
        return                                  # (the atomic's own load: globalrace.py)
    library = devheap.in_library(prog, pc)      # (ockl's heap and hostcalls: their reads not seen, writes atomic)
    if library and kind == "read":
        return
    atomic = (library or kind == "atomic" or globalrace.coherent(prog.instructions.get(pc))
              or (kind == "write" and pc in globalrace.publish_stores(prog)))
    sh = globalrace.shadow_of(eng)
    gw = globalrace.global_waves(eng, st, w, widx)
    pc -= prog.base
    memory = eng.gpu.memory
    for hazard in globalrace.access(sh, memory, gw, lidx, addrs, size, data, kind, atomic, pc):
        r = globalrace.report(eng, sh, st, w, widx, lidx, gw, size, hazard, pc, kind, memory)
        s.add(with_source(r, prog), hazard[-1])


def _lds_barriers(dispatch, st, ready) -> None:
    """racecheck: the workgroups ``ready`` pass a barrier (LDS and global memory)."""
    if isinstance(st.shadow, racecheck.Lds):
        st.shadow.barrier(ready, st.lds.shape[1])
    sh = getattr(dispatch, "_race_global", None)
    if sh is not None:
        sh.barrier(globalrace.global_groups(dispatch, st, np.nonzero(ready)[0]).tolist())


def _gws_barrier(dispatch, st, waves) -> None:
    """racecheck: a global wave sync barrier (``ds_gws_barrier``: cooperative groups' grid sync) released
    ``waves`` (batch wave indices) of any workgroups."""
    sh = getattr(dispatch, "_race_global", None)
    if sh is not None:
        sh.gws_barrier(globalrace.global_groups(dispatch, st, st.group[waves]) * dispatch.waves_per_group
                       + st.wave_in_group[waves])


def _on_barriers(dispatch, st, ready) -> None:
    s = _SESSION
    if s is not None:
        synccheck.numpy_release(dispatch, st, ready, lambda r: s.add(with_source(r, dispatch.program)))


def disable() -> Session | None:
    """Turn the checks off; returns the session that ended."""
    global _SESSION
    from ..emu import device, memory
    collect()
    s = _SESSION
    if s is not None and "leaks" in s.checks:
        for r in leaks.find(list(_CHECKER.memories)):
            s.add(r)
        if _HEAP[0] is not None:
            for r, prog in _HEAP[0].leaks():
                s.add(with_source(r, prog), r["blocks"])
    _unwatch_device_heap()
    _SESSION = None
    if _on_fault in device.FAULT_LISTENERS:
        device.FAULT_LISTENERS.remove(_on_fault)
    if _on_dispatch in device.DISPATCH_LISTENERS:
        device.DISPATCH_LISTENERS.remove(_on_dispatch)
    memory.set_memcheck(False)
    if _SHADOWS:                # the native engine lets go of the shadows first; they stay mapped (a dispatch
        native.arm_init(())     # that looked at the switch just before may still reach one)
        _RETIRED.extend(_SHADOWS)
        _SHADOWS.clear()
    memory.set_initcheck(None)
    from ..emu.semantics import ds
    if _on_lds_bounds in ds.LDS_BOUNDS:
        ds.LDS_BOUNDS.remove(_on_lds_bounds)
    device.ENGINE_OVERRIDE = None
    device.RACE_FLAGS = None
    from ..emu import engine
    if _on_barriers in engine.BARRIER_CHECKS:
        engine.BARRIER_CHECKS.remove(_on_barriers)
        native.sync(False)
    if _gws_barrier in engine.GWS_CHECKS:
        engine.GWS_CHECKS.remove(_gws_barrier)
    if _lds_barriers in engine.BARRIER_CHECKS:
        from ..emu.semantics import ds, vmem
        engine.BARRIER_CHECKS.remove(_lds_barriers)
        ds.LDS_CHECKS.remove(_on_lds)
        vmem.GLOBAL_CHECKS.remove(_on_global)
    if _CHECKER.memories:
        native.arm(False, ())
        _CHECKER.memories.clear()
    if s is not None:
        s.close()
    return s


@contextlib.contextmanager
def check(checks="all", log: str | None = None, echo: bool = True):
    """``with pyhip.check("memcheck") as session:`` — the checks on inside the block; ``session.reports``
    holds what they found.  A bad access the GPU would not fault on, or on which it would read 0 / drop the
    store, is reported and the kernel goes on as the GPU would (an LDS access past the group segment too: a GPU
    never faults on LDS); a fault that ends a dispatch on a GPU (misaligned atomic, scratch out of range) still
    ends it with its HIP error."""
    s = enable(checks, log, echo)
    try:
        yield s
    finally:
        if _SESSION is s:
            disable()


def from_environment() -> None:
    """``PYHIP_CHECK=CHECKS`` (and ``PYHIP_CHECK_LOG=FILE``): the checks on for the whole process, with a
    summary at exit and exit status 1 when anything was found (``PYHIP_CHECK_SUMMARY=0``: neither; pyhip exec
    sets it and reads the log instead)."""
    spec = os.environ.get("PYHIP_CHECK", "").strip()
    if not spec:
        return
    s = enable(spec, os.environ.get("PYHIP_CHECK_LOG") or None)
    if os.environ.get("PYHIP_CHECK_SUMMARY", "1") != "0":
        _at_exit(_exit_summary, s)
    else:
        _at_exit(_exit_quietly, s)


_EXIT_HOOKS: list = []      # the C exit handlers' ctypes callbacks (kept alive)


def _at_exit(fn, s: Session) -> None:
    """``fn(s)`` when the process exits: Python's atexit, and — in a C or C++ program whose embedded
    interpreter (pyhip's libamdhip64) is never finalized, so Python's atexit never runs — the C library's."""
    atexit.register(fn, s)
    try:
        embedded = os.path.realpath("/proc/self/exe") != os.path.realpath(sys.executable or "/")
    except OSError:
        embedded = False
    if embedded:
        import ctypes
        cb = ctypes.CFUNCTYPE(None, ctypes.c_void_p)(lambda _arg: fn(s))
        try:
            ctypes.CDLL(None).__cxa_atexit(cb, None, None)      # what atexit() is made of (glibc, musl)
            _EXIT_HOOKS.append(cb)
        except (AttributeError, OSError):
            pass                            # no C exit handler: the native engine's last records may be missed


def _exit_quietly(s: Session) -> None:
    """At exit under ``pyhip exec`` (which prints the summary from the log): the last reports into the log."""
    if _SESSION is s:
        disable()


def _exit_summary(s: Session) -> None:
    if _SESSION is s:
        disable()                       # the native engine's last records, and the leaks
    print(s.summary(), file=sys.stderr, flush=True)
    if s.reports:
        sys.stdout.flush()
        os._exit(1)       # the status says so (atexit handlers cannot change it otherwise; pyhip's run before)
