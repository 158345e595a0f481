"""The compiled engine's process-level behaviour (pyhip/emu/jit): threads that need one kernel at the same
time share one compile, different kernels compiled from many threads at once all come out right (LLVM is
used by one thread at a time), a process that exits while a kernel compiles exits cleanly, small first
dispatches run on the numpy engine and the kernel compiles at its next dispatch (tier 0), and the disk
cache of compiled objects serves a later process."""
import os
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import numpy as np
import pytest

import asmkit
from pyhip.emu import jit
from pyhip.emu.device import EmulatedGPU
from pyhip.loader import load

HERE = Path(__file__).resolve().parent


def _kernel_source(seed: int, n: int = 40, loop: bool = True) -> str:
    """A random straight run of f32 VALU work on v2..v11 (inside a short scalar loop with ``loop``), results in
    v8..v11 (what asmkit's epilogue stores)."""
    r = np.random.default_rng(seed)
    ops = ["v_add_f32 v{a}, v{b}, v{c}", "v_mul_f32 v{a}, v{b}, v{c}", "v_fma_f32 v{a}, v{b}, v{c}, v{a}",
           "v_max_f32 v{a}, v{b}, v{c}", "v_sub_u32 v{a}, v{b}, v{c}", "v_xor_b32 v{a}, v{b}, v{c}",
           "v_exp_f32 v{a}, v{b}", "v_rcp_f32 v{a}, v{b}"]
    body = "\n".join("  " + ops[r.integers(len(ops))].format(a=8 + r.integers(4), b=2 + r.integers(10),
                                                               c=2 + r.integers(10)) for _ in range(n))
    if not loop:
        return body
    return f"  s_mov_b32 s30, 3\nloop_{seed}:\n{body}\n  s_sub_u32 s30, s30, 1\n  s_cmp_lg_u32 s30, 0\n" \
           f"  s_cbranch_scc1 loop_{seed}"


def _program(g, src):
    text = asmkit.TEMPLATE.format(target="gfx90a", body=src, lds=0, ieee=1, d32=3, d1664=3,
                                  prologue=asmkit.VECTOR_PROLOGUE, epilogue=asmkit.VECTOR_EPILOGUE,
                                  extra="\n  .amdhsa_accum_offset 64", wave=64)
    return g.load_program(load(asmkit.assemble(text, "gfx90a")).code_objects[0].code_object)


def _dispatch(g, prog, operands):
    """Run kernel ``k`` of ``prog`` on one wave; returns the 128 result words (as asmkit.run)."""
    import struct
    mem = g.memory
    inp, out, ka = mem.alloc(1536), mem.alloc(1024), mem.alloc(16)
    try:
        mem.write(inp, np.concatenate([x.view(np.uint32).astype(np.uint64) for x in operands]).tobytes())
        mem.fill(out, 0xCD, 1024, 1)
        mem.write(ka, struct.pack("<QQ", inp, out))
        g.run_dispatch(kernel_object=prog.kernel_object("k"), kernarg_address=ka, grid_size=(64, 1, 1),
                       workgroup_size=(64, 1, 1), group_segment_size=0, private_segment_size=0)
        return np.frombuffer(mem.read(out, 1024), np.uint64).copy(), g.last_dispatch.engine
    finally:
        for p in (inp, out, ka):
            mem.free(p)


def _native_gpu():
    g = EmulatedGPU("gfx90a", watchdog_steps=200_000)
    if g.engine != "native" or g.native_engine() is None or g.native_engine().jit is None:
        pytest.skip("the suite runs with PYHIP_ENGINE set or without the compiled engine")
    return g


@pytest.fixture
def fresh(monkeypatch, tmp_path):
    """A new device with an empty compiled-object cache; the compiled engine compiles before it runs."""
    monkeypatch.setenv("PYHIP_JIT_CACHE_DIR", str(tmp_path / "jit"))
    monkeypatch.setenv("PYHIP_JIT_TIERING", "0")
    return _native_gpu()


def _operands(seed):
    rng = np.random.default_rng(seed)
    return [rng.uniform(-2, 2, 64).astype(np.float32) for _ in range(3)]


def _reference(src, operands):
    """The same kernel on a numpy-engine device (the reference this test compares with)."""
    ref = EmulatedGPU("gfx90a", watchdog_steps=200_000)
    ref.engine = "numpy"
    return _dispatch(ref, _program(ref, src), operands)[0]


