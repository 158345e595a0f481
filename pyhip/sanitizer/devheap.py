"""memcheck of device-side ``malloc``/``free`` (docs/check.md, *Device-side malloc and free*).

hipcc's device libraries implement them as ``__ockl_dm_alloc(size)`` / ``__ockl_dm_dealloc(ptr)``: functions of
the code object (called with ``s_swappc_b64``; size or pointer in v[0:1] per lane, the result in v[0:1] at the
return address s[30:31]) over a heap of 2 MiB slabs that pyhip's hostcall service hands out.  Inside a slab
blocks of one size class follow each other, so an access past a block's requested size, or into a freed one,
stays inside mapped memory and nothing faults.  While memcheck is on, a program whose code object has those two
functions runs on the numpy engine with the functions' entries and the instructions after every call watched
(``device.PC_HOOKS``): each block a lane gets is recorded with its requested size and where it was allocated
(kernel, workgroup, wave, lane); each free is checked:

- ``invalid-free``: a pointer device malloc did not return (host allocation, the middle of a block, anything
  else) — reported, and not freed (the lane frees NULL: ockl would take the pointer's 2 MiB-aligned base for a
  slab header and corrupt its heap);
- ``double-free``: a block already freed (and not handed out again) — reported, and not freed again.

Every global access of the program's own code (not of ockl's functions, which read and write slab headers) is
checked against the blocks (``vmem.GLOBAL_CHECKS``): inside a freed block is ``use-after-free``; past a live
block's requested size but before the next block of its slab, ``out-of-bounds``.  Blocks never freed when the
checks end are ``leaks`` of kind ``device-heap-leak`` naming the kernel that allocated them (compute-sanitizer's
``--leak-check full`` reports device-heap leaks too).
"""
from __future__ import annotations

import bisect
import threading

import numpy as np

ALLOC, DEALLOC = "__ockl_dm_alloc", "__ockl_dm_dealloc"
SLAB = 2 << 20                  # ockl's slab size: blocks of a slab share one 2 MiB-aligned region


def functions(program) -> dict | None:
    """The device-malloc functions of ``program``: {name: (start, end)} absolute — or None when the code object
    does not have both (no device malloc; or inlined)."""
    got = getattr(program, "_devheap_functions", False)
    if got is not False:
        return got
    out = None
    try:
        syms = program.code_object.symbols
    except Exception:           # (no symbol table; a foreign code object) pylint: disable=broad-except
        syms = {}
    if ALLOC in syms and DEALLOC in syms:
        out = {n: (program.base + syms[n].value, program.base + syms[n].value + syms[n].size) for n in (ALLOC, DEALLOC)}
    program._devheap_functions = out
    return out


def library_ranges(program) -> list[tuple[int, int]]:
    """[start, end) absolute of the device libraries' functions in ``program`` (``__ockl_*``: device malloc's heap,
    hostcalls): racecheck leaves their accesses out (their own atomics and locks order them; they read and write
    slab headers and hostcall buffers, never the program's data) and memcheck's heap check too."""
    got = getattr(program, "_ockl_ranges", None)
    if got is None:
        try:
            syms = program.code_object.symbols
        except Exception:       # (no symbol table) pylint: disable=broad-except
            syms = {}
        got = program._ockl_ranges = sorted((program.base + s.value, program.base + s.value + s.size)
                                            for n, s in syms.items() if n.startswith("__ockl_") and s.type == "STT_FUNC")
    return got


def in_library(program, pc: int) -> bool:
    return any(s <= pc < e for s, e in library_ranges(program))


def veto(program) -> str | None:
    """device.NATIVE_VETOES: a program with device malloc runs on the numpy engine while the check is on."""
    return "memcheck: device malloc/free are watched on the numpy engine" if functions(program) else None


