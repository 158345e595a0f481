"""racecheck, global memory, of typed buffer accesses (``tbuffer_*``, ``buffer_*_format``) and scalar accesses
(``s_load_*`` read by the scalar unit, gfx9's ``s_store_*`` and ``s_atomic_*``): tiny gfx90a kernels assembled
with llvm-mc-19 (tests/emu/asmkit.py), one wave of each workgroup or two waves of one workgroup, lane 0 of each
wave touching one dword of a buffer.  Each planted race is reported with its kind, both instructions and the
dword; the clean variants — each wave its own dword, a barrier between the waves of one workgroup, one wave's
own store and load — are silent; both engines report the same thing (docs/check.md, racecheck)."""
import json
import os
import subprocess
import sys

import pytest
import test_memcheck_programs as programs

TF = "format:[BUF_DATA_FORMAT_32, BUF_NUM_FORMAT_UINT]"
# s3 = the wave's global index, s5 = its partner's (s3 ^ 1); s12 / s13 their dwords' byte offsets; s6 = s3 + 1
# (the value each wave stores); V# s[8:11] over the buffer, 32-bit UINT elements (buffer_*_format reads word 3);
# then only lane 0 of each wave runs: v1 = s6, v2 / v3 the own / partner's offset, v4 = 0
PROLOGUE = """
  s_load_dwordx2 s[8:9], s[0:1], 0x0
  v_readfirstlane_b32 s3, v0
  s_lshr_b32 s3, s3, 6
  s_mul_i32 s4, s2, {wpg}
  s_add_u32 s3, s3, s4
  s_xor_b32 s5, s3, 1
  s_lshl_b32 s12, s3, 2
  s_lshl_b32 s13, s5, 2
  s_add_u32 s6, s3, 1
  s_mov_b32 s10, 4096
  s_mov_b32 s11, {w3}
  v_and_b32 v5, 63, v0
  v_cmp_eq_u32 vcc, 0, v5
  s_and_saveexec_b64 s[30:31], vcc
  v_mov_b32 v1, s6
  v_mov_b32 v2, s12
  v_mov_b32 v3, s13
  v_mov_b32 v4, 0
  s_waitcnt lgkmcnt(0)
"""
W3 = 4 << 12 | 4 << 15          # gfx9 V# word 3: NUM_FORMAT 4 (UINT), DATA_FORMAT 4 (32)

CASES = {
    # name: (body, the report in every geometry: (kind, instruction, other instruction, byte offset[, the first
    # racing lane or dword of a scalar access: wave 0's x4 load reads its partner's dword 1 first[, count]]), or
    # None: silent)
    "tbuffer_store_same_dword": (f"tbuffer_store_format_x v1, v4, s[8:11], 0 {TF} offen",
                                 ("global-write-after-write", "tbuffer_store_format_x", "tbuffer_store_format_x", 0)),
    "tbuffer_store_own_dword": (f"tbuffer_store_format_x v1, v2, s[8:11], 0 {TF} offen", None),
    "format_load_partner": ("buffer_store_format_x v1, v2, s[8:11], 0 offen\n"
                            "  buffer_load_format_x v7, v3, s[8:11], 0 offen",
                            ("global-read-after-write", "buffer_load_format_x", "buffer_store_format_x", 4)),
    "format_load_own": ("buffer_store_format_x v1, v2, s[8:11], 0 offen\n"
                        "  buffer_load_format_x v7, v2, s[8:11], 0 offen", None),
    "tbuffer_load_partner": (f"global_store_dword v2, v1, s[8:9]\n  tbuffer_load_format_x v7, v3, s[8:11], 0 {TF} offen",
                             ("global-read-after-write", "tbuffer_load_format_x", "global_store_dword", 4)),
    "s_load_partner": ("global_store_dword v2, v1, s[8:9]\n  s_load_dword s20, s[8:9], s13",
                       ("global-read-after-write", "s_load_dword", "global_store_dword", 4)),
    "s_load_own": ("global_store_dword v2, v1, s[8:9]\n  s_load_dword s20, s[8:9], s12", None),
    "s_load_x4_partner": ("global_store_dword v2, v1, s[8:9]\n  s_and_b32 s14, s13, -16\n"
                          "  s_load_dwordx4 s[20:23], s[8:9], s14",
                          ("global-read-after-write", "s_load_dwordx4", "global_store_dword", 4, 1)),
    "s_store_same_dword": ("s_store_dword s6, s[8:9], 0x0",
                           ("global-write-after-write", "s_store_dword", "s_store_dword", 0)),
    "s_store_own_dword": ("s_store_dword s6, s[8:9], s12", None),
    "s_store_after_partner_load": ("s_load_dword s20, s[8:9], s13\n  s_waitcnt lgkmcnt(0)\n"
                                   "  s_store_dword s6, s[8:9], s12",
                                   ("global-write-after-read", "s_store_dword", "s_load_dword", 0)),
    "s_atomic_against_s_load": ("s_atomic_add s6, s[8:9], 0x0\n  s_load_dword s20, s[8:9], 0x0",
                                ("global-read-after-write", "s_load_dword", "s_atomic_add", 0, 0, 1)),
    "s_atomics_only": ("s_atomic_add s6, s[8:9], 0x0", None),
}
# a barrier orders the two waves of one workgroup (not two workgroups)
BARRIER = ("global_store_dword v2, v1, s[8:9]\n  s_waitcnt vmcnt(0)\n  s_barrier\n  s_load_dword s20, s[8:9], s13",
           ("global-read-after-write", "s_load_dword", "global_store_dword", 4))
