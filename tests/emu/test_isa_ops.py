"""Per-instruction checks: kernels assembled by llvm-mc-19, run on the emulated GPU, compared with numpy (or
exact rational) references written from the Vega/CDNA ISA documents."""
from fractions import Fraction

import numpy as np
import pytest

from asmkit import engine, hi, lo, run  # noqa: F401 (engine: a fixture)

RNG = np.random.default_rng(2024)
TARGETS = ["gfx90a", "gfx942"]
U32, U64, F32, F64 = np.uint32, np.uint64, np.float32, np.float64


def round_exact(fr: Fraction, ft):
    """Correctly rounded (nearest, ties to even) ``ft`` of an exact rational."""
    try:
        f = ft(float(fr))
    except OverflowError:
        return ft(np.inf) if fr > 0 else ft(-np.inf)
    best = None
    for cand in (np.nextafter(f, ft(-np.inf)), f, np.nextafter(f, ft(np.inf))):
        if not np.isfinite(cand):
            continue
        d = abs(Fraction(float(cand)) - fr)
        even = int(np.array([cand]).view(U32 if ft is F32 else U64)[0]) & 1 == 0
        if best is None or d < best[0] or (d == best[0] and even):
            best = (d, cand)
    return best[1]


def fma_ref(a, b, c, ft):
    out = []
    for x, y, z in zip(a, b, c):
        v = Fraction(float(x)) * Fraction(float(y)) + Fraction(float(z))
        out.append(round_exact(v, ft) if v != 0 else ft(x) * ft(y) + ft(z))
    return np.array(out, dtype=ft)


def f32_operands():
    a = (RNG.standard_normal(64) * 2.0 ** RNG.integers(-20, 20, 64)).astype(F32)
    b = (RNG.standard_normal(64) * 2.0 ** RNG.integers(-20, 20, 64)).astype(F32)
    c = (-(a.astype(F64) * b.astype(F64))).astype(F32)     # near-total cancellation: exposes double rounding
    c[::3] = RNG.standard_normal(22).astype(F32)
    return a, b, c


@pytest.mark.parametrize("target", TARGETS)
def test_fma_f32_exact(target):
    a, b, c = f32_operands()
    r0, r1 = run("v_fma_f32 v8, v2, v4, v6\n  v_fmac_f32 v6, v2, v4\n  v_mov_b32 v10, v6", a, b, c, target=target)
    ref = fma_ref(a, b, c, F32).view(U32)
    assert np.array_equal(lo(r0), ref)
    assert np.array_equal(lo(r1), ref)


@pytest.mark.parametrize("target", TARGETS)
def test_fma_f64_exact(target):
    a = RNG.standard_normal(64) * 2.0 ** RNG.integers(-300, 300, 64)
    b = RNG.standard_normal(64)
    c = -(a * b)
    c[::4] = RNG.standard_normal(16) * 1e-3
    # extreme exponents (splits overflow, error terms underflow): huge*tiny, denormal results, overflow
    a[:6] = [2.0 ** 1000 * 1.3, 2.0 ** -1000 * 1.7, 1.5e308, 3e-160, 1e-300, 2.0 ** 1020]
    b[:6] = [2.0 ** -1010 * 1.1, 2.0 ** -60 * 1.9, 1.1, 3e-160, 1e-20, 2.0 ** 5]
    c[:6] = [1e-300, 2.0 ** -1070, -1.6e308, -0.0, 1e-320, -(2.0 ** 1023)]
    r0, _ = run("v_fma_f64 v[8:9], v[2:3], v[4:5], v[6:7]", a, b, c, target=target)
    assert np.array_equal(r0.view(F64), fma_ref(a, b, c, F64))


