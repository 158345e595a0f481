"""The differential test: the corpus (hipcc 5.2, clang-19, Triton incl. MFMA matmuls) and the per-instruction
ISA tests run with PYHIP_ENGINE=diff, where every dispatch the native engine supports runs on both engines
from the same memory — the native one in the numpy engine's exact schedule — and all device memory and every
wave's final registers must be equal, or both must fault alike (pyhip/emu/native/diff.py).  The corpus must
run natively in full; the ISA tests may fall back for what the native engine lacks, and those reasons are
listed here.  The corpus runs once for its CDNA builds (gfx90a, gfx942) and once for its RDNA builds (gfx1030,
gfx1100: wave32 and wave64)."""
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest


@pytest.fixture(autouse=True)
def _compiled_engine(monkeypatch):
    """The native engine compiles before it runs (no numpy-engine first runs while compiling): what these tests
    compare or count is the compiled engine."""
    monkeypatch.setenv("PYHIP_JIT_TIERING", "0")


HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
CORPUS = ["test_corpus.py", "test_corpus_isa.py", "test_triton.py"]
ISA = ["test_isa_ops.py", "test_isa_alu.py", "test_isa_memory.py", "test_isa_matrix.py", "test_mfma_layouts.py",
       "test_faults.py", "test_fastpaths.py", "test_typed_buffer.py", "test_mimg.py"]
# what the ISA tests may exercise that the native engine runs on the numpy engine instead
ALLOWED_FALLBACKS = ("VGPR index mode", "v_screen_partition_4se_b32")


CDNA_ONLY = "not gfx1 and not rdna"     # test ids of the RDNA corpus builds (gfx1030, gfx1100, generic RDNA)
RDNA_ONLY = "gfx1 or rdna"


# how the corpus modules are compiled: hipcc/clang programs as tier 1 (compact IR, LLVM's fast way: what most
# dispatches run; their big kernels took ~10 s each at O1), Triton's kernels optimised (tier 2, as hot kernels run);
# the ISA tests at O1 too, where an optimisation could exploit an instruction's IR that is not well defined
# (the RDNA builds all as tier 1: Triton's CDNA run is the optimised pipeline's)
TIERING = {"test_corpus.py": "quick", "test_corpus_isa.py": "quick"}


def run_diff(module: str, tmp_path, select: str = CDNA_ONLY) -> dict:
    report = tmp_path / "report.json"
    env = dict(os.environ, PYHIP_ENGINE="diff", PYHIP_DIFF_REPORT=str(report),
               PYHIP_JIT_TIERING="quick" if select == RDNA_ONLY else TIERING.get(module, "0"),
               PYTHONPATH=os.pathsep.join([str(HERE), str(ROOT), os.environ.get("PYTHONPATH", "")]))
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", "-p", "no:xdist",
                        "-p", "native_diff_plugin", "-k", select, str(HERE / module)], cwd=ROOT, env=env, capture_output=True,
                       text=True, timeout=1800)
    assert r.returncode == 0, f"{module} under PYHIP_ENGINE=diff:\n{r.stdout[-6000:]}\n{r.stderr[-3000:]}"
    return json.loads(report.read_text())


@pytest.mark.parametrize("select", [CDNA_ONLY, RDNA_ONLY], ids=["cdna", "rdna"])
@pytest.mark.parametrize("module", CORPUS)
def test_corpus_runs_natively_and_identically(module, select, tmp_path):
    rep = run_diff(module, tmp_path, select)
    assert rep["compared"] > 0
    assert rep["fallback"] == 0, rep["reasons"]
    # every dispatch is compared on the threaded schedule too, except those whose results may depend on it
    assert rep["threaded"] + rep["lockstep_only"] == rep["compared"] and rep["threaded"] > 0, rep


@pytest.mark.parametrize("module", ISA)
def test_isa_tests_identical(module, tmp_path):
    rep = run_diff(module, tmp_path)
    assert rep["compared"] + rep["faulted_alike"] > 0
    unexpected = {r: n for r, n in rep["reasons"].items() if not any(a in r for a in ALLOWED_FALLBACKS)}
    assert not unexpected, unexpected


# ---- the comparison itself can fail -------------------------------------------------------------------------
_OUT: list[int] = []          # the device address of _vadd_on's output


