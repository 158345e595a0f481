"""Every gfx90a / gfx942 matrix instruction the emulator executes, against the register layouts AMD's matrix
instruction calculator prints (tests/emu/data/mfma_layouts.json.zst, from tools/gen_mfma_layouts.py): random
A, B, C (and, for the sparse v_smfmac_*, random 2-of-4 compression indices) are placed by the calculator's
layout, the instruction (assembled by llvm-mc-19) runs on one emulated wave, and every D field must equal
A·B + C computed with numpy.  Inputs are small multiples of powers of two so every product and sum is exact
in every format: the check is about where each value lives, bit for bit."""
import functools
import json
import re
import subprocess
from pathlib import Path

import numpy as np
import pytest
import zstandard

from pyhip.emu.engine import KernelContext
from pyhip.emu.isa.decoder import decode_one
from pyhip.emu.semantics import SEMANTICS, load_all
from pyhip.emu.state import WaveState

from asmkit import engine, run_rows  # noqa: F401 (engine: a fixture)
from conftest import require_tool

DATA = Path(__file__).parent / "data" / "mfma_layouts.json.zst"
LAYOUTS = json.loads(zstandard.ZstdDecompressor().decompress(DATA.read_bytes()))
RNG = np.random.default_rng(77)
A_REG, B_REG, K_REG, D_REG = 0, 8, 16, 32      # C is read from the D registers


def _kinds(name):
    """(A kind, B kind, accumulator kind) from the mnemonic."""
    m = re.search(r"_(fp8|bf8)_(fp8|bf8)$", name)
    if m:
        return m.group(1), m.group(2), "f32"
    for key, kind in (("xf32", "xf32"), ("bf16", "bf16"), ("f16", "f16"), ("i8", "i8"), ("f64", "f64")):
        if key in name.split("_", 3)[-1]:
            return kind, kind, "i32" if kind == "i8" else ("f64" if kind == "f64" else "f32")
    return "f32", "f32", "f32"


def _values(kind, shape):
    """Random values exactly representable in ``kind`` whose products and sums stay exact."""
    if kind == "i8":
        return RNG.integers(-128, 128, shape).astype(np.float64)
    if kind in ("fp8", "bf8"):
        return RNG.integers(-6, 7, shape) / 4.0                 # multiples of 1/4 up to 1.5: exact in E4M3/E5M2
    return RNG.integers(-64, 65, shape) / 8.0                   # exact in f16, bf16, xf32, f32, f64


def _encode(kind, v):
    """A value → its bits in ``kind``."""
    if kind in ("f32", "xf32"):
        return int(np.float32(v).view(np.uint32))
    if kind == "f64":
        return int(np.float64(v).view(np.uint64))
    if kind == "f16":
        return int(np.float16(v).view(np.uint16))
    if kind == "bf16":
        return int(np.float32(v).view(np.uint32)) >> 16
    if kind == "i8":
        return int(v) & 0xFF
    mant, bias = (3, 8) if kind == "fp8" else (2, 16)           # gfx942 FNUZ formats, normal values only
    if v == 0:
        return 0
    m, e = np.frexp(abs(v))                                     # v = m * 2^e, 0.5 <= m < 1
    code = ((int(e) - 1 + bias) << mant) | int(round((float(m) * 2 - 1) * (1 << mant)))
    return code | (0x80 if v < 0 else 0)


def _put(regs, gpr, bit, width, lane, bits):
    if width == 64:
        regs[gpr, lane] = bits & 0xFFFFFFFF
        regs[gpr + 1, lane] = bits >> 32
    else:
        mask = ((1 << width) - 1) << bit
        regs[gpr, lane] = (int(regs[gpr, lane]) & ~mask & 0xFFFFFFFF) | ((bits << bit) & mask)


def _get(regs, gpr, bit, width, lane):
    if width == 64:
        return int(regs[gpr, lane]) | int(regs[gpr + 1, lane]) << 32
    return (int(regs[gpr, lane]) >> bit) & ((1 << width) - 1)


