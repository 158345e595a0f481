"""Lane regions (docs/engine.md): runs of lane-wise VALU instructions compiled as one loop over chunks of
lanes — one loop for a full EXEC, one that merges under the chunk's EXEC bits — with uniform work hoisted
before the loop and lane-mask words assembled after it.  A mixin of KernelIR (kernel.py)."""
from __future__ import annotations

from .errors import Unsupported
from .irgen import chunk_map

CROSS_LANE = {"lane_read", "lane_shuffle", "lane_gather", "mask_word"}
NAN_OPS = {"fadd", "fsub", "fmul", "fdiv", "fma", "sqrt", "floor", "ceil", "ftrunc", "rint", "fpext", "fptrunc",
           "fminnum", "fmaxnum"}


class LaneRegions:
    def _classify(self, writes) -> tuple[str, set, set]:
        """(kind, uniform locations read, locations written): kind "uniform" (scalar code), "lane" (only
        lane-wise primitives, writes VGPRs / lane masks other than EXEC), or "wide" (anything else)."""
        nodes = self._graph(writes)
        reads = {n.attr for n in nodes if n.op == "read"}
        written = {w.loc for w in writes}
        # uniform reads, and lanes read from a mask SGPR (pair) as ("mask", r): _region_add resolves those
        uniform_reads = {r for r in reads if r[0] in ("s", "scc", "mode", "mask")}
        if ("exec_lanes",) in reads:
            uniform_reads |= self._mask_sgprs(126)
        if all(w.loc[0] in ("s", "scc", "mode") for w in writes) and all(n.uniform for n in nodes):
            return "uniform", uniform_reads, written
        if all(w.loc[0] == "v" or (w.loc[0] == "mask" and w.loc[1] not in (126, 127)) for w in writes) and \
                not any(n.op in CROSS_LANE and not (n.op == "lane_shuffle" and chunk_map(n.attr, self.C))
                        for n in nodes):
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
        if k not in ("v", "exec_lanes", "mask"):
            return self._read_uniform_chunk(n)
        if k == "v":
            hit = rs["rows"].get(loc[1])
            return hit if hit is not None else self._load_row_chunk(loc[1])
        if k == "exec_lanes":
            if rs["full"]:
                return "<" + ", ".join(["i1 true"] * self.C) + ">"      # (_emit_lane_region: all_true)
            return e.memo(("@exec",), lambda: e.chunk_bits(rs["exec_word"], self.W))
        if k == "mask":
            hit = rs["masks"].get(loc[1])
            if hit is not None:
                return hit
            return e.memo(("@mask", loc[1]), lambda: self._mask_chunk(loc[1]))
        raise AssertionError(k)

    def _mask_chunk(self, r: int) -> str:
        """The chunk's lanes of the lane-mask SGPR (pair) ``r``, as read before the region."""
        e = self.e
        words = self._rstate["words"]
        word = words.get(r)
        if word is None:
            saved, e.lines = e.lines, e.pre
            try:
                word = words[r] = self._word64(r) if self.W == 64 else self._sload(r)
            finally:
                e.lines = saved
        return e.chunk_bits(word, self.W)

    def _read_uniform_chunk(self, n):
        e = self.e
        loc = n.attr
        k = loc[0]
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
        """Row ``r``'s chunk: an offset from the chunk's pointer into row 0 (made once per loop iteration)."""
        if r == 0:
            return self._rstate["cptr"]
        return self.e.emit(f"getelementptr inbounds i8, ptr {self._rstate['cptr']}, i64 {r * 256}", "p")

    def _load_row_chunk(self, r: int) -> str:
        """Row ``r``'s chunk as it was before the region (the body stores no row before the chunk's end: one
        load per row and loop body, kept while it dominates)."""
        e = self.e
        return e.memo(("@row", r), lambda: e.emit(f"load <{self.C} x i32>, ptr {self._row_chunk_ptr(r)}, align 4, "
                                                   "!tbaa !3", "v"))

    def _chunk_ptr(self, loop: str) -> None:
        """(top of a chunk loop's body) The chunk's pointer into row 0."""
        e = self.e
        z = e.emit(f"zext i32 {e.chunk} to i64")
        self._rstate["cptr"] = e.emit(f"getelementptr inbounds i32, ptr %vbase, i64 {z}", "cp")

    def _emit_lane_region(self, lane_writes) -> None:
        """A run of lane-wise instructions as a loop over chunks of C lanes: per chunk, every instruction in
        order with the chunk's values in registers, the VGPR rows written stored once at the end of the chunk,
        the lane-mask words assembled across chunks and stored after the loop.

        Two loops: under a full EXEC (the common case) one without any masking, else one that merges every
        result under the chunk's EXEC bits.  Float results are computed without the NaN rule first; a chunk
        where some NaN appeared is recomputed with it (the full loop hands that chunk, and the rest, to the
        masked loop, whose recomputation is exact for any EXEC).  Compact (the quick tier): the masked loop
        computes with the NaN rule at once."""
        e = self.e
        W, C = self.W, self.C
        nch = W // C
        rid = e.tmp("rg")[1:]
        pre_block = e.block
        nan_ruled = any(n.op in NAN_OPS and n.attr != "nf" and not n.uniform
                        for ws in lane_writes for n in self._graph(ws))
        mask_regs = []
        for ws in lane_writes:
            for w in ws:
                if w.loc[0] == "mask" and w.loc[1] not in mask_regs:
                    mask_regs.append(w.loc[1])
        pre = e.lines
        exec_word = self._exec_word()
        self._rstate = {"rows": {}, "masks": {}, "words": {}, "exec_word": exec_word, "full": False}

        all_true = "<" + ", ".join(["i1 true"] * C) + ">"

        def run_body(exact: bool):
            self._rstate["rows"], self._rstate["masks"] = {}, {}
            e.exact_nan, e.nan_flags, e.nan_known = exact, [], set()
            e.nan_pend, e.nan_root, e.rare_depth = {}, {}, 0
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
                        if m is not None and m != all_true:       # (a full EXEC's writes need no merge)
                            old = self._rstate["rows"].get(r)
                            if old is None:
                                # (frozen: LLVM would otherwise turn select + store into a masked store,
                                # which is slow on x86)
                                old = e.memo(("@frozen", r), lambda: e.emit(
                                    f"freeze <{C} x i32> {self._load_row_chunk(r)}"))
                            v = e.emit(f"select <{C} x i1> {m}, <{C} x i32> {v}, <{C} x i32> {old}")
                        self._rstate["rows"][r] = v
                    else:
                        self._rstate["masks"][wr.loc[1]] = v
            e.flush_nan_pending()
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

        # the full-EXEC loop (not in compact code: the masked loop runs a full EXEC as well)
        full_body: list[str] = []
        floop = f"{rid}f"
        e.pre, e.W = pre, C
        nan_exit, facc_next, flatch = None, {}, None
        if not self.compact:
            e.lines, e.chunk = full_body, f"%{floop}c"
            e.invalidate()
            self._rstate["full"] = True
            e.block = floop
            e.line(f"%{floop}c = mul i32 %{floop}k, {C}")
            self._chunk_ptr(floop)
            rows_f, masks_f, flags = run_body(exact=not nan_ruled)
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
        self._chunk_ptr(rid)
        rows_f, masks_f, flags = run_body(exact=not nan_ruled or self.compact)
        fast_end = e.block
        if nan_ruled and flags and not self.compact:
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

        if self.compact:
            pre.append(f"  br label %{rid}loop")
            fheader = []
        else:
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
        from_f = (lambda r: "") if self.compact else (lambda r: f", [{facc_next[r]}, %{flatch}]")
        fins = [e.emit(f"phi i{W} [{acc_next[r]}, %{latch}]{from_f(r)}") for r in mask_regs]
        for r, fin in zip(mask_regs, fins):
            self._store_mask_word(r, fin)

