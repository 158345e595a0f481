"""Every RDNA3 WMMA instruction, wave32 and wave64, against the register layouts AMD's matrix instruction
calculator prints (tests/emu/data/wmma_layouts.json.zst, from tools/gen_wmma_layouts.py): random exact A, B, C
are placed by the calculator's layout (A and B in every replica lane), the instruction (assembled by llvm-mc-19)
runs on one emulated wave, and every D field must equal A·B + C computed with numpy — including the high-half
(OP_SEL[2]) forms of the f16/bf16 results, the NEG modifiers of the float forms (negated halves of A and B,
-C, |C|) and the signedness bits of the integer forms.  Then the compiled engine (its native handler) against
the numpy engine on random register bits (NaN, infinities, denormals, rounding in every result format): every
register of the wave bit for bit."""
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
from test_mfma_layouts import _get, _put

DATA = Path(__file__).parent / "data" / "wmma_layouts.json.zst"
LAYOUTS = json.loads(zstandard.ZstdDecompressor().decompress(DATA.read_bytes()))
RNG = np.random.default_rng(2023)
A_REG, B_REG, C_REG, D_REG = 0, 8, 16, 24
KINDS = {"f16": ("f16", "f32"), "bf16": ("bf16", "f32")}


def _kinds(name):
    kin = re.search(r"16x16x16_(\w+)$", name).group(1)
    kout = name.split("_")[2]
    return kin, kout


def _values(kind, shape, signed=True, narrow=False):
    """Random inputs; float ones exact in f16/bf16 with every product and sum exact in the result format
    (``narrow``: a bf16 result has 8 significant bits, so values are multiples of 1/2 up to 1)."""
    if kind == "iu8":
        return RNG.integers(-128 if signed else 0, 128 if signed else 256, shape)
    if kind == "iu4":
        return RNG.integers(-8 if signed else 0, 8 if signed else 16, shape)
    if narrow:
        return RNG.integers(-2, 3, shape) / 2.0
    return RNG.integers(-32, 33, shape) / 8.0


def _encode(kind, v):
    if kind in ("iu8", "iu4", "i32"):
        return int(v) & {"iu8": 0xFF, "iu4": 0xF, "i32": 0xFFFFFFFF}[kind]
    if kind == "f32":
        return int(np.float32(v).view(np.uint32))
    if kind == "f16":
        return int(np.float16(v).view(np.uint16))
    return int(np.float32(v).view(np.uint32)) >> 16          # bf16 (the values are exact)


_TEXTS: dict = {}


@functools.lru_cache(maxsize=None)
def _assembled(wave):
    """Every case's instruction text of a wave size assembled by one llvm-mc-19 run."""
    mc = require_tool("llvm-mc-19")
    attr = ["-mattr=+wavefrontsize64"] if wave == 64 else []
    texts = sorted(_TEXTS[wave])
    out = subprocess.run([mc, "-triple=amdgcn", "-mcpu=gfx1100", *attr, "-show-encoding"], input="\n".join(texts),
                         capture_output=True, text=True).stdout
    encs = [bytes(int(x, 16) for x in m.group(1).split(",")) for m in re.finditer(r"; encoding: \[(.*)\]", out)]
    assert len(encs) == len(texts), out
    return dict(zip(texts, encs))


def _text(wave, name, mods):
    neg, neg_hi, opsel_hi = mods
    lay = LAYOUTS[f"wave{wave}"][name]
    nab = 1 + max(c[0] for c in lay["A"])
    ncd = 1 + max(c[0] for c in lay["D"])
    rng = lambda b, n: f"v[{b}:{b + n - 1}]" if n > 1 else f"v{b}"   # noqa: E731
    text = f"{name} {rng(D_REG, ncd)}, {rng(A_REG, nab)}, {rng(B_REG, nab)}, {rng(C_REG, ncd)}"
    if opsel_hi:
        text += " op_sel:[0,0,1]"
    if neg:
        text += f" neg_lo:[{neg & 1},{neg >> 1 & 1},{neg >> 2 & 1}]"
    if neg_hi:
        text += f" neg_hi:[{neg_hi & 1},{neg_hi >> 1 & 1},{neg_hi >> 2 & 1}]"
    return text


class _GPU:
    memory = None


def _cases():
    out = []
    for wave in (32, 64):
        for name in sorted(LAYOUTS[f"wave{wave}"]):
            integer = "iu" in name
            for mods in ((0, 0, 0), (1, 0, 0), (2, 0, 0), (3, 0, 0)) if integer else \
                    ((0, 0, 0), (1, 2, 0), (4, 0, 0), (6, 5, 0), (0, 4, 0)):
                out.append((wave, name, mods))
            if name.startswith(("v_wmma_f16", "v_wmma_bf16")):
                out.append((wave, name, (0, 0, 1)))
    for wave, name, mods in out:
        _TEXTS.setdefault(wave, set()).add(_text(wave, name, mods))
    return out


