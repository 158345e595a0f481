"""A kernel's code → one LLVM function ``i32 @kernel(ptr %wave, ptr %ctx)`` that runs a wave from the block
whose instruction index is in ``wave->ip`` until it ends, waits at a barrier, faults or uses up its
instruction budget at a loop head (native/engine/interp.h, ``run_wave_jit``).

Control flow is the ISA's own: scalar branches become LLVM branches between basic blocks (one per ISA
basic block), indirect jumps a switch over the blocks a jump may reach (function entries and return
addresses).  Each ALU instruction comes from its description (pyhip/emu/spec) through the LLVM backend
(``irgen``): per-lane values as whole-wave vectors, the result written under EXEC.  Instructions without a
description (memory, MFMA, system instructions) call their handler in the native runtime through their
lowered record (``pyhip_jit_step``), which reads and writes the wave's registers in memory."""
from __future__ import annotations

from ..spec import load_all as load_descriptions
from ..spec.lang import B1, U32, Write
from ..spec.operands import Build, Fault
from .errors import Unsupported
from .irgen import Emitter
from .memory import GeneratedMemory
from .regions import LaneRegions

ST_CONT, ST_DONE, ST_BARRIER, ST_FAULT, ST_SLICE = 0, 1, 2, 3, 4
FK_JUMP = 9
CBRANCH = {"s_cbranch_scc0", "s_cbranch_scc1", "s_cbranch_vccz", "s_cbranch_vccnz", "s_cbranch_execz",
           "s_cbranch_execnz"}
# instructions after which a wave may leave the function (its handler returns a status other than CONT) or
# jump anywhere: their successor is a block (resumable)
BLOCK_END = ("s_endpgm", "s_barrier", "s_sleep", "s_trap", "s_sethalt", "s_setpc_b64", "s_swappc_b64",
             "s_branch", "s_cbranch", "s_call_b64", "ds_gws", "s_rfe")
# never taken (debugger branches) or nothing to do
NOT_TAKEN = {"s_cbranch_cdbgsys", "s_cbranch_cdbguser", "s_cbranch_cdbgsys_or_user", "s_cbranch_cdbgsys_and_user"}
MODE_WRITERS = ("s_setreg", "s_denorm_mode", "s_round_mode")
CONTROL = CBRANCH | NOT_TAKEN | {"s_branch", "s_setpc_b64", "s_swappc_b64"}


