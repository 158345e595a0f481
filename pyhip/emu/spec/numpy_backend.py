"""The numpy backend of the semantics language: an instruction's graph → Python source over numpy arrays,
compiled once per distinct graph.

Values of a batch of ``nw`` waves: uniform ones are arrays ``(nw,)``, per-lane ones ``(nw, W)``, constants
numpy scalars; a uniform operand of a per-lane primitive is broadcast (``[:, None]``).  Each primitive
below implements its contract in ``lang`` exactly; on x86, numpy's float arithmetic already orders NaN
operands as the contract says (the first operand's NaN wins), so ``a + b`` is written as it is.
"""
from __future__ import annotations

import numpy as np

from .. import fp
from . import lang
from .lang import B1, Node, UINT, SINT, Write, walk

F64 = np.float64

# ---- helpers the generated code calls --------------------------------------------------------------------------


def _popcount(x):
    x = np.asarray(x)
    if hasattr(np, "bitwise_count"):
        return np.bitwise_count(x)
    bits = x.dtype.itemsize * 8
    u = x.view(f"u{x.dtype.itemsize}") if x.dtype.kind == "i" else x
    c = np.zeros(u.shape, np.uint8)
    for i in range(bits):
        c += ((u >> u.dtype.type(i)) & u.dtype.type(1)).astype(np.uint8)
    return c


def _smear(u):
    s = 1
    while s < u.dtype.itemsize * 8:
        u = u | (u >> u.dtype.type(s))
        s *= 2
    return u


def _unsigned(x):
    x = np.asarray(x)
    return x.view(f"u{x.dtype.itemsize}") if x.dtype.kind == "i" else x


def ctlz(x, dt):
    u = _unsigned(x)
    return (dt.type(u.dtype.itemsize * 8) - _popcount(_smear(u)).astype(dt)).astype(dt)


def cttz(x, dt):
    u = _unsigned(x)
    low = u & (~u + u.dtype.type(1))
    return _popcount(low - u.dtype.type(1)).astype(dt)


def bitrev(x, dt):
    u = _unsigned(x).astype(_unsigned(x).dtype, copy=True)
    t = u.dtype.type
    bits = u.dtype.itemsize * 8
    masks = {1: 0x5555555555555555, 2: 0x3333333333333333, 4: 0x0F0F0F0F0F0F0F0F, 8: 0x00FF00FF00FF00FF,
             16: 0x0000FFFF0000FFFF, 32: 0x00000000FFFFFFFF}
    s = 1
    while s < bits:
        m = t(masks[s] & ((1 << bits) - 1))
        u = ((u >> t(s)) & m) | ((u & m) << t(s))
        s *= 2
    return u.view(dt)


def fptoint(x, dt):
    """Toward zero, saturating, NaN → 0 (the float is exact in float64 for every source width)."""
    t = np.trunc(np.asarray(x, dtype=F64))
    info = np.iinfo(dt)
    big = t >= F64(2.0 ** (dt.itemsize * 8 - (1 if dt.kind == "i" else 0)))
    small = t < F64(info.min)
    nan = np.isnan(t)
    r = np.where(big | small | nan, F64(0), t).astype(dt)
    return np.where(big, dt.type(info.max), np.where(small, dt.type(info.min), r))


_QUIET = {2: (np.uint16, 0x0200), 4: (np.uint32, 0x00400000), 8: (np.uint64, 0x0008000000000000)}
DEFAULT_NAN = {2: 0xFE00, 4: 0xFFC00000, 8: 0xFFF8000000000000}
_MANT = {2: 10, 4: 23, 8: 52}


def _quiet(x):
    x = np.asarray(x)
    ut, q = _QUIET[x.dtype.itemsize]
    return (x.view(ut) | ut(q)).view(x.dtype)


