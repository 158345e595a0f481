"""VALU operations with carries and lane masks (v_add_co/addc/sub_co/subb..., v_cndmask_b32, v_mad_u64_u32),
and the ones that accumulate into their destination or take a literal operand (v_fmac/v_mac, v_madmk/madak,
v_fmamk/fmaak), from AMD's Vega/CDNA and RDNA ISA manuals.

A lane mask (carry in, carry out, select) is one bit per lane of an SGPR (pair on wave64): VCC for the VOP2
forms, the VOP3B SDST / VOP3 SRC2 operand otherwise.  A carry out is written for active lanes and 0 for the
others."""
from __future__ import annotations

from . import fpops
from .lang import B1, F32, F64, I64, U32, U64, const, fbits, fma, select
from .operands import VCC, Build, describe
from .valu import mad


# ---- lane masks --------------------------------------------------------------------------------------------------
def mask_src(b: Build, code: int):
    """A lane-mask source as per-lane B1: an SGPR (pair on wave64), or a scalar constant taken as the mask
    word (VGPR codes are refused)."""
    if code >= 256:
        raise NotImplementedError("a VGPR as a lane-mask operand")
    return b.mask_operand(code)


def carry_in(b: Build):
    return mask_src(b, b.inst.fields["src2"] if b.vop3 else VCC)


def carry_out(b: Build) -> int:
    """VOP3B SDST, else VCC (the SDWA SD/SDST bits exist only in VOPC's SDWA word: a VOP2 SDWA carry goes
    to VCC)."""
    return b.inst.fields["sdst"] if b.vop3 else VCC


# ---- carries ---------------------------------------------------------------------------------------------------------
def _carry(kind: str):
    """D = S0 + S1 (+ carry in) with the carry out, or S0 - S1 (- borrow in) with the borrow out (rev: S1 - S0);
    32-bit unsigned."""
    with_cin = kind in ("addc", "subb", "subbrev")

    def build(b: Build) -> None:
        x, y = b.src(0, "u32", False), b.src(1, "u32", False)
        if kind in ("add", "addc"):
            r = x + y
            c = r < y                                        # unsigned wrap
            if with_cin:
                cin = carry_in(b)
                r2 = r + cin.zext(U32)
                c = c | (cin & r2.eq(0))
                r = r2
        else:
            if kind in ("subrev", "subbrev"):
                x, y = y, x
            r = x - y
            c = y > x                                        # borrow
            if with_cin:
                cin = carry_in(b)
                c = c | (cin & r.eq(0))
                r = r - cin.zext(U32)
        b.write_d(r, "u32")
        b.write_lanes(carry_out(b), c)
    return build


for _names, _kind in (("v_add_co_u32", "add"), ("v_addc_co_u32 v_add_co_ci_u32", "addc"),
                      ("v_sub_co_u32", "sub"), ("v_subb_co_u32 v_sub_co_ci_u32", "subb"),
                      ("v_subrev_co_u32", "subrev"), ("v_subbrev_co_u32 v_subrev_co_ci_u32", "subbrev")):
    describe(_names)(_carry(_kind))


@describe("v_mad_u64_u32", "v_mad_i64_i32")
def _mad64(b: Build) -> None:
    """D.u64 = S0 * S1 + S2.u64 (32x32 → 64-bit product, signed for the i64 form); the unsigned form's carry
    out of the 64-bit sum goes to SDST (the signed form writes 0 there).  SDST beyond VCC (TTMP, M0, EXEC...)
    is not written."""
    signed = b.inst.name == "v_mad_i64_i32"
    a, c, acc = b.src(0, "u32", False), b.src(1, "u32", False), b.src(2, "u64", False)
    if signed:
        prod = (a.sext(I64) * c.sext(I64)).view(U64)
    else:
        prod = a.zext(U64) * c.zext(U64)
    r = prod + acc
    b.write_d(r, "u64")
    sdst = b.inst.fields["sdst"]
    if sdst <= VCC:
        b.write_lanes(sdst, const(False, B1) if signed else r < acc)


# ---- selects -----------------------------------------------------------------------------------------------------
@describe("v_cndmask_b32")
def _cndmask(b: Build) -> None:
    """D = mask[lane] ? S1 : S0; the VOP3 form takes the mask from SRC2 and its ABS/NEG bits clear/flip the
    sources' bit 31 (the bits move unchanged otherwise: no float canonicalisation)."""
    x, y = b.src(0, "u32", False), b.src(1, "u32", False)
    if b.vop3:
        f = b.inst.fields
        absf, negf = f.get("abs", 0), f.get("neg", 0)
        x = _sign_mods(x, absf & 1, negf & 1)
        y = _sign_mods(y, absf >> 1 & 1, negf >> 1 & 1)
        sel = mask_src(b, f["src2"])
    else:
        sel = mask_src(b, VCC)
    b.write_d(select(sel, y, x), "u32")


def _sign_mods(v, a: int, n: int):
    if a:
        v = v & 0x7FFFFFFF
    if n:
        v = v ^ 0x80000000
    return v


# ---- accumulating and literal multiply-adds ---------------------------------------------------------------------
def _fma_like(b: Build, kind: str, a, c, acc):
    """flush the inputs by MODE, a * c + acc fused (fma) or not (mad), then output modifiers and flushing."""
    mode = b.mode
    a, c, acc = (fpops.flush(v, mode, False) for v in (a, c, acc))
    r = fma(a, c, acc) if kind == "fma" else mad(a, c, acc, mode)
    return b.finish_float(r)


@describe("v_fmac_f32", "v_mac_f32")
def _mac32(b: Build) -> None:
    """D = S0 * S1 + D: V_FMA_F32 / V_MAD_F32 with SRC2 = VDST, MODE's denormal flushing and the VOP3/SDWA
    output modifiers included (LLVM's SIFoldOperands/SIInstrInfo turn one form into the other freely).  The
    accumulator takes no source modifiers."""
    a, c = b.srcs(("f32", "f32"), True)
    acc = b.vgpr(b.dst()).view(F32)
    r = _fma_like(b, "fma" if b.inst.name == "v_fmac_f32" else "mad", a, c, acc)
    b.write_d(r, "f32")


@describe("v_fmac_f64")
def _fmac64(b: Build) -> None:
    """D = S0 * S1 + D in binary64: V_FMA_F64 with SRC2 = VDST (its VOP3 CLAMP/OMOD included)."""
    a, c = b.srcs(("f64", "f64"), True)
    acc = b.vgpr64(b.dst()).view(F64)
    b.write_d(_fma_like(b, "fma", a, c, acc), "f64")


@describe("v_madmk_f32", "v_fmamk_f32", "v_madak_f32", "v_fmaak_f32")
def _madk(b: Build) -> None:
    """mk: D = S0 * K + S1; ak: D = S0 * S1 + K (K the literal): V_MAD_F32 (not fused) / V_FMA_F32 with the
    literal as a source (LLVM folds a literal into V_MAC/V_MAD as V_MADMK/V_MADAK)."""
    name = b.inst.name
    a, c = b.srcs(("f32", "f32"), True)
    k = fbits(b.inst.literal or 0, F32)
    kind = "fma" if name.startswith("v_fma") else "mad"
    r = _fma_like(b, kind, a, k, c) if "mk" in name else _fma_like(b, kind, a, c, k)
    b.write_d(r, "f32")


# ---- nothing to do -----------------------------------------------------------------------------------------------
@describe("v_nop", "s_nop")
def _nop(b: Build) -> None:
    pass
