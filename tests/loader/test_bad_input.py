"""Bad input: each malformation raises LoaderError with a HIP error code and a readable message."""
import io
import struct

import pytest
from elftools.elf.elffile import ELFFile

from conftest import fixture_files, fixture_path
from pyhip.errors import HipError, LoaderError, hipError_t
from pyhip.loader import load
from pyhip.loader.bundle import build_bundle


def _hsaco() -> bytes:
    return fixture_path(next(e for e in fixture_files("hsaco") if e.get("kernels"))).read_bytes()


def _full(data):
    b = load(data)
    for ref in b.code_objects:
        ref.code_object.validate()
    return b


def _expect(data, code=hipError_t.hipErrorInvalidImage, match=None):
    with pytest.raises(LoaderError, match=match) as ei:
        _full(data)
    assert isinstance(ei.value, HipError) and ei.value.code == code
    assert ei.value.message and "\n" not in str(ei.value)
    return ei.value


def test_wrong_magic():
    _expect(b"\x7fELG" + _hsaco()[4:], match="unknown magic")
    _expect(b"MZ" + b"\0" * 100)


def test_truncated_headers():
    data = _hsaco()
    for n in (1, 10, 40, 63):
        _expect(data[:n])
    _expect(data[:200])       # header table outside the file


def test_wrong_machine_and_abi():
    data = bytearray(_hsaco())
    data[18:20] = struct.pack("<H", 62)   # x86-64: treated as a host ELF without .hip_fatbin
    _expect(bytes(data), match="hip_fatbin")
    data = bytearray(_hsaco())
    data[7] = 0
    _expect(bytes(data), match="OSABI")
    data = bytearray(_hsaco())
    data[8] = 0                                  # code object V2
    _expect(bytes(data), match="ABI version")
    data = bytearray(_hsaco())
    data[16:18] = struct.pack("<H", 1)     # ET_REL
    _expect(bytes(data), match="ET_DYN")


def test_unknown_processor():
    data = bytearray(_hsaco())
    flags = struct.unpack_from("<I", data, 48)[0]
    struct.pack_into("<I", data, 48, (flags & ~0xFF) | 0x7E)
    _expect(bytes(data), code=hipError_t.hipErrorNoBinaryForGpu, match="MACH")


def _note_offset(data: bytes) -> tuple[int, int]:
    elf = ELFFile(io.BytesIO(data))
    sec = elf.get_section_by_name(".note")
    return sec["sh_offset"], sec["sh_size"]


def test_missing_and_corrupt_metadata():
    data = bytearray(_hsaco())
    off, size = _note_offset(bytes(data))
    i = data.index(b"AMDGPU\0", off, off + size)
    data[i:i + 6] = b"XMDGPU"
    _expect(bytes(data), match="no AMDGPU metadata")
    data = bytearray(_hsaco())
    i = data.index(b"AMDGPU\0", off, off + size) + 8
    data[i:i + 16] = b"\xc1" * 16            # 0xc1 is never valid MessagePack
    _expect(bytes(data), match="MessagePack|metadata")
    data = bytearray(_hsaco())
    i = data.index(b"amdhsa.kernels", off, off + size)
    data[i:i + 14] = b"amdhsa.kernelz"
    _expect(bytes(data), match="amdhsa.kernels")


def test_descriptor_outside_file():
    data = bytearray(_hsaco())
    elf = ELFFile(io.BytesIO(bytes(data)))
    for secname in (".dynsym", ".symtab"):
        sec = elf.get_section_by_name(secname)
        if sec is None:
            continue
        for i, sym in enumerate(sec.iter_symbols()):
            if sym.name.endswith(".kd"):
                struct.pack_into("<Q", data, sec["sh_offset"] + i * 24 + 8, 0x7FFF0000)
    _expect(bytes(data), match="outside")


def test_bundle_entry_past_end_and_absurd_count():
    co = _hsaco()
    b = bytearray(build_bundle([("host-x86_64-unknown-linux--", b""), ("hipv4-amdgcn-amd-amdhsa--gfx90a", co)]))
    struct.pack_into("<Q", b, 32 + 24 + len("host-x86_64-unknown-linux--") + 8, len(co) + 10 ** 6)
    _expect(bytes(b), match="past the end")
    b = bytearray(build_bundle([("hipv4-amdgcn-amd-amdhsa--gfx90a", co)]))
    struct.pack_into("<Q", b, 24, 1 << 40)
    _expect(bytes(b), match="absurd")
    b = bytearray(build_bundle([("hipv4-amdgcn-amd-amdhsa--gfx90a", co)]))
    struct.pack_into("<Q", b, 48, 1 << 50)      # id length
    _expect(bytes(b), match="ID length")


def test_compressed_absurd_size():
    hdr = b"CCOB" + struct.pack("<HHIIQ", 2, 1, 40, 0xFFFFFFFF, 0) + b"\0" * 16
    _expect(hdr, match="absurd")
    _expect(b"CCOB" + struct.pack("<HH", 9, 1) + b"\0" * 40, match="version")


def test_no_binary_for_gpu():
    b = load(_hsaco())
    with pytest.raises(LoaderError) as ei:
        b.select("gfx1201")
    assert ei.value.code == hipError_t.hipErrorNoBinaryForGpu


def test_missing_file_and_wrong_type(tmp_path):
    with pytest.raises(LoaderError) as ei:
        load(tmp_path / "nope.hsaco")
    assert ei.value.code == hipError_t.hipErrorFileNotFound
    with pytest.raises(LoaderError):
        load(12345)
    with pytest.raises(LoaderError):
        load(b"")
