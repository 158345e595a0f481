"""The ``NT_AMDGPU_METADATA`` MessagePack note (code object V3+): kernels and their arguments.

Keys: docs/code-object.md §4.  Every value is type-checked; anything malformed raises
:class:`LoaderError` (hipErrorInvalidImage).
"""
from __future__ import annotations

import struct
from dataclasses import dataclass, field

import msgpack

from ..errors import LoaderError

NT_AMDGPU_METADATA = 32
MAX_KERNELS = 1 << 16
MAX_ARGS = 1 << 12


@dataclass(frozen=True)
class ArgMeta:
    offset: int
    size: int
    value_kind: str
    name: str | None = None
    type_name: str | None = None
    address_space: str | None = None
    pointee_align: int | None = None
    access: str | None = None
    actual_access: str | None = None
    is_const: bool = False
    is_restrict: bool = False
    is_volatile: bool = False

    @property
    def is_hidden(self) -> bool:
        return self.value_kind.startswith("hidden_")

    @property
    def is_pointer(self) -> bool:
        return self.value_kind in ("global_buffer", "image", "sampler", "pipe", "queue")

    def as_dict(self) -> dict:
        d = {"offset": self.offset, "size": self.size, "value_kind": self.value_kind}
        for k in ("name", "type_name", "address_space"):
            if getattr(self, k) is not None:
                d[k] = getattr(self, k)
        return d


@dataclass(frozen=True)
class KernelMeta:
    name: str
    symbol: str
    args: tuple[ArgMeta, ...]
    kernarg_segment_size: int
    kernarg_segment_align: int
    group_segment_fixed_size: int
    private_segment_fixed_size: int
    wavefront_size: int
    sgpr_count: int
    vgpr_count: int
    max_flat_workgroup_size: int
    agpr_count: int | None = None
    sgpr_spill_count: int = 0
    vgpr_spill_count: int = 0
    uses_dynamic_stack: bool = False
    language: str | None = None
    kind: str = "normal"
    reqd_workgroup_size: tuple | None = None
    uniform_work_group_size: bool = False
    raw: dict = field(default_factory=dict, compare=False, repr=False)

    @property
    def explicit_args(self) -> tuple[ArgMeta, ...]:
        return tuple(a for a in self.args if not a.is_hidden)

    @property
    def hidden_args(self) -> tuple[ArgMeta, ...]:
        return tuple(a for a in self.args if a.is_hidden)


class CodeObjectMeta:
    """The parsed note.  Kernel maps are type-checked when first asked for (``kernel(i)``), so a code
    object with thousands of kernels can be indexed by name without validating all of them."""

    def __init__(self, version, target, raw_kernels, printf=()):
        self.version, self.target, self.printf = version, target, tuple(printf)
        self._raw = raw_kernels
        self._done: dict[int, KernelMeta] = {}
        names = {}
        for i, k in enumerate(raw_kernels):
            if not isinstance(k, dict) or not isinstance(k.get(".name"), str):
                raise LoaderError(f"metadata: kernel {i} has no name")
            if k[".name"] in names:
                raise LoaderError(f"kernel {k['.name']!r} listed twice in the metadata")
            names[k[".name"]] = i
        self.names = names

    def kernel(self, i: int) -> KernelMeta:
        km = self._done.get(i)
        if km is None:
            km = self._done[i] = _kernel(self._raw[i], i)
        return km

    @property
    def kernels(self) -> tuple[KernelMeta, ...]:
        return tuple(self.kernel(i) for i in range(len(self._raw)))


def _get(d: dict, key: str, typ, where: str, required: bool = True, default=None):
    if key not in d:
        if required:
            raise LoaderError(f"metadata: {where} lacks {key}")
        return default
    v = d[key]
    if typ is int:
        if isinstance(v, bool) or not isinstance(v, int) or not (-(1 << 63) <= v < (1 << 64)):
            raise LoaderError(f"metadata: {where} {key} is not an integer ({v!r:.40})")
    elif typ is bool:
        if isinstance(v, int) and not isinstance(v, bool) and v in (0, 1):
            v = bool(v)
        if not isinstance(v, bool):
            raise LoaderError(f"metadata: {where} {key} is not a boolean")
    elif not isinstance(v, typ):
        raise LoaderError(f"metadata: {where} {key} has type {type(v).__name__}, expected {typ.__name__}")
    return v


def _nonneg(v: int, key: str, where: str, limit: int = 1 << 32) -> int:
    if v < 0 or v > limit:
        raise LoaderError(f"metadata: {where} {key} out of range ({v})")
    return v


def _arg(d, where: str) -> ArgMeta:
    if not isinstance(d, dict):
        raise LoaderError(f"metadata: {where} is not a map")
    offset = _nonneg(_get(d, ".offset", int, where), ".offset", where)
    size = _nonneg(_get(d, ".size", int, where), ".size", where)
    kind = _get(d, ".value_kind", str, where)
    opt = {}
    for key, attr in ((".name", "name"), (".type_name", "type_name"), (".address_space", "address_space"),
                      (".access", "access"), (".actual_access", "actual_access")):
        opt[attr] = _get(d, key, str, where, required=False)
    pa = _get(d, ".pointee_align", int, where, required=False)
    for key, attr in ((".is_const", "is_const"), (".is_restrict", "is_restrict"), (".is_volatile", "is_volatile")):
        opt[attr] = _get(d, key, bool, where, required=False, default=False)
    return ArgMeta(offset, size, kind, pointee_align=pa, **opt)


