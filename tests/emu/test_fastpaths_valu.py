"""The compiled engine gives the numpy engine's bits on edge operands of f64 arithmetic, the f32 division
helpers and DPP sources: every kernel runs on both engines (both generated from the instruction
descriptions, pyhip/emu/spec, through different backends: LLVM with its fast path and exact NaN re-run, and
numpy) and the results must be equal bit for bit.  The operands sit on both sides of the boundaries the
deleted C interpreter's fast paths used (f64 on lo/hi rows: v_fma_f64, v_fmac_f64, v_add_f64, v_mul_f64 with
abs/neg, scalar and constant operands, a destination that is a source, sparse EXEC; the f32 division
helpers' common cases: v_div_scale_f32, v_div_fixup_f32, v_div_fmas_f32; DPP lane moves), which are the
edges of IEEE arithmetic where two backends are most likely to differ."""
import numpy as np
import pytest

from asmkit import gpu, run


@pytest.fixture(autouse=True)
def _compiled_engine(monkeypatch):
    """The native engine compiles before it runs (no numpy-engine first runs while compiling): what these tests
    compare or count is the compiled engine."""
    monkeypatch.setenv("PYHIP_JIT_TIERING", "0")


RNG = np.random.default_rng(4242)
U64, F64 = np.uint64, np.float64
TARGETS = ["gfx90a", "gfx942"]


def both(body, a, b=None, c=None, **kw):
    """The kernel on the numpy engine and on the compiled engine: equal bits, returned."""
    g = gpu(kw.get("target", "gfx90a"))
    old = g.engine
    try:
        g.engine = "numpy"
        ref = run(body, a, b, c, **kw)
        g.engine = "native"
        before = g.engine_stats()["native"]
        got = run(body, a, b, c, **kw)
        assert g.engine_stats()["native"] > before, g.engine_stats()["reasons"]    # not a numpy fallback
    finally:
        g.engine = old
    for r, x in zip(ref, got):
        bad = np.nonzero(r != x)[0]
        assert bad.size == 0, (f"lane {bad[0]}: numpy {int(r[bad[0]]):#018x} native {int(x[bad[0]]):#018x} "
                               f"a={a[bad[0]]!r} b={b[bad[0]] if b is not None else None!r} "
                               f"c={c[bad[0]] if c is not None else None!r}")
    return ref


def f64_with_exponent(e, n):
    """Random signs and mantissas (a quarter exact powers of two) with biased exponents ``e``."""
    m = RNG.integers(0, 1 << 52, n, dtype=U64)
    m[RNG.random(n) < 0.25] = 0
    s = RNG.integers(0, 2, n, dtype=U64) << U64(63)
    return (s | (np.asarray(e, U64) << U64(52)) | m).view(F64)


SPECIAL = np.array([0.0, -0.0, np.inf, -np.inf, 5e-324, -2.2250738585072014e-308], F64)
NANS = np.array([0x7FF8000000000001, 0xFFF4000000000002, 0x7FF0000000000003, 0xFFFFFFFFFFFFFFFF], U64).view(F64)


def operands():
    """Per lane (mixed within every group of 8 lanes): in the fast domain, on its edges (biased exponents
    621..624 and 1521..1524 for the factors, 1921..1924 for the addend), products that underflow or
    overflow, total cancellation, zeros, subnormals, infinities and NaNs with payloads."""
    n = 64
    ea = RNG.choice([623, 700, 1023, 1100, 1522, 621, 622, 624, 1521, 1523, 1524, 300, 1900], n)
    eb = RNG.choice([623, 800, 1023, 1300, 1522, 622, 1523, 350, 2000], n)
    a, b = f64_with_exponent(ea, n), f64_with_exponent(eb, n)
    c = f64_with_exponent(RNG.choice([0, 1, 500, 1023, 1921, 1922, 1923, 1924, 2046], n), n)
    with np.errstate(all="ignore"):
        cancel = RNG.random(n) < 0.25
        c[cancel] = -(a[cancel] * b[cancel]) * (1 + RNG.choice([0, 2.0 ** -52, -2.0 ** -53], cancel.sum()))
    for x in (a, b, c):
        k = RNG.random(n) < 0.12
        x[k] = RNG.choice(np.concatenate([SPECIAL, NANS]), k.sum())
    a[0], b[0], c[0] = 2.0 ** -400, 2.0 ** -400, 0.0          # the result exactly 2^-800
    a[1], b[1], c[1] = 2.0 ** 500, 1.5, 2.0 ** 900
    a[2], b[2], c[2] = -(2.0 ** -401) * 1.5, 2.0 ** -401, -0.0
    # exact cancellations (a*b exact, c = -a*b): +0 on the fast path; at the edges of the factor range
    short = RNG.integers(1, 1 << 20, 12).astype(F64) * 2.0 ** RNG.choice([-420, -400, -380, 0, 470, 480], 12)
    a[3:15], b[3:15] = short, RNG.integers(1, 1 << 20, 12) * 2.0 ** RNG.choice([-440, -400, -20, 0, 5, 470], 12)
    with np.errstate(all="ignore"):
        c[3:15] = -(a[3:15] * b[3:15])
    return a, b, c


