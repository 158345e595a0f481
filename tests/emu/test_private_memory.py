"""Private (scratch) memory on both engines against a byte model of each lane's private segment: accesses of
every size at offsets that straddle the native engine's 16-byte lane interleave (private_mem.h priv_ptr: 12 bytes at
8, 8 bytes at 12, 16 bytes at 10), unaligned dwords, offsets that differ per lane and offsets every lane
shares, stores then loads that overlap them, in wave32 and wave64 (gfx1100's architected flat scratch)."""
import numpy as np
import pytest

from asmkit import engine, run  # noqa: F401 (engine: a fixture)

T11 = "gfx1100"
SEG = 112


def _model(a, b, c, lane_off):
    """Each lane's bytes after the stores of BODY, and what its loads give (r0, r1 as uint64 per lane)."""
    r0, r1 = np.zeros(64, np.uint64), np.zeros(64, np.uint64)
    for l in range(64):
        mem = bytearray(SEG)
        words = [int(a[l]) & 0xFFFFFFFF, int(a[l]) >> 32, int(b[l]) & 0xFFFFFFFF, int(b[l]) >> 32,
                 int(c[l]) & 0xFFFFFFFF, int(c[l]) >> 32]
        le = [w.to_bytes(4, "little") for w in words]
        mem[12:20] = le[0] + le[1]                          # scratch_store_b64 off, v[2:3], off offset:12
        mem[24:36] = le[2] + le[3] + le[4]                  # scratch_store_b96 off, v[4:6], off offset:24
        o = int(lane_off[l])
        mem[o + 40:o + 44] = le[5]                          # scratch_store_b32 v13, v7, off offset:40
        mem[o + 60:o + 62] = le[0][:2]                      # scratch_store_b16 v13, v2, off offset:60
        x = bytes(mem[10:26])                               # scratch_load_b128 v[8:11], off, off offset:10
        y = bytes(mem[o + 38:o + 46])                       # scratch_load_b64 v[14:15], v13, off offset:38
        z = bytes(mem[o + 59:o + 63])                       # scratch_load_b32 v16, v13, off offset:59
        w = [int.from_bytes(x[i:i + 4], "little") for i in range(0, 16, 4)]
        w[0] ^= int.from_bytes(y[0:4], "little")
        w[1] ^= int.from_bytes(y[4:8], "little")
        w[2] ^= int.from_bytes(z, "little")
        r0[l], r1[l] = w[0] | w[1] << 32, w[2] | w[3] << 32
    return r0, r1


BODY = """
  v_and_b32 v13, 7, v0
  v_mul_u32_u24 v13, 5, v13
  {per_lane}
  scratch_store_b64 off, v[2:3], off offset:12
  scratch_store_b96 off, v[4:6], off offset:24
  scratch_store_b32 v13, v7, off offset:40
  scratch_store_b16 v13, v2, off offset:60
  s_waitcnt_vscnt null, 0
  scratch_load_b128 v[8:11], off, off offset:10
  scratch_load_b64 v[14:15], v13, off offset:38
  scratch_load_b32 v16, v13, off offset:59
  s_waitcnt vmcnt(0)
  v_xor_b32 v8, v8, v14
  v_xor_b32 v9, v9, v15
  v_xor_b32 v10, v10, v16
"""


@pytest.mark.parametrize("shared", [True, False], ids=["one offset", "offset per lane"])
@pytest.mark.parametrize("wave", [32, 64])
def test_private_bytes_as_a_byte_model_has_them(wave, shared, engine):
    rng = np.random.default_rng()
    a, b, c = (rng.integers(0, 2 ** 63, 64, dtype=np.uint64) * 2 + rng.integers(0, 2, 64, dtype=np.uint64)
               for _ in range(3))
    lane_off = np.full(64, 5 * 3) if shared else 5 * (np.arange(64) % 8)
    engine(T11)
    per_lane = "v_mov_b32 v13, 15" if shared else ""
    r0, r1 = run(BODY.format(per_lane=per_lane), a, b, c, target=T11, wave=wave, private=SEG)
    engine(T11)
    w0, w1 = _model(a, b, c, lane_off)
    assert np.array_equal(r0, w0) and np.array_equal(r1, w1)