def test_threads_needing_one_kernel_share_one_compile(fresh):
    src = _kernel_source(1)
    prog = _program(fresh, src)
    ops = _operands(1)
    want = _reference(src, ops)
    got, errors = [None] * 4, []

    def go(i):
        try:
            got[i] = _dispatch(fresh, prog, ops)
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=go, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    for r, engine in got:
        assert engine == "native"
        np.testing.assert_array_equal(r, want)
    assert fresh.native_engine().jit.stats["compiled"] == 1


def test_many_kernels_compiled_from_many_threads_at_once(fresh):
    srcs = [_kernel_source(10 + i) for i in range(4)]
    progs = [_program(fresh, s) for s in srcs]
    ops = [_operands(10 + i) for i in range(4)]
    got, errors = [None] * 4, []

    def go(i):
        try:
            got[i] = _dispatch(fresh, progs[i], ops[i])
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=go, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    for i in range(4):
        assert got[i][1] == "native"
        np.testing.assert_array_equal(got[i][0], _reference(srcs[i], ops[i]), err_msg=f"kernel {i}")
    assert fresh.native_engine().jit.stats["compiled"] == 4


def test_a_small_first_dispatch_runs_on_the_numpy_engine_and_the_next_compiled(monkeypatch, tmp_path):
    monkeypatch.setenv("PYHIP_JIT_CACHE_DIR", str(tmp_path / "jit"))
    monkeypatch.setenv("PYHIP_JIT_TIERING", "1")
    g = _native_gpu()
    src = _kernel_source(3, loop=False)
    prog = _program(g, src)
    ops = _operands(3)
    want = _reference(src, ops)
    r, engine = _dispatch(g, prog, ops)
    assert engine == "numpy" and g.engine_stats()["tier0"] == 1
    assert g.native_engine().jit.stats["compiled"] == 0            # nothing compiled for a kernel run once
    np.testing.assert_array_equal(r, want)
    # the second dispatch starts the quick compile in the background and does not wait for it: it runs on the
    # numpy engine as long as the code is not in (held here until released), the compiled code after
    cache = g.native_engine().jit
    hold, real = threading.Event(), cache._compile_quietly
    monkeypatch.setattr(cache, "_compile_quietly", lambda *a: (hold.wait(60), real(*a)))
    for n in (2, 3):
        ops = _operands(n + 10)
        r, engine = _dispatch(g, prog, ops)
        assert engine == "numpy" and g.engine_stats()["tier0"] == n and cache.stats["compiled"] == 0
        np.testing.assert_array_equal(r, _reference(src, ops))
    hold.set()
    assert jit.settle(120) and cache.stats["compiled"] == 1
    for n in (4, 5):
        ops = _operands(n + 10)
        r, engine = _dispatch(g, prog, ops)
        assert engine == "native" and g.engine_stats()["fallback"] == 0 and g.engine_stats()["tier0"] == 3
        np.testing.assert_array_equal(r, _reference(src, ops))
    # a kernel with a loop compiles at its first dispatch
    src = _kernel_source(4)
    r, engine = _dispatch(g, _program(g, src), ops)
    assert engine == "native"
    np.testing.assert_array_equal(r, _reference(src, ops))


def test_a_background_compile_that_fails_leaves_the_kernel_on_the_numpy_engine_saying_why(monkeypatch, tmp_path):
    monkeypatch.setenv("PYHIP_JIT_CACHE_DIR", str(tmp_path / "jit"))
    monkeypatch.setenv("PYHIP_JIT_TIERING", "1")
    g = _native_gpu()
    src = _kernel_source(5, loop=False)
    prog = _program(g, src)
    cache = g.native_engine().jit

    def broken(*a):
        raise RuntimeError("LLVM says no")
    monkeypatch.setattr(cache, "_compile", broken)
    engines = []
    for n in range(4):
        ops = _operands(20 + n)
        r, engine = _dispatch(g, prog, ops)
        engines.append(engine)
        np.testing.assert_array_equal(r, _reference(src, ops))
        assert jit.settle(120)
    assert engines == ["numpy"] * 4
    assert any("background compile failed: LLVM says no" in why for why in g.native_engine().fallbacks), \
        g.native_engine().fallbacks