def _kernel(d, i: int) -> KernelMeta:
    if not isinstance(d, dict):
        raise LoaderError(f"metadata: kernel {i} is not a map")
    name = _get(d, ".name", str, f"kernel {i}")
    where = f"kernel {name!r}"
    symbol = _get(d, ".symbol", str, where)
    args_raw = _get(d, ".args", list, where, required=False, default=[])
    if len(args_raw) > MAX_ARGS:
        raise LoaderError(f"metadata: {where} has an absurd number of arguments")
    args = tuple(_arg(a, f"{where} arg {j}") for j, a in enumerate(args_raw))
    ints = {}
    for key in ("kernarg_segment_size", "kernarg_segment_align", "group_segment_fixed_size",
                "private_segment_fixed_size", "wavefront_size", "sgpr_count", "vgpr_count",
                "max_flat_workgroup_size"):
        ints[key] = _nonneg(_get(d, "." + key, int, where), key, where)
    if ints["wavefront_size"] not in (32, 64):
        raise LoaderError(f"metadata: {where} wavefront size {ints['wavefront_size']}")
    if ints["kernarg_segment_align"] & (ints["kernarg_segment_align"] - 1):
        raise LoaderError(f"metadata: {where} kernarg alignment is not a power of two")
    for a in args:
        if a.offset + a.size > ints["kernarg_segment_size"]:
            raise LoaderError(f"metadata: {where} argument at {a.offset}+{a.size} past the kernarg size "
                              f"{ints['kernarg_segment_size']}")
    agpr = _get(d, ".agpr_count", int, where, required=False)
    reqd = _get(d, ".reqd_workgroup_size", list, where, required=False)
    if reqd is not None and (len(reqd) != 3 or not all(isinstance(x, int) for x in reqd)):
        raise LoaderError(f"metadata: {where} reqd_workgroup_size malformed")
    return KernelMeta(
        name=name, symbol=symbol, args=args, agpr_count=agpr,
        sgpr_spill_count=_get(d, ".sgpr_spill_count", int, where, required=False, default=0),
        vgpr_spill_count=_get(d, ".vgpr_spill_count", int, where, required=False, default=0),
        uses_dynamic_stack=_get(d, ".uses_dynamic_stack", bool, where, required=False, default=False),
        language=_get(d, ".language", str, where, required=False),
        kind=_get(d, ".kind", str, where, required=False, default="normal"),
        reqd_workgroup_size=tuple(reqd) if reqd else None,
        uniform_work_group_size=bool(_get(d, ".uniform_work_group_size", int, where, required=False, default=0)),
        raw=d, **ints)


def amdgpu_metadata_notes(data, start: int, end: int) -> list[bytes]:
    """The descriptors of the AMDGPU metadata notes among the ELF notes in ``data[start:end]`` (a note
    section or segment); a note running past ``end`` raises :class:`LoaderError`."""
    blobs, pos, size = [], start, end - start
    while pos + 12 <= end:
        namesz, descsz, ntype = struct.unpack_from("<III", data, pos)
        name_end = pos + 12 + namesz
        desc = pos + 12 + (namesz + 3) // 4 * 4
        nxt = desc + (descsz + 3) // 4 * 4
        if namesz > size or descsz > size or nxt > end:
            raise LoaderError("corrupt ELF note")
        if bytes(data[pos + 12:name_end]).rstrip(b"\0") == b"AMDGPU" and ntype == NT_AMDGPU_METADATA:
            blobs.append(bytes(data[desc:desc + descsz]))
        pos = nxt
    return blobs


def parse_metadata(blob: bytes) -> CodeObjectMeta:
    try:
        doc = msgpack.unpackb(blob, raw=False, strict_map_key=False)
    except Exception as exc:  # msgpack raises several unrelated types for corrupt input
        raise LoaderError(f"metadata note is not valid MessagePack: {type(exc).__name__}") from None
    if not isinstance(doc, dict):
        raise LoaderError("metadata note is not a map")
    ver = _get(doc, "amdhsa.version", list, "metadata")
    if len(ver) != 2 or not all(isinstance(v, int) and not isinstance(v, bool) for v in ver):
        raise LoaderError("metadata: amdhsa.version malformed")
    target = _get(doc, "amdhsa.target", str, "metadata", required=False)
    kernels_raw = _get(doc, "amdhsa.kernels", list, "metadata")
    if len(kernels_raw) > MAX_KERNELS:
        raise LoaderError("metadata: absurd number of kernels")
    printf = _get(doc, "amdhsa.printf", list, "metadata", required=False, default=[])
    if not all(isinstance(p, str) for p in printf):
        raise LoaderError("metadata: amdhsa.printf malformed")
    return CodeObjectMeta((ver[0], ver[1]), target, kernels_raw, tuple(printf))
