"""The differential mode (``PYHIP_ENGINE=diff``): every dispatch the native engine supports runs on the numpy
reference engine and on the native engine in lockstep (the numpy engine's exact schedule, so atomics and
stores from different waves interleave identically), from the same memory; every byte of device memory and
every wave's final registers (SGPRs, SCC, MODE, PC, all VGPR lanes) must be equal, or both must fault alike.

Then, from the same memory again, the native engine runs the dispatch as in production: the kernel's
non-lockstep compiled form, workgroups spread over the engine's threads, waves switching where they block.
Its memory and registers must equal the numpy engine's too — for every dispatch whose results cannot depend
on the schedule: those whose reachable code has no atomic (global, flat, buffer or LDS, returning or not: a
float atomic's rounding depends on the order too) and reads no clock or wave placement (``s_memtime``,
``s_memrealtime``, ``s_getreg`` of HW_ID or the cycle counter).  Those are compared in lockstep only and
counted (``STATS["lockstep-only"]``).  Plain stores racing between waves are a bug of the program that a
difference then shows.  A difference raises :class:`EngineMismatch` naming the first differing byte or
register, and the schedule."""
from __future__ import annotations

import collections

import numpy as np

from ..memory import GPUFault
from .run import CAPTURE_HEAD

STATS = collections.Counter()          # "compared", "faulted-alike", "threaded", "lockstep-only"
# LDS instructions that are not atomic (all other ds_ instructions read-modify-write or count)
_DS_PLAIN = ("ds_read", "ds_write", "ds_load", "ds_store", "ds_swizzle", "ds_permute", "ds_bpermute", "ds_nop")
_PLACEMENT_HWREGS = {4, 23, 24, 29}    # HW_ID (GFX9), HW_ID1/HW_ID2 (GFX10+), SHADER_CYCLES


def schedule_dependent(program, nprog, entry_ip: int) -> str | None:
    """The first instruction reachable from ``entry_ip`` whose effect may depend on the schedule, or None."""
    insts = program.instructions
    for i in sorted(nprog.reachable(entry_ip)):
        pc = nprog.base + int(nprog.code[i]["pc"])
        inst = insts.get(pc)
        if inst is None:
            continue
        name = inst.name
        if "_atomic" in name or name.startswith(("s_memtime", "s_memrealtime", "ds_gws", "s_sendmsg_rtn")) or \
                (name.startswith("ds_") and not name.startswith(_DS_PLAIN)) or \
                (name.startswith("s_getreg") and inst.fields.get("simm16", 0) & 0x3F in _PLACEMENT_HWREGS):
            return name
    return None


class EngineMismatch(AssertionError):
    pass


def _snapshot(mem):
    """Every allocation's bytes (arena allocations and host-mapped ranges), by start address: what a dispatch
    can write (it faults anywhere else).  Not the arena up to its high-water mark: after a large allocation
    was freed that would copy gigabytes of zeros."""
    with mem.lock:
        out = []
        for s in mem.starts:
            end, size, _, ext = mem.table[s]
            if ext is not None:
                out.append((s, ext, ext.copy()))
            else:
                off = s - mem.base
                out.append((s, None, mem.arena[off:off + size].copy()))
    return out


def _restore(mem, snap):
    for s, ext, data in snap:
        if ext is not None:
            ext[:] = data
        else:
            off = s - mem.base
            mem.arena[off:off + len(data)] = data


def _first_difference(mem, a, b) -> str:
    for (sa, ext, x), (sb, _, y) in zip(a, b):
        if sa != sb or len(x) != len(y):
            return f"the allocations changed during the dispatch (0x{sa:x} vs 0x{sb:x})"
        if not np.array_equal(x, y):
            i = int(np.argmax(x != y))
            if ext is not None:
                return f"host-mapped memory at 0x{sa + i:x}: numpy 0x{x[i]:02x} native 0x{y[i]:02x}"
            return (f"device memory at 0x{sa + i:x} (allocation 0x{sa:x}+0x{i:x}): numpy 0x{x[i]:02x} "
                    f"native 0x{y[i]:02x}")
    if len(a) != len(b):
        return "the allocations changed during the dispatch"
    return ""


def _register_difference(cap_a, cap_b, wpg) -> str:
    if np.array_equal(cap_a, cap_b):
        return ""
    row = int(np.argmax((cap_a != cap_b).any(axis=1)))
    col = int(np.argmax(cap_a[row] != cap_b[row]))
    group, wave = divmod(row, wpg)
    x, y = cap_a[row], cap_b[row]
    if col < 128 * 4:
        r = col // 4
        what = f"s{r}: numpy 0x{x[:512].view(np.uint32)[r]:x} native 0x{y[:512].view(np.uint32)[r]:x}"
    elif col < CAPTURE_HEAD:
        names = {128: "SCC", 129: "MODE", 130: "PC", 131: "PC"}
        k = col // 4
        what = f"{names[k]}: numpy 0x{x[512:528].view(np.uint32)[k - 128]:x} native " \
               f"0x{y[512:528].view(np.uint32)[k - 128]:x}"
    else:
        v = (col - CAPTURE_HEAD) // 4
        r, lane = divmod(v, 64)
        a = x[CAPTURE_HEAD:].view(np.uint32)[v]
        b = y[CAPTURE_HEAD:].view(np.uint32)[v]
        what = f"v{r}[{lane}]: numpy 0x{a:08x} native 0x{b:08x}"
    return f"flat workgroup {group} wave {wave}: {what}"