def _vadd_on(gpu_engine, sabotage, threaded_only=False, device=0, path="hipcc52/basic-gfx90a.hsaco"):
    import pyhip
    from pyhip.emu.native import diff, run
    from pyhip.runtime.context import runtime

    gpu = runtime().device(device).backend.gpu
    old = gpu.engine
    gpu.engine = gpu_engine
    orig = run.NativeEngine.run

    def broken(self, d, nprog, **kw):
        res = orig(self, d, nprog, **kw)
        if not (threaded_only and kw.get("lockstep")):
            sabotage(self, res)
        return res
    run.NativeEngine.run = broken
    try:
        pyhip.set_device(device)
        m = pyhip.load(ROOT / "tests/fixtures/bin" / path)
        n = 300
        a = np.arange(n, dtype=np.float32)
        c = pyhip.empty(n, np.float32)
        _OUT[:] = [int(c.ptr)]
        m.kernel("vadd")((n + 255) // 256, 256, pyhip.to_device(a), pyhip.to_device(a), c, n)
        pyhip.synchronize()
        assert np.array_equal(c.get(), a + a)
    finally:
        run.NativeEngine.run = orig
        gpu.engine = old
        pyhip.set_device(0)


@pytest.mark.parametrize("path", ["clang19/basic-gfx1100-v5.hsaco", "clang19/basic-gfx1100-w64-v5.hsaco"],
                         ids=["wave32", "wave64"])
def test_rdna_is_compared_too(path):
    """RDNA dispatches under diff mode: compared on both schedules (a wave32 wave's 32 lanes fill half of each
    64-word capture row), and a flipped register in lane 3 of the second wave is reported."""
    from pyhip.emu.native import diff
    from pyhip.errors import HipError

    before = dict(diff.STATS)
    _vadd_on("diff", lambda engine, res: None, device=2, path=path)
    assert diff.STATS["compared"] == before.get("compared", 0) + 1 and \
        diff.STATS["threaded"] == before.get("threaded", 0) + 1

    def flip(engine, res):
        res.capture[1, 528 + 5 * 256 + 4 * 3] ^= 1
    with pytest.raises(HipError, match=r"EngineMismatch: .*flat workgroup 0 wave 1: v5\[3\]"):
        _vadd_on("diff", flip, device=2, path=path)


def test_a_register_difference_is_reported():
    from pyhip.errors import HipError

    def flip(engine, res):
        res.capture[1, 528 + 5 * 256 + 4 * 3] ^= 1          # v5 of lane 3 of the second wave
    with pytest.raises(HipError, match=r"EngineMismatch: .*flat workgroup 0 wave 1: v5\[3\]"):
        _vadd_on("diff", flip)


def test_a_memory_difference_is_reported():
    from pyhip.errors import HipError

    def poke(engine, res):
        engine.gpu.memory.write(_OUT[0] + 8, b"\x01\x02\x03\x04")    # vadd's output
    with pytest.raises(HipError, match=r"EngineMismatch: .*device memory at 0x"):
        _vadd_on("diff", poke)


@pytest.mark.parametrize("where", ["register", "memory"])
def test_a_difference_on_the_threaded_schedule_is_reported(where):
    """The production run (workgroups over the engine's threads) is compared too, not only the lockstep one."""
    from pyhip.errors import HipError

    def flip(engine, res):
        if where == "register":
            res.capture[2, 528 + 5 * 256 + 4 * 7] ^= 1
        else:
            engine.gpu.memory.write(_OUT[0] + 1000, b"\x01")
    what = r"flat workgroup 0 wave 2: v5\[7\]" if where == "register" else r"device memory at 0x"
    with pytest.raises(HipError, match=r"EngineMismatch: .*\(threaded schedule\): " + what):
        _vadd_on("diff", flip, threaded_only=True)


# ---- what the native engine does not run falls back whole, counted ----------------------------------------------
@pytest.mark.parametrize("device,path", [(3, "hipcc52/basic-gfx1030.hsaco"), (2, "clang19/basic-gfx1100-v5.hsaco"),
                                         (2, "clang19/basic-gfx1100-w64-v5.hsaco")])
def test_rdna_runs_natively(device, path):
    """RDNA code (wave32, and wave64 on RDNA encodings) runs on the native engine (compiled) under the default
    engine, counted as native, and computes the right result."""
    import pyhip
    from pyhip.runtime.context import runtime

    gpu = runtime().device(device).backend.gpu
    if gpu.engine != "native":
        pytest.skip("the suite runs with PYHIP_ENGINE set")
    pyhip.set_device(device)
    try:
        before = gpu.engine_stats()
        m = pyhip.load(ROOT / "tests/fixtures/bin" / path)
        n = 1000
        rng = np.random.default_rng(1)
        a, b = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
        c = pyhip.to_device(np.full(n, np.nan, np.float32))
        m.kernel("vadd")((n + 255) // 256, 256, pyhip.to_device(a), pyhip.to_device(b), c, n)
        pyhip.synchronize()
        assert np.array_equal(c.get(), a + b)
        after = gpu.engine_stats()
        assert after["native"] == before["native"] + 1 and after["fallback"] == before["fallback"], after
        assert gpu.last_dispatch.engine == "native"
    finally:
        pyhip.set_device(0)
