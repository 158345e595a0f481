"""ds_swizzle_b32, ds_bpermute_b32 and ds_permute_b32 in wave32 and wave64 against a numpy model of the ISA's
lane selection (byte address bits [7:2] in wave64, [6:2] in wave32; lanes reading an inactive lane get 0;
permute: a later lane wins), under a random EXEC, on both engines."""
import numpy as np
import pytest

from asmkit import gpu, run

RNG = np.random.default_rng(4242)
U32, U64 = np.uint32, np.uint64


@pytest.fixture(params=["numpy", "compiled"])
def compiled(request, monkeypatch):
    if request.param == "compiled":
        monkeypatch.setenv("PYHIP_JIT_TIERING", "0")        # compile first (a first small dispatch runs on numpy)
    return request.param == "compiled"


def _run(body, a, b, c, target, wave, compiled):
    before = gpu(target).engine_stats()["native"]
    kw = {"wave": wave} if target.startswith("gfx1") else {}
    r0, r1 = run(body, a, b, c, target=target, **kw)
    assert (gpu(target).engine_stats()["native"] > before) == compiled
    return (r0 & U64(0xFFFFFFFF)).astype(U32), (r1 & U64(0xFFFFFFFF)).astype(U32)


def _exec_body(wave, inner):
    if wave == 32:
        return f"""
  v_and_b32 v31, 1, v6
  v_cmp_eq_u32 vcc_lo, 1, v31
  s_and_saveexec_b32 s20, vcc_lo
{inner}
  s_waitcnt lgkmcnt(0)
  s_or_b32 exec_lo, exec_lo, s20"""
    return f"""
  v_and_b32 v31, 1, v6
  v_cmp_eq_u32 vcc, 1, v31
  s_and_saveexec_b64 s[20:21], vcc
{inner}
  s_waitcnt lgkmcnt(0)
  s_or_b64 exec, exec, s[20:21]"""


def _waves(wave):
    return [np.arange(k, k + wave) for k in range(0, 64, wave)]


@pytest.mark.parametrize("target,wave", [("gfx90a", 64), ("gfx1100", 32)])
def test_bpermute_and_permute(target, wave, compiled):
    a = RNG.integers(0, 2 ** 32, 64, dtype=U64)
    b = (RNG.integers(0, 256, 64, dtype=U64) << U64(2)) | RNG.integers(0, 4, 64, dtype=U64)   # any byte address
    c = RNG.integers(0, 2, 64).astype(U64)
    c[:2] = 1
    body = _exec_body(wave, "  ds_bpermute_b32 v8, v4, v2 offset:4\n  ds_permute_b32 v10, v4, v2")
    r0, r1 = _run(body, a, b, c, target, wave, compiled)
    data, act = a.astype(U32), c == 1
    want0, want1 = np.zeros(64, U32), np.zeros(64, U32)
    for lanes in _waves(wave):
        idx_b = ((b[lanes].astype(np.int64) + 4) >> 2) & (wave - 1)
        idx_p = (b[lanes].astype(np.int64) >> 2) & (wave - 1)
        out_p = np.zeros(wave, U32)
        for j, l in enumerate(lanes):
            if act[l]:
                out_p[idx_p[j]] = data[l]
        for j, l in enumerate(lanes):
            if act[l]:
                src = lanes[0] + idx_b[j]
                want0[l] = data[src] if act[src] else 0
                want1[l] = out_p[j]
    assert np.array_equal(r0, want0)
    assert np.array_equal(r1, want1)


@pytest.mark.parametrize("target,wave", [("gfx90a", 64), ("gfx1100", 32)])
@pytest.mark.parametrize("pattern", [0x041F, 0x801B, 0x00E0, 0x7C1F])
def test_swizzle(target, wave, pattern, compiled):
    a = RNG.integers(0, 2 ** 32, 64, dtype=U64)
    c = RNG.integers(0, 2, 64).astype(U64)
    c[:2] = 1
    body = _exec_body(wave, f"  ds_swizzle_b32 v8, v2 offset:{pattern}")
    r0, _ = _run(body, a, a, c, target, wave, compiled)
    data, act = a.astype(U32), c == 1
    want = np.zeros(64, U32)
    for lanes in _waves(wave):
        for l in lanes:
            i = l - lanes[0]
            if pattern & 0x8000:
                s = (i & ~3) + ((pattern >> (2 * (i & 3))) & 3)
            else:
                s = (i & 0x20) | ((((i & 0x1F) & (pattern & 0x1F)) | ((pattern >> 5) & 0x1F)) ^ ((pattern >> 10) & 0x1F))
            src = lanes[0] + s
            if act[l]:
                want[l] = data[src] if act[src] else 0
    assert np.array_equal(r0, want)
