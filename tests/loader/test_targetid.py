"""Target ID parsing/formatting, e_flags decoding and the compatibility rules (docs/code-object.md §3)."""
import pytest

from pyhip.errors import LoaderError, hipError_t
from pyhip.loader.targetid import (DeviceISA, TargetID, is_compatible, select, target_from_eflags)


@pytest.mark.parametrize("text,canon", [
    ("gfx90a", "gfx90a"),
    ("gfx90a:sramecc+:xnack-", "gfx90a:sramecc+:xnack-"),
    ("gfx90a:xnack-:sramecc+", "gfx90a:sramecc+:xnack-"),          # canonical order is alphabetical
    ("amdgcn-amd-amdhsa--gfx942:xnack+", "gfx942:xnack+"),
    ("hipv4-amdgcn-amd-amdhsa--gfx1030", "gfx1030"),
    ("hip-amdgcn-amd-amdhsa--gfx906+xnack", "gfx906:sramecc-:xnack+"),   # V2/V3 style: absent = off
    ("gfx11-generic", "gfx11-generic"),
])
def test_parse_and_format(text, canon):
    assert str(TargetID.parse(text)) == canon
    assert TargetID.parse(canon).triple_name == "amdgcn-amd-amdhsa--" + canon


@pytest.mark.parametrize("bad", ["", "gfx", "gfx90a:xnack", "gfx90a:foo+", "gfx90a:xnack+:xnack-",
                                 "gfx1030:xnack+", "gfx900:sramecc+", "sm_80", "gfx90a::"])
def test_parse_rejects(bad):
    with pytest.raises(LoaderError):
        TargetID.parse(bad)


@pytest.mark.parametrize("flags,abi,canon,gen", [
    (0x53F, 2, "gfx90a", 0), (0x73F, 2, "gfx90a:xnack+", 0), (0x63F, 2, "gfx90a:xnack-", 0),
    (0xE3F, 2, "gfx90a:sramecc+:xnack-", 0), (0x93F, 2, "gfx90a:sramecc-", 0),
    (0x12C, 3, "gfx900", 0), (0x036, 2, "gfx1030", 0), (0x54C, 3, "gfx942", 0),
    (0x01000151, 4, "gfx9-generic", 1), (0x01000054, 4, "gfx11-generic", 1),
    (0x01000252, 4, "gfx10-1-generic:xnack-", 1),
])
def test_eflags(flags, abi, canon, gen):
    t = target_from_eflags(flags, abi)
    assert str(t) == canon and t.generic_version == gen


def test_eflags_v3_only_says_on():
    assert str(target_from_eflags(0x32F, 1)) == "gfx906:sramecc+:xnack+"
    assert str(target_from_eflags(0x23F, 1)) == "gfx90a:sramecc+:xnack-"


@pytest.mark.parametrize("flags,abi", [(0x0FF, 2), (0x000, 2), (0x03F, 2), (0x136, 2), (0x051, 4), (0x0100053F, 4)])
def test_eflags_rejects(flags, abi):
    with pytest.raises(LoaderError):
        target_from_eflags(flags, abi)


DEV = DeviceISA.parse("gfx90a:sramecc+:xnack-")


@pytest.mark.parametrize("code,ok", [
    ("gfx90a", True), ("gfx90a:xnack-", True), ("gfx90a:sramecc+", True), ("gfx90a:sramecc+:xnack-", True),
    ("gfx90a:xnack+", False), ("gfx90a:sramecc-", False), ("gfx908", False), ("gfx942", False),
])
def test_compat_features(code, ok):
    assert is_compatible(TargetID.parse(code), DEV) is ok


def test_compat_generic():
    g9 = TargetID("gfx9-generic", xnack=None, generic_version=1)
    assert is_compatible(g9, DeviceISA.parse("gfx906:sramecc-:xnack-"))
    assert not is_compatible(g9, DeviceISA.parse("gfx90a:sramecc-:xnack-"))   # gfx90a has no family
    assert not is_compatible(TargetID("gfx9-generic", generic_version=0), DeviceISA.parse("gfx900:xnack-"))
    g11 = TargetID("gfx11-generic", generic_version=1)
    assert is_compatible(g11, DeviceISA.parse("gfx1100")) and not is_compatible(g11, DeviceISA.parse("gfx1030"))


def test_select_prefers_native_then_concrete():
    cands = [TargetID("gfx11-generic", generic_version=1), TargetID.parse("gfx1100")]
    assert select(cands, DeviceISA.parse("gfx1100")).processor == "gfx1100"
    assert select(cands[:1], DeviceISA.parse("gfx1101")).processor == "gfx11-generic"
    cands = [TargetID.parse("gfx90a"), TargetID.parse("gfx90a:xnack-"), TargetID.parse("gfx90a:xnack+")]
    assert str(select(cands, DEV)) == "gfx90a:xnack-"
    with pytest.raises(LoaderError) as ei:
        select(cands, DeviceISA.parse("gfx942:sramecc+:xnack-"))
    assert ei.value.code == hipError_t.hipErrorNoBinaryForGpu
    assert "gfx90a:xnack+" in str(ei.value)
