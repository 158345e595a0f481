"""memcheck from Python: ``pyhip.check(...)`` as a context manager and ``PYHIP_CHECK`` for a whole process, on
both engines.  Reports name the allocation with the Python line that allocated and freed it; leaving the
block restores the hardware's behaviour (and reuses the quarantined memory)."""
import ctypes
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import pyhip
from pyhip import hip

ROOT = Path(__file__).resolve().parents[2]
BASIC = str(ROOT / "tests/fixtures/bin/hipcc52/basic-gfx90a.hsaco")


def _ok(result):
    err, *values = result
    assert err == hip.hipError_t.hipSuccess, err
    return values[0] if len(values) == 1 else values


@pytest.fixture(params=["native", "numpy"])
def engine(request):
    """Every emulated device on the engine of the parameter; the numpy case checks that nothing ran natively."""
    from pyhip.runtime.context import runtime
    gpus = [d.backend.emulated_gpu for d in runtime().devices if d.backend.emulated_gpu is not None]
    saved = [g.engine for g in gpus]
    before = [g.engine_stats()["native"] for g in gpus]
    for g in gpus:
        g.engine = request.param
    yield request.param
    for g, e, b in zip(gpus, saved, before):
        g.engine = e
        if request.param == "numpy":
            assert g.engine_stats()["native"] == b


def _scale(x, n):
    scale = pyhip.load(BASIC).kernel("scale<float>")
    return scale((n + 255) // 256, 256, x, np.float32(2.0), n)


def test_use_after_free_context_manager(engine):
    n = 1000
    mod = _ok(hip.hipModuleLoad(BASIC.encode()))
    fn = _ok(hip.hipModuleGetFunction(mod, b"_Z5scaleIfEvPT_S0_i"))
    with pyhip.check("memcheck", echo=False) as session:
        d = _ok(hip.hipMalloc(n * 4)); alloc_line = sys._getframe().f_lineno
        _ok(hip.hipFree(d)); free_line = sys._getframe().f_lineno
        other = _ok(hip.hipMalloc(n * 4))
        assert int(other) != int(d)                    # quarantined: not reused
        err = hip.hipModuleLaunchKernel(fn, (n + 255) // 256, 1, 1, 256, 1, 1, 0, None, None,
                                        (d, ctypes.c_float(2.0), ctypes.c_int(n)))[0]
        if err == hip.hipError_t.hipSuccess:
            err = hip.hipDeviceSynchronize()[0]
        assert err == hip.hipError_t.hipSuccess         # reported, and the dispatch went on (stores dropped)
        _ok(hip.hipFree(other))
    rep, store = session.reports                        # the read of x[i], then its write: each once, n lanes
    assert rep["kind"] == "use-after-free" and rep["kernel"] == "scale<float>(float*, float, int)", rep
    assert rep["instruction"].startswith("global_load_dword"), rep
    assert store["kind"] == "use-after-free" and store["instruction"].startswith("global_store_dword"), store
    assert session.count(rep) == session.count(store) == n
    a = rep["allocation"]
    assert a["start"] == int(d) and a["size"] == n * 4, a
    assert a["allocated"] == f"hipMalloc from {__file__}:{alloc_line} in test_use_after_free_context_manager", a
    assert a["freed"] == f"hipFree from {__file__}:{free_line} in test_use_after_free_context_manager", a
    # after the block: the hardware's behaviour again, no session
    assert pyhip.sanitizer.active() is None
    _ok(hip.hipModuleUnload(mod))


def test_past_the_end_only_under_memcheck(engine):
    n = 1000
    rng = np.random.default_rng(7)
    host = rng.standard_normal(n + 1).astype(np.float32)
    x = pyhip.to_device(host[:n])
    _scale(x, n + 1)                             # one past the end: inside the page, no fault by default
    np.testing.assert_array_equal(x.get(), host[:n] * 2)
    with pyhip.check("memcheck", echo=False) as session:
        y = pyhip.to_device(host[:n])
        _scale(y, n + 1)                         # reported, and computed as without the check
        pyhip.synchronize()
        np.testing.assert_array_equal(y.get(), host[:n] * 2)
    load, store = session.reports
    for rep in (load, store):
        assert rep["kind"] == "out-of-bounds" and rep["address"] == rep["allocation"]["start"] + 4 * n, rep
        assert rep["lane"] == n % 64 and rep["workgroup"] == [n // 256, 0, 0], rep
        assert session.count(rep) == 1, rep
    assert load["access"] == "4 bytes, read" and store["access"] == "4 bytes, write"


def test_environment_variable_exit_status(tmp_path):
    script = tmp_path / "uaf.py"
    script.write_text(textwrap.dedent(f"""
        import numpy as np, pyhip
        from pyhip import hip
        scale = pyhip.load({BASIC!r}).kernel("scale<float>")
        err, d = hip.hipMalloc(4000)
        hip.hipFree(d)
        err, e = hip.hipMalloc(4000)
        scale(4, 256, int(d), np.float32(2.0), 1000)
        pyhip.synchronize()
        print("launch went on", int(e) == int(d))
    """))
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYHIP_CHECK": "memcheck"}
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=300, check=False)
    assert r.returncode == 1 and "launch went on" in r.stdout, r.stdout + r.stderr
    assert "memcheck: use-after-free" in r.stderr and f"hipFree from {script}:6" in r.stderr, r.stderr
    assert "2 distinct error(s) found" in r.stderr and "2000 occurrence(s)" in r.stderr, r.stderr
    assert "launch went on False" in r.stdout, r.stdout      # memcheck quarantines the freed block
    env.pop("PYHIP_CHECK")          # unchecked: the next hipMalloc reuses the freed block, so the stale pointer is valid
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=300, check=False)
    assert r.returncode == 0 and "pyhip check" not in r.stderr, r.stdout + r.stderr
    assert "launch went on True" in r.stdout, r.stdout