def _nan_rule(r, *ins):
    """The contract's NaN: the first NaN operand quieted, else the default NaN (only where r is NaN)."""
    r = np.asarray(r)
    nr = np.isnan(r)
    if not nr.any():
        return r
    ins = [np.asarray(x) for x in ins]
    shape = np.broadcast_shapes(r.shape, *(x.shape for x in ins))
    ut = _QUIET[r.dtype.itemsize][0]
    out = np.where(nr, ut(DEFAULT_NAN[r.dtype.itemsize]).view(r.dtype), r)
    for x in reversed(ins):
        out = np.where(np.isnan(x), _quiet(x), out)
    return np.broadcast_to(np.where(nr, out, r), shape)


def fbin(r, a, b):
    return _nan_rule(r, a, b)


def funary(r, a):
    return _nan_rule(r, a)


def fconv(r, a):
    """A float→float conversion: a NaN keeps its sign, gets the quiet bit, keeps its payload's top bits."""
    a = np.asarray(a)
    na = np.isnan(a)
    if not na.any():
        return r
    r = np.array(r, copy=True)
    si, so = a.dtype.itemsize, r.dtype.itemsize
    ui, uo = _QUIET[si][0], _QUIET[so][0]
    bits = a.view(ui).astype(np.uint64)
    sign = (bits >> np.uint64(si * 8 - 1)) & np.uint64(1)
    mant = bits & np.uint64((1 << _MANT[si]) - 1)
    shift = _MANT[so] - _MANT[si]
    mant = mant << np.uint64(shift) if shift >= 0 else mant >> np.uint64(-shift)
    exp = {2: 0x1F, 4: 0xFF, 8: 0x7FF}[so]
    out = (sign << np.uint64(so * 8 - 1)) | (np.uint64(exp) << np.uint64(_MANT[so])) | mant | np.uint64(_QUIET[so][1])
    r = np.where(na, out.astype(uo).view(r.dtype), r)
    return r


def fminmax(a, b, is_min: bool, ieee: bool):
    """lang's fminnum/fmaxnum."""
    a, b = np.broadcast_arrays(np.asarray(a), np.asarray(b))
    r = np.fmin(a, b) if is_min else np.fmax(a, b)
    z = (a == 0) & (b == 0)
    if z.any():
        sa = np.signbit(a)
        r = np.where(z, np.where(sa, a, b) if is_min else np.where(sa, b, a), r)
    na, nb = np.isnan(a), np.isnan(b)
    if (na | nb).any():
        r = np.where(nb, a, np.where(na, b, r))
        if ieee:
            ut, q = _QUIET[a.dtype.itemsize]
            sna = na & ((a.view(ut) & ut(q)) == 0)
            snb = nb & ((b.view(ut) & ut(q)) == 0)
            r = np.where(sna, _quiet(a), np.where(snb, _quiet(b), r))
    return r


def fma(a, b, c):
    a, b, c = np.broadcast_arrays(a, b, c)
    dt = a.dtype
    if dt == np.float32:
        r = fp.fma32(a, b, c)
    elif dt == np.float64:
        r = fp.fma64(a, b, c)
    else:
        # f16: the product is exact in float64, the sum rounded to odd there, then once to f16 (53 >= 11 + 2)
        a64, b64, c64 = (np.asarray(v, dtype=F64) for v in (a, b, c))
        r = fp.round_to_odd_sum(a64 * b64, c64).astype(np.float16)
    return _nan_rule(r, a, b, c)


def mask_word(c, lanes):
    c = np.ascontiguousarray(c, dtype=bool)
    words = np.packbits(c, axis=-1, bitorder="little")
    return words.view(np.uint64 if lanes == 64 else np.uint32)[..., 0]


def word_lanes(x, lanes):
    """A uniform word (nw,) or a constant → (nw, W) [or (W,)] B1 lanes."""
    x = np.ascontiguousarray(np.asarray(x, dtype=np.uint64 if lanes == 64 else np.uint32))
    return np.unpackbits(x[..., None].view(np.uint8), axis=-1, bitorder="little").view(bool)