class KernelIR(LaneRegions, GeneratedMemory):
    """The IR of one kernel entry of a lowered program (``nprog``: pyhip/emu/native/lower.NativeProgram)."""

    def __init__(self, nprog, program, K, entry_ip: int, mode: int, layout, name="kernel", lockstep: bool = False,
                 compact: bool = False):
        self.nprog, self.program, self.K = nprog, program, K
        # compact (the quick tier): a lane region's masked loop only in its exact form, no fast one (about a
        # third less code to compile; a partial EXEC then always pays for the NaN rule)
        self.compact = compact
        self.W = K.lanes
        self.layout = layout
        self.name = name
        self.descriptions = load_descriptions()
        self.insts = program.instructions
        self.pcs = sorted(nprog.index, key=nprog.index.get)        # ip -> pc
        self.entry_ip = entry_ip
        self.max_row = -1                        # the highest VGPR row the generated code touches
        self._graphs: dict = {}                  # id(writes) -> (writes, their nodes): _graph
        self.reach = self._reachable(entry_ip)
        self.dynamic_mode = any(self._inst(i).name.startswith(MODE_WRITERS) for i in self.reach)
        self.mode = None if self.dynamic_mode else mode
        # lockstep form (the differential test's schedule): every instruction a block of its own, each call
        # runs one instruction and returns (ST_SLICE) with wave->ip at the next one; the scheduler counts
        self.lockstep = lockstep
        self.leaders = sorted(self.reach) if lockstep else self._leaders()
        self.C = chunk_lanes(self.W)            # lanes per chunk in lane regions
        self.e = Emitter(self.W)
        self.e.read_hook = self._read
        self.e.word_hook = self._mask_word_of
        self.stats = {"described": 0, "bridged": 0, "control": 0}
        self._inline_ops = None

    # -- analysis ------------------------------------------------------------------------------------------------
    def _inst(self, ip):
        return self.insts[self.pcs[ip]]

    def _reachable(self, i0):
        n = self.nprog.n
        seen, todo, indirect = set(), [i0], False
        while todo:
            i = todo.pop()
            if i in seen or i >= n or i < 0:
                continue
            seen.add(i)
            indirect |= self.nprog.indirect[i]
            if not self.nprog.ends[i]:
                todo.append(self.nprog.nxt[i])
            if self.nprog.tgt[i] >= 0:
                todo.append(self.nprog.tgt[i])
        if indirect:
            seen = set(range(n))
        bad = sorted(i for i in seen if i in self.nprog.reasons)
        for i in seen:                           # the lowered records of bridged instructions name their rows
            if i not in self.nprog.described:
                self.max_row = max(self.max_row, int(self.nprog.vmax[i]) - 1)
        if bad:
            raise Unsupported(self.nprog.reasons[bad[0]])
        return seen

    def _leaders(self):
        lead = {self.entry_ip}
        n = self.nprog.n
        for i in self.reach:
            name = self._inst(i).name
            if name.startswith(BLOCK_END):
                nx = self.nprog.nxt[i]
                if nx < n:
                    lead.add(nx)
            t = self.nprog.tgt[i]
            if t >= 0 and t < n:
                lead.add(t)
        # function entries (targets of indirect calls): the code object's functions, and the targets of the
        # PC-relative addresses the code computes (s_getpc_b64 then s_add_u32 / s_addc_u32 of literals: how
        # calls reach device functions, also in code found in memory, which has no symbol table)
        for pc in [*getattr(self.program, "function_starts", ()), *self._pc_relative_targets()]:
            ip = self.nprog.index.get(pc)
            if ip is not None and ip in self.reach:
                lead.add(ip)
        return sorted(x for x in lead if x in self.reach)

    def _pc_relative_targets(self):
        """Addresses computed as s_getpc_b64 s[r:r+1] followed (within a few instructions) by s_add_u32 s[r],
        s[r], lo and s_addc_u32 s[r+1], s[r+1], hi with literal lo, hi: the PC of the next instruction plus
        the 64-bit offset.  A wrong guess only adds a block boundary."""
        out = []
        n = self.nprog.n
        for ip in sorted(self.reach):
            inst = self._inst(ip)
            if inst.name != "s_getpc_b64":
                continue
            r = inst.fields.get("sdst")
            lo = hi = None
            for j in range(ip + 1, min(ip + 7, n)):
                nxt = self._inst(j)
                f, lit = nxt.fields, getattr(nxt, "literal", None)
                srcs = {f.get("ssrc0"), f.get("ssrc1")}
                if lit is None or 255 not in srcs:
                    continue
                if nxt.name == "s_add_u32" and f.get("sdst") == r and r in srcs:
                    lo = lit & 0xFFFFFFFF
                elif nxt.name == "s_addc_u32" and f.get("sdst") == r + 1 and r + 1 in srcs:
                    hi = lit & 0xFFFFFFFF
            if lo is not None and hi is not None:
                out.append((self.pcs[ip] + inst.size + (hi << 32 | lo)) & 0xFFFFFFFFFFFFFFFF)
        return out

    # -- state access ----------------------------------------------------------------------------------------------
    def _ptr(self, base: str, off: int) -> str:
        if off == 0:
            return base
        return self.e.emit(f"getelementptr inbounds i8, ptr {base}, i64 {off}", "p")

    def _read(self, n):
        e = self.e
        loc = n.attr
        k = loc[0]
        if e.chunk is not None:
            return self._read_chunk(n)
        if k == "mask":
            word = self._word64(loc[1]) if self.W == 64 else self._sload(loc[1])
            return e.word_to_lanes(word)
        if k == "v":
            return self._load_row(loc[1])
        if k == "s":
            return self._sload(loc[1])
        if k == "scc":
            s = e.emit(f"load i32, ptr {self._ptr('%w', self.layout['scc'])}, align 4, !tbaa !4", "scc")
            return e.emit(f"icmp ne i32 {s}, 0")
        if k == "exec_lanes":
            return e.word_to_lanes(self._exec_word())
        if k == "mode":
            return e.emit(f"load i32, ptr {self._ptr('%w', self.layout['mode'])}, align 4, !tbaa !4", "mode")
        raise Unsupported(f"compiled engine: no machine state {loc}")

    def _mask_word_of(self, n):
        """The lane-mask word (i``W``) a read of lanes comes from: EXEC or an SGPR (pair); None otherwise."""
        k = n.attr[0]
        if k == "exec_lanes":
            return self._exec_word()
        if k == "mask":
            return self._word64(n.attr[1]) if self.W == 64 else self._sload(n.attr[1])
        return None

    def _sload(self, r: int) -> str:
        return self.e.emit(f"load i32, ptr {self._ptr('%w', self.layout['s'] + 4 * r)}, align 4, !tbaa !4", "s")

    def _sstore(self, r: int, v: str) -> None:
        self.e.line(f"store i32 {v}, ptr {self._ptr('%w', self.layout['s'] + 4 * r)}, align 4, !tbaa !4")

    def _exec_word(self) -> str:
        e = self.e
        lo = self._sload(126)
        if self.W == 32:
            return lo
        hi = self._sload(127)
        a = e.emit(f"zext i32 {lo} to i64")
        b = e.emit(f"zext i32 {hi} to i64")
        b = e.emit(f"shl i64 {b}, 32")
        return e.emit(f"or i64 {a}, {b}")

    def _word64(self, r: int) -> str:
        e = self.e
        a = e.emit(f"zext i32 {self._sload(r)} to i64")
        b = e.emit(f"zext i32 {self._sload(r + 1)} to i64")
        b = e.emit(f"shl i64 {b}, 32")
        return e.emit(f"or i64 {a}, {b}")

    # -- instructions ------------------------------------------------------------------------------------------------
    def _described(self, inst):
        """The instruction's writes from its description, or None (no description / cannot be built)."""
        desc = self.descriptions.get(inst.name)
        if desc is None:
            return None
        b = Build(inst, self.K, self.mode)
        try:
            desc(b)
        except (NotImplementedError, Fault):
            return None
        for n in self._graph(b.writes):
            if n.op == "read" and n.attr[0] == "v":
                self.max_row = max(self.max_row, n.attr[1])
        for w in b.writes:
            if w.loc[0] == "v":
                self.max_row = max(self.max_row, w.loc[1])
        return b.writes

    def _graph(self, writes) -> list:
        """Every node of the writes' values and masks (walked once per instruction: the analyses share it)."""
        hit = self._graphs.get(id(writes))
        if hit is None or hit[0] is not writes:
            from ..spec.lang import walk
            hit = self._graphs[id(writes)] = (writes, walk([w.value for w in writes] +
                                                           [w.mask for w in writes if w.mask is not None]))
        return hit[1]

    def _emit_writes(self, writes: list[Write]) -> None:
        e = self.e
        e.values.clear()
        vals = []
        for wr in writes:
            loc = wr.loc
            vec = loc[0] in ("v", "mask")
            v = e.value(wr.value, vec)
            m = e.value(wr.mask, True) if wr.mask is not None else None
            vals.append((wr, v, m))
        for wr, v, m in vals:
            loc = wr.loc
            if loc[0] == "v":
                p = self._ptr("%vbase", loc[1] * 256)
                VT = f"<{self.W} x i32>"
                if m is not None:
                    old = e.emit(f"load {VT}, ptr {p}, align 4, !tbaa !3", "old")
                    old = e.emit(f"freeze {VT} {old}")
                    v = e.emit(f"select <{self.W} x i1> {m}, {VT} {v}, {VT} {old}")
                e.line(f"store {VT} {v}, ptr {p}, align 4, !tbaa !3")
            elif loc[0] == "s":
                self._sstore(loc[1], v)
            elif loc[0] == "scc":
                z = e.emit(f"zext i1 {v} to i32")
                e.line(f"store i32 {z}, ptr {self._ptr('%w', self.layout['scc'])}, align 4, !tbaa !4")
            elif loc[0] == "mode":
                e.line(f"store i32 {v}, ptr {self._ptr('%w', self.layout['mode'])}, align 4, !tbaa !4")
            elif loc[0] == "mask":
                word = e.emit(f"bitcast <{self.W} x i1> {v} to i{self.W}")
                self._store_mask_word(loc[1], word)
            else:
                raise Unsupported(f"compiled engine: cannot write {loc}")
        e.values.clear()

    def _bridge(self, ip: int) -> None:
        """The instruction's native handler through its lowered record; a status other than CONT leaves."""
        e = self.e
        st = e.emit(f"call i32 @pyhip_jit_step(ptr %c, ptr %w, i32 {ip})", "st")
        ok = e.emit(f"icmp eq i32 {st}, 0")
        cont = f"ok{ip}_{e.n}"
        e.line(f"br i1 {ok}, label %{cont}, label %leave")
        self._phi_leave.append((st, e.block))
        self._label(cont)
        self.stats["bridged"] += 1

    def _label(self, name: str) -> None:
        self.e.lines.append(f"{name}:")
        self.e.block = name
        self.e.invalidate()

    def _goto(self, ip: int) -> None:
        """End the block with a jump to instruction ``ip`` (lockstep: return to the scheduler there)."""
        e = self.e
        if self.lockstep and ip < self.nprog.n:
            e.line(f"store i32 {ip}, ptr {self._ptr('%w', self.layout['ip'])}, align 4")
            e.line(f"ret i32 {ST_SLICE}")
        else:
            e.line(f"br label {self._jump_to(ip)}")

    def _jump_to(self, ip: int) -> str:
        if ip in self.leader_set:
            return f"%b{ip}"
        if ip >= self.nprog.n:                 # not an instruction: its badpc record raises the fault
            self._bad_targets.add(ip)
            return f"%bad{ip}"
        return "%badjump"

    def _store_mask_word(self, r: int, word: str) -> None:
        e = self.e
        if self.W == 64:
            lo = e.emit(f"trunc i64 {word} to i32")
            hi = e.emit(f"lshr i64 {word}, 32")
            hi = e.emit(f"trunc i64 {hi} to i32")
            self._sstore(r, lo)
            if r + 1 < 128:
                self._sstore(r + 1, hi)
        else:
            self._sstore(r, word)

    # -- the function --------------------------------------------------------------------------------------------------
    def build(self) -> str:
        e = self.e
        lay = self.layout
        self.leader_set = set(self.leaders)
        self._phi_leave: list[tuple[str, str]] = []
        self._bad_targets: set[int] = set()
        back_targets = set()
        for i in self.reach:
            t = self.nprog.tgt[i]
            if 0 <= t <= i:
                back_targets.add(t)
        e.lines.append("entry:")
        e.block = "entry"
        e.lines.append("  ;ALLOCAS")
        e.line(f"%vbase = load ptr, ptr {self._ptr('%w', lay['v'])}, align 8")
        e.line(f"%ip0 = load i32, ptr {self._ptr('%w', lay['ip'])}, align 4")
        e.line("br label %dispatch")
        e.lines.append("dispatch:")
        e.line("%ipd = phi i32 [%ip0, %entry], [%ipj, %indirect]")
        cases = " ".join(f"i32 {ip}, label %b{ip}" for ip in self.leaders)
        e.line(f"switch i32 %ipd, label %badjump [ {cases} ]")
        order = sorted(self.reach)
        pos = 0
        blocks = []
        for ip in order:
            if ip in self.leader_set:
                blocks.append([ip])
            elif blocks:
                blocks[-1].append(ip)
        for blk in blocks:
            head = blk[0]
            self._label(f"b{head}")
            if head in back_targets and not self.lockstep:
                cnt = e.emit(f"load i64, ptr {self._ptr('%w', lay['count'])}, align 8")
                lim = e.emit(f"load i64, ptr {self._ptr('%c', lay['jit_limit'])}, align 8")
                y = e.emit(f"icmp sge i64 {cnt}, {lim}")
                e.line(f"br i1 {y}, label %y{head}, label %run{head}")
                self._label(f"y{head}")
                e.line(f"store i32 {head}, ptr {self._ptr('%w', lay['ip'])}, align 4")
                e.line(f"ret i32 {ST_SLICE}")
                self._label(f"run{head}")
            if not self.lockstep:
                cnt = e.emit(f"load i64, ptr {self._ptr('%w', lay['count'])}, align 8")
                cnt2 = e.emit(f"add i64 {cnt}, {len(blk)}")
                e.line(f"store i64 {cnt2}, ptr {self._ptr('%w', lay['count'])}, align 8")
            terminated = False
            region = self._new_region()
            for k, ip in enumerate(blk):
                inst = self._inst(ip)
                # (an instruction lowered to a handler is the handler's even when its name has a description:
                # a v_mov_b32 inside a GFX9 VGPR index mode region)
                writes = self._described(inst) if inst.name not in CONTROL and ip in self.nprog.described else None
                if writes is not None:
                    kind, ureads, written = self._classify(writes)
                    if kind != "wide":
                        if not self._region_add(region, ip, kind, writes, ureads, written):
                            self._flush_region(region)
                            self._region_add(region, ip, kind, writes, ureads, written)
                        continue
                self._flush_region(region)
                terminated = self._instruction(ip, inst, writes)
                if terminated and k != len(blk) - 1:
                    raise Unsupported(f"internal: block ends early at {inst.name}")
            if not terminated:
                self._flush_region(region)
            if not terminated:
                nx = self.nprog.nxt[blk[-1]]
                self._goto(nx)
            pos += 1
        # indirect jumps: the target instruction index was stored in wave->ip by the handler
        e.lines.append("indirect:")
        e.line(f"%ipj = load i32, ptr {self._ptr('%w', lay['ip'])}, align 4")
        e.line("br label %dispatch")
        e.lines.append("badjump:")
        e.line(f"%bjip = load i32, ptr {self._ptr('%w', lay['ip'])}, align 4")
        e.line("%bjst = call i32 @pyhip_jit_fault(ptr %c, ptr %w, i32 %bjip, i32 9, i64 0, i32 0)")
        e.line("ret i32 %bjst")
        for ip in sorted(self._bad_targets):
            e.lines.append(f"bad{ip}:")
            e.line(f"%badst{ip} = call i32 @pyhip_jit_step(ptr %c, ptr %w, i32 {ip})")
            e.line(f"ret i32 %badst{ip}")
        e.lines.append("leave:")
        if self._phi_leave:
            inc = ", ".join(f"[{v}, %{b}]" for v, b in self._phi_leave)
            e.line(f"%lst = phi i32 {inc}")
            e.line("ret i32 %lst")
        else:
            e.line("unreachable")
        body = "\n".join(e.lines).replace("  ;ALLOCAS", "\n".join("  " + a for a in e.entry_allocas))
        decls = "\n".join(sorted(e.declares))
        return f"""; pyhip compiled kernel
target triple = "{self.layout['triple']}"
declare i32 @pyhip_jit_step(ptr, ptr, i32)
declare i32 @pyhip_jit_fault(ptr, ptr, i32, i32, i64, i32)
declare ptr @pyhip_jit_xlate(ptr, i32, i64, i32)
{decls}

define i32 @{self.name}(ptr noalias %w, ptr noalias %c) {{
{body}
}}

!0 = !{{!"pyhip tbaa"}}
!1 = !{{!"vgpr", !0, i64 0}}
!2 = !{{!"wave", !0, i64 0}}
!3 = !{{!1, !1, i64 0}}
!4 = !{{!2, !2, i64 0}}
"""

    def _instruction(self, ip: int, inst, writes=None) -> bool:
        """IR for one instruction; True when it ended the block (a terminator was emitted)."""
        e = self.e
        name = inst.name
        nx = self.nprog.nxt[ip]
        if name == "s_branch":
            self._goto(self.nprog.tgt[ip])
            self.stats["control"] += 1
            return True
        if name in CBRANCH:
            cond = self._branch_cond(name)
            if self.lockstep:
                t, f = self.nprog.tgt[ip], nx
                e.line(f"br i1 {cond}, label %lt{ip}, label %lf{ip}")
                self._label(f"lt{ip}")
                self._goto(t)
                self._label(f"lf{ip}")
                self._goto(f)
            else:
                e.line(f"br i1 {cond}, label {self._jump_to(self.nprog.tgt[ip])}, label {self._jump_to(nx)}")
            self.stats["control"] += 1
            return True
        if name in NOT_TAKEN:
            return False
        if name in ("s_setpc_b64", "s_swappc_b64"):
            self._bridge(ip)
            e.line(f"ret i32 {ST_SLICE}" if self.lockstep else "br label %indirect")
            return True
        if writes is None and ip in self.nprog.described:
            writes = self._described(inst)
        if writes is None and ip in self.nprog.described:
            raise Unsupported(f"{inst.name}: this form has no description and no native handler")
        if writes is not None:
            self._emit_writes(writes)
            self.stats["described"] += 1
            return False
        if not (self._global_copy(ip) or self._buffer_copy(ip) or self._lds_access(ip) or self._scalar_load(ip) or
                (not name.startswith(BLOCK_END) and self._no_op(ip))):
            self._bridge(ip)
        if name.startswith(BLOCK_END):
            # the handler returned CONT (e.g. s_sleep with nothing to wait for, or a call): go on at wave->ip
            e.line(f"ret i32 {ST_SLICE}" if self.lockstep else "br label %indirect")
            return True
        return False

    def _branch_cond(self, name: str) -> str:
        e = self.e
        if name in ("s_cbranch_scc0", "s_cbranch_scc1"):
            s = e.emit(f"load i32, ptr {self._ptr('%w', self.layout['scc'])}, align 4, !tbaa !4")
            return e.emit(f"icmp {'eq' if name.endswith('0') else 'ne'} i32 {s}, 0")
        reg = 106 if "vcc" in name else 126
        word = self._word64(reg) if self.W == 64 else self._sload(reg)
        zero = name.endswith("z") and not name.endswith("nz")
        return e.emit(f"icmp {'eq' if zero else 'ne'} i{self.W} {word}, 0")


