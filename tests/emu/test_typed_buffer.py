"""Typed buffer access — buffer_load/store_format_* (the format in the V#'s word 3) and tbuffer_* (the format in
the instruction), D16 forms included — on both engines (the native handlers of native/engine/ops_format.h and
the numpy semantics of semantics/buffer_format.py), against element decoders and encoders written here from the
format definitions (component widths, X in the low bits; UNORM v / (2^b - 1), SNORM clamped at -1, scaled and
integer formats, half and single floats; stores clamp, round to nearest even, truncate).  Lanes past
num_records read 0 and drop their stores; partial waves; the faults of formats the device does not take."""
import struct

import numpy as np
import pytest

from asmkit import engine, gpu, run  # noqa: F401 (engine: a fixture)
from pyhip.emu.image_desc import generation, unified_code
from pyhip.emu.memory import GPUFault

RNG = np.random.default_rng(20261128)
U64 = np.uint64
UNORM, SNORM, USCALED, SSCALED, UINT, SINT, FLOAT = 0, 1, 2, 3, 4, 5, 7
# data format -> (component widths X first, assembler name)
DFMT = {1: ((8,), "8"), 2: ((16,), "16"), 3: ((8, 8), "8_8"), 4: ((32,), "32"), 5: ((16, 16), "16_16"),
        8: ((2, 10, 10, 10), "10_10_10_2"), 9: ((10, 10, 10, 2), "2_10_10_10"), 10: ((8, 8, 8, 8), "8_8_8_8"),
        11: ((32, 32), "32_32"), 12: ((16, 16, 16, 16), "16_16_16_16"), 13: ((32, 32, 32), "32_32_32"),
        14: ((32, 32, 32, 32), "32_32_32_32")}
NFMT = {UNORM: "UNORM", SNORM: "SNORM", USCALED: "USCALED", SSCALED: "SSCALED", UINT: "UINT", SINT: "SINT",
        FLOAT: "FLOAT"}
TARGETS = [("gfx90a", 64), ("gfx1100", 32)]
MORE_TARGETS = TARGETS + [("gfx942", 64), ("gfx1030", 32), ("gfx1100", 64)]


def word3(target: str, dfmt: int, nfmt: int) -> int:
    gen = generation(target)
    if gen == 9:
        return nfmt << 12 | dfmt << 15
    return unified_code(gen, dfmt, nfmt) << 12


def tformat(target: str, dfmt: int, nfmt: int) -> str:
    if generation(target) == 9:
        return f"format:[BUF_DATA_FORMAT_{DFMT[dfmt][1]}, BUF_NUM_FORMAT_{NFMT[nfmt]}]"
    return f"format:[BUF_FMT_{DFMT[dfmt][1]}_{NFMT[nfmt]}]"


def f32(x) -> int:
    return struct.unpack("<I", struct.pack("<f", float(x)))[0]


def half_to_f32(h: int) -> int:
    """Exact widening (a NaN keeps its payload and its signalling bit)."""
    sign, e, m = h >> 15, h >> 10 & 31, h & 0x3FF
    if e == 31:
        return sign << 31 | 0x7F800000 | m << 13
    return f32(np.float32(np.frombuffer(struct.pack("<H", h), np.float16)[0]))


def signed(v: int, b: int) -> int:
    return v - (1 << b) if v >> (b - 1) else v


def decode(raw: bytes, comps, nfmt) -> list[int]:
    """The four register values of one element (absent components 0, the fourth 1)."""
    word = int.from_bytes(raw, "little")
    out, shift = [], 0
    for b in comps:
        v = word >> shift & ((1 << b) - 1)
        shift += b
        if nfmt == UNORM:
            out.append(f32(np.float32(v / ((1 << b) - 1))))
        elif nfmt == SNORM:
            out.append(f32(np.float32(max(signed(v, b) / ((1 << (b - 1)) - 1), -1.0))))
        elif nfmt == USCALED:
            out.append(f32(np.float32(v)))
        elif nfmt == SSCALED:
            out.append(f32(np.float32(signed(v, b))))
        elif nfmt == UINT:
            out.append(v)
        elif nfmt == SINT:
            out.append(signed(v, b) & 0xFFFFFFFF)
        else:
            out.append(half_to_f32(v) if b == 16 else v)
    one = 1 if nfmt in (UINT, SINT) else f32(1.0)
    return (out + [0, 0, 0])[:3] + [out[3] if len(out) > 3 else one]


