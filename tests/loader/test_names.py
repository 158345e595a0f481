"""Kernel name lookup; the demangled forms are checked against llvm-cxxfilt-19."""
import subprocess

import pytest

from conftest import fixture_files, fixture_path, require_tool
from pyhip.errors import LoaderError, hipError_t
from pyhip.loader import load
from pyhip.loader.names import NameIndex, demangle, full_signature

SAMPLE = ["_Z5scaleIfEvPT_S0_i", "_Z5scaleIdEvPT_S0_i", "_Z5scaleIiEvPT_S0_i", "vadd_c",
          "_Z6reducePKfPfi", "_ZN2ns6kernelEPfj", "_Z4vaddPKfS0_Pfi"]


def test_demangle_matches_llvm_cxxfilt():
    names = SAMPLE + [n for e in fixture_files("hsaco") for n in e.get("kernels", [])]
    out = subprocess.run([require_tool("llvm-cxxfilt-19")], input="\n".join(names), capture_output=True,
                         text=True, check=True).stdout.splitlines()
    assert [demangle(n) for n in names] == out


def test_lookup_forms():
    ix = NameIndex(SAMPLE)
    assert ix.lookup("_Z5scaleIfEvPT_S0_i") == "_Z5scaleIfEvPT_S0_i"
    assert ix.lookup(b"vadd_c") == "vadd_c"
    assert ix.lookup("scale<float>(float*, float, int)") == "_Z5scaleIfEvPT_S0_i"
    assert ix.lookup("scale<double>(double *, double, int)") == "_Z5scaleIdEvPT_S0_i"
    assert ix.lookup("scale<int>") == "_Z5scaleIiEvPT_S0_i"
    assert ix.lookup("reduce") == "_Z6reducePKfPfi"
    assert ix.lookup("ns::kernel") == "_ZN2ns6kernelEPfj"
    assert ix.lookup("kernel") == "_ZN2ns6kernelEPfj"
    assert ix.lookup("vadd(float const*, float const*, float*, int)") == "_Z4vaddPKfS0_Pfi"


def test_ambiguous_lists_candidates():
    ix = NameIndex(SAMPLE)
    with pytest.raises(LoaderError) as ei:
        ix.lookup("scale")
    msg = str(ei.value)
    assert ei.value.code == hipError_t.hipErrorInvalidValue
    for sig in ("scale<float>(float*, float, int)", "scale<double>(double*, double, int)",
                "scale<int>(int*, int, int)"):
        assert sig in msg


@pytest.mark.parametrize("bad", ["nope", "scale<long>", "", None, 42])
def test_missing(bad):
    with pytest.raises(LoaderError) as ei:
        NameIndex(SAMPLE).lookup(bad)
    assert ei.value.code in (hipError_t.hipErrorNotFound, hipError_t.hipErrorInvalidValue)


@pytest.mark.parametrize("entry", [e for e in fixture_files("hsaco") if e.get("kernels")][:6],
                         ids=lambda e: e["file"])
def test_every_fixture_kernel_resolves_by_each_form(entry):
    co = load(fixture_path(entry)).code_objects[0].code_object
    for name in co.kernels:
        assert co.find_kernel(name).name == name
        assert co.find_kernel(full_signature(name)).name == name
