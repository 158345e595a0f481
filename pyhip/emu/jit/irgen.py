"""The LLVM backend of the semantics language: a graph of pyhip/emu/spec/lang nodes → LLVM IR for one wave.

Per-lane values are vectors ``<W x T>`` (W = 64 or 32: one whole wave per operation, which LLVM splits into
host SIMD registers), uniform values scalars.  Each primitive implements its contract in lang.py exactly;
where LLVM's own operation is looser (it may commute a float add, so which NaN comes out would depend on
it; it has no direct double→half conversion), the code below spells the contract out.

IR is produced as text (faster to build from Python than an IR builder) and parsed by llvmlite."""
from __future__ import annotations

import functools
import struct

from ..spec import lang
from ..spec.lang import B1, F16, F32, F64, Node, walk

LLTY = {"b1": "i1", "u8": "i8", "i8": "i8", "u16": "i16", "i16": "i16", "f16": "half", "u32": "i32", "i32": "i32",
        "f32": "float", "u64": "i64", "i64": "i64", "f64": "double"}
ITY = {8: "i8", 16: "i16", 32: "i32", 64: "i64"}
QUIET = {16: 0x0200, 32: 0x00400000, 64: 0x0008000000000000}
SUFFIX = {"f16": "f16", "f32": "f32", "f64": "f64", "u8": "i8", "i8": "i8", "u16": "i16", "i16": "i16",
          "u32": "i32", "i32": "i32", "u64": "i64", "i64": "i64", "b1": "i1"}


_NF_OPS = {"fadd", "fsub", "fmul", "fdiv", "fma", "sqrt", "floor", "ceil", "ftrunc", "rint", "fpext", "fptrunc"}


def _nan_bits(n: Node) -> bool:
    """Whether the constant ``n``'s bits are a NaN of its width (a float NaN, or an integer that a same-width
    bitcast would make one)."""
    bits = n.ty.bits
    if bits not in (16, 32, 64) or not isinstance(n.attr, int):
        return False
    mant = {16: 10, 32: 23, 64: 52}[bits]
    e = (n.attr >> mant) & ((1 << (bits - 1 - mant)) - 1)
    return e == (1 << (bits - 1 - mant)) - 1 and (n.attr & ((1 << mant) - 1)) != 0


def _lazy_walk(root: Node, done: dict) -> list:
    """walk([root]), except that the costly operand of a ``rare`` node is not entered (_rare computes it in
    a block of its own; a node reached another way as well is computed before, as usual), nor the operands
    of a node in ``done`` (its value is made already)."""
    return walk([root], lambda n: () if id(n) in done else (n.args[0], n.args[2]) if n.op == "rare" else n.args)


def chunk_map(lane_map, C: int):
    """A wave's static lane map as a map within each chunk of C lanes, if it is one (every lane reads a lane
    of its own chunk, the same way in every chunk, or reads 0), else None."""
    r = _chunk_map(tuple(lane_map), C)
    return None if r is None else list(r)


