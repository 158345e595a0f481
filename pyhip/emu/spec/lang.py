"""The expression language the ISA's semantics are written in.

An instruction's operation is a small typed dataflow graph of :class:`Node` values, built by running a
Python function over symbolic operands (``a + b`` builds a node, it computes nothing).  Two backends turn
the same graph into executable code: ``numpy_backend`` (the reference engine: arrays of waves) and the
compiled engine's LLVM backend (``pyhip/emu/jit``: one wave as SIMD vectors).  Neither backend knows any
instruction; each knows the primitives below, and both implement each primitive's contract exactly (the
tests in ``tests/emu/test_spec_primitives.py`` hold them together on edge values).

Values are typed (:data:`B1` ... :data:`F64`) and *uniform* (one value per wave: an SGPR, a constant) or
per lane (a VGPR).  A lane-wise primitive applied to a uniform and a per-lane value broadcasts the uniform
one.  Constants are kept as bit patterns, so NaN payloads and signed zeros are exact.

Primitive contracts (every backend):

* ``add sub mul`` on integers wrap; ``and or xor not`` on integers and B1.
* ``shl lshr ashr``: the amount (same type) is taken modulo the width.
* ``icmp``: predicates eq ne ult ule ugt uge slt sle sgt sge (the builders pick the signedness from the
  type); ``fcmp``: LLVM's ordered/unordered predicates (oeq ogt oge olt ole one ord ueq ugt uge ult ule
  une uno).
* ``fadd fsub fmul fdiv``: IEEE binary ops, round to nearest even, denormals kept.  ``fma``: fused (one
  rounding).  ``sqrt``: IEEE square root.  ``floor ceil ftrunc rint`` (rint: ties to even).
* NaN results are exact (LLVM leaves them unspecified and numpy's depend on its loops, so both backends
  enforce this): the first NaN operand (in operand order) quieted, else, for an invalid operation, the
  default NaN of x86 (sign set: f16 0xFE00, f32 0xFFC00000, f64 0xFFF8000000000000).  A float→float
  conversion of a NaN keeps its sign, sets the quiet bit and keeps the top bits of the payload (truncated or
  zero-extended).  A primitive built under :func:`nan_free` may skip this (its description guarantees that no
  NaN reaches it or that its NaN result is replaced).
* ``fminnum fmaxnum``: V_MIN/V_MAX: a NaN operand yields the other (both NaN: the first), -0 < +0, equal
  values the first; with attr "ieee" (MODE.IEEE) a signaling NaN operand yields itself quieted (the first's
  when both are).
* ``cast``: int→int (``zext``/``sext``/``trunc`` by the builder), int→float (round to nearest even),
  float→float (``fpext``, ``fptrunc`` round to nearest even); ``fptoint``: toward zero, saturating to the
  destination's range, NaN → 0.  ``bitcast``: same width, bits unchanged.
* ``ctpop ctlz cttz bitrev``: ctlz/cttz of 0 is the width.
* ``select(c, a, b)``.  ``rare(c, a, b)``: the same value, a hint that ``c`` seldom holds: a backend may
  compute ``a`` only when some lane needs it (the compiled engine branches around it).
* lane primitives: ``lane_read(v, i)`` (uniform: lane i mod W of v), ``lane_shuffle(v, map)`` (a static
  lane map; -1 reads 0), ``lane_gather(v, idx)`` (lane idx mod W of v, per lane), ``mask_word(c)`` (per-lane
  B1 → the W-bit word, lane i in bit i), ``word_lanes(x)`` (the reverse), ``lane_id()``.
"""
from __future__ import annotations

import struct

import numpy as np