CHILD = textwrap.dedent("""
    import sys, threading, time
    sys.path[:0] = [{here!r}, {root!r}]
    import numpy as np
    import test_compiled_engine as t
    from pyhip.emu.device import EmulatedGPU
    g = EmulatedGPU("gfx90a", watchdog_steps=200_000)
    prog = t._program(g, t._kernel_source(int(sys.argv[1]), n=int(sys.argv[2])))
    threading.Thread(target=t._dispatch, args=(g, prog, t._operands(0)), daemon=True).start()
    time.sleep(float(sys.argv[3]))
    print("leaving", g.native_engine().jit.stats["compiled"], flush=True)
""")


@pytest.mark.parametrize("delay", [0.05, 0.3])
def test_a_process_leaving_while_a_kernel_compiles_exits_cleanly(tmp_path, delay):
    """LLVM's static destructors must not run under a compiling thread (compiler.llvm_section)."""
    script = tmp_path / "child.py"
    script.write_text(CHILD.format(here=str(HERE), root=str(HERE.parents[1])))
    env = {**os.environ, "PYHIP_JIT_CACHE_DIR": "", "PYHIP_JIT_TIERING": "0"}
    r = subprocess.run([sys.executable, str(script), "7", "300", str(delay)], capture_output=True, text=True,
                       env=env, timeout=120)
    assert r.returncode == 0 and r.stdout.startswith("leaving"), r.stdout + r.stderr[-3000:]


FORK_CHILD = textwrap.dedent("""
    import os, sys, threading, time
    sys.path[:0] = [{here!r}, {root!r}]
    import numpy as np
    import test_compiled_engine as t
    from pyhip.emu.device import EmulatedGPU
    g = EmulatedGPU("gfx90a", watchdog_steps=200_000)
    prog = t._program(g, t._kernel_source(11, n=200))
    threading.Thread(target=t._dispatch, args=(g, prog, t._operands(0)), daemon=True).start()
    jit = None
    for _ in range(20000):                         # fork while the compile is under way
        nat = g._native
        jit = nat.jit if nat is not None else None
        if jit is not None and jit._compiling:
            break
        time.sleep(0.001)
    time.sleep(float(sys.argv[1]))
    busy = bool(jit._compiling)
    pid = os.fork()
    if pid == 0:                                   # the child compiles and runs a kernel of its own
        g2 = EmulatedGPU("gfx90a", watchdog_steps=200_000)
        src = t._kernel_source(12, n=20)
        r, engine = t._dispatch(g2, t._program(g2, src), t._operands(1))
        os._exit(0 if engine == "native" else 3)
    _, status = os.waitpid(pid, 0)
    print("child", os.waitstatus_to_exitcode(status), "compiling" if busy else "compiled", flush=True)
""")


def test_a_fork_while_a_kernel_compiles_leaves_the_child_able_to_compile(tmp_path):
    """The child of a fork taken during a compile must not inherit LLVM's lock held by a thread it lacks."""
    script = tmp_path / "child.py"
    script.write_text(FORK_CHILD.format(here=str(HERE), root=str(HERE.parents[1])))
    env = {**os.environ, "PYHIP_JIT_CACHE_DIR": "", "PYHIP_JIT_TIERING": "0"}
    r = subprocess.run([sys.executable, str(script), "0.02"], capture_output=True, text=True, env=env, timeout=240)
    assert r.returncode == 0 and r.stdout.strip().startswith("child 0"), r.stdout + r.stderr[-3000:]



CACHE_CHILD = textwrap.dedent("""
    import sys
    sys.path[:0] = [{here!r}, {root!r}]
    import numpy as np
    import test_compiled_engine as t
    from pyhip.emu.device import EmulatedGPU
    from pyhip.emu.jit import objcache
    g = EmulatedGPU("gfx90a", watchdog_steps=200_000)
    jit = g.native_engine().jit
    for seed in (21, 22, 23, 21):                  # the last: the first kernel's code loaded a second time
        src = t._kernel_source(seed)
        ops = t._operands(seed)
        r, engine = t._dispatch(g, t._program(g, src), ops)
        assert engine == "native", engine
        np.testing.assert_array_equal(r, t._reference(src, ops))
    codes = {{v[1].address for v in jit._done.values()}}
    print(jit.stats["compiled"], jit.stats.get("cached", 0), len(jit._done), len(codes), objcache.stats["bad"],
          flush=True)
""")