def rne(x: float) -> int:
    return int(np.rint(x))


def encode(regs, comps, nfmt) -> bytes:
    word, shift = 0, 0
    for v, b in zip(regs, comps):
        mask = (1 << b) - 1
        if nfmt in (UINT, SINT):
            r = v & mask
        elif nfmt == FLOAT:
            with np.errstate(over="ignore", invalid="ignore"):
                r = int(np.array([v], np.uint32).view(np.float32).astype(np.float16).view(np.uint16)[0]) \
                    if b == 16 else v
        else:
            f = struct.unpack("<f", struct.pack("<I", v))[0]
            f = 0.0 if f != f else f
            if nfmt == UNORM:
                r = rne(min(max(f, 0.0), 1.0) * mask) & mask
            elif nfmt == SNORM:
                r = rne(min(max(f, -1.0), 1.0) * ((1 << (b - 1)) - 1)) & mask
            else:
                r = int(np.trunc(min(max(f, -2.0 ** 62), 2.0 ** 62))) & mask
        word |= r << shift
        shift += b
    return word.to_bytes(sum(comps) // 8, "little")


def operands(kind: str):
    """a, b, c: raw random bits, or float32 bit patterns around [0, 1] with the edge values stores meet."""
    if kind == "bits":             # random, a quarter of the bytes the extremes (-128 and -32768 among them)
        raw = RNG.integers(0, 256, 3 * 512, dtype=np.uint8)
        pick = RNG.random(raw.size) < 0.25
        raw[pick] = RNG.choice(np.array([0x00, 0x7F, 0x80, 0xFF], np.uint8), int(pick.sum()))
        return [x for x in raw.view(U64).reshape(3, 64)]
    vals = RNG.uniform(-1.5, 1.5, 6 * 64).astype(np.float32)
    special = np.array([0.5, -0.5, 1.0, -1.0, 1.5, np.nan, np.inf, -np.inf, 0.0, -0.0, 3e9, -3e9, 255.5, 70000.7],
                       np.float32)
    vals[RNG.choice(len(vals), 120, replace=False)] = RNG.choice(special, 120)
    vals[::5] *= 300                                           # the scaled and integer formats' range
    return [x for x in vals.view(np.uint32).view(U64).reshape(3, 64)]


def vsharp(base: str, nrec: int, w3: int, off: int = 0) -> str:
    return f"""
  s_add_u32 s12, {base}, {off}
  s_addc_u32 s13, s{int(base[1:]) + 1}, 0
  s_and_b32 s13, s13, 0xffff
  s_mov_b32 s14, {nrec}
  s_mov_b32 s15, {w3:#x}"""


LOADS = [(10, UNORM), (10, SNORM), (5, SINT), (5, USCALED), (3, SSCALED), (9, UNORM), (8, UINT), (12, FLOAT),
         (11, FLOAT), (1, UINT), (2, SNORM), (13, UINT), (14, FLOAT)]


@pytest.mark.parametrize("target,wave", TARGETS)
@pytest.mark.parametrize("dfmt,nfmt", LOADS)
def test_format_loads(target, wave, dfmt, nfmt, engine):
    """buffer_load_format_xyzw of every lane's element (16-byte elements: lanes 16 bytes apart), the last lanes
    past num_records; a partial wave of 41 lanes."""
    comps, _ = DFMT[dfmt]
    size = sum(comps) // 8
    stride = 16 if size > 8 else 8
    lanes, nrec = 41, stride * 37 + size - 1          # lanes 37.. (the 37th's last byte) outside
    a, b, c = operands("bits")
    body = vsharp("s4", nrec, word3(target, dfmt, nfmt)) + f"""
  v_lshlrev_b32 v12, {stride.bit_length() - 1}, v0
  buffer_load_format_xyzw v[8:11], v12, s[12:15], 0 offen
  s_waitcnt vmcnt(0)
"""
    engine(target)
    r0, r1 = run(body, a, b, c, target=target, lanes=lanes, **({"wave": wave} if target.startswith("gfx1") else {}))
    engine(target)
    raw = np.concatenate([a, b, c]).view(np.uint8).tobytes()
    for lane in range(lanes):
        o = stride * lane
        elem = raw[o:o + size] if o + size <= nrec else bytes(size)
        want = decode(elem, comps, nfmt)
        got = [int(r0[lane]) & 0xFFFFFFFF, int(r0[lane]) >> 32, int(r1[lane]) & 0xFFFFFFFF, int(r1[lane]) >> 32]
        assert got == want, (lane, [hex(x) for x in got], [hex(x) for x in want])


@pytest.mark.parametrize("target,wave", MORE_TARGETS)
def test_tbuffer_and_d16_loads(target, wave, engine):
    """tbuffer_load_format_xy with 16_16 SINT in the instruction (the V# says something else), D16 loads of
    8_8_8_8 UNORM (halves of the converted values) and 16_16_16_16 FLOAT, and d16_hi / an odd count keeping the
    other half of the register."""
    a, b, c = operands("bits")
    w3 = word3(target, 10, UNORM)
    body = vsharp("s4", 1536, w3) + f"""
  v_lshlrev_b32 v12, 3, v0
  v_mov_b32 v8, v2
  v_mov_b32 v9, v3
  v_mov_b32 v11, v5
  tbuffer_load_format_xy v[14:15], v12, s[12:15], 0 {tformat(target, 5, SINT)} offen
  buffer_load_format_d16_xyz v[10:11], v12, s[12:15], 0 offen
  buffer_load_format_d16_hi_x v9, v12, s[12:15], 0 offen
  s_waitcnt vmcnt(0)
  v_xor_b32 v8, v8, v14
  v_xor_b32 v8, v8, v15
"""
    engine(target)
    r0, r1 = run(body, a, b, c, target=target, **({"wave": wave} if target.startswith("gfx1") else {}))
    engine(target)
    raw = np.concatenate([a, b, c]).view(np.uint8).tobytes()

    def h(bits):
        return int(np.frombuffer(struct.pack("<I", bits), np.float32).astype(np.float16).view(np.uint16)[0])
    for lane in range(64):
        elem = raw[8 * lane:8 * lane + 8]
        t = decode(elem[:4], (16, 16), SINT)
        u = decode(elem[:4], (8, 8, 8, 8), UNORM)
        av, bv = int(a[lane]), int(b[lane])
        v8 = (av & 0xFFFFFFFF) ^ t[0] ^ t[1]
        v9 = (av >> 32 & 0xFFFF) | h(u[0]) << 16
        v10 = h(u[0]) | h(u[1]) << 16
        v11 = h(u[2]) | (bv >> 32 & 0xFFFF0000)
        assert (int(r0[lane]), int(r1[lane])) == (v8 | v9 << 32, v10 | v11 << 32), lane


STORES = [(10, UNORM, 4), (10, SNORM, 4), (5, SNORM, 2), (5, USCALED, 2), (3, SSCALED, 2), (9, UNORM, 4),
          (8, SINT, 4), (12, FLOAT, 2), (11, FLOAT, 2), (2, UNORM, 1), (10, UINT, 2), (5, FLOAT, 2), (3, UINT, 4)]


@pytest.mark.parametrize("target,wave", TARGETS)
@pytest.mark.parametrize("dfmt,nfmt,n", STORES)
def test_format_stores(target, wave, dfmt, nfmt, n, engine):
    """buffer_store_format_{x,xy,xyzw} of float and integer register values (NaN, infinities, halves, values out
    of range) into the c operands (8 bytes per lane, num_records ending inside lane 33's element), read back
    with global loads; a partial store (xy) to a four-component uniform format keeps the other bytes."""
    comps, _ = DFMT[dfmt]
    size = sum(comps) // 8
    lanes, nrec = 52, 8 * 33 + size - 1
    a, b, c = operands("floats")
    names = {1: "x", 2: "xy", 4: "xyzw"}
    body = vsharp("s4", nrec, word3(target, dfmt, nfmt), off=1024) + f"""
  buffer_store_format_{names[n]} v[2:{1 + n}], v1, s[12:15], 0 offen
  s_waitcnt vmcnt(0)
  global_load_dwordx2 v[8:9], v1, s[4:5] offset:1024
  s_waitcnt vmcnt(0)
"""
    if target.startswith("gfx11"):
        body = body.replace("global_load_dwordx2", "global_load_b64")
    engine(target)
    r0, _ = run(body, a, b, c, target=target, lanes=lanes, **({"wave": wave} if target.startswith("gfx1") else {}))
    engine(target)
    regs = np.stack([a, b]).view(np.uint32).reshape(2, 64, 2).transpose(1, 0, 2).reshape(64, 4)
    for lane in range(lanes):
        mem = bytearray(int(c[lane]).to_bytes(8, "little"))
        part = comps[:n]                                    # a partial store: the first n components' bytes
        if 8 * lane + sum(part) // 8 <= nrec:
            mem[:sum(part) // 8] = encode([int(x) for x in regs[lane, :len(part)]], part, nfmt)
        assert int(r0[lane]) == int.from_bytes(mem, "little"), (lane, hex(int(r0[lane])), mem.hex())


@pytest.mark.parametrize("target,wave", MORE_TARGETS)
def test_d16_and_tbuffer_stores(target, wave, engine):
    """buffer_store_format_d16_xyzw into 16_16_16_16 FLOAT (the halves as they are), d16 xy into 8_8 UNORM
    (from half precision), d16_hi_x into 16 UINT (the high half), tbuffer_store_format_x with 16 UINT."""
    halves = RNG.uniform(-0.5, 1.5, (3, 64, 4)).astype(np.float16)
    halves[0, ::3, 1] = 0.5
    a, b, c = (x for x in halves.view(U64).reshape(3, 64))
    hi = "buffer_store_format_d16_hi_x v3, v12, s[12:15], 0 offen offset:4"
    body = vsharp("s4", 4096, word3(target, 12, FLOAT)) + f"""
  v_lshlrev_b32 v12, 3, v0
  v_add_u32 v12, 0x400, v12
  buffer_store_format_d16_xyzw v[4:5], v12, s[12:15], 0 offen
  s_waitcnt vmcnt(0)
  global_load_dwordx2 v[8:9], v1, s[4:5] offset:1024
  s_mov_b32 s15, {word3(target, 3, UNORM):#x}
  buffer_store_format_d16_xy v2, v12, s[12:15], 0 offen
  s_mov_b32 s15, {word3(target, 2, UINT):#x}
  {hi}
  tbuffer_store_format_x v2, v12, s[12:15], 0 {tformat(target, 2, UINT)} offen offset:2
  s_waitcnt vmcnt(0)
  global_load_dwordx2 v[10:11], v1, s[4:5] offset:1024
  s_waitcnt vmcnt(0)
"""
    if target.startswith("gfx1"):
        body = body.replace("v_add_u32", "v_add_nc_u32")
    if target.startswith("gfx11"):
        body = body.replace("global_load_dwordx2", "global_load_b64")
    engine(target)
    r0, r1 = run(body, a, b, c, target=target, **({"wave": wave} if target.startswith("gfx1") else {}))
    engine(target)
    for lane in range(64):
        av, bv = int(a[lane]), int(b[lane])
        assert int(r0[lane]) == bv, lane                    # four halves stored as they are
        halves = [av & 0xFFFF, av >> 16 & 0xFFFF]
        mem = bytearray(bv.to_bytes(8, "little"))
        mem[0:2] = encode([half_to_f32(x) for x in halves], (8, 8), UNORM)
        mem[4:6] = (av >> 48 & 0xFFFF).to_bytes(2, "little")
        mem[2:4] = (av & 0xFFFF).to_bytes(2, "little")
        assert int(r1[lane]) == int.from_bytes(mem, "little"), (lane, hex(int(r1[lane])), mem.hex())


@pytest.mark.parametrize("target,wave", TARGETS)
@pytest.mark.parametrize("case", ["no data format", "10_11_11 float", "partial packed store"])
def test_formats_the_device_does_not_take_fault(target, wave, case, engine):
    """The same fault, with the numpy check's message, on both engines."""
    if case == "no data format":
        w3, inst, msg = (0 if generation(target) == 9 else 0x7F000), \
            "buffer_load_format_x v8, v1, s[12:15], 0 offen", "buffer data format"
        if generation(target) == 11:
            w3 = 0
    elif case == "10_11_11 float":
        w3 = (FLOAT << 12 | 6 << 15) if generation(target) == 9 else unified_code(generation(target), 6, FLOAT) << 12
        inst, msg = "buffer_load_format_xyzw v[8:11], v1, s[12:15], 0 offen", "not supported"
    else:
        w3, inst, msg = word3(target, 9, UNORM), "buffer_store_format_xy v[2:3], v1, s[12:15], 0 offen", "partial"
    body = vsharp("s4", 1536, w3) + f"\n  {inst}\n  s_waitcnt vmcnt(0)\n"
    a, b, c = operands("bits")
    engine(target)
    with pytest.raises(GPUFault, match=msg) as exc:
        run(body, a, b, c, target=target, **({"wave": wave} if target.startswith("gfx1") else {}))
    engine(target)
    assert "buffer_" in str(exc.value.instruction)
