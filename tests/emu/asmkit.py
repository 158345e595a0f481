"""Tiny kernels assembled with llvm-mc-19 and linked with ld.lld-19, run directly on an EmulatedGPU.

Vector template (one wave of 64 lanes, or ``lanes`` < 64 for a partial wave): per lane i, three 64-bit
operands are loaded into v[2:3], v[4:5], v[6:7] from ``a[i]``, ``b[i]``, ``c[i]``; the body under test
writes v[8:9] and v[10:11], which are stored to two 64-bit outputs per lane (poisoned with 0xCD first).
v1 holds the lane's byte offset (i*8) and must be preserved; s[4:5]/s[6:7] hold the buffer pointers.

Scalar template: 64 one-wave workgroups; workgroup g loads its operands ``a[g]``, ``b[g]``, ``c[g]`` into
s[20:21], s[22:23], s[24:25]; the body writes s[26:27] and s[28:29] (SCC can be captured with
``s_cselect_b32``); both are stored per workgroup.
"""
from __future__ import annotations

import functools
import os
import shutil
import struct
import subprocess
import tempfile
from pathlib import Path

import numpy as np
import pytest

from pyhip.emu.device import EmulatedGPU
from pyhip.loader import load

POISON = 0xCDCDCDCDCDCDCDCD

VECTOR_PROLOGUE = """
  s_load_dwordx4 s[4:7], s[0:1], 0x0
  s_waitcnt lgkmcnt(0)
  v_lshlrev_b32 v1, 3, v0
  global_load_dwordx2 v[2:3], v1, s[4:5]
  global_load_dwordx2 v[4:5], v1, s[4:5] offset:512
  global_load_dwordx2 v[6:7], v1, s[4:5] offset:1024
  v_mov_b32 v8, 0
  v_mov_b32 v9, 0
  v_mov_b32 v10, 0
  v_mov_b32 v11, 0
  s_waitcnt vmcnt(0)
"""
VECTOR_EPILOGUE = """
  global_store_dwordx2 v1, v[8:9], s[6:7]
  global_store_dwordx2 v1, v[10:11], s[6:7] offset:512
  s_endpgm
"""
SCALAR_PROLOGUE = """
  s_load_dwordx4 s[4:7], s[0:1], 0x0
  s_lshl_b32 s12, s2, 3
  s_waitcnt lgkmcnt(0)
  s_load_dwordx2 s[20:21], s[4:5], s12
  s_add_u32 s13, s12, 512
  s_load_dwordx2 s[22:23], s[4:5], s13
  s_add_u32 s13, s12, 1024
  s_load_dwordx2 s[24:25], s[4:5], s13
  s_mov_b64 s[26:27], 0
  s_mov_b64 s[28:29], 0
  s_waitcnt lgkmcnt(0)
"""
SCALAR_EPILOGUE = """
  v_mov_b32 v1, s12
  v_mov_b32 v2, s26
  v_mov_b32 v3, s27
  v_mov_b32 v4, s28
  v_mov_b32 v5, s29
  v_cmp_eq_u32 vcc, 0, v0
  s_and_saveexec_b64 s[30:31], vcc
  global_store_dwordx2 v1, v[2:3], s[6:7]
  global_store_dwordx2 v1, v[4:5], s[6:7] offset:512
  s_endpgm
"""

TEMPLATE = """
.amdgcn_target "amdgcn-amd-amdhsa--{target}"
.text
.globl k
.p2align 8
.type k,@function
k:
{prologue}
{body}
{epilogue}
.rodata
.p2align 6
.amdhsa_kernel k
  .amdhsa_user_sgpr_kernarg_segment_ptr 1
  .amdhsa_system_sgpr_workgroup_id_x 1
  .amdhsa_next_free_vgpr 64
  .amdhsa_next_free_sgpr 40{extra}
  .amdhsa_group_segment_fixed_size {lds}
  .amdhsa_ieee_mode {ieee}
  .amdhsa_dx10_clamp {ieee}
  .amdhsa_float_denorm_mode_32 {d32}
  .amdhsa_float_denorm_mode_16_64 {d1664}
.end_amdhsa_kernel
.amdgpu_metadata
---
amdhsa.version: [1, 2]
amdhsa.kernels:
  - .name: k
    .symbol: k.kd
    .kernarg_segment_size: 16
    .group_segment_fixed_size: {lds}
    .private_segment_fixed_size: 0
    .kernarg_segment_align: 8
    .wavefront_size: {wave}
    .sgpr_count: 40
    .vgpr_count: 64
    .max_flat_workgroup_size: 256
    .args:
      - {{.offset: 0, .size: 8, .value_kind: global_buffer, .address_space: global}}
      - {{.offset: 8, .size: 8, .value_kind: global_buffer, .address_space: global}}
...
.end_amdgpu_metadata
"""


