"""16-bit VALU (VOP1/VOP2/VOP3 on f16/u16/i16), the mixed-width integer extras (24-bit multiplies, 16-bit
multiply-adds into 32 bits), the conversions and packings, the byte SADs, the cube-map helpers, the DX9 legacy
f32 ops and gfx942's 8-bit float conversions.

16-bit sources read the low half of their register, or the high half under VOP3 OP_SEL (GFX11 true16 ``.h``)
or an SDWA WORD_1 select; 16-bit results follow ``Build.write_d``'s half rules.  f16 arithmetic rounds once:
f16 +, -, *, /, sqrt computed in a wider format and rounded to f16 are already the IEEE result, fma is the fused
primitive, and values computed in binary64 (rsq, the transcendentals, ldexp) are narrowed with ``fpops.narrow``."""
from __future__ import annotations

from . import fpops
from .fpops import narrow
from .lang import (F16, F32, F64, I16, I32, I64, U16, U32, U64, Node, bitcast, ceil, clamp_int, const, fabs, fbits,
                   floor, fma, fptoint, ftrunc, isnan, maximum, minimum, rint, select, signbit, sqrt)
from .operands import Build, describe, valu
from .valu import mad

# ---- f16 arithmetic ------------------------------------------------------------------------------------------------
valu("v_add_f16", ("f16", "f16"), "f16", lambda a, b: a + b)
valu("v_sub_f16", ("f16", "f16"), "f16", lambda a, b: a - b)
valu("v_subrev_f16", ("f16", "f16"), "f16", lambda a, b: b - a)
valu("v_mul_f16", ("f16", "f16"), "f16", lambda a, b: a * b)
valu("v_max_f16", ("f16", "f16"), "f16", fpops.fmax, mode_aware=True)
valu("v_min_f16", ("f16", "f16"), "f16", fpops.fmin, mode_aware=True)
valu("v_ldexp_f16", ("f16", "i32"), "f16", fpops.ldexp)
valu("v_fma_f16 v_fma_legacy_f16", ("f16", "f16", "f16"), "f16", fma)
valu("v_mad_f16 v_mad_legacy_f16", ("f16", "f16", "f16"), "f16", mad, mode_aware=True)
valu("v_max3_f16", ("f16", "f16", "f16"), "f16", lambda a, b, c: fpops.fmax(fpops.fmax(a, b), c))
valu("v_min3_f16", ("f16", "f16", "f16"), "f16", lambda a, b, c: fpops.fmin(fpops.fmin(a, b), c))
valu("v_med3_f16", ("f16", "f16", "f16"), "f16",
     lambda a, b, c: fpops.fmax(fpops.fmin(a, b), fpops.fmin(fpops.fmax(a, b), c)))
valu("v_sqrt_f16", ("f16",), "f16", sqrt)
valu("v_rsq_f16", ("f16",), "f16", lambda a: narrow(const(1.0, F64) / sqrt(a.to(F64)), F16))
valu("v_rcp_f16", ("f16",), "f16", lambda a: const(1.0, F16) / a)
valu("v_log_f16", ("f16",), "f16", lambda a: narrow(fpops.log2_f64(a.to(F64)), F16))
valu("v_exp_f16", ("f16",), "f16", lambda a: narrow(fpops.exp2_f64(a.to(F64), narrowed=True), F16))
valu("v_sin_f16", ("f16",), "f16", lambda a: narrow(fpops.sin_turns(a.to(F64)), F16))
valu("v_cos_f16", ("f16",), "f16", lambda a: narrow(fpops.cos_turns(a.to(F64)), F16))
valu("v_ceil_f16", ("f16",), "f16", ceil)
valu("v_floor_f16", ("f16",), "f16", floor)
valu("v_trunc_f16", ("f16",), "f16", ftrunc)
valu("v_rndne_f16", ("f16",), "f16", rint)
valu("v_fract_f16", ("f16",), "f16", lambda a: fpops.fract(a, 0x3BFF))
valu("v_frexp_mant_f16", ("f16",), "f16", fpops.frexp_mant)
valu("v_frexp_exp_i16_f16", ("f16",), "i16", lambda a: fpops.frexp_exp(a).trunc(I16))
valu("v_cvt_f16_u16", ("u16",), "f16", lambda a: a.to(F16))
valu("v_cvt_f16_i16", ("i16",), "f16", lambda a: a.to(F16))
valu("v_cvt_u16_f16", ("f16",), "u16", lambda a: fptoint(a, U16))
valu("v_cvt_i16_f16", ("f16",), "i16", lambda a: fptoint(a, I16))


