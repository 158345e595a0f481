"""Vector compares (VOPC and their VOP3 forms): v_cmp_*, v_cmpx_* (also write EXEC), v_cmp_class_*.
GFX10+ v_cmpx write EXEC only (GFX9's also write VCC / SDST)."""
from __future__ import annotations

import numpy as np

from ..state import EXEC, VCC
from . import register
from .common import F32, F64, I32, I64, U32, U64, carry_dst, readers

TYPES = {"f32": (32, F32, True), "f64": (64, F64, True), "i32": (32, I32, False), "u32": (32, U32, False),
         "i64": (64, I64, False), "u64": (64, U64, False), "f16": (32, np.float16, True),
         "i16": (32, np.int16, False), "u16": (32, np.uint16, False)}
NAN_FALSE = {"lt": np.less, "eq": np.equal, "le": np.less_equal, "gt": np.greater, "lg": lambda a, b: (a < b) | (a > b),
             "ge": np.greater_equal, "o": lambda a, b: ~(np.isnan(a) | np.isnan(b))}
NEGATED = {"nge": "ge", "nlg": "lg", "ngt": "gt", "nle": "le", "neq": "eq", "nlt": "lt", "u": "o"}
INT = {"lt": np.less, "eq": np.equal, "le": np.less_equal, "gt": np.greater, "ne": np.not_equal,
       "ge": np.greater_equal, "lg": np.not_equal}


def _typed(v, dtype):
    if dtype == np.float16:
        return (v & U32(0xFFFF)).astype(np.uint16).view(np.float16)
    if dtype in (np.int16, np.uint16):
        return (v & U32(0xFFFF)).astype(np.uint16).view(dtype)
    return v.view(dtype)


def _cmp_factory(opname, tname, writes_exec):
    width, dtype, is_float = TYPES[tname]

    def factory(inst, K):
        kinds = (tname, tname) if tname in ("f16", "i16", "u16") else None
        rds = readers(inst, 2, (width, width), is_float, kinds=kinds)
        # VOPC as VOP3A: SDST in the VDST field; VOPC SDWA: SDST when SD is set
        dst = inst.fields["vdst"] if inst.encoding == "VOP3" else carry_dst(inst)
        if writes_exec and K.family >= 10:
            dst = EXEC
        if is_float:
            if opname in NAN_FALSE:
                fn = NAN_FALSE[opname]
            elif opname in NEGATED:
                base = NAN_FALSE[NEGATED[opname]]
                fn = lambda a, b, base=base: ~base(a, b)   # noqa: E731
            elif opname in ("f", "t", "tru"):
                fn = lambda a, b, v=opname != "f": np.full(a.shape, v)   # noqa: E731
            else:
                raise KeyError(opname)
        else:
            if opname in ("f", "t", "tru"):
                fn = lambda a, b, v=opname != "f": np.full(a.shape, v)   # noqa: E731
            else:
                fn = INT[opname]

        def run(st, w):
            m = st.exec_mask(w)
            with np.errstate(invalid="ignore"):
                r = fn(_typed(rds[0](st, w), dtype), _typed(rds[1](st, w), dtype))
                if not m.all():
                    r &= m
            st.set_sgpr_mask(w, dst, r)
            if writes_exec and dst != EXEC:
                st.set_sgpr_mask(w, EXEC, r)
        return run
    return factory


def _class_factory(tname, writes_exec):
    width, dtype, _ = TYPES[tname]

    def factory(inst, K):
        rds = readers(inst, 2, (width, 32), True)
        dst = inst.fields["vdst"] if inst.encoding == "VOP3" else carry_dst(inst)  # VOP3A: SDST in the VDST field
        if writes_exec and K.family >= 10:
            dst = EXEC
        tiny = np.finfo(dtype).tiny

        def run(st, w):
            m = st.exec_mask(w)
            x = _typed(rds[0](st, w), dtype)
            mask = rds[1](st, w)
            bits = x.view(U64 if width == 64 else U32)
            quiet_bit = U64(1 << 51) if width == 64 else U32(1 << 22)
            nan = np.isnan(x)
            snan = nan & ((bits & quiet_bit) == 0)
            neg = np.signbit(x)
            inf, zero = np.isinf(x), x == 0
            sub = ~nan & ~inf & ~zero & (np.abs(x) < tiny)
            normal = ~nan & ~inf & ~zero & ~sub
            classes = [snan, nan & ~snan, inf & neg, normal & neg, sub & neg, zero & neg,
                       zero & ~neg, sub & ~neg, normal & ~neg, inf & ~neg]
            r = np.zeros(x.shape, bool)
            for i, c in enumerate(classes):
                r |= c & ((mask >> U32(i)) & U32(1)).astype(bool)
            r &= m
            st.set_sgpr_mask(w, dst, r)
            if writes_exec and dst != EXEC:
                st.set_sgpr_mask(w, EXEC, r)
        return run
    return factory


for _t in TYPES:
    for _o in list(NAN_FALSE) + list(NEGATED) + ["f", "t", "tru", "ne"]:
        if TYPES[_t][2] and _o == "ne":
            continue
        if not TYPES[_t][2] and (_o in NEGATED or _o in ("o", "lg") and False):
            continue
        for _x in (False, True):
            name = f"v_cmp{'x' if _x else ''}_{_o}_{_t}"
            try:
                register(name, _cmp_factory(_o, _t, _x))
            except KeyError:
                pass
    for _x in (False, True):
        if TYPES[_t][2]:
            register(f"v_cmp{'x' if _x else ''}_class_{_t}", _class_factory(_t, _x))
