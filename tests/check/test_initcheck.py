"""initcheck (docs/check.md): a kernel load of hipMalloc'd bytes that nothing wrote — no copy, memset or
kernel store since the allocation — reported once per instruction with its lane count, the first lane
(kernel, workgroup, wave, lane, PC, source line) and the allocation; buffers written by a copy, a memset
(both through the C ABI) and a kernel are silent; what the program computes is unchanged."""
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import test_memcheck_programs as programs
from test_memcheck_python import _ok, _scale

import pyhip
from pyhip import hip

_exec, _line = programs._exec, programs._line
build = programs.build          # the hipcc programs, built once per module


@pytest.mark.parametrize("kind", ["native", "numpy"])
@pytest.mark.parametrize("debug", [True, False])
def test_uninitialized_half(build, tmp_path, kind, debug):
    exe = build("uninitialized", debug)
    plain = _exec(exe, engine=kind)
    assert plain.returncode == 0 and plain.stdout == "out[999] 3996\nhipSuccess\n", plain.stdout + plain.stderr
    log = tmp_path / "log.jsonl"
    r = _exec(exe, "--check", "initcheck", "--check-log", str(log), engine=kind)
    assert r.returncode == 1, r.stdout + r.stderr
    assert r.stdout == plain.stdout
    reports = [json.loads(x) for x in log.read_text().splitlines() if "checker" in x]
    assert len(reports) == 1, reports
    rep = reports[0]
    assert rep["checker"] == "initcheck" and rep["kind"] == "uninitialized-read"
    assert rep["count"] == 500                     # a[500..999]: the half the host did not copy in
    assert rep["kernel"] == "add(int*, int const*, int const*, int const*, int)"
    assert (rep["workgroup"][0] * 256 + rep["wave"] * 64 + rep["lane"]) == 500, rep     # the first such lane
    assert rep["allocation"]["size"] == 4000 and rep["address"] == rep["allocation"]["start"] + 2000
    assert rep["instruction"].startswith("global_load_dword")
    if debug:
        assert rep["source"].endswith(f"uninitialized.hip:{_line('uninitialized.hip', 'INIT-READ')}")


@pytest.mark.parametrize("kind", ["native", "numpy"])
def test_python_writes_count(kind):
    """From Python: a copy of the first 600 floats, a fill of 3 of the next 4 bytes, and a kernel reading and
    writing every element: the 400 elements from 600 on are reported (element 600: 1 byte nothing wrote), the
    results are the copied values scaled; a second launch reads what the first wrote: silent.  In a process of
    its own, on the native engine (its handlers mark and read the shadow) or the numpy engine."""
    here = Path(__file__).resolve().parent
    path = [str(here), str(here.parent), str(here.parents[1]), os.environ.get("PYTHONPATH", "")]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(path))
    if kind == "numpy":
        env["PYHIP_ENGINE"] = "numpy"
    else:
        env["PYHIP_JIT_TIERING"] = "0"          # (compiled before the first dispatch: no tier-0 numpy run)
    r = subprocess.run([sys.executable, "-c", "import test_initcheck as t; t.python_writes_count()"], cwd=here,
                       env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr


def python_writes_count():
    n = 1000
    host = np.random.default_rng(7).standard_normal(n).astype(np.float32)
    K = hip.hipMemcpyKind
    native_before = pyhip.engine_stats()[0]["native"]
    with pyhip.check("initcheck", echo=False) as session:
        x = _ok(hip.hipMalloc(n * 4))
        _ok_err(hip.hipMemcpy(x, host, 600 * 4, K.hipMemcpyHostToDevice))
        _ok_err(hip.hipMemset(int(x) + 2400, 0, 3))
        programs_scale(x, n)
        (rep,) = session.reports
        assert rep["checker"] == "initcheck" and session.count(rep) == n - 600, (rep, session.count(rep))
        assert rep["lane"] == 600 % 64 and rep["wave"] == (600 % 256) // 64 and rep["workgroup"][0] == 2, rep
        assert "of which 1 byte(s) nothing wrote" in rep["message"], rep
        assert rep["address"] == int(x) + 2400 and rep["allocation"]["size"] == n * 4
        programs_scale(x, n)
        assert session.count(rep) == n - 600 and len(session.reports) == 1
        out = np.empty(n, np.float32)
        _ok_err(hip.hipMemcpy(out, x, n * 4, K.hipMemcpyDeviceToHost))
        _ok_err(hip.hipFree(x))
    np.testing.assert_array_equal(out[:600], host[:600] * 4)
    # the kernels ran where the process runs them: the native engine, unless PYHIP_ENGINE says numpy
    assert (pyhip.engine_stats()[0]["native"] > native_before) == (os.environ.get("PYHIP_ENGINE") != "numpy")


def programs_scale(x, n):
    _scale(x, n)
    _ok_err(hip.hipDeviceSynchronize())


def _ok_err(result):
    err = result[0] if isinstance(result, tuple) else result
    assert err == hip.hipError_t.hipSuccess, err


def test_every_kind_of_access_alike_on_both_engines(build, tmp_path):
    """Scalar loads of a struct nothing wrote (one read per wave), atomics on counters nothing wrote (the first
    lane reads them, later ones read what it wrote) and 16-byte loads of elements the host wrote half of: the
    same reports from the native engine's handlers (its kernels compiled: the disk cache gets them) as from the
    numpy engine, and the counts the program implies."""
    exe = build("init_kinds", False)
    seen = {}
    for engine in ("numpy", "native"):
        log, cache = tmp_path / f"{engine}.jsonl", tmp_path / f"jit-{engine}"
        env = {**os.environ, "PYHIP_ENGINE": engine, "PYHIP_JIT_TIERING": "0", "PYHIP_JIT_CACHE_DIR": str(cache),
               "PYTHONPATH": str(programs.ROOT)}
        env.pop("PYHIP_CHECK", None)
        r = subprocess.run([sys.executable, "-m", "pyhip", "exec", "--check", "initcheck", "--check-log", str(log),
                            str(exe)], capture_output=True, text=True, timeout=300, env=env)
        assert r.returncode == 1 and r.stdout == "b[1].x 33686018 hipSuccess\n", r.stdout + r.stderr
        assert any(cache.rglob("*.*")) == (engine == "native"), engine      # where the kernels ran
        reports = [json.loads(x) for x in log.read_text().splitlines() if "checker" in x]
        seen[engine] = {rep["kernel"].split("(")[0]: {k: rep.get(k) for k in ("count", "instruction", "workgroup",
                                                                              "wave", "lane", "message", "address")}
                        for rep in reports}
    assert seen["native"] == seen["numpy"], seen
    got = seen["native"]
    assert set(got) == {"scalar_read", "count", "copy16"}, got
    assert got["scalar_read"]["count"] == 5 and got["scalar_read"]["lane"] is None       # 5 waves reach it
    assert got["scalar_read"]["instruction"].startswith("s_load_dwordx2")
    assert got["count"]["count"] == 1 and got["count"]["instruction"].startswith("global_atomic_add")
    assert got["copy16"]["count"] == 150 and "16-byte read of which 8 byte(s)" in got["copy16"]["message"]