class Block:
    __slots__ = ("start", "size", "allocated", "freed", "site")

    def __init__(self, start: int, size: int, allocated: str):
        self.start, self.size, self.allocated, self.freed = start, size, allocated, None
        self.site = (None, None, None)      # (kernel, PC offset of the malloc call, program)


class Heap:
    """The blocks device malloc handed out (live and freed) in one session, and the checks on them."""

    def __init__(self, report, first_block):
        self.report = report                    # fn(report dict, times)
        self._first_block = first_block         # fn(): called once, when the first block is recorded
        self.blocks: dict[int, Block] = {}      # start -> the latest block there
        self._starts: list[int] = []
        self._lock = threading.Lock()
        self._pending: dict[tuple, tuple] = {}  # (id(state), wave) -> (return pc, lanes, sizes)

    # -- the hooks ----------------------------------------------------------------------------------------
    def hook(self, program, pc: int, inst, fn):
        """device.PC_HOOKS: wrap the entries of the two functions and the instructions after calls."""
        f = functions(program)
        if f is None:
            return fn
        if pc == f[ALLOC][0]:
            return self._wrap(fn, self._on_alloc)
        if pc == f[DEALLOC][0]:
            return self._wrap(fn, lambda st, w, p=program: self._on_free(st, w, p))
        prev = _previous(program, pc)
        if prev is not None and prev.name in ("s_swappc_b64", "s_call_b64"):
            return self._wrap(fn, lambda st, w, p=pc: self._on_return(st, w, p))
        return fn

    @staticmethod
    def _wrap(fn, before):
        def run(st, w):
            before(st, w)
            return fn(st, w)
        return run

    def _on_alloc(self, st, w) -> None:
        from ..emu.state import indices
        sel = indices(st, w)
        for k, wave in enumerate(sel.tolist()):
            ex = _exec(st, wave)
            if not ex:
                continue
            lanes = [l for l in range(st.lanes) if ex >> l & 1]
            sizes = [int(st.vgpr[0, wave, l]) | int(st.vgpr[1, wave, l]) << 32 for l in lanes]
            ret = int(st.sgpr[wave, 30]) | int(st.sgpr[wave, 31]) << 32
            self._pending[(id(st), wave)] = (ret, lanes, sizes)

    def _on_return(self, st, w, pc: int) -> None:
        if not self._pending:
            return
        from ..emu.state import indices
        from .lanes import running
        at = running()
        for wave in indices(st, w).tolist():
            got = self._pending.get((id(st), wave))
            if got is None or got[0] != pc:
                continue
            del self._pending[(id(st), wave)]
            _, lanes, sizes = got
            where = _where(at, st, wave)
            site = pc - 4 - at[0].program.base if at else None            # the call (s_swappc_b64)
            line = _line(at[0].program, site) if at else None
            kernel = at[0].kernel.demangled if at and at[0].kernel is not None else None
            with self._lock:
                for lane, size in zip(lanes, sizes):
                    p = int(st.vgpr[0, wave, lane]) | int(st.vgpr[1, wave, lane]) << 32
                    if p:
                        b = Block(p, size, f"malloc({size}) in kernel {where} lane {lane}" + (f" at {line}" if line else ""))
                        b.site = (kernel, site, at[0].program if at else None)
                        self._add(b)

    def _add(self, b: Block) -> None:
        if self._first_block is not None:       # (global accesses are looked at from now on)
            self._first_block()
            self._first_block = None
        if b.start not in self.blocks:
            bisect.insort(self._starts, b.start)
        self.blocks[b.start] = b

    def _on_free(self, st, w, program) -> None:
        from ..emu.state import indices
        from .lanes import running
        at = running()
        for wave in indices(st, w).tolist():
            ex = _exec(st, wave)
            for lane in range(st.lanes):
                if not ex >> lane & 1:
                    continue
                p = int(st.vgpr[0, wave, lane]) | int(st.vgpr[1, wave, lane]) << 32
                if not p:
                    continue                                  # free(NULL): nothing
                with self._lock:
                    b = self.blocks.get(p)
                    if b is not None and b.freed is None:
                        b.freed = f"free in kernel {_where(at, st, wave)} lane {lane}"
                        continue
                bad = self._bad_free(p, b, at, st, wave, lane, program, _call_site(st, wave))
                if bad is not None:
                    self.report(bad, 1)
                    st.vgpr[0, wave, lane] = 0                # not freed: the lane frees NULL
                    st.vgpr[1, wave, lane] = 0

    def _bad_free(self, p: int, b, at, st, wave: int, lane: int, program, pc: int) -> dict:
        ctx = _context(at, st, wave, lane, program, pc)
        if b is not None:
            r = dict(ctx, checker="memcheck", kind="double-free",
                     message=f"free of a {b.size}-byte block device malloc returned that was already freed")
            r["allocation"] = _allocation(b)
        else:
            inside = self.find(p)
            if inside is not None:
                r = dict(ctx, checker="memcheck", kind="invalid-free",
                         message=f"free of byte {p - inside.start} of a {inside.size}-byte block device malloc returned "
                                 "(not its start)")
                r["allocation"] = _allocation(inside)
            else:
                mem = getattr(at[0].gpu, "memory", None) if at else None
                found = mem.find(p) if mem is not None else None
                what = "an address device malloc did not return"
                r = dict(ctx, checker="memcheck", kind="invalid-free", message=f"free of {what}")
                if found is not None:
                    from .memcheck import allocation
                    start, end, kind = found
                    r["message"] = f"free of {what}: byte {p - start} of a {end - start}-byte {kind} allocation"
                    r["allocation"] = allocation(start, end - start, kind, mem.origins.get(start))
        r["address"] = p
        r["_program"] = program
        return r

    # -- lookups and access checks ------------------------------------------------------------------------
    def find(self, a: int) -> Block | None:
        """The block whose requested bytes hold ``a``."""
        i = bisect.bisect_right(self._starts, a) - 1
        if i < 0:
            return None
        b = self.blocks[self._starts[i]]
        return b if a < b.start + max(b.size, 1) else None

    def _near(self, a: int) -> Block | None:
        """The block ``a`` is past the requested end of, before the next block of its slab."""
        i = bisect.bisect_right(self._starts, a) - 1
        if i < 0:
            return None
        b = self.blocks[self._starts[i]]
        if a < b.start + b.size or a // SLAB != b.start // SLAB:
            return None
        return b

    def access(self, st, w, widx, lidx, addrs, size: int, kind: str) -> None:
        """vmem.GLOBAL_CHECKS: lanes of the numpy engine accessing global memory (before the access)."""
        from .lanes import running
        if not self._starts:
            return
        at = running()
        if at is None:
            return
        eng, pc = at
        if functions(eng.program) is None or in_library(eng.program, pc):
            return                                            # (ockl's own accesses: slab headers)
        lo, hi = self._starts[0], self._starts[-1] + SLAB
        a = np.asarray(addrs, np.uint64)
        near = np.nonzero((a + np.uint64(size) > np.uint64(lo)) & (a < np.uint64(hi)))[0]
        found: dict[tuple, list] = {}
        for k in near.tolist():
            x = int(a[k])
            b = None
            for byte in range(size):                          # (the first byte of the access that is bad)
                b = self.find(x + byte)
                if b is not None and b.freed is not None:
                    found.setdefault(("use-after-free", b.start), [k, x + byte, b, 0])[3] += 1
                    break
                if b is None:
                    nb = self._near(x + byte)
                    if nb is not None and nb.freed is None:
                        found.setdefault(("out-of-bounds", nb.start), [k, x + byte, nb, 0])[3] += 1
                        break
        for (kind_, _), (k, x, b, n) in found.items():
            from ..emu.state import indices
            wave = int(indices(st, w)[widx[k]])
            r = dict(_context(at, st, wave, int(lidx[k]), eng.program), checker="memcheck", kind=kind_)
            r["_program"] = eng.program
            if kind_ == "use-after-free":
                r["message"] = f"access at byte {x - b.start} of a {b.size}-byte block of device malloc that was freed"
            else:
                r["message"] = (f"access at byte {x - b.start} of a {b.size}-byte block of device malloc "
                                f"({x - b.start - b.size} bytes past its requested size; inside its heap slab: a GPU "
                                "would not fault)")
            r["address"] = x
            r["access"] = f"{size} bytes, {kind}"
            r["allocation"] = _allocation(b)
            self.report(r, n)

    def leaks(self) -> list[tuple[dict, object]]:
        """(report, program) per malloc call site (kernel and PC) of the blocks never freed: how many blocks and
        bytes, the first block."""
        sites: dict[tuple, list] = {}
        for b in self.blocks.values():
            if b.freed is None:
                sites.setdefault(b.site[:2], [b, 0, 0, b.site[2]])
                sites[b.site[:2]][1] += 1
                sites[b.site[:2]][2] += b.size
        out = []
        for (kernel, site), (b, n, total, program) in sites.items():
            r = {"checker": "leaks", "kind": "device-heap-leak",
                 "message": f"{total} bytes in {n} block(s) allocated by device malloc and never freed",
                 "kernel": kernel, "pc": site, "address": b.start, "allocation": _allocation(b), "bytes": total,
                 "blocks": n}
            if program is not None and site is not None:
                inst = program.instructions.get(program.base + site)
                if inst is not None:
                    from ..emu.engine import describe
                    r["instruction"] = describe(inst, program.code_object.processor)
            out.append((r, program))
        return out