class Ty:
    """A value type: kind 'b' (bool), 'u', 'i' (integers), 'f' (IEEE float) and a bit width."""

    __slots__ = ("name", "kind", "bits")

    def __init__(self, name: str, kind: str, bits: int):
        self.name, self.kind, self.bits = name, kind, bits

    def __repr__(self):
        return self.name

    @property
    def is_float(self) -> bool:
        return self.kind == "f"

    @property
    def is_int(self) -> bool:
        return self.kind in "ui"

    @property
    def signed(self) -> bool:
        return self.kind == "i"

    @property
    def mask(self) -> int:
        return (1 << self.bits) - 1

    @property
    def np(self):
        return NP_DTYPES[self.name]

    def unsigned(self) -> "Ty":
        return UINT[self.bits] if self.kind != "b" else self

    def signed_ty(self) -> "Ty":
        return SINT[self.bits]


B1 = Ty("b1", "b", 1)
U8, I8 = Ty("u8", "u", 8), Ty("i8", "i", 8)
U16, I16, F16 = Ty("u16", "u", 16), Ty("i16", "i", 16), Ty("f16", "f", 16)
U32, I32, F32 = Ty("u32", "u", 32), Ty("i32", "i", 32), Ty("f32", "f", 32)
U64, I64, F64 = Ty("u64", "u", 64), Ty("i64", "i", 64), Ty("f64", "f", 64)
TYPES = {t.name: t for t in (B1, U8, I8, U16, I16, F16, U32, I32, F32, U64, I64, F64)}
UINT = {8: U8, 16: U16, 32: U32, 64: U64}
SINT = {8: I8, 16: I16, 32: I32, 64: I64}
FLOAT = {16: F16, 32: F32, 64: F64}
NP_DTYPES = {"b1": np.dtype(bool), "u8": np.dtype(np.uint8), "i8": np.dtype(np.int8), "u16": np.dtype(np.uint16),
             "i16": np.dtype(np.int16), "f16": np.dtype(np.float16), "u32": np.dtype(np.uint32),
             "i32": np.dtype(np.int32), "f32": np.dtype(np.float32), "u64": np.dtype(np.uint64),
             "i64": np.dtype(np.int64), "f64": np.dtype(np.float64)}

# primitive -> number of operands (None: any)
PRIMITIVES = {
    "const": 0, "read": 0, "lane_id": 0,
    "add": 2, "sub": 2, "mul": 2, "and": 2, "or": 2, "xor": 2, "not": 1, "shl": 2, "lshr": 2, "ashr": 2,
    "icmp": 2, "fcmp": 2, "select": 3, "rare": 3,
    "zext": 1, "sext": 1, "trunc": 1, "bitcast": 1, "itofp": 1, "fpext": 1, "fptrunc": 1, "fptoint": 1,
    "fadd": 2, "fsub": 2, "fmul": 2, "fdiv": 2, "fma": 3, "sqrt": 1, "floor": 1, "ceil": 1, "ftrunc": 1,
    "rint": 1, "ctpop": 1, "ctlz": 1, "cttz": 1, "bitrev": 1, "fminnum": 2, "fmaxnum": 2,
    "lane_read": 2, "lane_shuffle": 1, "lane_gather": 2, "mask_word": 1, "word_lanes": 1,
}
ICMP = {"eq", "ne", "ult", "ule", "ugt", "uge", "slt", "sle", "sgt", "sge"}
FCMP = {"oeq", "ogt", "oge", "olt", "ole", "one", "ord", "ueq", "ugt", "uge", "ult", "ule", "une", "uno"}


class SpecError(TypeError):
    """A description that does not type-check (a bug in the description, found when it is built)."""


