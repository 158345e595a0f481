"""Global wave sync (ds_gws_*) and code objects with words that are not instructions.

A grid of more one-wave work-groups than one batch holds: each writes its id, waits at a GWS barrier for
all of them, then reads another group's id — only correct if every group is resident and the barrier
holds (without it the emulator would run the groups in several batches and read unwritten memory).  A
barrier that can never complete is reported as a deadlock, not a hang.  An undecodable word in a code
object faults only when a wave executes it."""
from __future__ import annotations

import struct

import numpy as np
import pytest

from pyhip.emu.engine import MAX_WAVES_PER_BATCH
from pyhip.emu.memory import GPUFault
from pyhip.loader import load

from asmkit import TEMPLATE, assemble, gpu

N = MAX_WAVES_PER_BATCH + 77               # more one-wave groups than one batch
SHIFT = 600

BODY = """
  s_load_dwordx4 s[4:7], s[0:1], 0x0
  s_lshl_b32 s12, s2, 2
  s_waitcnt lgkmcnt(0)
  v_mov_b32 v1, s2
  v_mov_b32 v2, s12
  v_cmp_eq_u32 vcc, 0, v0
  s_and_saveexec_b64 s[30:31], vcc
  global_store_dword v2, v1, s[4:5]
  s_waitcnt vmcnt(0)
  v_mov_b32 v6, {count_minus_1}
  s_mov_b32 m0, 0
  ds_gws_barrier v6 gds
  s_waitcnt lgkmcnt(0)
  s_add_u32 s13, s2, {shift}
  s_sub_u32 s14, s13, {n}
  s_cmp_ge_u32 s13, {n}
  s_cselect_b32 s13, s14, s13
  s_lshl_b32 s13, s13, 2
  v_mov_b32 v4, s13
  global_load_dword v5, v4, s[4:5]
  s_waitcnt vmcnt(0)
  global_store_dword v2, v5, s[6:7]
  s_endpgm
"""


def _run(body: str, groups: int):
    src = TEMPLATE.format(target="gfx90a", body=body, lds=0, ieee=1, d32=3, d1664=3, prologue="", epilogue="",
                          extra="\n  .amdhsa_accum_offset 64", wave=64)
    g = gpu("gfx90a")
    co = load(assemble(src, "gfx90a")).code_objects[0].code_object
    prog = g.load_program(co)
    mem = g.memory
    x, out, ka = mem.alloc(4 * groups), mem.alloc(4 * groups), mem.alloc(16)
    try:
        mem.fill(x, 0xCD, 4 * groups, 1)
        mem.fill(out, 0xCD, 4 * groups, 1)
        mem.write(ka, struct.pack("<QQ", x, out))
        g.run_dispatch(kernel_object=prog.kernel_object("k"), kernarg_address=ka, grid_size=(64 * groups, 1, 1),
                       workgroup_size=(64, 1, 1), group_segment_size=0, private_segment_size=0)
        return np.frombuffer(mem.read(out, 4 * groups), np.uint32).copy()
    finally:
        for p in (x, out, ka):
            mem.free(p)
        g.unload_program(prog)


def test_gws_barrier_makes_every_group_resident():
    out = _run(BODY.format(count_minus_1=N - 1, shift=SHIFT, n=N), N)
    assert np.array_equal(out, (np.arange(N) + SHIFT) % N)


def test_gws_barrier_that_cannot_complete_is_a_deadlock():
    with pytest.raises(GPUFault) as ei:
        _run(BODY.format(count_minus_1=N, shift=SHIFT, n=N), N)    # waits for one wave more than exist
    assert "global wave sync deadlock" in str(ei.value) and f"{N} of {N + 1} waves" in str(ei.value)


def test_undecodable_word_faults_only_when_executed():
    ok_body = """
  s_load_dwordx4 s[4:7], s[0:1], 0x0
  s_waitcnt lgkmcnt(0)
  v_mov_b32 v1, 0
  v_mov_b32 v2, 1234
  global_store_dword v1, v2, s[6:7]
  s_endpgm
  .long 0xd93a0004, 0x00000004
"""
    assert _run(ok_body, 1)[0] == 1234                          # the bad word after s_endpgm is never run
    with pytest.raises(GPUFault) as ei:
        _run("  .long 0xd93a0004, 0x00000004\n  s_endpgm\n", 1)
    assert "not a valid instruction" in str(ei.value) and "ds_gws_barrier encoding" in str(ei.value)
