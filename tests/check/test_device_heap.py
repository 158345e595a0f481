"""memcheck of device-side malloc/free (docs/check.md, pyhip/sanitizer/devheap.py): hipcc programs with one
planted bug per kernel (tests/check/src/device_heap.hip) — free of a hipMalloc'd pointer, of the middle of a
block, double free, read after free, write past the requested size, blocks never freed — each reported once
with its kind, kernel, lanes, block and (with -g) source line, whichever engine PYHIP_ENGINE picks; a program
with heavy correct malloc/free traffic (device_heap_clean.hip) is silent under --check all."""
import json

import pytest
import test_memcheck_programs as programs

_exec, _line = programs._exec, programs._line
build = programs.build


@pytest.mark.parametrize("engine,debug", [("native", True), ("numpy", False)])
def test_planted_device_heap_bugs(build, tmp_path, engine, debug):
    log = tmp_path / "log.jsonl"
    r = _exec(build("device_heap", debug), "--check", "all", "--check-log", str(log), engine=engine)
    assert r.returncode == 1, r.stdout + r.stderr
    # every kernel computes what it should: the bad frees are not performed, the bad accesses performed as on a GPU
    assert r.stdout.splitlines() == ["free_host hipSuccess mismatches 0", "free_middle hipSuccess mismatches 0",
                                     "double_free hipSuccess mismatches 0", "use_after_free done",
                                     "past_size hipSuccess mismatches 0", "leak hipSuccess mismatches 0"], r.stdout
    reps = [json.loads(x) for x in log.read_text().splitlines()]
    by = {(x["kind"], x["kernel"].split("(")[0]): x for x in reps}
    assert set(by) == {("invalid-free", "free_host"), ("invalid-free", "free_middle"), ("double-free", "double_free"),
                       ("use-after-free", "use_after_free"), ("out-of-bounds", "past_size"),
                       ("device-heap-leak", "leak")}, sorted(by)

    def src(rep, tag):
        if debug:
            assert rep["source"].endswith(f"device_heap.hip:{_line('device_heap.hip', tag)}"), rep
        else:
            assert "source" not in rep, rep

    host = by[("invalid-free", "free_host")]
    assert host["count"] == 1 and host["lane"] == 0 and host["allocation"]["kind"] == "user", host
    assert host["address"] == host["allocation"]["start"] and host["allocation"]["size"] == 256, host
    assert host["allocation"]["allocated"].startswith("hipMalloc"), host
    src(host, "FREE-HOST")
    mid = by[("invalid-free", "free_middle")]
    a = mid["allocation"]
    assert mid["count"] == 3 and mid["lane"] == 0 and a["kind"] == "device-malloc" and a["size"] == 64, mid
    assert mid["address"] - a["start"] == 16 and a["allocated"].startswith("malloc(64) in kernel free_middle"), mid
    src(mid, "FREE-MIDDLE")
    dbl = by[("double-free", "double_free")]
    a = dbl["allocation"]
    assert dbl["count"] == 32 and dbl["lane"] == 1 and a["size"] == 32 and dbl["address"] == a["start"], dbl
    assert a["freed"].startswith("free in kernel double_free"), dbl
    src(dbl, "DOUBLE-FREE")
    uaf = by[("use-after-free", "use_after_free")]
    a = uaf["allocation"]
    assert uaf["count"] == 64 and uaf["address"] - a["start"] == 8 and a["size"] == 16 and a.get("freed"), uaf
    assert uaf["access"] == "4 bytes, read", uaf
    src(uaf, "UAF-READ")
    oob = by[("out-of-bounds", "past_size")]
    a = oob["allocation"]
    assert oob["count"] == 64 and oob["address"] - a["start"] == 20 and a["size"] == 20, oob
    assert oob["access"] == "4 bytes, write" and not a.get("freed"), oob
    src(oob, "PAST-SIZE")
    leak = by[("device-heap-leak", "leak")]
    assert leak["count"] == 64 and leak["blocks"] == 64 and leak["bytes"] == 64 * 12, leak
    assert leak["allocation"]["size"] == 12 and leak["checker"] == "leaks", leak
    src(leak, "LEAK")
    if debug:
        assert leak["allocation"]["allocated"].endswith(f"device_heap.hip:{_line('device_heap.hip', 'LEAK')}"), leak
    assert "leaks: 768 bytes in 64 allocation(s) never freed" in r.stderr, r.stderr


def test_heavy_traffic_is_silent(build):
    r = _exec(build("device_heap_clean", False), "--check", "all", engine="native", timeout=900)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.splitlines() == ["churn hipSuccess mismatches 0"], r.stdout
    assert "pyhip check: no errors found" in r.stderr, r.stderr


def test_racecheck_alone_leaves_the_heap_to_the_native_engine(build):
    """Without memcheck the heap is not watched: device malloc kernels stay on the native engine, and racecheck
    does not look into ockl's own accesses (its heap's locks and slab headers: device_heap_clean was reported
    before that rule)."""
    r = _exec(build("device_heap_clean", False), "--check", "racecheck", engine="native", timeout=900)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.splitlines() == ["churn hipSuccess mismatches 0"], r.stdout
