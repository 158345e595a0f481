"""Kernel name lookup: exact mangled, extern "C", full demangled signature, or an unambiguous short
form (``scale<float>``, ``reduce``).  Demangling uses ``cxxfilt`` (libstdc++'s ``__cxa_demangle``)."""
from __future__ import annotations

import functools
import re

import cxxfilt

from ..errors import LoaderError, hipError_t


@functools.lru_cache(maxsize=4096)
def demangle(name: str) -> str:
    if not name.startswith("_Z"):
        return name
    try:
        out = cxxfilt.demangle(name, external_only=False)
    except Exception:  # invalid mangling: keep the raw name
        return name
    while "> >" in out:                 # nested template arguments close as ">>" (LLVM's demangler), not "> >"
        out = out.replace("> >", ">>")
    return out


def _norm(s: str) -> str:
    return re.sub(r"\s+", "", s)


def _split(sig: str) -> tuple[str, str]:
    """``void scale<float>(float*, float, int)`` -> (``scale<float>``, ``(float*, float, int)``):
    the return type is dropped; the parameter list is the last balanced ``(...)`` group."""
    depth, end = 0, len(sig)
    for i in range(len(sig) - 1, -1, -1):
        c = sig[i]
        if c == ")":
            depth += 1
        elif c == "(":
            depth -= 1
            if depth == 0:
                end = i
                break
    head, params = sig[:end], sig[end:]
    depth = 0
    for i in range(len(head) - 1, -1, -1):  # templates carry a leading return type
        c = head[i]
        if c in ">)":
            depth += 1
        elif c in "<(":
            depth -= 1
        elif c == " " and depth == 0:
            return head[i + 1:], params
    return head, params


def _strip_params(sig: str) -> str:
    return _split(sig)[0]


def _base(short: str) -> str:
    """``ns::scale<float>`` -> ``scale``."""
    depth, out = 0, []
    for c in short:
        if c == "<":
            depth += 1
        elif c == ">":
            depth -= 1
        elif depth == 0:
            out.append(c)
    return "".join(out).split("::")[-1]


def full_signature(mangled: str) -> str:
    """The demangled signature without return type: ``scale<float>(float*, float, int)``."""
    d = demangle(mangled)
    if d == mangled:
        return d
    short, params = _split(d)
    return short + params


class NameIndex:
    """Resolve user-supplied kernel names against a set of mangled names."""

    def __init__(self, names):
        self.names = list(names)
        self._exact = {n: n for n in self.names}
        self._sig: dict[str, list[str]] = {}
        self._short: dict[str, list[str]] = {}
        for n in self.names:
            sig = full_signature(n)
            for key in {_norm(sig), _norm(demangle(n))}:
                self._sig.setdefault(key, []).append(n)
            short = _strip_params(demangle(n)) if n.startswith("_Z") else n
            for key in {_norm(short), _norm(short.split("::")[-1]), _base(short)}:
                lst = self._short.setdefault(key, [])
                if n not in lst:
                    lst.append(n)

    def lookup(self, name) -> str:
        if isinstance(name, (bytes, bytearray)):
            name = bytes(name).decode("utf-8", "replace")
        if not isinstance(name, str) or not name:
            raise LoaderError(f"invalid kernel name {name!r}", hipError_t.hipErrorInvalidValue)
        if name in self._exact:
            return name
        key = _norm(name)
        for table in (self._sig, self._short):
            hits = table.get(key)
            if hits:
                if len(set(hits)) == 1:
                    return hits[0]
                cands = "; ".join(f"{full_signature(h)} [{h}]" for h in sorted(set(hits)))
                raise LoaderError(f"kernel name {name!r} is ambiguous: candidates are {cands}",
                                  hipError_t.hipErrorInvalidValue)
        shown = ", ".join(full_signature(n) for n in self.names[:8]) or "none"
        more = f" and {len(self.names) - 8} more" if len(self.names) > 8 else ""
        raise LoaderError(f"no kernel named {name!r} (kernels: {shown}{more})", hipError_t.hipErrorNotFound)