def _norm_i16(x: Node) -> Node:
    """f16/f32 → snorm16: clamped to [-1, 1], times 32767 in f32, rounded to nearest even (NaN → 0)."""
    x = x.to(F32)
    c = select(x < -1.0, const(-1.0, F32), select(x > 1.0, const(1.0, F32), x))
    return fptoint(rint(c * 32767.0), I16)


def _norm_u16(x: Node) -> Node:
    """f16/f32 → unorm16: clamped to [0, 1], times 65535 in f32, rounded to nearest even (NaN → 0)."""
    x = x.to(F32)
    c = select(x < 0.0, const(0.0, F32), select(x > 1.0, const(1.0, F32), x))
    return fptoint(rint(c * 65535.0), U16)


valu("v_cvt_norm_i16_f16", ("f16",), "i16", _norm_i16)
valu("v_cvt_norm_u16_f16", ("f16",), "u16", _norm_u16)

# ---- 16-bit integer ------------------------------------------------------------------------------------------------
# (the VOP3 CLAMP forms named in operands.INT_CLAMP evaluate these on exact 64-bit operands and saturate)
valu("v_add_u16", ("u16", "u16"), "u16", lambda a, b: a + b)
valu("v_sub_u16", ("u16", "u16"), "u16", lambda a, b: a - b)
valu("v_subrev_u16", ("u16", "u16"), "u16", lambda a, b: b - a)
valu("v_add_i16", ("i16", "i16"), "i16", lambda a, b: a + b)
valu("v_sub_i16", ("i16", "i16"), "i16", lambda a, b: a - b)
valu("v_mul_lo_u16", ("u16", "u16"), "u16", lambda a, b: a * b)
valu("v_lshlrev_b16", ("u16", "u16"), "u16", lambda a, b: b << (a & 15))
valu("v_lshrrev_b16", ("u16", "u16"), "u16", lambda a, b: b >> (a & 15))
valu("v_ashrrev_i16", ("u16", "i16"), "i16", lambda a, b: b >> (a & 15).view(I16))
valu("v_max_u16", ("u16", "u16"), "u16", maximum)
valu("v_min_u16", ("u16", "u16"), "u16", minimum)
valu("v_max_i16", ("i16", "i16"), "i16", maximum)
valu("v_min_i16", ("i16", "i16"), "i16", minimum)
valu("v_mad_u16 v_mad_legacy_u16", ("u16", "u16", "u16"), "u16", lambda a, b, c: a * b + c)
valu("v_mad_i16 v_mad_legacy_i16", ("i16", "i16", "i16"), "i16", lambda a, b, c: a * b + c)
valu("v_max3_u16", ("u16", "u16", "u16"), "u16", lambda a, b, c: maximum(maximum(a, b), c))
valu("v_min3_u16", ("u16", "u16", "u16"), "u16", lambda a, b, c: minimum(minimum(a, b), c))
valu("v_med3_u16", ("u16", "u16", "u16"), "u16", lambda a, b, c: maximum(minimum(a, b), minimum(maximum(a, b), c)))
valu("v_max3_i16", ("i16", "i16", "i16"), "i16", lambda a, b, c: maximum(maximum(a, b), c))
valu("v_min3_i16", ("i16", "i16", "i16"), "i16", lambda a, b, c: minimum(minimum(a, b), c))
valu("v_med3_i16", ("i16", "i16", "i16"), "i16", lambda a, b, c: maximum(minimum(a, b), minimum(maximum(a, b), c)))
# u16 * u16 + u32 (exact under CLAMP: the operands then arrive as I64)
valu("v_mad_u32_u16", ("u16", "u16", "u32"), "u32", lambda a, b, c: a.to(c.ty) * b.to(c.ty) + c)
# i16 * i16 + i32, wrapping to 32 bits (also under CLAMP, which therefore never saturates: the old semantics)
valu("v_mad_i32_i16", ("i16", "i16", "i32"), "i32",
     lambda a, b, c: (a.sext(I32) * b.sext(I32) + c.sext(I32)).sext(c.ty))


