"""Bytes → bundles → code objects.

``load(path_or_bytes)`` accepts a code object, an offload bundle (plain or CCOB-compressed), or a host
ELF whose ``.hip_fatbin`` holds bundles, and returns a :class:`Binary`.  Bundle tables are read up
front; each code object's ELF is parsed only when first used.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field

from ..errors import LoaderError, hipError_t
from .bundle import BUNDLE_MAGIC, CCOB_MAGIC, BundleEntry, decompress_ccob, parse_bundle
from .codeobject import CodeObject, GlobalVar, Kernel, Relocation
from .descriptor import KernelDescriptor
from .hostelf import fatbin_offsets
from .names import NameIndex, demangle, full_signature
from .targetid import DeviceISA, TargetID, is_compatible, select

MAX_INPUT = 1 << 31

__all__ = ["load", "Binary", "CodeObjectRef", "CodeObject", "Kernel", "KernelDescriptor", "GlobalVar",
           "Relocation", "TargetID", "DeviceISA", "is_compatible", "select", "NameIndex", "demangle",
           "full_signature", "LoaderError"]


class CodeObjectRef:
    """A code object inside a container; its ELF is parsed on first access of :attr:`code_object`."""

    def __init__(self, data: bytes, origin: str, entry_id: str | None = None):
        self._data = data
        self.origin = origin
        self.entry_id = entry_id
        self._co: CodeObject | None = None
        self._target: TargetID | None = None

    @property
    def size(self) -> int:
        return len(self._data)

    @property
    def target(self) -> TargetID:
        """From the bundle entry ID when there is one (no ELF parsing), else from the ELF header."""
        if self._target is None:
            if self.entry_id is not None:
                self._target = TargetID.parse(self.entry_id)
                if self._co is None and self._target.is_generic:
                    self._target = self.code_object.target  # generic version lives in e_flags
            else:
                self._target = self.code_object.target
        return self._target

    @property
    def parsed(self) -> bool:
        return self._co is not None

    @property
    def code_object(self) -> CodeObject:
        if self._co is None:
            self._co = CodeObject(self._data, self.origin)
        return self._co

    def __repr__(self) -> str:
        return f"<CodeObjectRef {self.entry_id or self.origin} ({len(self._data)} bytes)>"


@dataclass
class Binary:
    kind: str                                   # 'code_object' | 'bundle' | 'ccob' | 'host_elf'
    origin: str
    code_objects: list[CodeObjectRef] = field(default_factory=list)
    bundles: list[list[BundleEntry]] = field(default_factory=list)

    def select(self, device) -> CodeObject:
        """The best compatible code object for ``device`` (a DeviceISA or target string)."""
        if isinstance(device, str):
            device = DeviceISA.parse(device)
        valid = []
        for ref in self.code_objects:
            try:
                ref.target
            except LoaderError:
                continue  # an entry for a processor we do not know can never match
            valid.append(ref)
        return select(valid, device, key=lambda r: r.target).code_object

    def find_kernel(self, name, device=None) -> Kernel:
        if device is not None:
            return self.select(device).find_kernel(name)
        if len(self.code_objects) != 1:
            raise LoaderError("several code objects: pass a device to choose one", hipError_t.hipErrorInvalidValue)
        return self.code_objects[0].code_object.find_kernel(name)


def _add_bundle(binary: Binary, data: bytes, origin: str) -> int:
    """Add the bundle (plain or compressed) starting at ``data[0]``; returns the bytes it spans."""
    if data[:4] == CCOB_MAGIC:
        raw, consumed = decompress_ccob(data)
        _add_bundle(binary, raw, origin + " (decompressed)")
        return consumed
    entries, size = parse_bundle(data)
    binary.bundles.append(entries)
    for e in entries:
        if e.is_host or e.size == 0:
            continue
        view = memoryview(data)[e.offset:e.offset + e.size]      # zero-copy until first parse
        binary.code_objects.append(CodeObjectRef(view, f"{origin}:{e.entry_id}", e.entry_id))
    return size


def load(source, *, origin: str | None = None) -> Binary:
    """Load a code object, bundle, compressed bundle or host ELF from a path or bytes-like object."""
    if isinstance(source, (str, os.PathLike)):
        origin = origin or os.fspath(source)
        try:
            size = os.path.getsize(source)
            if size > MAX_INPUT:
                raise LoaderError(f"{origin}: file too large ({size} bytes)")
            with open(source, "rb") as fh:
                data = fh.read()
        except OSError as exc:
            raise LoaderError(f"cannot read {origin}: {exc.strerror}", hipError_t.hipErrorFileNotFound) from None
    elif isinstance(source, bytes):
        data = source
        origin = origin or "<bytes>"
    elif isinstance(source, (bytearray, memoryview)):
        data = bytes(source)
        origin = origin or "<bytes>"
    else:
        raise LoaderError(f"cannot load a {type(source).__name__}", hipError_t.hipErrorInvalidValue)
    if not data:                                 # an empty file: HIP 5.2's hipErrorInvalidKernelFile
        raise LoaderError(f"{origin}: empty input", hipError_t.hipErrorInvalidKernelFile)
    try:
        if data[:4] == b"\x7fELF":
            if len(data) >= 20 and int.from_bytes(data[18:20], "little") == 224:
                b = Binary("code_object", origin)
                ref = CodeObjectRef(data, origin)
                ref._co = CodeObject(data, origin)  # a bare code object: validate its header now
                b.code_objects.append(ref)
                return b
            b = Binary("host_elf", origin)
            # a view, not a copy: a library's .hip_fatbin can hold a hundred bundles in 1.3 GB, and
            # each slice runs to the section's end (librocsparse: 111 copies of up to 1.3 GB each)
            whole = memoryview(data)
            for off, limit in fatbin_offsets(data):
                _add_bundle(b, whole[off:limit], f"{origin}@0x{off:x}")
            return b
        if data[:24] == BUNDLE_MAGIC:
            b = Binary("bundle", origin)
            _add_bundle(b, data, origin)
            return b
        if data[:4] == CCOB_MAGIC:
            b = Binary("ccob", origin)
            _add_bundle(b, data, origin)
            return b
    except LoaderError:
        raise
    except (MemoryError, RecursionError) as exc:
        raise LoaderError(f"{origin}: input too large or too deep ({type(exc).__name__})") from None
    raise LoaderError(f"{origin}: not a code object, offload bundle or host ELF (unknown magic)")
