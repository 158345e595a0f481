"""The scalar ALU (SOP1, SOP2, SOPC, SOPK): integer arithmetic, logic, shifts, bit operations, compares
writing SCC, conditional moves and the EXEC save/write forms, under their GFX9, GFX10.3 and GFX11 names
(AMD's Vega/CDNA and RDNA ISA manuals).  Sources are SGPRs, inline constants or a literal (``ssrc0``,
``ssrc1``; SOPK: ``simm16``, with SDST both source and destination); results go to SDST (SGPR pairs for
64-bit values; NULL and non-SGPR destinations discarded) and SCC.

Left out (not register→register ALU work, see the report of this port): program control and system
instructions — branches and calls (s_branch, s_cbranch_*, s_call_b64, s_setpc/s_getpc/s_swappc_b64,
s_cbranch_join/g_fork/i_fork, s_rfe*), s_endpgm*, s_barrier, s_waitcnt*, s_sleep, s_nop and the
scheduling/cache hints, s_getreg/s_setreg*, s_sendmsg*, s_trap, s_movrel*, s_set_gpr_idx_*, s_version,
s_subvector_loop_*, s_setvskip.  s_round_mode/s_denorm_mode are described: they only rewrite MODE bits."""
from __future__ import annotations

from .lang import (
    I8,
    I16,
    I32,
    I64,
    U32,
    U64,
    Write,
    bitrev,
    const,
    ctlz,
    ctpop,
    cttz,
    maximum,
    minimum,
    select,
)
from .operands import EXEC, Build, describe

# 64-bit integer operands read the inline float constants (codes 240-248) as binary64 values: LLVM encodes
# the i64 0x3FF0000000000000 as the inline constant 1.0 (``s_cmp_eq_u64 s[6:7], 1.0``; its disassembler's
# decodeFPImmed gives 64-bit operands getInlineImmVal64).  The old numpy semantics read their binary32
# patterns (0x3F800000); False restores that behaviour.


def scalar_src(b: Build, code: int, width: int = 32):
    """A scalar source of ``width`` bits (U32/U64; 64-bit inline floats are binary64: Build.scalar)."""
    return b.scalar(code, width)


def salu(names: str, fn, widths=(32, 32), out: int | None = 32, scc=None):
    """A SOP1/SOP2/SOPC operation: ``fn`` of the sources ``ssrc0``[, ``ssrc1``] read at ``widths`` bits → SDST
    (``out`` bits; None: no destination).  ``scc``: None (SCC kept), "nz" (SCC = result != 0), "r" (the
    result is SCC itself: compares), or ``f(*sources, result)`` → B1."""
    def build(b: Build) -> None:
        f = b.inst.fields
        srcs = [scalar_src(b, f[k], w) for k, w in zip(("ssrc0", "ssrc1"), widths)]
        r = fn(*srcs)
        if scc == "r":
            b.write_scc(r)
            return
        if out is not None:
            b.write_sreg(f["sdst"], r, out)
        if scc == "nz":
            b.write_scc(r.ne(0))
        elif scc is not None:
            b.write_scc(scc(*srcs, r))
    return describe(names)(build)


def _i(x):
    return x.view(I32)


# ---- SOP2: arithmetic ------------------------------------------------------------------------------------------------
salu("s_add_u32", lambda a, b: a + b, scc=lambda a, b, r: r < a)                          # carry out
salu("s_sub_u32", lambda a, b: a - b, scc=lambda a, b, r: b > a)                          # borrow
salu("s_add_i32", lambda a, b: a + b, scc=lambda a, b, r: ((a ^ r) & (b ^ r)).view(I32) < 0)   # overflow
salu("s_sub_i32", lambda a, b: a - b, scc=lambda a, b, r: ((a ^ b) & (a ^ r)).view(I32) < 0)
salu("s_mul_i32", lambda a, b: a * b)
salu("s_mul_hi_u32", lambda a, b: ((a.zext(U64) * b.zext(U64)) >> 32).trunc(U32))
salu("s_mul_hi_i32", lambda a, b: ((_i(a).sext(I64) * _i(b).sext(I64)) >> 32).trunc(U32))
salu("s_min_u32", minimum, scc=lambda a, b, r: a < b)
salu("s_max_u32", maximum, scc=lambda a, b, r: a > b)
salu("s_min_i32", lambda a, b: minimum(_i(a), _i(b)), scc=lambda a, b, r: _i(a) < _i(b))
salu("s_max_i32", lambda a, b: maximum(_i(a), _i(b)), scc=lambda a, b, r: _i(a) > _i(b))
salu("s_absdiff_i32", lambda a, b: select(_i(a) > _i(b), a - b, b - a), scc="nz")