class Node:
    """One value of the dataflow graph.  ``attr``: the constant's bits (const), the location (read), the
    predicate (icmp/fcmp), the lane map (lane_shuffle), the lane count W (mask_word/word_lanes/lane_id)."""

    __slots__ = ("op", "ty", "args", "attr", "uniform", "__weakref__")

    def __init__(self, op: str, ty: Ty, args: tuple = (), attr=None, uniform: bool | None = None):
        self.op, self.ty, self.args, self.attr = op, ty, args, attr
        if uniform is None:
            uniform = all(a.uniform for a in args)
        self.uniform = uniform

    def __repr__(self):
        if self.op == "const":
            return f"{self.ty}:{self.attr:#x}"
        if self.op == "read":
            return f"read{self.attr}:{self.ty}"
        return f"{self.op}{'[' + str(self.attr) + ']' if self.attr is not None else ''}({', '.join(map(repr, self.args))}):{self.ty}"

    # -- constants ------------------------------------------------------------------------------------
    @property
    def is_const(self) -> bool:
        return self.op == "const"

    def value(self):
        """A constant's value as a Python number (int for integers and B1, float for floats)."""
        if not self.is_const:
            raise SpecError(f"{self!r} is not a constant")
        return bits_value(self.attr, self.ty)

    # -- operators: the description's arithmetic ----------------------------------------------------------
    def _bin(self, other, op_int, op_float, swap=False):
        a, b = coerce(self, other)
        if swap:
            a, b = b, a
        if a.ty.is_float:
            if op_float is None:
                raise SpecError(f"{op_int} is not defined on {a.ty}")
            return prim(op_float, a.ty, a, b)
        if op_int is None:
            raise SpecError(f"{op_float} is not defined on {a.ty}")
        return prim(op_int, a.ty, a, b)

    def __add__(self, o): return self._bin(o, "add", "fadd")
    def __radd__(self, o): return self._bin(o, "add", "fadd", swap=True)
    def __sub__(self, o): return self._bin(o, "sub", "fsub")
    def __rsub__(self, o): return self._bin(o, "sub", "fsub", swap=True)
    def __mul__(self, o): return self._bin(o, "mul", "fmul")
    def __rmul__(self, o): return self._bin(o, "mul", "fmul", swap=True)
    def __truediv__(self, o): return self._bin(o, None, "fdiv")
    def __rtruediv__(self, o): return self._bin(o, None, "fdiv", swap=True)

    def _bits(self, other, op, swap=False):
        a, b = coerce(self, other)
        if swap:
            a, b = b, a
        if a.ty.is_float:
            raise SpecError(f"bitwise {op} on {a.ty}: bitcast first")
        return prim(op, a.ty, a, b)

    def __and__(self, o): return self._bits(o, "and")
    def __rand__(self, o): return self._bits(o, "and", swap=True)
    def __or__(self, o): return self._bits(o, "or")
    def __ror__(self, o): return self._bits(o, "or", swap=True)
    def __xor__(self, o): return self._bits(o, "xor")
    def __rxor__(self, o): return self._bits(o, "xor", swap=True)

    def __invert__(self):
        if self.ty.is_float:
            raise SpecError("~ on a float")
        return prim("not", self.ty, self)

    def __neg__(self):
        if self.ty.is_float:
            return fneg(self)
        return const(0, self.ty) - self

    def __lshift__(self, o):
        a, b = coerce(self, o)
        return prim("shl", a.ty, a, b)

    def __rshift__(self, o):
        """Arithmetic for signed types, logical for unsigned ones."""
        a, b = coerce(self, o)
        return prim("ashr" if a.ty.signed else "lshr", a.ty, a, b)

    def __lt__(self, o): return compare(self, o, "lt")
    def __le__(self, o): return compare(self, o, "le")
    def __gt__(self, o): return compare(self, o, "gt")
    def __ge__(self, o): return compare(self, o, "ge")

    def eq(self, o): return compare(self, o, "eq")
    def ne(self, o): return compare(self, o, "ne")

    def __bool__(self):
        raise SpecError("a symbolic value has no truth value: use select()/where() instead of if/and/or")

    # -- conversions as methods ----------------------------------------------------------------------------
    def bits(self) -> "Node":
        """The value's bits as an unsigned integer of the same width."""
        return bitcast(self, self.ty.unsigned() if not self.ty.is_float else UINT[self.ty.bits])

    def view(self, ty) -> "Node":
        return bitcast(self, ty)

    def zext(self, ty) -> "Node":
        return zext(self, ty)

    def sext(self, ty) -> "Node":
        return sext(self, ty)

    def trunc(self, ty) -> "Node":
        return trunc(self, ty)

    def to(self, ty) -> "Node":
        """The value converted to ``ty`` (integer widths by the source's signedness, floats rounded)."""
        return convert(self, ty)


