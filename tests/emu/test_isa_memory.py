"""Per-instruction tests of GFX9's memory instructions beyond plain loads and stores: LDS 64-bit and packed-f16
atomics in lane order, D16 loads, typed buffer loads and stores, scalar stores and atomics, ds_append/consume,
wrxchg2, addtid, D16 LDS reads, condxchg and loads into LDS; checked against models written from the ISA
documents (isa_ref.py) with random operands."""
import collections
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


@pytest.mark.parametrize("target", TARGETS)
def test_lds_64bit_atomics_in_lane_order(target):
    vals = RNG.integers(0, 2 ** 64, 64, dtype=np.uint64)
    init = RNG.integers(0, 2 ** 64, 64, dtype=np.uint64)
    body = """
  v_and_b32 v12, 3, v0
  v_lshlrev_b32 v12, 3, v12
  v_cmp_gt_u32 vcc, 4, v0
  s_and_saveexec_b64 s[10:11], vcc
  ds_write_b64 v12, v[4:5]
  s_mov_b64 exec, s[10:11]
  s_barrier
  ds_add_rtn_u64 v[8:9], v12, v[2:3]
  ds_max_rtn_i64 v[10:11], v12, v[2:3] offset:64
"""
    # lanes 0-3 initialise both counters (offset 0 and 64 are written separately below)
    body = body.replace("ds_write_b64 v12, v[4:5]", "ds_write_b64 v12, v[4:5]\n  ds_write_b64 v12, v[4:5] offset:64")
    r0, r1 = run(body, vals, init, lds=128, target=target)
    mem_add = [int(init[i]) for i in range(4)]
    mem_max = [int(init[i]) for i in range(4)]
    want_add, want_max = [], []
    for lane in range(64):
        k = lane & 3
        want_add.append(mem_add[k])
        mem_add[k] = (mem_add[k] + int(vals[lane])) & (2 ** 64 - 1)
        want_max.append(mem_max[k])
        mem_max[k] = max(sext(mem_max[k], 64), sext(int(vals[lane]), 64)) & (2 ** 64 - 1)
    assert [int(x) for x in r0] == want_add
    assert [int(x) for x in r1] == want_max


@pytest.mark.parametrize("target", TARGETS)
def test_d16_loads_keep_the_other_half(target):
    a, b = i32_operand(), i32_operand()
    body = """
  v_mov_b32 v8, v4
  global_load_sbyte_d16 v8, v1, s[4:5]
  v_mov_b32 v9, v4
  global_load_ubyte_d16_hi v9, v1, s[4:5] offset:1
  v_mov_b32 v10, v4
  global_load_short_d16 v10, v1, s[4:5] offset:2
  s_waitcnt vmcnt(0)
"""
    r0, r1 = run(body, a, b, target=target)
    A, B = [int(x) for x in a], [int(x) for x in b]
    assert [int(x) for x in lo(r0)] == [(y & 0xFFFF0000) | (sext(x & 0xFF, 8) & 0xFFFF) for x, y in zip(A, B)]
    assert [int(x) for x in hi(r0)] == [(y & 0xFFFF) | ((x >> 8) & 0xFF) << 16 for x, y in zip(A, B)]
    assert [int(x) for x in lo(r1)] == [(y & 0xFFFF0000) | (x >> 16 & 0xFFFF) for x, y in zip(A, B)]


@pytest.mark.parametrize("target", TARGETS)
def test_typed_buffer_loads_and_stores(target):
    """buffer_load_format_xyzw with an 8_8_8_8 UNORM V#, tbuffer 16_16 SINT, and a format store."""
    a = i32_operand()
    b = RNG.integers(0, 2 ** 32, 64, dtype=np.uint64)
    # V# in s[12:15]: base = input buffer, stride 8, num_records 1536, DATA_FORMAT 10 (8_8_8_8), NUM_FORMAT 0
    body = """
  s_mov_b32 s12, s4
  s_and_b32 s13, s5, 0xffff
  s_or_b32 s13, s13, 0x80000
  s_mov_b32 s14, 1536
  s_mov_b32 s15, 0x50000
  v_lshrrev_b32 v12, 3, v1
  buffer_load_format_xyzw v[14:17], v12, s[12:15], 0 idxen
  tbuffer_load_format_xy v[18:19], v12, s[12:15], 0 format:[BUF_DATA_FORMAT_16_16, BUF_NUM_FORMAT_SINT] idxen
  s_waitcnt vmcnt(0)
  v_mov_b32 v8, v14
  v_mov_b32 v9, v17
  v_mov_b32 v10, v18
  v_mov_b32 v11, v19
"""
    r0, r1 = run(body, a, b, target=target)
    A = [int(x) for x in a]
    check(lo(r0), [round_bits(Fraction_(x & 0xFF, 255), 32) for x in A], 32)
    check(hi(r0), [round_bits(Fraction_(x >> 24 & 0xFF, 255), 32) for x in A], 32)
    assert [int(x) for x in lo(r1)] == [sext(x & 0xFFFF, 16) & 0xFFFFFFFF for x in A]
    assert [int(x) for x in hi(r1)] == [sext(x >> 16, 16) & 0xFFFFFFFF for x in A]