@pytest.mark.parametrize("wave,name,mods", _cases())
def test_wmma_layout(wave, name, mods):
    load_all()
    neg, neg_hi, opsel_hi = mods
    lay = LAYOUTS[f"wave{wave}"][name]
    kin, kout = _kinds(name)
    integer = kout == "i32"
    narrow = kout in ("f16", "bf16")
    A = _values(kin, (16, 16), signed=bool(neg & 1), narrow=narrow)
    B = _values(kin, (16, 16), signed=bool(neg & 2), narrow=narrow)
    C = RNG.integers(-1000, 1000, (16, 16)) if integer else (RNG.integers(-16, 17, (16, 16)) / 4 if narrow
                                                              else _values("f16", (16, 16)))
    regs = np.zeros((48, wave), np.uint32)
    regs[D_REG:] = RNG.integers(0, 2 ** 32, (48 - D_REG, wave), dtype=np.uint64).astype(np.uint32)   # kept halves
    for gpr, bit, width, lane, es in lay["A"]:
        for s, (i, k, _) in enumerate(es):
            _put(regs, A_REG + gpr, bit + s * (width // len(es)), width // len(es), lane, _encode(kin, A[i, k]))
    for gpr, bit, width, lane, es in lay["B"]:
        for s, (k, j, _) in enumerate(es):
            _put(regs, B_REG + gpr, bit + s * (width // len(es)), width // len(es), lane, _encode(kin, B[k, j]))
    dlay = lay["D_opsel"] if opsel_hi else lay["D"]
    kc = "i32" if integer else kout
    for gpr, bit, width, lane, ((i, j, _),) in dlay:          # C lives where D does (same half with OP_SEL[2])
        _put(regs, C_REG + gpr, bit, width, lane, _encode(kc, C[i, j]))
    inst = decode_one(_assembled(wave)[_text(wave, name, mods)], 0, "gfx1100")
    assert inst.name == name
    st = WaveState(1, 48, 1, 0, 0, lanes=wave)
    st.vgpr[:] = regs[:, None, :]
    before = st.vgpr[:, 0, :].copy()
    SEMANTICS[name](inst, KernelContext(_GPU(), "gfx1100", 0, wave))(st, np.array([0]))
    if integer:
        D = A.astype(np.int64) @ B.astype(np.int64) + C
    else:
        An, Bn, Cn = A.copy(), B.copy(), C.astype(np.float64)
        An[:, 0::2] *= -1 if neg & 1 else 1                   # NEG[0]: low halves (even k) of A's registers
        An[:, 1::2] *= -1 if neg_hi & 1 else 1
        Bn[0::2, :] *= -1 if neg & 2 else 1
        Bn[1::2, :] *= -1 if neg_hi & 2 else 1
        Cn = np.abs(Cn) if neg_hi & 4 else Cn
        Cn = -Cn if neg & 4 else Cn
        D = An @ Bn + Cn
    bad = []
    touched = set()
    for gpr, bit, width, lane, ((i, j, _),) in dlay:
        touched.add((D_REG + gpr, lane, bit))
        got = _get(st.vgpr[:, 0, :], D_REG + gpr, bit, width, lane)
        want = _encode(kc, D[i, j])
        if got != want:
            bad.append((gpr, lane, (i, j), hex(got), hex(want)))
    assert not bad, f"{len(bad)} of {len(dlay)} D fields wrong, e.g. {bad[:4]}"
    if kout in ("f16", "bf16"):                               # the other half of every D register is kept
        other = 0 if opsel_hi else 16
        for gpr, bit, width, lane, _ in dlay:
            assert _get(st.vgpr[:, 0, :], D_REG + gpr, other, 16, lane) == _get(before, D_REG + gpr, other, 16, lane)


# 16-bit patterns that make sums land on rounding ties, subnormals, overflow: f16 1, 2^-11, 2^-12, 1+2^-10,
# 2^-24, 65504, -0, inf, NaN; bf16 1, 2^-8, 2^-9, 1+2^-7, inf
SPECIAL = np.array([0x3C00, 0x1000, 0x0C00, 0x3C01, 0x0001, 0x7BFF, 0x8000, 0x7C00, 0x7E00,
                    0x3F80, 0x3B80, 0x3B00, 0x3F81, 0x7F80], np.uint16)


def _halves(raw):
    """Registers from 16-bit halves: half of them zero, a quarter from SPECIAL, the rest random bits (few
    nonzero terms per sum, so exact ties and edge values reach the result rounding)."""
    pick = RNG.random(raw.shape)
    h = np.where(pick < 0.5, 0, np.where(pick < 0.75, RNG.choice(SPECIAL, raw.shape), raw)).astype(np.uint32)
    return h[..., 0] | h[..., 1] << 16


@pytest.mark.parametrize("engine", ["compiled"], indirect=True)
@pytest.mark.parametrize("wave", [32, 64])
def test_wmma_engines_agree(wave, engine):
    """Every case of the layout test (instruction and modifiers) over random register halves (_halves), on the numpy
    engine's semantics and through one kernel on the compiled engine (its native handler): all 48 registers
    equal, bit for bit (D's kept halves and A/B/C untouched included)."""
    load_all()
    cases = [(name, mods) for w, name, mods in _cases() if w == wave]
    regs = _halves(RNG.integers(0, 2 ** 16, (len(cases), 48, wave, 2), dtype=np.uint64).astype(np.uint16))
    want = np.empty_like(regs)
    for c, (name, mods) in enumerate(cases):
        inst = decode_one(_assembled(wave)[_text(wave, name, mods)], 0, "gfx1100")
        st = WaveState(1, 48, 1, 0, 0, lanes=wave)
        st.vgpr[:] = regs[c][:, None, :]
        SEMANTICS[name](inst, KernelContext(_GPU(), "gfx1100", 0, wave))(st, np.array([0]))
        want[c] = st.vgpr[:, 0, :]
    engine("gfx1100")
    got = run_rows(["  " + _text(wave, name, mods) for name, mods in cases], regs, target="gfx1100", wave=wave)
    engine("gfx1100")
    bad = [(cases[c], int((got[c] != want[c]).sum())) for c in range(len(cases)) if (got[c] != want[c]).any()]
    assert not bad, f"{len(bad)} of {len(cases)} cases differ (case, words): {bad[:6]}"