@functools.lru_cache(maxsize=4096)
def _chunk_map(lane_map: tuple, C: int):
    local = [m - (i // C) * C if m >= 0 else -1 for i, m in enumerate(lane_map)]
    if any(m >= C or (m < 0 and lane_map[i] >= 0) for i, m in enumerate(local)):
        return None
    if any(local[i] != local[i % C] for i in range(len(local))):
        return None
    return tuple(local[:C])


class Emitter:
    """Builds the IR of one function: ``line()`` appends instructions, ``node()`` gives a graph node's value."""

    def __init__(self, lanes: int):
        self.W = lanes                     # IR vector width of per-lane values (a chunk's width in chunk mode)
        self.lanes = lanes                 # the wave's lanes
        self.chunk = None                  # chunk mode: the IR name of the chunk's first lane (i32), else None
        self.pre: list[str] | None = None  # chunk mode: the lines before the chunk loop (uniform values)
        self.exact_nan = True              # chunk mode, fast body: False (NaN-ruled ops only flagged)
        self.nan_flags: list[str] = []     # chunk mode, fast body: per-lane "some result was NaN" flags
        # chunk mode, fast body: values of which a NaN in any lane already raises a flag of this chunk (a flag
        # on them, or on what they are made of; see _note_known) — an operand known so needs no flag of its own
        self.nan_known: set[str] = set()
        # chunk mode, fast body: NaN flags not made yet.  A NaN-ruled result is a *root* whose flag (isnan) is
        # made at the end of its scope (the body, or the rare block it was made in) unless a consumer covers it:
        # an operation of the same scope whose result is NaN in every lane where this operand is, and which is
        # itself a root (so its own flag, or the flag of what covers it in turn, sees that NaN).  Aliases (a
        # same-width bitcast, a conversion) share their operand's root.
        self.nan_pend: dict[str, list] = {}     # root -> [IR type, rare depth, covered]
        self.nan_root: dict[str, str] = {}      # value -> its root
        self.rare_depth = 0
        self.lines: list[str] = []
        self.n = 0
        self.declares: set[str] = set()
        self.values: dict[int, tuple[str, bool]] = {}     # id(node) -> (name, vector)
        self._splats: dict[tuple, str] = {}
        self.read_hook = None              # fn(node) -> IR value name (scalar or vector per node.uniform)
        self.word_hook = None              # fn(read node of lanes) -> the lane-mask word it reads, or None
        self.entry_allocas: list[str] = []
        self.block = "entry"               # the label of the block being filled

    # -- basics -----------------------------------------------------------------------------------------------
    def tmp(self, prefix="t") -> str:
        self.n += 1
        return f"%{prefix}{self.n}"

    def line(self, text: str) -> None:
        self.lines.append("  " + text)

    def emit(self, rhs: str, prefix="t") -> str:
        t = self.tmp(prefix)
        self.line(f"{t} = {rhs}")
        return t

    def emit_pre(self, rhs: str, prefix="t") -> str:
        """An instruction for the chunk loop's preheader (loop invariant), or here outside chunk mode."""
        if self.pre is None:
            return self.emit(rhs, prefix)
        t = self.tmp(prefix)
        self.pre.append(f"  {t} = {rhs}")
        return t

    def ty(self, t, vector: bool) -> str:
        s = LLTY[t.name]
        return f"<{self.W} x {s}>" if vector else s

    def vty(self, scalar_ty: str) -> str:
        return f"<{self.W} x {scalar_ty}>"

    def declare(self, text: str) -> None:
        self.declares.add(text)

    def splat(self, scalar: str, sty: str) -> str:
        key = (scalar, sty)
        hit = self._splats.get(key)
        if hit is not None:
            return hit
        if not scalar.startswith("%"):            # a constant: a constant vector, no instructions
            return f"splat ({sty} {scalar})"
        ins = self.emit_pre(f"insertelement <{self.W} x {sty}> poison, {sty} {scalar}, i64 0")
        v = self.emit_pre(f"shufflevector <{self.W} x {sty}> {ins}, <{self.W} x {sty}> poison, <{self.W} x i32> zeroinitializer")
        self._splats[key] = v
        return v

    def memo(self, key: tuple, make) -> str:
        """make()'s value, made once per key while it dominates: kept with the splats (forgotten with them at a
        new block, and what a rare or guarded block made is dropped at its end).  Keys start with "@"."""
        hit = self._splats.get(key)
        if hit is None:
            hit = self._splats[key] = make()
        return hit

    def invalidate(self) -> None:
        """Forget cached values (a new basic block: values defined in another block may not dominate)."""
        self.values.clear()
        self._splats.clear()

    # -- constants -----------------------------------------------------------------------------------------------
    def const_scalar(self, n: Node) -> str:
        t = n.ty
        if t is B1:
            return "true" if n.attr else "false"
        if t.is_float:
            bits = n.attr
            ib = ITY[t.bits]
            return self.emit_pre(f"bitcast {ib} {_signed(bits, t.bits)} to {LLTY[t.name]}")
        return str(_signed(n.attr, t.bits))

    # -- values ----------------------------------------------------------------------------------------------------
    def value(self, n: Node, vector: bool) -> str:
        """The IR value of ``n``, as a vector (splatted if uniform) or a scalar."""
        if id(n) not in self.values:
            self.node(n)
        name, isvec = self.values[id(n)]
        if vector and not isvec:
            v = self.splat(name, LLTY[n.ty.name])
            if n.op == "const" and not self.exact_nan and not _nan_bits(n):
                self.nan_known.add(v)
            return v
        if not vector and isvec:
            raise lang.SpecError(f"a per-lane value used as uniform: {n!r}")
        return name

    def node(self, root: Node) -> None:
        for n in _lazy_walk(root, self.values):
            if id(n) in self.values:
                continue
            vec = not n.uniform
            if n.op == "rare" and vec:       # (a uniform one is a select: scalar work, and in chunk mode it
                self.values[id(n)] = (self._rare(n, vec), vec)     # belongs before the loop, no place for a branch)
                continue
            if n.op == "const":
                self.values[id(n)] = (self.const_scalar(n), False)
                continue
            if n.op == "read":
                self.values[id(n)] = (self.read_hook(n), vec)
                continue
            if self.pre is not None and not vec:         # chunk mode: uniform values before the loop
                saved, self.lines = self.lines, self.pre
                try:
                    self.values[id(n)] = (self.prim(n, vec), vec)
                finally:
                    self.lines = saved
                continue
            self.values[id(n)] = (self.prim(n, vec), vec)
            if vec and not self.exact_nan and self.chunk is not None:
                self._note_known(n)

    def _note_known(self, n: Node) -> None:
        """(fast chunk body) Whether the vector just made for ``n`` joins nan_known: a NaN-free result (``nf``:
        the description rules NaN out), or a NaN in it implies one in operands already known — a same-width
        bitcast, a lane shuffle within the chunk (its zero fill is no NaN), a select of two known values."""
        op = n.op
        if n.attr == "nf" and op in _NF_OPS:
            known = True
        elif op == "bitcast":
            src = self.value(n.args[0], True)
            known = n.ty.bits == n.args[0].ty.bits and src in self.nan_known
            root = self.nan_root.get(src)
            if known and root is not None:
                self.nan_root[self.values[id(n)][0]] = root
        elif op == "lane_shuffle":
            known = self.value(n.args[0], True) in self.nan_known
        elif op == "select":
            known = all(self.value(a, True) in self.nan_known for a in n.args[1:])
        else:
            return
        if known:
            self.nan_known.add(self.values[id(n)][0])

    def _rare(self, n: Node, vec: bool) -> str:
        """rare(c, a, b) per lane: b, or select(c, a, b) computed in a block entered only when some lane's c holds.
        What is made inside the block (values, splats, NaN flags) does not outlive it: the flags leave
        through a phi (none on the other edge)."""
        cn, an, bn = n.args
        T = self.ty(n.ty, vec)
        b = self.value(bn, vec)
        if cn.uniform:
            c = self.value(cn, False)
            anyc, ct = c, "i1"
        else:
            c = self.value(cn, True)
            anyc, ct = self._any(c, True), self.vty("i1")
        k = self.tmp("rare")[1:]
        pre = self.block
        self.line(f"br i1 {anyc}, label %{k}x, label %{k}j")
        self.lines.append(f"{k}x:")
        self.block = f"{k}x"
        saved_values, saved_splats, nflags = dict(self.values), dict(self._splats), len(self.nan_flags)
        saved_known = set(self.nan_known)
        self.rare_depth += 1
        a = self.value(an, vec)
        self.flush_nan_pending()              # the roots made in this block get their flags here
        self.rare_depth -= 1
        a_known = a in self.nan_known          # (its flags leave the block through the phi below)
        self.nan_known = saved_known
        r = self.emit(f"select {ct} {c}, {T} {a}, {T} {b}")
        flags = self.nan_flags[nflags:]
        del self.nan_flags[nflags:]
        flag = flags[0] if flags else None
        for f in flags[1:]:
            flag = self.emit(f"or {self.vty('i1')} {flag}, {f}")
        end = self.block
        self.line(f"br label %{k}j")
        self.lines.append(f"{k}j:")
        self.block = f"{k}j"
        self.values, self._splats = saved_values, saved_splats
        out = self.emit(f"phi {T} [{r}, %{end}], [{b}, %{pre}]")
        if a_known and b in self.nan_known:
            self.nan_known.add(out)
        if flag is not None:
            self.nan_flags.append(self.emit(f"phi {self.vty('i1')} [{flag}, %{end}], [zeroinitializer, %{pre}]"))
        return out

    # -- primitives ------------------------------------------------------------------------------------------------
    def prim(self, n: Node, vec: bool) -> str:
        op, t = n.op, n.ty
        T = self.ty(t, vec)
        args = [self.value(a, vec) if op not in ("lane_read", "lane_shuffle", "lane_gather", "mask_word")
                else None for a in n.args]
        if op in ("add", "sub", "mul", "and", "or", "xor"):
            return self.emit(f"{op} {T} {args[0]}, {args[1]}")
        if op == "not":
            return self.emit(f"xor {T} {args[0]}, {self._allones(t, vec)}")
        if op in ("shl", "lshr", "ashr"):
            amt = self.emit(f"and {T} {args[1]}, {self._kint(t.bits - 1, t, vec)}")
            return self.emit(f"{op} {T} {args[0]}, {amt}")
        if op == "icmp":
            at = self.ty(n.args[0].ty, vec)
            return self.emit(f"icmp {n.attr} {at} {args[0]}, {args[1]}")
        if op == "fcmp":
            at = self.ty(n.args[0].ty, vec)
            return self.emit(f"fcmp {n.attr} {at} {args[0]}, {args[1]}")
        if op in ("select", "rare"):
            c = self.value(n.args[0], vec and not n.args[0].uniform) if n.args[0].uniform else args[0]
            ct = "i1" if n.args[0].uniform else self.vty("i1")
            return self.emit(f"select {ct} {c}, {T} {args[1]}, {T} {args[2]}")
        src = n.args[0].ty if n.args else None
        ST = self.ty(src, vec) if src is not None else None
        if op in ("zext", "sext", "trunc", "bitcast"):
            return self.emit(f"{op} {ST} {args[0]} to {T}")
        if op == "fpext":
            r = self.emit(f"fpext {ST} {args[0]} to {T}")
            return r if n.attr == "nf" else self._conv_nan(r, args[0], src, t, vec)
        if op == "itofp":
            return self.emit(f"{'sitofp' if src.signed else 'uitofp'} {ST} {args[0]} to {T}")
        if op == "fptrunc":
            if src is F64 and t is F16:
                r = self._f64_to_f16(args[0], vec)
            else:
                r = self.emit(f"fptrunc {ST} {args[0]} to {T}")
            return r if n.attr == "nf" else self._conv_nan(r, args[0], src, t, vec)
        if op == "fptoint":
            if vec and src in (F16, F32, F64) and t.bits <= 32:   # f16 too: x86 AVX-512 gave NaN -> INT_MIN
                return self._fptoint_lanes(args[0], src, t)
            x = args[0]
            if src is F16:                    # exactly as f32 (the f16 forms gave NaN -> INT_MIN on AVX-512)
                src, ST0 = F32, ST
                ST = self.ty(F32, vec)
                x = self.emit(f"fpext {ST0} {x} to {ST}")
            kind = "fptosi" if t.signed else "fptoui"
            name = f"llvm.{kind}.sat.{self._mangle(t, vec)}.{self._mangle(src, vec)}"
            self.declare(f"declare {T} @{name}({ST})")
            return self.emit(f"call {T} @{name}({ST} {x})")
        if op in ("fadd", "fsub", "fmul", "fdiv"):
            r = self.emit(f"{op} {T} {args[0]}, {args[1]}")
            return r if n.attr == "nf" else self._nan_rule(r, args, t, vec)
        if op == "fma":
            if t is F16:
                r = self._fma16(args, vec)
                return r if n.attr == "nf" else self._nan_rule(r, args, t, vec)
            name = f"llvm.fma.{self._mangle(t, vec)}"
            self.declare(f"declare {T} @{name}({T}, {T}, {T})")
            r = self.emit(f"call {T} @{name}({T} {args[0]}, {T} {args[1]}, {T} {args[2]})")
            return r if n.attr == "nf" else self._nan_rule(r, args, t, vec)
        if op in ("fminnum", "fmaxnum"):
            return self._minmax(n, args, t, vec)
        if op in ("sqrt", "floor", "ceil", "ftrunc", "rint"):
            iname = {"sqrt": "sqrt", "floor": "floor", "ceil": "ceil", "ftrunc": "trunc", "rint": "roundeven"}[op]
            name = f"llvm.{iname}.{self._mangle(t, vec)}"
            self.declare(f"declare {T} @{name}({T})")
            r = self.emit(f"call {T} @{name}({T} {args[0]})")
            return r if n.attr == "nf" else self._nan_rule(r, args, t, vec)
        if op in ("ctpop", "ctlz", "cttz", "bitrev"):
            iname = {"bitrev": "bitreverse"}.get(op, op)
            name = f"llvm.{iname}.{self._mangle(t, vec)}"
            if op in ("ctlz", "cttz"):
                self.declare(f"declare {T} @{name}({T}, i1)")
                return self.emit(f"call {T} @{name}({T} {args[0]}, i1 false)")
            self.declare(f"declare {T} @{name}({T})")
            return self.emit(f"call {T} @{name}({T} {args[0]})")
        if op == "lane_id":
            iota = "<" + ", ".join(f"i32 {i}" for i in range(self.W)) + ">"
            if self.chunk is None:
                return iota
            return self.emit(f"add <{self.W} x i32> {self._chunk_splat()}, {iota}")
        if op == "lane_read":
            v = n.args[0]
            if v.uniform:
                return self.value(v, False)
            vv = self.value(v, True)
            i = self.value(n.args[1], False)
            it = LLTY[n.args[1].ty.name]
            idx = self.emit(f"and {it} {i}, {self.W - 1}")
            return self.emit(f"extractelement {self.ty(v.ty, True)} {vv}, {it} {idx}")
        if op == "lane_shuffle":
            v = n.args[0]
            vv = self.value(v, True)
            VT = self.ty(v.ty, True)
            lane_map = n.attr if self.chunk is None else chunk_map(n.attr, self.W)
            mask = ", ".join(f"i32 {m if m >= 0 else self.W}" for m in lane_map)
            return self.emit(f"shufflevector {VT} {vv}, {VT} zeroinitializer, <{self.W} x i32> <{mask}>")
        if op == "lane_gather":
            return self._lane_gather(n)
        if op == "mask_word":
            a = n.args[0]
            if a.op == "read" and self.word_hook is not None and self.chunk is None:
                word = self.word_hook(a)       # lanes read from a mask word: that word (no round trip)
                if word is not None:
                    return word
            c = self.value(a, True)
            return self.emit(f"bitcast <{self.W} x i1> {c} to i{self.W}")
        if op == "word_lanes":
            x = self.value(n.args[0], False)
            if self.chunk is None:
                return self.word_to_lanes(x)
            return self.chunk_bits(x, self.lanes)
        raise lang.SpecError(f"LLVM backend: no primitive {op}")

    # -- helpers for contracts ---------------------------------------------------------------------------------------
    def _mangle(self, t, vec: bool) -> str:
        s = SUFFIX[t.name]
        return f"v{self.W}{s}" if vec else s

    def _kint(self, v: int, t, vec: bool) -> str:
        s = str(_signed(v & t.mask, t.bits))
        return self.splat(s, LLTY[t.name]) if vec else s

    def _allones(self, t, vec: bool) -> str:
        if t is B1:
            return self.splat("true", "i1") if vec else "true"
        return self._kint(t.mask, t, vec)

    def _fptoint_lanes(self, x: str, src, t) -> str:
        """fptoint of a vector to 32 bits or fewer as compares, selects and one in-range ``fptosi`` (LLVM's
        saturating conversion intrinsics are scalarized on x86: ~6 host instructions per lane)."""
        ST, I32, T, B = self.ty(src, True), self.vty("i32"), self.ty(t, True), self.vty("i1")
        fk = (lambda v: self.splat(f"0x{struct.unpack('<Q', struct.pack('<d', v))[0]:016X}", LLTY[src.name]))
        ik = (lambda v, n=32: self.splat(str(_signed(v & ((1 << n) - 1), n)), f"i{n}"))
        bits = t.bits
        hi = float(1 << (bits - 1)) if t.signed else float(1 << bits)
        if src is F16 and hi > 65504.0:       # beyond binary16: only an infinity is out of range
            above = self.emit(f"fcmp ogt {ST} {x}, {fk(65504.0)}")
        else:
            above = self.emit(f"fcmp oge {ST} {x}, {fk(hi)}")
        if t.signed:
            below = self.emit(f"fcmp olt {ST} {x}, {fk(max(-hi, -65504.0) if src is F16 else -hi)}")
            nan = self.emit(f"fcmp uno {ST} {x}, {x}")
            out = self.emit(f"or {B} {below}, {nan}")
        else:
            out = below = self.emit(f"fcmp ule {ST} {x}, {fk(-1.0)}")     # NaN too: both give 0
        out = self.emit(f"or {B} {out}, {above}")
        safe = self.emit(f"select {B} {out}, {ST} zeroinitializer, {ST} {x}")
        if not t.signed and bits == 32 and src is not F16:   # [2^31, 2^32): convert x - 2^31, set the top bit
            big = self.emit(f"fcmp oge {ST} {safe}, {fk(2.0 ** 31)}")
            low = self.emit(f"fsub {ST} {safe}, {fk(2.0 ** 31)}")
            safe = self.emit(f"select {B} {big}, {ST} {low}, {ST} {safe}")
            conv = self.emit(f"fptosi {ST} {safe} to {I32}")
            top = self.emit(f"select {B} {big}, {I32} {ik(1 << 31)}, {I32} zeroinitializer")
            conv = self.emit(f"xor {I32} {conv}, {top}")
        else:
            conv = self.emit(f"fptosi {ST} {safe} to {I32}")
        if bits < 32:
            conv = self.emit(f"trunc {I32} {conv} to {T}")
        if t.signed:
            conv = self.emit(f"select {B} {nan}, {T} zeroinitializer, {T} {conv}")
            conv = self.emit(f"select {B} {below}, {T} {ik(-(1 << (bits - 1)), bits)}, {T} {conv}")
            return self.emit(f"select {B} {above}, {T} {ik((1 << (bits - 1)) - 1, bits)}, {T} {conv}")
        conv = self.emit(f"select {B} {below}, {T} zeroinitializer, {T} {conv}")
        return self.emit(f"select {B} {above}, {T} {ik(-1, bits)}, {T} {conv}")

    def _isnan(self, x: str, t, vec: bool) -> str:
        return self.emit(f"fcmp uno {self.ty(t, vec)} {x}, {x}")

    def _quiet(self, x: str, t, vec: bool) -> str:
        it = self.vty(ITY[t.bits]) if vec else ITY[t.bits]
        b = self.emit(f"bitcast {self.ty(t, vec)} {x} to {it}")
        q = self.emit(f"or {it} {b}, {self.splat(str(QUIET[t.bits]), ITY[t.bits]) if vec else QUIET[t.bits]}")
        return self.emit(f"bitcast {it} {q} to {self.ty(t, vec)}")

    DEFAULT_NAN = {16: 0xFE00, 32: 0xFFC00000, 64: 0xFFF8000000000000}
    MANT = {16: 10, 32: 23, 64: 52}

    def _any(self, c: str, vec: bool) -> str:
        if not vec:
            return c
        name = f"llvm.vector.reduce.or.v{self.W}i1"
        self.declare(f"declare i1 @{name}(<{self.W} x i1>)")
        return self.emit(f"call i1 @{name}(<{self.W} x i1> {c})")

    def _guarded(self, r: str, T: str, cond: str, vec: bool, fix) -> str:
        """r, or fix() where ``cond`` (per lane) holds; fix() runs in a block entered only when some lane
        needs it (NaNs are rare: the common path is one compare, one reduction and a branch)."""
        k = self.tmp("nan")[1:]
        anyc = self._any(cond, vec)
        pre = self.block
        self.line(f"br i1 {anyc}, label %{k}fix, label %{k}ok")
        self.lines.append(f"{k}fix:")
        self.block = f"{k}fix"
        saved = dict(self._splats)
        f = fix()
        fix_block = self.block
        self._splats = saved
        self.line(f"br label %{k}ok")
        self.lines.append(f"{k}ok:")
        self.block = f"{k}ok"
        return self.emit(f"phi {T} [{r}, %{pre}], [{f}, %{fix_block}]")

    def _chunk_splat(self) -> str:
        """The chunk's first lane in every element (in the loop body: it changes per chunk)."""
        return self.memo(("@chunk",), self._chunk_splat_make)

    def _chunk_splat_make(self) -> str:
        ins = self.emit(f"insertelement <{self.W} x i32> poison, i32 {self.chunk}, i64 0")
        return self.emit(f"shufflevector <{self.W} x i32> {ins}, <{self.W} x i32> poison, <{self.W} x i32> zeroinitializer")

    def chunk_bits(self, word: str, wbits: int) -> str:
        """Bits [chunk, chunk + W) of a lane-mask word (i``wbits``) as <W x i1>."""
        c = self.emit(f"zext i32 {self.chunk} to i{wbits}") if wbits > 32 else self.chunk
        sh = self.emit(f"lshr i{wbits} {word}, {c}")
        tr = self.emit(f"trunc i{wbits} {sh} to i32") if wbits > 32 else sh
        return self.word_lanes32([tr] * (self.W // 32 or 1), self.W)

    def word_to_lanes(self, word: str) -> str:
        """A whole wave's lane-mask word (i``W``) as <W x i1>."""
        if self.W <= 32:
            return self.word_lanes32([word], self.W)
        lo = self.emit(f"trunc i64 {word} to i32")
        hi = self.emit(f"lshr i64 {word}, 32")
        hi = self.emit(f"trunc i64 {hi} to i32")
        return self.word_lanes32([lo, hi], 64)

    def word_lanes32(self, words: list[str], n: int) -> str:
        """<n x i1> whose lane l is bit l % 32 of words[l // 32] (i32 each).  Spelled as a splat, an and with
        each lane's bit and a compare: on x86 without mask registers LLVM turns a bitcast from an integer to
        <n x i1> into one bit extraction and insertion per lane."""
        parts = []
        k = min(n, 32)
        for wd in words:
            ins = self.emit(f"insertelement <{k} x i32> poison, i32 {wd}, i64 0")
            parts.append(self.emit(f"shufflevector <{k} x i32> {ins}, <{k} x i32> poison, <{k} x i32> zeroinitializer"))
        v = parts[0]
        if len(parts) == 2:
            idx = ", ".join(f"i32 {i}" for i in range(2 * k))
            v = self.emit(f"shufflevector <{k} x i32> {parts[0]}, <{k} x i32> {parts[1]}, <{2 * k} x i32> <{idx}>")
        bits = ", ".join(f"i32 {_signed(1 << (i % 32), 32)}" for i in range(n))
        a = self.emit(f"and <{n} x i32> {v}, <{bits}>")
        return self.emit(f"icmp ne <{n} x i32> {a}, zeroinitializer")

    def _nan_rule(self, r: str, ins: list[str], t, vec: bool) -> str:
        """The contract's NaN: the first NaN operand quieted, else the default NaN, where r is NaN."""
        T = self.ty(t, vec)
        bt = self.vty("i1") if vec else "i1"
        if self.chunk is not None and vec and not self.exact_nan:
            # the fast body: redone exactly when some lane was NaN.  A NaN operand makes r NaN in its lane:
            # r covers its operands' roots, and is one itself
            self._nan_cover(ins)
            self._nan_new_root(r, T)
            return r
        nr = self._isnan(r, t, vec)

        def fix():
            it = ITY[t.bits]
            dflt = self.emit(f"bitcast {self.vty(it) if vec else it} "
                             f"{self.splat(str(_signed(self.DEFAULT_NAN[t.bits], t.bits)), it) if vec else _signed(self.DEFAULT_NAN[t.bits], t.bits)} to {T}")
            out = dflt
            for x in reversed(ins):
                nx = self._isnan(x, t, vec)
                out = self.emit(f"select {bt} {nx}, {T} {self._quiet(x, t, vec)}, {T} {out}")
            return self.emit(f"select {bt} {nr}, {T} {out}, {T} {r}")
        if self.chunk is not None:
            return fix()
        return self._guarded(r, T, nr, vec, fix)

    def _nan_new_root(self, r: str, T: str) -> None:
        self.nan_pend[r] = [T, self.rare_depth, False]
        self.nan_root[r] = r
        self.nan_known.add(r)

    def _nan_cover(self, operands) -> None:
        for x in operands:
            root = self.nan_root.get(x)
            if root is not None:
                p = self.nan_pend.get(root)
                if p is not None and p[1] == self.rare_depth:
                    p[2] = True

    def flush_nan_pending(self) -> None:
        """(fast chunk body) Make the flags of the roots of the current scope that nothing covered."""
        for root, (T, depth, covered) in list(self.nan_pend.items()):
            if depth != self.rare_depth:
                continue
            del self.nan_pend[root]
            if not covered:
                self.nan_flags.append(self.emit(f"fcmp uno {T} {root}, {root}"))

    def _minmax(self, n: Node, args: list[str], t, vec: bool) -> str:
        """fminnum/fmaxnum: LLVM's minimumnum/maximumnum (IEEE 754-2019: -0 < +0, a NaN operand yields the
        other) where no operand is NaN; the contract's NaN choices where one is."""
        T = self.ty(t, vec)
        bt = self.vty("i1") if vec else "i1"
        iname = "minimumnum" if n.op == "fminnum" else "maximumnum"
        name = f"llvm.{iname}.{self._mangle(t, vec)}"
        a, b = args
        if self.chunk is not None and vec and not self.exact_nan:
            # flag the operands not known already (r is NaN only where both are: r is known after).  A chunk
            # with a NaN operand is re-run exactly, so here no operand is NaN: the larger (smaller) of two
            # unequal values — x86's maxps/minps — and of equal ones the and (or) of their bits, which is +0
            # (-0) for a pair of zeros of either signs and the value itself otherwise (minimumnum/maximumnum
            # expand to twice the instructions, handling NaNs no lane here has)
            unknown = [x for x in dict.fromkeys((a, b)) if x not in self.nan_known]
            if unknown:
                x, y = unknown[0], unknown[-1]
                self.nan_flags.append(self.emit(f"fcmp uno {T} {x}, {y}"))
            it = self.vty(ITY[t.bits])
            pick = self.emit(f"fcmp {'olt' if n.op == 'fminnum' else 'ogt'} {T} {a}, {b}")
            m = self.emit(f"select {bt} {pick}, {T} {a}, {T} {b}")
            eq = self.emit(f"fcmp oeq {T} {a}, {b}")
            ab = self.emit(f"bitcast {T} {a} to {it}")
            bb = self.emit(f"bitcast {T} {b} to {it}")
            zb = self.emit(f"{'or' if n.op == 'fminnum' else 'and'} {it} {ab}, {bb}")
            z = self.emit(f"bitcast {it} {zb} to {T}")
            r = self.emit(f"select {bt} {eq}, {T} {z}, {T} {m}")
            self.nan_known.add(r)
            return r
        self.declare(f"declare {T} @{name}({T}, {T})")
        r = self.emit(f"call {T} @{name}({T} {a}, {T} {b})")
        anynan = self.emit(f"fcmp uno {T} {a}, {b}")

        def fix():
            na = self._isnan(a, t, vec)
            nb = self._isnan(b, t, vec)
            out = self.emit(f"select {bt} {na}, {T} {b}, {T} {r}")
            out = self.emit(f"select {bt} {nb}, {T} {a}, {T} {out}")
            if n.attr == "ieee":
                for x, nx in ((b, nb), (a, na)):
                    it = self.vty(ITY[t.bits]) if vec else ITY[t.bits]
                    xb = self.emit(f"bitcast {T} {x} to {it}")
                    q = self.splat(str(QUIET[t.bits]), ITY[t.bits]) if vec else str(QUIET[t.bits])
                    qb = self.emit(f"and {it} {xb}, {q}")
                    zero = self.splat("0", ITY[t.bits]) if vec else "0"
                    quiet_clear = self.emit(f"icmp eq {it} {qb}, {zero}")
                    snan = self.emit(f"and {bt} {nx}, {quiet_clear}")
                    out = self.emit(f"select {bt} {snan}, {T} {self._quiet(x, t, vec)}, {T} {out}")
            return out
        if self.chunk is not None:
            return fix()
        return self._guarded(r, T, anynan, vec, fix)

    def _conv_nan(self, r: str, x: str, src, t, vec: bool) -> str:
        """A converted NaN: sign kept, quiet bit set, the payload's top bits kept."""
        T = self.ty(t, vec)
        bt = self.vty("i1") if vec else "i1"
        if self.chunk is not None and vec and not self.exact_nan:
            # r is NaN exactly where x is: r shares x's root (x becomes one if nothing raises its NaN yet)
            if x not in self.nan_known:
                self._nan_new_root(x, self.ty(src, vec))
            root = self.nan_root.get(x)
            if root is not None:
                self.nan_root[r] = root
            self.nan_known.add(r)
            return r
        nx = self._isnan(x, src, vec)

        def fix():
            si, so = ITY[src.bits], ITY[t.bits]
            SI = self.vty(si) if vec else si
            SO = self.vty(so) if vec else so
            k = (lambda v, ty: self.splat(str(_signed(v, int(ty[1:]))), ty) if vec else str(_signed(v, int(ty[1:]))))
            b = self.emit(f"bitcast {self.ty(src, vec)} {x} to {SI}")
            sign = self.emit(f"lshr {SI} {b}, {k(src.bits - 1, si)}")
            mant = self.emit(f"and {SI} {b}, {k((1 << self.MANT[src.bits]) - 1, si)}")
            shift = self.MANT[t.bits] - self.MANT[src.bits]
            if t.bits > src.bits:
                sign = self.emit(f"zext {SI} {sign} to {SO}")
                mant = self.emit(f"zext {SI} {mant} to {SO}")
                mant = self.emit(f"shl {SO} {mant}, {k(shift, so)}")
            else:
                mant = self.emit(f"lshr {SI} {mant}, {k(-shift, si)}")
                mant = self.emit(f"trunc {SI} {mant} to {SO}")
                sign = self.emit(f"trunc {SI} {sign} to {SO}")
            sign = self.emit(f"shl {SO} {sign}, {k(t.bits - 1, so)}")
            exp_q = ((1 << (t.bits - 1 - self.MANT[t.bits])) - 1) << self.MANT[t.bits] | QUIET[t.bits]
            v = self.emit(f"or {SO} {sign}, {mant}")
            v = self.emit(f"or {SO} {v}, {k(exp_q, so)}")
            v = self.emit(f"bitcast {SO} {v} to {T}")
            return self.emit(f"select {bt} {nx}, {T} {v}, {T} {r}")
        if self.chunk is not None:
            return fix()
        return self._guarded(r, T, nx, vec, fix)

    def _f64_to_f16(self, x: str, vec: bool) -> str:
        """binary64 → binary16, nearest even, one rounding: to binary32 rounded to odd, then to f16."""
        D, Fl, I = self.ty(F64, vec), self.ty(F32, vec), (self.vty("i32") if vec else "i32")
        bt = self.vty("i1") if vec else "i1"
        r = self.emit(f"fptrunc {D} {x} to {Fl}")
        back = self.emit(f"fpext {Fl} {r} to {D}")
        rb = self.emit(f"bitcast {Fl} {r} to {I}")
        fabs = f"llvm.fabs.{self._mangle(F64, vec)}"
        self.declare(f"declare {D} @{fabs}({D})")
        ab = self.emit(f"call {D} @{fabs}({D} {back})")
        ax = self.emit(f"call {D} @{fabs}({D} {x})")
        inf = self.splat("0x7FF0000000000000", "double") if vec else "0x7FF0000000000000"
        fin = self.emit(f"fcmp olt {D} {ax}, {inf}")
        over = self.emit(f"fcmp ogt {D} {ab}, {ax}")
        over = self.emit(f"and {bt} {over}, {fin}")
        one = self.splat("1", "i32") if vec else "1"
        dec = self.emit(f"sub {I} {rb}, {one}")
        rb = self.emit(f"select {bt} {over}, {I} {dec}, {I} {rb}")
        inexact = self.emit(f"fcmp one {D} {back}, {x}")
        inexact = self.emit(f"and {bt} {inexact}, {fin}")
        odd = self.emit(f"or {I} {rb}, {one}")
        rb = self.emit(f"select {bt} {inexact}, {I} {odd}, {I} {rb}")
        r = self.emit(f"bitcast {I} {rb} to {Fl}")
        return self.emit(f"fptrunc {Fl} {r} to {self.ty(F16, vec)}")

    def _fma16(self, args: list[str], vec: bool) -> str:
        """f16 fma: the product exact in binary64, the sum rounded to odd there, then one rounding to f16."""
        D = self.ty(F64, vec)
        H = self.ty(F16, vec)
        I64 = self.vty("i64") if vec else "i64"
        bt = self.vty("i1") if vec else "i1"
        a, b, c = (self.emit(f"fpext {H} {x} to {D}") for x in args)
        p = self.emit(f"fmul {D} {a}, {b}")
        s = self.emit(f"fadd {D} {p}, {c}")
        # two-sum error of p + c
        bb = self.emit(f"fsub {D} {s}, {p}")
        t1 = self.emit(f"fsub {D} {s}, {bb}")
        e1 = self.emit(f"fsub {D} {p}, {t1}")
        e2 = self.emit(f"fsub {D} {c}, {bb}")
        err = self.emit(f"fadd {D} {e1}, {e2}")
        zero = self.splat("0.0", "double") if vec else "0.0"
        inexact = self.emit(f"fcmp one {D} {err}, {zero}")
        sb = self.emit(f"bitcast {D} {s} to {I64}")
        one = self.splat("1", "i64") if vec else "1"
        low = self.emit(f"and {I64} {sb}, {one}")
        even = self.emit(f"icmp eq {I64} {low}, {self.splat('0', 'i64') if vec else '0'}")
        fix = self.emit(f"and {bt} {inexact}, {even}")
        # move one ulp toward the exact value: away from zero when err has s's sign
        sneg = self.emit(f"fcmp olt {D} {s}, {zero}")
        eneg = self.emit(f"fcmp olt {D} {err}, {zero}")
        same = self.emit(f"xor {bt} {sneg}, {eneg}")
        up = self.emit(f"add {I64} {sb}, {one}")
        dn = self.emit(f"sub {I64} {sb}, {one}")
        szero = self.emit(f"fcmp oeq {D} {s}, {zero}")
        moved = self.emit(f"select {bt} {same}, {I64} {dn}, {I64} {up}")
        # s == 0 cannot be inexact with a non-zero error of its own sign issue: leave it
        true = self.splat("true", "i1") if vec else "true"
        nz = self.emit(f"xor {bt} {szero}, {true}")
        fix = self.emit(f"and {bt} {fix}, {nz}")
        sb = self.emit(f"select {bt} {fix}, {I64} {moved}, {I64} {sb}")
        s = self.emit(f"bitcast {I64} {sb} to {D}")
        return self._f64_to_f16(s, vec)

    def _lane_gather(self, n: Node) -> str:
        v, idx = n.args
        vv = self.value(v, True)
        sty = LLTY[v.ty.name]
        if v.ty is B1:                      # i1 vectors are bit-packed in memory: gather bytes
            vv = self.emit(f"zext <{self.W} x i1> {vv} to <{self.W} x i8>")
            sty = "i8"
        VT = self.vty(sty)
        ii = self.value(idx, True)
        it = LLTY[idx.ty.name]
        masked = self.emit(f"and <{self.W} x {it}> {ii}, {self.splat(str(self.W - 1), it)}")
        arr = self.tmp("arr")
        self.entry_allocas.append(f"{arr} = alloca {VT}, align 64")
        self.line(f"store {VT} {vv}, ptr {arr}, align 64")
        ptrs = self.emit(f"getelementptr {sty}, ptr {arr}, <{self.W} x {it}> {masked}")
        name = f"llvm.masked.gather.v{self.W}{sty}.v{self.W}p0"
        self.declare(f"declare {VT} @{name}(<{self.W} x ptr>, i32, <{self.W} x i1>, {VT})")
        ones = self.splat("true", "i1")
        align = max(1, int(sty[1:]) // 8) if sty.startswith("i") else {"half": 2, "float": 4, "double": 8}[sty]
        r = self.emit(f"call {VT} @{name}(<{self.W} x ptr> {ptrs}, i32 {align}, <{self.W} x i1> {ones}, {VT} poison)")
        if v.ty is B1:
            r = self.emit(f"trunc {VT} {r} to <{self.W} x i1>")
        return r


def _signed(v: int, bits: int) -> int:
    v &= (1 << bits) - 1
    return v - (1 << bits) if v >> (bits - 1) & 1 else v