@describe("s_lshl1_add_u32 s_lshl2_add_u32 s_lshl3_add_u32 s_lshl4_add_u32")
def _lshl_add(b: Build) -> None:
    """D = (S0 << n) + S1; SCC = the 64-bit sum exceeds 32 bits."""
    f = b.inst.fields
    k = int(b.inst.name[6])
    wide = (scalar_src(b, f["ssrc0"]).zext(U64) << k) + scalar_src(b, f["ssrc1"]).zext(U64)
    b.write_scc(wide > 0xFFFFFFFF)
    b.write_sreg(f["sdst"], wide.trunc(U32))


@describe("s_addc_u32", "s_subb_u32")
def _carry(b: Build) -> None:
    """D = S0 + S1 + SCC (SCC = carry out) / D = S0 - S1 - SCC (SCC = borrow)."""
    f = b.inst.fields
    x, y = scalar_src(b, f["ssrc0"]).zext(U64), scalar_src(b, f["ssrc1"]).zext(U64)
    c = b.scc().zext(U64)
    if b.inst.name == "s_addc_u32":
        wide = x + y + c
        b.write_scc(wide > 0xFFFFFFFF)
    else:
        wide = x - y - c
        b.write_scc((y + c) > x)
    b.write_sreg(f["sdst"], wide.trunc(U32))


# ---- SOP2: logic, shifts, bit fields ---------------------------------------------------------------------------------
# The 64-bit shifts, bit fields and bit tests take a 32-bit second operand (LLVM: SOP2_64_32, SOP2_64_32_32 for
# s_bfm_b64, SOPC_64_32), read as such (VCCZ/EXECZ/SCC accepted; the old code read it as a 64-bit pair).
_LOGIC = {"and": lambda a, b: a & b, "or": lambda a, b: a | b, "xor": lambda a, b: a ^ b,
          "andn2": lambda a, b: a & ~b, "orn2": lambda a, b: a | ~b, "nand": lambda a, b: ~(a & b),
          "nor": lambda a, b: ~(a | b), "xnor": lambda a, b: ~(a ^ b)}
_GFX11 = {"andn2": "and_not1", "orn2": "or_not1", "andn1": "and_not0", "orn1": "or_not0"}
for _n, _f in _LOGIC.items():
    for _w in (32, 64):
        salu(" ".join(f"s_{n}_b{_w}" for n in (_n, _GFX11.get(_n, _n))), _f, (_w, _w), _w, scc="nz")

salu("s_lshl_b32", lambda a, b: a << (b & 31), scc="nz")
salu("s_lshr_b32", lambda a, b: a >> (b & 31), scc="nz")
salu("s_ashr_i32", lambda a, b: _i(a) >> _i(b & 31), scc="nz")
salu("s_lshl_b64", lambda a, b: a << (b & 63).zext(U64), (64, 32), 64, scc="nz")
salu("s_lshr_b64", lambda a, b: a >> (b & 63).zext(U64), (64, 32), 64, scc="nz")
salu("s_ashr_i64", lambda a, b: a.view(I64) >> (b & 63).zext(I64), (64, 32), 64, scc="nz")
salu("s_bfm_b32", lambda a, b: ((const(1, U32) << (a & 31)) - 1) << (b & 31))
salu("s_bfm_b64", lambda a, b: ((const(1, U64) << (a & 63).zext(U64)) - 1) << (b & 63).zext(U64), (32, 32), 64)


