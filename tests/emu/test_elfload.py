"""pyhip/emu/jit/elfload.py: a compiled object file put in executable memory without LLVM computes what the same
object loaded by MCJIT computes (constants from read-only data, a jump table, a call into the C library, a
call into the native runtime); what the loader does not take makes it step aside for MCJIT; a kernel from the
disk cache runs from it in a later process."""
import ctypes
import math
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from pyhip.emu.jit import compiler, elfload

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]

# f(x, k): a switch on k (a jump table in .rodata, absolute addresses), double constants (the constant pool),
# sin (a call into libm: an external symbol), a vector of constants
IR = """
declare double @llvm.sin.f64(double)
define double @probe(double %x, i32 %k) {
entry:
  switch i32 %k, label %other [ i32 0, label %a  i32 1, label %b  i32 2, label %c  i32 3, label %d
                                i32 4, label %e  i32 5, label %f ]
a:
  %a1 = fmul double %x, 3.141592653589793
  ret double %a1
b:
  %b1 = call double @llvm.sin.f64(double %x)
  ret double %b1
c:
  %c1 = fadd double %x, 0.1
  ret double %c1
d:
  %v = insertelement <4 x double> <double 1.5, double -2.25, double 3.125, double 7.0>, double %x, i32 2
  %w = fmul <4 x double> %v, <double 0.5, double 0.25, double 0.125, double 2.0>
  %s = call double @llvm.vector.reduce.fadd.v4f64(double 0.0, <4 x double> %w)
  ret double %s
e:
  %e1 = fdiv double 1.0, %x
  ret double %e1
f:
  %f1 = fsub double 2.718281828459045, %x
  ret double %f1
other:
  ret double -1.0
}
declare double @llvm.vector.reduce.fadd.v4f64(double, <4 x double>)
"""


def _compiled(ir: str, name: str, **kw) -> bytes:
    comp = compiler.compile_ir(ir, name, keep_object=True, **kw)
    return comp.object


def _call(addr: int, x: float, k: int) -> float:
    return ctypes.CFUNCTYPE(ctypes.c_double, ctypes.c_double, ctypes.c_int32)(addr)(x, k)


def _mcjit_reference(ir: str, name: str):
    """The same IR compiled and loaded by MCJIT alone, with LLVM's JIT code model (large: MCJIT's default
    section memory manager may place the constant pool beyond a small-model object's reach, and once crashed
    in the suite finalising one)."""
    from types import SimpleNamespace
    with compiler.llvm_section():
        b = compiler.llvm()
        cpu, features = compiler.host_cpu()
        tm = b.Target.from_default_triple().create_target_machine(cpu=cpu, features=features, jit=True,
                                                                    codemodel="jitdefault")
        mod = b.parse_assembly(ir)
        mod.verify()
        ee = b.create_mcjit_compiler(mod, tm)
        ee.finalize_object()
        _ENGINES.append(ee)                       # kept alive with the process: its code is called below
        return SimpleNamespace(address=ee.get_function_address(name))


_ENGINES: list = []


@pytest.mark.parametrize("opt, codegen", [(1, None), (0, 0)], ids=["optimised", "quick"])
def test_loaded_without_llvm_computes_what_mcjit_computes(opt, codegen):
    obj = _compiled(IR, "probe", opt=opt, codegen=codegen)
    got = elfload.load(obj, "probe", {})
    assert got is not None and got[1] > 0
    addr = got[0]
    ref = _mcjit_reference(IR, "probe")
    rng = np.random.default_rng(5)
    for x in rng.standard_normal(40) * 10:
        for k in range(8):
            got, want = _call(addr, float(x), k), _call(ref.address, float(x), k)
            assert got == want or (math.isnan(got) and math.isnan(want)), (x, k, got, want)
    assert _call(addr, 0.5, 1) == math.sin(0.5) and _call(addr, 2.0, 0) == 2.0 * math.pi


