"""racecheck, LDS hazards (docs/check.md): two waves of a workgroup touching the same LDS byte with no barrier
between them, at least one of them writing.

The numpy engine tells the check of every LDS access before it is made (pyhip/emu/semantics/ds.py
``LDS_CHECKS``: ds_* reads, writes and atomics, flat accesses to the LDS aperture, loads into LDS).  A shadow
of the batch's LDS (:class:`Lds`, one entry per byte) holds the byte's last writer and two of its readers since
the last barrier of its workgroup (the last reader, and one of another wave than that one): who = PC, wave and
lane.  A barrier release of a workgroup clears its rows: accesses on both sides of a barrier are ordered.

The rules (each with a test in tests/check/test_racecheck.py):

- accesses of one wave never race with each other (a wave's instructions are ordered; lanes of one
  instruction are one access: DPP, ds_swizzle, ds_bpermute exchange registers, not LDS bytes);
- atomics (ds_add ..., ds_wrxchg*, ds_append/consume, flat atomics on LDS) do not race with atomics; an
  atomic against a plain read or write of another wave does;
- the plain load that starts a compare-and-swap loop (what the compiler makes of an atomic the ISA lacks,
  e.g. ``atomicAdd`` on a ``double`` in LDS: load, then ``ds_cmpst`` at the same address until it succeeds)
  is part of the atomic: the CAS checks what it read (:func:`cas_loads`);
- a write that leaves the byte as it was (the same value it already holds) is no hazard itself: it cannot
  change what another wave reads or leaves behind; a later write of another value races with it.  A byte
  no wave of the workgroup has written yet holds no value (LDS is not cleared between workgroups on a GPU):
  every first write changes it.
"""
from __future__ import annotations

import numpy as np

CHANGED, ATOMIC = 1, 2          # a writer's flags: its write changed the byte; it was an atomic


def _who(pc: int, waves, lanes):
    """Packed (PC offset, wave in workgroup, lane): -1 for none."""
    return (np.int64(pc) << 16) | (waves.astype(np.int64) << 8) | lanes.astype(np.int64)


def _wave(who):
    return (who >> 8) & 0xFF


def unpack(who: int) -> tuple[int, int, int]:
    """(PC offset, wave, lane) of a packed entry."""
    return who >> 16, (who >> 8) & 0xFF, who & 0xFF


class Lds:
    """Per byte of a batch's LDS (``st.lds`` flattened): last writer (and its flags), last reader and a
    reader of another wave than the last one, since the last barrier."""

    def __init__(self, n: int):
        self.writer = np.full(n, -1, np.int64)
        self.flags = np.zeros(n, np.uint8)
        self.reader = np.full(n, -1, np.int64)
        self.other = np.full(n, -1, np.int64)
        self.defined = np.zeros(n, bool)        # written by a wave of the workgroup (the batch's)
        self._stamp = np.zeros(n, np.int32)

    def distinct(self, b) -> bool:
        """Whether the bytes ``b`` are all different (one scatter and one gather: no sort)."""
        idx = np.arange(len(b), dtype=np.int32)
        self._stamp[b] = idx
        return bool((self._stamp[b] == idx).all())

    def barrier(self, ready, row: int) -> None:
        """The workgroups ``ready`` (a mask) passed a barrier: their accesses so far are ordered before later ones."""
        for a in (self.writer, self.reader, self.other):
            a.reshape(-1, row)[ready] = -1
        self.flags.reshape(-1, row)[ready] = 0

    def read(self, b, waves, me) -> None:
        """Readers ``me`` (packed) of waves ``waves`` at bytes ``b`` (one entry each, bytes may repeat)."""
        if self.distinct(b):
            old = self.reader[b]
            self.other[b] = np.where((old >= 0) & (_wave(old) != waves), old, self.other[b])
            self.reader[b] = me
            return
        order = np.argsort(b, kind="stable")
        bs = b[order]
        start = np.r_[True, bs[1:] != bs[:-1]]
        firsts = np.nonzero(start)[0]
        group = np.cumsum(start) - 1
        ub = bs[firsts]
        last = order[np.r_[firsts[1:] - 1, len(bs) - 1]]
        new, new_wave = me[last], waves[last]
        cand = np.full(len(ub), -1, np.int64)
        diff = waves[order] != new_wave[group]
        cand[group[diff]] = me[order][diff]                 # a reader of this access of another wave
        old, old_other = self.reader[ub], self.other[ub]
        keep = np.where((old >= 0) & (_wave(old) != new_wave), old, old_other)
        self.other[ub] = np.where(cand >= 0, cand, keep)
        self.reader[ub] = new