# ---- 24-bit and 32-bit integer extras --------------------------------------------------------------------------------
def _i24(a: Node) -> Node:
    """The low 24 bits of a (U32, or I64 under CLAMP) sign-extended, as I32."""
    return (a.sext(I32) << 8) >> 8


valu("v_mul_hi_u32_u24", ("u32", "u32"), "u32",
     lambda a, b: (((a & 0xFFFFFF).zext(U64) * (b & 0xFFFFFF).zext(U64)) >> 32).trunc(U32))
valu("v_mul_hi_i32_i24", ("u32", "u32"), "i32", lambda a, b: ((_i24(a).to(I64) * _i24(b).to(I64)) >> 32).trunc(I32))
# wraps to 32 bits (under CLAMP too: the old semantics)
valu("v_mad_i32_i24", ("u32", "u32", "i32"), "i32",
     lambda a, b, c: (_i24(a).to(I64) * _i24(b).to(I64) + c.to(I64)).trunc(I32).sext(c.ty))
valu("v_add_i32", ("i32", "i32"), "i32", lambda a, b: a + b)
valu("v_sub_i32", ("i32", "i32"), "i32", lambda a, b: a - b)
valu("v_bfm_b32", ("u32", "u32"), "u32", lambda a, b: ((const(1, U32) << (a & 31)) - 1) << (b & 31))

# ---- conversions -----------------------------------------------------------------------------------------------------
for _i in range(4):
    valu(f"v_cvt_f32_ubyte{_i}", ("u32",), "f32", lambda a, s=_i: ((a >> (8 * s)) & 0xFF).to(F32))
valu("v_cvt_flr_i32_f32", ("f32",), "i32", lambda a: fptoint(floor(a), I32))
valu("v_cvt_rpi_i32_f32", ("f32",), "i32", lambda a: fptoint(floor(a.to(F64) + 0.5), I32))
valu("v_cvt_off_f32_i4", ("u32",), "f32", lambda a: (((a & 0xF) ^ 8).view(I32) - 8).to(F32) / 16.0)


def _sat_u8_i16(h: Node) -> Node:
    return clamp_int(h.trunc(U16).view(I16), 0, 255).view(U16).zext(U32)


valu("v_sat_pk_u8_i16", ("u32",), "u32", lambda a: _sat_u8_i16(a) | (_sat_u8_i16(a >> 16) << 8))
def _i32_to_i16(x: Node) -> Node:
    return clamp_int(x, -32768, 32767).trunc(U16).zext(U32)


valu("v_cvt_pk_i16_i32", ("i32", "i32"), "u32", lambda a, b: _i32_to_i16(a) | (_i32_to_i16(b) << 16))
valu("v_cvt_pk_u16_u32", ("u32", "u32"), "u32", lambda a, b: minimum(a, 65535) | (minimum(b, 65535) << 16))


def _pack16(lo: Node, hi: Node) -> Node:
    return lo.bits().zext(U32) | (hi.bits().zext(U32) << 16)


valu("v_cvt_pknorm_i16_f32", ("f32", "f32"), "u32", lambda a, b: _pack16(_norm_i16(a), _norm_i16(b)))
valu("v_cvt_pknorm_u16_f32", ("f32", "f32"), "u32", lambda a, b: _pack16(_norm_u16(a), _norm_u16(b)))
valu("v_cvt_pknorm_i16_f16", ("f16", "f16"), "u32", lambda a, b: _pack16(_norm_i16(a), _norm_i16(b)))
valu("v_cvt_pknorm_u16_f16", ("f16", "f16"), "u32", lambda a, b: _pack16(_norm_u16(a), _norm_u16(b)))
valu("v_pack_b32_f16", ("f16", "f16"), "u32", _pack16)


def _u8(x: Node) -> Node:
    """f32 → u8: rounded to nearest even, clamped to 0..255, NaN → 0 (U32)."""
    return clamp_int(fptoint(rint(x), I32), 0, 255).view(U32)


