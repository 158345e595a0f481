"""pyhip's sanitizer: checks only an emulator can make, on every lane's every access (docs/check.md).

Three ways in: ``pyhip exec --check CHECKS PROGRAM`` (a hipcc program), ``PYHIP_CHECK=CHECKS`` (any process
that imports pyhip) and ``with pyhip.check(CHECKS) as session:`` (Python).  CHECKS is a comma list of
:data:`CHECKS` or ``all``.  Each finding is a report (a dict: checker, kind, kernel, workgroup, wave, lane,
pc, instruction, address, allocation, source file:line when the code object has DWARF line tables),
de-duplicated per kernel and PC, printed to stderr when first seen and written to the JSON-lines log.
"""
from __future__ import annotations

import atexit
import contextlib
import json
import os
import sys
import threading

from ..errors import HipError, LoaderError, hipError_t
from . import memcheck
from .origin import where

CHECKS = ("memcheck",)                  # the checks that exist (docs/check.md)
PLANNED = ("initcheck", "synccheck", "racecheck")


def parse(spec: str) -> tuple[str, ...]:
    """``"all"`` or a comma list of check names -> the checks, in :data:`CHECKS` order."""
    names = {s.strip() for s in spec.split(",") if s.strip()}
    if not names:
        raise HipError(hipError_t.hipErrorInvalidValue, "no check named (use a comma list or 'all')")
    if "all" in names:
        return CHECKS
    unknown = names - set(CHECKS)
    if unknown:
        later = sorted(unknown & set(PLANNED))
        raise HipError(hipError_t.hipErrorInvalidValue,
                       f"unknown check {', '.join(sorted(unknown))} (available: {', '.join(CHECKS)}, all)"
                       + (f"; {', '.join(later)} not implemented yet" if later else ""))
    return tuple(c for c in CHECKS if c in names)


def _hex(v):
    return f"0x{v:x}" if isinstance(v, int) else v


def format_report(r: dict, repeats: int = 1) -> str:
    """A report as the lines printed to stderr."""
    head = f"pyhip check: {r['checker']}: {r['kind']}: {r['message']}"
    lines = [head]
    where_ = ", ".join(f"{k} {r[k] if k != 'pc' else _hex(r[k])}" for k in ("kernel", "workgroup", "wave", "lane", "pc")
                       if r.get(k) is not None)
    if where_:
        lines.append(f"    at {where_}")
    if r.get("source"):
        lines.append(f"    source {r['source']}")
    if r.get("instruction"):
        lines.append(f"    instruction {r['instruction']}")
    if r.get("address") is not None:
        lines.append(f"    address {_hex(r['address'])}" + (f" ({r['access']})" if r.get("access") else ""))
    a = r.get("allocation")
    if a:
        lines.append(f"    allocation [0x{a['start']:x}, +{a['size']}) ({a['kind']})")
        for k in ("allocated", "freed"):
            if a.get(k):
                lines.append(f"      {k} by {a[k]}")
    if repeats > 1:
        lines.append(f"    (seen {repeats} times)")
    return "\n".join(lines)


class Session:
    """The checks that are on, and what they found.  ``reports``: the distinct reports (first occurrence);
    ``count(report)``: how many times each was seen."""

    def __init__(self, checks: tuple[str, ...], log: str | None = None, echo: bool = True):
        self.checks = checks
        self.reports: list[dict] = []
        self._seen: dict[tuple, int] = {}
        self._lock = threading.Lock()
        self._log = open(log, "a", encoding="utf-8") if log else None      # noqa: SIM115 (the session's)
        self.echo = echo

    @staticmethod
    def key(r: dict) -> tuple:
        return r["checker"], r["kind"], r.get("kernel"), r.get("pc")

    def count(self, r: dict) -> int:
        return self._seen.get(self.key(r), 0)

    def add(self, r: dict) -> None:
        k = self.key(r)
        with self._lock:
            n = self._seen.get(k, 0)
            self._seen[k] = n + 1
            if n:
                return
            self.reports.append(r)
            if self._log is not None:
                self._log.write(json.dumps(r, default=str) + "\n")
                self._log.flush()
        if self.echo:
            print(format_report(r), file=sys.stderr, flush=True)

    def summary(self) -> str:
        return summarize(self.reports, [self.count(r) for r in self.reports])

    def close(self) -> None:
        if self._log is not None:
            self._log.close()
            self._log = None