def test_leaks_at_the_end_of_the_block():
    """Allocations made inside the block and live at its end are leaks (with the Python line); those made before
    it, or freed, are not."""
    before = _ok(hip.hipMalloc(128))
    with pyhip.check("leaks", echo=False) as session:
        kept = _ok(hip.hipMalloc(1000)); line = sys._getframe().f_lineno
        freed = _ok(hip.hipMalloc(2000))
        _ok(hip.hipFree(freed))
    (rep,) = session.reports
    assert rep["checker"] == "leaks" and rep["address"] == int(kept) and rep["allocation"]["size"] == 1000, rep
    assert rep["allocation"]["allocated"] == f"hipMalloc from {__file__}:{line} in test_leaks_at_the_end_of_the_block"
    assert "1000 bytes in 1 allocation(s) never freed" in session.summary()
    _ok(hip.hipFree(kept))
    _ok(hip.hipFree(before))


def test_peer_memory_without_access(tmp_path):
    """A kernel on device 0 reading device 1's allocation with no peer access: a GPU faults; memcheck reports an
    invalid address naming the allocation — inside it, not past its end (it said "-4000 bytes past its end")."""
    script = tmp_path / "peer.py"
    script.write_text(textwrap.dedent(f"""
        import numpy as np, pyhip
        from pyhip import hip
        hip.hipSetDevice(1)
        err, d = hip.hipMalloc(4000)
        hip.hipSetDevice(0)
        scale = pyhip.load({BASIC!r}).kernel("scale<float>")
        scale(4, 256, int(d), np.float32(2.0), 1000)
        print("sync", hip.hipDeviceSynchronize()[0].name)
    """))
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYHIP_DEVICES": "gfx90a,gfx90a"}
    plain = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=300)
    assert "sync hipErrorIllegalAddress" in plain.stdout, plain.stdout + plain.stderr
    log = tmp_path / "log.jsonl"
    env.update(PYHIP_CHECK="memcheck", PYHIP_CHECK_LOG=str(log))
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 1 and "sync hipSuccess" in r.stdout, r.stdout + r.stderr
    lines = [json.loads(x) for x in log.read_text().splitlines()]
    reps, totals = [x for x in lines if "checker" in x], lines[-1]["totals"]
    for rep, n in zip(reps, totals):
        rep["count"] = n
    assert sorted(x["instruction"].split()[0] for x in reps) == ["global_load_dword", "global_store_dword"], reps
    for rep in reps:                                 # the kernel's load and its store, every lane of each
        assert rep["kind"] == "invalid-address" and "byte 0 of a 4000-byte allocation" in rep["message"], rep
        assert "no access" in rep["message"] and rep["allocation"]["size"] == 4000, rep
        assert f"{script}:5" in rep["allocation"]["allocated"] and rep["count"] == 1000, rep