def _put_byte(word: Node, byte: Node, sel: Node) -> Node:
    """``word`` with byte ``sel & 3`` replaced by ``byte``."""
    sh = (sel & 3) * 8
    return (word & ~(const(0xFF, U32) << sh)) | (byte << sh)


valu("v_cvt_pk_u8_f32", ("f32", "u32", "u32"), "u32", lambda a, b, c: _put_byte(c, _u8(a), b))

# ---- DX9 legacy f32: 0 * anything (infinities and NaNs included) is +0 -----------------------------------------------


def _mul_legacy(a: Node, b: Node) -> Node:
    return select(a.eq(0.0) | b.eq(0.0), const(0.0, F32), a * b)


valu("v_mul_legacy_f32", ("f32", "f32"), "f32", _mul_legacy)
valu("v_mad_legacy_f32", ("f32", "f32", "f32"), "f32", lambda a, b, c: _mul_legacy(a, b) + c)
valu("v_exp_legacy_f32", ("f32",), "f32", lambda a: fpops.exp2_f32(a))
valu("v_log_legacy_f32", ("f32",), "f32", lambda a: fpops.log2_f64(a.to(F64)).to(F32))


# ---- byte SADs and lerp ----------------------------------------------------------------------------------------------
def _bytes(x: Node, n: int = 4) -> list[Node]:
    """The ``n`` low bytes of an integer as U32."""
    return [((x >> (8 * i)) & 0xFF).trunc(U32) if x.ty.bits > 32 else (x >> (8 * i)) & 0xFF for i in range(n)]


def _absdiff(x: Node, y: Node) -> Node:
    return select(x > y, x - y, y - x)


def _sad(xs, ys, masked: bool = False, zeros=None) -> Node:
    """Sum over the byte pairs of |x - y| (``masked``: pairs whose reference byte y is 0 are left out; ``zeros``:
    the reference bytes' y == 0, when computed once for several SADs)."""
    if masked and zeros is None:
        zeros = [y.eq(0) for y in ys]
    total = None
    for i, (x, y) in enumerate(zip(xs, ys)):
        d = _absdiff(x, y)
        if masked:
            d = select(zeros[i], const(0, U32), d)
        total = d if total is None else total + d
    return total


valu("v_sad_u8", ("u32", "u32", "u32"), "u32", lambda a, b, c: _sad(_bytes(a), _bytes(b)) + c)
valu("v_msad_u8", ("u32", "u32", "u32"), "u32", lambda a, b, c: _sad(_bytes(a), _bytes(b), True) + c)
valu("v_sad_hi_u8", ("u32", "u32", "u32"), "u32", lambda a, b, c: (_sad(_bytes(a), _bytes(b)) << 16) + c)
valu("v_sad_u16", ("u32", "u32", "u32"), "u32",
     lambda a, b, c: _absdiff(a & 0xFFFF, b & 0xFFFF) + _absdiff(a >> 16, b >> 16) + c)


def _lerp(a, b, c):
    out = None
    for i, (x, y, z) in enumerate(zip(_bytes(a), _bytes(b), _bytes(c))):
        v = (((x + y + (z & 1)) >> 1) & 0xFF) << (8 * i)
        out = v if out is None else out | v
    return out


valu("v_lerp_u8", ("u32", "u32", "u32"), "u32", _lerp)


def _qsad(a: Node, b: Node, c: Node, masked: bool) -> Node:
    """Four byte-SADs of the 32-bit reference ``b`` against the 4-byte windows of the 64-bit ``a``, each added to
    a 16-bit accumulator of ``c``, saturating at 0xFFFF (the old semantics; the ISA pseudocode truncates)."""
    xs, ys = _bytes(a, 8), _bytes(b)
    zeros = [y.eq(0) for y in ys] if masked else None
    out = None
    for i in range(4):
        acc = ((c >> (16 * i)) & 0xFFFF).trunc(U32)
        v = minimum(_sad(xs[i:i + 4], ys, masked, zeros) + acc, 0xFFFF).zext(U64) << (16 * i)
        out = v if out is None else out | v
    return out