def differential(gpu, d, nat, nprog):
    """Run dispatch ``d`` on both engines; return the native result or raise (the shared fault / a mismatch)."""
    mem = gpu.memory
    before = _snapshot(mem)
    rows = max(d.nvgpr + 8, 1)
    total = d.counts[0] * d.counts[1] * d.counts[2] * d.waves_per_group
    d.capture = np.zeros((total, CAPTURE_HEAD + rows * 64 * 4), dtype=np.uint8)
    exc_np = exc_nat = None
    d.fair_turns = False          # the native lockstep schedule is lowest PC first (a spin on a flag hangs here)
    try:
        d.run()
    except GPUFault as exc:
        exc_np = exc
    after_np = _snapshot(mem)
    _restore(mem, before)
    res = None
    try:
        res = nat.run(d, nprog, lockstep=True, capture=True)
    except GPUFault as exc:
        exc_nat = exc
    name = d.kernel.demangled if d.kernel is not None else "?"
    if exc_np is not None or exc_nat is not None:
        if exc_np is None or exc_nat is None or exc_np.code != exc_nat.code or str(exc_np) != str(exc_nat):
            raise EngineMismatch(f"{name}: numpy {'raised ' + repr(str(exc_np)) if exc_np else 'ran'}; "
                                 f"native {'raised ' + repr(str(exc_nat)) if exc_nat else 'ran'}")
        STATS["faulted-alike"] += 1
        raise exc_nat
    after_nat = _snapshot(mem)
    msg = _first_difference(mem, after_np, after_nat) or _register_difference(d.capture, res.capture, d.waves_per_group)
    if msg:
        raise EngineMismatch(f"{name}: {msg}")
    if d.wave_instructions != res.wave_instructions:
        raise EngineMismatch(f"{name}: wave-instructions numpy {d.wave_instructions} native {res.wave_instructions}")
    STATS["compared"] += 1
    if schedule_dependent(d.program, nprog, nprog.index[d.entry]) is not None:
        STATS["lockstep-only"] += 1
        return res
    _restore(mem, before)
    try:
        res = nat.run(d, nprog, capture=True)
    except GPUFault as exc:
        raise EngineMismatch(f"{name}: the numpy engine ran, the native engine's threaded schedule raised "
                             f"{str(exc)!r}") from None
    msg = _first_difference(mem, after_np, _snapshot(mem)) or _register_difference(d.capture, res.capture,
                                                                                  d.waves_per_group)
    if msg:
        raise EngineMismatch(f"{name} (threaded schedule): {msg}")
    STATS["threaded"] += 1
    return res



def bisect(gpu, d, nat, nprog, hi: int = 1 << 22) -> str:
    """Debugging aid: the first step budget (watchdog steps) at which the two engines' registers differ,
    both running the dispatch from the same memory, and where.  Slow: ~22 runs of the dispatch each way."""
    from ..engine import Dispatch

    mem = gpu.memory
    before = _snapshot(mem)
    rows = max(d.nvgpr + 8, 1)
    total = d.counts[0] * d.counts[1] * d.counts[2] * d.waves_per_group

    def numpy_state(n):
        _restore(mem, before)
        e = Dispatch(gpu, d.program, d.kernel, d.kd, kernel_object=d.kernel_object, kernarg_address=d.kernarg,
                     grid_size=d.grid, workgroup_size=d.wg, group_segment_size=d.lds_size,
                     private_segment_size=d.private, dispatch_ptr=d.dispatch_ptr, queue_ptr=d.queue_ptr,
                     dispatch_id=d.dispatch_id, max_steps=n)
        e.capture = np.zeros((total, CAPTURE_HEAD + rows * 256), np.uint8)
        inner = e._run_batch_inner

        def run_batch(flat):
            try:
                inner(flat)
            except GPUFault:
                e._record(e._state, flat)
                raise
        e._run_batch_inner = run_batch
        try:
            e.run()
        except GPUFault:
            pass
        return e.capture

    def native_state(n):
        _restore(mem, before)
        saved, d.max_steps = d.max_steps, n
        try:
            return nat.run(d, nprog, lockstep=True, capture=True).capture
        except GPUFault as exc:
            return exc.capture
        finally:
            d.max_steps = saved

    def differs(n):
        return _register_difference(numpy_state(n), native_state(n), d.waves_per_group)

    lo = 1
    while lo < hi:
        mid = (lo + hi) // 2
        if differs(mid):
            hi = mid
        else:
            lo = mid + 1
    msg = differs(lo)
    prev = numpy_state(lo - 1)
    pcs = sorted({int(x) for x in prev[:, 520:528].copy().view(np.uint64).reshape(-1)})
    _restore(mem, before)
    where = ", ".join(f"0x{p - d.program.base:x} {d.program.instructions[p].name}" for p in pcs
                      if p in d.program.instructions)
    return f"first difference after {lo} steps: {msg}; the waves were at {where}"
