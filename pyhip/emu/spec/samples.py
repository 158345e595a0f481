"""Decoded sample instructions and random wave states, for checking the semantics backends against each other
(tests/emu/test_spec_*.py): every opcode-table entry's llvm-mc sample, with its operand and modifier fields
varied at random (the same decoded Instruction goes to every engine, so a variation need not be a valid
encoding), run on random register contents rich in special values."""
from __future__ import annotations

import copy
from types import SimpleNamespace

import numpy as np

TARGETS = ("gfx90a", "gfx942", "gfx1030", "gfx1100")
F32_SPECIAL = [0x00000000, 0x80000000, 0x3F800000, 0xBF800000, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00001,
               0x7F800001, 0x7FA00000, 0x00000001, 0x807FFFFF, 0x00800000, 0x7F7FFFFF, 0x3F000000, 0x4B000000,
               0x4B800001, 0xCF000000, 0x4F800000, 0x3EFFFFFF, 0x3F7FFFFF, 0x42FE0000]
F16_SPECIAL = [0x0000, 0x8000, 0x3C00, 0xBC00, 0x7C00, 0xFC00, 0x7E00, 0x7D00, 0x0001, 0x83FF, 0x0400, 0x7BFF,
               0x3800, 0x6400, 0x3BFF]
F64_SPECIAL = [0x0, 0x8000000000000000, 0x3FF0000000000000, 0xBFF0000000000000, 0x7FF0000000000000,
               0xFFF0000000000000, 0x7FF8000000000000, 0x7FF0000000000001, 0x0000000000000001, 0x000FFFFFFFFFFFFF,
               0x0010000000000000, 0x7FEFFFFFFFFFFFFF, 0x4330000000000000, 0x43E0000000000000, 0xC3E0000000000000,
               0x41F0000000000000, 0x3FE0000000000000]


def sample_instructions(target: str, names=None):
    """(name, Instruction) for every opcode-table sample of ``target`` whose mnemonic is in ``names``."""
    from ..isa.decoder import decode, table_for
    from ..isa.families import opcodes
    table_for(target)                   # DecodeError for a processor without tables
    out = []
    entries = [(enc, op, e) for enc, ops in opcodes(target).items() for op, e in ops.items()]
    for enc, op, (name, _, _, sample) in entries:
        if names is not None and name not in names:
            continue
        try:
            inst = decode(bytes.fromhex(sample) + bytes(8), target, base=0x1000)[0]
        except Exception:  # noqa: BLE001 - a sample this decoder does not take
            continue
        if inst.name == name:
            out.append((name, inst))
    return out


SRC_CODES = [256, 257, 258, 259, 261, 262, 0, 1, 3, 106, 124, 126, 128, 129, 136, 192, 193, 200, 208, 240, 241, 242,
             243, 244, 245, 246, 247, 248, 255, 253]


