"""memcheck and initcheck on texture and surface accesses (docs/check.md): tests/check/src/image_access.hip reads
a texture over linear memory the host filled half of (tex1Dfetch: ``buffer_load_format``, a typed buffer load),
a hipArray nothing wrote through a texture (tex2D: ``image_sample``), then fetches that texture after hipFree
of its memory and writes a surface after hipFreeArray of its array (``image_store``).  Each is reported once,
with its lane count, first lane and source line, the same on both engines (the native engine's handlers,
compiled kernels; the numpy engine's semantics); the clean phase before them (a copy, a surface store, then
reads) is silent; what the program computes is unchanged (use after free: loads read 0, stores dropped)."""
import json
import pytest
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


_OOB = r'''
import sys, numpy as np
sys.path[:0] = [{emu!r}, {tests!r}]
import pyhip, asmkit, mimgkit as mk
g = asmkit.gpu("gfx90a"); g.engine = {engine!r}
native0 = g.engine_stats()["native"]
tex = np.arange(64 * 4, dtype=np.float32).reshape(1, 4, 64, 1)          # 4 rows of 64 floats: 1024 bytes
img = mk.Image(tex, "2d")
t = list(img.t)
t[2] = (t[2] & ~(0x3FFF << 14)) | (7 << 14)                              # HEIGHT 8: rows 4..7 run past the end
rows = np.stack([np.arange(64), np.arange(64) % 8], 1)                  # lane l: texel (l, l % 8)
# (one session each: the two test kernels have one name and the instruction at one PC, one report between them)
for inst, coords in (("image_load v8, v4, s[12:19] dmask:0x1 unorm", rows),
                     ("image_store v8, v4, s[12:19] dmask:0x1 unorm", np.stack([rows[:, 0], 7 - rows[:, 1]], 1))):
    with pyhip.check("memcheck", echo=False) as s:
        got = mk.run(inst, t, None, coords)[:, 0].view(np.float32)
    for r in s.reports:
        print("REPORT", r["kind"], r["lane"], r["instruction"].split()[0], r["address"] - img.addr, r["access"],
              s.count(r))
    if "load" in inst:
        print("LOADED", [float(x) for x in got[:8]])
img.free()
print("NATIVE", g.engine_stats()["native"] - native0)
'''


@pytest.mark.parametrize("engine", ["numpy", "native"])
def test_image_past_the_exact_end(tmp_path, engine):
    """A T# whose rows run past its allocation (a hand-made descriptor: through HIP's API a texture cannot, its
    range is checked at creation): memcheck reports image_load and image_store lanes past the exact end (inside
    the 2 MiB the allocation owns, where a GPU does not fault: performed), first lane and count, on both engines."""
    code = _OOB.format(emu=str(programs.ROOT / "tests" / "emu"), tests=str(programs.ROOT / "tests"), engine=engine)
    env = {**os.environ, "PYHIP_JIT_TIERING": "0", "PYTHONPATH": str(programs.ROOT)}
    env.pop("PYHIP_CHECK", None)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    lines = r.stdout.splitlines()
    reps = [x.split()[1:] for x in lines if x.startswith("REPORT")]
    # rows 4..7 of lanes l with l % 8 >= 4: 32 lanes each; the first is lane 4 at row 4 (byte 4 * 256 + 16)
    assert reps == [["out-of-bounds", "4", "image_load", str(4 * 256 + 16), "4", "bytes,", "read", "32"],
                    ["out-of-bounds", "0", "image_store", str(7 * 256), "4", "bytes,", "write", "32"]], lines
    loaded = eval(next(x for x in lines if x.startswith("LOADED"))[7:])     # rows 0..3 as written; 4..7: padding
    assert loaded[:4] == [float(l * 64 + l) for l in range(4)] and loaded[4:8] == [0.0] * 4, loaded
    native = int(next(x for x in lines if x.startswith("NATIVE")).split()[1])
    assert (native > 0) == (engine == "native"), lines