valu("v_qsad_pk_u16_u8", ("u64", "u32", "u64"), "u64", lambda a, b, c: _qsad(a, b, c, False))
valu("v_mqsad_pk_u16_u8", ("u64", "u32", "u64"), "u64", lambda a, b, c: _qsad(a, b, c, True))


@describe("v_mqsad_u32_u8")
def _mqsad_u32(b: Build) -> None:
    """Four masked byte SADs of the 32-bit reference S1 against the byte windows of the 64-bit S0, each added to
    the matching dword of the 128-bit S2 accumulator (saturating at 2^32 - 1).  The sources are read raw (no
    modifiers); a scalar or constant S2 gives the same accumulator to all four."""
    c0, c1, c2 = b.codes()
    xs, ys = _bytes(b.vector(c0, 64), 8), _bytes(b.vector(c1))
    zeros = [y.eq(0) for y in ys]
    d = b.dst()
    outs = []
    for i in range(4):
        acc = b.vector(c2 + i if c2 >= 256 else c2)
        total = _sad(xs[i:i + 4], ys, True, zeros).zext(U64) + acc.zext(U64)
        outs.append(minimum(total, 0xFFFFFFFF).trunc(U32))
    for i, v in enumerate(outs):
        b.write_vgpr(d + i, v)


# ---- cube map coordinates (face id 0..5 for +x,-x,+y,-y,+z,-z; sc, tc and 2 * major axis) ----------------------------
def _cube_axes(x, y, z):
    ax, ay, az = fabs(x), fabs(y), fabs(z)
    zmaj = (az >= ax) & (az >= ay)
    ymaj = ~zmaj & (ay >= ax)
    return zmaj, ymaj


def _cubeid(x, y, z):
    zm, ym = _cube_axes(x, y, z)

    def face(neg, a, b):
        return select(neg, const(float(a), F32), const(float(b), F32))
    return select(zm, face(z < 0.0, 5, 4), select(ym, face(y < 0.0, 3, 2), face(x < 0.0, 1, 0)))


def _cubesc(x, y, z):
    zm, ym = _cube_axes(x, y, z)
    return select(zm, select(z < 0.0, -x, x), select(ym, x, select(x < 0.0, z, -z)))


def _cubetc(x, y, z):
    zm, ym = _cube_axes(x, y, z)
    return select(zm, -y, select(ym, select(y < 0.0, -z, z), -y))


def _cubema(x, y, z):
    zm, ym = _cube_axes(x, y, z)
    return select(zm, z, select(ym, y, x)) * 2.0


valu("v_cubeid_f32", ("f32", "f32", "f32"), "f32", _cubeid)
valu("v_cubesc_f32", ("f32", "f32", "f32"), "f32", _cubesc)
valu("v_cubetc_f32", ("f32", "f32", "f32"), "f32", _cubetc)
valu("v_cubema_f32", ("f32", "f32", "f32"), "f32", _cubema)


# ---- gfx942 8-bit floats: FNUZ E4M3 "fp8" (bias 8) and E5M2 "bf8" (bias 16) ------------------------------------------
# No infinities and no negative zero: code 0x80 is the only NaN.  (mantissa bits, exponent bias)
FP8 = {"fp8": (3, 8), "bf8": (2, 16)}


def fp8_to_f32(code: Node, mant: int, bias: int) -> Node:
    """An 8-bit FNUZ code (U32 0..255) → its f32 value's bits (U32); 0x80 → the quiet NaN 0x7FC00000.  The 7-bit
    magnitude shifted into an f32's exponent/mantissa fields is the value scaled by 2^(bias - 127) (denormal codes
    become f32 denormals), so one exact multiply by 2^(127 - bias) gives the value."""
    mag = (code & 0x7F) << (23 - mant)
    v = (bitcast(mag, F32) * fbits((254 - bias) << 23, F32)).bits()
    v = v | ((code & 0x80) << 24)
    return select(code.eq(0x80), const(0x7FC00000, U32), v)


