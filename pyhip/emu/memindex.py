"""The memory table's index (pyhip/emu/memory.py): sorted arrays that lane checks search with numpy and that
native consumers (the engine's regions, the C ABI's copies) take as they are.

An index is immutable: a table change makes a new one (readers on other threads keep a consistent snapshot).
One allocation added or removed costs a binary search and one copy of each array at C speed, never a Python
loop over the table; :attr:`TableIndex.change` says what changed, so a consumer with a table of its own can
update it in place."""
from __future__ import annotations

import numpy as np

_U64 = np.uint64


def _insert(a: np.ndarray, i: int, v) -> np.ndarray:
    """``a`` with ``v`` inserted at ``i`` along its last axis (np.insert's generality costs more than the copy)."""
    out = np.empty(a.shape[:-1] + (a.shape[-1] + 1,), a.dtype)
    out[..., :i], out[..., i], out[..., i + 1:] = a[..., :i], v, a[..., i:]
    return out


def _delete(a: np.ndarray, i: int) -> np.ndarray:
    out = np.empty(a.shape[:-1] + (a.shape[-1] - 1,), a.dtype)
    out[..., :i], out[..., i:] = a[..., :i], a[..., i + 1:]
    return out


class Mapped:
    """The mapped arrays by position (None for arena allocations): only the mappings are stored (few), so that
    an allocation added or removed does not copy an entry per allocation."""

    __slots__ = ("_starts", "_arrays")

    def __init__(self, starts: np.ndarray, arrays: dict):
        self._starts, self._arrays = starts, arrays     # start -> its array

    def __len__(self) -> int:
        return len(self._starts)

    def __getitem__(self, i: int):
        return self._arrays.get(int(self._starts[i])) if self._arrays else None

    def __iter__(self):
        return (self[i] for i in range(len(self)))

    def changed(self, starts: np.ndarray, start: int, array=None) -> "Mapped":
        """Over ``starts`` (the new index's), with ``start`` mapped to ``array`` (None: not a mapping)."""
        arrays = self._arrays
        if array is not None or start in arrays:
            arrays = {k: v for k, v in arrays.items() if k != start}
            if array is not None:
                arrays[start] = array
        return Mapped(starts, arrays)


class TableIndex(tuple):
    """``(starts, ends, ext, exts)`` — sorted start addresses, where each region ends (the address space an
    arena allocation owns, or its exact end under memcheck; a mapping's exact end), whether it is a host
    mapping, the mapped arrays (:class:`Mapped`: None for arena allocations) — plus:

    - ``table_ends``: each allocation's exact end (what a copy may reach);
    - ``hosts``: the host address of each start (the mapped array's, or its place in the arena);
    - ``change``: ``("add", i)`` / ``("remove", i, start)`` relative to the previous index, or None (rebuilt).

    The four address arrays are the rows of one (4, n) array: one copy per change for all of them."""

    def __new__(cls, rows: np.ndarray, ext: np.ndarray, exts, change=None):
        starts, ends, table_ends, hosts = rows
        if not isinstance(exts, Mapped):
            exts = Mapped(starts, {int(s): x for s, x in zip(starts.tolist(), exts) if x is not None})
        self = super().__new__(cls, (starts, ends, ext, exts))
        self.rows, self.table_ends, self.hosts, self.change = rows, table_ends, hosts, change
        return self

    @classmethod
    def build(cls, starts, ends, table_ends, hosts, arrays) -> "TableIndex":
        """From per-allocation lists (``arrays``: the mapped array or None each)."""
        rows = np.array([starts, ends, table_ends, hosts], dtype=_U64).reshape(4, len(starts))
        return cls(rows, np.array([x is not None for x in arrays], dtype=bool), arrays)

    @classmethod
    def empty(cls) -> "TableIndex":
        return cls.build([], [], [], [], [])

    def added(self, i: int, start: int, region_end: int, table_end: int, array, host: int) -> "TableIndex":
        """``start`` inserted at position ``i`` (the caller's binary search)."""
        rows = _insert(self.rows, i, np.array([start, region_end, table_end, host], dtype=_U64))
        return TableIndex(rows, _insert(self[2], i, array is not None), self[3].changed(rows[0], start, array),
                          ("add", i))

    def removed(self, i: int) -> "TableIndex":
        """The allocation at position ``i`` removed."""
        start = int(self[0][i])
        rows = _delete(self.rows, i)
        return TableIndex(rows, _delete(self[2], i), self[3].changed(rows[0], start), ("remove", i, start))