def test_what_the_loader_does_not_take_goes_to_mcjit():
    data_ir = """
@counter = global i64 5
define i64 @bump(i64 %n) {
  %v = load i64, ptr @counter
  %w = add i64 %v, %n
  store i64 %w, ptr @counter
  ret i64 %w
}
"""
    obj = _compiled(data_ir, "bump")
    assert elfload.load(obj, "bump", {}) is None                  # writable data
    assert elfload.load(_compiled(IR, "probe"), "nothere", {}) is None
    assert elfload.load(b"\x7fELF" + bytes(100), "probe", {}) is None
    assert elfload.load(b"not an object file", "probe", {}) is None
    ext_ir = "declare i64 @pyhip_no_such_function(i64)\n" \
             "define i64 @f(i64 %x) {\n  %r = call i64 @pyhip_no_such_function(i64 %x)\n  ret i64 %r\n}\n"
    assert elfload.load(_object_only(ext_ir), "f", {}) is None              # an unknown external symbol
    # load_object (the disk cache's path) takes such an object into the shared engine instead
    comp = compiler.load_object(obj, "bump", shared=True)
    assert "shared" in compiler._state
    f = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_int64)(comp.address)
    assert f(3) == 8 and f(4) == 12
    assert compiler.load_object(obj, "bump", shared=True).address == comp.address   # found again, not re-added


def _object_only(ir: str) -> bytes:
    """An object file whose external symbol nothing defines (MCJIT would refuse to load it)."""
    with compiler.llvm_section():
        return compiler._object(ir, 0, codegen=0)


def test_a_runtime_entry_point_resolves_through_the_given_symbols():
    ir = "declare i64 @pyhip_probe_target(i64)\n" \
         "define i64 @g(i64 %x) {\n  %r = call i64 @pyhip_probe_target(i64 %x)\n  %s = add i64 %r, 1\n  ret i64 %s\n}\n"
    target = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_int64)(lambda v: v * 7)
    got = elfload.load(_object_only(ir), "g", {"pyhip_probe_target": ctypes.cast(target, ctypes.c_void_p).value})
    assert got is not None
    g = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_int64)(got[0])
    assert [g(v) for v in (0, 3, -5)] == [1, 22, -34]


CHILD = textwrap.dedent("""
    import sys
    sys.path[:0] = [{here!r}, {root!r}]
    import numpy as np
    import test_compiled_engine as t
    from pyhip.emu.device import EmulatedGPU
    from pyhip.emu.jit import compiler
    g = EmulatedGPU("gfx90a", watchdog_steps=200_000)
    src = t._kernel_source(31)
    r, engine = t._dispatch(g, t._program(g, src), t._operands(3))
    stats = g.native_engine().jit.stats
    print(engine, stats.get("cached", 0), "init" in compiler._state, "shared" in compiler._state,
          np.asarray(r).tobytes().hex(), flush=True)
""")


def test_a_later_process_runs_the_cached_kernel_without_llvm(tmp_path):
    """The first process compiles (LLVM); the second loads the object from the disk cache through elfload —
    LLVM is never set up there — and computes the same bytes."""
    script = tmp_path / "child.py"
    script.write_text(CHILD.format(here=str(HERE), root=str(ROOT)))
    env = {**os.environ, "PYHIP_JIT_CACHE_DIR": str(tmp_path / "jit"), "PYHIP_JIT_TIERING": "0"}
    runs = [subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=300)
            for _ in range(2)]
    for r in runs:
        assert r.returncode == 0, r.stderr[-3000:]
    first, second = (r.stdout.split() for r in runs)
    assert first[0] == second[0] == "native"
    assert first[1] == "0" and first[2] == "True"                 # compiled with LLVM
    assert second[1] == "1" and second[2:4] == ["False", "False"]  # from the cache, LLVM never set up
    assert first[4] == second[4]