def Fraction_(n, d):
    from fractions import Fraction
    return Fraction(n, d)


@pytest.mark.parametrize("target", TARGETS)
def test_scalar_store_and_atomic(target):
    """64 one-wave workgroups: s_atomic_add (returning) on one counter in the c operands' first dword, and
    s_store_dword / s_load_dword round trips through each workgroup's own c slot."""
    a, b = i32_operand(), i32_operand()
    c = RNG.integers(0, 2 ** 32, 64, dtype=np.uint64)
    body = """
  s_add_u32 s30, s4, 1024
  s_addc_u32 s31, s5, 0
  s_mov_b32 s26, s20
  s_atomic_add s26, s[30:31], 0x0 glc
  s_add_u32 s32, s30, s12
  s_addc_u32 s33, s31, 0
  s_store_dword s22, s[32:33], 0x4
  s_waitcnt lgkmcnt(0)
  s_dcache_wb
  s_load_dword s27, s[32:33], 0x4
  s_waitcnt lgkmcnt(0)
"""
    r0, _ = run(body, a, b, c, scalar=True, target=target)
    # the atomics apply one after another in some order of the workgroups (they may run concurrently):
    # following that order from c0, every wave sees the counter plus the a of every wave before it.  Waves
    # adding 0 see some value the counter held; adds can wrap the counter back to a value it held before
    # (1 and 0xFFFFFFFF are among the operands), so the order is searched for, not followed greedily.
    start = int(c[0]) & 0xFFFFFFFF
    seen = [(int(x), int(y) & 0xFFFFFFFF) for x, y in zip(lo(r0), a)]
    movers = collections.Counter((s, d) for s, d in seen if d)

    def order(value, left):
        """The counter's values along an order of the movers left that starts at ``value``, or None."""
        if not left:
            return [value]
        for (s, d) in [k for k in left if k[0] == value]:
            left[(s, d)] -= 1
            if not left[(s, d)]:
                del left[(s, d)]
            rest = order((value + d) & 0xFFFFFFFF, left)
            left[(s, d)] += 1
            if rest is not None:
                return [value] + rest
        return None
    visited = order(start, movers)
    assert visited is not None, "the returned values are not one sequential order of the adds"
    assert all(s in set(visited) for s, d in seen if not d), "a wave adding 0 saw a value the counter never held"
    assert np.array_equal(hi(r0), lo(b))


@pytest.mark.parametrize("target", TARGETS)
def test_ds_append_consume_wrxchg2_addtid(target):
    a, b = i32_operand(), i32_operand()
    init = int(RNG.integers(0, 2 ** 31))
    body = f"""
  s_mov_b32 m0, 0
  v_mov_b32 v12, {init}
  v_mov_b32 v13, 0
  v_cmp_eq_u32 vcc, 0, v0
  s_and_saveexec_b64 s[10:11], vcc
  ds_write_b32 v13, v12 offset:256
  s_mov_b64 exec, s[10:11]
  s_barrier
  v_cmp_gt_u32 vcc, 40, v0
  s_and_saveexec_b64 s[10:11], vcc
  ds_append v8 offset:256
  s_mov_b64 exec, s[10:11]
  s_waitcnt lgkmcnt(0)
  s_barrier
  ds_consume v9 offset:256
  v_lshlrev_b32 v14, 2, v0
  ds_write_addtid_b32 v2
  ds_write_b32 v14, v4 offset:256
  s_waitcnt lgkmcnt(0)
  ds_wrxchg2_rtn_b32 v[10:11], v14, v6, v6 offset1:64
  s_waitcnt lgkmcnt(0)
  ds_read2_b32 v[12:13], v14 offset1:64
  s_waitcnt lgkmcnt(0)
  v_xor_b32 v10, v10, v12
  v_xor_b32 v11, v11, v13
"""
    c = i32_operand()
    r0, r1 = run(body, a, b, c, lds=512, target=target)
    assert (lo(r0)[:40] == init).all() and (lo(r0)[40:] == 0).all(), "ds_append: old value to active lanes"
    assert (hi(r0) == init + 40).all(), "ds_consume sees the appended count"
    # lane i: dword i holds a[i] (ds_write_addtid at M0 = 0) and dword 64 + i holds b[i]; both are exchanged
    # for c[i], so old ^ new = a ^ c and b ^ c
    assert np.array_equal(lo(r1), lo(a) ^ lo(c)) and np.array_equal(hi(r1), lo(b) ^ lo(c))


