"""Memory accesses the compiled engine generates itself (pyhip/emu/jit/memory.py: _global_copy, _scalar_load):
GLOBAL loads and stores of 1, 2 and 4 dwords per lane, with a VGPR-pair address or an SGPR base plus a 32-bit
VGPR offset, at consecutive addresses under a full EXEC, and SMEM loads at an SGPR base plus an immediate
offset.  A partial EXEC, misaligned or scattered addresses and accesses past the allocation go to the
handler (which reports the fault).  Checked against numpy models of the memory on both engines, wave64 and
wave32."""
import numpy as np
import pytest

from asmkit import POISON, engine, run  # noqa: F401 (engine: a fixture)
from pyhip.emu.memory import ALIGN, GPUFault

U64 = np.uint64
RNG = np.random.default_rng(23)


def _dwords(raw, offsets):
    return np.array([int.from_bytes(raw[o:o + 4].tobytes(), "little") for o in offsets], U64)


def _syntax(target, wave):
    """(load/store mnemonic suffixes, v[22:23] = s[4:5] + v32) for the target."""
    if target.startswith("gfx1"):
        return {"d1": "b32", "d2": "b64", "d4": "b128"}, ("v_add_co_u32 v22, vcc_lo, s4, v32\n"
                                                         "  v_add_co_ci_u32_e64 v23, null, s5, 0, vcc_lo")
    return {"d1": "dword", "d2": "dwordx2", "d4": "dwordx4"}, ("v_add_co_u32 v22, vcc, s4, v32\n"
                                                              "  v_mov_b32 v23, s5\n"
                                                              "  v_addc_co_u32 v23, vcc, v23, 0, vcc")


CASES = [("gfx90a", 64), ("gfx942", 64), ("gfx1100", 32)]


@pytest.mark.parametrize("target,wave", CASES)
@pytest.mark.parametrize("lanes", [64, 41])
@pytest.mark.parametrize("shift", [0, 2])
def test_loads_and_stores_of_1_2_4_dwords(target, wave, lanes, shift, engine):
    """Lane i reads dword, dwordx2 and dwordx4 at consecutive addresses (and a dword at reversed ones) (byte offset ``shift`` from aligned:
    still consecutive, not naturally aligned) and stores them back elsewhere; then reads what was stored
    (barriers between the phases: the wave32 workgroup's two waves share the memory)."""
    a, b, c = (RNG.integers(0, 2 ** 64, 64, dtype=U64) for _ in range(3))
    sz, pair = _syntax(target, wave)
    body = f"""
  v_lshlrev_b32 v30, 2, v0
  v_lshlrev_b32 v31, 3, v0
  v_lshlrev_b32 v32, 4, v0
  {pair}
  global_load_{sz['d1']} v40, v30, s[4:5] offset:{shift}
  global_load_{sz['d2']} v[42:43], v31, s[4:5] offset:{8 + shift}
  global_load_{sz['d4']} v[44:47], v[22:23], off offset:{shift}
  v_sub_u32 v33, 63, v0
  v_lshlrev_b32 v33, 2, v33
  global_load_{sz['d1']} v41, v33, s[4:5]
  s_waitcnt vmcnt(0)
  s_barrier
  global_store_{sz['d1']} v30, v45, s[4:5] offset:1024
  global_store_{sz['d2']} v31, v[46:47], s[4:5] offset:512
  s_waitcnt vmcnt(0)
  s_barrier
  global_load_{sz['d2']} v[48:49], v31, s[4:5] offset:1024
  s_waitcnt vmcnt(0)
  v_xor_b32 v8, v40, v41
  v_mov_b32 v9, v42
  v_xor_b32 v10, v43, v44
  v_xor_b32 v11, v48, v49
"""
    engine(target)
    kw = {"wave": wave} if target.startswith("gfx1") else {}
    r0, r1 = run(body, a, b, c, target=target, lanes=lanes, **kw)
    engine(target)
    raw = np.concatenate([a, b, c]).view(np.uint8).copy()
    n = lanes
    i = np.arange(n)
    v40 = _dwords(raw, 4 * i + shift)
    v42, v43 = _dwords(raw, 8 + 8 * i + shift), _dwords(raw, 12 + 8 * i + shift)
    v44, v45, v46, v47 = (_dwords(raw, 16 * i + shift + 4 * k) for k in range(4))
    mem = raw.copy()
    for k in range(n):           # the stores: the dwords at 1024.., then the dwordx2 at 512..
        mem[1024 + 4 * k:1028 + 4 * k] = np.frombuffer(int(v45[k]).to_bytes(4, "little"), np.uint8)
    for k in range(n):
        mem[512 + 8 * k:516 + 8 * k] = np.frombuffer(int(v46[k]).to_bytes(4, "little"), np.uint8)
        mem[516 + 8 * k:520 + 8 * k] = np.frombuffer(int(v47[k]).to_bytes(4, "little"), np.uint8)
    v48, v49 = _dwords(mem, 1024 + 8 * i), _dwords(mem, 1028 + 8 * i)
    v41 = _dwords(raw, 4 * (63 - i))                  # reversed lanes: scattered, the handler's path
    assert np.array_equal(r0[:n], (v40 ^ v41) | (v42 << U64(32)))
    assert np.array_equal(r1[:n], (v43 ^ v44) | ((v48 ^ v49) << U64(32)))
    assert (r0[n:] == U64(POISON)).all()