def lane_read(v, i, lanes):
    """v (nw, W) or uniform (nw,); i uniform (nw,) or a constant."""
    v = np.asarray(v)
    i = np.asarray(i).astype(np.intp) % lanes
    if v.ndim <= 1:            # a uniform value read at some lane: itself
        return v
    if i.ndim == 0:
        return v[:, int(i)]
    return v[np.arange(v.shape[0]), np.broadcast_to(i, (v.shape[0],))]


def lane_shuffle(v, lane_map):
    m = np.asarray(lane_map)
    v = np.asarray(v)
    if v.ndim <= 1:
        v = np.broadcast_to(v.reshape(-1, 1), (max(v.size, 1), len(m)))
    valid = m >= 0
    out = v[:, np.where(valid, m, 0)]
    return out if valid.all() else np.where(valid, out, v.dtype.type(0))


def lane_gather(v, idx, lanes):
    """v (nw, W) [or uniform (nw,)], idx per lane (nw, W) or (1, W), or uniform (nw,)."""
    v = np.asarray(v)
    idx = np.asarray(idx).astype(np.intp) % lanes
    if v.ndim <= 1:
        v = np.broadcast_to(np.asarray(v).reshape(-1, 1), (max(v.size, 1), lanes))
    if idx.ndim == 1:
        idx = idx[:, None]
    nw = max(v.shape[0], idx.shape[0])
    v = np.broadcast_to(v, (nw, lanes))
    idx = np.broadcast_to(idx, (nw, lanes))
    return np.take_along_axis(v, idx, axis=1)


LANE_IDS = {32: np.arange(32, dtype=np.uint32)[None, :], 64: np.arange(64, dtype=np.uint32)[None, :]}

HELPERS = {"np": np, "fp": fp, "_fminmax": fminmax, "_fbin": fbin, "_funary": funary, "_fconv": fconv, "_ctlz": ctlz, "_cttz": cttz, "_bitrev": bitrev, "_fptoint": fptoint, "_fma": fma,
           "_popcount": _popcount, "_mask_word": mask_word, "_word_lanes": word_lanes, "_lane_read": lane_read,
           "_lane_shuffle": lane_shuffle, "_lane_gather": lane_gather, "_LANE_IDS": LANE_IDS}

FCMP_SRC = {
    "oeq": "({a} == {b})", "ogt": "({a} > {b})", "oge": "({a} >= {b})", "olt": "({a} < {b})", "ole": "({a} <= {b})",
    "one": "(({a} < {b}) | ({a} > {b}))", "ord": "~(np.isnan({a}) | np.isnan({b}))",
    "ueq": "~(({a} < {b}) | ({a} > {b}))", "ugt": "~({a} <= {b})", "uge": "~({a} < {b})", "ult": "~({a} >= {b})",
    "ule": "~({a} > {b})", "une": "({a} != {b})", "uno": "(np.isnan({a}) | np.isnan({b}))",
}
ICMP_OP = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}


def _dt(ty) -> str:
    return f"np.{ty.np.name}" if ty is not B1 else "np.bool_"


