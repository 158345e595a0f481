"""memcheck and initcheck on texture and surface accesses (docs/check.md): tests/check/src/image_access.hip reads
a texture over linear memory the host filled half of (tex1Dfetch: ``buffer_load_format``, a typed buffer load),
a hipArray nothing wrote through a texture (tex2D: ``image_sample``), then fetches that texture after hipFree
of its memory and writes a surface after hipFreeArray of its array (``image_store``).  Each is reported once,
with its lane count, first lane and source line, the same on both engines (the native engine's handlers,
compiled kernels; the numpy engine's semantics); the clean phase before them (a copy, a surface store, then
reads) is silent; what the program computes is unchanged (use after free: loads read 0, stores dropped)."""
import json
import os
import subprocess
import sys

import test_memcheck_programs as programs

_line = programs._line
build = programs.build

PLAIN = ["clean fetch 499500", "clean array 17020", "half fetch 124750", "fresh array hipSuccess"]


def _run(exe, engine, tmp_path):
    log, cache = tmp_path / f"{engine}.jsonl", tmp_path / f"jit-{engine}"
    env = {**os.environ, "PYHIP_ENGINE": engine, "PYHIP_JIT_TIERING": "0", "PYHIP_JIT_CACHE_DIR": str(cache),
           "PYTHONPATH": str(programs.ROOT)}
    env.pop("PYHIP_CHECK", None)
    r = subprocess.run([sys.executable, "-m", "pyhip", "exec", "--check", "memcheck,initcheck", "--check-log",
                        str(log), str(exe)], capture_output=True, text=True, timeout=300, env=env)
    assert r.returncode == 1, r.stdout + r.stderr
    assert r.stdout.splitlines() == PLAIN + ["fetch after free hipSuccess", "store after free hipSuccess"], r.stdout
    assert any(cache.rglob("*.*")) == (engine == "native"), engine          # where the kernels ran
    return [json.loads(x) for x in log.read_text().splitlines()]


def test_image_accesses_alike_on_both_engines(build, tmp_path):
    exe = build("image_access", True)
    plain = programs._exec(exe)
    assert plain.returncode == 0, plain.stdout + plain.stderr
    # without the check a GPU faults on the freed memory: so does pyhip
    assert plain.stdout.splitlines() == PLAIN + ["fetch after free hipErrorIllegalAddress",
                                                 "store after free hipErrorIllegalAddress"], plain.stdout
    keys = ("checker", "kind", "kernel", "workgroup", "wave", "lane", "pc", "instruction", "address", "access",
            "count", "source", "message")
    seen = {e: [{k: r.get(k) for k in keys} for r in _run(exe, e, tmp_path)] for e in ("numpy", "native")}
    assert seen["native"] == seen["numpy"], seen
    got = {(r["checker"], r["kernel"].split("(")[0]): r for r in seen["native"]}
    assert set(got) == {("initcheck", "fetch"), ("initcheck", "read2d"), ("memcheck", "fetch"),
                        ("memcheck", "put")}, got
    half, fresh, fetch, store = (got[k] for k in (("initcheck", "fetch"), ("initcheck", "read2d"),
                                                  ("memcheck", "fetch"), ("memcheck", "put")))
    src = "image_access.hip:{}".format
    # the half the host did not copy: elements 500..999, the first of them lane 52 of wave 3 of workgroup 1
    assert half["count"] == 500 and (half["workgroup"][0], half["wave"], half["lane"]) == (1, 3, 52), half
    assert half["instruction"].startswith("buffer_load_format_x") and "byte 2000 of a 4000" in half["message"]
    assert half["source"].endswith(src(_line("image_access.hip", "IMG-FETCH"))), half
    # a fresh hipArray (37 x 5 floats): pyhip zeroes it, but nothing of the program's wrote it
    assert fresh["count"] == 37 * 5 and fresh["instruction"].startswith("image_sample"), fresh
    assert fresh["lane"] == 0 and fresh["source"].endswith(src(_line("image_access.hip", "IMG-SAMPLE"))), fresh
    assert fetch["kind"] == "use-after-free" and fetch["count"] == 1000, fetch
    assert fetch["source"].endswith(src(_line("image_access.hip", "IMG-FETCH"))), fetch
    assert store["kind"] == "use-after-free" and store["count"] == 37 * 5 and store["lane"] == 0, store
    assert store["instruction"].startswith("image_store") and store["access"] == "4 bytes, write", store
    assert store["source"].endswith(src(_line("image_access.hip", "IMG-STORE"))), store