def tools() -> tuple[str, str]:
    mc, ld = shutil.which("llvm-mc-19"), shutil.which("ld.lld-19")
    if mc is None or ld is None:
        pytest.fail("llvm-mc-19 and ld.lld-19 are needed (tools/run_tests.sh installs the Debian toolchain)")
    return mc, ld


@functools.lru_cache(maxsize=None)
def assemble(source: str, target: str, mattr: str = "") -> bytes:
    """``mattr``: llvm-mc's -mattr (``+wavefrontsize64`` for RDNA code whose operands depend on the wave size)."""
    mc, ld = tools()
    with tempfile.TemporaryDirectory() as d:
        s, o, so = Path(d, "k.s"), Path(d, "k.o"), Path(d, "k.so")
        s.write_text(source)
        attr = [f"-mattr={mattr}"] if mattr else []
        r = subprocess.run([mc, "-triple", "amdgcn-amd-amdhsa", f"-mcpu={target}", *attr, "-filetype=obj", str(s),
                            "-o", str(o)], capture_output=True, text=True)
        if r.returncode:
            raise AssertionError(f"llvm-mc-19 rejected the kernel:\n{r.stderr}")
        subprocess.run([ld, "-shared", str(o), "-o", str(so)], check=True, capture_output=True)
        return so.read_bytes()


_GPUS: dict[str, EmulatedGPU] = {}


def gpu(target: str) -> EmulatedGPU:
    if target not in _GPUS:
        _GPUS[target] = EmulatedGPU(target, watchdog_steps=200_000)
    return _GPUS[target]


def run(body: str, a, b=None, c=None, *, target="gfx90a", scalar=False, lanes=64, lds=0, ieee=1, denorm=(3, 3),
        wave=64, private=0):
    """→ (r0, r1) as uint64 arrays of 64 (lanes beyond ``lanes`` keep the poison).  ``denorm``: the
    descriptor's FLOAT_DENORM_MODE_32 and _16_64 (3: denormals in and out; 0: flushed).  RDNA targets
    (gfx1030, gfx1100) take ``wave`` 32 (the 64 work-items are two waves) or 64; vector template only.
    ``private`` (gfx1100): bytes of scratch per work-item (architected flat scratch)."""
    rdna = target.startswith("gfx1")
    if rdna and scalar:
        raise ValueError("the scalar template is GFX9 code")
    extra = ("\n  .amdhsa_wavefront_size32 " + str(int(wave == 32))) if rdna else "\n  .amdhsa_accum_offset 64"
    if private:
        extra += f"\n  .amdhsa_enable_private_segment 1\n  .amdhsa_private_segment_fixed_size {private}"
    src = TEMPLATE.format(target=target, body=body, lds=lds, ieee=ieee, d32=denorm[0], d1664=denorm[1],
                          prologue=SCALAR_PROLOGUE if scalar else VECTOR_PROLOGUE,
                          epilogue=SCALAR_EPILOGUE if scalar else VECTOR_EPILOGUE, extra=extra,
                          wave=wave if rdna else 64)
    g = gpu(target)
    co = load(assemble(src, target)).code_objects[0].code_object
    prog = g.load_program(co)
    mem = g.memory
    ops = [_bits64(x) for x in (a, b, c)]
    inp, out, ka = mem.alloc(1536), mem.alloc(1024), mem.alloc(16)
    try:
        mem.write(inp, np.concatenate(ops).astype(np.uint64).tobytes())
        mem.fill(out, 0xCD, 1024, 1)
        mem.write(ka, struct.pack("<QQ", inp, out))
        grid = (64 * 64, 1, 1) if scalar else (lanes, 1, 1)
        g.run_dispatch(kernel_object=prog.kernel_object("k"), kernarg_address=ka, grid_size=grid,
                       workgroup_size=(64, 1, 1), group_segment_size=lds, private_segment_size=private)
        r = np.frombuffer(mem.read(out, 1024), np.uint64)
        return r[:64].copy(), r[64:].copy()
    finally:
        for p in (inp, out, ka):
            mem.free(p)
        g.unload_program(prog)


