"""Per-instruction tests of GFX9's vector and scalar ALU beyond the basics (test_isa_ops.py): 16-bit, packed,
SDWA, dot, mixed-precision, SAD, conversion, clamp and IEEE-mode, denormal-mode and scalar bit instructions,
register indexing and relative moves: kernels assembled with llvm-mc-19 and linked with ld.lld-19 run on the
emulated GPU with random operands plus NaN, ±Inf, denormals, -0.0, extremes and integer overflow, checked
against the scalar reference model in isa_ref.py (written from the ISA documents, sharing nothing with the
emulator), with denormals allowed and flushed (FLOAT_DENORM_MODE from the kernel descriptor)."""
import math

import numpy as np
import pytest

import isa_operands as ops
from asmkit import engine, hi, lo, run  # noqa: F401 (engine: a fixture)
from isa_operands import (TARGETS, U16, U32, U64, check, f, f16_operand, f32_operand, flushed, h, i32_operand,
                          with_junk)
from isa_ref import (exact, fma, fmax_ieee, fmin_ieee, fp8_value, is_nan, round_bits, sext, to_float)

RNG = None


@pytest.fixture(autouse=True)
def _seed(request):
    """Operands drawn per test from a seed of its own id: reproducible under any test order or worker."""
    global RNG
    RNG = ops.seed(request.node.nodeid)


F16_BINARY = {
    "v_add_f16": lambda a, b: exact(lambda x, y: x + y, a, b),
    "v_sub_f16": lambda a, b: exact(lambda x, y: x - y, a, b),
    "v_subrev_f16": lambda a, b: exact(lambda x, y: y - x, a, b),
    "v_mul_f16": lambda a, b: exact(lambda x, y: x * y, a, b),
    "v_max_f16": fmax_ieee,
    "v_min_f16": fmin_ieee,
}


def _ieee_sum(fn, a, b):
    """IEEE specials for + - * of floats (0 * Inf and Inf - Inf are NaN)."""
    try:
        return fn(a, b)
    except Exception:
        return math.nan


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name", sorted(F16_BINARY))
@pytest.mark.parametrize("flush", [False, True])
def test_f16_binary_vop2_and_sdwa(target, name, flush):
    a, b = f16_operand(), f16_operand()
    pre = RNG.integers(0, 2 ** 32, 64, dtype=np.uint64)
    body = f"""
  {name} v8, v2, v4
  v_mov_b32 v10, v6
  v_lshlrev_b32 v12, 16, v2
  {name}_sdwa v10, v12, v4 dst_sel:WORD_1 dst_unused:UNUSED_PRESERVE src0_sel:WORD_1 src1_sel:WORD_0
"""
    r0, r1 = run(body, with_junk(a), with_junk(b), pre, target=target, denorm=(3, 0 if flush else 3))
    ref = []
    for x, y in zip(a, b):
        xf, yf = flushed(h(x), 16, flush), flushed(h(y), 16, flush)
        v = F16_BINARY[name](xf, yf)
        ref.append(round_bits(v, 16, flush) if not (isinstance(v, float) and math.isnan(v)) else 0x7E00)
    check(lo(r0) & U32(0xFFFF), ref, 16)
    assert not (lo(r0) >> U32(16)).any(), "GFX9 VOP2 f16 ops zero the high half"
    check(lo(r1) >> U32(16), ref, 16)
    assert np.array_equal(lo(r1) & U32(0xFFFF), lo(pre) & U32(0xFFFF)), "UNUSED_PRESERVE kept the low half"


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("flush", [False, True])
def test_f16_fma_mad_op_sel(target, flush):
    a, b, c = f16_operand(), f16_operand(), f16_operand()
    pre = RNG.integers(0, 2 ** 32, 64, dtype=np.uint64)
    # op_sel:[0,1,0,1]: S1 from the high half of v4 (set to b there), result into the high half of v8
    body = """
  v_mov_b32 v8, v3
  v_lshlrev_b32 v12, 16, v4
  v_fma_f16 v8, v2, v12, v6 op_sel:[0,1,0,1]
  v_mov_b32 v10, v3
  v_mad_f16 v10, v2, v4, v6
"""
    r0, r1 = run(body, with_junk(a) & U64(0xFFFFFFFF) | (pre << U64(32)), with_junk(b), with_junk(c), target=target,
                 denorm=(3, 0 if flush else 3))
    fma, mad = [], []
    for x, y, z in zip(a, b, c):
        xf, yf, zf = (flushed(h(v), 16, flush) for v in (x, y, z))
        v = exact(lambda p, q, r: p * q + r, xf, yf, zf)
        fma.append(round_bits(v, 16, flush) if not (isinstance(v, float) and math.isnan(v)) else 0x7E00)
        prod = exact(lambda p, q: p * q, xf, yf)
        pb = round_bits(prod, 16, flush) if not (isinstance(prod, float) and math.isnan(prod)) else 0x7E00
        v2 = exact(lambda p, r: p + r, flushed(h(pb), 16, flush), zf)
        mad.append(round_bits(v2, 16, flush) if not (isinstance(v2, float) and math.isnan(v2)) else 0x7E00)
    check(lo(r0) >> U32(16), fma, 16)
    assert np.array_equal(lo(r0) & U32(0xFFFF), lo(pre) & U32(0xFFFF)), "op_sel[3]: the low half is kept"
    check(lo(r1) & U32(0xFFFF), mad, 16)
    assert np.array_equal(lo(r1) >> U32(16), lo(pre) >> U32(16)), "GFX9 v_mad_f16 keeps the high half"


F16_UNARY = {
    "v_sqrt_f16": lambda x: math.sqrt(x) if x >= 0 or math.isnan(x) else math.nan,
    "v_rcp_f16": lambda x: (math.copysign(math.inf, x) if x == 0 else 1 / x),
    "v_floor_f16": lambda x: float(math.floor(x)) if math.isfinite(x) else x,
    "v_ceil_f16": lambda x: float(math.ceil(x)) if math.isfinite(x) else x,
    "v_trunc_f16": lambda x: float(math.trunc(x)) if math.isfinite(x) else x,
    "v_rndne_f16": lambda x: float(round(x)) if math.isfinite(x) else x,
}


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name", sorted(F16_UNARY))
def test_f16_unary(target, name):
    a = f16_operand()
    r0, _ = run(f"{name} v8, v2", with_junk(a), target=target)
    ref = []
    for x in a:
        xf = h(x)
        v = F16_UNARY[name](xf)
        if math.isfinite(v) and v == 0 and math.isfinite(xf):
            v = math.copysign(0.0, xf if name != "v_rcp_f16" else 1.0)
        if name in ("v_floor_f16", "v_ceil_f16", "v_trunc_f16", "v_rndne_f16") and v == 0:
            v = math.copysign(0.0, xf)
        ref.append(round_bits(v, 16) if not math.isnan(v) else 0x7E00)
    check(lo(r0), ref, 16)