def as_ty(ty) -> Ty:
    return TYPES[ty] if isinstance(ty, str) else ty


# ---- constants --------------------------------------------------------------------------------------------
def float_bits(x: float, ty: Ty) -> int:
    if ty.bits == 64:
        return struct.unpack("<Q", struct.pack("<d", x))[0]
    if ty.bits == 32:
        return struct.unpack("<I", struct.pack("<f", x))[0] if np.isfinite(x) or np.isnan(x) else \
            int(np.float32(x).view(np.uint32))
    return int(np.float16(x).view(np.uint16))


def bits_value(bits: int, ty: Ty):
    if ty.is_float:
        return float(np.array(bits, dtype=UINT[ty.bits].np).view(ty.np))
    if ty.signed and bits >> (ty.bits - 1) & 1:
        return bits - (1 << ty.bits)
    return bits


def const(v, ty) -> Node:
    """A constant of type ``ty`` from a Python int (two's complement for negatives), bool or float."""
    ty = as_ty(ty)
    if isinstance(v, Node):
        return convert(v, ty)
    if ty.is_float:
        bits = float_bits(float(v), ty)
    elif ty is B1:
        bits = int(bool(v))
    else:
        if isinstance(v, float):
            if v != int(v):
                raise SpecError(f"{v} is not an integer constant for {ty}")
            v = int(v)
        bits = int(v) & ty.mask
    return Node("const", ty, (), bits, uniform=True)


def fbits(bits: int, ty) -> Node:
    """A float constant given as its bit pattern."""
    ty = as_ty(ty)
    return Node("const", ty, (), bits & ((1 << ty.bits) - 1), uniform=True)


def coerce(a, b):
    """Two operands of one type: a Python number takes the type of the Node beside it."""
    if not isinstance(a, Node) and not isinstance(b, Node):
        raise SpecError("an operation needs at least one symbolic operand")
    if not isinstance(a, Node):
        a = const(a, b.ty)
    if not isinstance(b, Node):
        b = const(b, a.ty)
    if a.ty is not b.ty:
        raise SpecError(f"operand types differ: {a.ty} and {b.ty} (convert explicitly)")
    return a, b


# ---- folding: constant operands are computed once, by the reference backend's own primitive ----------------
_FOLD_SKIP = {"read", "lane_id", "lane_read", "lane_shuffle", "lane_gather", "mask_word", "word_lanes"}


_NAN_FREE = []


class nan_free:
    """Float primitives built inside ``with nan_free():`` carry attr "nf": their NaN results need no exact
    bits (the description replaces them, or no NaN can reach them), so backends may skip the fix-up."""

    def __enter__(self):
        _NAN_FREE.append(True)

    def __exit__(self, *exc):
        _NAN_FREE.pop()


NAN_RULED = {"fadd", "fsub", "fmul", "fdiv", "fma", "sqrt", "floor", "ceil", "ftrunc", "rint", "fpext", "fptrunc"}


def prim(op: str, ty: Ty, *args, attr=None) -> Node:
    if _NAN_FREE and op in NAN_RULED and attr is None:
        attr = "nf"
    n = Node(op, ty, tuple(args), attr)
    if op not in _FOLD_SKIP and args and all(a.is_const for a in args):
        from .numpy_backend import fold
        return fold(n)
    return _simplify(n)


def _simplify(n: Node) -> Node:
    """Identities that hold bit for bit (integers only; floats are never rewritten)."""
    op, a = n.op, n.args
    if op in ("select", "rare") and a[0].is_const:
        return a[1] if a[0].attr else a[2]
    if n.ty.is_float or n.ty is B1 and op not in ("and", "or"):
        return n
    if op in ("add", "sub", "or", "xor", "shl", "lshr", "ashr") and a[1].is_const and a[1].attr == 0:
        return a[0]
    if op in ("add", "or", "xor") and a[0].is_const and a[0].attr == 0:
        return a[1]
    if op == "and" and a[1].is_const and a[1].attr == n.ty.mask:
        return a[0]
    if op == "and" and a[0].is_const and a[0].attr == n.ty.mask:
        return a[1]
    if op == "mul" and a[1].is_const and a[1].attr == 1:
        return a[0]
    return n