def chunk_lanes(W: int) -> int:
    """Lanes per chunk of a lane region: 16, one DPP row (two AVX2 registers of i32), so the row-local lane
    moves (DPP's row shifts, rotations, mirrors, quad permutes, row_share/xmask, DPP8) stay inside the
    chunk loop instead of splitting the region around a whole-wave shuffle (Triton softmax gfx90a: 9% fewer
    host instructions than 8-lane chunks with the shuffles outside)."""
    return min(16, W)


__all__ = ["KernelIR", "Unsupported", "B1", "U32"]


def straight_line(insts, K, mode, layout, name="seq", regions: bool = True) -> str:
    """IR of a function running ``insts`` (described ALU instructions only) once, in order, on a wave:
    the backends' check (tests/emu/test_spec_backends.py) runs single instructions this way."""
    class _P:
        instructions = {}
    kir = KernelIR.__new__(KernelIR)
    kir.K, kir.W, kir.layout, kir.name = K, K.lanes, layout, name
    kir.C = chunk_lanes(K.lanes)
    kir.compact = False
    kir.stats = {"described": 0, "bridged": 0, "control": 0}
    kir.max_row = -1
    kir._graphs = {}
    kir.descriptions = load_descriptions()
    kir.mode = mode
    kir.e = Emitter(K.lanes)
    kir.e.read_hook = kir._read
    kir.e.word_hook = kir._mask_word_of
    e = kir.e
    e.lines.append("entry:")
    e.block = "entry"
    e.lines.append("  ;ALLOCAS")
    e.line(f"%vbase = load ptr, ptr {kir._ptr('%w', layout['v'])}, align 8")
    region = kir._new_region()
    for inst in insts:
        writes = kir._described(inst)
        if writes is None:
            raise Unsupported(f"{inst.name}: no description for this form")
        kind, ureads, written = kir._classify(writes)
        if kind == "wide" or not regions:
            kir._flush_region(region)
            kir._emit_writes(writes)
        elif not kir._region_add(region, 0, kind, writes, ureads, written):
            kir._flush_region(region)
            kir._region_add(region, 0, kind, writes, ureads, written)
    kir._flush_region(region)
    e.line("ret i32 1")
    body = "\n".join(e.lines).replace("  ;ALLOCAS", "\n".join("  " + a for a in e.entry_allocas))
    decls = "\n".join(sorted(e.declares))
    return f"""target triple = "{layout['triple']}"
{decls}

define i32 @{name}(ptr noalias %w, ptr noalias %c) {{
{body}
}}

!0 = !{{!"pyhip tbaa"}}
!1 = !{{!"vgpr", !0, i64 0}}
!2 = !{{!"wave", !0, i64 0}}
!3 = !{{!1, !1, i64 0}}
!4 = !{{!2, !2, i64 0}}
"""
