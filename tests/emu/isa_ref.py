"""An independent reference model for the per-instruction differential tests: scalar Python (struct, exact
rationals) written from the Vega / CDNA ISA documents, one element at a time, sharing no code with the
emulator.  Rounding is to nearest even; ``flush`` models FLOAT_DENORM_MODE = 0 (denormal inputs and results
become zeros of the same sign)."""
from __future__ import annotations

import math
import struct
from fractions import Fraction

import numpy as np

F16_MAX = 65504.0
_FMT = {16: ("<e", "<H", 0x7C00, 0x7E00, 15, 2.0 ** -14), 32: ("<f", "<I", 0x7F800000, 0x7FC00000, 31, 2.0 ** -126),
        64: ("<d", "<Q", 0x7FF0000000000000, 0x7FF8000000000000, 63, 2.0 ** -1022)}


def to_float(bits: int, width: int) -> float:
    ff, fi, *_ = _FMT[width]
    return struct.unpack(ff, struct.pack(fi, bits))[0]


def round_bits(x, width: int, flush: bool = False) -> int:
    """float or Fraction → bits of the nearest ``width``-bit float (ties to even; overflow → ±Inf)."""
    ff, fi, inf, qnan, sbit, tiny = _FMT[width]
    if isinstance(x, float) and math.isnan(x):
        return qnan
    if isinstance(x, float) and math.isinf(x):
        return inf | (1 << sbit if x < 0 else 0)
    fr = Fraction(x)
    neg = fr < 0 or (fr == 0 and isinstance(x, float) and math.copysign(1, x) < 0)
    mag = abs(fr)
    mant, emin, emax = {16: (10, -14, 15), 32: (23, -126, 127), 64: (52, -1022, 1023)}[width]
    if mag == 0:
        return (1 << sbit) if neg else 0
    e = max(mag.numerator.bit_length() - mag.denominator.bit_length(), emin)
    while Fraction(2) ** e > mag and e > emin:
        e -= 1
    while Fraction(2) ** (e + 1) <= mag:
        e += 1
    e = max(e, emin)
    q = mag / Fraction(2) ** (e - mant)                      # the significand in units of the last place
    n = q.numerator // q.denominator
    rem = q - n
    if rem > Fraction(1, 2) or (rem == Fraction(1, 2) and n % 2 == 1):
        n += 1
    value = Fraction(n) * Fraction(2) ** (e - mant)
    if value >= Fraction(2) ** (emax + 1):
        return inf | (1 << sbit if neg else 0)
    if flush and value < Fraction(2) ** emin:
        return (1 << sbit) if neg else 0
    bits = struct.unpack(fi, struct.pack(ff, float(value) if not neg else -float(value)))[0]
    return bits


def is_nan(bits: int, width: int) -> bool:
    _, _, inf, *_ = _FMT[width]
    return (bits & ((1 << (width - 1)) - 1)) > inf


def flush_in(x: float, width: int) -> float:
    tiny = _FMT[width][5]
    return math.copysign(0.0, x) if x != 0 and abs(x) < tiny else x


def exact(fn, *xs):
    """Apply ``fn`` to exact rationals of finite inputs; IEEE specials through Python floats."""
    if any(math.isnan(x) or math.isinf(x) for x in xs):
        try:
            return fn(*xs)
        except (ZeroDivisionError, OverflowError, ValueError):
            return math.nan
    r = fn(*(Fraction(x) for x in xs))
    if r == 0:
        # an exact zero: its sign as IEEE gives it (-0 * y, -0 + -0 keep the sign; x - x is +0), which
        # double arithmetic on these operands reproduces when it also gets zero
        z = fn(*xs)
        return z if z == 0 else 0.0
    return r


def fma(p: float, q: float, r: float):
    """p * q + r rounded once: exact rationals for finite operands; with specials, an infinite r and a finite
    product gives r (the product is not rounded first: a finite product beyond the format's range does not
    become an infinity that meets -r)."""
    if not any(math.isnan(x) for x in (p, q, r)) and math.isinf(r) and math.isfinite(p) and math.isfinite(q):
        return r
    return exact(lambda a, b, c: a * b + c, p, q, r)


def fmax_ieee(a: float, b: float) -> float:
    if math.isnan(a):
        return b
    if math.isnan(b):
        return a
    if a == b == 0:
        return a if math.copysign(1, a) > 0 else b
    return max(a, b)


def fmin_ieee(a: float, b: float) -> float:
    if math.isnan(a):
        return b
    if math.isnan(b):
        return a
    if a == b == 0:
        return a if math.copysign(1, a) < 0 else b
    return min(a, b)


def sext(v: int, bits: int) -> int:
    v &= (1 << bits) - 1
    return v - (1 << bits) if v >> (bits - 1) else v


# ---- 8-bit floats of gfx942 (FNUZ: no infinities, no negative zero, 0x80 = NaN) -------------------------------
def fp8_value(byte: int, mant_bits: int, bias: int) -> float:
    if byte == 0x80:
        return math.nan
    sign = -1.0 if byte & 0x80 else 1.0
    e = (byte >> mant_bits) & ((1 << (7 - mant_bits)) - 1)
    m = byte & ((1 << mant_bits) - 1)
    if e == 0:
        return sign * m * 2.0 ** (1 - bias - mant_bits)
    return sign * (1 + m / 2 ** mant_bits) * 2.0 ** (e - bias)


def array_bits(values, width: int) -> np.ndarray:
    return np.array(values, dtype={16: np.uint16, 32: np.uint32, 64: np.uint64}[width])