@functools.lru_cache(maxsize=None)
def _texts(target, d_reg: int = D_REG) -> dict:
    """Every instruction of the table with the test's registers (C and D from ``d_reg``), as assembly text."""
    out = {}
    for name, lay in LAYOUTS[target].items():
        na = 1 + max(c[0] + (1 if c[2] == 64 else 0) for c in lay["A"])
        nb = 1 + max(c[0] + (1 if c[2] == 64 else 0) for c in lay["B"])
        nd = 1 + max(c[0] + (1 if c[2] == 64 else 0) for c in lay["D"])
        rng = lambda base, n: f"v{base}" if n == 1 else f"v[{base}:{base + n - 1}]"   # noqa: E731
        src2 = f"v{K_REG}" if name.startswith("v_smfmac") else rng(d_reg, nd)
        out[name] = f"{name} {rng(d_reg, nd)}, {rng(A_REG, na)}, {rng(B_REG, nb)}, {src2}"
    return out


@functools.lru_cache(maxsize=None)
def _encodings(target):
    """Every instruction of the table assembled once by llvm-mc-19 with the test's registers."""
    mc = require_tool("llvm-mc-19")
    lines = list(_texts(target).values())
    out = subprocess.run([mc, "-triple=amdgcn", f"-mcpu={target}", "-show-encoding"], input="\n".join(lines),
                         capture_output=True, text=True).stdout
    enc = {}
    for ln in out.splitlines():
        m = re.match(r"\s*(\S+) .*; encoding: \[(.*)\]", ln)
        if m:
            enc[m.group(1)] = bytes(int(x, 16) for x in m.group(2).split(","))
    return enc


class _GPU:
    memory = None


def _cases():
    return [(t, n) for t in LAYOUTS for n in sorted(LAYOUTS[t])]


