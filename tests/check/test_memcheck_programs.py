"""memcheck on unmodified hipcc programs with planted bugs (``pyhip exec --check``), built with and without
``-g``, on both engines: each bug is reported once with the right kind, kernel, allocation and (with -g)
source line; the program's own behaviour without the check is what the GPU's would be; a clean program is
silent."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import require_tool

SRC = Path(__file__).resolve().parent / "src"
ROOT = Path(__file__).resolve().parents[2]


def _line(name: str, tag: str) -> int:
    for i, text in enumerate((SRC / name).read_text().splitlines(), 1):
        if tag in text:
            return i
    raise AssertionError(tag)


@pytest.fixture(scope="module")
def build(tmp_path_factory):
    out = tmp_path_factory.mktemp("memcheck")
    hipcc = require_tool("hipcc")
    built = {}

    def get(name: str, debug: bool, opt: str = "-O2") -> Path:
        key = (name, debug, opt)
        if key not in built:
            exe = out / (name + ("-g" if debug else "") + opt)
            subprocess.run([hipcc, "--offload-arch=gfx90a", opt, *(["-g"] if debug else []), str(SRC / f"{name}.hip"),
                            "-o", str(exe)], check=True, capture_output=True, env={**os.environ, "HIP_PLATFORM": "amd"})
            built[key] = exe
        return built[key]
    return get


def _exec(exe, *opts, engine="native", args=(), timeout=300):
    env = {**os.environ, "PYHIP_ENGINE": engine, "PYTHONPATH": str(ROOT)}
    env.pop("PYHIP_CHECK", None)
    return subprocess.run([sys.executable, "-m", "pyhip", "exec", *opts, str(exe), *args], capture_output=True, text=True,
                          timeout=timeout, env=env, check=False)


@pytest.mark.parametrize("engine", ["native", "numpy"])
@pytest.mark.parametrize("debug", [True, False])
def test_use_after_free(build, tmp_path, engine, debug):
    exe = build("use_after_free", debug)
    log = tmp_path / "log.jsonl"
    r = _exec(exe, "--check", "memcheck", "--check-log", str(log), engine=engine)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "sync hipSuccess c[0] 0" in r.stdout, r.stdout     # reported; the stores to freed memory dropped
    reports = [json.loads(x) for x in log.read_text().splitlines()]
    assert len(reports) == 1, reports
    rep = reports[0]
    assert rep["count"] == 1000, rep                            # every lane, one report
    assert rep["checker"] == "memcheck" and rep["kind"] == "use-after-free", rep
    assert rep["kernel"] == "fill(int*, int, int)" and rep["instruction"].startswith("global_store_dword"), rep
    a = rep["allocation"]
    assert a["size"] == 4000 and a["start"] <= rep["address"] < a["start"] + 4000, rep
    assert a["allocated"].startswith("hipMalloc") and a["freed"].startswith("hipFree"), a
    if debug:
        assert rep["source"].endswith(f"use_after_free.hip:{_line('use_after_free.hip', 'BUG-LINE')}"), rep
        assert a["freed"].endswith(f"use_after_free.hip:{_line('use_after_free.hip', 'FREE-LINE')}"), a
    else:
        assert "source" not in rep, rep
    assert "use-after-free" in r.stderr and "1 distinct error" in r.stderr, r.stderr


def test_use_after_free_unchecked_is_silent_corruption(build):
    """What the check is for: without it the write lands in the allocation that reused the block."""
    r = _exec(build("use_after_free", False))
    assert r.returncode == 0 and "sync hipSuccess c[0] 7" in r.stdout, r.stdout + r.stderr


@pytest.mark.parametrize("engine", ["native", "numpy"])
def test_past_the_end(build, tmp_path, engine):
    exe = build("past_the_end", True)
    plain = _exec(exe, engine=engine)               # as on a GPU: inside the last page, no fault
    assert plain.returncode == 0 and "sync hipSuccess h[999] 1998" in plain.stdout, plain.stdout + plain.stderr
    log = tmp_path / "log.jsonl"
    r = _exec(exe, "--check", "all", "--check-log", str(log), engine=engine)
    assert r.returncode == 1 and r.stdout == plain.stdout, r.stdout + r.stderr      # the same results
    rep, store = [json.loads(x) for x in log.read_text().splitlines()]
    assert store["kind"] == "out-of-bounds" and store["instruction"].startswith("global_store"), store
    assert rep["instruction"].startswith("global_load") and rep["count"] == store["count"] == 1, rep
    assert rep["kind"] == "out-of-bounds" and rep["kernel"] == "scale(float*, float, int)", rep
    assert rep["address"] == rep["allocation"]["start"] + 4000 and rep["allocation"]["size"] == 4000, rep
    assert rep["lane"] == 1000 % 64 and rep["workgroup"] == [1000 // 128, 0, 0] and rep["wave"] == 1000 % 128 // 64
    assert rep["source"].endswith(f"past_the_end.hip:{_line('past_the_end.hip', 'BUG-LINE')}"), rep
    assert rep["allocation"]["allocated"].endswith(f"past_the_end.hip:{_line('past_the_end.hip', 'ALLOC-LINE')}")


@pytest.mark.parametrize("engine", ["native", "numpy"])
def test_clean_program_is_silent(build, engine):
    exe = build("clean", True)
    r = _exec(exe, "--check", "all", engine=engine)
    y = 1.0
    for _ in range(2):
        y = 2.0 * 776 + y
    assert r.returncode == 0 and r.stdout.strip() == f"hipSuccess y[776] {y:.0f}", r.stdout + r.stderr
    assert "no errors found" in r.stderr, r.stderr


def test_bad_check_name(build):
    r = _exec(build("clean", False), "--check", "memcheck,nosuchcheck")
    assert r.returncode != 0 and "nosuchcheck" in r.stderr and "clean" not in r.stdout, r.stdout + r.stderr


def test_amd_runtime_use_after_free(build, tmp_path, monkeypatch):
    """AMD's HIP over pyhip's thunk: memcheck sees the thunk's allocations (ROCr's blocks) and their frees. An
    8 MiB hipMalloc is a thunk allocation of its own, so a kernel writing into it after hipFree is a
    use-after-free (the stores dropped); ROCr's small allocations share blocks, and a store one past the 8 MiB
    lands in the next thunk allocation: neither is seen there (docs/check.md, AMD's HIP over the thunk)."""
    monkeypatch.setenv("PYHIP_DEVICES", "gfx90a:sramecc+:xnack-")      # (ROCr: the code object's exact target)
    log = tmp_path / "log.jsonl"
    r = _exec(build("amd_runtime", False), "--runtime", "amd", "--check", "memcheck", "--check-log", str(log))
    assert r.returncode == 1, r.stdout + r.stderr
    assert r.stdout.splitlines() == ["past_end hipSuccess", "after_free hipSuccess"], r.stdout
    reps = [json.loads(x) for x in log.read_text().splitlines()]
    assert [x["kind"] for x in reps] == ["use-after-free"], reps
    rep = reps[0]
    a = rep["allocation"]
    assert rep["count"] == 11 and rep["lane"] == 0 and a["kind"] == "kfd" and a["size"] >= 8 << 20, rep
    assert rep["address"] == a["start"] and rep["access"] == "4 bytes, write", rep
    assert "freed" in a and "FreeMemory" in a["freed"], a
    plain = _exec(build("amd_runtime", False), "--runtime", "amd")    # without the check: a VM fault, as on a GPU
    assert plain.returncode != 0, plain.stdout + plain.stderr          # (ROCr aborts: stdout unflushed)
    assert "memory access fault" in plain.stderr.lower(), plain.stderr


@pytest.mark.parametrize("engine", ["native", "numpy"])
def test_pitch_as_element_stride(build, tmp_path, engine):
    """hip-tests' hipMallocPitch_KernelLaunch pattern: silent on a GPU and by default; memcheck names it."""
    exe = build("pitch_as_elements", True)
    plain = _exec(exe, engine=engine)
    assert plain.returncode == 0 and plain.stdout.startswith("sync hipSuccess"), plain.stdout + plain.stderr
    pitch = int(plain.stdout.split()[-1])
    assert 7 * pitch * 8 > 10 * pitch            # the last row read lies well past the allocation
    log = tmp_path / "log.jsonl"
    r = _exec(exe, "--check", "memcheck", "--check-log", str(log), engine=engine)
    assert r.returncode == 1 and r.stdout == plain.stdout, r.stdout + r.stderr      # performed as the GPU does
    rep, store = [json.loads(x) for x in log.read_text().splitlines()]              # b[i] read, a[i] written
    assert store["instruction"].startswith("global_store") and store["count"] == rep["count"] == 6, store
    a = rep["allocation"]
    assert rep["kind"] == "out-of-bounds" and rep["kernel"].startswith("copy_rows("), rep
    assert a["size"] == 10 * pitch and a["allocated"].startswith("hipMallocPitch"), rep
    # the first row past the end: i = k * pitch elements with k * pitch * 8 >= 10 * pitch, i.e. k = 2
    assert rep["address"] == a["start"] + 2 * pitch * 8 and rep["instruction"].startswith("global_load"), rep
    assert rep["source"].endswith(f"pitch_as_elements.hip:{_line('pitch_as_elements.hip', 'BUG-LINE')}"), rep


@pytest.mark.parametrize("engine", ["native", "numpy"])
def test_misaligned_atomic_and_lds_overrun(build, tmp_path, engine):
    """A misaligned atomic fails on a GPU too; a kernel using twice the dynamic LDS its launch gave it (256 of
    512 bytes) does not — the GPU allocates LDS in 512-byte granules and never faults on LDS — and runs to
    the right result here, with and without the check.  Each is named once per instruction, with the
    caller's line for the atomic that HIP's header inlines (DWARF's inlined-subroutine call site)."""
    plain = _exec(build("atomic_and_lds", True), engine=engine)
    assert plain.stdout.split() == ["hipErrorIllegalAddress", "hipSuccess", "reversed"], plain.stdout + plain.stderr
    log = tmp_path / "log.jsonl"
    r = _exec(build("atomic_and_lds", True), "--check", "memcheck", "--check-log", str(log), engine=engine)
    assert r.returncode == 1 and r.stdout == plain.stdout, r.stdout + r.stderr
    reps = [json.loads(x) for x in log.read_text().splitlines()]
    assert sorted(x["kind"] for x in reps) == ["lds-out-of-bounds"] * 2 + ["misaligned-atomic"], reps
    at = next(x for x in reps if x["kind"] == "misaligned-atomic")
    assert at["kernel"] == "count(int*)" and at["address"] % 4 == 2 and "atomic" in at["instruction"], at
    assert at["source"].endswith(f"atomic_and_lds.hip:{_line('atomic_and_lds.hip', 'ATOMIC-LINE')}"), at
    store, load = (next(x for x in reps if x["kind"] == "lds-out-of-bounds" and x["access"].endswith(what))
                   for what in ("write", "read"))
    for lds, what, tag in ((store, "write", "LDS-LINE"), (load, "read", "LDS-READ-LINE")):
        assert lds["kernel"] == "reverse(int*, int)" and lds["access"].endswith(what), lds
        assert lds["instruction"].startswith("ds_" + what), lds
        assert lds["count"] == 64 and lds["allocation"]["size"] == 64 * 4, lds        # lanes 64..127 / 0..63
        assert lds["source"].endswith(f"atomic_and_lds.hip:{_line('atomic_and_lds.hip', tag)}"), lds
        assert "performed, a GPU would not fault" in lds["message"], lds
    assert store["address"] == 64 * 4 and store["lane"] == 0 and store["wave"] == 1, store   # element 64
    assert load["address"] == 127 * 4 and load["lane"] == 0 and load["wave"] == 0, load    # s[127 - 0]