def _line(program, pc) -> str | None:
    from .source import line_for
    try:
        return line_for(program.code_object, pc) if pc is not None else None
    except Exception:           # (no line tables) pylint: disable=broad-except
        return None


def _exec(st, wave: int) -> int:
    from ..emu.state import EXEC
    return int(st.sgpr[wave, EXEC]) | int(st.sgpr[wave, EXEC + 1]) << 32


def _call_site(st, wave: int) -> int:
    """The absolute PC of the call into the function the wave is entering (s_swappc_b64: 4 bytes before s[30:31])."""
    return (int(st.sgpr[wave, 30]) | int(st.sgpr[wave, 31]) << 32) - 4


def _previous(program, pc: int):
    """The instruction just before ``pc`` (None at a function start)."""
    insts = program.instructions
    for back in (4, 8):
        i = insts.get(pc - back)
        if i is not None and i.size == back:
            return i
    return None


def _where(at, st, wave: int) -> str:
    eng = at[0] if at else None
    kernel = eng.kernel.demangled if eng is not None and eng.kernel is not None else "?"
    wg = [int(x) for x in st.group_ids[st.group[wave]]]
    return f"{kernel}, workgroup {wg}, wave {int(st.wave_in_group[wave])}"


def _context(at, st, wave: int, lane: int, program, pc: int | None = None) -> dict:
    """Where a report happened: ``pc`` (absolute) or else the instruction the engine runs now."""
    from ..emu.engine import describe
    eng, now = at if at else (None, None)
    pc = now if pc is None else pc
    r = {"kernel": eng.kernel.demangled if eng is not None and eng.kernel is not None else None,
         "workgroup": [int(x) for x in st.group_ids[st.group[wave]]], "wave": int(st.wave_in_group[wave]),
         "lane": lane}
    if pc is not None:
        r["pc"] = pc - program.base
        inst = program.instructions.get(pc)
        if inst is not None:
            r["instruction"] = describe(inst, program.code_object.processor)
    return r


def _allocation(b: Block) -> dict:
    a = {"start": b.start, "size": b.size, "kind": "device-malloc", "allocated": b.allocated}
    if b.freed:
        a["freed"] = b.freed
    return a