class Source:
    """Python source for a graph, one statement per node; ``reads`` maps a read location to an expression."""

    def __init__(self, read_expr, lanes: int, arrays: bool = False):
        self.arrays = arrays            # constants as 1-element arrays (constant folding)
        self.read_expr = read_expr
        self.lanes = lanes
        self.lines: list[str] = []
        self.names: dict[int, str] = {}
        self.consts: dict[str, object] = {}
        self.shape: dict[int, str] = {}     # "c" constant, "u" uniform (nw,), "v" per lane (nw, W)

    def const_name(self, n: Node) -> str:
        key = f"k_{n.ty.name}_{n.attr:x}"
        if key not in self.consts:
            self.consts[key] = np.array(n.attr, dtype=UINT[n.ty.bits].np if n.ty is not B1 else np.uint8).view(
                n.ty.np)[()] if n.ty is not B1 else np.bool_(n.attr)
            if self.arrays:
                self.consts[key] = np.array([self.consts[key]])
        return key

    def arg(self, n: Node, vector: bool) -> str:
        name = self.names[id(n)]
        if vector and self.shape[id(n)] == "u":
            return f"{name}[:, None]"
        return name

    RAW_ARGS = {"word_lanes", "lane_read", "lane_gather", "lane_shuffle"}      # take uniform operands as (nw,)

    def emit(self, roots) -> None:
        for n in walk(roots):
            if id(n) in self.names:
                continue
            if n.op == "const":
                self.names[id(n)] = self.const_name(n)
                self.shape[id(n)] = "c"
                continue
            name = f"t{len(self.names)}"
            vector = not n.uniform
            self.shape[id(n)] = "v" if vector else "u"
            args = [self.arg(a, vector and n.op not in self.RAW_ARGS) for a in n.args]
            self.lines.append(f"{name} = {self.expr(n, args)}")
            self.names[id(n)] = name

    def expr(self, n: Node, a: list[str]) -> str:
        op, ty = n.op, n.ty
        dt = _dt(ty)
        if op == "read":
            return self.read_expr(n)
        if op == "lane_id":
            return f"_LANE_IDS[{n.attr}]"
        if op in ("add", "sub", "mul"):
            sym = {"add": "+", "sub": "-", "mul": "*"}[op]
            return f"({a[0]} {sym} {a[1]})"
        if op in ("fadd", "fsub", "fmul", "fdiv"):
            sym = {"fadd": "+", "fsub": "-", "fmul": "*", "fdiv": "/"}[op]
            if n.attr == "nf":
                return f"({a[0]} {sym} {a[1]})"
            return f"_fbin({a[0]} {sym} {a[1]}, {a[0]}, {a[1]})"
        if op in ("and", "or", "xor"):
            return f"({a[0]} {dict(zip(('and', 'or', 'xor'), '&|^'))[op]} {a[1]})"
        if op == "not":
            return f"(~{a[0]})"
        if op in ("shl", "lshr", "ashr"):
            m = f"{dt}({ty.bits - 1})"
            if op == "shl":
                return f"({a[0]} << ({a[1]} & {m}))"
            want = "i" if op == "ashr" else "u"
            if ty.kind == want:
                return f"({a[0]} >> ({a[1]} & {m}))"
            other = (SINT if want == "i" else UINT)[ty.bits]
            return f"(np.asarray({a[0]}).view({_dt(other)}) >> ({a[1]} & {m}).astype({_dt(other)})).view({dt})"
        if op == "icmp":
            pred = n.attr
            if pred in ("eq", "ne"):
                return f"({a[0]} {ICMP_OP[pred]} {a[1]})"
            want, rel = pred[0], pred[1:]
            src = n.args[0].ty
            if (src.kind == "i") != (want == "s"):
                other = _dt((SINT if want == "s" else UINT)[src.bits])
                return f"(np.asarray({a[0]}).view({other}) {ICMP_OP[rel]} np.asarray({a[1]}).view({other}))"
            return f"({a[0]} {ICMP_OP[rel]} {a[1]})"
        if op == "fcmp":
            return FCMP_SRC[n.attr].format(a=a[0], b=a[1])
        if op in ("select", "rare"):
            return f"np.where({a[0]}, {a[1]}, {a[2]})"
        src = n.args[0].ty if n.args else None
        if op == "zext":
            if src is B1:
                return f"np.asarray({a[0]}).astype({dt})"
            return f"np.asarray({a[0]}).view({_dt(src.unsigned())}).astype({dt})"
        if op == "sext":
            if src is B1:
                return f"np.where({a[0]}, {dt}({ty.mask}), {dt}(0))"
            return f"np.asarray({a[0]}).view({_dt(src.signed_ty())}).astype({_dt(ty.signed_ty())}).view({dt})"
        if op == "trunc":
            if ty is B1:
                return f"((np.asarray({a[0]}) & {_dt(src)}(1)) != 0)"
            return f"np.asarray({a[0]}).astype({dt})"
        if op == "bitcast":
            return f"np.asarray({a[0]}).view({dt})"
        if op == "itofp":
            return f"np.asarray({a[0]}).astype({dt})"
        if op in ("fpext", "fptrunc"):
            if n.attr == "nf":
                return f"np.asarray({a[0]}).astype({dt})"
            return f"_fconv(np.asarray({a[0]}).astype({dt}), {a[0]})"
        if op == "fptoint":
            return f"_fptoint({a[0]}, np.dtype({dt}))"
        if op in ("fminnum", "fmaxnum"):
            return f"_fminmax({a[0]}, {a[1]}, {op == 'fminnum'}, {n.attr == 'ieee'})"
        if op == "fma":
            return f"_fma({a[0]}, {a[1]}, {a[2]})"     # (the NaN rule is cheap next to the exact fma)
        if op in ("sqrt", "floor", "ceil", "rint", "ftrunc"):
            fn = "trunc" if op == "ftrunc" else op
            if n.attr == "nf":
                return f"np.{fn}({a[0]})"
            return f"_funary(np.{fn}({a[0]}), {a[0]})"
        if op == "ctpop":
            return f"_popcount({a[0]}).astype({dt})"
        if op in ("ctlz", "cttz", "bitrev"):
            return f"_{op}({a[0]}, np.dtype({dt}))"
        if op == "lane_read":
            return f"_lane_read({a[0]}, {a[1]}, {self.lanes})"
        if op == "lane_shuffle":
            key = f"map{len(self.consts)}"
            self.consts[key] = np.asarray(n.attr)
            return f"_lane_shuffle({a[0]}, {key})"
        if op == "lane_gather":
            return f"_lane_gather({a[0]}, {a[1]}, {self.lanes})"
        if op == "mask_word":
            return f"_mask_word({a[0]}, {n.attr})"
        if op == "word_lanes":
            return f"_word_lanes({a[0]}, {n.attr})"
        raise lang.SpecError(f"numpy backend: no primitive {op}")