@pytest.mark.parametrize("target", ["gfx90a"])
def test_fma_f64_around_the_fast_domain(target):
    """The native engine computes f64 FMA with the host's fused multiply-add inside a domain (|a|, |b| in
    [2^-400, 2^500], |c| <= 2^900, |result| >= 2^-800) and with Boldo-Melquiond outside it: operands on both
    sides of every edge, with near-total cancellation, against the exact rational result."""
    rng = np.random.default_rng(77)
    for _ in range(4):
        ea = rng.choice([-401, -400, -399, -2, 0, 3, 499, 500, 501], 64) + rng.integers(-2, 3, 64)
        eb = rng.choice([-401, -400, -399, -1, 0, 5, 499, 500, 501], 64) + rng.integers(-2, 3, 64)
        a = rng.uniform(1, 2, 64) * 2.0 ** ea * rng.choice([-1, 1], 64)
        b = rng.uniform(1, 2, 64) * 2.0 ** eb * rng.choice([-1, 1], 64)
        c = rng.uniform(1, 2, 64) * 2.0 ** rng.choice([-1074, -900, -799, -801, -10, 0, 899, 900, 901], 64)
        c[::3] = -(a[::3] * b[::3]) * (1 + rng.choice([0, 2.0 ** -52, -2.0 ** -53], 22))   # cancellation
        a[5::16], b[7::16] = [0.0, -0.0, 0.0, -0.0], [-0.0, 0.0, -0.0, 0.0]                 # zero products
        c[7::32] = [0.0, -0.0]
        r0, _ = run("v_fma_f64 v[8:9], v[2:3], v[4:5], v[6:7]", a, b, c, target=target)
        assert np.array_equal(r0.view(F64), fma_ref(a, b, c, F64))


@pytest.mark.parametrize("target", TARGETS)
def test_f64_division_sequence(target):
    """LLVM's correctly rounded f64 division (div_scale, rcp, fma refinement, div_fmas, div_fixup)."""
    a = RNG.standard_normal(64) * 2.0 ** RNG.integers(-1070, 1020, 64)   # every div_scale/fixup path
    b = RNG.standard_normal(64) * 2.0 ** RNG.integers(-1070, 1020, 64)
    a[:4], b[:4] = [1.0, 0.0, np.inf, 3.0], [0.0, 0.0, 2.0, np.inf]
    a[4], b[4] = 1e-310, 3.0                                  # denormal numerator
    a[5], b[5] = 1e300, 1e-10                                 # overflow to inf
    body = """
  v_div_scale_f64 v[12:13], s[10:11], v[4:5], v[4:5], v[2:3]
  v_rcp_f64 v[14:15], v[12:13]
  v_div_scale_f64 v[16:17], vcc, v[2:3], v[4:5], v[2:3]
  v_fma_f64 v[18:19], -v[12:13], v[14:15], 1.0
  v_fmac_f64 v[14:15], v[14:15], v[18:19]
  v_fma_f64 v[18:19], -v[12:13], v[14:15], 1.0
  v_fmac_f64 v[14:15], v[14:15], v[18:19]
  v_mul_f64 v[18:19], v[16:17], v[14:15]
  v_fma_f64 v[12:13], -v[12:13], v[18:19], v[16:17]
  v_div_fmas_f64 v[12:13], v[12:13], v[14:15], v[18:19]
  v_div_fixup_f64 v[8:9], v[12:13], v[4:5], v[2:3]
"""
    r0, _ = run(body, a, b, target=target)
    with np.errstate(all="ignore"):
        ref = a / b
    got = r0.view(F64)
    assert np.array_equal(np.isnan(got), np.isnan(ref))
    ok = ~np.isnan(ref)
    assert np.array_equal(got[ok], ref[ok])


