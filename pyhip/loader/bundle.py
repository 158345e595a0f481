"""Clang offload bundles: the plain ``__CLANG_OFFLOAD_BUNDLE__`` table and compressed ``CCOB`` v1/v2/v3.

Layouts: docs/code-object.md §2.  Entry tables are read up front; the code objects themselves
are sliced out lazily by the caller.
"""
from __future__ import annotations

import hashlib
import struct
import zlib
from dataclasses import dataclass

import zstandard

from ..errors import LoaderError

BUNDLE_MAGIC = b"__CLANG_OFFLOAD_BUNDLE__"
CCOB_MAGIC = b"CCOB"
MAX_ENTRIES = 4096
MAX_UNCOMPRESSED = 1 << 30      # refuse to inflate more than 1 GiB
_U64 = struct.Struct("<Q")


@dataclass(frozen=True)
class BundleEntry:
    entry_id: str
    offset: int      # from the start of the (uncompressed) bundle
    size: int

    @property
    def is_host(self) -> bool:
        return self.entry_id.startswith("host-")

    @property
    def kind(self) -> str:
        return self.entry_id.split("-", 1)[0]


def _u64(data, off: int, what: str) -> int:
    if off + 8 > len(data):
        raise LoaderError(f"offload bundle truncated reading {what} at {off}")
    return _U64.unpack_from(data, off)[0]


def parse_bundle(data: bytes | memoryview) -> tuple[list[BundleEntry], int]:
    """Parse an uncompressed bundle's entry table.  Returns ``(entries, bundle_size)`` where the size
    is computed from the table (``max(offset + size)``), not from the container."""
    data = memoryview(data)
    if bytes(data[:24]) != BUNDLE_MAGIC:
        raise LoaderError("not an offload bundle (bad magic)")
    count = _u64(data, 24, "entry count")
    if count == 0 or count > MAX_ENTRIES or count * 24 > len(data):
        raise LoaderError(f"offload bundle has an absurd entry count ({count})")
    entries, pos, end = [], 32, 32
    for i in range(count):
        off = _u64(data, pos, f"entry {i} offset")
        size = _u64(data, pos + 8, f"entry {i} size")
        id_len = _u64(data, pos + 16, f"entry {i} id length")
        pos += 24
        if id_len == 0 or id_len > 1024 or pos + id_len > len(data):
            raise LoaderError(f"offload bundle entry {i}: bad ID length {id_len}")
        try:
            entry_id = bytes(data[pos:pos + id_len]).decode("ascii")
        except UnicodeDecodeError:
            raise LoaderError(f"offload bundle entry {i}: ID is not ASCII") from None
        if not entry_id.isprintable():
            raise LoaderError(f"offload bundle entry {i}: ID is not printable")
        pos += id_len
        if off > len(data) or size > len(data) - off:
            raise LoaderError(f"offload bundle entry {entry_id!r}: [{off}, {off}+{size}) is past the end "
                              f"of the data ({len(data)} bytes)")
        entries.append(BundleEntry(entry_id, off, size))
        end = max(end, off + size)
    ids = [e.entry_id for e in entries]
    if len(set(ids)) != len(ids):
        raise LoaderError("offload bundle has duplicate entry IDs")
    for e in entries:
        if e.size and e.offset < pos:
            raise LoaderError(f"offload bundle entry {e.entry_id!r} overlaps the entry table")
    return entries, max(end, pos)


def decompress_ccob(data: bytes | memoryview) -> tuple[bytes, int]:
    """Inflate a compressed bundle.  Returns ``(uncompressed_bundle, bytes_consumed)``."""
    data = memoryview(data)
    if bytes(data[:4]) != CCOB_MAGIC:
        raise LoaderError("not a compressed offload bundle (bad magic)")
    if len(data) < 8:
        raise LoaderError("compressed bundle header truncated")
    version, method = struct.unpack_from("<HH", data, 4)
    if version == 1:
        hdr = 20
        if len(data) < hdr:
            raise LoaderError("compressed bundle v1 header truncated")
        (raw_size,) = struct.unpack_from("<I", data, 8)
        (digest,) = struct.unpack_from("<Q", data, 12)
        total = len(data)
    elif version == 2:
        hdr = 24
        if len(data) < hdr:
            raise LoaderError("compressed bundle v2 header truncated")
        total, raw_size, digest = struct.unpack_from("<IIQ", data, 8)
    elif version == 3:
        hdr = 32
        if len(data) < hdr:
            raise LoaderError("compressed bundle v3 header truncated")
        total, raw_size, digest = struct.unpack_from("<QQQ", data, 8)
    else:
        raise LoaderError(f"unsupported compressed bundle version {version}")
    if total < hdr or total > len(data):
        raise LoaderError(f"compressed bundle total size {total} does not fit the data ({len(data)} bytes)")
    if raw_size == 0 or raw_size > MAX_UNCOMPRESSED:
        raise LoaderError(f"compressed bundle declares an absurd uncompressed size ({raw_size})")
    payload = bytes(data[hdr:total])
    try:
        if method == 1:
            out = zstandard.ZstdDecompressor().decompress(payload, max_output_size=raw_size)
        elif method == 0:
            d = zlib.decompressobj()
            out = d.decompress(payload, raw_size)
            if d.unconsumed_tail:
                raise LoaderError("compressed bundle inflates past its declared size")
        else:
            raise LoaderError(f"unsupported compression method {method}")
    except LoaderError:
        raise
    except (zstandard.ZstdError, zlib.error) as exc:
        raise LoaderError(f"compressed bundle payload is corrupt: {exc}") from None
    if len(out) != raw_size:
        raise LoaderError(f"compressed bundle inflated to {len(out)} bytes, header says {raw_size}")
    if struct.unpack("<Q", hashlib.md5(out).digest()[:8])[0] != digest:
        raise LoaderError("compressed bundle hash mismatch (corrupt payload)")
    return out, total


def compress_ccob(bundle: bytes, version: int = 2, method: str = "zstd") -> bytes:
    """Write a CCOB container (used by tests and tools; clang writes v2 + zstd)."""
    payload = zstandard.ZstdCompressor().compress(bundle) if method == "zstd" else zlib.compress(bundle)
    m = 1 if method == "zstd" else 0
    digest = hashlib.md5(bundle).digest()[:8]
    if version == 1:
        hdr = CCOB_MAGIC + struct.pack("<HHI", 1, m, len(bundle)) + digest
    elif version == 2:
        hdr = CCOB_MAGIC + struct.pack("<HHII", 2, m, 24 + len(payload), len(bundle)) + digest
    elif version == 3:
        hdr = CCOB_MAGIC + struct.pack("<HHQQ", 3, m, 32 + len(payload), len(bundle)) + digest
    else:
        raise ValueError(version)
    return hdr + payload


def build_bundle(entries: list[tuple[str, bytes]], align: int = 4096) -> bytes:
    """Write an uncompressed bundle (host entry first if given); used by tests and tools."""
    table = BUNDLE_MAGIC + _U64.pack(len(entries))
    header_len = len(table) + sum(24 + len(eid) for eid, _ in entries)
    offsets, pos = [], header_len
    for _, blob in entries:
        if blob:
            pos = (pos + align - 1) // align * align
        offsets.append(pos)
        pos += len(blob)
    out = bytearray(table)
    for (eid, blob), off in zip(entries, offsets):
        out += _U64.pack(off) + _U64.pack(len(blob)) + _U64.pack(len(eid)) + eid.encode()
    for (_, blob), off in zip(entries, offsets):
        if blob:
            out += b"\0" * (off - len(out)) + blob
    return bytes(out)