# ---- comparisons ---------------------------------------------------------------------------------------------
def compare(a, b, rel: str) -> Node:
    """``rel`` in lt le gt ge eq ne: signed/unsigned by the type; on floats ordered (false with a NaN),
    except ne, which is unordered (true with a NaN), as in C."""
    a, b = coerce(a, b)
    if a.ty.is_float:
        pred = {"lt": "olt", "le": "ole", "gt": "ogt", "ge": "oge", "eq": "oeq", "ne": "une"}[rel]
        return prim("fcmp", B1, a, b, attr=pred)
    if rel in ("eq", "ne"):
        return prim("icmp", B1, a, b, attr=rel)
    return prim("icmp", B1, a, b, attr=("s" if a.ty.signed else "u") + rel)


def fcmp(a, b, pred: str) -> Node:
    a, b = coerce(a, b)
    if pred not in FCMP:
        raise SpecError(f"fcmp predicate {pred}")
    if not a.ty.is_float:
        raise SpecError("fcmp on integers")
    return prim("fcmp", B1, a, b, attr=pred)


def select(c, a, b) -> Node:
    if not isinstance(c, Node) or c.ty is not B1:
        raise SpecError("select needs a B1 condition")
    a, b = coerce(a, b)
    return prim("select", a.ty, c, a, b)


where = select


def rare(c, a, b) -> Node:
    """select(c, a, b) where ``c`` seldom holds and ``a`` is costly: the compiled engine computes ``a`` only
    when some lane of ``c`` holds (the value is select's either way)."""
    if not isinstance(c, Node) or c.ty is not B1:
        raise SpecError("rare needs a B1 condition")
    a, b = coerce(a, b)
    return prim("rare", a.ty, c, a, b)


# ---- conversions -----------------------------------------------------------------------------------------------
def bitcast(x: Node, ty) -> Node:
    ty = as_ty(ty)
    if x.ty is ty:
        return x
    if x.ty.bits != ty.bits or B1 in (x.ty, ty):
        raise SpecError(f"bitcast {x.ty} -> {ty}")
    return prim("bitcast", ty, x)


def zext(x: Node, ty) -> Node:
    """Zero-extend (the source's bits as unsigned), or truncate when ``ty`` is narrower."""
    ty = as_ty(ty)
    if x.ty.is_float or ty.is_float:
        raise SpecError("zext on a float")
    if ty.bits < x.ty.bits:
        return trunc(x, ty)
    if ty.bits == x.ty.bits:
        return bitcast(x, ty) if x.ty is not ty else x
    return prim("zext", ty, x)


def sext(x: Node, ty) -> Node:
    ty = as_ty(ty)
    if x.ty.is_float or ty.is_float:
        raise SpecError("sext on a float")
    if ty.bits < x.ty.bits:
        return trunc(x, ty)
    if ty.bits == x.ty.bits:
        return bitcast(x, ty) if x.ty is not ty else x
    return prim("sext", ty, x)


def trunc(x: Node, ty) -> Node:
    """The low bits (to B1: bit 0)."""
    ty = as_ty(ty)
    if x.ty.is_float or ty.is_float:
        raise SpecError("trunc on a float")
    if ty.bits > x.ty.bits:
        raise SpecError(f"trunc {x.ty} -> {ty}")
    if ty.bits == x.ty.bits:
        return bitcast(x, ty) if x.ty is not ty else x
    return prim("trunc", ty, x)


def convert(x: Node, ty) -> Node:
    """Value conversion: integer → integer by the source's signedness (sext for signed, zext otherwise),
    B1 → 0/1, integer → float (nearest even), float → float (nearest even).  float → integer is
    :func:`fptoint` (its rounding and saturation must be explicit)."""
    ty = as_ty(ty)
    if x.ty is ty:
        return x
    if x.ty.is_float and ty.is_float:
        return prim("fpext" if ty.bits > x.ty.bits else "fptrunc", ty, x)
    if x.ty.is_float:
        raise SpecError("float -> integer: use fptoint (toward zero, saturating)")
    if ty.is_float:
        if x.ty is B1:
            x = zext(x, U32)
        return prim("itofp", ty, x)
    if ty is B1:
        return x.ne(0)
    if x.ty is B1:
        return zext(x, ty)
    return sext(x, ty) if x.ty.signed else zext(x, ty)


