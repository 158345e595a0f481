"""Operands and checks the per-instruction ISA tests (test_isa_alu.py, test_isa_memory.py, test_isa_matrix.py)
share: random operands with the special values mixed in, drawn from ``RNG``, which each test seeds from its own
id (:func:`seed`), and the bit-exact comparison (any NaN matching any NaN)."""
import math
import zlib

import numpy as np

from isa_ref import is_nan, to_float

RNG = np.random.default_rng(0)


def seed(nodeid: str):
    """Seed the operands of the test ``nodeid`` (reproducible under any test order or worker); the generator."""
    global RNG
    RNG = np.random.default_rng(zlib.crc32(nodeid.encode()))
    return RNG


TARGETS = ["gfx90a", "gfx942"]


U16, U32, U64 = np.uint16, np.uint32, np.uint64


F16_SPECIAL = [0x0000, 0x8000, 0x7C00, 0xFC00, 0x7E00, 0x0001, 0x8001, 0x03FF, 0x83FF, 0x0400, 0x7BFF, 0xFBFF,
               0x3C00, 0xBC00, 0x3800, 0x5BFF]


F32_SPECIAL = [0, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 1, 0x80000001, 0x007FFFFF, 0x00800000,
               0x7F7FFFFF, 0xFF7FFFFF, 0x3F800000, 0xBF800000, 0x3F000000]


I32_SPECIAL = [0, 1, 0xFFFFFFFF, 0x80000000, 0x7FFFFFFF, 0xFFFF, 0x8000, 0x7FFF, 0xFF, 0x80, 0x10000]


def f16_operand():
    """64 f16 bit patterns: specials, normals over the whole range, denormals."""
    v = np.array([int(x) for x in np.float16(RNG.standard_normal(64) * 2.0 ** RNG.integers(-14, 15, 64)).view(U16)])
    v[RNG.integers(0, 64, 8)] = RNG.integers(1, 0x400, 8) | (RNG.integers(0, 2, 8) << 15)      # denormals
    perm = RNG.permutation(64)[:len(F16_SPECIAL)]
    v[perm] = F16_SPECIAL
    return v.astype(np.uint64)


def f32_operand():
    v = np.array(RNG.standard_normal(64).astype(np.float32) * np.float32(2.0) ** RNG.integers(-30, 30, 64).astype(np.float32))
    bits = v.view(U32).astype(np.uint64)
    bits[RNG.integers(0, 64, 6)] = RNG.integers(1, 0x800000, 6)                                  # denormals
    bits[RNG.permutation(64)[:len(F32_SPECIAL)]] = F32_SPECIAL
    return bits


def i32_operand():
    v = RNG.integers(0, 2 ** 32, 64, dtype=np.uint64)
    v[RNG.permutation(64)[:len(I32_SPECIAL)]] = I32_SPECIAL
    return v


def with_junk(low16):
    """A 64-bit operand: the 16-bit value in bits 15:0, random bits above (they must not leak in)."""
    return (np.asarray(low16, np.uint64) & U64(0xFFFF)) | (RNG.integers(0, 2 ** 48, 64, dtype=np.uint64) << U64(16))


def check(got, want, width):
    """Bit-exact, except that any NaN matches any NaN."""
    got, want = [int(x) for x in got], [int(x) for x in want]
    bad = [(i, hex(g), hex(w)) for i, (g, w) in enumerate(zip(got, want))
           if not (g == w or (is_nan(g, width) and is_nan(w, width)))]
    assert not bad, f"{len(bad)} lanes differ (lane, got, want): {bad[:6]}"


def h(bits):
    return to_float(int(bits) & 0xFFFF, 16)


def f(bits):
    return to_float(int(bits) & 0xFFFFFFFF, 32)


def flushed(x, width, on):
    tiny = {16: 2.0 ** -14, 32: 2.0 ** -126, 64: 2.0 ** -1022}[width]
    return math.copysign(0.0, x) if on and x != 0 and abs(x) < tiny else x
