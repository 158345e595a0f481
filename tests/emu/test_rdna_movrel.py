"""RDNA's M0-relative register moves — v_movrels / v_movreld / v_movrelsd / v_movrelsd_2 / v_swaprel and
s_movrelsd_2 — and GFX11's s_sendmsg_rtn on both engines (the native handlers of native/engine/ops_scalar.h and
the numpy semantics of semantics/rdna_lanes.py, rdna.py) against what is worked out here by hand; wave32 and
wave64, a partial wave; an index past the wave's VGPRs faults alike."""
import time


import numpy as np
import pytest

from asmkit import POISON, engine, gpu, run  # noqa: F401 (engine: a fixture)
from pyhip.emu.memory import GPUFault

RNG = np.random.default_rng(20261130)
U64 = np.uint64
CASES = [("gfx1030", 32, 32), ("gfx1030", 64, 64), ("gfx1100", 32, 32), ("gfx1100", 64, 41)]
M32 = 0xFFFFFFFF

BODY = """
  v_mov_b32 v20, v2
  v_mov_b32 v21, v3
  v_mov_b32 v22, v4
  v_mov_b32 v23, v5
  v_mov_b32 v24, v6
  v_mov_b32 v25, v7
  v_xor_b32 v26, v2, v5
  v_xor_b32 v27, v3, v6
  s_mov_b32 m0, 3
  v_movrels_b32 v8, v20
  v_movreld_b32 v20, v6
  s_mov_b32 m0, 1
  v_movrelsd_b32 v21, v24
  s_mov_b32 m0, 0x20002
  v_movrelsd_2_b32 v24, v20
  s_mov_b32 m0, 0x30001
  v_swaprel_b32 v24, v20
  s_mov_b32 s30, 0x1234
  s_mov_b32 s31, 0x5678
  s_mov_b32 s22, 0
  s_mov_b32 m0, 0x20001
  s_movrelsd_2_b32 s20, s30
  v_mov_b32 v9, v23
  v_mov_b32 v10, v26
  v_xor_b32 v11, v21, v27
  v_add_nc_u32 v11, s22, v11
"""


@pytest.mark.parametrize("target,wave,lanes", CASES)
def test_relative_moves(target, wave, lanes, engine):
    """v8 = VGPR[20 + 3] (b's high word); VGPR[20 + 3] = c's low word; VGPR[21 + 1] = VGPR[24 + 1] (c's high
    word); VGPR[24 + 2] = VGPR[20 + 2] (that word again); v21 and v27 swapped (src + 1, dst + 3); s22 = s31."""
    a, b, c = (RNG.integers(0, 2 ** 64, 64, dtype=U64) for _ in range(3))
    engine(target)
    r0, r1 = run(BODY, a, b, c, target=target, lanes=lanes, wave=wave)
    engine(target)
    for i in range(lanes):
        ahi = int(a[i]) >> 32
        bhi = int(b[i]) >> 32
        clo, chi = int(c[i]) & M32, int(c[i]) >> 32
        v21, v27 = ahi ^ clo, ahi                       # after the swap
        want0 = bhi | clo << 32
        want1 = chi | (((v21 ^ v27) + 0x5678) & M32) << 32
        assert (int(r0[i]), int(r1[i])) == (want0, want1), (i, hex(int(r0[i])), hex(want0), hex(int(r1[i])), hex(want1))
    assert (r0[lanes:] == U64(POISON)).all()


@pytest.mark.parametrize("target", ["gfx1030", "gfx1100"])
def test_an_index_past_the_registers_faults(target, engine):
    a = RNG.integers(0, 2 ** 64, 64, dtype=U64)
    body = "  s_movk_i32 m0, 0x1000\n  v_movrels_b32 v8, v20\n"
    engine(target)
    with pytest.raises(GPUFault, match="v_movrels_b32: VGPR index beyond the wave's registers") as exc:
        run(body, a, target=target, wave=32)
    engine(target)
    assert "v_movrels_b32" in str(exc.value.instruction)


@pytest.mark.parametrize("wave", [32, 64])
def test_sendmsg_rtn(wave, engine):
    """MSG_RTN_GET_REALTIME twice: nanoseconds of the host's monotonic clock, in order, inside the run; another
    message (GET_DOORBELL) returns 0."""
    a = RNG.integers(0, 2 ** 64, 64, dtype=U64)
    body = """
  s_sendmsg_rtn_b64 s[20:21], sendmsg(MSG_RTN_GET_REALTIME)
  s_mov_b32 s22, -1
  s_sendmsg_rtn_b32 s22, sendmsg(MSG_RTN_GET_DOORBELL)
  s_sendmsg_rtn_b64 s[24:25], sendmsg(MSG_RTN_GET_REALTIME)
  v_mov_b32 v8, s20
  v_mov_b32 v9, s21
  v_mov_b32 v10, s24
  v_mov_b32 v11, s22
"""
    engine("gfx1100")
    t0 = time.monotonic_ns()
    r0, r1 = run(body, a, target="gfx1100", wave=wave)
    t1 = time.monotonic_ns()
    engine("gfx1100")
    first = int(r0[0])
    second_lo, doorbell = int(r1[0]) & M32, int(r1[0]) >> 32
    assert t0 <= first <= t1, (t0, first, t1)
    assert (first & ~M32) | second_lo >= first or second_lo < (first & M32)       # (the low word may wrap)
    assert doorbell == 0
    assert (r0[:wave] == r0[0]).all()                    # one value per wave, the same in every lane
