"""The compiled engine's tiers (pyhip/emu/jit.tiering): a kernel first runs quickly-compiled (tier 1) code, a
hot one is compiled optimised by a background thread and its next dispatch takes that code (tier 2), a small
frequent one stays tier 1 and goes to the native agent; both tiers compute bit for bit what the numpy engine
computes, and a later process starts from the best tier in the disk cache."""
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import test_compiled_engine as ce
from pyhip.emu import jit

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]


@pytest.fixture
def tiered(monkeypatch, tmp_path):
    monkeypatch.setenv("PYHIP_JIT_CACHE_DIR", str(tmp_path / "jit"))
    monkeypatch.setenv("PYHIP_JIT_TIERING", "1")
    monkeypatch.delenv("PYHIP_JIT_OPT", raising=False)
    monkeypatch.delenv("PYHIP_JIT_HOT", raising=False)
    return ce._native_gpu()


def _entry(g):
    (entry,) = g.native_engine().jit._done.values()
    return entry


def test_a_hot_kernel_moves_to_optimised_code_and_both_tiers_agree(tiered, tmp_path):
    g = tiered
    src = ce._kernel_source(31)                     # a loop: compiled at its first dispatch (no tier 0)
    prog = ce._program(g, src)
    stats = g.native_engine().jit.stats
    for seed in (31, 32):
        ops = ce._operands(seed)
        want = ce._reference(src, ops)
        r1, engine = ce._dispatch(g, prog, ops)
        assert engine == "native" and stats["quick"] == 1 and stats["optimised"] == 0
        nprog, quick, warm = _entry(g)
        assert warm is not None
        np.testing.assert_array_equal(r1, want)
    warm.threshold = 0.0                            # hot now: the next dispatch queues the optimised compile
    ops = ce._operands(33)
    want = ce._reference(src, ops)
    np.testing.assert_array_equal(ce._dispatch(g, prog, ops)[0], want)
    assert warm.queued and jit.settle(120)
    _, optimised, warm2 = _entry(g)
    assert warm2 is None and optimised.address != quick.address and stats["optimised"] == 1
    r2, engine = ce._dispatch(g, prog, ops)
    assert engine == "native"
    np.testing.assert_array_equal(r2, want)
    assert sorted(p.name.endswith("-q.o") for p in (tmp_path / "jit").glob("*.o")) == [False, True]


def test_a_small_kernel_stays_tier_one_and_goes_to_the_agent(tiered, monkeypatch):
    """ran() tells the dispatch path whether the native agent may take the kernel: at once for a dispatch
    shorter than SMALL_SECONDS, after SMALL_RUNS for longer ones that are not hot, never while queued."""
    g = tiered
    cache = g.native_engine().jit
    said = []
    real = cache.ran
    monkeypatch.setattr(cache, "ran", lambda *a: said.append((a[-1], real(*a))) or said[-1][1])
    src = ce._kernel_source(41)
    prog = ce._program(g, src)
    ops = ce._operands(41)
    want = ce._reference(src, ops)
    for _ in range(jit.SMALL_RUNS):
        np.testing.assert_array_equal(ce._dispatch(g, prog, ops)[0], want)
    _, _, warm = _entry(g)
    assert warm.runs == jit.SMALL_RUNS and not warm.queued
    assert [ok for sec, ok in said] == [sec < jit.SMALL_SECONDS or i + 1 >= jit.SMALL_RUNS
                                        for i, (sec, _) in enumerate(said)]
    nprog, *_ = _entry(g)
    key = next(iter(cache._done))
    warm.threshold = 0.0                            # hot: queued, and the agent must not take it meanwhile
    assert real(nprog, *key[1:], 0.0) is False and warm.queued
    assert jit.settle(120) and _entry(g)[2] is None
    assert real(nprog, *key[1:], 0.0) is True