@pytest.mark.parametrize("target", TARGETS)
def test_integer_multiply_and_carry_chains(target):
    a = RNG.integers(0, 2 ** 64, 64, dtype=U64)
    b = RNG.integers(0, 2 ** 64, 64, dtype=U64)
    c = RNG.integers(0, 2 ** 64, 64, dtype=U64)
    a[0], b[0] = 2 ** 64 - 1, 1                               # carry out of the high word
    body = """
  v_mad_u64_u32 v[8:9], s[10:11], v2, v4, v[6:7]
  v_add_co_u32 v10, vcc, v2, v4
  v_addc_co_u32 v11, vcc, v3, v5, vcc
"""
    r0, r1 = run(body, a, b, c, target=target)
    mad = (lo(a).astype(object) * lo(b).astype(object) + c.astype(object)) % 2 ** 64
    assert np.array_equal(r0, mad.astype(U64))
    assert np.array_equal(r1, a + b)
    body = """
  v_mul_hi_u32 v8, v2, v4
  v_mul_lo_u32 v9, v2, v4
  v_mul_hi_i32 v10, v2, v4
  v_sub_co_u32 v12, vcc, v2, v4
  v_subb_co_u32 v11, vcc, v3, v5, vcc
"""
    r0, r1 = run(body, a, b, c, target=target)
    ua, ub = lo(a).astype(object), lo(b).astype(object)
    sa, sb = lo(a).view(np.int32).astype(object), lo(b).view(np.int32).astype(object)
    assert np.array_equal(lo(r0), ((ua * ub) >> 32).astype(U32))
    assert np.array_equal(hi(r0), ((ua * ub) % 2 ** 32).astype(U32))
    assert np.array_equal(lo(r1), (((sa * sb) >> 32) % 2 ** 32).astype(U32))
    assert np.array_equal(hi(r1), hi(a - b))


@pytest.mark.parametrize("target", TARGETS)
def test_shifts_and_bitfields(target):
    a = RNG.integers(0, 2 ** 64, 64, dtype=U64)
    b = RNG.integers(0, 2 ** 64, 64, dtype=U64)
    body = """
  v_lshlrev_b64 v[8:9], v4, v[2:3]
  v_ashrrev_i64 v[10:11], v4, v[2:3]
"""
    r0, r1 = run(body, a, b, target=target)
    sh = (b & U64(63))
    assert np.array_equal(r0, a << sh)
    assert np.array_equal(r1, (a.view(np.int64) >> sh.astype(np.int64)).view(U64))
    body = """
  v_bfe_u32 v8, v2, v4, v5
  v_bfe_i32 v9, v2, v4, v5
  v_alignbit_b32 v10, v2, v3, v4
  v_bfi_b32 v11, v4, v2, v3
"""
    r0, r1 = run(body, a, b, target=target)
    x, off, width = lo(a).astype(np.int64), (lo(b) & 31).astype(np.int64), (hi(b) & 31).astype(np.int64)
    ubfe = np.where(width == 0, 0, (x >> off) & ((1 << width) - 1))
    sbfe = np.where(width == 0, 0, (ubfe.astype(U64) << (64 - width).astype(U64)).view(np.int64) >> (64 - width))
    assert np.array_equal(lo(r0), ubfe.astype(U32))
    assert np.array_equal(hi(r0), (sbfe & 0xFFFFFFFF).astype(U32))
    assert np.array_equal(lo(r1), lo(((lo(a).astype(U64) << U64(32)) | hi(a).astype(U64)) >> (b & U64(31))))
    m = lo(b)
    assert np.array_equal(hi(r1), (m & lo(a)) | (~m & hi(a)))