def test_compiled_kernels_come_back_from_the_disk_cache_into_one_engine(tmp_path):
    """A later process loads every kernel from the disk cache (no compile) into the process's one shared
    execution engine; code loaded twice is there once; an entry holding another kernel's object is refused
    (counted bad), recompiled and rewritten, and the results stay right."""
    script = tmp_path / "child.py"
    script.write_text(CACHE_CHILD.format(here=str(HERE), root=str(HERE.parents[1])))
    env = {**os.environ, "PYHIP_JIT_CACHE_DIR": str(tmp_path / "jit"), "PYHIP_JIT_TIERING": "0"}

    def child():
        r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=300)
        assert r.returncode == 0, r.stdout + r.stderr[-3000:]
        return [int(x) for x in r.stdout.split()]

    # compiled, cached, kernels in use, distinct code, bad entries
    assert child() == [3, 1, 4, 3, 0]
    assert child() == [0, 4, 4, 3, 0]
    objects = sorted((tmp_path / "jit").glob("*.o"))
    assert len(objects) == 3
    objects[0].write_bytes(objects[1].read_bytes())       # a valid object, but of another kernel
    compiled, cached, used, codes, bad = child()
    assert (compiled, cached, used, codes) == (1, 3, 4, 3) and bad >= 1   # looked up again before compiling
    assert child() == [0, 4, 4, 3, 0]


@pytest.fixture(scope="module")
def recursion_co(tmp_path_factory):
    from conftest import require_tool
    out = tmp_path_factory.mktemp("recursion") / "recursion.co"
    subprocess.run([require_tool("hipcc"), "--genco", "--offload-arch=gfx90a", "-O2",
                    str(HERE.parents[0] / "runtime" / "src" / "recursion.hip"), "-o", str(out)],
                   check=True, capture_output=True, env={**os.environ, "HIP_PLATFORM": "amd"})
    return out


def _walk(v, i, depth):
    local = [int(v[(i + k * depth) & 1023]) ^ depth for k in range(4)]
    if depth == 0:
        return local[0]
    x = (_walk(v, i + 1, depth - 1) * 3 + local[depth & 3] - local[(depth + 1) & 3]) & (2 ** 64 - 1)
    return x - 2 ** 64 if x >= 2 ** 63 else x


@pytest.mark.parametrize("found_by", ["symbols", "pc-relative", "neither"])
def test_calls_to_device_functions_run_compiled(recursion_co, monkeypatch, found_by):
    """A recursive device function (s_swappc_b64 to a non-inlined function) runs on the compiled engine: its
    entry is a block the indirect jump can land on, found from the code object's STT_FUNC symbols or, for
    code without them (code found in memory), from the s_getpc_b64 + s_add_u32/s_addc_u32 address the call
    computes.  With neither, the jump has nowhere to land (the fault the test shows it would be)."""
    import pyhip
    from pyhip.emu.jit import kernel as jk
    from pyhip.emu.program import LoadedProgram
    from pyhip.runtime.context import runtime

    monkeypatch.setenv("PYHIP_JIT_TIERING", "0")
    monkeypatch.setenv("PYHIP_JIT_CACHE_DIR", "")
    if found_by != "symbols":
        monkeypatch.setattr(LoadedProgram, "function_starts", property(lambda self: []))
    if found_by == "neither":
        monkeypatch.setattr(jk.KernelIR, "_pc_relative_targets", lambda self: [])
    gpu = runtime().device(0).backend.emulated_gpu
    if gpu is None or gpu.engine != "native" or gpu.native_engine() is None or gpu.native_engine().jit is None:
        pytest.skip("the suite runs with PYHIP_ENGINE set or without the compiled engine")
    pyhip.set_device(0)
    n, depth = 300, 8
    v = np.random.default_rng(7).integers(-1000, 1000, 1024).astype(np.int32)
    out = pyhip.to_device(np.full(n, -1, np.int64))
    k = pyhip.load(recursion_co).kernel("recurse")
    if found_by == "neither":
        with pytest.raises(pyhip.HipError, match="jump to an address that is not an instruction"):
            k((n + 63) // 64, 64, pyhip.to_device(v), out, n, depth)
            pyhip.synchronize()
        return
    k((n + 63) // 64, 64, pyhip.to_device(v), out, n, depth)
    pyhip.synchronize()
    assert gpu.last_dispatch.engine == "native"
    np.testing.assert_array_equal(out.get(), [_walk(v, i, depth + (i & 3)) for i in range(n)])
