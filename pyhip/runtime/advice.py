"""hipMemAdvise hints and hipMemPrefetchAsync locations, per range start: recorded for hipMemRangeGetAttribute
to report (the memory itself never migrates: every device reaches managed memory where it is)."""
from __future__ import annotations

# hipMemAdviseSet/Unset pairs: ReadMostly 1/2, PreferredLocation 3/4, AccessedBy 5/6 (a set of devices), AMD's
# CoarseGrain 100/101
ADVISE_SET_COARSE, ADVISE_UNSET_COARSE = 100, 101
_UNSET = {2: 1, 4: 3, ADVISE_UNSET_COARSE: ADVISE_SET_COARSE}


class MemAdvice:
    """The runtime's advice table: range start -> its hints (advice value -> device; 5: the devices that
    access it; "prefetch": the last prefetch location)."""

    def __init__(self):
        self._hints: dict[int, dict] = {}

    def advise(self, start: int, advice: int, device: int) -> None:
        """Record hipMemAdvise(``advice``, ``device``) for the range at ``start`` (``advice`` already checked)."""
        hints = self._hints.setdefault(start, {})
        if advice == 5:
            devs = hints.setdefault(5, [])
            if device not in devs:
                devs.append(device)
        elif advice == 6:
            if device in hints.get(5, []):
                hints[5].remove(device)
        elif advice in (1, 3, ADVISE_SET_COARSE):
            hints[advice] = device
        else:
            hints.pop(_UNSET[advice], None)

    def prefetch(self, start: int, device: int) -> None:
        """hipMemPrefetchAsync to ``device`` (no migration: the data stays put)."""
        self._hints.setdefault(start, {})["prefetch"] = device

    def hints(self, start: int) -> dict:
        """The hints recorded for the range at ``start`` (empty when none)."""
        return self._hints.get(start, {})

    def clear(self) -> None:
        self._hints.clear()