@pytest.mark.parametrize("target", TARGETS)
def test_conversions(target, engine):
    """On both engines (the compiled one converts whole chunks with compares and one in-range conversion)."""
    f = np.concatenate([RNG.standard_normal(48).astype(F32) * F32(3e9),
                        np.array([np.nan, -np.nan, np.inf, -np.inf, -0.5, 4294967295.0, 2.5, -2.5, 0.5, 1.5,
                                  -1e20, 1e20, 3e9, -3e9, 2147483647.0, -2147483648.0], F32)])
    u = RNG.integers(0, 2 ** 32, 64, dtype=U64)
    body = """
  v_cvt_u32_f32 v8, v2
  v_cvt_i32_f32 v9, v2
  v_cvt_f32_u32 v10, v4
  v_cvt_f32_i32 v11, v4
"""
    engine(target)
    r0, r1 = run(body, f.view(U32).astype(U64), u, target=target)
    engine(target)
    with np.errstate(all="ignore"):
        t = np.trunc(f.astype(F64))
        cu = np.where(np.isnan(f), 0, np.clip(t, 0, 2 ** 32 - 1)).astype(U64).astype(U32)
        ci = np.where(np.isnan(f), 0, np.clip(t, -2 ** 31, 2 ** 31 - 1)).astype(np.int64).astype(np.int32)
    assert np.array_equal(lo(r0), cu)
    assert np.array_equal(hi(r0), ci.view(U32))
    assert np.array_equal(lo(r1), lo(u).astype(F32).view(U32))
    assert np.array_equal(hi(r1), lo(u).view(np.int32).astype(F32).view(U32))
    d = RNG.standard_normal(64) * 2.0 ** RNG.integers(-2, 34, 64)
    d[:14] = [np.nan, np.inf, -np.inf, -0.75, -1.0, 4294967295.5, 4294967296.0, 2147483647.75, 2147483648.0,
              -2147483648.5, -2147483649.0, 2147483648.5, -0.0, 1e300]
    engine(target)
    r0, _ = run("v_cvt_u32_f64 v8, v[2:3]\n  v_cvt_i32_f64 v9, v[2:3]", d, target=target)
    engine(target)
    with np.errstate(all="ignore"):
        t = np.trunc(d)
        cu = np.where(np.isnan(d), 0, np.clip(t, 0, 2 ** 32 - 1)).astype(U64).astype(U32)
        ci = np.where(np.isnan(d), 0, np.clip(t, -2 ** 31, 2 ** 31 - 1)).astype(np.int64).astype(np.int32)
    assert np.array_equal(lo(r0), cu)
    assert np.array_equal(hi(r0), ci.view(U32))
    # f16 -> i16/u16, a lane operand and a uniform one (LLVM's f16 saturating conversions gave NaN -> -32768 on
    # AVX-512 hosts)
    with np.errstate(over="ignore"):
        h = np.concatenate([(RNG.standard_normal(48) * 3e4).astype(np.float16),
                            np.array([np.nan, -np.nan, np.inf, -np.inf, -0.5, 65504, -65504, 32767, -32768, 32768,
                                      -32769, 0.5, 1.5, -1.5, 65503, -0.0], np.float16)])
    engine(target)
    r0, r1 = run("v_cvt_i16_f16 v8, v2\n  v_cvt_u16_f16 v9, v2\n  v_cvt_i16_f16 v10, 0x7e00\n"
                 "  v_cvt_u16_f16 v11, 0xfc00", h.view(np.uint16).astype(U64), target=target)
    engine(target)
    with np.errstate(all="ignore"):
        t = np.trunc(h.astype(F64))
        cu = np.where(np.isnan(t), 0, np.clip(t, 0, 65535)).astype(U64)
        ci = np.where(np.isnan(t), 0, np.clip(t, -32768, 32767)).astype(np.int64) & 0xFFFF
    assert np.array_equal(lo(r0) & 0xFFFF, ci) and np.array_equal(hi(r0) & 0xFFFF, cu)
    assert not (lo(r1) & 0xFFFF).any() and not (hi(r1) & 0xFFFF).any()
    d = RNG.standard_normal(64) * 2.0 ** RNG.integers(-140, 130, 64)
    r0, r1 = run("v_cvt_f32_f64 v8, v[2:3]\n  v_cvt_f64_f32 v[10:11], v8", d, target=target)
    with np.errstate(all="ignore"):
        assert np.array_equal(lo(r0), d.astype(F32).view(U32))
        assert np.array_equal(r1.view(F64), d.astype(F32).astype(F64))