def summarize(reports: list[dict], counts: list[int] | None = None) -> str:
    if not reports:
        return "pyhip check: no errors found"
    by = {}
    for r in reports:
        by[(r["checker"], r["kind"])] = by.get((r["checker"], r["kind"]), 0) + 1
    kinds = ", ".join(f"{n} {c} {k}" for (c, k), n in sorted(by.items()))
    total = sum(counts) if counts else len(reports)
    return f"pyhip check: {len(reports)} distinct error(s) found ({kinds}); {total} occurrence(s)"


_SESSION: Session | None = None


def active() -> Session | None:
    return _SESSION


def _on_fault(gpu, fault) -> None:
    s = _SESSION
    if s is None or gpu is None or "memcheck" not in s.checks:
        return
    got = memcheck.classify(gpu.memory, fault)
    if got is None:
        return
    kind, message, allocation = got
    r = {"checker": "memcheck", "kind": kind, "message": message}
    for k in ("kernel", "workgroup", "wave", "lane", "pc", "instruction", "address", "access"):
        v = fault.details.get(k)
        if v is not None:
            r[k] = list(v) if isinstance(v, tuple) else v
    if allocation is not None:
        r["allocation"] = allocation
    src = _source(gpu, fault)
    if src is not None:
        r["source"] = src
    s.add(r)


def _source(gpu, fault) -> str | None:
    """file:line of the faulting instruction, from the code object of the kernel that faulted."""
    from .source import line_for
    kernel, pc = fault.details.get("kernel"), fault.details.get("pc")
    if kernel is None or pc is None:
        return None
    for p in list(gpu.programs):
        co = getattr(p, "code_object", None)
        if co is None:
            continue
        try:
            if any(k.demangled == kernel for k in co.kernels.values()):
                return line_for(co, pc)
        except LoaderError:            # a code object whose kernels cannot be listed: no source position
            continue
    return None


def enable(checks="all", log: str | None = None, echo: bool = True) -> Session:
    """Turn the checks on for every device (now and later) and start a new session."""
    global _SESSION
    from ..emu import device, memory
    if isinstance(checks, str):
        checks = parse(checks)
    disable()
    s = _SESSION = Session(tuple(checks), log, echo)
    if _on_fault not in device.FAULT_LISTENERS:
        device.FAULT_LISTENERS.append(_on_fault)
    memory.set_memcheck("memcheck" in s.checks, where)
    return s


def disable() -> Session | None:
    """Turn the checks off; returns the session that ended."""
    global _SESSION
    from ..emu import device, memory
    s, _SESSION = _SESSION, None
    if _on_fault in device.FAULT_LISTENERS:
        device.FAULT_LISTENERS.remove(_on_fault)
    memory.set_memcheck(False)
    if s is not None:
        s.close()
    return s


@contextlib.contextmanager
def check(checks="all", log: str | None = None, echo: bool = True):
    """``with pyhip.check("memcheck") as session:`` — the checks on inside the block; ``session.reports``
    holds what they found (the kernels' launches still fail with the fault's HIP error, as on a GPU)."""
    s = enable(checks, log, echo)
    try:
        yield s
    finally:
        if _SESSION is s:
            disable()


def from_environment() -> None:
    """``PYHIP_CHECK=CHECKS`` (and ``PYHIP_CHECK_LOG=FILE``): the checks on for the whole process, with a
    summary at exit and exit status 1 when anything was found (``PYHIP_CHECK_SUMMARY=0``: neither; pyhip exec
    sets it and reads the log instead)."""
    spec = os.environ.get("PYHIP_CHECK", "").strip()
    if not spec:
        return
    s = enable(spec, os.environ.get("PYHIP_CHECK_LOG") or None)
    if os.environ.get("PYHIP_CHECK_SUMMARY", "1") != "0":
        atexit.register(_exit_summary, s)


def _exit_summary(s: Session) -> None:
    print(s.summary(), file=sys.stderr, flush=True)
    if s.reports:
        sys.stdout.flush()
        os._exit(1)       # the status says so (atexit handlers cannot change it otherwise; pyhip's run before)
