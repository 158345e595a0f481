"""Fallback from the native engine: a kernel using an instruction the native engine has no handler for runs
whole on the numpy engine, counted with its reason (EmulatedGPU.engine_stats, pyhip.engine_stats), and the
coverage report lists what each engine executes."""
import subprocess
import sys

import numpy as np
import pytest

import asmkit


@pytest.fixture(autouse=True)
def _compiled_engine(monkeypatch):
    """The native engine compiles before it runs (no numpy-engine first runs while compiling): what these tests
    compare or count is the compiled engine."""
    monkeypatch.setenv("PYHIP_JIT_TIERING", "0")

BODY = """
  {extra}
  {cmp}
  v_cndmask_b32 v8, 0, 1, vcc
"""
# an instruction neither the compiled engine (no description) nor the native runtime (no handler) runs
UNSUPPORTED = "ds_gws_init"


def _nan16(rng):
    """64 half-precision operands, about half of them NaN, as raw bits in the low 16 bits of 32."""
    x = rng.standard_normal(64).astype(np.float16)
    x[rng.random(64) < 0.5] = np.float16("nan")
    x[::7] = -x[::7]
    return x.view(np.uint16).astype(np.uint32), np.isnan(x)


def test_a_kernel_with_an_instruction_the_native_engine_lacks_falls_back_whole():
    g = asmkit.gpu("gfx90a")
    if g.engine != "native":
        pytest.skip("the suite runs with PYHIP_ENGINE set")
    from pyhip.emu.native.coverage import native_mnemonics
    native = native_mnemonics("gfx90a")
    assert UNSUPPORTED not in native and "v_cmp_class_f16" in native
    rng = np.random.default_rng(7)
    bits, nan = _nan16(rng)
    mask = np.full(64, 0x3, np.uint32)                      # class bits: signalling and quiet NaN
    # (a global wave sync resource initialised: nothing in the kernel waits on it)
    extra_load = f"s_mov_b32 m0, 0\n  v_mov_b32 v20, 1\n  {UNSUPPORTED} v20 offset:0 gds\n  s_waitcnt lgkmcnt(0)"
    for extra, runs_native in ((extra_load, False), ("", True)):
        cmp = "v_cmp_class_f16 vcc, v2, v4"
        before = g.engine_stats()
        r0, _ = asmkit.run(BODY.format(cmp=cmp, extra=extra), bits, mask)
        after = g.engine_stats()
        np.testing.assert_array_equal(asmkit.lo(r0), nan.astype(np.uint32), err_msg=cmp)
        assert after["native"] - before["native"] == int(runs_native), cmp
        assert after["fallback"] - before["fallback"] == int(not runs_native), cmp
        if not runs_native:
            new = {k: v - before["reasons"].get(k, 0) for k, v in after["reasons"].items()
                   if v != before["reasons"].get(k, 0)}
            assert len(new) == 1 and UNSUPPORTED in next(iter(new)), new
            assert g.last_dispatch.engine == "numpy"
        else:
            assert g.last_dispatch.engine == "native"


def test_engine_stats_api_counts_per_device():
    import pyhip
    stats = pyhip.engine_stats()
    assert set(stats) == set(range(pyhip.device_count()))
    for s in stats.values():
        assert s["engine"] in ("native", "numpy", "diff") and s["native"] >= 0 and s["fallback"] >= 0


def _coverage_rows(target: str, *flags: str) -> tuple[str, dict]:
    out = subprocess.run([sys.executable, "-m", "pyhip", "disasm", "--coverage", "--mcpu", target, *flags],
                         capture_output=True, text=True, check=True).stdout
    assert "compiled" in out.splitlines()[1]
    return out, {ln.split()[0]: ln.split() for ln in out.splitlines()[2:] if ln.startswith("  ") and ln.endswith("%")}


def test_coverage_reports_both_engines():
    out, rows = _coverage_rows("gfx90a", "-v")
    decoded, executable, native = (int(rows["all"][i]) for i in (1, 2, 4))
    assert 0 < native <= executable <= decoded
    assert int(rows["MIMG"][4]) == int(rows["MIMG"][2]) > 0 and int(rows["SMEM"][4]) == int(rows["SMEM"][2])
    assert "numpy engine only:" in out and UNSUPPORTED in out
    for target in ("gfx1030", "gfx1100"):             # RDNA compiles too (both wave sizes must take a mnemonic)
        _, rows = _coverage_rows(target)
        executable, compiled = int(rows["VALU"][2]), int(rows["VALU"][4])
        assert 0.95 * executable <= compiled <= executable, (target, rows["VALU"])
        assert int(rows["SMEM"][4]) == int(rows["SMEM"][2]) and int(rows["MIMG"][4]) == int(rows["MIMG"][2]) > 0


def test_without_the_native_engine_everything_runs_on_numpy_with_a_warning(tmp_path):
    """An install whose engine extension failed to build: one RuntimeWarning, then the numpy engine."""
    code = """
import warnings, numpy as np, pyhip
from pyhip.emu import native
native._mod, native._error = None, OSError("no engine in this test")      # as if the build had failed
m = pyhip.load("tests/fixtures/bin/hipcc52/basic-gfx90a.hsaco")
n = 1000
a = np.random.default_rng(0).standard_normal(n).astype(np.float32)
c = pyhip.to_device(np.full(n, np.nan, np.float32))
with warnings.catch_warnings(record=True) as w:
    warnings.simplefilter("always")
    for _ in range(2):
        m.kernel("vadd")(4, 256, pyhip.to_device(a), pyhip.to_device(a), c, n)
        pyhip.synchronize()
assert np.array_equal(c.get(), a + a)
msgs = [str(x.message) for x in w if issubclass(x.category, RuntimeWarning)]
assert len(msgs) == 1 and "no engine in this test" in msgs[0] and "numpy engine" in msgs[0], msgs
from pyhip.runtime.context import runtime

assert runtime().device(0).backend.emulated_gpu.last_dispatch.engine == "numpy"
print("OK")
"""
    from pathlib import Path
    root = Path(__file__).resolve().parents[2]
    env = {k: v for k, v in __import__("os").environ.items() if k != "PYHIP_ENGINE"}
    r = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0 and r.stdout.strip().endswith("OK"), r.stdout + r.stderr