@pytest.mark.parametrize("target", TARGETS)
def test_f64_rounding_frexp_ldexp_class(target):
    d = RNG.standard_normal(64) * 2.0 ** RNG.integers(-60, 60, 64)
    d[:6] = [2.5, -2.5, 3.5, -0.0, 1e-310, np.inf]
    body = """
  v_rndne_f64 v[8:9], v[2:3]
  v_floor_f64 v[10:11], v[2:3]
"""
    r0, r1 = run(body, d, target=target)
    assert np.array_equal(r0.view(F64), np.rint(d))
    assert np.array_equal(r1.view(F64), np.floor(d))
    e = RNG.integers(-50, 50, 64).astype(np.int64) & 0xFFFFFFFF
    body = """
  v_frexp_mant_f64 v[8:9], v[2:3]
  v_frexp_exp_i32_f64 v10, v[2:3]
  v_ldexp_f64 v[12:13], v[2:3], v4
  v_mov_b32 v11, v12
"""
    r0, r1 = run(body, d, e.astype(U64), target=target)
    mant, ex = np.frexp(d)
    fin = np.isfinite(d)
    assert np.array_equal(r0.view(F64)[fin], mant[fin])
    assert np.array_equal(lo(r1)[fin].view(np.int32), ex[fin].astype(np.int32))
    body = "v_cmp_class_f64 vcc, v[2:3], v4\n  v_cndmask_b32 v8, 0, 1, vcc"
    vals = np.array([np.nan, -np.inf, -1.5, -1e-310, -0.0, 0.0, 1e-310, 2.0, np.inf] * 8)[:64]
    for bit, pred in enumerate([None, np.isnan, lambda x: x == -np.inf, lambda x: (x < 0) & (abs(x) >= 2.2e-308) & np.isfinite(x),
                                lambda x: (x < 0) & (x > -2.2e-308), lambda x: (x == 0) & np.signbit(x),
                                lambda x: (x == 0) & ~np.signbit(x), lambda x: (x > 0) & (x < 2.2e-308),
                                lambda x: (x >= 2.2e-308) & np.isfinite(x), lambda x: x == np.inf]):
        if pred is None:
            continue                                          # bit 0: signaling NaN (none here)
        r0, _ = run(body, vals, np.full(64, 1 << bit, U64), target=target)
        assert np.array_equal(lo(r0).astype(bool), pred(vals)), bit


@pytest.mark.parametrize("target", TARGETS)
def test_min_max_compare_with_nan(target):
    a = RNG.standard_normal(64).astype(F32)
    b = RNG.standard_normal(64).astype(F32)
    a[::5], b[::7] = np.nan, np.nan
    body = """
  v_min_f32 v8, v2, v4
  v_max_f32 v9, v2, v4
  v_cmp_lt_f32 vcc, v2, v4
  v_cndmask_b32 v10, 0, 1, vcc
  v_cmp_u_f32 s[12:13], v2, v4
  v_cndmask_b32 v11, 0, 1, s[12:13]
"""
    r0, r1 = run(body, a.view(U32).astype(U64), b.view(U32).astype(U64), target=target)
    got_min, got_max = lo(r0).view(F32), hi(r0).view(F32)
    assert np.array_equal(got_min, np.fmin(a, b), equal_nan=True)
    assert np.array_equal(got_max, np.fmax(a, b), equal_nan=True)
    assert np.array_equal(lo(r1), (a < b).astype(U32))
    assert np.array_equal(hi(r1), (np.isnan(a) | np.isnan(b)).astype(U32))


