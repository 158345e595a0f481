"""Random RDNA encodings (gfx1030 / gfx1100) for the opcode sweep: every opcode of every compute encoding,
operand fields drawn from the values real code uses (low VGPRs/SGPRs, NULL/M0/VCC/EXEC, inline constants,
literals, DPP16/DPP8/SDWA, GFX11 VOP3 DPP and VOPD) or fully random bits."""
from __future__ import annotations

import random
import struct

from pyhip.emu.isa import formats as R

SRC9 = [256, 257, 258, 259, 260, 262, 300, 511, 0, 1, 2, 3, 5, 101, 102, 104, 105, 106, 107, 108, 110, 124, 125,
        126, 127, 128, 129, 136, 192, 193, 200, 208, 235, 236, 237, 238, 239, 240, 241, 242, 243, 244, 245, 246,
        247, 248, 251, 252, 253, 254, 255, 255, 255, 249, 250, 233, 234]
SSRC8 = [0, 1, 2, 3, 4, 7, 100, 101, 102, 104, 105, 106, 107, 108, 111, 124, 125, 126, 127, 128, 129, 150, 192,
         193, 208, 235, 236, 237, 238, 240, 242, 248, 251, 252, 253, 255, 255, 230]
LITERALS = [0x3F800000, 0x12345678, 0xFFFFFFFF, 0x40, 0x41, 0x80000000, 0xBF800000, 0x3E22F983, 0x3C00, 0x4400,
            0xFFFFFFF0, 0x10, 0x7FFFFFFF, 0xC0800000, 0x3118, 0x40400000]
DPP_CTRL = [0x00, 0x1B, 0xE4, 0x4E, 0xB1, 0x101, 0x10F, 0x111, 0x118, 0x121, 0x12F, 0x140, 0x141, 0x150, 0x153,
            0x15F, 0x160, 0x161, 0x16F, 0x130, 0x142]


def encodings(fam: int) -> dict:
    """encoding → (opcode bits, number of base words)."""
    out = {e: (b, 1 if e in R.SHORT else 2) for e, (_, b) in R.OPCODE_FIELD[fam].items() if e not in ("VOPDX", "VOPDY")}
    out["MTBUF"] = (4, 2)
    out["MIMG"] = (8, 2)
    if fam == 11:
        out["VOPD"] = (9, 2)
    return out


def _src9(r):
    """A 9-bit source: half the time a VGPR (real code mostly reads VGPRs), else from the pool."""
    return r.choice(SRC9[:8]) if r.random() < 0.5 else r.choice(SRC9)


def _sgpr(r):
    return r.choice([0, 1, 2, 4, 6, 8, 10, 12, 20, 100, 102, 104, 106, 108, 110, 124, 125, 126, 127])


def _vgpr(r):
    return r.choice([0, 1, 2, 3, 4, 5, 6, 8, 10, 16, 31, 100, 250, 252, 254, 255])


def _put_op(fam, enc, op, w0, w1):
    if enc == "MTBUF" and fam == 10:
        return (w0 & ~(7 << 16)) | (op & 7) << 16, (w1 & ~(1 << 21)) | (op >> 3) << 21
    if enc == "VOPD":
        return (w0 & ~(0x1FF << 17)) | op << 17, w1
    if enc == "MIMG" and fam == 10:
        return (w0 & ~(0x7F << 18 | 1)) | (op & 0x7F) << 18 | op >> 7, w1
    shift, bits = R.OPCODE_FIELD[fam][enc]
    return (w0 & ~(((1 << bits) - 1) << shift)) | op << shift, w1


def _fixed(fam, enc):
    f = R.ENCODING_FIXED[fam][enc]
    top = {"VOP2": 0x80000000, "VOP1": 0xFE000000, "VOPC": 0xFE000000, "SOP1": 0xFF800000, "SOPC": 0xFF800000,
           "SOPP": 0xFF800000, "SOPK": 0xF0000000, "SOP2": 0xC0000000, "VOP3P": 0xFF000000}.get(enc, 0xFC000000)
    return f, top