@pytest.mark.parametrize("target,wave", CASES)
@pytest.mark.parametrize("store", [False, True])
@pytest.mark.parametrize("saddr", [False, True])
def test_a_wave_running_past_the_allocation_faults_at_the_first_bad_lane(target, wave, store, saddr, engine,
                                                                        exact_bounds):
    """Consecutive 16-byte lanes from the 16-byte kernarg segment (s[0:1], its own aligned allocation): under
    exact bounds (memcheck) lane 1 is the first outside it, and the fault names its address."""
    a = RNG.integers(0, 2 ** 64, 64, dtype=U64)
    sz, _ = _syntax(target, wave)
    if saddr:
        addr = "v32, s[0:1]"
        setup = "v_lshlrev_b32 v32, 4, v0"
    else:
        carry = ("v_add_co_u32 v22, vcc_lo, s0, v32\n  v_add_co_ci_u32_e64 v23, null, s1, 0, vcc_lo"
                 if target.startswith("gfx1") else
                 "v_add_co_u32 v22, vcc, s0, v32\n  v_mov_b32 v23, s1\n  v_addc_co_u32 v23, vcc, v23, 0, vcc")
        addr = "v[22:23], off"
        setup = "v_lshlrev_b32 v32, 4, v0\n  " + carry
    op = (f"global_store_{sz['d4']} {addr.split(',')[0]}, v[40:43],{addr.split(',', 1)[1]}" if store else
          f"global_load_{sz['d4']} v[40:43], {addr}")
    body = f"""
  {setup}
  {op}
  s_waitcnt vmcnt(0)
"""
    engine(target)
    kw = {"wave": wave} if target.startswith("gfx1") else {}
    with pytest.raises(GPUFault) as e:
        run(body, a, target=target, **kw)
    engine(target)
    f = e.value
    assert f.instruction.startswith(f"global_{'store' if store else 'load'}"), f.instruction
    assert f.address is not None and f.address % ALIGN == 16, hex(f.address)


@pytest.mark.parametrize("target,wave", CASES)
def test_scalar_loads(target, wave, engine):
    """s_load of 1, 2, 4 and 8 dwords at an SGPR base plus immediate offsets (one not dword-aligned: the
    address's low bits are ignored), and a buffer-resource load, then every lane gets the values."""
    a, b, c = (RNG.integers(0, 2 ** 64, 64, dtype=U64) for _ in range(3))
    rdna = target.startswith("gfx1")
    ld = {1: "b32", 2: "b64", 4: "b128", 8: "b256"} if rdna else {1: "dword", 2: "dwordx2", 4: "dwordx4",
                                                                   8: "dwordx8"}
    # v[4:5] (the VGPRs numbered like the SGPR base) hold consecutive addresses into the input, and v24
    # (numbered like a destination) a marker: a scalar load taken for a vector one would load into v24
    carry = ("v_add_co_u32 v4, vcc_lo, s4, v30\n  v_add_co_ci_u32_e64 v5, null, s5, 0, vcc_lo" if rdna else
             "v_add_co_u32 v4, vcc, s4, v30\n  v_mov_b32 v5, s5\n  v_addc_co_u32 v5, vcc, v5, 0, vcc")
    body = f"""
  v_lshlrev_b32 v30, 2, v0
  {carry}
  v_mov_b32 v24, 0x5ca1ab1e
  s_load_{ld[1]} s20, s[4:5], 0x{4 * 3 + 2:x}
  s_load_{ld[2]} s[22:23], s[4:5], 0x{8 * 17:x}
  s_load_{ld[4]} s[24:27], s[4:5], 0x{16 * 40:x}
  s_load_{ld[8]} s[28:35], s[4:5], 0x{32 * 45:x}
  s_waitcnt lgkmcnt(0)
  v_mov_b32 v8, s20
  v_mov_b32 v9, s23
  v_mov_b32 v10, s26
  v_xor_b32 v11, s35, v24
"""
    engine(target)
    kw = {"wave": wave} if rdna else {}
    r0, r1 = run(body, a, b, c, target=target, **kw)
    engine(target)
    raw = np.concatenate([a, b, c]).view(np.uint8)
    d = _dwords(raw, [12, 8 * 17 + 4, 16 * 40 + 8, 32 * 45 + 28])
    assert (r0 == (d[0] | d[1] << U64(32))).all() and (r1 == (d[2] | (d[3] ^ U64(0x5CA1AB1E)) << U64(32))).all()


@pytest.mark.parametrize("target,wave", CASES)
def test_a_scalar_load_past_the_allocation_faults(target, wave, engine, exact_bounds):
    rdna = target.startswith("gfx1")
    body = f"""
  s_load_{'b128' if rdna else 'dwordx4'} s[20:23], s[0:1], 0x8
  s_waitcnt lgkmcnt(0)
  v_mov_b32 v8, s20
"""
    engine(target)
    kw = {"wave": wave} if rdna else {}
    with pytest.raises(GPUFault) as e:
        run(body, np.zeros(64, U64), target=target, **kw)
    engine(target)
    assert e.value.instruction.startswith("s_load") and e.value.address % ALIGN == 16, hex(e.value.address)
