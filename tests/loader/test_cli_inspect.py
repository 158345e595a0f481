"""``pyhip inspect``: text and --json output checked against llvm-readelf-19; bad input exits non-zero."""
import json
import subprocess
import sys

import pytest

from conftest import fixture_files, fixture_path, readelf_metadata


def _inspect(*args):
    return subprocess.run([sys.executable, "-m", "pyhip", "inspect", *map(str, args)], capture_output=True, text=True)


@pytest.mark.parametrize("entry", [e for e in fixture_files("hsaco") if e["code_object_version"] in (4, 5)][:3]
                         + fixture_files("host_exe")[:1], ids=lambda e: e["file"])
def test_json_matches_readelf(entry):
    r = _inspect(fixture_path(entry), "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    cos = doc["code_objects"]
    assert sorted(c["target"] for c in cos) == sorted(entry["targets"])
    if entry["kind"] == "hsaco":
        ref = readelf_metadata(fixture_path(entry))
        kernels = {k["name"]: k for k in cos[0]["kernels"]}
        assert set(kernels) == {k[".name"] for k in ref["amdhsa.kernels"]}
        for rk in ref["amdhsa.kernels"]:
            k = kernels[rk[".name"]]
            assert k["symbol"] == rk[".symbol"]
            assert k["kernarg_size"] == rk[".kernarg_segment_size"]
            assert k["group_segment_size"] == rk[".group_segment_fixed_size"]
            assert k["private_segment_size"] == rk[".private_segment_fixed_size"]
            assert k["wavefront_size"] == rk[".wavefront_size"]
            assert (k["sgpr_count"], k["vgpr_count"]) == (rk[".sgpr_count"], rk[".vgpr_count"])
            assert [(a["offset"], a["size"], a["value_kind"]) for a in k["args"]] == [
                (a[".offset"], a[".size"], a[".value_kind"]) for a in rk.get(".args", [])]
        for g in cos[0]["globals"]:
            assert set(g) >= {"name", "size"}


def test_text_output_names_kernels_readably():
    entry = next(e for e in fixture_files("hsaco") if "_Z5scaleIfEvPT_S0_i" in e.get("kernels", []))
    r = _inspect(fixture_path(entry))
    assert r.returncode == 0
    assert "scale<float>(float*, float, int)" in r.stdout and "g_table" in r.stdout


@pytest.mark.parametrize("data", [b"", b"not a code object at all", b"\x7fELF" + b"\0" * 10,
                                  b"__CLANG_OFFLOAD_BUNDLE__" + b"\xff" * 8])
def test_bad_input_one_line_reason(tmp_path, data):
    p = tmp_path / "bad.bin"
    p.write_bytes(data)
    r = _inspect(p)
    assert r.returncode != 0
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "error" in lines[0] and "Traceback" not in r.stderr
    assert r.stdout == ""


def test_missing_file():
    r = _inspect("/nonexistent/file.hsaco")
    assert r.returncode != 0 and "hipErrorFileNotFound" in r.stderr
