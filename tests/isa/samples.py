"""Random GFX9 encodings for the opcode sweep: every opcode of every encoding, with operand fields drawn
from a mix of the values real code uses (low VGPRs/SGPRs, special registers, inline constants, literals,
DPP/SDWA) and fully random bits."""
from __future__ import annotations

import random
import struct

# encoding → (fixed bits of word 0, opcode shift, opcode bits, number of base words)
ENCODINGS = {
    "SOP2": (0x2 << 30, 23, 7, 1), "SOPK": (0xB << 28, 23, 5, 1), "SOP1": (0x17D << 23, 8, 8, 1),
    "SOPC": (0x17E << 23, 16, 7, 1), "SOPP": (0x17F << 23, 16, 7, 1), "SMEM": (0x30 << 26, 18, 8, 2),
    "VOP2": (0, 25, 6, 1), "VOP1": (0x3F << 25, 9, 8, 1), "VOPC": (0x3E << 25, 17, 8, 1),
    "VOP3": (0x34 << 26, 16, 10, 2), "VOP3P": (0x1A7 << 23, 16, 7, 2), "DS": (0x36 << 26, 17, 8, 2),
    "FLAT": (0x37 << 26, 18, 7, 2), "MUBUF": (0x38 << 26, 18, 7, 2), "MTBUF": (0x3A << 26, 15, 4, 2),
    "MIMG": (0x3C << 26, 18, 7, 2),
}
SRC9 = [256, 257, 258, 259, 260, 262, 300, 511, 0, 1, 2, 3, 5, 101, 102, 103, 104, 106, 107, 108, 110, 124, 125,
        126, 127, 128, 129, 136, 192, 193, 200, 208, 235, 236, 237, 238, 239, 240, 241, 242, 243, 244, 245, 246,
        247, 248, 251, 252, 253, 254, 255, 255, 255, 249, 250]
SSRC8 = [0, 1, 2, 3, 4, 7, 100, 101, 102, 103, 104, 106, 107, 108, 111, 124, 125, 126, 127, 128, 129, 150, 192,
         193, 208, 235, 236, 237, 238, 239, 240, 242, 248, 251, 252, 253, 254, 255, 255, 209, 230]
LITERALS = [0x3F800000, 0x12345678, 0xFFFFFFFF, 0x40, 0x41, 0x80000000, 0xBF800000, 0x3E22F983, 0x3C00, 0x4400,
            0xFFFFFFF0, 0x10, 0x7FFFFFFF, 0xC0800000, 0x3118, 0x40400000]


def _src(rng, n=9):
    return rng.choice(SRC9) if n == 9 else rng.choice(SSRC8)


def _sgpr(rng):
    return rng.choice([0, 1, 2, 4, 6, 8, 10, 12, 20, 100, 102, 104, 106, 108, 110, 124, 125, 126, 127])


def _vgpr(rng):
    return rng.choice([0, 1, 2, 3, 4, 5, 6, 8, 10, 16, 31, 100, 250, 252, 254, 255])