def fptoint(x: Node, ty) -> Node:
    """Float → integer toward zero, saturating to ``ty``'s range, NaN → 0."""
    ty = as_ty(ty)
    if not x.ty.is_float or not ty.is_int:
        raise SpecError(f"fptoint {x.ty} -> {ty}")
    return prim("fptoint", ty, x)


# ---- float primitives and the operations every description shares --------------------------------------------
def fma(a, b, c) -> Node:
    a, b = coerce(a, b)
    a, c = coerce(a, c)
    return prim("fma", a.ty, a, b, c)


def _unary(op):
    def f(x: Node) -> Node:
        if not x.ty.is_float:
            raise SpecError(f"{op} on {x.ty}")
        return prim(op, x.ty, x)
    f.__name__ = op
    return f


sqrt = _unary("sqrt")
floor = _unary("floor")
ceil = _unary("ceil")
ftrunc = _unary("ftrunc")
rint = _unary("rint")


def sign_bit(ty: Ty) -> int:
    return 1 << (ty.bits - 1)


def fminnum(a, b, ieee: bool) -> Node:
    a, b = coerce(a, b)
    return prim("fminnum", a.ty, a, b, attr="ieee" if ieee else None)


def fmaxnum(a, b, ieee: bool) -> Node:
    a, b = coerce(a, b)
    return prim("fmaxnum", a.ty, a, b, attr="ieee" if ieee else None)


def fneg(x: Node) -> Node:
    return bitcast(x.bits() ^ sign_bit(x.ty), x.ty)


def fabs(x: Node) -> Node:
    return bitcast(x.bits() & (x.ty.mask ^ sign_bit(x.ty)), x.ty)


def copysign(mag: Node, sgn: Node) -> Node:
    s = sign_bit(mag.ty)
    return bitcast((mag.bits() & (mag.ty.mask ^ s)) | (sgn.bits() & s), mag.ty)


def signbit(x: Node) -> Node:
    return (x.bits() >> (x.ty.bits - 1)).ne(0) if x.ty.is_float else x < 0


def isnan(x: Node) -> Node:
    return fcmp(x, x, "uno")


def isinf(x: Node) -> Node:
    return fabs(x).bits().eq(EXP_MASK[x.ty.bits])


def isfinite(x: Node) -> Node:
    return (fabs(x).bits() < EXP_MASK[x.ty.bits])


EXP_MASK = {16: 0x7C00, 32: 0x7F800000, 64: 0x7FF0000000000000}
QUIET_BIT = {16: 0x0200, 32: 0x00400000, 64: 0x0008000000000000}
MANT_BITS = {16: 10, 32: 23, 64: 52}
EXP_BIAS = {16: 15, 32: 127, 64: 1023}


def quiet(x: Node) -> Node:
    """x with the quiet bit set (a NaN stays that NaN, quieted)."""
    return bitcast(x.bits() | QUIET_BIT[x.ty.bits], x.ty)


def is_snan(x: Node) -> Node:
    return isnan(x) & (x.bits() & QUIET_BIT[x.ty.bits]).eq(0)


def is_denormal(x: Node) -> Node:
    """Non-zero with a zero exponent field."""
    b = fabs(x).bits()
    return (b < (1 << MANT_BITS[x.ty.bits])) & b.ne(0)


def zero_like(x: Node) -> Node:
    return const(0, x.ty)


# ---- integer helpers -----------------------------------------------------------------------------------------------
def _iunary(op):
    def f(x: Node) -> Node:
        if not x.ty.is_int:
            raise SpecError(f"{op} on {x.ty}")
        return prim(op, x.ty, x)
    f.__name__ = op
    return f