def vary(inst, rng, lanes: int):
    """A copy of ``inst`` with its operands and VALU modifiers chosen at random."""
    v = copy.deepcopy(inst)
    f = v.fields
    enc = v.encoding
    if enc in ("VOP1", "VOP2", "VOPC", "VOP3", "VOP3B", "VOP3P"):
        for key in ("src0", "src1", "src2"):
            if key in f:
                c = int(rng.choice(SRC_CODES))
                if enc != "VOP3P" or rng.random() < 0.7:
                    f[key] = c
        if "vsrc1" in f:
            f["vsrc1"] = int(rng.integers(0, 8))
        if "vdst" in f and enc != "VOPC" and rng.random() < 0.5:
            f["vdst"] = int(rng.integers(0, 8))
        if enc in ("VOP3", "VOP3P"):
            for key, hi in (("abs", 8), ("neg", 8), ("clamp", 2), ("omod", 4), ("opsel", 16), ("neg_hi", 8)):
                if key in f and rng.random() < 0.5:
                    f[key] = int(rng.integers(0, hi))
        if 255 in (f.get("src0"), f.get("src1"), f.get("src2")) and v.literal is None:
            v.literal = int(rng.choice([0x3F800000, 0x7FC00000, 0x12345678, 0xFFFFFFFF, 0x00000007, 0x80000000]))
        if v.sdwa is not None:
            s = v.sdwa
            for key, hi in (("src0_sel", 7), ("src1_sel", 7), ("dst_sel", 7), ("dst_unused", 3), ("src0_sext", 2),
                            ("src1_sext", 2), ("src0_abs", 2), ("src0_neg", 2), ("src1_abs", 2), ("src1_neg", 2),
                            ("clamp", 2), ("omod", 4)):
                if key in s and rng.random() < 0.6:
                    s[key] = int(rng.integers(0, hi))
            if "src0" in f and f["src0"] == 255:
                f["src0"] = 256
        if v.dpp is not None:
            d = v.dpp
            if "dpp_ctrl" in d:
                ctrls = [0x1B, 0xE4, 0x39, 0x101, 0x10F, 0x111, 0x118, 0x121, 0x12F, 0x140, 0x141]
                if "fi" in d:
                    ctrls += [0x150, 0x15F, 0x160, 0x167]
                else:
                    ctrls += [0x130, 0x134, 0x138, 0x13C, 0x142, 0x143]
                d["dpp_ctrl"] = int(rng.choice(ctrls))
                d["row_mask"] = int(rng.choice([0xF, 0x5, 0xA, 0x1]))
                d["bank_mask"] = int(rng.choice([0xF, 0x3, 0xC]))
            elif "sel" in d:
                d["sel"] = [int(x) for x in rng.integers(0, 8, 8)]
            for key in ("bound_ctrl", "fi", "src0_abs", "src0_neg", "src1_abs", "src1_neg"):
                if key in d:
                    d[key] = int(rng.integers(0, 2))
            if f.get("src0", 256) < 256:
                f["src0"] = 256
    elif enc in ("SOP1", "SOP2", "SOPC", "SOPK"):
        scodes = [0, 1, 2, 4, 106, 124, 126, 128, 129, 160, 192, 193, 208, 240, 242, 255]
        for key in ("ssrc0", "ssrc1"):
            if key in f and rng.random() < 0.7:
                f[key] = int(rng.choice(scodes))
        if "sdst" in f and rng.random() < 0.5 and f["sdst"] < 100:
            f["sdst"] = int(rng.choice([2, 4, 6, 8]))
        if 255 in (f.get("ssrc0"), f.get("ssrc1")) and v.literal is None:
            v.literal = int(rng.choice([0x3F800000, 0x12345678, 0xFFFFFFFF, 7, 0x80000000, 0x0000FFFF]))
    return v


def _values32(rng, shape):
    special = np.array(F32_SPECIAL + [x | (y << 16) for x, y in zip(F16_SPECIAL, F16_SPECIAL[::-1])], dtype=np.uint32)
    out = rng.integers(0, 1 << 32, shape, dtype=np.uint64).astype(np.uint32)
    pick = rng.random(shape) < 0.5
    out[pick] = rng.choice(special, int(pick.sum()))
    small = rng.random(shape) < 0.15
    out[small] = rng.integers(0, 70, int(small.sum())).astype(np.uint32)
    return out


def random_state(rng, K, n_waves: int = 3, nvgpr: int = 264):
    """A WaveState of ``n_waves`` waves with random registers (special float values often), EXEC full in the
    first wave and random in the others."""
    from ..state import EXEC, WaveState
    lanes = K.lanes
    st = WaveState(n_waves, nvgpr, 1, 64, 0, lanes)
    st.vgpr[:] = _values32(rng, st.vgpr.shape)
    # 64-bit special values in some register pairs
    rows = np.arange(0, nvgpr - 1, 4)
    vals = rng.choice(np.array(F64_SPECIAL, dtype=np.uint64), (len(rows), n_waves, lanes))
    pick = rng.random((len(rows), n_waves, lanes)) < 0.4
    st.vgpr[rows] = np.where(pick, (vals & np.uint64(0xFFFFFFFF)).astype(np.uint32), st.vgpr[rows])
    st.vgpr[rows + 1] = np.where(pick, (vals >> np.uint64(32)).astype(np.uint32), st.vgpr[rows + 1])
    st.sgpr[:] = _values32(rng, (n_waves, 128))
    for w in range(n_waves):
        if w == 0:
            st.sgpr[w, EXEC] = 0xFFFFFFFF
            st.sgpr[w, EXEC + 1] = 0xFFFFFFFF if lanes == 64 else 0
        else:
            st.sgpr[w, EXEC] = rng.integers(0, 1 << 32)
            st.sgpr[w, EXEC + 1] = rng.integers(0, 1 << 32) if lanes == 64 else 0
    st.scc[:] = rng.integers(0, 2, n_waves)
    st.mode = int(rng.choice([0x3F0, 0x0F0, 0x300, 0x000, 0x2F0, 0x1F0, 0x3C0, 0x330]))
    st.pc[:] = 0x1000
    return st


def snapshot(st):
    return (st.vgpr.copy(), st.sgpr.copy(), st.scc.copy(), st.mode, st.pc.copy())


def context(target: str, lanes: int | None = None):
    from ..engine import KernelContext, isa_family
    if lanes is None:
        lanes = 64 if isa_family(target) == 9 else 32
    return KernelContext(SimpleNamespace(memory=None), target, 0, lanes)