TBUF_BARRIER = (f"tbuffer_store_format_x v1, v2, s[8:11], 0 {TF} offen\n  s_waitcnt vmcnt(0)\n  s_barrier\n"
                f"  tbuffer_load_format_x v7, v3, s[8:11], 0 {TF} offen",
                ("global-read-after-write", "tbuffer_load_format_x", "tbuffer_store_format_x", 4))

_DRIVER = r'''
import json, struct, sys
import numpy as np
sys.path[:0] = [{emu!r}]
import pyhip, asmkit
from pyhip.loader import load
g = asmkit.gpu("gfx90a"); g.engine = {engine!r}
native0 = g.engine_stats()["native"]
out = []
for name, body, groups, wpg in {runs!r}:
    src = asmkit.TEMPLATE.format(target="gfx90a", body={prologue!r}.format(wpg=wpg, w3={w3}) + "  " + body
                                 + "\n  s_waitcnt vmcnt(0) lgkmcnt(0)\n", lds=0, ieee=1, d32=3, d1664=3, prologue="",
                                 epilogue="  s_endpgm\n", extra="\n  .amdhsa_accum_offset 64", wave=64)
    prog = g.load_program(load(asmkit.assemble(src, "gfx90a")).code_objects[0].code_object)
    mem = g.memory
    buf, ka = mem.alloc(4096), mem.alloc(16)
    mem.fill(buf, 0, 4096, 1)
    mem.write(ka, struct.pack("<QQ", buf, 0))
    with pyhip.check("racecheck", echo=False) as s:
        g.run_dispatch(kernel_object=prog.kernel_object("k"), kernarg_address=ka, grid_size=(64 * wpg * groups, 1, 1),
                       workgroup_size=(64 * wpg, 1, 1), group_segment_size=0, private_segment_size=0)
    reps = [dict(r, offset=r["address"] - buf, count=s.count(r)) for r in s.reports]
    out.append([name, groups, wpg, reps, np.frombuffer(mem.read(buf, 8), np.uint32).tolist()])
    mem.free(buf); mem.free(ka); g.unload_program(prog)
print("RESULT", json.dumps(out))
print("NATIVE", g.engine_stats()["native"] - native0)
'''


def _run(engine, runs):
    code = _DRIVER.format(emu=str(programs.ROOT / "tests" / "emu"), engine=engine, runs=runs, prologue=PROLOGUE,
                          w3=W3)
    env = {**os.environ, "PYHIP_JIT_TIERING": "0", "PYTHONPATH": str(programs.ROOT)}
    env.pop("PYHIP_CHECK", None)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600, env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    lines = r.stdout.splitlines()
    native = int(next(x for x in lines if x.startswith("NATIVE")).split()[1])
    assert (native > 0) == (engine == "native"), lines
    return json.loads(next(x for x in lines if x.startswith("RESULT"))[7:])


def _check(name, groups, wpg, reps, want):
    if want is None:
        assert reps == [], (name, groups, wpg, reps)
        return
    # lane: or the scalar access's dword; count: lanes (dwords) that raced
    defaults = (0, 2 if want[0] != "global-write-after-write" else 1)
    kind, inst, other, offset, lane, count = want + defaults[len(want) - 4:]
    assert len(reps) == 1, (name, groups, wpg, reps)
    r = reps[0]
    assert r["kind"] == kind and r["instruction"].split()[0] == inst, (name, r)
    assert r["other_instruction"].split()[0] == other and r["offset"] == offset, (name, r)
    assert r["access"] == "4 bytes, " + ("read" if "read" in kind.split("-after-")[0] else "write"), (name, r)
    # by default a read of the partner's dword: both waves (the second wave's load too finds the first's store
    # unordered); a write over the other's: only the second wave (the first found nothing there yet); after both
    # atomics, only the first wave's load reads the other's (the second wave's own atomic came last)
    assert r["count"] == count, (name, r)
    if groups == 2:
        assert {tuple(r["workgroup"]), tuple(r["other_workgroup"])} == {(0, 0, 0), (1, 0, 0)}, r
    else:
        assert r["workgroup"] == r["other_workgroup"] == [0, 0, 0] and r["wave"] != r["other_wave"], r
    scalar = inst.startswith("s_")
    assert ("dword" in r) == scalar and ("lane" in r) != scalar and r.get("lane", r.get("dword")) == lane, r
    assert ("other_dword" in r) == other.startswith("s_"), r
    assert ("(scalar access, dword" in r["message"]) == (scalar or other.startswith("s_")), r


@pytest.mark.parametrize("engine", ["numpy", "native"])
def test_typed_buffer_and_scalar_races(engine):
    runs = [(name, body, groups, wpg) for name, (body, _) in CASES.items() for groups, wpg in ((2, 1), (1, 2))]
    runs += [("barrier", BARRIER[0], 2, 1), ("barrier", BARRIER[0], 1, 2),
             ("tbuffer_barrier", TBUF_BARRIER[0], 2, 1), ("tbuffer_barrier", TBUF_BARRIER[0], 1, 2)]
    got = _run(engine, runs)
    assert len(got) == len(runs)
    for name, groups, wpg, reps, data in got:
        if name in ("barrier", "tbuffer_barrier"):
            want = (BARRIER if name == "barrier" else TBUF_BARRIER)[1] if groups == 2 else None
        else:
            want = CASES[name][1]
        _check(name, groups, wpg, reps, want)
        if "own" in name or "store_same" in name:        # what the kernel computed is unchanged by the check
            assert data == ([1, 2] if "own" in name else [2, 0]), (name, data)
        if name == "s_atomics_only":
            assert data == [3, 0], data