def sample(rng: random.Random, fam: int, enc: str, op: int, mode: int) -> bytes:
    """mode 0: all non-opcode bits random; 1: operand fields from realistic pools with random flags;
    2: like 1 with modifiers/flags cleared."""
    fixed, top = _fixed(fam, enc)
    r = rng
    w = [r.getrandbits(32) for _ in range(3)]
    lit = r.choice(LITERALS) if r.random() < 0.8 else r.getrandbits(32)
    w0, w1 = (w[0] & ~top) | fixed, w[1]
    flags = mode == 1
    null = R.NULL if fam == 10 else R.NULL11
    ext = None
    if mode:
        if enc == "SOP2":
            w0 = fixed | _sgpr(r) << 16 | r.choice(SSRC8) << 8 | r.choice(SSRC8)
        elif enc == "SOPK":
            w0 = fixed | _sgpr(r) << 16 | r.choice([0, 1, 0x10, 0xFFFF, 0x8000, r.getrandbits(16), 0x1801, 0xF801, 0x2341])
        elif enc == "SOP1":
            w0 = fixed | _sgpr(r) << 16 | r.choice(SSRC8)
        elif enc == "SOPC":
            w0 = fixed | r.choice(SSRC8) << 8 | r.choice(SSRC8)
        elif enc == "SOPP":
            w0 = fixed | r.choice([0, 1, 2, 3, 7, 0x70, 0x7F, 0x91, 0x491, 0xC07F, 0x0F70, 0x3F70, 0xFC07, 0xFFFF,
                                   0xFFFC, 0xFFF, r.getrandbits(16)])
        elif enc == "SMEM":
            glc = 16 if fam == 10 else 14
            dlc = 14 if fam == 10 else 13
            w0 = fixed | (r.getrandbits(1) if flags else 0) << glc | (r.getrandbits(1) if flags else 0) << dlc \
                | _sgpr(r) << 6 | r.choice([0, 1, 2, 4, 8, 48, 52, 54])
            w1 = r.choice([0, 4, 0x10, 0xFFFFF, 0x1FFFFC, 0x100000]) | r.choice([null, null, 3, 7, 124, 125, 106]) << 25
        elif enc in ("VOP1", "VOP2", "VOPC"):
            w0 = fixed | r.choice(SRC9)
            if enc != "VOPC":
                w0 |= _vgpr(r) << 17
            if enc != "VOP1":
                w0 |= _vgpr(r) << 9
            s0 = w0 & 0x1FF
            if s0 == 250:
                ext = _vgpr(r) | r.choice(DPP_CTRL + [r.getrandbits(9)]) << 8 | (r.getrandbits(5) if flags else 0) << 18 \
                    | r.getrandbits(8) << 24
            elif s0 in (233, 234):
                ext = _vgpr(r) | r.getrandbits(24) << 8
            elif s0 == 249:
                ext = r.choice([_vgpr(r), _sgpr(r)]) | r.getrandbits(24) << 8
                if not flags:
                    ext &= ~(0x3F << 13) & ~(0x3 << 20) & ~(0x3 << 28)
        elif enc in ("VOP3", "VOP3P"):
            w0 = fixed | _vgpr(r) | (r.getrandbits(7) if flags else 0) << 8 | (r.getrandbits(1) if flags else 0) << 15
            if r.random() < 0.3:
                w0 = (w0 & ~(0x7F << 8)) | _sgpr(r) << 8
            src = _src9 if enc == "VOP3P" else (lambda r_: r_.choice(SRC9))    # WMMA needs VGPR A and B
            w1 = src(r) | src(r) << 9 | src(r) << 18 \
                | (r.getrandbits(5) if flags else (3 if enc == "VOP3P" else 0)) << 27
            if enc == "VOP3P" and not flags:
                w0 |= 1 << 14
            if fam == 11 and r.random() < 0.15:
                w1 = (w1 & ~0x1FF) | r.choice([250, 233, 234])
            if fam == 11 and (w1 & 0x1FF) in (250, 233, 234):
                ext = _vgpr(r) | (r.choice(DPP_CTRL) << 8 if (w1 & 0x1FF) == 250 else r.getrandbits(24) << 8) \
                    | r.getrandbits(8) << 24
        elif enc == "DS":
            w0 = fixed | (r.getrandbits(16) if r.random() < 0.7 else 0) | (r.getrandbits(1) if flags and r.random() < 0.2 else 0) << 17
            w1 = _vgpr(r) | _vgpr(r) << 8 | _vgpr(r) << 16 | _vgpr(r) << 24
        elif enc == "FLAT":
            seg = r.choice([0, 1, 2]) << (14 if fam == 10 else 16)
            off = r.choice([0, 4, 0x7FF, 0x800, 0xFFC, 0x1000, 0x1FFC, r.getrandbits(13)]) & (0xFFF if fam == 10 else 0x1FFF)
            w0 = fixed | seg | off
            if flags:
                w0 |= r.getrandbits(3) << (12 if fam == 10 else 13) if fam == 11 else (r.getrandbits(2) << 16 | r.getrandbits(1) << 12)
            w1 = _vgpr(r) | _vgpr(r) << 8 | r.choice([null, null, 0x7F, 0, 2, 4, 6, 10, 102, 106, 126, 124, 125]) << 16 \
                | _vgpr(r) << 24 | (r.getrandbits(1) if (flags or fam == 11) else 0) << 23
        elif enc == "MIMG":     # realistic DMASK/DIM/NSA shapes, random flags
            nsa = r.choice([0, 0, 1, 2, 3]) if fam == 10 else r.choice([0, 0, 1])
            dm, dim = r.choice([1, 3, 7, 15, 0, 2, 4, 8]), r.randrange(8)
            bit = (lambda p: int(flags and r.random() < p))
            vd, va = _vgpr(r), _vgpr(r)
            sr, ss = r.choice([0, 1, 2, 4, 25, 27, 31]), r.choice([0, 2, 3, 25, 27, 31])
            if fam == 10:
                w0 = fixed | dm << 8 | dim << 3 | nsa << 1 | bit(.1) << 16 | bit(.2) << 12 | bit(.2) << 13 \
                    | bit(.2) << 25 | bit(.2) << 7 | bit(.1) << 17 | bit(.1) << 15
                w1 = va | vd << 8 | sr << 16 | ss << 21 | bit(.2) << 30 | bit(.2) << 31
            else:
                w0 = fixed | dm << 8 | dim << 2 | nsa | bit(.2) << 16 | bit(.2) << 17 | bit(.2) << 7 | bit(.2) << 12 \
                    | bit(.2) << 13 | bit(.2) << 14 | bit(.1) << 15
                w1 = va | vd << 8 | sr << 16 | bit(.1) << 21 | bit(.1) << 22 | ss << 26
        else:   # MUBUF / MTBUF
            w0 = fixed | r.choice([0, 4, 0xFFF, r.getrandbits(12)])
            w1 = _vgpr(r) | _vgpr(r) << 8 | r.choice([0, 1, 2, 4, 8, 31]) << 16 \
                | r.choice([0, 1, 4, 100, 124, 125, 128, 129, 0x7F, 0x80, 0xC1, 0xF0, 0xFF]) << 24
            if fam == 10:
                w0 |= r.getrandbits(2) << 12 | (r.getrandbits(2) if flags else 0) << 14
                w1 |= (r.getrandbits(2) if flags else 0) << 22
            else:
                w0 |= (r.getrandbits(3) if flags else 0) << 12
                w1 |= r.getrandbits(2) << 22 | (r.getrandbits(1) if flags else 0) << 21
            if enc == "MTBUF":
                w0 |= r.choice([1, 22, 63, 64, 77, r.getrandbits(7)]) << 19
        if enc == "VOPD":
            w0 = fixed | r.choice([256, 257, 258, 259, 2, 106, 128, 240, 255]) | r.choice([0, 4, 5, 6, 7]) << 9
            w1 = r.choice([256, 257, 258, 259, 2, 106, 128, 240, 255]) | r.choice([0, 4, 5, 6, 7]) << 9 \
                | r.getrandbits(7) << 17 | _vgpr(r) << 24
    w0, w1 = _put_op(fam, enc, op, w0, w1)
    words = [w0] if enc in R.SHORT else [w0, w1]
    if ext is not None:
        words.append(ext)
    if enc == "MIMG":       # NSA address dwords (used when the NSA field asks for them)
        words += [r.choice([0x04030201, 0x0B0A0908, 0x100F0E0D, r.getrandbits(32)]) for _ in range(3)]
    words.append(lit)       # a literal is appended; callers trim to the decoded size
    return struct.pack(f"<{len(words)}I", *words)
