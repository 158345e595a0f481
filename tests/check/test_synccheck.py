"""synccheck (docs/check.md): an s_barrier reached by only some waves of a workgroup — waves that returned
before it, or waves waiting at another s_barrier — reported at the waiting wave's barrier with the other
wave and its PC, on both engines (numpy; native compiled and its handler interpreter); what the program
computes is unchanged (the program checks its results against the host: waves that ended do not count
towards a barrier, any s_barrier releases it, as on hardware).  A program whose waves all meet is silent."""
import json

import pytest
import test_memcheck_programs as programs

_exec, _line = programs._exec, programs._line
build = programs.build          # the hipcc programs, built once per module

# (PYHIP_ENGINE, extra environment): the numpy engine, the native engine compiled from the first dispatch,
# and the native engine's handler interpreter
ENGINES = {"numpy": ("numpy", {}), "native-jit": ("native", {"PYHIP_JIT_TIERING": "0"}),
           "native-interp": ("native", {"PYHIP_JIT": "0"})}


def _run(exe, monkeypatch, engine, *opts):
    name, extra = ENGINES[engine]
    for k, v in extra.items():
        monkeypatch.setenv(k, v)
    return _exec(exe, *opts, engine=name)


@pytest.mark.parametrize("engine", list(ENGINES))
@pytest.mark.parametrize("debug", [True, False])
def test_divergent_barriers(build, tmp_path, monkeypatch, engine, debug):
    exe = build("divergent_barrier", debug)
    plain = _run(exe, monkeypatch, engine)
    assert plain.returncode == 0, plain.stderr
    assert plain.stdout == "early_exit hipSuccess mismatches 0\ntwo_barriers hipSuccess mismatches 0\n"
    log = tmp_path / "log.jsonl"
    r = _run(exe, monkeypatch, engine, "--check", "synccheck", "--check-log", str(log))
    assert r.returncode == 1, r.stdout + r.stderr
    assert r.stdout == plain.stdout                          # the same results under the check
    reports = [json.loads(x) for x in log.read_text().splitlines() if "checker" in x]
    assert {x["checker"] for x in reports} == {"synccheck"}
    early = [x for x in reports if x["kind"] == "barrier-after-exit"]
    assert len(early) == 1, reports
    e = early[0]
    assert e["kernel"] == "early_exit(int*, int const*, int)"
    assert e["wave"] in (0, 1) and e["other_wave"] in (2, 3), e          # waves 2, 3 returned (t >= 128)
    assert e["instruction"].startswith("s_barrier") and isinstance(e["other_pc"], int)
    assert e["workgroup"][1:] == [0, 0] and 0 <= e["workgroup"][0] < 4
    two = [x for x in reports if x["kind"] == "divergent-barrier"]
    assert len(two) == 2 and {x["kernel"] for x in two} == {"two_barriers(int*, int const*, int)"}, reports
    a, b = sorted(two, key=lambda x: x["wave"] != 0)
    assert a["wave"] == 0 and b["wave"] != 0 and b["other_wave"] == 0          # wave 0 alone at its barrier
    assert a["pc"] == b["other_pc"] and b["pc"] == a["other_pc"] and a["pc"] != b["pc"]
    if debug:
        assert e["source"].endswith(f"divergent_barrier.hip:{_line('divergent_barrier.hip', 'SYNC-EARLY-EXIT')}")
        assert a["source"].endswith(f":{_line('divergent_barrier.hip', 'SYNC-WAVE0')}")
        assert b["source"].endswith(f":{_line('divergent_barrier.hip', 'SYNC-OTHERS')}")
    else:
        assert all("source" not in x for x in reports)
    assert "3 distinct error(s) found" in r.stderr


@pytest.mark.parametrize("engine", list(ENGINES))
def test_barriers_met_are_silent(build, monkeypatch, engine):
    r = _run(build("barriers_clean", True), monkeypatch, engine, "--check", "all")
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout == "block_sum hipSuccess mismatches 0\n"
    assert "pyhip check: no errors found" in r.stderr