BODIES = {
    "fma": "v_fma_f64 v[8:9], v[2:3], v[4:5], v[6:7]\n  v_fma_f64 v[10:11], -v[2:3], |v[4:5]|, -|v[6:7]|",
    "fma_scalar": "v_readfirstlane_b32 s20, v2\n  v_readfirstlane_b32 s21, v3\n"
                  "  v_fma_f64 v[8:9], s[20:21], v[4:5], v[6:7]\n  v_fma_f64 v[10:11], v[2:3], -0.5, s[20:21]",
    "fmac": "v_fmac_f64 v[6:7], v[2:3], v[4:5]\n  v_mov_b32 v8, v6\n  v_mov_b32 v9, v7\n"
            "  v_fma_f64 v[2:3], v[2:3], v[4:5], v[2:3]\n  v_mov_b32 v10, v2\n  v_mov_b32 v11, v3",
    "add_mul": "v_add_f64 v[8:9], v[2:3], -v[4:5]\n  v_mul_f64 v[10:11], |v[2:3]|, v[6:7]",
    "add_mul_scalar": "v_readfirstlane_b32 s20, v6\n  v_readfirstlane_b32 s21, v7\n"
                      "  v_add_f64 v[8:9], s[20:21], v[4:5]\n  v_mul_f64 v[10:11], v[2:3], 4.0",
    "in_place": "v_mul_f64 v[4:5], v[2:3], v[4:5]\n  v_add_f64 v[6:7], v[6:7], v[2:3]\n"
                "  v_mov_b32 v8, v4\n  v_mov_b32 v9, v5\n  v_mov_b32 v10, v6\n  v_mov_b32 v11, v7",
}
SPARSE = "  s_mov_b32 exec_lo, 0x5a5a00ff\n  s_mov_b32 exec_hi, 0xf00f0001\n{body}\n  s_mov_b64 exec, -1"


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name", sorted(BODIES))
def test_f64_rows_match_the_numpy_engine(target, name):
    for _ in range(3):
        a, b, c = operands()
        both(BODIES[name], a, b, c, target=target)
        both(SPARSE.format(body=BODIES[name]), a, b, c, target=target)
    both(BODIES[name], a, b, c, target=target, lanes=45)


@pytest.mark.parametrize("target", TARGETS)
def test_f64_rows_flushing_mode_takes_the_general_path(target):
    """MODE flushing f64 denormals: flushed inputs, not the host's subnormal results."""
    a, b, c = operands()
    a[:8] = 5e-324 * np.arange(1, 9)
    r0, r1 = both(BODIES["fma"] + "\n  v_add_f64 v[10:11], v[2:3], v[4:5]", a, b, c, target=target,
                  denorm=(3, 0))
    assert (r1[:8].view(F64) == b[:8]).all() or np.isnan(b[:8]).any()     # a flushed to zero in the add


# ---- f32 division helpers: operands around the exponent ranges of the common case ----------------------------
def f32_with_exponent(e, n):
    m = RNG.integers(0, 1 << 23, n, dtype=np.uint32)
    m[RNG.random(n) < 0.25] = 0
    s = RNG.integers(0, 2, n, dtype=np.uint32) << np.uint32(31)
    return (s | (np.asarray(e, np.uint32) << np.uint32(23)) | m).view(np.float32)


F32_SPECIAL = np.array([0x00000000, 0x80000000, 0x7F800000, 0xFF800000, 0x00000001, 0x807FFFFF, 0x7FC00001,
                        0xFFA00002], np.uint32).view(np.float32)


