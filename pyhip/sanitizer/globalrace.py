"""racecheck, global memory (docs/check.md): lanes of different waves or workgroups touching the same bytes of
global memory in one dispatch, at least one of them with a plain write, with nothing ordering the two.

The numpy engine tells the check of the global-memory lanes of every vector memory instruction before it is
made (pyhip/emu/semantics/vmem.py ``GLOBAL_CHECKS``).  A shadow of the bytes the dispatch touched
(:class:`Shadow`, one entry per byte, made per dispatch) holds the byte's last writer and two readers (the
last, and one of another wave than that one): the access's wave (global: workgroup * waves per workgroup +
wave), lane, PC and time (a counter of the dispatch's accesses).

The rules (each with a test in tests/check/test_racecheck_global.py):

- accesses of one wave never race with each other (program order; lanes of one instruction are one access);
- atomics do not race with atomics.  An *atomic* here is an atomic instruction, or a load or store that is
  coherent at device scope — the GLC bit (SC0/SC1 on gfx94x): what the compiler makes of ``__hip_atomic_load``
  / ``__hip_atomic_store`` and of ``volatile`` accesses, the flags of decoupled look-back (rocPRIM) and of the
  threadfence reduction;
- waves of one workgroup are ordered by an ``s_barrier`` between the two accesses (``__syncthreads()``);
- accesses of different waves (of any workgroups) are ordered through atomics: access A of wave u is ordered
  before access B of wave v when, after A, an atomic of u (or, after a barrier of u's workgroup that followed
  A, an atomic of any wave of it) came before an atomic of v that came before B (or before a barrier of v's
  workgroup that came before B).  Any atomic instruction counts, whatever its address and whether or not a
  ``__threadfence()`` goes with it (the check does not tell a release atomic from a relaxed one).
  ``__threadfence()`` alone orders nothing;
- a global wave sync barrier (``ds_gws_barrier``: hipcc's ``cooperative_groups::this_grid().sync()``, one wave
  per workgroup between two ``__syncthreads()``) orders its waves as an atomic of each at its release would;
- a plain store that publishes (:func:`publish_stores`: a release point between it and the store before it)
  is an atomic; the same store without the fence is a plain write, so a missing ``__threadfence()`` between a
  data store and a flag store is reported (the loads of the flag and of the data, in another wave);
- a write that leaves the bytes as they were (the value they hold) is no hazard itself; a later write of
  another value races with it;
- lanes of different waves storing different values to one byte in one instruction (waves at the same PC run
  it together) race.

Not seen: scalar loads (``s_load``: uniform reads of kernel arguments and constants), loads into LDS, image
instructions and typed buffer accesses (``buffer_load_format``).  The native engine keeps the same shadow in C
(native/engine/race.h) and runs a dispatch in this engine's schedule while racecheck is on, so it finds the
same hazards.
"""
from __future__ import annotations

import bisect

import numpy as np

from .racecheck import CAS_WINDOW, loads_before_cas

CHANGED, ATOMIC = 1, 2          # a writer's flags: its write changed the byte; it was an atomic
PAGE = 4096