TRITON = textwrap.dedent("""
    import json
    import numpy as np
    import pyhip
    from pyhip.emu import jit
    BIN = {bin!r}
    rng = np.random.default_rng(5)
    rows, out = 37, {{}}
    for kind, arch in (("softmax", "gfx90a"), ("layernorm", "gfx90a"), ("softmax", "gfx1100")):
        pyhip.set_device(0 if arch == "gfx90a" else 1)
        meta = json.loads(open(f"{{BIN}}/{{kind}}-{{arch}}.json").read())
        k = pyhip.load(f"{{BIN}}/{{kind}}-{{arch}}.hsaco").kernel(meta["kernel"])
        cols = meta["constexprs"]["BLOCK"]
        x = pyhip.to_device(rng.standard_normal(rows * cols).astype(np.float32))
        w, b = (pyhip.to_device(rng.standard_normal(cols).astype(np.float32)) for _ in range(2))
        results = []
        for step in range(4):                  # tier 0 or 1; tier 0 (quick compile in the background) or 1 (hot:
                                               # queued); tier 1 (hot: queued) or 2; tier 2
            o = [pyhip.to_device(np.full(rows * cols, np.nan, np.float32)) for _ in range(3)]
            if kind == "softmax":
                args = (o[0], x, cols, cols, cols)
            else:
                args = (x, w, b, o[0], o[1], o[2], cols, np.float32(1e-5))
            k(rows, meta["block"], *args, 0, 0, shared=meta["shared"])
            pyhip.synchronize()
            results.append([a.get().tobytes().hex() for a in o])
            assert jit.settle(300)
        xh = x.get().reshape(rows, cols).astype(np.float64)
        y = o[0].get().reshape(rows, cols)
        if kind == "softmax":
            e = np.exp(xh - xh.max(1, keepdims=True))
            want = e / e.sum(1, keepdims=True)
        else:
            want = (xh - xh.mean(1, keepdims=True)) / np.sqrt(xh.var(1, keepdims=True) + 1e-5) * w.get() + b.get()
        np.testing.assert_allclose(y, want, rtol=1e-4, atol=1e-5)
        out[f"{{kind}}-{{arch}}"] = results
    stats = pyhip.engine_stats()
    print(json.dumps({{"out": out, "stats": {{d: s.get("compiled") for d, s in stats.items()}}}}))
""")


def test_triton_kernels_give_the_same_bits_on_every_tier(tmp_path):
    script = tmp_path / "tiers.py"
    script.write_text(TRITON.format(bin=str(ROOT / "tests/fixtures/bin/triton")))
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYHIP_JIT_CACHE_DIR": "", "PYHIP_JIT_TIERING": "1",
           "PYHIP_JIT_HOT": "0", "PYHIP_DEVICES": "gfx90a:sramecc+:xnack-,gfx1100"}
    env.pop("PYHIP_JIT_OPT", None)
    env.pop("PYHIP_ENGINE", None)
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    res = json.loads(r.stdout.splitlines()[-1])
    for name, (a, b, c, d) in res["out"].items():
        assert a == b == c == d, name              # numpy engine or tier 1, ..., tier 2: the same bits
    s0, s1 = res["stats"]["0"], res["stats"]["1"]
    assert s0["optimised"] == s0["quick"] == 2 and s1["optimised"] == s1["quick"] == 1, res["stats"]



EXIT_CHILD = textwrap.dedent("""
    import ctypes, sys, threading, time
    sys.path[:0] = [{root!r}]
    from pyhip.emu.jit import compiler as c
    from pyhip.emu.native import module
    m = module()
    c.bind_runtime(m.ffi, m.lib)
    c.compile_ir(c._WARMUP, "warm", opt=0, codegen=0)          # a quick-tier compile: sections left behind
    started = threading.Event()
    def optimise():                                          # optimised compiles, one after another
        started.set()
        while True:
            c.compile_ir(c._WARMUP, "warm", opt=1)
    threading.Thread(target=optimise, daemon=True).start()
    started.wait()
    time.sleep(float(sys.argv[1]))
    print("leaving", flush=True)
    ctypes.CDLL(None).exit(0)      # C's exit with Python still running, as a C program's exit over the thunk
""")


@pytest.mark.parametrize("delay", [0.0, 0.005, 0.02, 0.1])
def test_exit_while_optimised_compiles_run_one_after_another(tmp_path, delay):
    """A C program exiting while the optimiser thread compiles: the exit handler waits for the compile in
    progress, and no compile starts after it (the lock is not fair: the optimiser used to take it again
    and compile on LLVM's destroyed statics — AMD's HIP over the thunk aborted in ~PassBuilder, 'Reference
    count was already zero' — or starve the exit for up to a minute).  The first delays exit during the
    process's first optimised compile, whose section is what registered those statics' destructors."""
    script = tmp_path / "child.py"
    script.write_text(EXIT_CHILD.format(root=str(ROOT)))
    for _ in range(4):
        r = subprocess.run([sys.executable, str(script), str(delay)], capture_output=True, text=True, timeout=50,
                           env={**os.environ, "PYHIP_JIT_CACHE_DIR": ""})
        assert r.returncode == 0 and r.stdout.strip() == "leaving", (r.returncode, r.stdout, r.stderr[-3000:])