def _bfe(width: int, signed: bool):
    """S0 >> S1[4:0] (S1[5:0] for 64 bits), S1[22:16] bits of it (the width clamped to the operand's), sign-
    extended for the signed forms; 0 for a zero width."""
    ty = U64 if width == 64 else U32

    def fn(a, b):
        off = (b & (width - 1)).zext(ty)
        n = minimum((b >> 16) & 0x7F, const(width, U32))
        s = (width - n).zext(ty)                      # n = width: s = 0 (the shifts take s mod width)
        x = (a >> off) << s
        r = (x.view(I64 if width == 64 else I32) >> s.view(I64 if width == 64 else I32)).bits() if signed else x >> s
        return select(n.eq(0), const(0, ty), r)
    return fn


salu("s_bfe_u32", _bfe(32, False), scc="nz")
salu("s_bfe_i32", _bfe(32, True), scc="nz")
salu("s_bfe_u64", _bfe(64, False), (64, 32), 64, scc="nz")
salu("s_bfe_i64", _bfe(64, True), (64, 32), 64, scc="nz")

salu("s_pack_ll_b32_b16", lambda a, b: (a & 0xFFFF) | (b << 16))
salu("s_pack_lh_b32_b16", lambda a, b: (a & 0xFFFF) | (b & 0xFFFF0000))
salu("s_pack_hh_b32_b16", lambda a, b: (a >> 16) | (b & 0xFFFF0000))
salu("s_pack_hl_b32_b16", lambda a, b: (a >> 16) | (b << 16))


@describe("s_cselect_b32", "s_cselect_b64")
def _cselect(b: Build) -> None:
    f = b.inst.fields
    w = 64 if b.inst.name.endswith("64") else 32
    b.write_sreg(f["sdst"], select(b.scc(), scalar_src(b, f["ssrc0"], w), scalar_src(b, f["ssrc1"], w)), w)


# ---- SOP1 ------------------------------------------------------------------------------------------------------------
def _first(found, x):
    """A bit position, or 0xFFFFFFFF when ``x`` (the searched word) is 0."""
    return select(x.eq(0), const(0xFFFFFFFF, U32), found.trunc(U32))


def _cls(a):
    """Leading bits equal to the sign bit, counted from the MSB up to the first differing one (the MSB
    included); 0xFFFFFFFF when every bit equals the sign bit."""
    x = select(a.view(I64 if a.ty.bits == 64 else I32) < 0, ~a, a)
    return _first(ctlz(x), x)


def _quadmask(a):
    """Bit q = any of bits 4q..4q+3: the OR of each quad in its low bit, then the quads' bits packed down."""
    w = a.ty.bits
    t = a | (a >> 1)
    t = (t | (t >> 2)) & (0x1111111111111111 & a.ty.mask)
    steps = ((3, 0x0303030303030303), (6, 0x000F000F000F000F), (12, 0x000000FF000000FF), (24, 0xFFFF))
    for sh, m in steps[:3 if w == 32 else 4]:
        t = (t | (t >> sh)) & (m & a.ty.mask)
    return t


def _wqm(a):
    """Every quad with a set bit becomes 0xF."""
    t = a | (a >> 1)
    t = (t | (t >> 2)) & (0x1111111111111111 & a.ty.mask)
    return t * 0xF


def _bitreplicate(a):
    """Bit i of the 32-bit source → bits 2i and 2i+1."""
    x = a.zext(U64)
    for sh, m in ((16, 0x0000FFFF0000FFFF), (8, 0x00FF00FF00FF00FF), (4, 0x0F0F0F0F0F0F0F0F),
                  (2, 0x3333333333333333), (1, 0x5555555555555555)):
        x = (x | (x << sh)) & m
    return x * 3