@pytest.mark.parametrize("target", TARGETS)
def test_cross_lane(target):
    a = RNG.integers(0, 2 ** 32, 64, dtype=U64)
    lane = np.arange(64)
    body = """
  v_mov_b32_dpp v8, v2 row_shr:1 row_mask:0xf bank_mask:0xf bound_ctrl:1
  v_mov_b32_dpp v9, v2 quad_perm:[3,2,1,0] row_mask:0xf bank_mask:0xf
  v_readlane_b32 s12, v2, 37
  v_mov_b32 v10, s12
  v_readfirstlane_b32 s13, v2
  v_writelane_b32 v10, s13, 5
  v_lshlrev_b32 v12, 2, v0
  v_xor_b32 v12, 12, v12
  ds_bpermute_b32 v11, v12, v2
  s_waitcnt lgkmcnt(0)
"""
    r0, r1 = run(body, a, target=target)
    x = lo(a)
    src = lane - 1
    shr = np.where(lane % 16 == 0, 0, x[np.clip(src, 0, 63)])
    assert np.array_equal(lo(r0), shr)
    assert np.array_equal(hi(r0), x[(lane & ~3) + 3 - (lane & 3)])
    rl = np.full(64, x[37])
    rl[5] = x[0]
    assert np.array_equal(lo(r1), rl)
    assert np.array_equal(hi(r1), x[lane ^ 3])
    body = """
  ds_swizzle_b32 v8, v2 offset:swizzle(BITMASK_PERM,"01pip")
  v_mbcnt_lo_u32_b32 v9, -1, 0
  v_mbcnt_hi_u32_b32 v9, -1, v9
  s_waitcnt lgkmcnt(0)
"""
    r0, _ = run(body, a, target=target, lanes=50)
    # BITMASK_PERM "01pip": bit4=0, bit3=1, bit2=preserve, bit1=invert, bit0=preserve (MSB first)
    and_m, or_m, xor_m = 0b00111, 0b01000, 0b00010
    sw_src = (lane & 0x20) | (((lane & 0x1F) & and_m | or_m) ^ xor_m)
    act = lane < 50
    exp = np.where(act[sw_src], x[sw_src], 0)
    assert np.array_equal(lo(r0)[:50], exp[:50].astype(U32))
    assert np.array_equal(hi(r0)[:50], lane[:50].astype(U32))
    assert (r0[50:] == U64(0xCDCDCDCDCDCDCDCD)).all()        # inactive lanes never store