_CAS = ("ds_cmpst", "ds_cmpstore")                  # GFX9/10 and GFX11 names
_LOADS = ("ds_read_b", "ds_load_b")
CAS_WINDOW = 32                                     # instructions from the load to its CAS


def loads_before_cas(program, cache: str, is_load, is_cas, fields: tuple) -> frozenset:
    """The PCs of the loads (``is_load(name)``) followed within :data:`CAS_WINDOW` instructions by a compare-and-
    swap (``is_cas(name)``) with the same address operands (``fields``): the load that starts a CAS loop, part of
    the atomic (the compare-and-swap checks what it read).  Kept on the program as attribute ``cache``."""
    got = getattr(program, cache, None)
    if got is not None:
        return got
    insts = program.instructions
    pcs = sorted(insts)
    out = set()
    for k, pc in enumerate(pcs):
        i = insts[pc]
        if not is_load(i.name):
            continue
        at = tuple(i.fields.get(f) for f in fields)
        for q in pcs[k + 1:k + 1 + CAS_WINDOW]:
            j = insts[q]
            if is_cas(j.name) and tuple(j.fields.get(f) for f in fields) == at:
                out.add(pc)
                break
    got = frozenset(out)
    setattr(program, cache, got)
    return got


def cas_loads(program) -> frozenset:
    """The PCs of the plain LDS loads that start a compare-and-swap loop: a ``ds_read_b32/b64`` followed within
    :data:`CAS_WINDOW` instructions by a ``ds_cmpst*`` with the same address register and offset."""
    return loads_before_cas(program, "_race_cas_loads", lambda n: n.startswith(_LOADS),
                            lambda n: n.startswith(_CAS), ("addr", "offset0", "offset1"))


def access(st, w, widx, lidx, o, size: int, data, kind: str, pc: int) -> list[tuple]:
    """An LDS access of the listed lanes (LDS offsets ``o``; ``data`` (n, size) for a write) at PC offset ``pc``
    against the shadow; returns the hazards found: ``(kind, entry, byte, other, lanes)`` — the race's kind, the
    first hazardous entry (lane-major, ``size`` entries per lane), its flat LDS byte, the other access
    (packed) and how many lanes of this access race."""
    from ..emu.state import indices
    if not len(widx) or not st.wave_in_group.any():      # (workgroups of one wave: nothing can race)
        return []
    sh = st.shadow
    if not isinstance(sh, Lds):
        sh = st.shadow = Lds(st.lds.size)
    row = st.lds.shape[1]
    waves = np.repeat(st.wave_in_group[indices(st, w)[widx]], size)
    b = ((st.group[w][widx] * row + o)[:, None] + np.arange(size)).reshape(-1)
    me = _who(pc, waves, np.repeat(lidx, size))
    found: list[tuple] = []
    if kind == "read":
        who = sh.writer[b]
        _note(found, "read-after-write", (who >= 0) & (_wave(who) != waves) & (sh.flags[b] & CHANGED != 0), b, who, size)
        sh.read(b, waves, me)
        return found
    atomic = kind == "atomic"
    changes = np.ones(len(b), bool) if atomic else \
        (np.ascontiguousarray(data).reshape(-1) != st.lds.reshape(-1)[b]) | ~sh.defined[b]
    who, flags = sh.writer[b], sh.flags[b]
    other = (who >= 0) & (_wave(who) != waves)
    if atomic:
        other &= flags & ATOMIC == 0
    _note(found, "write-after-write", changes & other, b, who, size)
    for r in (sh.reader[b], sh.other[b]):
        if not any(f[0] == "write-after-read" for f in found):
            _note(found, "write-after-read", changes & (r >= 0) & (_wave(r) != waves), b, r, size)
    if not atomic and not sh.distinct(b):
        _same_instruction(found, b, waves, me, np.ascontiguousarray(data).reshape(-1), size)
    sh.defined[b] = True
    upd = (who < 0) | changes
    sh.writer[b[upd]] = me[upd]
    sh.flags[b[upd]] = np.where(changes[upd], CHANGED, 0).astype(np.uint8) | (ATOMIC if atomic else 0)
    return found