def _relocation_kinds(obj: bytes) -> dict:
    """{relocation kind: count} over the object's RELA sections (read here with struct, not through elfload)."""
    eh = elfload._EHDR.unpack_from(obj)
    shdrs = [elfload._SHDR.unpack_from(obj, eh[6] + i * elfload._SHDR.size) for i in range(eh[12])]
    kinds: dict = {}
    for h in shdrs:
        if h[1] == elfload.SHT_RELA and shdrs[h[7]][2] & elfload.SHF_ALLOC and shdrs[h[7]][1] != \
                elfload.SHT_X86_64_UNWIND:
            for k in range(h[5] // elfload._RELA.size):
                kind = elfload._RELA.unpack_from(obj, h[4] + k * elfload._RELA.size)[1] & 0xFFFFFFFF
                kinds[kind] = kinds.get(kind, 0) + 1
    return kinds


def test_code_reaches_constants_pc_relative():
    """The small code model: constants, the jump table and calls are PC-relative (no 64-bit absolute address
    materialised per constant, as the large model did)."""
    for opt, codegen in ((1, None), (0, 0)):
        kinds = _relocation_kinds(_compiled(IR, "probe", opt=opt, codegen=codegen))
        assert elfload.R_X86_64_64 not in kinds, kinds
        assert kinds.get(elfload.R_X86_64_PC32, 0) >= 6 and kinds.get(elfload.R_X86_64_PLT32) == 1, kinds


def _far_function():
    """Address of x -> 7 * x + 3 (machine code) in a page mapped terabytes away from where mmap puts things
    (None when the kernel does not honour the hint)."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long)
    for hint in (0x100000000000, 0x200000000000, 0x300000000000):
        addr = libc.mmap(hint, 4096, 3, 0x22, -1, 0)        # PROT_READ|WRITE, MAP_PRIVATE|ANONYMOUS
        if addr not in (None, ctypes.c_void_p(-1).value) and abs(addr - hint) < 2 ** 30:
            code = bytes([0x48, 0x6B, 0xC7, 0x07, 0x48, 0x83, 0xC0, 0x03, 0xC3])   # imul rax,rdi,7; add rax,3; ret
            ctypes.memmove(addr, code, len(code))
            assert libc.mprotect(ctypes.c_void_p(addr), 4096, 5) == 0            # PROT_READ|EXEC
            return addr
    return None


FAR_IR = """
declare i64 @pyhip_probe_far(i64)
define i64 @far(i64 %x) {
  %r = call i64 @pyhip_probe_far(i64 %x)
  %s = mul i64 %r, 3
  ret i64 %s
}
define ptr @far_address() {
  ret ptr @pyhip_probe_far
}
"""


def test_calls_out_of_rel32_reach_go_through_a_stub_and_addresses_through_a_slot():
    """A callee more than 2 GiB from the code (PLT32 out of reach: the loader's stub) and the callee's address
    taken (GOTPCREL*: the loader's slot) give what MCJIT's loading of the same object gives."""
    target = _far_function()
    if target is None:
        pytest.skip("no mapping far from the code")
    obj = _object_only(FAR_IR)
    kinds = _relocation_kinds(obj)
    assert elfload.R_X86_64_PLT32 in kinds
    assert any(k in kinds for k in (elfload.R_X86_64_GOTPCREL, elfload.R_X86_64_GOTPCRELX,
                                    elfload.R_X86_64_REX_GOTPCRELX)), kinds
    syms = {"pyhip_probe_far": target}
    far, addr = elfload.load(obj, "far", syms), elfload.load(obj, "far_address", syms)
    assert far is not None and addr is not None
    assert abs(far[0] - target) > 2 ** 31                   # the stub was needed
    with compiler.llvm_section():
        compiler.llvm().add_symbol("pyhip_probe_far", target)
        ref = compiler._mcjit(obj, "far")
        ref_addr = ref.engine.get_function_address("far_address")
    f = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_int64)
    a = ctypes.CFUNCTYPE(ctypes.c_void_p)
    for x in (0, 1, -5, 123456789):
        assert f(far[0])(x) == f(ref.address)(x) == (7 * x + 3) * 3
    assert a(addr[0])() == a(ref_addr)() == target