def _case(target, name, d_reg: int = D_REG):
    """(the register file before: 64 VGPRs x 64 lanes, the check of the register file after: the D fields
    that are wrong) of one instruction with random A, B, C placed by the calculator's layout (C and D from
    VGPR ``d_reg``)."""
    lay = LAYOUTS[target][name]
    ka, kb, kc = _kinds(name)
    sparse = name.startswith("v_smfmac")
    elems = {m: [e for c in lay[m] for e in c[4]] for m in lay}
    nblk = 1 + max(e[2] for e in elems["D"])
    M = 1 + max(e[0] for e in elems["D"])
    N = 1 + max(e[1] for e in elems["D"])
    K = 1 + max(e[1] for e in elems["A"])
    A, B = _values(ka, (nblk, M, K)), _values(kb, (nblk, K, N))
    C = _values("i8" if kc == "i32" else "f32", (nblk, M, N))
    regs = np.zeros((64, 64), np.uint32)
    if sparse:                                                   # 2 of every 4 k of A are nonzero
        keep = np.zeros((nblk, M, K // 4, 2), np.int64)
        for b in range(nblk):
            for i in range(M):
                for g in range(K // 4):
                    keep[b, i, g] = np.sort(RNG.choice(4, 2, replace=False))
        mask = np.zeros(A.shape, bool)
        for g in range(K // 4):
            for s in range(2):
                np.put_along_axis(mask[:, :, 4 * g:4 * g + 4], keep[:, :, g, s:s + 1], True, axis=2)
        A = np.where(mask, A, 0.0)
        for gpr, bit, width, lane, es in lay["K"]:               # a nibble per group: index1 << 2 | index0
            i, k, b = es[0]
            idx = keep[b, i, k // 4]
            _put(regs, K_REG + gpr, bit, width, lane, int(idx[0] | idx[1] << 2))
        for gpr, bit, width, lane, es in lay["A"]:               # the two kept values of the group, low first
            i, k, b = es[0]
            idx = keep[b, i, k // 4]
            half = width // 2
            for s in range(2):
                _put(regs, A_REG + gpr, bit + s * half, half, lane, _encode(ka, A[b, i, (k // 4) * 4 + idx[s]]))
    else:
        for gpr, bit, width, lane, es in lay["A"]:
            w = width // len(es)
            for s, (i, k, b) in enumerate(es):
                _put(regs, A_REG + gpr, bit + s * w, w, lane, _encode(ka, A[b, i, k]))
    for gpr, bit, width, lane, es in lay["B"]:
        w = width // len(es)
        for s, (k, j, b) in enumerate(es):
            _put(regs, B_REG + gpr, bit + s * w, w, lane, _encode(kb, B[b, k, j]))
    for gpr, bit, width, lane, es in lay["C" if "C" in lay else "D"]:
        (i, j, b), = es
        _put(regs, d_reg + gpr, bit, width, lane, int(C[b, i, j]) & 0xFFFFFFFF if kc == "i32" else _encode(kc, C[b, i, j]))
    D = np.einsum("bik,bkj->bij", A, B) + C

    def wrong(after) -> list:
        bad = []
        for gpr, bit, width, lane, es in lay["D"]:
            (i, j, b), = es
            got = _get(after, d_reg + gpr, bit, width, lane)
            want = int(D[b, i, j]) & 0xFFFFFFFF if kc == "i32" else _encode(kc, D[b, i, j])
            if got != want:
                bad.append((gpr, lane, (b, i, j), hex(got), hex(want)))
        return bad
    return regs, wrong


@pytest.mark.parametrize("target,name", _cases())
def test_matrix_instruction_layout(target, name):
    """The numpy semantics alone, on one wave's state (every instruction, the sparse ones included)."""
    load_all()
    if name not in SEMANTICS:
        pytest.skip(f"{name} is not executable on the emulated device (reported by pyhip disasm --coverage)")
    regs, wrong = _case(target, name)
    inst = decode_one(_encodings(target)[name], 0, target)
    assert inst.name == name
    st = WaveState(1, 64, 1, 0, 0)
    st.vgpr[:] = regs[:, None, :]
    st.sgpr[0, 126] = st.sgpr[0, 127] = 0xFFFFFFFF
    SEMANTICS[name](inst, KernelContext(_GPU(), target, 256))(st, np.array([0]))
    bad = wrong(st.vgpr[:, 0, :])
    assert not bad, f"{len(bad)} of {len(LAYOUTS[target][name]['D'])} D fields wrong, e.g. {bad[:4]}"


def _dispatch_and_check(target, engine, names, cases, texts):
    """One kernel runs every instruction of ``names`` (asmkit.run_rows) on the engine the fixture picks; each
    case's check of the D fields must find nothing wrong."""
    engine(target)
    after = run_rows([f"  {texts[n]}\n" for n in names], np.stack([regs[:48] for regs, _ in cases]), target=target)
    engine(target)
    bad = {n: wrong(np.concatenate([a, np.zeros((16, 64), np.uint32)]))[:2]
           for n, (_, wrong), a in zip(names, cases, after)}
    bad = {n: b for n, b in bad.items() if b}
    assert not bad, f"{len(bad)} of {len(names)} instructions wrong: {dict(list(bad.items())[:3])}"


@pytest.mark.parametrize("target", sorted(LAYOUTS))
def test_each_engine_in_a_dispatch(target, engine):
    """Every matrix instruction (the sparse v_smfmac_* included), dispatched (one kernel runs them one after
    another, asmkit.run_rows) on each engine — the compiled engine's handler (native/engine/ops_mfma.h) and
    the numpy engine — against the calculator's layouts (not one engine against the other)."""
    from pyhip.emu.native.coverage import native_mnemonics
    load_all()
    native = native_mnemonics(target)
    names = [n for n in sorted(LAYOUTS[target]) if n in SEMANTICS and n in native]
    assert len(names) > 20, names
    # C and D from v16 (A and B take at most 8 VGPRs each here): a 32-register D fits the 48 run_rows carries;
    # the sparse ones keep their index register at v16 and D (at most 16 registers) at v32
    d_reg = {n: 32 if n.startswith("v_smfmac") else 16 for n in names}
    cases = [_case(target, n, d_reg=d_reg[n]) for n in names]
    assert all(not regs[48:].any() for regs, _ in cases)
    texts = {n: _texts(target, d_reg=d_reg[n])[n] for n in names}
    _dispatch_and_check(target, engine, names, cases, texts)


_QNAN_A = {"f32": 0x7FC12345, "xf32": 0x7FC12345, "bf16": 0x7FC5, "f16": 0x7E05}


def _as_f32_bits(kind, bits):
    """A NaN operand's bits as the f32 the accumulation carries (payload kept, quieted)."""
    if kind == "bf16":
        f = bits << 16
    elif kind == "f16":
        f = int(np.array([bits], np.uint16).view(np.float16).astype(np.float32).view(np.uint32)[0])
    else:
        f = bits
    return f | 0x00400000


def _nan_case(target, name, d_reg):
    """Float matrix instructions with NaNs: one quiet NaN with a payload in some rows of A (every D of that row
    is that NaN, quieted), and signalling NaNs with payloads in some C fields (D is the quieted C where A·B is
    finite): the payload rules of the numpy reference (fp.py: the first NaN operand of D + C wins), stated here
    independently of both engines."""
    lay = LAYOUTS[target][name]
    ka, kb, _ = _kinds(name)
    elems = {m: [e for c in lay[m] for e in c[4]] for m in lay}
    nblk = 1 + max(e[2] for e in elems["D"])
    M = 1 + max(e[0] for e in elems["D"])
    N = 1 + max(e[1] for e in elems["D"])
    K = 1 + max(e[1] for e in elems["A"])
    A, B, C = _values(ka, (nblk, M, K)), _values(kb, (nblk, K, N)), _values("f32", (nblk, M, N))
    nan_at = {(b, i): int(RNG.integers(K)) for b in range(nblk) for i in range(M) if RNG.random() < 0.3}
    snan = RNG.random((nblk, M, N)) < 0.3
    regs = np.zeros((64, 64), np.uint32)
    for gpr, bit, width, lane, es in lay["A"]:
        w = width // len(es)
        for s, (i, k, b) in enumerate(es):
            bits = _QNAN_A[ka] if nan_at.get((b, i)) == k else _encode(ka, A[b, i, k])
            _put(regs, A_REG + gpr, bit + s * w, w, lane, bits)
    for gpr, bit, width, lane, es in lay["B"]:
        w = width // len(es)
        for s, (k, j, b) in enumerate(es):
            _put(regs, B_REG + gpr, bit + s * w, w, lane, _encode(kb, B[b, k, j]))
    payload = RNG.integers(1, 1 << 21, (nblk, M, N))
    for gpr, bit, width, lane, es in lay["C" if "C" in lay else "D"]:
        (i, j, b), = es
        _put(regs, d_reg + gpr, bit, width, lane, 0x7F800000 | int(payload[b, i, j]) if snan[b, i, j]
             else _encode("f32", C[b, i, j]))
    D = np.einsum("bik,bkj->bij", A, B) + C

    def want(b, i, j):
        if (b, i) in nan_at:
            return _as_f32_bits(ka, _QNAN_A[ka])
        if snan[b, i, j]:
            return 0x7FC00000 | int(payload[b, i, j])
        return _encode("f32", D[b, i, j])

    def wrong(after) -> list:
        bad = []
        for gpr, bit, width, lane, es in lay["D"]:
            (i, j, b), = es
            got = _get(after, d_reg + gpr, bit, width, lane)
            if got != want(b, i, j):
                bad.append((gpr, lane, (b, i, j), hex(got), hex(want(b, i, j))))
        return bad
    return regs, wrong


@pytest.mark.parametrize("target", sorted(LAYOUTS))
def test_nan_payloads_on_each_engine(target, engine):
    """Every dense float-accumulating matrix instruction (f32, xf32, f16, bf16 inputs) with quiet NaNs in A and
    signalling NaNs in C, on each engine, bit for bit against _nan_case's payload rules."""
    from pyhip.emu.native.coverage import native_mnemonics
    load_all()
    native = native_mnemonics(target)
    names = [n for n in sorted(LAYOUTS[target]) if n in SEMANTICS and n in native and not n.startswith("v_smfmac")
             and _kinds(n)[0] in _QNAN_A and _kinds(n)[2] == "f32"]
    assert len(names) > 8, names
    cases = [_nan_case(target, n, 16) for n in names]
    texts = {n: _texts(target, d_reg=16)[n] for n in names}
    _dispatch_and_check(target, engine, names, cases, texts)
