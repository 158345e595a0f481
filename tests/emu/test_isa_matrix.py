"""Per-instruction tests of GFX9's matrix instructions in forms test_mfma_layouts.py does not take: FP8/BF8
MFMA on gfx942, 4x4 multi-block shapes with CBSZ/ABID broadcasts and BLGP patterns, four-block 16x16x4 f16,
and f64 16x16x4, against numpy products of random operands."""
import math

import numpy as np
import pytest

import isa_operands as ops
from asmkit import hi, lo, run
from isa_operands import (TARGETS, U16, U32, U64, check, f, f16_operand, f32_operand, flushed, h, i32_operand,
                          with_junk)
from isa_ref import (exact, fmax_ieee, fmin_ieee, fp8_value, is_nan, round_bits, sext, to_float)

RNG = None


@pytest.fixture(autouse=True)
def _seed(request):
    """Operands drawn per test from a seed of its own id: reproducible under any test order or worker."""
    global RNG
    RNG = ops.seed(request.node.nodeid)


@pytest.mark.parametrize("target", ["gfx942"])
def test_fp8_mfma(target):
    """v_mfma_f32_16x16x32_fp8_fp8 / _bf8_fp8: FNUZ 8-bit inputs (E4M3 bias 8, E5M2 bias 16) vs numpy."""
    import asmkit
    _ = asmkit  # the vector template carries 3 x 64-bit operands per lane: exactly the 8 bytes A and B need
    a = RNG.integers(0, 256, (64, 8), dtype=np.uint8)
    b = RNG.integers(0, 256, (64, 8), dtype=np.uint8)
    a[a == 0x80] = 0
    b[b == 0x80] = 0
    body = """
  v_mov_b32 v12, 0
  v_mov_b32 v13, 0
  v_mov_b32 v14, 0
  v_mov_b32 v15, 0
  v_mfma_f32_16x16x32_fp8_fp8 v[12:15], v[2:3], v[4:5], v[12:15]
  v_mfma_f32_16x16x32_bf8_fp8 v[16:19], v[2:3], v[4:5], 0
  s_nop 7
  s_nop 7
  v_mov_b32 v8, v12
  v_mov_b32 v9, v13
  v_mov_b32 v10, v16
  v_mov_b32 v11, v17
"""
    r0, r1 = run(body, a.view(np.uint64).reshape(64), b.view(np.uint64).reshape(64), target=target)
    for r_lo, r_hi, ka in ((lo(r0), hi(r0), (3, 8)), (lo(r1), hi(r1), (2, 16))):
        A = np.array([[fp8_value(int(v), *ka) for v in row] for row in a])       # lane l: row l % 16, k-slice l // 16
        B = np.array([[fp8_value(int(v), 3, 8) for v in row] for row in b])
        Am = np.zeros((16, 32))
        Bm = np.zeros((32, 16))
        for lane in range(64):
            for item in range(8):
                Am[lane % 16, 8 * (lane // 16) + item] = A[lane, item]
                Bm[8 * (lane // 16) + item, lane % 16] = B[lane, item]
        D = (Am @ Bm).astype(np.float32)
        got0 = np.array([D[4 * (lane // 16) + 0, lane % 16] for lane in range(64)], np.float32)
        got1 = np.array([D[4 * (lane // 16) + 1, lane % 16] for lane in range(64)], np.float32)
        assert np.allclose(r_lo.view(np.float32), got0, rtol=1e-6, atol=1e-30)
        assert np.allclose(r_hi.view(np.float32), got1, rtol=1e-6, atol=1e-30)


def _layout_out(M, blocks, reg, lane):
    """The (block, row, col) a D register of a lane holds (AMD matrix instruction layouts)."""
    if M == 4:
        return lane // 4, reg, lane % 4
    per = 16 if M == 32 else 4
    b, r = reg // per, reg % per
    row = 8 * (r // 4) + 4 * (lane // 32) + r % 4 if M == 32 else 4 * (lane // 16) + r
    return b, row, lane % M


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("mods", ["", " cbsz:4 abid:3", " blgp:1", " blgp:3", " blgp:6"])
def test_mfma_4x4_multiblock_and_broadcasts(target, mods):
    a = RNG.standard_normal(64).astype(np.float32)
    b = RNG.standard_normal(64).astype(np.float32)
    name = "v_mfma_f32_4x4x1f32" if target == "gfx90a" else "v_mfma_f32_4x4x1_16b_f32"
    r0, r1 = run(f"{name} v[12:15], v2, v4, 0{mods}\n  s_nop 7\n  s_nop 7\n  v_mov_b32 v8, v12\n"
                 "  v_mov_b32 v9, v13\n  v_mov_b32 v10, v14\n  v_mov_b32 v11, v15", a, b, target=target)
    got = np.stack([lo(r0), hi(r0), lo(r1), hi(r1)]).view(np.float32)     # (reg, lane)
    for reg in range(4):
        for lane in range(64):
            blk, i, j = _layout_out(4, 16, reg, lane)
            a_lane = 4 * blk + i
            if "cbsz" in mods:
                a_lane = 4 * 3 + i
            b_lane = 4 * blk + j
            if "blgp:1" in mods:
                b_lane %= 32
            elif "blgp:3" in mods:
                b_lane = (b_lane + 16) % 64
            elif "blgp:6" in mods:
                b_lane = 32 + b_lane % 16
            assert got[reg, lane] == np.float32(np.float64(a[a_lane]) * np.float64(b[b_lane])), (reg, lane)


@pytest.mark.parametrize("target", TARGETS)
def test_mfma_16x16x4f16_four_blocks(target):
    a = RNG.standard_normal((64, 4)).astype(np.float16)
    b = RNG.standard_normal((64, 4)).astype(np.float16)
    name = "v_mfma_f32_16x16x4f16" if target == "gfx90a" else "v_mfma_f32_16x16x4_4b_f16"
    regs = (0, 5, 10, 15)
    body = f"{name} v[12:27], v[2:3], v[4:5], 0\n  s_nop 7\n  s_nop 7\n  s_nop 7\n" + "".join(
        f"  v_mov_b32 v{8 + k}, v{12 + r}\n" for k, r in enumerate(regs))
    r0, r1 = run(body, a.view(np.uint64).reshape(64), b.view(np.uint64).reshape(64), target=target)
    got = np.stack([lo(r0), hi(r0), lo(r1), hi(r1)]).view(np.float32)
    for k, reg in enumerate(regs):
        for lane in range(64):
            blk, i, j = _layout_out(16, 4, reg, lane)
            want = sum(float(a[16 * blk + i, kk]) * float(b[16 * blk + j, kk]) for kk in range(4))
            assert got[k, lane] == np.float32(want), (reg, lane)


@pytest.mark.parametrize("target", TARGETS)
def test_mfma_f64_16x16x4(target):
    a = RNG.standard_normal(64)
    b = RNG.standard_normal(64)
    c = RNG.standard_normal(64)
    name = "v_mfma_f64_16x16x4f64" if target == "gfx90a" else "v_mfma_f64_16x16x4_f64"
    body = (f"  v_mov_b32 v{12}, 0\n" + "".join(f"  v_mov_b32 v{12 + r}, 0\n" for r in range(8)) +
            "  v_mov_b32 v12, v6\n  v_mov_b32 v13, v7\n"
            f"  {name} v[12:19], v[2:3], v[4:5], v[12:19]\n  s_nop 7\n  s_nop 7\n  s_nop 7\n"
            "  v_mov_b32 v8, v12\n  v_mov_b32 v9, v13\n  v_mov_b32 v10, v18\n  v_mov_b32 v11, v19")
    r0, r1 = run(body, a, b, c, target=target)
    # lane l holds A[l % 16][l // 16] and B[l // 16][l % 16]; D[i][j] in register pair i // 4 of lane
    # 16 * (i % 4) + j (AMD's matrix instruction calculator; unlike the f32 16x16 layout)
    A = np.zeros((16, 4))
    B = np.zeros((4, 16))
    for lane in range(64):
        A[lane % 16, lane // 16] = a[lane]
        B[lane // 16, lane % 16] = b[lane]
    for got, item in ((r0.view(np.float64), 0), (r1.view(np.float64), 3)):
        for lane in range(64):
            i, j = 4 * item + lane // 16, lane % 16
            acc = c[lane] if item == 0 else 0.0                  # C: item 0 from c, the rest 0
            for kk in range(4):                                   # one fused multiply-add per k, in k order
                acc = float(exact(lambda p, q, r: p * q + r, A[i, kk], B[kk, j], acc))
            assert got[lane] == acc, (item, lane)
