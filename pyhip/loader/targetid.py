"""AMDGPU target IDs (``gfx90a:sramecc+:xnack-``), processor tables, compatibility and selection.

Facts: docs/code-object.md §3 (EF_AMDGPU_MACH values, feature fields, generic families,
the rules ROCr/HIP apply when matching a code object to a device).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..errors import LoaderError, hipError_t

# processor -> (EF_AMDGPU_MACH, supports xnack, supports sramecc)
PROCESSORS: dict[str, tuple[int, bool, bool]] = {
    "gfx600": (0x020, False, False), "gfx601": (0x021, False, False), "gfx602": (0x03a, False, False),
    "gfx700": (0x022, False, False), "gfx701": (0x023, False, False), "gfx702": (0x024, False, False),
    "gfx703": (0x025, False, False), "gfx704": (0x026, False, False), "gfx705": (0x03b, False, False),
    "gfx801": (0x028, True, False), "gfx802": (0x029, False, False), "gfx803": (0x02a, False, False),
    "gfx805": (0x03c, False, False), "gfx810": (0x02b, True, False),
    "gfx900": (0x02c, True, False), "gfx902": (0x02d, True, False), "gfx904": (0x02e, True, False),
    "gfx906": (0x02f, True, True), "gfx908": (0x030, True, True), "gfx909": (0x031, True, False),
    "gfx90a": (0x03f, True, True), "gfx90c": (0x032, True, False),
    "gfx940": (0x040, True, True), "gfx941": (0x04b, True, True), "gfx942": (0x04c, True, True),
    "gfx950": (0x04f, True, True),
    "gfx1010": (0x033, True, False), "gfx1011": (0x034, True, False), "gfx1012": (0x035, True, False),
    "gfx1013": (0x042, True, False),
    "gfx1030": (0x036, False, False), "gfx1031": (0x037, False, False), "gfx1032": (0x038, False, False),
    "gfx1033": (0x039, False, False), "gfx1034": (0x03e, False, False), "gfx1035": (0x03d, False, False),
    "gfx1036": (0x045, False, False),
    "gfx1100": (0x041, False, False), "gfx1101": (0x046, False, False), "gfx1102": (0x047, False, False),
    "gfx1103": (0x044, False, False), "gfx1150": (0x043, False, False), "gfx1151": (0x04a, False, False),
    "gfx1152": (0x055, False, False), "gfx1153": (0x058, False, False),
    "gfx1200": (0x048, False, False), "gfx1201": (0x04e, False, False),
    "gfx9-generic": (0x051, True, False), "gfx10-1-generic": (0x052, True, False),
    "gfx10-3-generic": (0x053, False, False), "gfx11-generic": (0x054, False, False),
    "gfx12-generic": (0x059, False, False), "gfx9-4-generic": (0x05f, True, True),
}
MACH_TO_PROCESSOR = {mach: name for name, (mach, _, _) in PROCESSORS.items()}

GENERIC_FAMILIES: dict[str, tuple[str, ...]] = {
    "gfx9-generic": ("gfx900", "gfx902", "gfx904", "gfx906", "gfx909", "gfx90c"),
    "gfx9-4-generic": ("gfx940", "gfx941", "gfx942", "gfx950"),
    "gfx10-1-generic": ("gfx1010", "gfx1011", "gfx1012", "gfx1013"),
    "gfx10-3-generic": ("gfx1030", "gfx1031", "gfx1032", "gfx1033", "gfx1034", "gfx1035", "gfx1036"),
    "gfx11-generic": ("gfx1100", "gfx1101", "gfx1102", "gfx1103", "gfx1150", "gfx1151", "gfx1152", "gfx1153"),
    "gfx12-generic": ("gfx1200", "gfx1201"),
}
GENERIC_MIN_VERSION = {family: 1 for family in GENERIC_FAMILIES}
FEATURES = ("sramecc", "xnack")

_TRIPLE_RE = re.compile(r"^(?:amdgcn|amdgpu[0-9a-z.]*)-amd-amdhsa-[a-z0-9_]*-")  # newer LLVM: amdgpu9.0a-amd-amdhsa-unknown-gfx90a


@dataclass(frozen=True)
class TargetID:
    """A code object's target: processor plus sramecc/xnack each True (on), False (off) or None (any).

    ``generic_version`` is the V6 generic version (0 for processor-specific code objects).
    """

    processor: str
    sramecc: bool | None = None
    xnack: bool | None = None
    generic_version: int = 0

    @classmethod
    def parse(cls, text: str, generic_version: int = 0) -> "TargetID":
        """Parse ``gfx90a:sramecc+:xnack-``, ``amdgcn-amd-amdhsa--gfx90a:xnack-``, a bundle entry ID
        (``hipv4-amdgcn-amd-amdhsa--gfx90a``), or the V2/V3 style ``gfx906+xnack``."""
        if not isinstance(text, str) or not text or len(text) > 256:
            raise LoaderError(f"invalid target ID {text!r}")
        s = text.strip()
        for kind in ("hipv4-", "hip-", "openmp-", "hcc-"):
            if s.startswith(kind):
                s = s[len(kind):]
                break
        m = _TRIPLE_RE.match(s)
        if m:
            s = s[m.end():]
        legacy_plus = "+" in s.split(":")[0]
        if legacy_plus:  # V2/V3 bundle style: processor followed by +feature for each feature that is on
            proc, *feats = s.split(":")[0].split("+")
            values = {f: True for f in feats}
            for f in FEATURES:
                values.setdefault(f, False)
        else:
            proc, *feats = s.split(":")
            values = {}
            for f in feats:
                if len(f) < 2 or f[-1] not in "+-" or f[:-1] not in FEATURES:
                    raise LoaderError(f"invalid target ID {text!r}: bad feature {f!r}")
                if f[:-1] in values:
                    raise LoaderError(f"invalid target ID {text!r}: feature {f[:-1]} repeated")
                values[f[:-1]] = f[-1] == "+"
        if proc not in PROCESSORS:
            raise LoaderError(f"unsupported processor {proc!r} in target ID {text!r}",
                              hipError_t.hipErrorNoBinaryForGpu)
        _, has_xnack, has_sramecc = PROCESSORS[proc]
        if not has_xnack:
            values.pop("xnack", None) if legacy_plus else None
            if "xnack" in values:
                raise LoaderError(f"{proc} has no xnack feature: {text!r}")
        if not has_sramecc:
            values.pop("sramecc", None) if legacy_plus else None
            if "sramecc" in values:
                raise LoaderError(f"{proc} has no sramecc feature: {text!r}")
        return cls(proc, values.get("sramecc"), values.get("xnack"), generic_version)

    @property
    def is_generic(self) -> bool:
        return "generic" in self.processor

    def __str__(self) -> str:
        out = self.processor
        for f in FEATURES:
            v = getattr(self, f)
            if v is not None:
                out += f":{f}{'+' if v else '-'}"
        return out

    @property
    def triple_name(self) -> str:
        return f"amdgcn-amd-amdhsa--{self}"


@dataclass(frozen=True)
class DeviceISA:
    """A device's concrete ISA: features are True/False where the processor supports them."""

    processor: str
    sramecc: bool | None = None
    xnack: bool | None = None

    @classmethod
    def parse(cls, text: str) -> "DeviceISA":
        t = TargetID.parse(text)
        _, has_xnack, has_sramecc = PROCESSORS[t.processor]
        if t.is_generic:
            raise LoaderError(f"a device cannot be generic: {text!r}")
        return cls(t.processor, (bool(t.sramecc) if has_sramecc else None), (bool(t.xnack) if has_xnack else None))

    def __str__(self) -> str:
        return str(TargetID(self.processor, self.sramecc, self.xnack))