class Shadow:
    """Per byte the dispatch touched: the last writer (wave, lane, PC, time, flags), the last reader and a
    reader of another wave than the last one (wave, lane, PC, time); -1 for none.  The bytes are kept in
    pages of :data:`PAGE` made on first touch.  Per wave: the times of its atomics; per workgroup: of its
    atomics and barriers; ``acq``: per wave, the time of the latest atomic ordered before its next access."""

    SLOTS = 3                   # writer, reader, other reader

    def __init__(self, waves_per_group: int):
        self.wpg = waves_per_group
        self.time = 0
        self.pages: dict[int, int] = {}
        self.cap = 0
        self.who = np.zeros((self.SLOTS, 0), np.int64)
        self.lane = np.zeros((self.SLOTS, 0), np.int16)
        self.pc = np.zeros((self.SLOTS, 0), np.int64)
        self.at = np.zeros((self.SLOTS, 0), np.int64)
        self.flags = np.zeros(0, np.uint8)
        self.atomics: dict[int, list] = {}          # wave -> times of its atomics
        self.group_atomics: dict[int, list] = {}    # workgroup -> times of its waves' atomics
        self.barriers: dict[int, list] = {}         # workgroup -> times of its barrier releases
        self.acq: dict[int, int] = {}               # wave -> time of the atomic its next access is ordered after

    # -- the byte table ---------------------------------------------------------------------------------------
    def index(self, addrs) -> np.ndarray:
        """Table positions of the byte addresses ``addrs`` (uint64), pages made as needed."""
        pages = (addrs >> np.uint64(12)).astype(np.int64)
        uniq, inv = np.unique(pages, return_inverse=True)
        slots = np.empty(len(uniq), np.int64)
        for k, p in enumerate(uniq.tolist()):
            s = self.pages.get(p)
            if s is None:
                s = self.pages[p] = len(self.pages)
                self._grow(len(self.pages) * PAGE)
            slots[k] = s
        return slots[inv] * PAGE + (addrs & np.uint64(PAGE - 1)).astype(np.int64)

    def _grow(self, need: int) -> None:
        if need <= self.cap:
            return
        cap = max(need, 2 * self.cap)
        extra = cap - self.cap
        self.who = np.concatenate([self.who, np.full((self.SLOTS, extra), -1, np.int64)], axis=1)
        self.lane = np.concatenate([self.lane, np.zeros((self.SLOTS, extra), np.int16)], axis=1)
        self.pc = np.concatenate([self.pc, np.zeros((self.SLOTS, extra), np.int64)], axis=1)
        self.at = np.concatenate([self.at, np.zeros((self.SLOTS, extra), np.int64)], axis=1)
        self.flags = np.concatenate([self.flags, np.zeros(extra, np.uint8)])
        self.cap = cap

    # -- ordering ----------------------------------------------------------------------------------------------
    def atomic(self, waves) -> None:
        """The waves ``waves`` (global ids) executed an atomic now."""
        for v in np.unique(waves).tolist():
            self.atomics.setdefault(v, []).append(self.time)
            self.group_atomics.setdefault(v // self.wpg, []).append(self.time)
            self.acq[v] = self.time

    def barrier(self, groups) -> None:
        """The workgroups ``groups`` (global ids) passed a barrier now: their waves' accesses so far are
        ordered before their later ones, and each wave's later accesses after every atomic of the others."""
        self.time += 1
        for g in groups:
            self.barriers.setdefault(g, []).append(self.time)
            waves = range(g * self.wpg, (g + 1) * self.wpg)
            top = max((self.acq.get(v, -1) for v in waves), default=-1)
            if top >= 0:
                for v in waves:
                    self.acq[v] = top

    def gws_barrier(self, waves) -> None:
        """A global wave sync barrier released ``waves`` (global ids) now: everything each did before it arrived
        is ordered before what any of them does after — to the check, an atomic of each at the release, which
        every earlier arrival came before."""
        self.time += 1
        self.atomic(waves)

    def _released(self, u: int, t: int) -> float:
        """The time of the first atomic ordered after wave ``u``'s access at time ``t`` (inf: none yet)."""
        best = float("inf")
        mine = self.atomics.get(u, ())
        k = bisect.bisect_right(mine, t)
        if k < len(mine):
            best = mine[k]
        g = u // self.wpg
        bars = self.barriers.get(g, ())
        k = bisect.bisect_right(bars, t)
        if k < len(bars):
            theirs = self.group_atomics.get(g, ())
            j = bisect.bisect_right(theirs, bars[k])
            if j < len(theirs):
                best = min(best, theirs[j])
        return best

    def unordered(self, prev_who, prev_at, v: np.ndarray) -> np.ndarray:
        """Per entry: whether the earlier access (wave ``prev_who``, time ``prev_at``; -1: none) and the access
        now of wave ``v`` are unordered: other waves, no barrier of their workgroup between, no atomics chain."""
        cand = (prev_who >= 0) & (prev_who != v)
        if not cand.any():
            return cand
        idx = np.nonzero(cand)[0]
        out = cand.copy()
        memo: dict[tuple, bool] = {}
        for i, u, t, me in zip(idx.tolist(), prev_who[idx].tolist(), prev_at[idx].tolist(), v[idx].tolist()):
            key = (u, t, me)
            got = memo.get(key)
            if got is None:
                g = u // self.wpg
                bars = self.barriers.get(g, ())
                if g == me // self.wpg and bars and bars[-1] > t:
                    got = False                                    # a barrier of the workgroup between
                else:
                    got = not self._released(u, t) <= self.acq.get(me, -1)
                memo[key] = got
            out[i] = got
        return out


def coherent(inst) -> bool:
    """Whether a load or store is coherent at device scope (GLC; SC0 or SC1 on gfx94x): an atomic load or
    store, or a ``volatile`` access — an atomic to the check."""
    f = inst.fields if inst is not None else {}
    return bool(f.get("glc") or f.get("sc1"))


_CAS = "_atomic_cmpswap"
_LOADS = ("global_load_dword", "flat_load_dword", "global_load_b32", "global_load_b64", "flat_load_b32",
          "flat_load_b64")


def cas_loads(program) -> frozenset:
    """The PCs of the plain global loads that start a compare-and-swap loop (what the compiler makes of an
    atomic the ISA lacks, e.g. ``atomicMax`` on a ``float``): a ``global_load_dword*`` followed within
    racecheck.CAS_WINDOW instructions by an ``*_atomic_cmpswap*`` with the same address operands.  Such a load
    is part of the atomic: the compare-and-swap checks what it read."""
    got = getattr(program, "_race_global_cas_all", None)
    if got is None:
        got = loads_before_cas(program, "_race_global_cas_loads", lambda n: n.startswith(_LOADS),
                               lambda n: _CAS in n, ("addr", "saddr", "offset")) | _scalar_cas_loads(program)
        program._race_global_cas_all = got
    return got


_SCALAR_LOADS = ("s_load_dword", "s_load_dwordx2", "s_load_b32", "s_load_b64")


def _scalar_cas_loads(program) -> frozenset:
    """The scalar loads that start a compare-and-swap loop: a uniform ``old = *p`` the compiler reads with
    ``s_load_dword{,x2} s, s[b:b+1], off`` (tests/check/src/global_clean.hip's ``float_max``), followed within
    racecheck.CAS_WINDOW instructions by a ``global_atomic_cmpswap*`` whose SGPR base is s[b:b+1] and whose
    offset is ``off`` (its VGPR offset cannot be known before it runs)."""
    insts = program.instructions
    pcs = sorted(insts)
    out = set()
    for k, pc in enumerate(pcs):
        i = insts[pc]
        if i.name not in _SCALAR_LOADS or i.fields.get("imm", 1) == 0 or i.fields.get("soe"):
            continue
        for q in pcs[k + 1:k + 1 + CAS_WINDOW]:
            j = insts[q]
            if (j.name.startswith("global" + _CAS) and j.fields.get("saddr") == i.fields.get("sbase")
                    and j.fields.get("offset") == i.fields.get("offset")):
                out.add(pc)
                break
    return frozenset(out)


_MEMORY = ("global_", "flat_", "buffer_load", "buffer_store", "buffer_atomic", "scratch_")
_FENCES = ("buffer_wbl2", "buffer_wbinvl1", "buffer_inv", "buffer_gl0_inv", "buffer_gl1_inv", "s_waitcnt_vscnt",
           "s_waitcnt_vmcnt")


def _memory(name: str) -> bool:
    return name.startswith(_MEMORY)


def _fence(inst, processor: str) -> bool:
    """A release point: the wave's earlier stores are complete (``s_waitcnt vmcnt(0)``, ``s_waitcnt_vscnt``) or
    written back (``buffer_wbl2``, ...) before it goes on — what ``__threadfence()`` and release atomics become."""
    if inst.name.startswith(_FENCES):
        return True
    if inst.name == "s_waitcnt":
        from ..emu.engine import describe
        return "vmcnt(0)" in describe(inst, processor)
    return False


def publish_stores(program) -> frozenset:
    """The PCs of the plain global stores that publish (a release store: to the check an atomic, as the flag of a
    message or a look-back): walking back from the store in address order, a release point (:func:`_fence`)
    comes before any other memory instruction, and the memory instruction before that release point is a
    store or an atomic (the data it publishes); or the walk reaches the kernel's start (``s_endpgm`` of the code
    before it, or the first instruction) first — nothing earlier to order.  A store right after its data
    store, with no fence between (the planted bug of tests/check/src/lookback.hip), publishes nothing: it
    stays a plain write, so a coherent load of its flag and the loads of the data it guards are reported."""
    got = getattr(program, "_race_global_publish", None)
    if got is not None:
        return got
    insts = program.instructions
    processor = program.code_object.processor
    pcs = sorted(insts)
    out = set()
    for k, pc in enumerate(pcs):
        name = insts[pc].name
        if not (name.startswith(("global_store", "flat_store")) or name.startswith("buffer_store")):
            continue
        fenced, verdict = False, True            # (reaching the kernel's start: publishes)
        for q in reversed(pcs[:k]):
            j = insts[q]
            if j.name == "s_endpgm":
                break
            if _fence(j, processor):
                fenced = True
            elif _memory(j.name):
                verdict = fenced and ("store" in j.name or "atomic" in j.name)
                break
        if verdict:
            out.add(pc)
    got = frozenset(out)
    setattr(program, "_race_global_publish", got)
    return got


def shadow_of(dispatch) -> Shadow:
    """The dispatch's shadow (made on its first access; it ends with the dispatch)."""
    sh = getattr(dispatch, "_race_global", None)
    if sh is None:
        sh = dispatch._race_global = Shadow(dispatch.waves_per_group)
    return sh


def global_groups(dispatch, st, batch_groups) -> np.ndarray:
    """Global (flat) workgroup ids of batch-local workgroups."""
    cx, cy, _ = dispatch.counts
    gid = st.group_ids[batch_groups]
    return gid[:, 0] + cx * (gid[:, 1] + cy * gid[:, 2])


def global_waves(dispatch, st, w, widx) -> np.ndarray:
    """Global wave ids (workgroup * waves per workgroup + wave) of the waves at positions ``widx`` of ``w``."""
    from ..emu.state import indices
    waves = indices(st, w)[widx]
    return global_groups(dispatch, st, st.group[waves]) * dispatch.waves_per_group + st.wave_in_group[waves]


def access(sh: Shadow, memory, gw, lidx, addrs, size: int, data, kind: str, atomic: bool, pc: int) -> list[tuple]:
    """A global access of the listed lanes (waves ``gw``, lanes ``lidx``, byte addresses ``addrs``; ``data``
    (n, size) for a write) at PC offset ``pc`` against the shadow; ``atomic``: an atomic instruction or a
    coherent load or store.  Returns the hazards found: ``(kind, entry, address, slot, table index, lanes)``
    — the race's kind, the first hazardous entry (lane-major, ``size`` per lane), its byte address, the other
    access (shadow slot 0 writer, 1 / 2 readers, or -1: an entry of this access) and how many lanes race."""
    sh.time += 1
    ab = (addrs.astype(np.uint64)[:, None] + np.arange(size, dtype=np.uint64)).reshape(-1)
    b = sh.index(ab)
    v = np.repeat(np.asarray(gw, np.int64), size)
    found: list[tuple] = []
    wrote = sh.who[0][b]
    wflags = sh.flags[b]
    if kind == "read":
        hz = (wflags & CHANGED != 0) & ~(atomic & (wflags & ATOMIC != 0))
        if hz.any():
            _note(found, "read-after-write", hz & sh.unordered(wrote, sh.at[0][b], v), ab, 0, b, size)
        if not atomic:
            _read(sh, b, v, np.repeat(lidx, size), pc)
    else:
        if kind == "atomic":
            changes = np.ones(len(b), bool)
        else:
            new = np.ascontiguousarray(data).reshape(-1)
            # (this look is no kernel's read: initcheck's shadow and memcheck's checker are not told of it)
            shadow, checker = memory.shadow, memory.checker
            memory.shadow = memory.checker = None
            try:
                changes = new != np.ascontiguousarray(memory.gather(addrs.astype(np.uint64), size)).reshape(-1)
            except Exception:                  # (a bad address: memcheck's to report) pylint: disable=broad-except
                changes = np.ones(len(b), bool)
            finally:
                memory.shadow, memory.checker = shadow, checker
        hz = changes & ~(atomic & (wflags & ATOMIC != 0))
        if hz.any():
            _note(found, "write-after-write", hz & sh.unordered(wrote, sh.at[0][b], v), ab, 0, b, size)
        for slot in (1, 2):
            if changes.any() and not any(f[0] == "write-after-read" for f in found):
                _note(found, "write-after-read", changes & sh.unordered(sh.who[slot][b], sh.at[slot][b], v), ab,
                      slot, b, size)
        if kind == "write" and not atomic:
            _same_instruction(found, ab, b, v, np.ascontiguousarray(data).reshape(-1), size)
        upd = (wrote < 0) | changes
        bu = b[upd]
        sh.who[0][bu] = v[upd]
        sh.lane[0][bu] = np.repeat(lidx, size)[upd]
        sh.pc[0][bu] = pc
        sh.at[0][bu] = sh.time
        sh.flags[bu] = np.where(changes[upd], CHANGED, 0).astype(np.uint8) | (ATOMIC if atomic else 0)
    if atomic:
        sh.atomic(gw)
    return found


def _read(sh: Shadow, b, v, lanes, pc: int) -> None:
    """Plain readers ``v`` (waves; ``lanes``) at table positions ``b`` (bytes may repeat): per byte the last of
    them becomes its reader, and its other reader one of them of another wave, or else the previous reader
    when that was of another wave."""
    order = np.argsort(b, kind="stable")
    bs = b[order]
    start = np.r_[True, bs[1:] != bs[:-1]]
    firsts = np.nonzero(start)[0]
    group = np.cumsum(start) - 1
    ub = bs[firsts]
    last = order[np.r_[firsts[1:] - 1, len(bs) - 1]]
    cand = np.full(len(ub), -1, np.int64)
    diff = v[order] != v[last][group]
    cand[group[diff]] = order[diff]                       # an entry of this access of another wave
    old = sh.who[1][ub]
    keep = (old >= 0) & (old != v[last])
    has = cand >= 0
    n = len(b)
    for arr, vals in ((sh.who, v), (sh.lane, lanes), (sh.pc, np.full(n, pc)), (sh.at, np.full(n, sh.time))):
        arr[2][ub] = np.where(has, vals[np.where(has, cand, 0)], np.where(keep, arr[1][ub], arr[2][ub]))
        arr[1][ub] = vals[last]


def _note(found: list, kind: str, hz, ab, slot: int, b, size: int) -> None:
    if hz.any():
        k = int(np.argmax(hz))
        found.append((kind, k, int(ab[k]), slot, int(b[k]), int(hz.reshape(-1, size).any(axis=1).sum())))


def _same_instruction(found: list, ab, b, v, new, size: int) -> None:
    """Lanes of different waves writing different values to one byte in one instruction."""
    order = np.argsort(b, kind="stable")
    bs = b[order]
    dup = np.nonzero(bs[1:] == bs[:-1])[0]
    if not len(dup):
        return
    i, j = order[dup], order[dup + 1]
    hz = (v[i] != v[j]) & (new[i] != new[j])
    if hz.any():
        k = int(np.argmax(hz))
        found.append(("write-after-write", int(j[k]), int(ab[j[k]]), -1, int(i[k]), len(np.unique(j[hz] // size))))


KINDS = {"read-after-write": ("reads", "wrote"), "write-after-write": ("writes", "wrote"),
         "write-after-read": ("writes", "read")}


def report(dispatch, sh: Shadow, st, w, widx, lidx, gw, size: int, hazard: tuple, pc: int, access_kind: str,
           memory) -> dict:
    """The report of ``hazard`` (from :func:`access`) found at the instruction at PC offset ``pc``."""
    from ..emu.state import indices
    race, k, address, slot, pos, _lanes = hazard
    e = k // size
    wpg = dispatch.waves_per_group
    if slot < 0:                                  # another lane of this instruction (entry ``pos``)
        other, olane, opc = int(np.repeat(gw, size)[pos]), int(np.repeat(lidx, size)[pos]), pc
    else:
        other, olane, opc = int(sh.who[slot][pos]), int(sh.lane[slot][pos]), int(sh.pc[slot][pos])
    cx, cy, _ = dispatch.counts
    og = other // wpg
    owg = [og % cx, (og // cx) % cy, og // (cx * cy)]
    wave_idx = indices(st, w)[widx[e]]
    return build(race, dispatch.program, dispatch.kernel.demangled if dispatch.kernel is not None else None,
                 [int(x) for x in st.group_ids[st.group[wave_idx]]], int(st.wave_in_group[wave_idx]), int(lidx[e]),
                 pc, address, size, access_kind, memory, owg, other % wpg, olane, opc)


def _scalar(inst) -> bool:
    """A scalar memory instruction (s_load, s_store, s_atomic...): one access per wave, told to the shadow as
    lanes that are its dwords (semantics/vmem.py ``check_scalar``, native/engine/race.h ``race_scalar``)."""
    return inst is not None and inst.name.startswith("s_")


def _who(inst, wave: int, lane: int) -> str:
    return f"wave {wave} (scalar access, dword {lane})" if _scalar(inst) else f"wave {wave} lane {lane}"


def build(race: str, prog, kernel, wg, wave: int, lane: int, pc: int, address: int, size: int, access_kind: str,
          memory, owg, owave: int, olane: int, opc: int) -> dict:
    """A global-memory race report (either engine's): ``race`` a :data:`KINDS` key, PCs as offsets in ``prog``."""
    from ..emu.engine import describe
    from .memcheck import allocation
    from .source import line_for
    doing, did = KINDS[race]
    processor = prog.code_object.processor
    whose = "its workgroup" if owg == wg else f"workgroup {owg}"
    inst, oinst = prog.instructions.get(prog.base + pc), prog.instructions.get(prog.base + opc)
    me, other = _who(inst, wave, lane), _who(oinst, owave, olane)
    r = {"checker": "racecheck", "kind": f"global-{race}",
         "message": f"{me} {doing} global memory that {other} of {whose} {did} in the same dispatch, with nothing "
                    "ordering them",
         "kernel": kernel, "workgroup": wg, "wave": wave, "pc": pc}
    r.update({"dword": lane} if _scalar(inst) else {"lane": lane})
    if inst is not None:
        r["instruction"] = describe(inst, processor)
    r["address"] = address
    r["access"] = f"{size} bytes, {access_kind}"
    found = memory.find(address) if memory is not None else None
    if found is not None:
        start, _end, kind = found
        r["allocation"] = allocation(start, memory.allocation_size(start), kind, memory.origins.get(start))
    r.update(other_workgroup=owg, other_wave=owave, **{"other_dword" if _scalar(oinst) else "other_lane": olane},
             other_pc=opc)
    if oinst is not None:
        r["other_instruction"] = describe(oinst, processor)
    co = getattr(prog, "code_object", None)
    src = line_for(co, opc) if co is not None else None
    if src is not None:
        r["other_source"] = src
    return r