# ---- constant folding (lang.prim calls this for all-constant operands) -----------------------------------------
def fold(n: Node) -> Node:
    src = Source(lambda r: None, 64, arrays=True)
    src.emit([n])
    ns = dict(HELPERS)
    ns.update(src.consts)
    with np.errstate(all="ignore"):
        for line in src.lines:
            exec(line, ns)
        v = ns[src.names[id(n)]]
    v = np.asarray(v)
    if v.shape != (1,):
        return n
    v = v[0]
    if n.ty is B1:
        return lang.const(bool(v), B1)
    bits = int(v.astype(n.ty.np).view(UINT[n.ty.bits].np))
    return lang.Node("const", n.ty, (), bits, uniform=True)


# ---- instructions: effects → a function (st, w) ------------------------------------------------------------------
_CACHE: dict[str, object] = {}


def compile_function(writes: list[Write], read_expr, write_stmt, lanes: int, prologue=(), name="op"):
    """A Python function ``f(st, w)`` performing ``writes``: ``read_expr(node)`` gives the expression of a
    read, ``write_stmt(write, value_src, mask_src, per_lane)`` the statement of a write."""
    src = Source(read_expr, lanes)
    roots = []
    for wr in writes:
        roots.append(wr.value)
        if wr.mask is not None:
            roots.append(wr.mask)
    src.emit(roots)
    body = list(prologue) + src.lines
    for wr in writes:
        v = src.names[id(wr.value)]
        m = src.names[id(wr.mask)] if wr.mask is not None else None
        body.append(write_stmt(wr, v, src.shape[id(wr.value)], m))
    text = f"def {name}(st, w):\n" + "".join(f"    {line}\n" for line in body or ["pass"])
    key = text + repr([(k, v.tolist()) for k, v in src.consts.items() if k.startswith("map")])
    fn = _CACHE.get(key)
    if fn is None:
        ns = dict(HELPERS)
        ns.update(src.consts)
        exec(compile(text, f"<spec {name}>", "exec"), ns)
        fn = _CACHE[key] = ns[name]
        fn.source = text
    return fn