@pytest.mark.parametrize("target", TARGETS)
def test_16bit_integer_ops_and_conversions(target):
    a, b = i32_operand(), i32_operand()
    fa = f16_operand()
    body = """
  v_add_u16 v8, v2, v4
  v_mul_lo_u16 v9, v2, v4
  v_ashrrev_i16 v10, v4, v2
  v_max_i16 v11, v2, v4
"""
    r0, r1 = run(body, a, b, target=target)
    ai, bi = [int(x) & 0xFFFF for x in a], [int(x) & 0xFFFF for x in b]
    assert [int(x) for x in lo(r0)] == [(x + y) & 0xFFFF for x, y in zip(ai, bi)]
    assert [int(x) for x in hi(r0)] == [(x * y) & 0xFFFF for x, y in zip(ai, bi)]
    assert [int(x) for x in lo(r1)] == [(sext(x, 16) >> (y & 15)) & 0xFFFF for x, y in zip(ai, bi)]
    assert [int(x) for x in hi(r1)] == [max(sext(x, 16), sext(y, 16)) & 0xFFFF for x, y in zip(ai, bi)]
    body = """
  v_cvt_i16_f16 v8, v2
  v_cvt_u16_f16 v9, v2
  v_cvt_f16_i16 v10, v4
  v_cvt_f16_u16 v11, v4
"""
    r0, r1 = run(body, with_junk(fa), b, target=target)

    def sat_trunc(x, lo_, hi_):
        return 0 if math.isnan(x) else int(max(lo_, min(hi_, math.trunc(x) if math.isfinite(x) else x)))
    assert [int(x) for x in lo(r0)] == [sat_trunc(h(x), -32768, 32767) & 0xFFFF for x in fa]
    assert [int(x) for x in hi(r0)] == [sat_trunc(h(x), 0, 65535) for x in fa]
    check(lo(r1), [round_bits(float(sext(y, 16)), 16) for y in bi], 16)
    check(hi(r1), [round_bits(float(y), 16) for y in bi], 16)


@pytest.mark.parametrize("target", TARGETS)
def test_packed_f16_and_i16(target):
    a, b, c = (with_junk(f16_operand()) & U64(0xFFFF)) | (f16_operand() << U64(16)), \
        (f16_operand() << U64(16)) | f16_operand(), (f16_operand() << U64(16)) | f16_operand()
    body = """
  v_pk_fma_f16 v8, v2, v4, v6
  v_pk_add_f16 v9, v2, v4 op_sel:[1,0] op_sel_hi:[0,1]
  v_pk_mul_f16 v10, v2, v4 neg_lo:[1,0] neg_hi:[0,1]
  v_pk_max_f16 v11, v2, v4
"""
    r0, r1 = run(body, a, b, c, target=target)

    def halves(x):
        return int(x) & 0xFFFF, (int(x) >> 16) & 0xFFFF

    def rb(v):
        return round_bits(v, 16) if not (isinstance(v, float) and math.isnan(v)) else 0x7E00
    fma, add, mul, mx = [], [], [], []
    for x, y, z in zip(a, b, c):
        (xl, xh), (yl, yh), (zl, zh) = halves(x), halves(y), halves(z)
        fma.append(rb(exact(lambda p, q, r: p * q + r, h(xl), h(yl), h(zl)))
                   | rb(exact(lambda p, q, r: p * q + r, h(xh), h(yh), h(zh))) << 16)
        add.append(rb(exact(lambda p, q: p + q, h(xh), h(yl))) | rb(exact(lambda p, q: p + q, h(xl), h(yh))) << 16)
        mul.append(rb(exact(lambda p, q: p * q, -h(xl), h(yl))) | rb(exact(lambda p, q: p * q, h(xh), -h(yh))) << 16)
        mx.append(rb(fmax_ieee(h(xl), h(yl))) | rb(fmax_ieee(h(xh), h(yh))) << 16)
    for got, want in ((lo(r0), fma), (hi(r0), add), (lo(r1), mul), (hi(r1), mx)):
        check(got & U32(0xFFFF), [w & 0xFFFF for w in want], 16)
        check(got >> U32(16), [w >> 16 for w in want], 16)
    ia, ib = i32_operand(), i32_operand()
    body = """
  v_pk_add_u16 v8, v2, v4
  v_pk_sub_i16 v9, v2, v4
  v_pk_lshlrev_b16 v10, v4, v2
  v_pk_mad_u16 v11, v2, v4, v2
"""
    r0, r1 = run(body, ia, ib, target=target)
    for got, fn in ((lo(r0), lambda x, y: x + y), (hi(r0), lambda x, y: x - y),
                    (lo(r1), lambda x, y: x << (y & 15)), (hi(r1), lambda x, y: x * y + x)):
        want = [(fn(int(x) & 0xFFFF, int(y) & 0xFFFF) & 0xFFFF) | (fn(int(x) >> 16 & 0xFFFF, int(y) >> 16 & 0xFFFF) & 0xFFFF) << 16
                for x, y in zip(ia, ib)]
        assert [int(g) for g in got] == want