ctpop = _iunary("ctpop")
ctlz = _iunary("ctlz")
cttz = _iunary("cttz")
bitrev = _iunary("bitrev")


def maximum(a, b) -> Node:
    a, b = coerce(a, b)
    if a.ty.is_float:
        raise SpecError("maximum on floats: use the ISA's fmax (NaN and signed-zero rules)")
    return select(a > b, a, b)


def minimum(a, b) -> Node:
    a, b = coerce(a, b)
    if a.ty.is_float:
        raise SpecError("minimum on floats: use the ISA's fmin (NaN and signed-zero rules)")
    return select(a < b, a, b)


def clamp_int(x: Node, lo: int, hi: int) -> Node:
    return minimum(maximum(x, lo), hi)


def iabs(x: Node) -> Node:
    return select(x < 0, -x, x)


def lo32(x: Node) -> Node:
    return trunc(x, U32)


def hi32(x: Node) -> Node:
    return trunc(x.bits() >> 32, U32)


def pack64(lo: Node, hi: Node, ty=U64) -> Node:
    return bitcast(zext(lo, U64) | (zext(hi, U64) << 32), ty)


def bit(x: Node, i) -> Node:
    """Bit ``i`` of an integer as B1."""
    return trunc(x.bits() >> i if isinstance(i, int) else x.bits() >> i, B1)


# ---- lanes ----------------------------------------------------------------------------------------------------------
def lane_id(lanes: int) -> Node:
    return Node("lane_id", U32, (), lanes, uniform=False)


def lane_read(v: Node, i: Node) -> Node:
    return Node("lane_read", v.ty, (v, i if isinstance(i, Node) else const(i, U32)), uniform=True)


def lane_shuffle(v: Node, lane_map) -> Node:
    return Node("lane_shuffle", v.ty, (v,), tuple(int(x) for x in lane_map), uniform=False)


def lane_gather(v: Node, idx: Node) -> Node:
    return Node("lane_gather", v.ty, (v, idx), uniform=False)


def mask_word(c: Node, lanes: int) -> Node:
    """Per-lane B1 → the lane mask word (U64 for 64 lanes, U32 for 32)."""
    if c.ty is not B1:
        raise SpecError("mask_word of a non-B1 value")
    if c.uniform:
        return select(c, const(-1, UINT[lanes]), const(0, UINT[lanes]))
    return Node("mask_word", UINT[lanes], (c,), lanes, uniform=True)


def word_lanes(x: Node, lanes: int) -> Node:
    """A lane mask word → per-lane B1."""
    return Node("word_lanes", B1, (zext(x, UINT[lanes]),), lanes, uniform=False)


# ---- reading machine state (what a location means is the backend's business) -------------------------------------
def read(loc: tuple, ty, uniform: bool) -> Node:
    return Node("read", as_ty(ty), (), loc, uniform=uniform)


# ---- effects: what an instruction does with its values ---------------------------------------------------------------
class Write:
    """Store ``value`` at ``loc``: ("v", row) per lane under ``mask`` (per-lane B1; None: every lane),
    ("s", index) / ("scc",) / ("mode",) uniform.  An instruction's writes happen after all of its reads, in
    list order."""

    __slots__ = ("loc", "value", "mask")

    def __init__(self, loc: tuple, value: Node, mask: Node | None = None):
        self.loc, self.value, self.mask = loc, value, mask

    def __repr__(self):
        return f"Write({self.loc}, {self.value!r}{', mask=' + repr(self.mask) if self.mask is not None else ''})"


def walk(roots, operands=None):
    """Every node reachable from ``roots`` once, operands before users; ``operands(n)``, if given, says which of
    n's operands to enter (default: all)."""
    seen, order = set(), []
    stack = [(r, False) for r in reversed(list(roots)) if r is not None]
    while stack:
        n, expanded = stack.pop()
        if id(n) in seen:
            continue
        if expanded or not n.args:
            seen.add(id(n))
            order.append(n)
            continue
        stack.append((n, True))
        for a in reversed(n.args if operands is None else operands(n)):
            if id(a) not in seen:
                stack.append((a, False))
    return order