def family_of(processor: str) -> str | None:
    for family, members in GENERIC_FAMILIES.items():
        if processor in members:
            return family
    return None


def is_compatible(code: TargetID, device: DeviceISA) -> bool:
    """The ROCr/HIP rules: same processor (or a generic family containing it, with a new enough
    generic version); each feature either *any* in the code object or equal to the device's setting."""
    if code.is_generic:
        if family_of(device.processor) != code.processor:
            return False
        if code.generic_version < GENERIC_MIN_VERSION.get(code.processor, 1):
            return False
    elif code.processor != device.processor:
        return False
    for f in FEATURES:
        want = getattr(code, f)
        if want is not None and want != bool(getattr(device, f)):
            return False
    return True


def preference(code: TargetID) -> tuple:
    """Sort key, larger is better: processor-specific over generic, then concrete features over *any*."""
    concrete = sum(getattr(code, f) is not None for f in FEATURES)
    return (0 if code.is_generic else 1, concrete, code.generic_version)


def select(candidates, device: DeviceISA, key=lambda c: c):
    """Pick the best candidate (by ``key(candidate) -> TargetID``) for ``device``, or raise
    ``hipErrorNoBinaryForGpu`` naming what was available."""
    best, best_pref = None, None
    seen = []
    for c in candidates:
        t = key(c)
        seen.append(str(t))
        if is_compatible(t, device):
            p = preference(t)
            if best is None or p > best_pref:
                best, best_pref = c, p
    if best is None:
        raise LoaderError(f"no code object for {device} (available: {', '.join(seen) or 'none'})",
                          hipError_t.hipErrorNoBinaryForGpu)
    return best


def target_from_eflags(e_flags: int, abi_version: int) -> TargetID:
    """Decode processor, xnack/sramecc and generic version from ``e_flags`` (OSABI HSA, ABI version 1-4)."""
    mach = e_flags & 0xFF
    proc = MACH_TO_PROCESSOR.get(mach)
    if proc is None:
        raise LoaderError(f"unsupported EF_AMDGPU_MACH 0x{mach:03x}", hipError_t.hipErrorNoBinaryForGpu)
    _, has_xnack, has_sramecc = PROCESSORS[proc]
    if abi_version == 1:  # V3: bits can only say "on" (any is encoded as on)
        xnack = bool(e_flags & 0x100) if has_xnack else None
        sramecc = bool(e_flags & 0x200) if has_sramecc else None
        return TargetID(proc, sramecc, xnack)
    state = {0x000: "unsupported", 0x100: None, 0x200: False, 0x300: True}
    xn = state[e_flags & 0x300]
    sr = {0x000: "unsupported", 0x400: None, 0x800: False, 0xC00: True}[e_flags & 0xC00]
    if has_xnack and xn == "unsupported" or not has_xnack and xn != "unsupported":
        raise LoaderError(f"e_flags 0x{e_flags:x}: xnack field inconsistent with {proc}")
    if has_sramecc and sr == "unsupported" or not has_sramecc and sr != "unsupported":
        raise LoaderError(f"e_flags 0x{e_flags:x}: sramecc field inconsistent with {proc}")
    gen = (e_flags >> 24) & 0xFF if abi_version >= 4 else 0
    if "generic" in proc and gen == 0:
        raise LoaderError(f"generic target {proc} without a generic version (e_flags 0x{e_flags:x})")
    if gen and "generic" not in proc:
        raise LoaderError(f"generic version {gen} on non-generic target {proc}")
    return TargetID(proc, None if sr == "unsupported" else sr, None if xn == "unsupported" else xn, gen)
