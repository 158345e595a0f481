"""What every lowering function shares: the record of one lowered instruction and source descriptors."""
from __future__ import annotations

from ..operands import constant
from .layout import SRC_EXECZ, SRC_K, SRC_S, SRC_SCC, SRC_V, SRC_VCCZ


class Unsupported(Exception):
    """The native engine has no handler for this instruction (form); its kernels run on the numpy engine."""


def sdesc(code: int, lit, kind: str = "b32", wide: bool = False):
    """(descriptor, constant low word, constant high word) of a raw source operand code, read as the numpy
    readers read it: ``sreader``/``vreader`` (32 bits) or ``sreader64``/``vreader64`` (``wide``)."""
    if code >= 256:
        return SRC_V | (code - 256), 0, 0
    c = constant(code, lit, kind)
    if c is not None:
        c &= (1 << 64) - 1 if wide else 0xFFFFFFFF
        return SRC_K, c & 0xFFFFFFFF, c >> 32
    if code == 251:
        return SRC_VCCZ, 0, 0
    if code == 252:
        return SRC_EXECZ, 0, 0
    if code == 253:
        return SRC_SCC, 0, 0
    if code < 128:
        if wide and code > 126:
            raise Unsupported("a 64-bit source at the last SGPR")
        return SRC_S | code, 0, 0
    raise Unsupported(f"source operand {code}")


class Rec:
    """One lowered instruction: the NInst fields, an optional modifier record, what it touches."""

    __slots__ = ("op", "flags", "d", "sd", "s", "k", "khi", "x", "imm", "a0", "vmax", "target",
                 "indirect", "ends")

    def __init__(self):
        self.op = None
        self.flags = 0
        self.d = self.sd = 0
        self.s = [0, 0, 0]
        self.k = [0, 0, 0]
        self.khi = [0, 0, 0]
        self.x = 0
        self.imm = 0
        self.a0 = 0
        self.vmax = 0             # VGPR rows used (the highest touched + 1)
        self.target = None        # branch target address
        self.indirect = False     # s_setpc / s_swappc: control goes anywhere
        self.ends = False         # no fall-through (s_endpgm, s_branch, s_setpc, ...)

    def src(self, i, desc, lo, hi):
        self.s[i], self.k[i], self.khi[i] = desc, lo, hi

    def touch(self, rows: int):
        if rows > self.vmax:
            self.vmax = rows