@pytest.mark.parametrize("target", TARGETS)
def test_divergence_saveexec_and_loops(target):
    """Lanes loop a data-dependent number of times (s_cbranch_execnz), with if/else via saveexec."""
    n = RNG.integers(0, 20, 64, dtype=U64)
    body = """
  v_mov_b32 v8, 0
  v_mov_b32 v12, v2
  s_mov_b64 s[14:15], exec
.Lloop:
  v_cmp_ne_u32 vcc, 0, v12
  s_and_b64 exec, exec, vcc
  s_cbranch_execz .Ldone
  v_add_u32 v8, v8, v12
  v_subrev_u32 v12, 1, v12
  s_branch .Lloop
.Ldone:
  s_mov_b64 exec, s[14:15]
  v_and_b32 v13, 1, v2
  v_cmp_eq_u32 vcc, 1, v13
  s_and_saveexec_b64 s[16:17], vcc
  v_mov_b32 v10, 111
  s_xor_b64 exec, s[16:17], exec
  v_mov_b32 v10, 222
  s_or_b64 exec, exec, s[16:17]
"""
    r0, r1 = run(body, n, target=target)
    assert np.array_equal(lo(r0), (n * (n + U64(1)) // U64(2)).astype(U32))
    assert np.array_equal(lo(r1), np.where(n & U64(1), 111, 222).astype(U32))


@pytest.mark.parametrize("target", TARGETS)
def test_scalar_alu(target):
    a = RNG.integers(0, 2 ** 64, 64, dtype=U64)
    b = RNG.integers(0, 2 ** 64, 64, dtype=U64)
    b = (b & ~U64(0x7F0000)) | (RNG.integers(0, 32, 64, dtype=U64) << U64(16))
    a[0], b[0] = 2 ** 64 - 1, 1
    body = """
  s_add_u32 s26, s20, s22
  s_addc_u32 s27, s21, s23
  s_cselect_b32 s28, 1, 0
  s_bfe_u32 s29, s20, s22
"""
    r0, r1 = run(body, a, b, scalar=True, target=target)
    assert np.array_equal(r0, a + b)
    carry = (a.astype(object) + b.astype(object)) >> 64
    assert np.array_equal(lo(r1), carry.astype(U32))
    off, width = (lo(b) & 31).astype(np.int64), ((lo(b) >> 16) & 0x7F).astype(np.int64)
    x = lo(a).astype(np.int64)
    ref = np.where(width == 0, 0, (x >> off) & ((1 << np.minimum(width, 32)) - 1))
    assert np.array_equal(hi(r1), ref.astype(U32))
    body = """
  s_mul_i32 s26, s20, s22
  s_mul_hi_u32 s27, s20, s22
  s_ff1_i32_b64 s28, s[20:21]
  s_bcnt1_i32_b64 s29, s[22:23]
"""
    r0, r1 = run(body, a, b, scalar=True, target=target)
    p = lo(a).astype(object) * lo(b).astype(object)
    assert np.array_equal(lo(r0), (p % 2 ** 32).astype(U32))
    assert np.array_equal(hi(r0), (p >> 32).astype(U32))
    ff1 = np.array([(int(v) & -int(v)).bit_length() - 1 if v else -1 for v in a], np.int64)
    assert np.array_equal(lo(r1).view(np.int32), ff1.astype(np.int32))
    assert np.array_equal(hi(r1), np.array([bin(int(v)).count("1") for v in b], U32))


def test_lshl_add_u64_gfx942():
    a = RNG.integers(0, 2 ** 64, 64, dtype=U64)
    b = RNG.integers(0, 5, 64, dtype=U64)
    c = RNG.integers(0, 2 ** 64, 64, dtype=U64)
    r0, _ = run("v_lshl_add_u64 v[8:9], v[2:3], 3, v[6:7]", a, b, c, target="gfx942")
    assert np.array_equal(r0, (a << U64(3)) + c)


@pytest.mark.parametrize("target", TARGETS)
def test_f32_division_sequence(target):
    """LLVM's correctly rounded f32 division (denormals kept): div_scale f32 paths incl. tiny and huge
    quotients, compared with numpy's correctly rounded float32 division."""
    a = (RNG.standard_normal(64) * 2.0 ** RNG.integers(-150, 128, 64)).astype(F32)
    b = (RNG.standard_normal(64) * 2.0 ** RNG.integers(-150, 128, 64)).astype(F32)
    a[:8] = [1.0, 0.0, np.inf, 3.0, 1e-40, 3e38, 1e-30, -7.0]
    b[:8] = [0.0, 0.0, 2.0, np.inf, 3.0, 1e-30, 3e30, 1e-39]
    body = """
  v_div_scale_f32 v12, s[10:11], v4, v4, v2
  v_rcp_f32 v13, v12
  v_div_scale_f32 v14, vcc, v2, v4, v2
  v_fma_f32 v15, -v12, v13, 1.0
  v_fmac_f32 v13, v15, v13
  v_mul_f32 v15, v14, v13
  v_fma_f32 v16, -v12, v15, v14
  v_fmac_f32 v15, v16, v13
  v_fma_f32 v12, -v12, v15, v14
  v_div_fmas_f32 v12, v12, v13, v15
  v_div_fixup_f32 v8, v12, v4, v2
"""
    r0, _ = run(body, a, b, target=target)
    with np.errstate(all="ignore"):
        ref = a / b
    got = lo(r0).view(F32)
    assert np.array_equal(np.isnan(got), np.isnan(ref))
    ok = ~np.isnan(ref)
    assert np.array_equal(got[ok], ref[ok]), np.nonzero(got[ok] != ref[ok])


@pytest.mark.parametrize("target", TARGETS)
def test_denormal_modes(target):
    """MODE.FP_DENORM from the descriptor and s_setreg: f32 denormals kept (default) or flushed to signed
    zero on input and output."""
    a = np.array([1e-39, -1e-39, 2.0 ** -126, 3.0, 1e-20] * 13, F32)[:64]
    b = np.array([1.0, 1.0, 0.5, 2.0 ** -130, 1e-20] * 13, F32)[:64]
    body = "v_mul_f32 v8, v2, v4\n  v_mul_f32 v9, 1.0, v2"
    keep, _ = run(body, a, b, target=target)
    assert np.array_equal(lo(keep).view(F32), a * b)
    assert np.array_equal(hi(keep).view(F32), a)
    flush, _ = run("s_setreg_imm32_b32 hwreg(HW_REG_MODE, 4, 2), 0\n  " + body, a, b, target=target)
    ftz = lambda x: np.where(np.abs(x) < F32(2.0 ** -126), np.copysign(F32(0), x), x).astype(F32)
    assert np.array_equal(lo(flush).view(F32), ftz(ftz(a) * ftz(b)))
    assert np.array_equal(hi(flush).view(F32), ftz(a))
    assert np.signbit(hi(flush).view(F32)[1])


def _mfma16_lanes(A, B, kpl):
    """Pack A (16 x K) and B (K x 16) into lanes as the 16x16 single-block MFMA layout says."""
    lane = np.arange(64)
    a = np.stack([A[lane % 16, (lane // 16) * kpl + e] for e in range(kpl)], axis=1)     # (64, kpl)
    b = np.stack([B[(lane // 16) * kpl + e, lane % 16] for e in range(kpl)], axis=1)
    return a, b


def _mfma16_unpack(r0, r1):
    """D (16 x 16) from v[8:11]: register r of lane l holds D[4*(l//16) + r][l % 16]."""
    regs = [lo(r0), hi(r0), lo(r1), hi(r1)]
    lane = np.arange(64)
    D = np.zeros((16, 16), np.uint32)
    for r in range(4):
        D[4 * (lane // 16) + r, lane % 16] = regs[r]
    return D


@pytest.mark.parametrize("target", TARGETS)
def test_mfma_16x16_shapes(target):
    A, B = RNG.standard_normal((16, 4)).astype(F32), RNG.standard_normal((4, 16)).astype(F32)
    a, b = _mfma16_lanes(A, B, 1)
    name = "v_mfma_f32_16x16x4f32" if target == "gfx90a" else "v_mfma_f32_16x16x4_f32"
    r0, r1 = run(f"{name} v[8:11], v2, v4, 0\n  s_nop 7\n  s_nop 7", a[:, 0], b[:, 0], target=target)
    D = _mfma16_unpack(r0, r1).view(F32)
    assert np.allclose(D, A.astype(F64) @ B.astype(F64), rtol=1e-6, atol=1e-6)
    A, B = RNG.standard_normal((16, 16)).astype(np.float16), RNG.standard_normal((16, 16)).astype(np.float16)
    a, b = _mfma16_lanes(A, B, 4)
    name = "v_mfma_f32_16x16x16f16" if target == "gfx90a" else "v_mfma_f32_16x16x16_f16"
    r0, r1 = run(f"{name} v[8:11], v[2:3], v[4:5], 0\n  s_nop 7\n  s_nop 7",
                 np.ascontiguousarray(a).view(np.uint64)[:, 0], np.ascontiguousarray(b).view(np.uint64)[:, 0],
                 target=target)
    D = _mfma16_unpack(r0, r1).view(F32)
    assert np.allclose(D, A.astype(F64) @ B.astype(F64), rtol=1e-6, atol=1e-6)
    if target == "gfx90a":
        A = RNG.integers(-128, 128, (16, 16)).astype(np.int8)
        B = RNG.integers(-128, 128, (16, 16)).astype(np.int8)
        a, b = _mfma16_lanes(A, B, 4)
        r0, r1 = run("v_mfma_i32_16x16x16i8 v[8:11], v2, v4, 0\n  s_nop 7\n  s_nop 7",
                     np.ascontiguousarray(a).view(np.uint32)[:, 0], np.ascontiguousarray(b).view(np.uint32)[:, 0])
        D = _mfma16_unpack(r0, r1).view(np.int32)
        assert np.array_equal(D, A.astype(np.int32) @ B.astype(np.int32))