def _note(found: list, kind: str, hz, b, who, size: int) -> None:
    if hz.any():
        k = int(np.argmax(hz))
        found.append((kind, k, int(b[k]), int(who[k]), int(hz.reshape(-1, size).any(axis=1).sum())))


def _same_instruction(found: list, b, waves, me, new, size: int) -> None:
    """Lanes of different waves writing different values to one byte in one instruction (waves of a workgroup
    at the same PC run it together)."""
    order = np.argsort(b, kind="stable")
    bs = b[order]
    dup = np.nonzero(bs[1:] == bs[:-1])[0]
    if not len(dup):
        return
    i, j = order[dup], order[dup + 1]
    hz = (waves[i] != waves[j]) & (new[i] != new[j])
    if hz.any():
        k = int(np.argmax(hz))
        lanes = len(np.unique(j[hz] // size))
        found.append(("write-after-write", int(j[k]), int(b[j[k]]), int(me[i[k]]), lanes))


KINDS = {"read-after-write": ("reads", "wrote"), "write-after-write": ("writes", "wrote"),
         "write-after-read": ("writes", "read")}


def report(eng, st, w, widx, lidx, size: int, hazard: tuple, pc: int, access_kind: str) -> dict:
    """The report of ``hazard`` (from :func:`access`) found at the instruction at PC offset ``pc``."""
    from ..emu.state import indices
    race, k, byte, other, _lanes = hazard
    row = st.lds.shape[1]
    lane_entry = k // size
    wave_idx = indices(st, w)[widx[lane_entry]]
    opc, owave, olane = unpack(other)
    return build(race, eng.program, eng.kernel.demangled if eng.kernel is not None else None,
                 [int(x) for x in st.group_ids[st.group[wave_idx]]], int(st.wave_in_group[wave_idx]),
                 int(lidx[lane_entry]), pc, byte % row, size, access_kind, st.lds_size, owave, olane, opc)


def build(race: str, prog, kernel, workgroup, wave: int, lane: int, pc: int, address: int, size: int,
          access_kind: str, lds_size: int, owave: int, olane: int, opc: int) -> dict:
    """An LDS race report (either engine's): ``race`` a :data:`KINDS` key, PCs as offsets in ``prog``."""
    from ..emu.engine import describe
    from .source import line_for
    doing, did = KINDS[race]
    processor = prog.code_object.processor
    r = {"checker": "racecheck", "kind": f"lds-{race}",
         "message": f"wave {wave} lane {lane} {doing} LDS byte {address} that wave {owave} lane {olane} {did} "
                    "with no barrier between them",
         "kernel": kernel, "workgroup": workgroup, "wave": wave, "lane": lane, "pc": pc}
    inst = prog.instructions.get(prog.base + pc)
    if inst is not None:
        r["instruction"] = describe(inst, processor)
    r["address"] = address
    r["access"] = f"{size} bytes, {access_kind}"
    r["allocation"] = {"start": 0, "size": lds_size, "kind": "LDS of the workgroup"}
    r.update(other_wave=owave, other_lane=olane, other_pc=opc)
    oinst = prog.instructions.get(prog.base + opc)
    if oinst is not None:
        r["other_instruction"] = describe(oinst, processor)
    co = getattr(prog, "code_object", None)
    src = line_for(co, opc) if co is not None else None
    if src is not None:
        r["other_source"] = src
    return r