def sample(rng: random.Random, enc: str, op: int, mode: int) -> bytes:
    """mode 0: all non-opcode bits random; 1: operand fields from the realistic pools; 2: like 1 with
    modifiers/flags cleared."""
    fixed, shift, bits, nwords = ENCODINGS[enc]
    mask = ((1 << bits) - 1) << shift
    top = {1: 0xFFFFFFFF}.get(0, 0)
    if enc == "VOP2":
        top = 1 << 31 | 0x3F << 25
    elif enc in ("VOP1", "VOPC"):
        top = 0x7F << 25
    elif enc in ("SOP1", "SOPC", "SOPP", "VOP3P"):
        top = 0x1FF << 23
    elif enc == "SOPK":
        top = 0xF << 28
    elif enc == "SOP2":
        top = 0x3 << 30
    else:
        top = 0x3F << 26
    w = [rng.getrandbits(32) for _ in range(3)]
    lit = rng.choice(LITERALS) if rng.random() < 0.8 else rng.getrandbits(32)
    w0 = (w[0] & ~top & ~mask) | fixed | (op << shift)
    w1 = w[1]
    if mode:
        r = rng
        flags = mode == 1
        if enc == "SOP2":
            w0 = fixed | op << 23 | _sgpr(r) << 16 | _src(r, 8) << 8 | _src(r, 8)
        elif enc == "SOPK":
            w0 = fixed | op << 23 | _sgpr(r) << 16 | r.choice([0, 1, 0x10, 0xFFFF, 0x8000, r.getrandbits(16), 0x1801, 0xF801, 0x2341])
        elif enc == "SOP1":
            w0 = fixed | op << 8 | _sgpr(r) << 16 | _src(r, 8)
        elif enc == "SOPC":
            w0 = fixed | op << 16 | _src(r, 8) << 8 | _src(r, 8)
        elif enc == "SOPP":
            w0 = fixed | op << 16 | r.choice([0, 1, 2, 3, 0x70, 0x7F, 0xC07F, 0x0F70, 0x3F70, 0xFFFF, 0xFFFC, r.getrandbits(16)])
        elif enc == "SMEM":
            imm = r.getrandbits(1)
            w0 = fixed | op << 18 | r.getrandbits(1) << 17 | (r.getrandbits(1) if flags else 0) << 16 \
                | (r.getrandbits(1) if flags else 0) << 14 | _sgpr(r) << 6 | r.choice([0, 1, 2, 4, 8, 48, 52, 54]) | imm << 17
            w1 = r.choice([0, 4, 0x10, 0xFFFFF, 0x1FFFFC, 0x100000]) | _sgpr(r) << 25
        elif enc in ("VOP1", "VOP2", "VOPC"):
            w0 = fixed | op << shift | _src(r)
            if enc != "VOPC":
                w0 |= _vgpr(r) << 17
            if enc != "VOP1":
                w0 |= _vgpr(r) << 9
            if w0 & 0x1FF == 250:       # DPP
                ctrl = r.choice([0x00, 0x1B, 0xE4, 0x4E, 0xB1, 0x101, 0x10F, 0x111, 0x118, 0x121, 0x12F, 0x130,
                                 0x134, 0x138, 0x13C, 0x140, 0x141, 0x142, 0x143, 0x150, r.getrandbits(9)])
                w1 = _vgpr(r) | ctrl << 8 | (r.getrandbits(5) if flags else 0) << 19 | r.getrandbits(8) << 24
            elif w0 & 0x1FF == 249:     # SDWA
                w1 = r.choice([_vgpr(r), _sgpr(r)]) | r.getrandbits(24) << 8
                if not flags:
                    w1 &= ~(0x3F << 13) & ~(0x3 << 20) & ~(0x3 << 28)
            else:
                w1 = lit
        elif enc in ("VOP3", "VOP3P"):
            w0 = fixed | op << shift | _vgpr(r) | (r.getrandbits(7) if flags else 0) << 8 | (r.getrandbits(1) if flags else 0) << 15
            if r.random() < 0.3:
                w0 = (w0 & ~(0x7F << 8)) | _sgpr(r) << 8
            w1 = _src(r) | _src(r) << 9 | _src(r) << 18 | (r.getrandbits(5) if flags else (3 if enc == "VOP3P" else 0)) << 27
            if enc == "VOP3P" and not flags:
                w0 |= 1 << 14
        elif enc == "DS":
            w0 = fixed | op << 17 | (r.getrandbits(16) if r.random() < 0.7 else 0) | (r.getrandbits(1) if flags and r.random() < 0.2 else 0) << 16
            w1 = _vgpr(r) | _vgpr(r) << 8 | _vgpr(r) << 16 | _vgpr(r) << 24
        elif enc == "FLAT":
            seg = r.choice([0, 1, 2])
            w0 = fixed | op << 18 | seg << 14 | r.choice([0, 4, 0x7FF, 0x800, 0xFFC, 0x1000, 0x1FFC, r.getrandbits(13)]) \
                | (r.getrandbits(2) if flags else 0) << 16 | (r.getrandbits(1) if flags else 0) << 25 \
                | (r.getrandbits(1) if flags and r.random() < 0.3 else 0) << 13
            w1 = _vgpr(r) | _vgpr(r) << 8 | r.choice([0x7F, 0x7F, 0, 2, 4, 6, 10, 102, 106, 126, 124]) << 16 | _vgpr(r) << 24 \
                | (r.getrandbits(1) if flags else 0) << 23
        elif enc == "MIMG":
            w0 = fixed | op << 18 | r.getrandbits(4) << 8 | (r.getrandbits(1) if r.random() < 0.4 else 0) << 12
            if flags:
                w0 |= (r.getrandbits(7) << 1 | r.getrandbits(1) << 25) & ~(0x7F << 1) | r.getrandbits(6) << 12 \
                    | r.getrandbits(1) << 7 | r.getrandbits(1) << 25
            w1 = _vgpr(r) | _vgpr(r) << 8 | r.choice([0, 1, 2, 3, 4, 8, 24, 27]) << 16 \
                | (r.choice([0, 1, 2, 3, 27]) if op >= 32 else 0) << 21 | (r.getrandbits(1) if flags else 0) << 31
        else:   # MUBUF / MTBUF
            w0 = fixed | op << shift | r.choice([0, 4, 0xFFF, r.getrandbits(12)]) | r.getrandbits(2) << 12
            if enc == "MUBUF":
                w0 |= (r.getrandbits(4) if flags else 0) << 14
            else:
                w0 |= (r.getrandbits(2) if flags else 0) << 14 | r.getrandbits(7) << 19
            w1 = _vgpr(r) | _vgpr(r) << 8 | r.choice([0, 1, 2, 4, 8, 31]) << 16 | r.choice([0, 1, 4, 100, 124, 128, 129, 0x7F, 0x80, 0xC1, 0xF0, 0xFF]) << 24 \
                | (r.getrandbits(1) if flags else 0) << 23 | (r.getrandbits(1) if flags and enc == "MTBUF" else 0) << 22
    words = [w0] if nwords == 1 else [w0, w1]
    if nwords == 1 and (w0 & 0x1FF) in (249, 250) and enc in ("VOP1", "VOP2", "VOPC"):
        words.append(w1)
    words.append(lit)       # a literal is appended; callers trim to the decoded size
    return struct.pack(f"<{len(words)}I", *words)
