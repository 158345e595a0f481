"""Offload bundles and compressed bundles (CCOB v1/v2/v3, zstd and zlib)."""
import hashlib
import struct

import pytest

from conftest import fixture_files, fixture_path
from pyhip.errors import LoaderError
from pyhip.loader import load
from pyhip.loader.bundle import build_bundle, compress_ccob, decompress_ccob, parse_bundle


def _plain_bundle() -> bytes:
    entry = next(e for e in fixture_files("bundle") if len(e["targets"]) >= 2)
    return fixture_path(entry).read_bytes()


def _entries(binary):
    return sorted((r.entry_id, r.code_object.data) for r in binary.code_objects)


@pytest.mark.parametrize("version", [1, 2, 3])
@pytest.mark.parametrize("method", ["zstd", "zlib"])
def test_ccob_roundtrip(version, method):
    raw = _plain_bundle()
    ccob = compress_ccob(raw, version=version, method=method)
    assert ccob[:4] == b"CCOB" and struct.unpack_from("<H", ccob, 4)[0] == version
    assert _entries(load(ccob)) == _entries(load(raw))
    out, consumed = decompress_ccob(ccob + b"trailing")
    assert out == raw and consumed == (len(ccob) if version > 1 else len(ccob) + 8)


def test_clang_compressed_bundle_matches_its_source():
    ccob_entries = fixture_files("ccob")
    assert ccob_entries
    for entry in ccob_entries:
        data = fixture_path(entry).read_bytes()
        assert data[:4] == b"CCOB"
        raw, _ = decompress_ccob(data)
        assert raw[:24] == b"__CLANG_OFFLOAD_BUNDLE__"
        # the header's hash is the MD5 of the uncompressed bundle
        assert hashlib.md5(raw).digest()[:8] == data[16:24] if data[4] == 2 else True
        assert sorted(r.entry_id for r in load(data).code_objects) == sorted(
            e.entry_id for e in parse_bundle(raw)[0] if not e.is_host)


def test_bundle_size_comes_from_table():
    raw = _plain_bundle()
    entries, size = parse_bundle(raw + b"\0" * 100)
    assert size == max(e.offset + e.size for e in entries) == len(raw.rstrip(b"\0")) or size <= len(raw)


def test_build_bundle_reads_back():
    co = fixture_path(fixture_files("hsaco")[0]).read_bytes()
    b = build_bundle([("host-x86_64-unknown-linux--", b""), ("hipv4-amdgcn-amd-amdhsa--gfx90a", co)])
    loaded = load(b)
    assert loaded.code_objects[0].code_object.data == co


def test_corrupt_ccob_payload_detected():
    ccob = bytearray(compress_ccob(_plain_bundle(), version=2))
    ccob[-10] ^= 0xFF
    with pytest.raises(LoaderError):
        load(bytes(ccob))
    ccob = bytearray(compress_ccob(_plain_bundle(), version=2))
    ccob[16] ^= 1                 # hash
    with pytest.raises(LoaderError, match="hash"):
        load(bytes(ccob))