salu("s_mov_b32", lambda a: a, (32,))
salu("s_mov_b64", lambda a: a, (64,), 64)
salu("s_not_b32", lambda a: ~a, (32,), scc="nz")
salu("s_not_b64", lambda a: ~a, (64,), 64, scc="nz")
salu("s_brev_b32", bitrev, (32,))
salu("s_brev_b64", bitrev, (64,), 64)
salu("s_ff1_i32_b32 s_ctz_i32_b32", lambda a: _first(cttz(a), a), (32,))
salu("s_ff1_i32_b64 s_ctz_i32_b64", lambda a: _first(cttz(a), a), (64,))
salu("s_ff0_i32_b32", lambda a: _first(cttz(~a), ~a), (32,))
salu("s_ff0_i32_b64", lambda a: _first(cttz(~a), ~a), (64,))
salu("s_flbit_i32_b32 s_clz_i32_u32", lambda a: _first(ctlz(a), a), (32,))
salu("s_flbit_i32_b64 s_clz_i32_u64", lambda a: _first(ctlz(a), a), (64,))
salu("s_flbit_i32 s_cls_i32", _cls, (32,))
salu("s_flbit_i32_i64 s_cls_i32_i64", _cls, (64,))
salu("s_bcnt1_i32_b32", ctpop, (32,), scc="nz")
salu("s_bcnt1_i32_b64", lambda a: ctpop(a).trunc(U32), (64,), scc="nz")
salu("s_bcnt0_i32_b32", lambda a: 32 - ctpop(a), (32,), scc="nz")
salu("s_bcnt0_i32_b64", lambda a: (64 - ctpop(a)).trunc(U32), (64,), scc="nz")
salu("s_sext_i32_i8", lambda a: a.trunc(I8).sext(I32), (32,))
salu("s_sext_i32_i16", lambda a: a.trunc(I16).sext(I32), (32,))
salu("s_abs_i32", lambda a: select(_i(a) < 0, -a, a), (32,), scc="nz")
salu("s_quadmask_b32", _quadmask, (32,), scc="nz")
salu("s_quadmask_b64", _quadmask, (64,), 64, scc="nz")
salu("s_wqm_b32", _wqm, (32,), scc="nz")
salu("s_wqm_b64", _wqm, (64,), 64, scc="nz")
salu("s_bitreplicate_b64_b32", _bitreplicate, (32,), 64)


@describe("s_cmov_b32", "s_cmov_b64")
def _cmov(b: Build) -> None:
    f = b.inst.fields
    w = 64 if b.inst.name.endswith("64") else 32
    b.write_sreg(f["sdst"], select(b.scc(), scalar_src(b, f["ssrc0"], w), b.sreg(f["sdst"], w)), w)


@describe("s_bitset0_b32 s_bitset1_b32 s_bitset0_b64 s_bitset1_b64")
def _bitset(b: Build) -> None:
    """Bit S0[4:0] (S0[5:0] for 64 bits) of D cleared / set, the rest of D kept."""
    f = b.inst.fields
    w = 64 if b.inst.name.endswith("64") else 32
    ty = U64 if w == 64 else U32
    m = const(1, ty) << (scalar_src(b, f["ssrc0"]) & (w - 1)).zext(ty)
    cur = b.sreg(f["sdst"], w)
    b.write_sreg(f["sdst"], cur | m if "bitset1" in b.inst.name else cur & ~m, w)


# ---- EXEC forms: D = EXEC, EXEC = op(S0, EXEC) (saveexec); EXEC = D = op(S0, EXEC) (wrexec); SCC = EXEC != 0 -----
_EXEC_OPS = {**_LOGIC, "andn1": lambda a, e: ~a & e, "orn1": lambda a, e: ~a | e}


def _exec_form(fn, width: int, save: bool):
    def build(b: Build) -> None:
        f = b.inst.fields
        ex = b.sreg(EXEC, width)                 # the b64 forms read and write EXEC's pair in wave32 too
        new = fn(scalar_src(b, f["ssrc0"], width), ex)
        if save:
            b.write_sreg(f["sdst"], ex, width)
            b.write_sreg(EXEC, new, width)
        else:
            b.write_sreg(EXEC, new, width)
            b.write_sreg(f["sdst"], new, width)
        b.write_scc(new.ne(0))
    return build


