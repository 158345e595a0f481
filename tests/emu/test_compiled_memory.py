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


def _ds(target):
    if target.startswith("gfx11"):
        return {"w": "ds_store_b32", "w2": "ds_store_2addr_b32", "r": "ds_load_b32", "r64": "ds_load_b64",
                "r2": "ds_load_2addr_b32", "r128": "ds_load_b128", "sub": "v_add_nc_u32",
                "cmp": "v_cmp_ne_u32_e32 vcc_lo,", "save": "s_and_saveexec_b32 s40, vcc_lo",
                "restore": "s_mov_b32 exec_lo, s40"}
    return {"w": "ds_write_b32", "w2": "ds_write2_b32", "r": "ds_read_b32", "r64": "ds_read_b64",
            "r2": "ds_read2_b32", "r128": "ds_read_b128", "sub": "v_add_u32", "cmp": "v_cmp_ne_u32 vcc,",
            "save": "s_and_saveexec_b64 s[40:41], vcc", "restore": "s_mov_b64 exec, s[40:41]"}


def _rotr(x, k):
    x = np.asarray(x, U64) & U64(0xFFFFFFFF)
    return ((x >> U64(k)) | (x << U64(32 - k))) & U64(0xFFFFFFFF)


@pytest.mark.parametrize("target,wave", CASES)
@pytest.mark.parametrize("lanes", [64, 41])
def test_lds_reads_and_writes(target, wave, lanes, engine):
    """LDS writes of a dword (one and two addresses) at random colliding addresses (a later lane wins, as the
    handler stores lane by lane), one through a base that wraps below zero with the offset bringing it back;
    reads of 1, 2 (one and two addresses) and 4 dwords at random addresses; against a numpy model of the
    workgroup's 1 KiB of LDS (zero at the start), on both engines, full and partial waves, wave64 and wave32."""
    n = 1024
    a = RNG.integers(0, 2 ** 64, 64, dtype=U64)
    wa = RNG.integers(0, 64, 64, dtype=U64) * U64(4)              # write addresses: 64 dwords, many collisions
    ra = RNG.integers(0, (n - 16) // 4, 64, dtype=U64) * U64(4)   # read addresses
    b = wa | (ra << U64(32))
    c = RNG.integers(0, 2 ** 64, 64, dtype=U64)
    ds = _ds(target)
    body = f"""
  {ds['sub']} v12, -64, v4
  v_and_b32 v13, 2, v7
  {ds['cmp']} 0, v13
  {ds['save']}
  {ds['w']} v12, v2 offset:64
  {ds['restore']}
  {ds['w2']} v4, v3, v6 offset0:64 offset1:128
  s_waitcnt lgkmcnt(0)
  s_barrier
  v_mov_b32 v8, v7
  v_mov_b32 v20, v6
  v_mov_b32 v21, v6
  v_mov_b32 v22, v6
  v_mov_b32 v23, v6
  v_mov_b32 v24, v6
  v_mov_b32 v25, v6
  v_mov_b32 v26, v6
  v_mov_b32 v27, v6
  v_and_b32 v13, 1, v7
  {ds['cmp']} 0, v13
  {ds['save']}
  {ds['r']} v8, v5
  {ds['r64']} v[20:21], v5 offset:4
  {ds['r2']} v[22:23], v5 offset0:1 offset1:3
  {ds['r128']} v[24:27], v5
  s_waitcnt lgkmcnt(0)
  {ds['restore']}
  v_alignbit_b32 v21, v21, v21, 7
  v_xor_b32 v9, v20, v21
  v_alignbit_b32 v23, v23, v23, 7
  v_xor_b32 v10, v22, v23
  v_alignbit_b32 v25, v25, v25, 7
  v_alignbit_b32 v26, v26, v26, 14
  v_alignbit_b32 v27, v27, v27, 21
  v_xor_b32 v11, v24, v25
  v_xor3_b32 v11, v11, v26, v27
"""
    if not target.startswith("gfx1"):
        body = body.replace("v_xor3_b32 v11, v11, v26, v27", "v_xor_b32 v11, v11, v26\n  v_xor_b32 v11, v11, v27")
    engine(target)
    kw = {"wave": wave} if target.startswith("gfx1") else {}
    r0, r1 = run(body, a, b, c, target=target, lanes=lanes, lds=n, **kw)
    engine(target)
    lds = np.zeros(n // 4, U64)
    lo = a & U64(0xFFFFFFFF)
    chi = c >> U64(32)
    for i in range(lanes):                        # the single writes, then the two-address ones (each in lane order)
        if chi[i] & U64(2):                       # lanes whose c bit 33 is clear do not write
            lds[int(wa[i]) // 4] = lo[i]
    for i in range(lanes):
        lds[int(wa[i]) // 4 + 64] = a[i] >> U64(32)
    for i in range(lanes):
        lds[int(wa[i]) // 4 + 128] = c[i] & U64(0xFFFFFFFF)
    ri = (ra // U64(4)).astype(np.int64)[:lanes]
    on = (chi[:lanes] & U64(1)) != 0              # the reads' lanes; the others keep v8 = c's high, v20.. = c's low
    keep = c[:lanes] & U64(0xFFFFFFFF)

    def rd(k):
        return np.where(on, lds[ri + k], keep)
    v8 = np.where(on, lds[ri], chi[:lanes])
    v9 = rd(1) ^ _rotr(rd(2), 7)
    v10 = rd(1) ^ _rotr(rd(3), 7)
    v11 = rd(0) ^ _rotr(rd(1), 7) ^ _rotr(rd(2), 14) ^ _rotr(rd(3), 21)
    np.testing.assert_array_equal(r0[:lanes], v8 | (v9 << U64(32)))
    np.testing.assert_array_equal(r1[:lanes], v10 | (v11 << U64(32)))
    assert (r0[lanes:] == POISON).all() and (r1[lanes:] == POISON).all()


@pytest.mark.parametrize("target,wave", CASES)
@pytest.mark.parametrize("store", [False, True])
def test_an_lds_access_past_the_end_goes_to_the_handler(target, wave, store, engine):
    """One lane's dword past the workgroup's LDS: the generated code leaves it to the handler, whose report
    (or behaviour) both engines share; the other lanes' accesses in range are not done twice or lost."""
    n = 256
    b = (np.arange(64, dtype=U64) * U64(4)) % U64(n)
    b[37] = U64(n - 2)                               # lane 37: bytes n-2 .. n+1
    ds = _ds(target)
    op = f"{ds['w']} v4, v2" if store else f"{ds['r']} v8, v4"
    body = f"""
  v_mov_b32 v8, 0
  {op}
  s_waitcnt lgkmcnt(0)
  v_mov_b32 v9, 0
  v_mov_b32 v10, 0
  v_mov_b32 v11, 0
"""
    engine(target)
    kw = {"wave": wave} if target.startswith("gfx1") else {}
    try:
        r0, r1 = run(body, np.arange(64, dtype=U64) + U64(1), b, target=target, lds=n, **kw)
    except GPUFault as exc:
        outcome = ("fault", str(exc).split("\n")[0])
    else:
        outcome = ("ran", r0.tobytes())
    engine(target)
    _LDS_OUTCOMES.setdefault((target, store), []).append(outcome)
    got = _LDS_OUTCOMES[(target, store)]
    assert len(set(got)) == 1, got                  # numpy and compiled: the same report or the same registers


_LDS_OUTCOMES: dict = {}



def _buffer_syntax(target):
    """(load/store mnemonic suffixes, DWORD3 of a raw buffer resource) for the target (Triton's values)."""
    if target.startswith("gfx1"):
        return {"d1": "b32", "d2": "b64", "d4": "b128"}, 0x31027000
    return {"d1": "dword", "d2": "dwordx2", "d4": "dwordx4"}, 0x27000


@pytest.mark.parametrize("target,wave", CASES)
@pytest.mark.parametrize("lanes", [64, 41])
def test_buffer_loads_and_stores(target, wave, lanes, engine):
    """MUBUF OFFEN loads and stores of 1, 2 and 4 dwords per lane through raw buffer resources (stride 0):
    consecutive offsets, a random set of lanes turned off with the offset 0x80000000 (as Triton masks them),
    num_records ending inside the wave (the lanes past it read 0 and drop their stores), a whole wave
    outside, soffset from an SGPR and as a constant, immediate offsets; reversed offsets go to the handler.
    (The stores do not overlap: the wave32 workgroup's two waves do not order theirs.)  Checked against a numpy model of the buffer rules on both
    engines."""
    rng = np.random.default_rng([lanes, wave, int(target[3:], 16)])   # both engines see the same case
    a, b, c = (rng.integers(0, 2 ** 64, 64, dtype=U64) for _ in range(3))
    masked = rng.random(64) < 0.3                         # lanes Triton turns off
    keep = sum(1 << i for i in range(64) if not masked[i])
    nrec = int(rng.integers(100, 200)) * 4                # bytes of the input resource (inside a and b)
    nout = 384                                            # bytes of the output resource (over c)
    sz, dw3 = _buffer_syntax(target)
    rdna = target.startswith("gfx1")
    vcc, sub = ("vcc_lo", "v_sub_nc_u32") if rdna else ("vcc", "v_sub_u32")
    body = f"""
  s_mov_b32 s8, s4
  s_and_b32 s9, s5, 0xffff
  s_mov_b32 s10, {nrec}
  s_mov_b32 s11, {dw3}
  s_add_u32 s20, s4, 1024
  s_addc_u32 s21, s5, 0
  s_and_b32 s21, s21, 0xffff
  s_mov_b32 s22, {nout}
  s_mov_b32 s23, {dw3}
  s_mov_b32 s24, s20
  s_mov_b32 s25, s21
  s_mov_b32 s26, 512
  s_mov_b32 s27, {dw3}
  s_mov_b32 s12, 8
  s_mov_b32 s14, {keep & 0xFFFFFFFF}
  s_mov_b32 s15, {keep >> 32}
  v_lshrrev_b64 v[20:21], v0, s[14:15]
  v_and_b32 v20, 1, v20
  v_cmp_ne_u32 {vcc}, 0, v20
  v_lshlrev_b32 v30, 2, v0
  v_bfrev_b32 v29, 1
  v_cndmask_b32 v31, v29, v30, {vcc}
  v_lshlrev_b32 v35, 3, v0
  v_cndmask_b32 v32, v29, v35, {vcc}
  v_lshlrev_b32 v33, 4, v0
  {sub} v34, 63, v0
  v_lshlrev_b32 v34, 2, v34
  buffer_load_{sz['d1']} v40, v31, s[8:11], s12 offen offset:4
  buffer_load_{sz['d2']} v[42:43], v32, s[8:11], 0 offen
  buffer_load_{sz['d4']} v[44:47], v33, s[8:11], 16 offen
  buffer_load_{sz['d1']} v41, v34, s[8:11], 0 offen
  buffer_load_{sz['d1']} v50, v29, s[8:11], 0 offen
  s_waitcnt vmcnt(0)
  s_barrier
  buffer_store_{sz['d1']} v45, v31, s[20:23], s12 offen offset:8
  buffer_store_{sz['d2']} v[46:47], v32, s[20:23], 0 offen offset:272
  buffer_store_{sz['d1']} v44, v29, s[20:23], 0 offen
  s_waitcnt vmcnt(0)
  s_barrier
  buffer_load_{sz['d2']} v[48:49], v35, s[24:27], 0 offen
  s_waitcnt vmcnt(0)
  v_xor_b32 v8, v40, v41
  v_mov_b32 v9, v42
  v_xor_b32 v10, v43, v44
  v_xor_b32 v10, v10, v50
  v_mov_b32 v11, v48
  v_xor_b32 v11, v11, v49
"""
    engine(target)
    kw = {"wave": wave} if rdna else {}
    r0, r1 = run(body, a, b, c, target=target, lanes=lanes, **kw)
    engine(target)
    raw = np.concatenate([a, b, c]).view(np.uint8).copy()
    n = lanes
    i = np.arange(n)
    on = ~masked[:n]

    def load(mem, offs, inside):
        return np.where(inside, _dwords(mem, np.where(inside, offs, 0)), U64(0))
    o40 = 8 + 4 + 4 * i
    v40 = load(raw, o40, on & (o40 + 4 <= nrec))
    o42 = 8 * i
    v42, v43 = (load(raw, o42 + 4 * k, on & (o42 + 8 <= nrec)) for k in range(2))
    o44 = 16 + 16 * i
    v44, v45, v46, v47 = (load(raw, o44 + 4 * k, o44 + 16 <= nrec) for k in range(4))
    o41 = 4 * (63 - i)
    v41 = load(raw, o41, o41 + 4 <= nrec)
    out = raw[1024:].copy()                             # the stores, in order, lane by lane
    for k in range(n):
        o = 8 + 8 + 4 * k
        if on[k] and o + 4 <= nout:
            out[o:o + 4] = np.frombuffer(int(v45[k]).to_bytes(4, "little"), np.uint8)
    for k in range(n):
        o = 272 + 8 * k
        if on[k] and o + 8 <= nout:
            out[o:o + 8] = np.frombuffer((int(v46[k]) | int(v47[k]) << 32).to_bytes(8, "little"), np.uint8)
    v48, v49 = _dwords(out, 8 * i), _dwords(out, 8 * i + 4)
    assert np.array_equal(r0[:n], (v40 ^ v41) | (v42 << U64(32)))
    assert np.array_equal(r1[:n], (v43 ^ v44) | ((v48 ^ v49) << U64(32)))   # v50 (a whole wave outside) reads 0
    assert (r0[n:] == U64(POISON)).all()


def _perm(i, mul, add):
    """The lane permutation the kernels compute: (i * mul + add) mod 64 (mul odd: a bijection)."""
    return (i * mul + add) & 63


def _permuted_offsets(add, shift2):
    """v30 = perm(i, 37, 11) * 16 and v31 = perm(i, 13, 5) << shift2, i the lane (v0)."""
    return f"""
  v_mul_u32_u24 v30, 37, v0
  {add} v30, 11, v30
  v_and_b32 v30, 63, v30
  v_lshlrev_b32 v30, 4, v30
  v_mul_u32_u24 v31, 13, v0
  {add} v31, 5, v31
  v_and_b32 v31, 63, v31
  v_lshlrev_b32 v31, {shift2}, v31"""


def _lane_math(target):
    """(v_add of an inline constant, dwordx3 and dwordx4 suffixes) for the target."""
    if target.startswith("gfx1"):
        return "v_add_nc_u32", "b96", "b128", "b64"
    return "v_add_u32_e32", "dwordx3", "dwordx4", "dwordx2"


@pytest.mark.parametrize("target,wave", CASES)
@pytest.mark.parametrize("lanes", [64, 41])
def test_scattered_loads_of_3_and_4_dwords(target, wave, lanes, engine):
    """Lane i loads 16 bytes from slot perm(i) and 12 bytes from 4 bytes into slot perm'(i): permuted addresses
    (the handler's lane-by-lane path), the 12-byte one not 8-byte aligned; every dword checked against numpy."""
    a, b, c = (RNG.integers(0, 2 ** 64, 64, dtype=U64) for _ in range(3))
    add, x3, x4, _ = _lane_math(target)
    body = _permuted_offsets(add, 4) + f"""
  global_load_{x4} v[44:47], v30, s[4:5]
  global_load_{x3} v[48:50], v31, s[4:5] offset:4
  s_waitcnt vmcnt(0)
  v_xor_b32 v8, v44, v50
  v_mov_b32 v9, v45
  v_xor_b32 v10, v46, v48
  v_xor_b32 v11, v47, v49
"""
    engine(target)
    kw = {"wave": wave} if target.startswith("gfx1") else {}
    r0, r1 = run(body, a, b, c, target=target, lanes=lanes, **kw)
    engine(target)
    raw = np.concatenate([a, b, c]).view(np.uint8).copy()
    i = np.arange(lanes)
    p, q = 16 * _perm(i, 37, 11), 16 * _perm(i, 13, 5)
    x = [_dwords(raw, p + 4 * k) for k in range(4)]
    y = [_dwords(raw, q + 4 + 4 * k) for k in range(3)]
    assert np.array_equal(r0[:lanes], (x[0] ^ y[2]) | (x[1] << U64(32)))
    assert np.array_equal(r1[:lanes], (x[2] ^ y[0]) | ((x[3] ^ y[1]) << U64(32)))
    assert (r0[lanes:] == U64(POISON)).all()


@pytest.mark.parametrize("target,wave", CASES)
@pytest.mark.parametrize("lanes", [64, 41])
def test_scattered_stores_of_2_and_4_dwords(target, wave, lanes, engine):
    """Lane i stores 16 bytes to slot perm(i) and 8 bytes to 8-byte slot perm'(i) (permuted: lane by lane), then
    every lane reads its own slots back; against a numpy model of the memory (unwritten slots keep the input)."""
    a, b, c = (RNG.integers(0, 2 ** 64, 64, dtype=U64) for _ in range(3))
    add, _, x4, x2 = _lane_math(target)
    body = _permuted_offsets(add, 3) + f"""
  v_mul_u32_u24 v40, 0x10101, v0
  v_xor_b32 v41, 0xdeadbeef, v40
  v_not_b32 v42, v40
  v_lshlrev_b32 v43, 20, v0
  global_store_{x4} v30, v[40:43], s[4:5]
  global_store_{x2} v31, v[42:43], s[4:5] offset:1024
  s_waitcnt vmcnt(0)
  s_barrier
  v_lshlrev_b32 v32, 4, v0
  v_lshlrev_b32 v33, 3, v0
  global_load_{x4} v[44:47], v32, s[4:5]
  global_load_{x2} v[48:49], v33, s[4:5] offset:1024
  s_waitcnt vmcnt(0)
  v_xor_b32 v8, v44, v48
  v_mov_b32 v9, v45
  v_xor_b32 v10, v46, v49
  v_mov_b32 v11, v47
"""
    engine(target)
    kw = {"wave": wave} if target.startswith("gfx1") else {}
    r0, r1 = run(body, a, b, c, target=target, lanes=lanes, **kw)
    engine(target)
    mem = np.concatenate([a, b, c]).view(np.uint32).copy()
    for k in range(lanes):
        v40 = (k * 0x10101) & 0xFFFFFFFF
        vals = [v40, v40 ^ 0xDEADBEEF, ~v40 & 0xFFFFFFFF, (k << 20) & 0xFFFFFFFF]
        p, q = 4 * _perm(k, 37, 11), 256 + 2 * _perm(k, 13, 5)
        mem[p:p + 4] = vals
        mem[q:q + 2] = vals[2:]
    i = np.arange(lanes)
    m = mem.astype(U64)
    x = [m[4 * i + k] for k in range(4)]
    y = [m[256 + 2 * i + k] for k in range(2)]
    assert np.array_equal(r0[:lanes], (x[0] ^ y[0]) | (x[1] << U64(32)))
    assert np.array_equal(r1[:lanes], (x[2] ^ y[1]) | (x[3] << U64(32)))
    assert (r0[lanes:] == U64(POISON)).all()
