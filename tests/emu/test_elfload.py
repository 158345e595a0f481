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


@pytest.mark.parametrize("opt, codegen", [(1, None), (0, 0)], ids=["optimised", "quick"])
def test_loaded_without_llvm_computes_what_mcjit_computes(opt, codegen):
    obj = _compiled(IR, "probe", opt=opt, codegen=codegen)
    got = elfload.load(obj, "probe", {})
    assert got is not None and got[1] > 0
    addr = got[0]
    with compiler.llvm_section():
        ref = compiler._from_object(obj, "probe")
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
