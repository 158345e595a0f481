"""The memory accesses the compiled engine generates itself (docs/engine.md): whole-wave GLOBAL loads and
stores at consecutive addresses under a full EXEC, LDS reads and dword writes inside the workgroup's LDS,
SMEM loads at an SGPR base plus an immediate, and waits that need no fence.  Each has the instruction's handler (pyhip_jit_step) as its other path, which takes
everything else and reports every fault.  A mixin of KernelIR (kernel.py): it uses its state accessors."""
from __future__ import annotations


def _i32(v: int) -> int:
    """``v`` mod 2^32 as a signed 32-bit IR constant."""
    v &= 0xFFFFFFFF
    return v - (1 << 32) if v >= 1 << 31 else v


class GeneratedMemory:
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
        lo = self._load_row(addr_row)
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
            hi = self._load_row(addr_row + 1)
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
        p = self._translated(k, ip, e.emit(f"or i1 {scattered}, {carry}"), addr, str(size * W))
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
            mem = vals[0] if nw == 1 else self._interleave(vals)
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
        self._or_handler(k, ip)
        self.stats["inline_memory"] = self.stats.get("inline_memory", 0) + 1
        return True

    def _buffer_copy(self, ip: int) -> bool:
        """A MUBUF load or store of 1, 2 or 4 dwords per lane (OFFEN, no IDXEN, no ADD_TID) as generated code,
        under any EXEC: each lane's offset soffset + inst offset + VADDR is checked against num_records as the
        handler does (vaddr.h: buf_inrange: the lane's bytes inside it, or it reads 0 and drops its write); when
        no active lane is inside, a load writes 0 to the active lanes and a store does nothing (Triton turns
        lanes off with an offset of 0x80000000, often a whole wave); when the lanes inside are at consecutive
        offsets (lane f's offset + size * (l - f)), one translation of their span and a masked vector copy.
        Anything else (scattered offsets, a translation that fails, so every fault report) runs the handler.
        False: the instruction has no such form."""
        rec = self.nprog.code[ip]
        handler = self._vm_ops().get(int(rec["op"]))
        if handler not in ("vm_load", "vm_store") or self.lockstep:
            return False
        store = handler == "vm_store"
        size, a0 = int(rec["x"]), int(rec["a0"])
        kind, d16, offen, idxen = a0 & 0xF, (a0 >> 5) & 3, (a0 >> 8) & 1, (a0 >> 9) & 1
        if kind != 3 or d16 or not offen or idxen or size not in (4, 8, 16):
            return False
        soff = int(rec["s"][2])
        e, W = self.e, self.W
        if soff & 0xC000 == 0x4000:
            so = e.emit(f"zext i32 {self._sload(soff & 0x3FFF)} to i64")
        elif soff == 0x8000:
            so = str(int(rec["k"][2]) & 0xFFFFFFFF)
        else:
            return False
        nw, rs = size // 4, int(rec["s"][1]) & 127
        VT, IV, QT = f"<{W} x i32>", f"<{W} x i1>", f"<{W} x i64>"
        k = f"bc{ip}_{e.n}"
        d3 = self._sload(rs + 3)
        tid = e.emit(f"and i32 {d3}, {1 << 23}")
        tid = e.emit(f"icmp ne i32 {tid}, 0")
        e.line(f"br i1 {tid}, label %{k}slow, label %{k}a")
        self._label(f"{k}a")
        lanes = e.word_to_lanes(self._exec_word())
        x = self._load_row(int(rec["s"][0]))
        b = e.emit(f"add i64 {so}, {int(rec['imm'])}")
        lim = e.emit(f"zext i32 {self._sload(rs + 2)} to i64")
        xw = e.emit(f"zext {VT} {x} to {QT}")
        end = e.emit(f"add {QT} {xw}, {e.splat(e.emit(f'add i64 {b}, {size}'), 'i64')}")
        inr = e.emit(f"icmp ule {QT} {end}, {e.splat(lim, 'i64')}")
        ok = e.emit(f"and {IV} {inr}, {lanes}")
        okw = e.emit(f"bitcast {IV} {ok} to i{W}")
        none = e.emit(f"icmp eq i{W} {okw}, 0")
        rows = [self._ptr('%vbase', (int(rec["sd"] if store else rec["d"]) + j) * 256) for j in range(nw)]
        e.line(f"br i1 {none}, label %{k}none, label %{k}b")
        self._label(f"{k}none")
        if not store:                           # the active lanes read 0
            for r in rows:
                old = e.emit(f"load {VT}, ptr {r}, align 4, !tbaa !3", "v")
                e.line(f"store {VT} {e.emit(f'select {IV} {lanes}, {VT} zeroinitializer, {VT} {old}')}, "
                       f"ptr {r}, align 4, !tbaa !3")
        e.line(f"br label %{k}done")
        self._label(f"{k}b")
        e.declare(f"declare i{W} @llvm.cttz.i{W}(i{W}, i1)")
        e.declare(f"declare i{W} @llvm.ctlz.i{W}(i{W}, i1)")
        f = e.emit(f"call i{W} @llvm.cttz.i{W}(i{W} {okw}, i1 true)")
        lz = e.emit(f"call i{W} @llvm.ctlz.i{W}(i{W} {okw}, i1 true)")
        if W == 64:
            f = e.emit(f"trunc i64 {f} to i32")
            lz = e.emit(f"trunc i64 {lz} to i32")
        span = e.emit(f"sub i32 {W}, {lz}")
        span = e.emit(f"sub i32 {span}, {f}")                    # last - f + 1 lanes
        xf = e.emit(f"extractelement {VT} {x}, i32 {f}")
        fb = e.emit(f"mul i32 {f}, {size}")
        x0 = e.emit(f"sub i32 {xf}, {fb}")                      # lane 0's offset on the line (mod 2^32)
        step = ", ".join(f"i32 {size * i}" for i in range(W))
        want = e.emit(f"add {VT} {e.splat(x0, 'i32')}, <{step}>")
        ne = e.emit(f"icmp ne {VT} {x}, {want}")
        ne = e.emit(f"and {IV} {ne}, {ok}")
        e.declare(f"declare i1 @llvm.vector.reduce.or.v{W}i1({IV})")
        scattered = e.emit(f"call i1 @llvm.vector.reduce.or.v{W}i1({IV} {ne})")
        nbytes = e.emit(f"mul i32 {span}, {size}")
        lastb = e.emit(f"add i64 {e.emit(f'zext i32 {xf} to i64')}, {e.emit(f'zext i32 {nbytes} to i64')}")
        carry = e.emit(f"icmp ugt i64 {lastb}, 4294967296")      # offsets wrap at 32 bits inside the span
        d0 = e.emit(f"zext i32 {self._sload(rs)} to i64")
        d1 = e.emit(f"zext i32 {self._sload(rs + 1)} to i64")
        d1 = e.emit(f"and i64 {d1}, 65535")
        d1 = e.emit(f"shl i64 {d1}, 32")
        base = e.emit(f"or i64 {d0}, {d1}")
        addr = e.emit(f"add i64 {base}, {b}")
        addr = e.emit(f"add i64 {addr}, {e.emit(f'zext i32 {xf} to i64')}")
        p = self._translated(k, ip, e.emit(f"or i1 {scattered}, {carry}"), addr, nbytes)
        back = e.emit(f"sub i64 0, {e.emit(f'zext i32 {fb} to i64')}")
        p0 = e.emit(f"getelementptr i8, ptr {p}, i64 {back}")      # lane 0's place (lanes before f are off)
        n = W * nw
        NT, NM = f"<{n} x i32>", f"<{n} x i1>"
        if nw == 1:
            m = ok
        else:                                   # each lane's flag for its nw consecutive dwords
            idx = ", ".join(f"i32 {i // nw}" for i in range(n))
            m = e.emit(f"shufflevector {IV} {ok}, {IV} poison, <{n} x i32> <{idx}>")
        if store:
            vals = [e.emit(f"load {VT}, ptr {r}, align 4, !tbaa !3", "v") for r in rows]
            mem = self._interleave(vals) if nw > 1 else vals[0]
            e.declare(f"declare void @llvm.masked.store.v{n}i32.p0({NT}, ptr, i32, {NM})")
            e.line(f"call void @llvm.masked.store.v{n}i32.p0({NT} {mem}, ptr {p0}, i32 4, {NM} {m})")
            e.line(f"store i32 1, ptr {self._ptr('%w', self.layout['mm_pending'])}, align 4, !tbaa !4")
        else:
            e.declare(f"declare {NT} @llvm.masked.load.v{n}i32.p0(ptr, i32, {NM}, {NT})")
            mem = e.emit(f"call {NT} @llvm.masked.load.v{n}i32.p0(ptr {p0}, i32 4, {NM} {m}, {NT} zeroinitializer)")
            for j, r in enumerate(rows):
                if nw == 1:
                    v = mem
                else:
                    idx = ", ".join(f"i32 {nw * i + j}" for i in range(W))
                    v = e.emit(f"shufflevector {NT} {mem}, {NT} poison, <{W} x i32> <{idx}>")
                old = e.emit(f"load {VT}, ptr {r}, align 4, !tbaa !3", "v")
                v = e.emit(f"select {IV} {lanes}, {VT} {v}, {VT} {old}")   # active lanes outside read 0
                e.line(f"store {VT} {v}, ptr {r}, align 4, !tbaa !3")
        self._or_handler(k, ip)
        self.stats["inline_memory"] = self.stats.get("inline_memory", 0) + 1
        return True

    def _translated(self, k: str, ip: int, no: str, addr: str, nbytes: str) -> str:
        """The host pointer of [addr, addr + nbytes) (``pyhip_jit_xlate``: the region lookup, bounds included) in
        block ``{k}go``; to ``{k}slow`` (the handler) where ``no`` holds or the translation refuses."""
        e = self.e
        e.line(f"br i1 {no}, label %{k}slow, label %{k}t")
        self._label(f"{k}t")
        p = e.emit(f"call ptr @pyhip_jit_xlate(ptr %c, i32 {ip}, i64 {addr}, i32 {nbytes})")
        null = e.emit(f"icmp eq ptr {p}, null")
        e.line(f"br i1 {null}, label %{k}slow, label %{k}go")
        self._label(f"{k}go")
        return p

    def _interleave(self, vals: list) -> str:
        """Rows of nw dwords (2 or 4) as one vector in memory order: lane i's dwords j = 0.. consecutive."""
        e, W, nw = self.e, self.W, len(vals)
        VT = f"<{W} x i32>"
        if nw == 2:
            ca, cb, L = vals[0], vals[1], W
        else:
            cat = ", ".join(f"i32 {i}" for i in range(2 * W))
            ca = e.emit(f"shufflevector {VT} {vals[0]}, {VT} {vals[1]}, <{2 * W} x i32> <{cat}>")
            cb = e.emit(f"shufflevector {VT} {vals[2]}, {VT} {vals[3]}, <{2 * W} x i32> <{cat}>")
            L = 2 * W
        idx = ", ".join(f"i32 {j * W + i}" for i in range(W) for j in range(nw))
        return e.emit(f"shufflevector <{L} x i32> {ca}, <{L} x i32> {cb}, <{W * nw} x i32> <{idx}>")

    def _lds_access(self, ip: int) -> bool:
        """An LDS read of 1, 2 or 4 dwords per lane (one or two addresses: ds_read, ds_read2) or a dword write
        (ds_write_b32, ds_write2_b32) as generated code, under any EXEC, when every active lane's bytes lie
        inside the workgroup's LDS: each lane's address (ADDR VGPR + offset) mod 2^32 as the handler computes
        it (ops_ds.h: lds_addr), a masked gather into the rows (inactive lanes keep theirs), or a masked
        scatter, whose lanes store in lane order as the handler does (a later lane wins an address).  A lane
        outside the LDS runs the handler, which decides what that means.  False: no such form (sub-dword or
        16-bit halves, wider writes whose lane-major byte order a scatter per dword would not keep)."""
        rec = self.nprog.code[ip]
        handler = self._vm_ops().get(int(rec["op"]))
        if handler not in ("ds_read", "ds_write") or self.lockstep:
            return False
        store = handler == "ds_write"
        size, a0, imm = int(rec["x"]), int(rec["a0"]), int(rec["imm"])
        two = (a0 >> 3) & 1
        if (a0 >> 1) & 3 or size not in ((4,) if store else (4, 8, 16)):
            return False
        if two:
            mult = a0 >> 8
            offs = [(imm & 0xFF) * size * mult, ((imm >> 16) & 0xFF) * size * mult]
        else:
            offs = [imm]
        e, W, L = self.e, self.W, self.layout
        VT, IV = f"<{W} x i32>", f"<{W} x i1>"
        k = f"ds{ip}_{e.n}"
        lanes = e.word_to_lanes(self._exec_word())
        base = self._load_row(int(rec["s"][0]))
        g = e.emit(f"load ptr, ptr {self._ptr('%w', L['g'])}, align 8")
        lds = e.emit(f"load ptr, ptr {self._ptr(g, L['g_lds'])}, align 8")
        d = e.emit(f"load ptr, ptr {self._ptr('%c', L['d'])}, align 8")
        lsz = e.emit(f"load i32, ptr {self._ptr(d, L['lds_size'])}, align 4")
        small = e.emit(f"icmp ult i32 {lsz}, {size}")
        lim = e.splat(e.emit(f"sub i32 {lsz}, {size}"), "i32")
        addrs, bad = [], None
        for off in offs:
            a = e.emit(f"add {VT} {base}, {e.splat(str(_i32(off)), 'i32')}")
            out = e.emit(f"icmp ugt {VT} {a}, {lim}")
            out = e.emit(f"and {IV} {out}, {lanes}")
            bad = out if bad is None else e.emit(f"or {IV} {bad}, {out}")
            addrs.append(a)
        e.declare(f"declare i1 @llvm.vector.reduce.or.v{W}i1({IV})")
        anybad = e.emit(f"call i1 @llvm.vector.reduce.or.v{W}i1({IV} {bad})")
        no = e.emit(f"or i1 {small}, {anybad}")
        e.line(f"br i1 {no}, label %{k}slow, label %{k}go")
        self._label(f"{k}go")
        PV = f"<{W} x ptr>"
        reg = int(rec["d"])
        for n, a in enumerate(addrs):
            for j in range(size // 4):
                aj = a if j == 0 else e.emit(f"add {VT} {a}, {e.splat(str(4 * j), 'i32')}")
                # 32-bit offsets (below the LDS size, checked above, so the GEP's sign extension keeps them):
                # x86 gathers and scatters with dword indices, twice the lanes per instruction of qword ones
                ptrs = e.emit(f"getelementptr i8, ptr {lds}, {VT} {aj}")
                if store:
                    row = int(rec["s"][2] if n else rec["s"][1])
                    val = self._load_row(row)
                    e.declare(f"declare void @llvm.masked.scatter.v{W}i32.v{W}p0({VT}, {PV}, i32, {IV})")
                    e.line(f"call void @llvm.masked.scatter.v{W}i32.v{W}p0({VT} {val}, {PV} {ptrs}, i32 1, "
                           f"{IV} {lanes})")
                else:
                    rp = self._ptr('%vbase', reg * 256)
                    old = self._load_row(reg)
                    e.declare(f"declare {VT} @llvm.masked.gather.v{W}i32.v{W}p0({PV}, i32, {IV}, {VT})")
                    val = e.emit(f"call {VT} @llvm.masked.gather.v{W}i32.v{W}p0({PV} {ptrs}, i32 1, {IV} {lanes}, "
                                 f"{VT} {old})")
                    e.line(f"store {VT} {val}, ptr {rp}, align 4, !tbaa !3")
                    reg += 1
        self._or_handler(k, ip)
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
        self._or_handler(k, ip)
        return True

    def _no_op(self, ip: int) -> bool:
        """Waits, hints and cache controls (lowered as s_nop) as generated code: nothing, unless the wave
        stored since its last fence (the handler then fences: docs/memory-model.md).  False: not one (the
        caller keeps the handler of those after which the wave may leave: s_sleep, s_sethalt)."""
        rec = self.nprog.code[ip]
        if self._vm_ops().get(int(rec["op"])) != "s_nop" or self.lockstep:
            return False
        e = self.e
        k = f"nop{ip}_{e.n}"
        pend = e.emit(f"load i32, ptr {self._ptr('%w', self.layout['mm_pending'])}, align 4, !tbaa !4")
        idle = e.emit(f"icmp eq i32 {pend}, 0")
        e.line(f"br i1 {idle}, label %{k}done, label %{k}slow")
        self._or_handler(k, ip, fast_done=False)
        return True

    def _load_row(self, r: int) -> str:
        """VGPR row ``r`` of the wave (all its lanes)."""
        return self.e.emit(f"load <{self.W} x i32>, ptr {self._ptr('%vbase', r * 256)}, align 4, !tbaa !3", "v")

    def _vm_ops(self) -> dict:
        """Handler id -> name of the handlers the generated code can stand in for."""
        if self._inline_ops is None:
            from ..native.layout import op_ids
            ids = op_ids()
            self._inline_ops = {ids[n]: n for n in ("vm_load", "vm_store", "s_load", "s_nop", "ds_read", "ds_write")
                                if n in ids}
        return self._inline_ops

    def _or_handler(self, k: str, ip: int, fast_done: bool = True) -> None:
        """End the generated path (``fast_done``: it falls through here) at ``{k}done``; ``{k}slow`` runs the
        instruction's handler instead."""
        e = self.e
        if fast_done:
            e.line(f"br label %{k}done")
        self._label(f"{k}slow")
        self._bridge(ip)
        e.line(f"br label %{k}done")
        self._label(f"{k}done")