@pytest.mark.parametrize("target", TARGETS)
def test_dot_products(target):
    a, b, c = i32_operand(), i32_operand(), i32_operand()
    fa, fb = (f16_operand() << U64(16)) | f16_operand(), (f16_operand() << U64(16)) | f16_operand()
    body = """
  v_dot4_i32_i8 v8, v2, v4, v6
  v_dot8_u32_u4 v9, v2, v4, v6
  v_dot2_i32_i16 v10, v2, v4, v6
  v_mov_b32 v11, v6
  v_dot4c_i32_i8 v11, v2, v4
"""
    r0, r1 = run(body, a, b, c, target=target)

    def dot(x, y, bits, signed, acc):
        t = acc
        for i in range(32 // bits):
            p, q = int(x) >> (bits * i) & ((1 << bits) - 1), int(y) >> (bits * i) & ((1 << bits) - 1)
            if signed:
                p, q = sext(p, bits), sext(q, bits)
            t += p * q
        return t & 0xFFFFFFFF
    want8 = [dot(x, y, 8, True, sext(int(z), 32)) for x, y, z in zip(a, b, c)]
    assert [int(x) for x in lo(r0)] == want8
    assert [int(x) for x in hi(r0)] == [dot(x, y, 4, False, int(z) & 0xFFFFFFFF) for x, y, z in zip(a, b, c)]
    assert [int(x) for x in lo(r1)] == [dot(x, y, 16, True, sext(int(z), 32)) for x, y, z in zip(a, b, c)]
    assert [int(x) for x in hi(r1)] == want8
    fc = f32_operand()
    r0, _ = run("v_dot2_f32_f16 v8, v2, v4, v6", fa, fb, fc, target=target)
    want = []
    for x, y, z in zip(fa, fb, fc):
        v = exact(lambda p0, q0, p1, q1, r: p0 * q0 + p1 * q1 + r, h(int(x)), h(int(y)), h(int(x) >> 16), h(int(y) >> 16), f(z))
        want.append(round_bits(v, 32) if not (isinstance(v, float) and math.isnan(v)) else 0x7FC00000)
    check(lo(r0), want, 32)


@pytest.mark.parametrize("target", TARGETS)
def test_fma_mix(target):
    a, b, c = f32_operand(), (f16_operand() << U64(16)) | f16_operand(), f32_operand()
    body = """
  v_fma_mix_f32 v8, v2, v4, v6 op_sel:[0,1,0] op_sel_hi:[0,1,0]
  v_mov_b32 v10, v7
  v_fma_mixlo_f16 v10, v2, v4, v6 op_sel_hi:[0,1,0]
"""
    pre = RNG.integers(0, 2 ** 32, 64, dtype=np.uint64)
    r0, r1 = run(body, a, b, c | (pre << U64(32)), target=target)
    w32, w16 = [], []
    for x, y, z in zip(a, b, c):
        v = exact(lambda p, q, r: p * q + r, f(x), h(int(y) >> 16), f(z))
        w32.append(round_bits(v, 32) if not (isinstance(v, float) and math.isnan(v)) else 0x7FC00000)
        v = exact(lambda p, q, r: p * q + r, f(x), h(int(y)), f(z))
        w16.append(round_bits(v, 16) if not (isinstance(v, float) and math.isnan(v)) else 0x7E00)
    check(lo(r0), w32, 32)
    check(lo(r1) & U32(0xFFFF), w16, 16)
    assert np.array_equal(lo(r1) >> U32(16), lo(pre) >> U32(16))


@pytest.mark.parametrize("target", TARGETS)
def test_sdwa_integer_selects(target):
    a, b = i32_operand(), i32_operand()
    body = """
  v_add_u32_sdwa v8, v2, v4 dst_sel:DWORD dst_unused:UNUSED_PAD src0_sel:BYTE_1 src1_sel:WORD_1
  v_mov_b32_sdwa v9, sext(v2) dst_sel:WORD_0 dst_unused:UNUSED_SEXT src0_sel:BYTE_2
  v_and_b32_sdwa v10, v2, v4 dst_sel:BYTE_3 dst_unused:UNUSED_PAD src0_sel:BYTE_0 src1_sel:BYTE_0
  v_cvt_f32_ubyte2 v11, v2
"""
    r0, r1 = run(body, a, b, target=target)
    A, B = [int(x) for x in a], [int(x) for x in b]
    assert [int(x) for x in lo(r0)] == [((x >> 8 & 0xFF) + (y >> 16 & 0xFFFF)) & 0xFFFFFFFF for x, y in zip(A, B)]
    assert [int(x) for x in hi(r0)] == [sext(sext(x >> 16 & 0xFF, 8) & 0xFFFF, 16) & 0xFFFFFFFF for x in A]
    assert [int(x) for x in lo(r1)] == [((x & y) & 0xFF) << 24 for x, y in zip(A, B)]
    check(hi(r1), [round_bits(float(x >> 16 & 0xFF), 32) for x in A], 32)


@pytest.mark.parametrize("target", TARGETS)
def test_byte_sad_lerp_and_24bit(target):
    a, b, c = i32_operand(), i32_operand(), i32_operand() & U64(0xFFFF)
    body = """
  v_sad_u8 v8, v2, v4, v6
  v_msad_u8 v9, v2, v4, v6
  v_lerp_u8 v10, v2, v4, v6
  v_mul_hi_u32_u24 v11, v2, v4
"""
    r0, r1 = run(body, a, b, c, target=target)
    A, B, C = [int(x) for x in a], [int(x) for x in b], [int(x) for x in c]

    def bytes4(x):
        return [(x >> (8 * i)) & 0xFF for i in range(4)]
    assert [int(x) for x in lo(r0)] == [(sum(abs(p - q) for p, q in zip(bytes4(x), bytes4(y))) + z) & 0xFFFFFFFF
                                          for x, y, z in zip(A, B, C)]
    assert [int(x) for x in hi(r0)] == [(sum(abs(p - q) for p, q in zip(bytes4(x), bytes4(y)) if q) + z) & 0xFFFFFFFF
                                          for x, y, z in zip(A, B, C)]
    assert [int(x) for x in lo(r1)] == [sum((((p + q + (r & 1)) >> 1) & 0xFF) << (8 * i)
                                            for i, (p, q, r) in enumerate(zip(bytes4(x), bytes4(y), bytes4(z))))
                                        for x, y, z in zip(A, B, C)]
    assert [int(x) for x in hi(r1)] == [((x & 0xFFFFFF) * (y & 0xFFFFFF)) >> 32 for x, y in zip(A, B)]
    body = """
  v_mad_i32_i24 v8, v2, v4, v6
  v_bfm_b32 v9, v2, v4
  v_cvt_pk_i16_i32 v10, v2, v4
  v_mad_u32_u16 v11, v2, v4, v6 op_sel:[1,0,0,0]
"""
    r0, r1 = run(body, a, b, c, target=target)
    assert [int(x) for x in lo(r0)] == [(sext(x, 24) * sext(y, 24) + sext(z, 32)) & 0xFFFFFFFF for x, y, z in zip(A, B, C)]
    assert [int(x) for x in hi(r0)] == [(((1 << (x & 31)) - 1) << (y & 31)) & 0xFFFFFFFF for x, y in zip(A, B)]
    assert [int(x) for x in lo(r1)] == [(max(-32768, min(32767, sext(x, 32))) & 0xFFFF)
                                        | (max(-32768, min(32767, sext(y, 32))) & 0xFFFF) << 16 for x, y in zip(A, B)]
    assert [int(x) for x in hi(r1)] == [((x >> 16) * (y & 0xFFFF) + z) & 0xFFFFFFFF for x, y, z in zip(A, B, C)]


@pytest.mark.parametrize("target", TARGETS)
def test_f32_conversions_and_legacy(target):
    a, b = f32_operand(), f32_operand()
    body = """
  v_cvt_flr_i32_f32 v8, v2
  v_cvt_rpi_i32_f32 v9, v2
  v_mul_legacy_f32 v10, v2, v4
  v_cvt_pknorm_i16_f32 v11, v2, v4
"""
    r0, r1 = run(body, a, b, target=target)

    def sat(x, fn):
        if math.isnan(x):
            return 0
        if math.isinf(x):
            return 0x7FFFFFFF if x > 0 else 0x80000000
        return max(-2 ** 31, min(2 ** 31 - 1, fn(x))) & 0xFFFFFFFF
    A, B = [f(x) for x in a], [f(x) for x in b]
    assert [int(x) for x in lo(r0)] == [sat(x, math.floor) for x in A]
    assert [int(x) for x in hi(r0)] == [sat(x, lambda v: math.floor(v + 0.5)) for x in A]
    leg = []
    for x, y in zip(A, B):
        v = 0.0 if x == 0 or y == 0 else exact(lambda p, q: p * q, x, y)
        leg.append(round_bits(v, 32) if not (isinstance(v, float) and math.isnan(v)) else 0x7FC00000)
    check(lo(r1), leg, 32)

    def norm(x):
        if math.isnan(x):
            return 0
        return int(round(max(-1.0, min(1.0, x)) * 32767)) & 0xFFFF
    assert [int(x) for x in hi(r1)] == [norm(x) | norm(y) << 16 for x, y in zip(A, B)]


@pytest.mark.parametrize("target", TARGETS)
def test_trig_preop(target):
    a = np.concatenate([RNG.standard_normal(32) * 2.0 ** RNG.integers(-20, 1020, 32), np.full(32, 1.0)])
    b = RNG.integers(0, 24, 64).astype(np.uint64)
    r0, _ = run("v_trig_preop_f64 v[8:9], v[2:3], v4", a, b, target=target)
    # 2/pi to 1300 bits from Python integers (Machin), independently of the emulator's table
    g = 1400
    one = 1 << g

    def atan_inv(x):
        t, term, k, s = 0, one // x, 1, 1
        while term:
            t += s * (term // k)
            term //= x * x
            k += 2
            s = -s
        return t
    two_over_pi = (2 << (1201 + g)) // (4 * (4 * atan_inv(5) - atan_inv(239)))
    want = []
    for x, n in zip(a, b):
        e = (int(np.float64(x).view(np.uint64)) >> 52) & 0x7FF
        shift = int(n) * 53 + max(e - 1077, 0)
        k = 1148 - shift
        seg = ((two_over_pi >> k) if k >= 0 else (two_over_pi << -k)) & ((1 << 53) - 1)
        want.append(math.ldexp(float(seg), -53 - shift + (128 if e >= 1968 else 0)))
    assert np.array_equal(r0.view(np.float64), np.array(want))


@pytest.mark.parametrize("target", TARGETS)
def test_scalar_bit_ops(target):
    a, b = i32_operand() | (i32_operand() << U64(32)), i32_operand() | (i32_operand() << U64(32))
    body = """
  s_bfe_i32 s26, s20, s22
  s_bcnt0_i32_b64 s27, s[20:21]
  s_ff0_i32_b32 s28, s20
  s_flbit_i32 s29, s20
"""
    r0, r1 = run(body, a, b, scalar=True, target=target)
    A, B = [int(x) for x in a], [int(x) for x in b]

    def bfe(x, y):
        off, w = y & 31, (y >> 16) & 0x7F
        if w == 0:
            return 0
        v = (x >> off) & ((1 << min(w, 32)) - 1)
        return sext(v, min(w, 32)) & 0xFFFFFFFF if w < 32 else v

    def ff0(x):
        for i in range(32):
            if not x >> i & 1:
                return i
        return 0xFFFFFFFF

    def flbit_i(x):
        s = x >> 31 & 1
        for i in range(31, -1, -1):
            if (x >> i & 1) != s:
                return 31 - i
        return 0xFFFFFFFF
    assert [int(x) for x in lo(r0)] == [bfe(x & 0xFFFFFFFF, y & 0xFFFFFFFF) for x, y in zip(A, B)]
    assert [int(x) for x in hi(r0)] == [64 - bin(x).count("1") for x in A]
    assert [int(x) for x in lo(r1)] == [ff0(x & 0xFFFFFFFF) for x in A]
    assert [int(x) for x in hi(r1)] == [flbit_i(x & 0xFFFFFFFF) for x in A]
    body = """
  s_quadmask_b64 s[26:27], s[20:21]
  s_wqm_b64 s[28:29], s[20:21]
"""
    r0, r1 = run(body, a, b, scalar=True, target=target)
    assert [int(x) for x in r0] == [sum(1 << q for q in range(16) if x >> (4 * q) & 0xF) for x in A]
    assert [int(x) for x in r1] == [sum(0xF << (4 * q) for q in range(16) if x >> (4 * q) & 0xF) for x in A]
    body = """
  s_brev_b64 s[26:27], s[20:21]
  s_bitreplicate_b64_b32 s[28:29], s20
"""
    r0, r1 = run(body, a, b, scalar=True, target=target)
    assert [int(x) for x in r0] == [int(f"{x:064b}"[::-1], 2) for x in A]
    assert [int(x) for x in r1] == [sum(3 << (2 * i) for i in range(32) if x >> i & 1) for x in A]
    body = """
  s_mov_b64 s[26:27], s[22:23]
  s_bitset1_b64 s[26:27], s20
  s_bfe_u64 s[28:29], s[22:23], s20
"""
    r0, r1 = run(body, a, b, scalar=True, target=target)
    assert [int(x) for x in r0] == [y | 1 << (x & 63) for x, y in zip(A, B)]

    def bfe64(x, y):
        off, w = y & 63, (y >> 16) & 0x7F
        return (x >> off) & ((1 << min(w, 64)) - 1) if w else 0
    assert [int(x) for x in r1] == [bfe64(y, x & 0xFFFFFFFF) for x, y in zip(A, B)]


@pytest.mark.parametrize("target", TARGETS)
def test_vgpr_index_mode(target, engine):
    """s_set_gpr_idx_on: the VALU source/destination VGPRs between _on and _off are offset by M0[7:0] (on each
    engine: the native one moves them in its v_movrel handler)."""
    a, b, c = i32_operand(), i32_operand(), i32_operand()
    body = """
  s_mov_b32 s12, 2
  s_set_gpr_idx_on s12, gpr_idx(SRC0)
  v_mov_b32 v8, v2
  s_set_gpr_idx_off
  s_mov_b32 s13, 1
  s_set_gpr_idx_on s13, gpr_idx(DST)
  v_mov_b32 v9, v6
  s_set_gpr_idx_off
"""
    engine(target)
    r0, r1 = run(body, a, b, c, target=target)
    engine(target)
    assert np.array_equal(lo(r0), lo(b)), "v8 = v[2 + 2]"
    assert np.array_equal(lo(r1), lo(c)), "v[9 + 1] = v6"


@pytest.mark.parametrize("target", TARGETS)
def test_integer_clamp_saturates(target):
    """VOP3 CLAMP on integer add/sub: the exact result saturated to the destination type."""
    a, b = i32_operand(), i32_operand()
    body = """
  v_add_u32_e64 v8, v2, v4 clamp
  v_sub_u32_e64 v9, v2, v4 clamp
  v_add_i32 v10, v2, v4 clamp
  v_sub_u16_e64 v11, v2, v4 clamp
"""
    r0, r1 = run(body, a, b, target=target)
    A, B = [int(x) & 0xFFFFFFFF for x in a], [int(x) & 0xFFFFFFFF for x in b]
    assert [int(x) for x in lo(r0)] == [min(x + y, 2 ** 32 - 1) for x, y in zip(A, B)]
    assert [int(x) for x in hi(r0)] == [max(x - y, 0) for x, y in zip(A, B)]
    assert [int(x) for x in lo(r1)] == [max(-2 ** 31, min(2 ** 31 - 1, sext(x, 32) + sext(y, 32))) & 0xFFFFFFFF
                                        for x, y in zip(A, B)]
    assert [int(x) for x in hi(r1)] == [max((x & 0xFFFF) - (y & 0xFFFF), 0) for x, y in zip(A, B)]


def _fp8_encode_ref(x, mant, bias, saturate):
    """Nearest FNUZ code by exhaustive search (ties to the even code); NaN and overflow → 0x80."""
    if math.isnan(x):
        return 0x80
    vals = [(fp8_value(c, mant, bias), c) for c in range(0x80)]
    top, prev = vals[-1][0], vals[-2][0]
    a = abs(x)
    if a > top:
        if saturate or a < top + (top - prev) / 2:
            code = 0x7F
        else:
            return 0x80
    else:
        best = min(vals, key=lambda vc: (abs(vc[0] - a), vc[1] % 2))
        code = best[1]
    return code | 0x80 if x < 0 and code else code


def test_fp8_bf8_conversions_gfx942():
    clamp = ""                                         # LLVM 19 does not assemble CLAMP on these
    a, b = f32_operand(), f32_operand()
    a[:8] = np.array([0.0, -0.0, 240.0, 241.0, 255.9, 1e6, -3e-3, 1.0625], np.float32).view(U32)
    pre = RNG.integers(0, 2 ** 32, 64, dtype=np.uint64)
    codes = RNG.integers(0, 2 ** 32, 64, dtype=np.uint64)
    body = f"""
  v_mov_b32 v8, v6
  v_cvt_pk_fp8_f32 v8, v2, v4 op_sel:[0,0,1]{clamp}
  v_mov_b32 v9, v6
  v_cvt_pk_bf8_f32 v9, v2, v4{clamp}
  v_cvt_f32_fp8_sdwa v10, v7 src0_sel:BYTE_2
  v_cvt_f32_bf8_sdwa v11, v7 src0_sel:BYTE_3
"""
    r0, r1 = run(body, a, b, pre | (codes << U64(32)), target="gfx942")
    sat = bool(clamp)
    fp8 = [_fp8_encode_ref(f(x), 3, 8, sat) | _fp8_encode_ref(f(y), 3, 8, sat) << 8 for x, y in zip(a, b)]
    bf8 = [_fp8_encode_ref(f(x), 2, 16, sat) | _fp8_encode_ref(f(y), 2, 16, sat) << 8 for x, y in zip(a, b)]
    assert [int(x) for x in lo(r0)] == [(int(p) & 0xFFFF) | v << 16 for p, v in zip(pre, fp8)]
    assert [int(x) for x in hi(r0)] == [(int(p) & 0xFFFF0000) | v for p, v in zip(pre, bf8)]
    check(lo(r1), [round_bits(fp8_value(int(c) >> 16 & 0xFF, 3, 8), 32) for c in codes], 32)
    check(hi(r1), [round_bits(fp8_value(int(c) >> 24 & 0xFF, 2, 16), 32) for c in codes], 32)


@pytest.mark.parametrize("target", TARGETS)
def test_pkaccum_and_mqsad_u32(target):
    a, b = f32_operand(), i32_operand()
    a[:6] = np.array([-3.0, 0.5, 1.5, 254.6, 300.0, np.nan], np.float32).view(U32)
    pre = RNG.integers(0, 2 ** 32, 64, dtype=np.uint64)
    r0, _ = run("v_mov_b32 v8, v6\n  v_cvt_pkaccum_u8_f32 v8, v2, v4", a, b, pre, target=target)

    def u8(x):
        return 0 if math.isnan(x) else int(max(0, min(255, round(x) if math.isfinite(x) else x)))
    assert [int(x) for x in lo(r0)] == [(int(p) & ~(0xFF << 8 * (int(s) & 3)) & 0xFFFFFFFF) | u8(f(x)) << 8 * (int(s) & 3)
                                        for p, x, s in zip(pre, a, b)]
    s0 = RNG.integers(0, 2 ** 64, 64, dtype=np.uint64)
    ref = i32_operand()
    acc = RNG.integers(0, 2 ** 32, (64, 4), dtype=np.uint64)
    acc[:4, :] = 0xFFFFFFF0                            # saturation
    body = """
  v_mov_b32 v12, v6
  v_mov_b32 v13, v7
  v_mov_b32 v14, v7
  v_mov_b32 v15, v6
  v_mqsad_u32_u8 v[16:19], v[2:3], v4, v[12:15]
  v_mov_b32 v8, v16
  v_mov_b32 v9, v17
  v_mov_b32 v10, v18
  v_mov_b32 v11, v19
"""
    c = acc[:, 0] | (acc[:, 1] << U64(32))
    r0, r1 = run(body, s0, ref, c, target=target)
    accs = [acc[:, 0], acc[:, 1], acc[:, 1], acc[:, 0]]
    for i, got in enumerate((lo(r0), hi(r0), lo(r1), hi(r1))):
        want = []
        for x, y, z in zip(s0, ref, accs[i]):
            win = (int(x) >> (8 * i)) & 0xFFFFFFFF
            sad = sum(abs((win >> 8 * k & 0xFF) - (int(y) >> 8 * k & 0xFF)) for k in range(4) if int(y) >> 8 * k & 0xFF)
            want.append(min(sad + int(z), 0xFFFFFFFF))
        assert [int(g) for g in got] == want, i


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("ieee", [1, 0])
def test_ieee_mode_and_dx10_clamp(target, ieee):
    """MODE.IEEE: V_MAX/V_MIN return a signaling NaN operand quieted (otherwise the other operand);
    MODE.DX10_CLAMP: CLAMP turns NaN into 0 (otherwise NaN passes).  The template sets both from ``ieee``."""
    a, b = f32_operand(), f32_operand()
    a[:6] = [0x7FA00000, 0x7FC00001, 0x3F800000, 0xFFA00001, 0x7F800000, 0x7FA00000]     # sNaN, qNaN, 1, -sNaN, inf
    b[:6] = [0x3F800000, 0x40000000, 0x7FA00000, 0x7FA00000, 0x7FA00000, 0x7FC00000]
    body = """
  v_max_f32 v8, v2, v4
  v_min_f32 v9, v2, v4
  v_add_f32_e64 v10, v2, v4 clamp
"""
    r0, r1 = run(body, a, b, target=target, ieee=ieee)

    def pick(x, y, fn):
        xf, yf = f(x), f(y)
        xs = math.isnan(xf) and not (int(x) >> 22) & 1
        ys = math.isnan(yf) and not (int(y) >> 22) & 1
        if ieee and (xs or ys):
            return (int(x) if xs else int(y)) | 0x00400000
        return round_bits(fn(xf, yf), 32) if not (math.isnan(xf) and math.isnan(yf)) else 0x7FC00000
    # bit-exact where one operand is a signaling NaN: its quieted self (IEEE) or the other operand
    for lane in (0, 2):
        assert int(lo(r0)[lane]) == (0x7FE00000 if ieee else 0x3F800000)
        assert int(hi(r0)[lane]) == (0x7FE00000 if ieee else 0x3F800000)
    check(lo(r0), [pick(x, y, fmax_ieee) for x, y in zip(a, b)], 32)
    check(hi(r0), [pick(x, y, fmin_ieee) for x, y in zip(a, b)], 32)
    want = []
    for x, y in zip(a, b):
        s = exact(lambda p, q: p + q, f(x), f(y))
        if isinstance(s, float) and math.isnan(s):
            want.append(0 if ieee else 0x7FC00000)
        else:
            want.append(round_bits(min(max(s, 0), 1) if not isinstance(s, float) or not math.isinf(s) else
                                   (1.0 if s > 0 else 0.0), 32))
    check(lo(r1), want, 32)
    if ieee:
        assert [int(x) for x in lo(r1)[:2]] == [0, 0]


def f64_operand():
    v = RNG.standard_normal(64) * 2.0 ** RNG.integers(-1000, 1000, 64)
    bits = v.view(np.uint64).copy()
    bits[RNG.integers(0, 64, 6)] = RNG.integers(1, 2 ** 52, 6, dtype=np.uint64)       # denormals
    specials = [0, 1 << 63, 0x7FF0000000000000, 0xFFF0000000000000, 0x7FF8000000000000, 1, (1 << 63) | 1,
                0x000FFFFFFFFFFFFF, 0x0010000000000000, 0x7FEFFFFFFFFFFFFF, 0x3FF0000000000000]
    bits[RNG.permutation(64)[:len(specials)]] = specials
    return bits


FLOAT_BINARY = {
    "add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
}


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("width", [32, 64])
@pytest.mark.parametrize("flush", [False, True])
def test_f32_f64_arithmetic_specials_and_denormal_modes(target, width, flush):
    """add/sub/mul/fma/max/min on NaN, ±Inf, ±0, denormals, extremes; FLOAT_DENORM_MODE 3 or 0 for the width."""
    if width == 32:
        a, b, c = f32_operand(), f32_operand(), f32_operand()
        body = """
  v_add_f32 v8, v2, v4
  v_sub_f32 v9, v2, v4
  v_mul_f32 v10, v2, v4
  v_fma_f32 v11, v2, v4, v6
"""
        denorm = (0 if flush else 3, 3)
        fv, outs = f, lambda r0, r1: [lo(r0), hi(r0), lo(r1), hi(r1)]
    else:
        a, b, c = f64_operand(), f64_operand(), f64_operand()
        body = """
  v_add_f64 v[8:9], v[2:3], v[4:5]
  v_fma_f64 v[10:11], v[2:3], v[4:5], v[6:7]
"""
        denorm = (3, 0 if flush else 3)
        fv, outs = (lambda x: to_float(int(x), 64)), (lambda r0, r1: [r0, r1])
    r0, r1 = run(body, a, b, c, target=target, denorm=denorm)
    ops = ([FLOAT_BINARY["add"], FLOAT_BINARY["sub"], FLOAT_BINARY["mul"], "fma"] if width == 32
           else [FLOAT_BINARY["add"], "fma"])
    for got, fn in zip(outs(r0, r1), ops):
        want = []
        for x, y, z in zip(a, b, c):
            xs = [flushed(fv(v), width, flush) for v in (x, y, z)]
            v = fma(*xs) if fn == "fma" else exact(fn, xs[0], xs[1])
            nan = isinstance(v, float) and math.isnan(v)
            want.append({32: 0x7FC00000, 64: 0x7FF8000000000000}[width] if nan else round_bits(v, width, flush))
        check(got, want, width)


@pytest.mark.parametrize("target", TARGETS)
def test_integer_overflow_and_saturating_conversions(target):
    a, b = i32_operand(), i32_operand()
    fa = f32_operand()
    body = """
  v_mul_lo_u32 v8, v2, v4
  v_mul_hi_i32 v9, v2, v4
  v_cvt_i32_f32 v10, v6
  v_cvt_u32_f32 v11, v6
"""
    r0, r1 = run(body, a, b, fa, target=target)
    A, B = [int(x) for x in a], [int(x) for x in b]
    assert [int(x) for x in lo(r0)] == [(x * y) & 0xFFFFFFFF for x, y in zip(A, B)]
    assert [int(x) for x in hi(r0)] == [((sext(x, 32) * sext(y, 32)) >> 32) & 0xFFFFFFFF for x, y in zip(A, B)]

    def cvt(x, lo_, hi_):
        v = f(x)
        if math.isnan(v):
            return 0
        if math.isinf(v):
            return (hi_ if v > 0 else lo_) & 0xFFFFFFFF
        return max(lo_, min(hi_, math.trunc(v))) & 0xFFFFFFFF
    assert [int(x) for x in lo(r1)] == [cvt(x, -2 ** 31, 2 ** 31 - 1) for x in fa]
    assert [int(x) for x in hi(r1)] == [cvt(x, 0, 2 ** 32 - 1) for x in fa]


# ---- the rest of the newly executable instructions: each against its ISA description --------------------------------
@pytest.mark.parametrize("target", TARGETS)
def test_scalar_relative_moves_and_call(target):
    a, b = i32_operand() | (i32_operand() << U64(32)), i32_operand() | (i32_operand() << U64(32))
    body = """
  s_mov_b32 m0, 2
  s_movrels_b32 s26, s20
  s_mov_b32 m0, 6
  s_movreld_b32 s22, s20
  s_mov_b32 s27, s28
  s_mov_b32 s29, 7
  s_getpc_b64 s[36:37]
  s_call_b64 s[38:39], 1
  s_mov_b32 s29, 1
  s_sub_u32 s28, s38, s36
"""
    r0, r1 = run(body, a, b, scalar=True, target=target)
    assert np.array_equal(lo(r0), lo(b)), "s_movrels: s26 = s[20 + 2]"
    assert np.array_equal(hi(r0), lo(a)), "s_movreld: s[22 + 6] = s20"
    assert (lo(r1) == 4).all() and (hi(r1) == 7).all(), "s_call_b64 returns to the next instruction and skips one"


@pytest.mark.parametrize("target", TARGETS)
def test_f16_misc(target):
    a, b = f16_operand(), i32_operand()
    body = """
  v_frexp_exp_i16_f16 v8, v2
  v_frexp_mant_f16 v9, v2
  v_ldexp_f16 v10, v2, v4
  v_fract_f16 v11, v2
"""
    b = (b % U64(61)).astype(np.int64) - 30
    r0, r1 = run(body, with_junk(a), b.astype(np.uint64), target=target)
    for i, x in enumerate(a):
        v = h(x)
        if math.isfinite(v) and v != 0:
            m_, e = math.frexp(v)
            assert int(lo(r0)[i]) == e & 0xFFFF and int(hi(r0)[i]) == round_bits(m_, 16), hex(int(x))
        ld = math.ldexp(v, int(b[i])) if math.isfinite(v) else v
        check([int(lo(r1)[i])], [round_bits(ld, 16) if not math.isnan(ld) else 0x7E00], 16)
        if math.isfinite(v):
            fr = v - math.floor(v)
            want = round_bits(min(fr, to_float(0x3BFF, 16)), 16) if fr != 0 else round_bits(math.copysign(0.0, v), 16)
            assert int(hi(r1)[i]) in (want, want & 0x7FFF), (hex(int(x)), hex(int(hi(r1)[i])), hex(want))


@pytest.mark.parametrize("target", TARGETS)
def test_cube_and_packing_conversions(target):
    x, y, z = (RNG.standard_normal(64).astype(np.float32) for _ in range(3))
    body = """
  v_cubeid_f32 v8, v2, v4, v6
  v_cubesc_f32 v9, v2, v4, v6
  v_cubetc_f32 v10, v2, v4, v6
  v_cubema_f32 v11, v2, v4, v6
"""
    r0, r1 = run(body, x, y, z, target=target)
    for i in range(64):
        X, Y, Z = float(x[i]), float(y[i]), float(z[i])
        if abs(Z) >= abs(X) and abs(Z) >= abs(Y):
            fid, sc, tc, ma = (5 if Z < 0 else 4), (-X if Z < 0 else X), -Y, 2 * Z
        elif abs(Y) >= abs(X):
            fid, sc, tc, ma = (3 if Y < 0 else 2), X, (-Z if Y < 0 else Z), 2 * Y
        else:
            fid, sc, tc, ma = (1 if X < 0 else 0), (Z if X < 0 else -Z), -Y, 2 * X
        got = [float(v) for v in (lo(r0)[i:i + 1].view(np.float32)[0], hi(r0)[i:i + 1].view(np.float32)[0],
                                  lo(r1)[i:i + 1].view(np.float32)[0], hi(r1)[i:i + 1].view(np.float32)[0])]
        assert got == [float(np.float32(v)) for v in (fid, sc, tc, ma)], i
    a, b = i32_operand(), i32_operand()
    fa = f32_operand()
    body = """
  v_sat_pk_u8_i16 v8, v2
  v_cvt_pk_u8_f32 v9, v6, 2, v4
  v_qsad_pk_u16_u8 v[10:11], v[2:3], v4, v[6:7]
"""
    c = RNG.integers(0, 2 ** 64, 64, dtype=np.uint64)
    c = (c & U64(0xFFFFFFFF00000000)) | fa
    r0, r1 = run(body, a | (i32_operand() << U64(32)), b, c, target=target)
    A, B = [int(x) for x in a], [int(x) for x in b]

    def sat8(v):
        return max(0, min(255, sext(v, 16)))
    assert [int(x) for x in lo(r0)] == [sat8(x & 0xFFFF) | sat8(x >> 16 & 0xFFFF) << 8 for x in A]

    def u8(v):
        return 0 if math.isnan(v) else int(max(0, min(255, round(v) if math.isfinite(v) else v)))
    assert [int(x) for x in hi(r0)] == [(y & ~0xFF0000 & 0xFFFFFFFF) | u8(f(fv)) << 16 for y, fv in zip(B, fa)]


@pytest.mark.parametrize("target", TARGETS)
def test_vgpr_index_mode_differs_per_wave(target, engine):
    """64 one-wave workgroups, M0[7:0] = workgroup id % 4: each wave reads its own VGPR of v10..v13."""
    a = i32_operand()
    body = """
  s_and_b32 s13, s2, 3
  v_mov_b32 v10, 100
  v_mov_b32 v11, 101
  v_mov_b32 v12, 102
  v_mov_b32 v13, 103
  s_set_gpr_idx_on s13, gpr_idx(SRC0)
  v_mov_b32 v14, v10
  s_set_gpr_idx_off
  v_readfirstlane_b32 s26, v14
"""
    engine(target)
    r0, _ = run(body, a, scalar=True, target=target)
    engine(target)
    assert [int(x) for x in lo(r0)] == [100 + g % 4 for g in range(64)]


@pytest.mark.parametrize("target", TARGETS)
def test_f16_accumulate_and_packing_ops(target):
    a = (f16_operand() << U64(16)) | f16_operand()
    b = (f16_operand() << U64(16)) | f16_operand()
    c = (f16_operand() << U64(16)) | f16_operand()
    body = """
  v_mov_b32 v8, v6
  v_pk_fmac_f16 v8, v2, v4
  v_madak_f16 v9, v2, v4, 0x3c00
  v_mov_b32 v10, v6
  v_dot2c_f32_f16 v10, v2, v4
  v_pack_b32_f16 v11, v2, v4 op_sel:[1,0,0]
"""
    c32 = f32_operand()
    r0, r1 = run(body, a, b, (c & U64(0xFFFFFFFF)), target=target)
    r_dot, _ = run("v_mov_b32 v8, v6\n  v_dot2c_f32_f16 v8, v2, v4", a, b, c32, target=target)

    def rb16(v):
        return round_bits(v, 16) if not (isinstance(v, float) and math.isnan(v)) else 0x7E00
    fmac, madak, pack, dot = [], [], [], []
    for x, y, z, z32 in zip(a, b, c, c32):
        x, y, z = int(x), int(y), int(z)
        fmac.append(rb16(exact(lambda p, q, r: p * q + r, h(x), h(y), h(z)))
                    | rb16(exact(lambda p, q, r: p * q + r, h(x >> 16), h(y >> 16), h(z >> 16))) << 16)
        prod = exact(lambda p, q: p * q, h(x), h(y))
        madak.append(rb16(exact(lambda p, r: p + r, h(rb16(prod)), 1.0)))
        pack.append((x >> 16 & 0xFFFF) | (y & 0xFFFF) << 16)
        v = exact(lambda p0, q0, p1, q1, r: p0 * q0 + p1 * q1 + r, h(x), h(y), h(x >> 16), h(y >> 16), f(z32))
        dot.append(round_bits(v, 32) if not (isinstance(v, float) and math.isnan(v)) else 0x7FC00000)
    check(lo(r0) & U32(0xFFFF), [w & 0xFFFF for w in fmac], 16)
    check(lo(r0) >> U32(16), [w >> 16 for w in fmac], 16)
    check(hi(r0) & U32(0xFFFF), madak, 16)
    assert [int(x) for x in hi(r1)] == pack
    check(lo(r_dot), dot, 32)


@pytest.mark.parametrize("target", TARGETS)
def test_more_integer_conversions(target):
    a, b = i32_operand(), i32_operand()
    fa, fb = f16_operand(), f16_operand()
    body = """
  v_cvt_pk_u16_u32 v8, v2, v4
  v_mul_hi_i32_i24 v9, v2, v4
  v_cvt_off_f32_i4 v10, v2
  v_cvt_pknorm_i16_f16 v11, v6, v7
"""
    r0, r1 = run(body, a, b, fa | (fb << U64(32)), target=target)
    A, B = [int(x) for x in a], [int(x) for x in b]
    assert [int(x) for x in lo(r0)] == [min(x & 0xFFFFFFFF, 65535) | min(y & 0xFFFFFFFF, 65535) << 16 for x, y in zip(A, B)]
    assert [int(x) for x in hi(r0)] == [((sext(x, 24) * sext(y, 24)) >> 32) & 0xFFFFFFFF for x, y in zip(A, B)]
    check(lo(r1), [round_bits(sext(x & 0xF, 4) / 16.0, 32) for x in A], 32)

    def norm(bits):
        v = h(bits)
        return 0 if math.isnan(v) else int(round(max(-1.0, min(1.0, v)) * 32767)) & 0xFFFF
    assert [int(x) for x in hi(r1)] == [norm(x) | norm(y) << 16 for x, y in zip(fa, fb)]


@pytest.mark.parametrize("target", TARGETS)
def test_scalar_wrexec_and_cmpswap(target):
    a, b = i32_operand() | (i32_operand() << U64(32)), i32_operand() | (i32_operand() << U64(32))
    body = """
  s_mov_b64 s[30:31], exec
  s_andn1_wrexec_b64 s[26:27], s[20:21]
  s_mov_b64 s[28:29], exec
  s_mov_b64 exec, s[30:31]
"""
    r0, r1 = run(body, a, b, scalar=True, target=target)
    full = 2 ** 64 - 1
    assert [int(x) for x in r0] == [~int(x) & full for x in a]        # EXEC was all ones: ~S0 & EXEC
    assert np.array_equal(r0, r1)