def division_operands():
    """Denominator exponents on both sides of 1 and 252..253, numerators around 23..24, exponent
    differences around -151..-150, -126..-125 and 95..96, plus zeros, denormals, infinities and NaNs."""
    n = 64
    e1 = RNG.choice([1, 2, 100, 127, 200, 251, 252, 253, 254], n)
    d = RNG.choice([-152, -151, -150, -149, -127, -126, -125, -124, 0, 3, 94, 95, 96, 97], n)
    e2 = np.clip(e1 + d, 1, 254)
    free = RNG.random(n) < 0.3
    e2[free] = RNG.choice([1, 22, 23, 24, 25, 127, 253, 254], free.sum())
    den, num = f32_with_exponent(e1, n), f32_with_exponent(e2, n)
    quo = f32_with_exponent(RNG.integers(1, 255, n), n)
    for x in (den, num, quo):
        k = RNG.random(n) < 0.12
        x[k] = RNG.choice(F32_SPECIAL, k.sum())
    return quo, den, num


DIV_BODIES = {
    "scale": "v_div_scale_f32 v8, s[20:21], v4, v4, v6\n  v_div_scale_f32 v9, vcc, v6, v4, v6\n"
             "  v_mov_b32 v10, s20\n  v_mov_b32 v11, vcc_hi\n  v_div_scale_f32 v2, vcc, v2, v4, v6\n"
             "  v_xor_b32 v10, v10, v2\n  v_xor_b32 v11, v11, vcc_lo",
    "scale_neg": "v_div_scale_f32 v8, vcc, -v2, v4, -v6\n  v_mov_b32 v10, vcc_lo\n  v_mov_b32 v11, vcc_hi\n"
                 "  v_div_scale_f32 v9, vcc, v2, -v4, v6\n  v_xor_b32 v11, v11, vcc_hi",
    "fixup": "v_div_fixup_f32 v8, v2, v4, v6\n  v_div_fixup_f32 v10, -v2, |v4|, -|v6|\n"
             "  v_div_fixup_f32 v2, v2, v4, v2\n  v_mov_b32 v9, v2\n  v_div_fixup_f32 v11, 1.0, v4, s20",
    "fmas": "s_mov_b64 vcc, 0\n  v_div_fmas_f32 v8, v2, v4, v6\n  s_mov_b32 vcc_lo, 0x10203\n"
            "  s_mov_b32 vcc_hi, 0x80000001\n  v_div_fmas_f32 v10, v2, v4, v6\n  v_div_fmas_f32 v11, -v2, v4, |v6|",
}


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name", sorted(DIV_BODIES))
def test_f32_division_helpers_match_the_numpy_engine(target, name):
    body = "v_readfirstlane_b32 s20, v6\n  " + DIV_BODIES[name]
    for _ in range(3):
        q, d, n = division_operands()
        both(body, q, d, n, target=target)
        both(SPARSE.format(body=body), q, d, n, target=target)
    both(body, q, d, n, target=target, lanes=45)
    both(body, q, d, n, target=target, denorm=(0, 3))          # f32 denormals flushed


# ---- DPP source lanes: every lane-move control, full and sparse EXEC, bound_ctrl ----------------------------
DPP_CTRLS = ["quad_perm:[1,0,3,2]", "row_shl:1", "row_shl:15", "row_shr:3", "row_ror:7", "wave_shl:1", "wave_rol:1",
             "wave_shr:1", "wave_ror:1", "row_mirror", "row_half_mirror", "row_bcast:15", "row_bcast:31"]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("bound", [0, 1])
def test_dpp_sources_match_the_numpy_engine(target, bound):
    a = RNG.standard_normal(64).astype(np.float32)
    b = RNG.standard_normal(64).astype(np.float32)
    bc = " bound_ctrl:0" if bound else ""
    for ctrl in DPP_CTRLS:
        body = (f"v_add_f32_dpp v8, v2, v4 {ctrl} row_mask:0xf bank_mask:0xf{bc}\n"
                f"  v_mov_b32_dpp v10, v2 {ctrl} row_mask:0xb bank_mask:0xd{bc}\n"
                f"  v_mul_f32_dpp v11, -v2, |v4| {ctrl} row_mask:0xf bank_mask:0xf{bc}")
        for sparse in (False, True):
            both(SPARSE.format(body=body) if sparse else body, a, b, target=target)
