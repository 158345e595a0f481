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
from .irgen import Emitter

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
CROSS_LANE = {"lane_read", "lane_shuffle", "lane_gather", "mask_word"}
NAN_OPS = {"fadd", "fsub", "fmul", "fdiv", "fma", "sqrt", "floor", "ceil", "ftrunc", "rint", "fpext", "fptrunc",
           "fminnum", "fmaxnum"}


class Unsupported(Exception):
    pass


class KernelIR:
    """The IR of one kernel entry of a lowered program (``nprog``: pyhip/emu/native/lower.NativeProgram)."""

    def __init__(self, nprog, program, K, entry_ip: int, mode: int, layout, name="kernel", lockstep: bool = False):
        self.nprog, self.program, self.K = nprog, program, K
        self.W = K.lanes
        self.layout = layout
        self.name = name
        self.descriptions = load_descriptions()
        self.insts = program.instructions
        self.pcs = sorted(nprog.index, key=nprog.index.get)        # ip -> pc
        self.entry_ip = entry_ip
        self.max_row = -1                        # the highest VGPR row the generated code touches
        self.reach = self._reachable(entry_ip)
        self.dynamic_mode = any(self._inst(i).name.startswith(MODE_WRITERS) for i in self.reach)
        self.mode = None if self.dynamic_mode else mode
        # lockstep form (the differential test's schedule): every instruction a block of its own, each call
        # runs one instruction and returns (ST_SLICE) with wave->ip at the next one; the scheduler counts
        self.lockstep = lockstep
        self.leaders = sorted(self.reach) if lockstep else self._leaders()
        self.C = min(8, self.W)                 # lanes per chunk in lane regions (one AVX2 register of i32)
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
        # function entries (targets of indirect calls)
        for pc in getattr(self.program, "function_starts", ()):
            ip = self.nprog.index.get(pc)
            if ip is not None and ip in self.reach:
                lead.add(ip)
        return sorted(x for x in lead if x in self.reach)

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
            p = self._ptr("%vbase", loc[1] * 256)
            return e.emit(f"load <{self.W} x i32>, ptr {p}, align 4, !tbaa !3", "v")
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
        from ..spec.lang import walk
        for n in walk([w.value for w in b.writes] + [w.mask for w in b.writes if w.mask is not None]):
            if n.op == "read" and n.attr[0] == "v":
                self.max_row = max(self.max_row, n.attr[1])
        for w in b.writes:
            if w.loc[0] == "v":
                self.max_row = max(self.max_row, w.loc[1])
        return b.writes

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

    def _global_copy(self, ip: int) -> bool:
        """A GLOBAL load or store of 1, 2 or 4 dwords per lane as generated code when EXEC is full and the lanes'
        addresses are consecutive inside one allocation (the coalesced access of nearly every kernel): one
        translation (``pyhip_jit_xlate``: the runtime's region lookup, bounds included) and vector copies
        between the VGPR rows and memory, as the handler's whole-wave path does (vmem.h: load_contig /
        store_contig; each aligned dword, or 8-byte value, inside one host access).  Anything else — a partial
        EXEC, scattered or out-of-bounds addresses (and so every fault report) — runs the handler.  False: the
        instruction has no such form (the caller bridges it)."""
        rec = self.nprog.code[ip]
        handler = self._vm_ops().get(int(rec["op"]))
        if handler not in ("vm_load", "vm_store") or self.lockstep:
            return False
        store = handler == "vm_store"
        size, a0 = int(rec["x"]), int(rec["a0"])
        kind, d16, saddr = a0 & 0xF, (a0 >> 5) & 3, (a0 >> 10) & 1
        if kind != 0 or d16 or size not in (4, 8, 16):
            return False
        e, W = self.e, self.W
        nw = size // 4
        addr_row, sbase, off = int(rec["s"][0]), int(rec["s"][1]), int(rec["imm"])
        data_row = int(rec["sd"] if store else rec["d"])
        VT = f"<{W} x i32>"
        k = f"gc{ip}_{e.n}"
        full = e.emit(f"icmp eq i{W} {self._exec_word()}, -1")
        e.line(f"br i1 {full}, label %{k}a, label %{k}slow")
        self._label(f"{k}a")
        lo = e.emit(f"load {VT}, ptr {self._ptr('%vbase', addr_row * 256)}, align 4, !tbaa !3", "v")
        lo0 = e.emit(f"extractelement {VT} {lo}, i64 0")
        step = ", ".join(f"i32 {size * i}" for i in range(W))
        want = e.emit(f"add {VT} {e.splat(lo0, 'i32')}, <{step}>")
        bad = e.emit(f"xor {VT} {lo}, {want}")
        # every lane's low word lo0 + size * lane without a carry out of 32 bits (then the high words agree)
        base = e.emit(f"zext i32 {lo0} to i64")
        last = e.emit(f"add i64 {base}, {size * (W - 1)}")
        carry = e.emit(f"icmp ugt i64 {last}, 4294967295")
        if saddr:
            sb = self._word64(sbase)
            base = e.emit(f"add i64 {base}, {sb}")
        else:
            hi = e.emit(f"load {VT}, ptr {self._ptr('%vbase', (addr_row + 1) * 256)}, align 4, !tbaa !3", "v")
            hi0 = e.emit(f"extractelement {VT} {hi}, i64 0")
            hx = e.emit(f"xor {VT} {hi}, {e.splat(hi0, 'i32')}")
            bad = e.emit(f"or {VT} {bad}, {hx}")
            h = e.emit(f"zext i32 {hi0} to i64")
            h = e.emit(f"shl i64 {h}, 32")
            base = e.emit(f"or i64 {base}, {h}")
        addr = e.emit(f"add i64 {base}, {off}")
        e.declare(f"declare i32 @llvm.vector.reduce.or.v{W}i32({VT})")
        anybad = e.emit(f"call i32 @llvm.vector.reduce.or.v{W}i32({VT} {bad})")
        scattered = e.emit(f"icmp ne i32 {anybad}, 0")
        no = e.emit(f"or i1 {scattered}, {carry}")
        e.line(f"br i1 {no}, label %{k}slow, label %{k}t")
        self._label(f"{k}t")
        p = e.emit(f"call ptr @pyhip_jit_xlate(ptr %c, i32 {ip}, i64 {addr}, i32 {size * W})")
        null = e.emit(f"icmp eq ptr {p}, null")
        e.line(f"br i1 {null}, label %{k}slow, label %{k}go")
        self._label(f"{k}go")
        n = W * nw
        NT = f"<{n} x i32>"
        # the lines after the access: the next wave usually reads there (vmem.h: sh_prefetch_ahead)
        ahead = 1024 if size * W < 512 else 2 * size * W
        e.declare("declare void @llvm.prefetch.p0(ptr, i32, i32, i32)")
        for i in range(8):
            q = e.emit(f"getelementptr inbounds i8, ptr {p}, i64 {ahead + 64 * i}")
            e.line(f"call void @llvm.prefetch.p0(ptr {q}, i32 {int(store)}, i32 3, i32 1)")
        rows = [self._ptr('%vbase', (data_row + j) * 256) for j in range(nw)]
        if store:
            vals = [e.emit(f"load {VT}, ptr {r}, align 4, !tbaa !3", "v") for r in rows]
            if nw == 1:
                mem = vals[0]
            else:                             # interleaved: lane i's dwords j = 0.. consecutive
                if nw == 2:
                    ca, cb, L = vals[0], vals[1], W
                else:
                    cat = ", ".join(f"i32 {i}" for i in range(2 * W))
                    ca = e.emit(f"shufflevector {VT} {vals[0]}, {VT} {vals[1]}, <{2 * W} x i32> <{cat}>")
                    cb = e.emit(f"shufflevector {VT} {vals[2]}, {VT} {vals[3]}, <{2 * W} x i32> <{cat}>")
                    L = 2 * W
                idx = ", ".join(f"i32 {j * W + i}" for i in range(W) for j in range(nw))
                mem = e.emit(f"shufflevector <{L} x i32> {ca}, <{L} x i32> {cb}, {NT} <{idx}>")
            e.line(f"store {NT} {mem}, ptr {p}, align 4")
            e.line(f"store i32 1, ptr {self._ptr('%w', self.layout['mm_pending'])}, align 4, !tbaa !4")
        else:
            mem = e.emit(f"load {NT}, ptr {p}, align 4")
            for j, r in enumerate(rows):
                if nw == 1:
                    v = mem
                else:
                    idx = ", ".join(f"i32 {nw * i + j}" for i in range(W))
                    v = e.emit(f"shufflevector {NT} {mem}, {NT} poison, <{W} x i32> <{idx}>")
                e.line(f"store {VT} {v}, ptr {r}, align 4, !tbaa !3")
        e.line(f"br label %{k}done")
        self._label(f"{k}slow")
        self._bridge(ip)
        e.line(f"br label %{k}done")
        self._label(f"{k}done")
        self.stats["inline_memory"] = self.stats.get("inline_memory", 0) + 1
        return True

    def _scalar_load(self, ip: int) -> bool:
        """An SMEM load of N dwords at SGPR base (+ an immediate offset) as generated code: one translation
        (``pyhip_jit_xlate``) and a copy into the SGPRs, as the handler does (address & ~3); a translation
        that fails (and so the fault report) or an SGPR offset runs the handler.  False: not such a load."""
        rec = self.nprog.code[ip]
        if self._vm_ops().get(int(rec["op"])) != "s_load" or self.lockstep:
            return False
        n, a0, d = int(rec["x"]), int(rec["a0"]), int(rec["d"])
        if a0 & ~1 or d + n > 106 or n not in (1, 2, 4, 8, 16):
            return False
        e = self.e
        base = self._word64(int(rec["s"][0]))
        if a0 & 1:                                  # a buffer resource: the low 48 bits are the base
            base = e.emit(f"and i64 {base}, 281474976710655")
        addr = e.emit(f"add i64 {base}, {int(rec['imm'])}")
        addr = e.emit(f"and i64 {addr}, -4")
        k = f"sl{ip}_{e.n}"
        p = e.emit(f"call ptr @pyhip_jit_xlate(ptr %c, i32 {ip}, i64 {addr}, i32 {4 * n})")
        null = e.emit(f"icmp eq ptr {p}, null")
        e.line(f"br i1 {null}, label %{k}slow, label %{k}go")
        self._label(f"{k}go")
        VT = f"<{n} x i32>" if n > 1 else "i32"
        v = e.emit(f"load {VT}, ptr {p}, align 4")
        e.line(f"store {VT} {v}, ptr {self._ptr('%w', self.layout['s'] + 4 * d)}, align 4, !tbaa !4")
        e.line(f"br label %{k}done")
        self._label(f"{k}slow")
        self._bridge(ip)
        e.line(f"br label %{k}done")
        self._label(f"{k}done")
        return True

    def _no_op(self, ip: int, name: str) -> bool:
        """Waits, hints and cache controls (lowered as s_nop) as generated code: nothing, unless the wave
        stored since its last fence (the handler then fences: docs/memory-model.md).  False: not one, or one
        after which the wave may leave (s_sleep, s_sethalt: they keep their handler)."""
        rec = self.nprog.code[ip]
        if self._vm_ops().get(int(rec["op"])) != "s_nop" or self.lockstep or name.startswith(BLOCK_END):
            return False
        e = self.e
        k = f"nop{ip}_{e.n}"
        pend = e.emit(f"load i32, ptr {self._ptr('%w', self.layout['mm_pending'])}, align 4, !tbaa !4")
        idle = e.emit(f"icmp eq i32 {pend}, 0")
        e.line(f"br i1 {idle}, label %{k}done, label %{k}slow")
        self._label(f"{k}slow")
        self._bridge(ip)
        e.line(f"br label %{k}done")
        self._label(f"{k}done")
        return True

    def _vm_ops(self) -> dict:
        """Handler id -> name of the handlers the generated code can stand in for."""
        if self._inline_ops is None:
            from ..native.layout import op_ids
            ids = op_ids()
            self._inline_ops = {ids[n]: n for n in ("vm_load", "vm_store", "s_load", "s_nop") if n in ids}
        return self._inline_ops

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

    # -- lane regions: runs of lane-wise VALU instructions, a chunk of lanes at a time --------------------------------
    def _classify(self, writes) -> tuple[str, set, set]:
        """(kind, uniform locations read, locations written): kind "uniform" (scalar code), "lane" (only
        lane-wise primitives, writes VGPRs / lane masks other than EXEC), or "wide" (anything else)."""
        from ..spec.lang import walk
        roots = [w.value for w in writes] + [w.mask for w in writes if w.mask is not None]
        nodes = walk(roots)
        reads = {n.attr for n in nodes if n.op == "read"}
        written = {w.loc for w in writes}
        # uniform reads, and lanes read from a mask SGPR (pair) as ("mask", r): _region_add resolves those
        uniform_reads = {r for r in reads if r[0] in ("s", "scc", "mode", "mask")}
        if ("exec_lanes",) in reads:
            uniform_reads |= self._mask_sgprs(126)
        if all(w.loc[0] in ("s", "scc", "mode") for w in writes) and all(n.uniform for n in nodes):
            return "uniform", uniform_reads, written
        if all(w.loc[0] == "v" or (w.loc[0] == "mask" and w.loc[1] not in (126, 127)) for w in writes) and \
                not any(n.op in CROSS_LANE for n in nodes):
            return "lane", uniform_reads, written
        return "wide", uniform_reads, written

    def _mask_sgprs(self, r: int) -> set:
        return {("s", r), ("s", r + 1)} if self.W == 64 else {("s", r)}

    def _region_add(self, region, ip, kind, writes, ureads, written) -> bool:
        """Add an item to the open region if the reordering it implies (uniform items run before the chunk
        loop, mask words are stored after it) keeps program order's results; False: close the region first."""
        if kind == "lane":
            plain = set()
            for loc in ureads:
                if loc[0] != "mask":
                    plain.add(loc)
                    continue
                # lanes of a mask the region writes are the chunk's own bits (in registers, program order
                # kept within the chunk); any other overlap with a mask written here needs its word
                sg = self._mask_sgprs(loc[1])
                if sg & region["mask_sgprs"] and loc[1] not in region["mask_regs"]:
                    return False
                plain |= sg
            if {loc for loc in ureads if loc[0] != "mask"} & region["mask_sgprs"]:
                return False
            region["lane_ureads"] |= plain
            for loc in written:
                if loc[0] == "mask":
                    region["mask_sgprs"] |= self._mask_sgprs(loc[1])
                    region["mask_regs"].add(loc[1])
            region["items"].append((ip, kind, writes))
            region["lanes"] += 1
            return True
        # uniform: hoisted before the loop
        if written & region["lane_ureads"] or ureads & region["mask_sgprs"] or written & region["mask_sgprs"]:
            return False
        if region["lanes"] and written & {("s", 126), ("s", 127)}:
            return False
        region["items"].append((ip, kind, writes))
        return True

    def _new_region(self):
        return {"items": [], "lane_ureads": set(), "mask_sgprs": set(), "mask_regs": set(), "lanes": 0}

    def _flush_region(self, region) -> None:
        items = region["items"]
        if not items:
            return
        lane_items = [it for it in items if it[1] == "lane"]
        for ip, kind, writes in items:
            if kind == "uniform":
                self._emit_writes(writes)
                self.stats["described"] += 1
        if lane_items:
            self._emit_lane_region([w for _, _, w in lane_items])
            self.stats["described"] += len(lane_items)
        region.update(self._new_region())

    def _read_chunk(self, n):
        """A read inside a lane region's chunk body."""
        e = self.e
        loc = n.attr
        k = loc[0]
        rs = self._rstate
        if k == "v":
            hit = rs["rows"].get(loc[1])
            return hit if hit is not None else self._load_row_chunk(loc[1])
        if k == "exec_lanes":
            if rs["full"]:
                return "<" + ", ".join(["i1 true"] * self.C) + ">"
            return e.chunk_bits(rs["exec_word"], self.W)
        if k == "mask":
            hit = rs["masks"].get(loc[1])
            if hit is not None:
                return hit
            word = rs["words"].get(loc[1])
            if word is None:
                saved, e.lines = e.lines, e.pre
                try:
                    word = self._word64(loc[1]) if self.W == 64 else self._sload(loc[1])
                finally:
                    e.lines = saved
                rs["words"][loc[1]] = word
            return e.chunk_bits(word, self.W)
        # uniform state: loop invariant
        saved, e.lines = e.lines, e.pre
        saved_chunk, e.chunk = e.chunk, None
        try:
            if k == "s":
                return self._sload(loc[1])
            if k == "scc":
                sv = e.emit(f"load i32, ptr {self._ptr('%w', self.layout['scc'])}, align 4, !tbaa !4", "scc")
                return e.emit(f"icmp ne i32 {sv}, 0")
            if k == "mode":
                return e.emit(f"load i32, ptr {self._ptr('%w', self.layout['mode'])}, align 4, !tbaa !4", "mode")
        finally:
            e.lines = saved
            e.chunk = saved_chunk
        raise Unsupported(f"compiled engine: no machine state {loc} in a lane region")

    def _row_chunk_ptr(self, r: int) -> str:
        e = self.e
        off = e.emit(f"add i32 {e.chunk}, {r * 64}")
        off = e.emit(f"zext i32 {off} to i64")
        return e.emit(f"getelementptr inbounds i32, ptr %vbase, i64 {off}", "p")

    def _load_row_chunk(self, r: int) -> str:
        return self.e.emit(f"load <{self.C} x i32>, ptr {self._row_chunk_ptr(r)}, align 4, !tbaa !3", "v")

    def _emit_lane_region(self, lane_writes) -> None:
        """A run of lane-wise instructions as a loop over chunks of C lanes: per chunk, every instruction in
        order with the chunk's values in registers, the VGPR rows written stored once at the end of the chunk,
        the lane-mask words assembled across chunks and stored after the loop.

        Two loops: under a full EXEC (the common case) one without any masking, else one that merges every
        result under the chunk's EXEC bits.  Float results are computed without the NaN rule first; a chunk
        where some NaN appeared is recomputed with it (the full loop hands that chunk, and the rest, to the
        masked loop, whose recomputation is exact for any EXEC)."""
        from ..spec.lang import walk
        e = self.e
        W, C = self.W, self.C
        nch = W // C
        rid = e.tmp("rg")[1:]
        pre_block = e.block
        nan_ruled = any(n.op in NAN_OPS and n.attr != "nf" and not n.uniform
                        for ws in lane_writes for n in walk([w.value for w in ws] + [w.mask for w in ws if w.mask is not None]))
        mask_regs = []
        for ws in lane_writes:
            for w in ws:
                if w.loc[0] == "mask" and w.loc[1] not in mask_regs:
                    mask_regs.append(w.loc[1])
        pre = e.lines
        exec_word = self._exec_word()
        self._rstate = {"rows": {}, "masks": {}, "words": {}, "exec_word": exec_word, "full": False}

        def run_body(exact: bool):
            self._rstate["rows"], self._rstate["masks"] = {}, {}
            e.exact_nan, e.nan_flags = exact, []
            uvals = {}
            for ws in lane_writes:
                e.values = {k: v for k, v in uvals.items()}
                vals = []
                for wr in ws:
                    v = e.value(wr.value, True)
                    m = e.value(wr.mask, True) if wr.mask is not None else None
                    vals.append((wr, v, m))
                uvals.update({k: v for k, v in e.values.items() if not v[1]})
                for wr, v, m in vals:
                    if wr.loc[0] == "v":
                        r = wr.loc[1]
                        if m is not None:
                            old = self._rstate["rows"].get(r)
                            if old is None:
                                # (frozen: LLVM would otherwise turn select + store into a masked store,
                                # which is slow on x86)
                                old = e.emit(f"freeze <{C} x i32> {self._load_row_chunk(r)}")
                            v = e.emit(f"select <{C} x i1> {m}, <{C} x i32> {v}, <{C} x i32> {old}")
                        self._rstate["rows"][r] = v
                    else:
                        self._rstate["masks"][wr.loc[1]] = v
            return dict(self._rstate["rows"]), dict(self._rstate["masks"]), list(e.nan_flags)

        def chunk_end(rows, masks, loop, latch, acc_prefix) -> dict:
            """Store the chunk's rows, fold its mask bits into the words, branch back or out."""
            for r, v in rows.items():
                e.line(f"store <{C} x i32> {v}, ptr {self._row_chunk_ptr(r)}, align 4, !tbaa !3")
            acc_next = {}
            for r in mask_regs:
                bits = e.emit(f"bitcast <{C} x i1> {masks[r]} to i{C}")
                z = e.emit(f"zext i{C} {bits} to i{W}")
                cz = e.emit(f"zext i32 {e.chunk} to i{W}") if W > 32 else e.chunk
                sh = e.emit(f"shl i{W} {z}, {cz}")
                acc_next[r] = e.emit(f"or i{W} %{acc_prefix}{r}, {sh}")
            e.line(f"%{loop}kn = add i32 %{loop}k, 1")
            e.line(f"%{loop}more = icmp ult i32 %{loop}kn, {nch}")
            e.line(f"br i1 %{loop}more, label %{loop}, label %{rid}e")
            return acc_next

        # the full-EXEC loop
        full_body: list[str] = []
        floop = f"{rid}f"
        e.pre, e.lines, e.W, e.chunk = pre, full_body, C, f"%{floop}c"
        e.invalidate()
        self._rstate["full"] = True
        e.block = floop
        e.line(f"%{floop}c = mul i32 %{floop}k, {C}")
        rows_f, masks_f, flags = run_body(exact=not nan_ruled)
        nan_exit = None
        if nan_ruled and flags:
            acc = flags[0]
            for f in flags[1:]:
                acc = e.emit(f"or <{C} x i1> {acc}, {f}")
            anyn = e._any(acc, True)
            e.line(f"br i1 {anyn}, label %{floop}n, label %{floop}l")
            full_body += [f"{floop}n:", f"  br label %{rid}loop", f"{floop}l:"]
            nan_exit = f"{floop}n"
            e.block = f"{floop}l"
        flatch = e.block
        facc_next = chunk_end(rows_f, masks_f, floop, flatch, f"{floop}acc")
        self._rstate["full"] = False

        # the masked loop
        body: list[str] = []
        e.lines, e.chunk = body, f"%{rid}c"
        e.invalidate()
        e.block = f"{rid}loop"
        e.line(f"%{rid}c = mul i32 %{rid}loopk, {C}")
        rows_f, masks_f, flags = run_body(exact=not nan_ruled)
        fast_end = e.block
        if nan_ruled and flags:
            acc = flags[0]
            for f in flags[1:]:
                acc = e.emit(f"or <{C} x i1> {acc}, {f}")
            anyn = e._any(acc, True)
            e.line(f"br i1 {anyn}, label %{rid}x, label %{rid}l")
            body.append(f"{rid}x:")
            e.block = f"{rid}x"
            rows_x, masks_x, _ = run_body(exact=True)
            exact_end = e.block
            e.line(f"br label %{rid}l")
            body.append(f"{rid}l:")
            rows, masks = {}, {}
            for r, v in rows_f.items():
                rows[r] = e.emit(f"phi <{C} x i32> [{v}, %{fast_end}], [{rows_x[r]}, %{exact_end}]")
            for r, v in masks_f.items():
                masks[r] = e.emit(f"phi <{C} x i1> [{v}, %{fast_end}], [{masks_x[r]}, %{exact_end}]")
            e.block = f"{rid}l"
        else:
            rows, masks = rows_f, masks_f
        latch = e.block
        acc_next = chunk_end(rows, masks, f"{rid}loop", latch, f"{rid}acc")

        pre.append(f"  %{rid}full = icmp eq i{W} {exec_word}, -1")
        pre.append(f"  br i1 %{rid}full, label %{floop}, label %{rid}loop")
        fheader = [f"{floop}:", f"  %{floop}k = phi i32 [0, %{pre_block}], [%{floop}kn, %{flatch}]"]
        for r in mask_regs:
            fheader.append(f"  %{floop}acc{r} = phi i{W} [0, %{pre_block}], [{facc_next[r]}, %{flatch}]")
        from_full = f", [%{floop}k, %{nan_exit}]" if nan_exit else ""
        header = [f"{rid}loop:", f"  %{rid}loopk = phi i32 [0, %{pre_block}], [%{rid}loopkn, %{latch}]{from_full}"]
        for r in mask_regs:
            ff = f", [%{floop}acc{r}, %{nan_exit}]" if nan_exit else ""
            header.append(f"  %{rid}acc{r} = phi i{W} [0, %{pre_block}], [{acc_next[r]}, %{latch}]{ff}")
        # leave chunk mode; the exit block stores the mask words
        tail = [f"{rid}e:"]
        e.lines = pre + fheader + full_body + header + body + tail
        e.block = f"{rid}e"
        e.W, e.chunk, e.pre, e.exact_nan, e.nan_flags = W, None, None, True, []
        e.invalidate()
        fins = [e.emit(f"phi i{W} [{acc_next[r]}, %{latch}], [{facc_next[r]}, %{flatch}]") for r in mask_regs]
        for r, fin in zip(mask_regs, fins):
            self._store_mask_word(r, fin)

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
                writes = self._described(inst) if inst.name not in CONTROL else None
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
        if writes is None:
            writes = self._described(inst)
        if writes is None and ip in self.nprog.described:
            raise Unsupported(f"{inst.name}: this form has no description and no native handler")
        if writes is not None:
            self._emit_writes(writes)
            self.stats["described"] += 1
            return False
        if not (self._global_copy(ip) or self._scalar_load(ip) or self._no_op(ip, name)):
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


__all__ = ["KernelIR", "Unsupported", "B1", "U32"]


def straight_line(insts, K, mode, layout, name="seq", regions: bool = True) -> str:
    """IR of a function running ``insts`` (described ALU instructions only) once, in order, on a wave:
    the backends' check (tests/emu/test_spec_backends.py) runs single instructions this way."""
    class _P:
        instructions = {}
    kir = KernelIR.__new__(KernelIR)
    kir.K, kir.W, kir.layout, kir.name = K, K.lanes, layout, name
    kir.C = min(8, K.lanes)
    kir.stats = {"described": 0, "bridged": 0, "control": 0}
    kir.max_row = -1
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