def f32_to_fp8(x: Node, mant: int, bias: int, saturate: bool) -> Node:
    """f32 → 8-bit FNUZ code (U32): rounded to nearest even; beyond the largest finite value (infinities
    included) the largest value when ``saturate`` (VOP3 CLAMP), else the NaN 0x80; NaN → 0x80; results that round
    to zero lose their sign (there is no -0)."""
    u = x.bits() & 0x7FFFFFFF
    sh = 23 - mant
    # normal results: round the f32 bits to ``mant`` mantissa bits (a carry moves into the exponent), then rebias
    normal = ((u + ((1 << (sh - 1)) - 1) + ((u >> sh) & 1)) >> sh) - ((127 - bias) << mant)
    # below the smallest normal 2^(1 - bias): the code is the value in units of the smallest denormal
    small = fptoint(rint(fabs(x) * fbits((127 + bias - 1 + mant) << 23, F32)), U32)
    code = select(u < ((128 - bias) << 23), small, normal)
    over = code > 0x7F
    if saturate:
        code = select(over, const(0x7F, U32), code)
    code = select(signbit(x) & code.ne(0), code | 0x80, code)
    nan = isnan(x) if saturate else isnan(x) | over
    return select(nan, const(0x80, U32), code)


def _fp8_byte_sel(inst) -> int:
    """Which byte of S0 a conversion reads: the SDWA source select or VOP3 OP_SEL[1:0]."""
    if inst.sdwa is not None:
        return {0: 0, 1: 1, 2: 2, 3: 3, 4: 0, 5: 2, 6: 0}.get(inst.sdwa["src0_sel"], 0)
    if inst.encoding == "VOP3":
        return inst.fields.get("opsel", 0) & 3
    return 0


def _cvt_from_fp8(kind: str, packed: bool):
    """v_cvt_f32_{fp8,bf8} (one byte) and v_cvt_pk_f32_{fp8,bf8} (two bytes of the word OP_SEL[0] or SDWA
    WORD_1 selects, into D and D+1).  S0 is read raw; the results are written under EXEC."""
    mant, bias = FP8[kind]

    def build(b: Build) -> None:
        inst, f = b.inst, b.inst.fields
        if packed:
            sel = 2 if (inst.sdwa is not None and inst.sdwa["src0_sel"] == 5) or \
                (inst.encoding == "VOP3" and f.get("opsel", 0) & 1) else 0
        else:
            sel = _fp8_byte_sel(inst)
        v = b.vector(f["src0"])
        for k in range(2 if packed else 1):
            b.write_vgpr(b.dst() + k, fp8_to_f32((v >> (8 * (sel + k))) & 0xFF, mant, bias))
    return build


def _cvt_pk_to_fp8(kind: str):
    """v_cvt_pk_{fp8,bf8}_f32: D.word[OP_SEL[3]] = {8-bit(S1), 8-bit(S0)}, the other word kept; CLAMP saturates."""
    mant, bias = FP8[kind]

    def build(b: Build) -> None:
        f = b.inst.fields
        a, c = b.srcs(("f32", "f32"))
        sat = bool(f.get("clamp", 0))
        word = f32_to_fp8(a, mant, bias, sat) | (f32_to_fp8(c, mant, bias, sat) << 8)
        old = b.vgpr(b.dst())
        val = (old & 0xFFFF) | (word << 16) if f.get("opsel", 0) >> 3 & 1 else (old & 0xFFFF0000) | word
        b.write_vgpr(b.dst(), val)
    return build


for _k in FP8:
    describe(f"v_cvt_f32_{_k}")(_cvt_from_fp8(_k, False))
    describe(f"v_cvt_pk_f32_{_k}")(_cvt_from_fp8(_k, True))
    describe(f"v_cvt_pk_{_k}_f32")(_cvt_pk_to_fp8(_k))


@describe("v_cvt_pkaccum_u8_f32")
def _pkaccum(b: Build) -> None:
    """Byte S1[1:0] of D = S0 converted to u8 (rounded, clamped to 0..255), the rest of D kept; no denormal
    flushing, no output modifiers."""
    x, s = b.srcs(("f32", "u32"))
    b.write_vgpr(b.dst(), _put_byte(b.vgpr(b.dst()), _u8(x), s))


__all__ = ["fp8_to_f32", "f32_to_fp8", "FP8"]