@pytest.mark.parametrize("target", TARGETS)
def test_packed_f16_atomic_adds(target):
    """global_atomic_pk_add_f16 (returning) and, on gfx942, ds_pk_add_rtn_f16: two f16 adds per dword, in lane
    order."""
    a = (f16_operand() << U64(16)) | f16_operand()
    b = (f16_operand() << U64(16)) | f16_operand()
    body = """
  v_and_b32 v12, 7, v0
  v_lshlrev_b32 v12, 2, v12
  v_cmp_gt_u32 vcc, 8, v0
  s_and_saveexec_b64 s[10:11], vcc
  global_store_dword v12, v4, s[6:7] offset:768
  ds_write_b32 v12, v4
  s_mov_b64 exec, s[10:11]
  s_waitcnt vmcnt(0) lgkmcnt(0)
  s_barrier
  global_atomic_pk_add_f16 v8, v12, v2, s[6:7] offset:768 glc
  ds_pk_add_rtn_f16 v9, v12, v2
  s_waitcnt vmcnt(0) lgkmcnt(0)
"""
    if target == "gfx942":
        body = body.replace(" glc", " sc0")
    else:                                              # ds_pk_add_*_f16 is gfx940+
        body = body.replace("ds_pk_add_rtn_f16 v9, v12, v2", "v_mov_b32 v9, v8")
    r0, _ = run(body, a, b, lds=64, target=target)

    def add2(o, v):
        out = 0
        for sh in (0, 16):
            s = exact(lambda p, q: p + q, h(o >> sh), h(v >> sh))
            out |= (round_bits(s, 16) if not (isinstance(s, float) and math.isnan(s)) else 0x7E00) << sh
        return out
    mem = [int(b[i]) & 0xFFFFFFFF for i in range(8)]
    want = []
    for lane in range(64):
        k = lane & 7
        want.append(mem[k])
        mem[k] = add2(mem[k], int(a[lane]) & 0xFFFFFFFF)
    for got in (lo(r0), hi(r0)):
        check(got & U32(0xFFFF), [w & 0xFFFF for w in want], 16)
        check(got >> U32(16), [w >> 16 for w in want], 16)


@pytest.mark.parametrize("target", TARGETS)
def test_ds_d16_reads_condxchg_and_lds_dma(target):
    a, b = i32_operand(), i32_operand()
    body = """
  v_lshlrev_b32 v12, 2, v0
  ds_write_b32 v12, v2
  s_waitcnt lgkmcnt(0)
  v_mov_b32 v8, v4
  ds_read_u8_d16 v8, v12 offset:1
  v_mov_b32 v9, v4
  ds_read_i8_d16_hi v9, v12 offset:2
  s_waitcnt lgkmcnt(0)
  s_mov_b32 m0, 256
  global_load_lds_dword v1, s[4:5] offset:512
  s_waitcnt vmcnt(0)
  ds_read_b32 v10, v12 offset:768
  s_waitcnt lgkmcnt(0)
  v_mov_b32 v11, 0
"""
    if target == "gfx90a":                          # global_load_lds_dword is gfx940+
        body = body.replace("global_load_lds_dword v1, s[4:5] offset:512", "global_load_dword v13, v1, s[4:5] offset:512\n"
                            "  s_waitcnt vmcnt(0)\n  ds_write_b32 v12, v13 offset:768")
    r0, r1 = run(body, a, b, lds=1280, target=target)
    A, B = [int(x) & 0xFFFFFFFF for x in a], [int(x) & 0xFFFFFFFF for x in b]
    assert [int(x) for x in lo(r0)] == [(y & 0xFFFF0000) | (x >> 8 & 0xFF) for x, y in zip(A, B)]
    assert [int(x) for x in hi(r0)] == [(y & 0xFFFF) | (sext(x >> 16 & 0xFF, 8) & 0xFFFF) << 16 for x, y in zip(A, B)]
    # the instruction offset moves both addresses: the global one and the LDS one (M0 + offset + 4 * lane)
    assert np.array_equal(lo(r1), lo(b)), "global_load_lds_dword: lane i's dword at M0 + offset + 4 i"


@pytest.mark.parametrize("target", TARGETS)
def test_buffer_store_format(target):
    """buffer_store_format_xy through a 16_16 UNORM V#, read back raw: round(clamp(x, 0, 1) * 65535)."""
    a, b = f32_operand(), f32_operand()
    body = """
  s_mov_b32 s12, s6
  s_and_b32 s13, s7, 0xffff
  s_or_b32 s13, s13, 0x80000
  s_mov_b32 s14, 1024
  s_mov_b32 s15, 0x28000
  v_lshrrev_b32 v12, 3, v1
  buffer_store_format_xy v[2:3], v12, s[12:15], 0 idxen
  s_waitcnt vmcnt(0)
  v_mov_b32 v3, v4
  buffer_store_format_xy v[2:3], v12, s[12:15], 0 idxen
  s_waitcnt vmcnt(0)
  buffer_load_dword v8, v12, s[12:15], 0 idxen
  s_waitcnt vmcnt(0)
  v_mov_b32 v9, 0
"""
    r0, _ = run(body, a, b, target=target)

    def unorm(bits):
        v = f(bits)
        return 0 if math.isnan(v) else int(round(max(0.0, min(1.0, v)) * 65535))
    assert [int(x) for x in lo(r0)] == [unorm(x) | unorm(y) << 16 for x, y in zip(a, b)]
