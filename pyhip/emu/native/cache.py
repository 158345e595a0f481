"""Lowered programs kept across processes.

Decoding a code object's ``.text`` and lowering it to NInst records costs ~30 µs per instruction in Python
(tens of milliseconds for a hipcc device-library kernel, more for large Triton kernels), paid by every new
process on its first launch.  The result depends only on the code bytes, the target and the kernel context
(accum_offset, gfx94x), and on pyhip's own decoder/lowering code and the engine's handler table; this module
keeps it on disk under a key made of all of those, so a later process loads the arrays instead of decoding
and lowering (the program's instructions are then decoded only if something asks for them, e.g. a fault
report or a fallback to the numpy engine).

Where: ``$PYHIP_CACHE_DIR``, else ``$XDG_CACHE_HOME/pyhip``, else ``~/.cache/pyhip`` (subdirectory
``native``).  ``PYHIP_CACHE_DIR=`` (empty) turns it off.  An entry (``.lowered``) is one JSON header line
(the metadata, and each array's dtype, shape and byte offset) followed by the arrays' bytes: one read and
no pickle, a tenth of what ``np.load`` of a zip archive costs on a first launch; one that cannot be read
is ignored and rewritten; a directory that cannot be written is skipped silently.
The directory holds at most MAX_ENTRIES entries: a store beyond that removes the least recently used ones
(a hit refreshes its entry's time).
Addresses inside the records (a jump to a non-instruction) are stored relative to the program's base, so
an entry serves a program loaded anywhere.
Keys are BLAKE2 digests (CPython's own code, as the compiled-code cache's): they are computed on queue
threads, which go on while a C program under ``pyhip exec`` runs its exit handlers, OpenSSL's among them.
"""
from __future__ import annotations

import collections
import functools
import hashlib
import json
import os
import tempfile
from pathlib import Path

import numpy as np

from ...errors import LoaderError
from ..program import LoadedProgram
from .layout import dtype, op_ids

EMU = Path(__file__).resolve().parents[1]           # pyhip/emu: decoder tables, semantics, lowering
FORMAT = 4                                          # 2: described ALU records, no ModInfo table; 3: wave32 lane permutes; 4: raw entries
SUFFIX = ".lowered"
MAX_ENTRIES = 512
stats = collections.Counter()                       # "hit", "miss", "store", "bad"


def directory() -> Path | None:
    env = os.environ.get("PYHIP_CACHE_DIR")
    if env is not None:
        return Path(env) / "native" if env else None
    xdg = os.environ.get("XDG_CACHE_HOME")
    return Path(xdg or Path.home() / ".cache") / "pyhip" / "native"


@functools.lru_cache(maxsize=1)
def source_stamp() -> bytes:
    """What the lowering depends on besides its input: pyhip/emu's Python sources (path, size, mtime), the
    engine's handler numbering and the record layouts."""
    h = hashlib.blake2b(f"format {FORMAT}".encode(), digest_size=32)
    for rel, st in sorted(_sources(str(EMU), "")):
        h.update(f"{rel} {st.st_size} {st.st_mtime_ns}\n".encode())
    h.update(repr(sorted(op_ids().items())).encode())
    h.update(repr(dtype("NInst").descr).encode())
    return h.digest()


def _sources(top: str, rel: str):
    """(relative path, stat) of every .py file under ``top`` (os.scandir: a third of what Path.rglob costs)."""
    with os.scandir(top) as it:
        for e in it:
            if e.is_dir(follow_symlinks=False):
                if e.name != "__pycache__":
                    yield from _sources(e.path, f"{rel}{e.name}/")
            elif e.name.endswith(".py"):
                yield f"{rel}{e.name}", e.stat()


def key(program, K) -> str | None:
    """The cache key of a program loaded from a code object (None for code found in memory)."""
    if not isinstance(program, LoadedProgram) or directory() is None:
        return None                 # code found in memory (MemoryProgram) may grow as entries are seen
    try:
        vaddr, text = program.code_object.section_bytes(".text")
    except LoaderError:             # no .text: nothing to cache
        return None
    h = hashlib.blake2b(source_stamp(), digest_size=32)
    gpu_proc = getattr(getattr(K, "gpu", None), "processor", None)
    h.update(repr((vaddr, len(text), K.processor, gpu_proc, K.accum_offset, bool(K.is_gfx94x))).encode())
    h.update(text)
    return h.hexdigest()


def load(k: str) -> dict | None:
    path = directory() / f"{k}{SUFFIX}"
    try:
        data = path.read_bytes()
        end = data.index(b"\n")
        head = json.loads(data[:end])
        body = memoryview(data)[end + 1:]
        out = {}
        for name, (descr, shape, offset, nbytes) in head["arrays"].items():
            if offset + nbytes > len(body):
                raise ValueError(f"{path}: truncated")
            out[name] = np.frombuffer(body[offset:offset + nbytes], dtype=np.dtype(descr)).reshape(shape)
        out["meta"] = head["meta"]
    except FileNotFoundError:
        stats["miss"] += 1
        return None
    except Exception:               # noqa: BLE001 - a damaged entry is recomputed and rewritten
        stats["bad"] += 1
        return None
    stats["hit"] += 1
    try:
        os.utime(path)                              # recently used: kept when the directory is trimmed
    except OSError:
        pass
    return out


def encode(arrays: dict, meta: dict) -> bytes:
    """An entry's bytes: the JSON header line, then each array's bytes (C order) at the offset it names."""
    index, chunks, offset = {}, [], 0
    for name, a in arrays.items():
        a = np.ascontiguousarray(a)
        if a.dtype.hasobject:
            raise TypeError(f"{name}: object arrays are not stored")
        index[name] = (a.dtype.str, list(a.shape), offset, a.nbytes)
        chunks.append(a.tobytes())
        offset += a.nbytes
    return json.dumps({"meta": meta, "arrays": index}).encode() + b"\n" + b"".join(chunks)


def store(k: str, arrays: dict, meta: dict) -> None:
    d = directory()
    try:
        d.mkdir(parents=True, exist_ok=True)
        data = encode(arrays, meta)
        fd, tmp = tempfile.mkstemp(dir=d, suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.replace(tmp, d / f"{k}{SUFFIX}")    # atomic: concurrent processes never see half an entry
        except BaseException:
            os.unlink(tmp)
            raise
    except OSError:
        return
    stats["store"] += 1
    trim(d)


def trim(d: Path, limit: int | None = None) -> None:
    """Remove the least recently used entries beyond ``limit`` (MAX_ENTRIES), down to three quarters of it."""
    trim_suffix(d, SUFFIX, MAX_ENTRIES if limit is None else limit)


def trim_suffix(d: Path, suffix: str, limit: int) -> None:
    try:
        entries = [e for e in os.scandir(d) if e.name.endswith(suffix)]
        if len(entries) <= limit:
            return
        entries.sort(key=lambda e: e.stat().st_mtime_ns)
        for e in entries[:len(entries) - limit * 3 // 4]:
            os.unlink(e.path)
    except OSError:
        pass
