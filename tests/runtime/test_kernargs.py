"""Kernel arguments packed at the offsets llvm-readelf-19 reports, hidden args filled, bad args refused."""
import struct

import numpy as np
import pytest

from conftest import fixture_files, fixture_path, readelf_metadata
from pyhip.errors import HipError, hipError_t
from pyhip.loader import load
from pyhip.runtime.kernargs import ArgPacker, param_types


def _readelf_args(path) -> dict[str, list[tuple[int, int, str]]]:
    meta = readelf_metadata(path)
    return {k[".name"]: [(a[".offset"], a[".size"], a[".value_kind"]) for a in k.get(".args", [])]
            for k in meta["amdhsa.kernels"]}


V5 = [e for e in fixture_files("hsaco") if e.get("code_object_version") == 5][:3]


@pytest.mark.parametrize("entry", V5, ids=lambda e: e["file"])
def test_offsets_match_readelf(entry):
    path = fixture_path(entry)
    ref = _readelf_args(path)
    co = load(path).code_objects[0].code_object
    assert ref
    for name, kernel in co.kernels.items():
        if name not in ref:
            continue
        ours = [(a.offset, a.size, a.value_kind) for a in kernel.args]
        assert ours == ref[name]


def _v5_kernel():
    for e in V5:
        co = load(fixture_path(e)).code_objects[0].code_object
        for k in co.kernels.values():
            kinds = {a.value_kind for a in k.args}
            if "hidden_block_count_x" in kinds and "hidden_group_size_x" in kinds and k.explicit_args:
                return k
    pytest.fail("no V5 kernel with hidden args in the fixtures")


def test_hidden_v5_values():
    k = _v5_kernel()
    p = ArgPacker(k)
    rng = np.random.default_rng(1)
    args = []
    for a, pk in zip(k.explicit_args, p.kinds):
        args.append(int(rng.integers(1, 1 << 40)) if pk.kind == "pointer" else
                    (float(rng.random()) if pk.kind == "float" else int(rng.integers(0, 100))))
    buf = p.pack(args, (7, 3, 2), (64, 2, 1), dynamic_lds=96)
    assert len(buf) == k.kernarg_segment_size
    at = {a.value_kind: a for a in k.args}

    def get(kind):
        a = at[kind]
        return int.from_bytes(buf[a.offset:a.offset + a.size], "little")
    assert (get("hidden_block_count_x"), get("hidden_block_count_y"), get("hidden_block_count_z")) == (7, 3, 2)
    assert (get("hidden_group_size_x"), get("hidden_group_size_y"), get("hidden_group_size_z")) == (64, 2, 1)
    if "hidden_dynamic_lds_size" in at:
        assert get("hidden_dynamic_lds_size") == 96
    for a, v, pk in zip(k.explicit_args, args, p.kinds):
        raw = bytes(buf[a.offset:a.offset + a.size])
        if pk.kind == "float":
            assert struct.unpack(pk.fmt, raw)[0] == pytest.approx(v, rel=1e-6)
        else:
            assert int.from_bytes(raw, "little", signed=pk.kind == "int") == v


def test_param_types_from_mangled_names():
    assert param_types("_Z5scaleIfEvPT_S0_i") == ["float*", "float", "int"]
    assert param_types("_Z4vaddPKfS0_Pfi") == ["float const*", "float const*", "float*", "int"]
    assert param_types("vadd_c") is None


def test_bad_arguments_are_refused():
    k = _v5_kernel()
    p = ArgPacker(k)
    n = len(k.explicit_args)
    with pytest.raises(HipError) as ei:
        p.pack([0] * (n + 1), (1, 1, 1), (1, 1, 1))
    assert ei.value.code == hipError_t.hipErrorInvalidValue and "takes" in str(ei.value)
    ptr_i = next((i for i, pk in enumerate(p.kinds) if pk.kind == "pointer"), None)
    if ptr_i is not None:
        args = [0] * n
        args[ptr_i] = 1.5
        with pytest.raises(HipError, match="pointer"):
            p.pack(args, (1, 1, 1), (1, 1, 1))
