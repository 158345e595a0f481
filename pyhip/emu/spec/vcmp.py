"""Vector compares (VOPC, their VOP3 forms, SDWA and DPP): v_cmp_* / v_cmpx_* for every type and condition,
v_cmp_class_* / v_cmpx_class_*.  The lane mask goes to VCC, the VOP3 SDST (in the VDST field) or the SDWA
word's SDST (when SD is set), inactive lanes written 0; v_cmpx also writes EXEC — on GFX10+ EXEC only
(the RDNA V_CMPX have no SDST).  Sources are not flushed by MODE (compares read their
operands as they are), and DPP lane masks do not restrict the write (as in the old numpy semantics)."""
from __future__ import annotations

from .lang import B1, EXP_MASK, MANT_BITS, QUIET_BIT, U16, U32, bit, const, fcmp, select
from .operands import EXEC, VCC, Build, describe

# v_cmp_class_f16 reads S0 as an f16 operand (LLVM: VOPC_Class_Profile<..., f16>: the inline constant 1.0 is
# 0x3C00, NEG/ABS act on bit 15, OP_SEL / a true16 .h operand picks the high half).  The old numpy semantics
# read it as an f32 operand and used its low 16 bits; False restores that behaviour.

FLOAT_PRED = {"lt": "olt", "eq": "oeq", "le": "ole", "gt": "ogt", "lg": "one", "ge": "oge", "o": "ord",
              "u": "uno", "nge": "ult", "nlg": "ueq", "ngt": "ule", "nle": "ugt", "neq": "une", "nlt": "uge"}
INT_REL = {"lt": "__lt__", "le": "__le__", "gt": "__gt__", "ge": "__ge__", "eq": "eq", "ne": "ne", "lg": "ne"}
CONST = {"f": False, "t": True, "tru": True}
TYPES = ("f16", "f32", "f64", "i16", "u16", "i32", "u32", "i64", "u64")


def lane_dst(b: Build, cmpx: bool) -> int:
    """Where the lane mask goes: EXEC (GFX10+ v_cmpx), the VOP3 SDST, the SDWA SDST (SD set), else VCC."""
    inst = b.inst
    if cmpx and b.family >= 10:
        return EXEC
    if inst.encoding == "VOP3":
        return inst.fields["vdst"]
    if inst.sdwa is not None and inst.sdwa["sd"]:
        return inst.sdwa["sdst"]
    return VCC


def write_compare(b: Build, lanes, cmpx: bool) -> None:
    """The lane mask (inactive lanes 0) to its destination, and to EXEC for v_cmpx."""
    lanes = lanes & b.exec
    d = lane_dst(b, cmpx)
    b.write_lanes(d, lanes, active_only=False)
    if cmpx and d != EXEC:
        b.write_lanes(EXEC, lanes, active_only=False)


def _src(b: Build, i: int, kind: str):
    """Source ``i`` typed by ``kind`` (64-bit operands read inline floats as binary64: Build.scalar)."""
    return b.src(i, kind)


def _compare(t: str, cond: str, cmpx: bool):
    is_float = t[0] == "f"

    def build(b: Build) -> None:
        if cond in CONST:
            r = const(CONST[cond], B1)
        else:
            x, y = _src(b, 0, t), _src(b, 1, t)
            r = fcmp(x, y, FLOAT_PRED[cond]) if is_float else getattr(x, INT_REL[cond])(y)
        write_compare(b, r, cmpx)
    return build


def fp_class(bits, mask):
    """V_CMP_CLASS: bit k of ``mask`` (U32) for the class k of the float whose bits (U16/U32/U64) are ``bits``:
    0 signalling NaN, 1 quiet NaN, 2 -inf, 3 -normal, 4 -denormal, 5 -0, 6 +0, 7 +denormal, 8 +normal, 9 +inf."""
    w = bits.ty.bits
    mag = bits & ((1 << (w - 1)) - 1)
    exp = EXP_MASK[w]
    k = select(mag.eq(exp), const(9, U32), select(mag >= (1 << MANT_BITS[w]), const(8, U32),
                                                  select(mag.eq(0), const(6, U32), const(7, U32))))
    k = select((bits >> (w - 1)).ne(0), 11 - k, k)
    k = select(mag > exp, select((bits & QUIET_BIT[w]).ne(0), const(1, U32), const(0, U32)), k)
    return bit(mask, k)


def _class(t: str, cmpx: bool):
    def build(b: Build) -> None:
        x = b.raw(0, t, True)                # (f16: an f16 operand, OP_SEL and NEG/ABS on bit 15)
        if t == "f16":
            x = x.trunc(U16)
        mask = b.raw(1, "f32", True)           # the class mask: bits 9:0 (modifiers only touch bit 31)
        write_compare(b, fp_class(x, mask), cmpx)
    return build


for _t in TYPES:
    _conds = list(FLOAT_PRED) if _t[0] == "f" else list(INT_REL)
    for _c in _conds + list(CONST):
        for _x in (False, True):
            describe(f"v_cmp{'x' if _x else ''}_{_c}_{_t}")(_compare(_t, _c, _x))
for _t in ("f16", "f32", "f64"):
    for _x in (False, True):
        describe(f"v_cmp{'x' if _x else ''}_class_{_t}")(_class(_t, _x))

__all__ = ["fp_class", "lane_dst", "write_compare"]
