"""Hardware variations the emulated KFD can present, so the HSA backend is tested on each:
``PYHIP_THUNK_QUIRKS`` is a comma-separated list of

* ``cus=N``: every GPU node reports N compute units (a partitioned card, an MI300A with 228, an MI308X ...)
  instead of its board's; ROCr's agent, and whatever sizes work from it, see N;
* ``no-svm``: locked host memory gets a GPU address different from its host address, as libhsakmt's
  userptr path without the SVM API gives it (the GPU reaches it only through the address ROCr returns);
* ``small-bar``: VRAM is not CPU-mapped (no large BAR): the host reaches it only through copies;
* ``no-p2p``: no IO links between GPUs (boards on a PCIe topology without peer-to-peer): ROCr reports a
  GPU's VRAM never accessible to the others, so peer access is refused;
* ``strict-events``: event waits exactly as amdkfd's — a "forever" wait without an event age sleeps until
  an event is set, without the thunk's periodic spurious wake-up (native/hsakmt/events.c); ROCr 5.2 can then
  lose the wake-up of ``hsa_queue_destroy`` and hang, as it can on hardware.
"""
from __future__ import annotations

import os
from dataclasses import dataclass

from . import abi


@dataclass(frozen=True)
class Quirks:
    cus: int = 0                # 0: the board's own count
    no_svm: bool = False
    small_bar: bool = False
    no_p2p: bool = False
    strict_events: bool = False

    @classmethod
    def parse(cls, text: str) -> "Quirks":
        cus, flags = 0, set()
        for word in (w.strip().lower() for w in text.split(",") if w.strip()):
            if word.startswith("cus="):
                try:
                    cus = int(word[4:])
                except ValueError:
                    cus = -1
                if cus <= 0:
                    raise abi.KfdError(abi.ERROR, f"PYHIP_THUNK_QUIRKS: {word!r} needs a positive CU count")
            elif word in ("no-svm", "small-bar", "no-p2p", "strict-events"):
                flags.add(word)
            else:
                raise abi.KfdError(abi.ERROR, f"PYHIP_THUNK_QUIRKS: unknown quirk {word!r} "
                                              "(cus=N, no-svm, small-bar, no-p2p, strict-events)")
        return cls(cus, "no-svm" in flags, "small-bar" in flags, "no-p2p" in flags, "strict-events" in flags)

    @classmethod
    def from_environment(cls) -> "Quirks":
        return cls.parse(os.environ.get("PYHIP_THUNK_QUIRKS", ""))