def run_rows(bodies, rows, *, target: str, wave: int = 64):
    """One wave runs each of ``bodies`` (a list: one kernel runs them all, one after another) over a register
    file given whole: ``rows`` (len(bodies), n ≤ 48, wave) uint32, VGPR r of lane l before body c =
    rows[c, r, l] (loaded per lane as 16-byte pieces; v60 holds the lane's offset and must be preserved);
    returns the n rows after each body.  The device's current engine runs it (the ``engine`` fixture picks)."""
    rows = np.ascontiguousarray(rows, np.uint32)
    cases, n = rows.shape[0], rows.shape[1]
    if cases != len(bodies) or n > 48 or n % 4 or rows.shape[2] != wave:
        raise ValueError("rows: (len(bodies), n, wave) with n a multiple of 4 up to 48")
    rdna = target.startswith("gfx1")
    ld, sto = ("global_load_b128", "global_store_b128") if rdna else ("global_load_dwordx4", "global_store_dwordx4")
    step = 4 * n * wave
    # one loop over the cases (s10 counts them): the loads and stores once, each body behind a branch of its own
    code = [f"  s_load_dwordx4 s[4:7], s[0:1], 0x0\n  v_mul_u32_u24 v60, {4 * n}, v0\n  s_mov_b32 s10, 0\n"
            "  s_waitcnt lgkmcnt(0)\nnext_case:\n"]
    code += [f"  {ld} v[{r}:{r + 3}], v60, s[4:5] offset:{4 * r}\n" for r in range(0, n, 4)]
    code += ["  s_waitcnt vmcnt(0)\n"]
    code += [f"  s_cmp_eq_u32 s10, {c}\n  s_cbranch_scc1 case_{c}\n" for c in range(cases)]
    code += ["  s_branch case_done\n"]
    for c, body in enumerate(bodies):
        code += [f"case_{c}:\n", body, "\n  s_branch case_done\n"]
    code += ["case_done:\n"]
    code += [f"  {sto} v60, v[{r}:{r + 3}], s[6:7] offset:{4 * r}\n" for r in range(0, n, 4)]
    code += [f"  s_add_u32 s{b}, s{b}, {step}\n  s_addc_u32 s{b + 1}, s{b + 1}, 0\n" for b in (4, 6)]
    code += [f"  s_add_u32 s10, s10, 1\n  s_cmp_lt_u32 s10, {cases}\n  s_cbranch_scc1 next_case\n"]
    extra = ("\n  .amdhsa_wavefront_size32 " + str(int(wave == 32))) if rdna else "\n  .amdhsa_accum_offset 64"
    src = TEMPLATE.format(target=target, body="".join(code), lds=0, ieee=1, d32=3, d1664=3, prologue="",
                          epilogue="  s_endpgm\n", extra=extra, wave=wave)
    g = gpu(target)
    mattr = "+wavefrontsize64" if rdna and wave == 64 else ""
    prog = g.load_program(load(assemble(src, target, mattr)).code_objects[0].code_object)
    mem = g.memory
    size = rows.nbytes
    inp, out, ka = mem.alloc(size), mem.alloc(size), mem.alloc(16)
    try:
        mem.write(inp, rows.transpose(0, 2, 1).copy().tobytes())     # per case, lane-major
        mem.fill(out, 0xCD, size, 1)
        mem.write(ka, struct.pack("<QQ", inp, out))
        g.run_dispatch(kernel_object=prog.kernel_object("k"), kernarg_address=ka, grid_size=(wave, 1, 1),
                       workgroup_size=(wave, 1, 1), group_segment_size=0, private_segment_size=0)
        got = np.frombuffer(mem.read(out, size), np.uint32).reshape(cases, wave, n)
        return got.transpose(0, 2, 1).copy()
    finally:
        for p in (inp, out, ka):
            mem.free(p)
        g.unload_program(prog)


def _bits64(x):
    """Operands as raw bits: 8-byte items as they are, 4-byte items (f32/u32/i32) zero-extended."""
    if x is None:
        return np.zeros(64, np.uint64)
    x = np.ascontiguousarray(x)
    if x.dtype.itemsize == 8:
        return x.view(np.uint64)
    if x.dtype.itemsize == 4:
        return x.view(np.uint32).astype(np.uint64)
    raise TypeError(f"operands must have 4- or 8-byte items, not {x.dtype}")


def lo(x):
    return (np.asarray(x) & np.uint64(0xFFFFFFFF)).astype(np.uint32)


def hi(x):
    return (np.asarray(x) >> np.uint64(32)).astype(np.uint32)


@pytest.fixture(params=["numpy", "compiled"])
def engine(request, monkeypatch):
    """Which engine runs the kernel (a test module imports this fixture): "numpy" sets the device's engine
    to it; "compiled" sets PYHIP_JIT_TIERING=0 so the native engine compiles the kernel even for its first
    small dispatch (and the memory instructions run through the native handlers).  Yields a check, called
    before the run (counts; it also picks the device's engine) and after it (checks), that the dispatches
    since ran on that engine."""
    if request.param == "compiled":
        monkeypatch.setenv("PYHIP_JIT_TIERING", "0")
    seen = {}

    def check(target):
        if request.param == "numpy" and target not in seen:
            # not tier 0: under xdist the compiled case of the same kernel may have run (and left it in the
            # session's compiled-kernel cache) before
            monkeypatch.setattr(gpu(target), "engine", "numpy")
        st = gpu(target).engine_stats()
        if target not in seen:
            seen[target] = st["native"]
            return
        if "PYHIP_ENGINE" not in os.environ:
            assert (st["native"] > seen.pop(target)) == (request.param == "compiled"), (request.param, st)
    yield check