for _n, _f in _EXEC_OPS.items():
    for _w in (32, 64):
        describe(*{f"s_{_n}_saveexec_b{_w}", f"s_{_GFX11.get(_n, _n)}_saveexec_b{_w}"})(_exec_form(_f, _w, True))
for _n in ("andn1", "andn2"):
    for _w in (32, 64):
        describe(f"s_{_n}_wrexec_b{_w}", f"s_{_GFX11[_n]}_wrexec_b{_w}")(_exec_form(_EXEC_OPS[_n], _w, False))


# ---- SOPC: compares and bit tests write SCC ----------------------------------------------------------------------------
_REL = {"eq": lambda a, b: a.eq(b), "lg": lambda a, b: a.ne(b), "gt": lambda a, b: a > b,
        "ge": lambda a, b: a >= b, "lt": lambda a, b: a < b, "le": lambda a, b: a <= b}
for _o, _f in _REL.items():
    salu(f"s_cmp_{_o}_u32", _f, scc="r")
    salu(f"s_cmp_{_o}_i32", lambda a, b, f=_f: f(_i(a), _i(b)), scc="r")
salu("s_cmp_eq_u64", _REL["eq"], (64, 64), scc="r")
salu("s_cmp_lg_u64", _REL["lg"], (64, 64), scc="r")
salu("s_bitcmp0_b32", lambda a, b: ((a >> (b & 31)) & 1).eq(0), scc="r")
salu("s_bitcmp1_b32", lambda a, b: ((a >> (b & 31)) & 1).ne(0), scc="r")
salu("s_bitcmp0_b64", lambda a, b: ((a >> (b & 63).zext(U64)) & 1).eq(0), (64, 32), scc="r")
salu("s_bitcmp1_b64", lambda a, b: ((a >> (b & 63).zext(U64)) & 1).ne(0), (64, 32), scc="r")


# ---- SOPK: SIMM16 (sign-extended; zero-extended for the unsigned compares), SDST as source and destination ------------
def sopk(names: str, fn, signed: bool = True):
    """``fn(b, d, k)`` with the SDST register number ``d`` and the immediate ``k`` (U32)."""
    def build(b: Build) -> None:
        v = b.inst.fields["simm16"]
        if signed and v & 0x8000:
            v -= 0x10000
        fn(b, b.inst.fields["sdst"], const(v, U32))
    return describe(names)(build)


def _addk(b, d, k):
    a = b.sgpr(d)
    r = a + k
    b.write_scc(((a ^ r) & (k ^ r)).view(I32) < 0)
    b.write_sreg(d, r)


sopk("s_movk_i32", lambda b, d, k: b.write_sreg(d, k))
sopk("s_addk_i32", _addk)
sopk("s_mulk_i32", lambda b, d, k: b.write_sreg(d, b.sgpr(d) * k))
sopk("s_cmovk_i32", lambda b, d, k: b.write_sreg(d, select(b.scc(), k, b.sgpr(d))))
for _o, _f in _REL.items():
    sopk(f"s_cmpk_{_o}_i32", lambda b, d, k, f=_f: b.write_scc(f(_i(b.sgpr(d)), _i(k))))
    sopk(f"s_cmpk_{_o}_u32", lambda b, d, k, f=_f: b.write_scc(f(b.sgpr(d), k)), signed=False)


# ---- SOPP: MODE fields -----------------------------------------------------------------------------------------------------
@describe("s_round_mode", "s_denorm_mode")
def _mode_bits(b: Build) -> None:
    """MODE[3:0] (rounding) or MODE[7:4] (denormals) = SIMM16[3:0]."""
    shift = 0 if b.inst.name == "s_round_mode" else 4
    v = (b.inst.fields["simm16"] & 0xF) << shift
    m = b.mode
    new = (m & ~(0xF << shift) & 0xFFFFFFFF) | v
    b.writes.append(Write(("mode",), const(new, U32) if isinstance(new, int) else new))


__all__ = ["salu", "scalar_src", "sopk"]
