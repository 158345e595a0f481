"""The HSA backend (ROCr): pyhip's runtime on real AMD GPUs, or on pyhip's emulated GPU behind the drop-in
libhsakmt.  ``PYHIP_BACKEND`` = ``emu`` (the emulator, in process), ``hsa`` (ROCr; fails if it finds no GPU)
or ``auto`` (default: ROCr when /dev/kfd exists — or pyhip's thunk is asked for — and ROCr finds a GPU
agent, else the emulator).  ``PYHIP_HSA_THUNK=pyhip`` loads pyhip's libhsakmt.so.1 before ROCr (ROCr over the
emulated GPU; a path selects another library); unset, ROCr uses the system's (the real KFD)."""
from __future__ import annotations

import os

from ...errors import HipError, hipError_t
from .errors import no_gpu


def thunk_library() -> str | None:
    choice = os.environ.get("PYHIP_HSA_THUNK", "")
    if not choice or choice == "system":
        return None
    if choice == "pyhip":
        from ...thunk import thunk_path
        return str(thunk_path() / "libhsakmt.so.1")
    return choice


def choose() -> str:
    """The backend to use: "emu" or "hsa"."""
    want = os.environ.get("PYHIP_BACKEND", "auto").lower()
    if want not in ("auto", "emu", "hsa"):
        raise HipError(hipError_t.hipErrorInvalidValue, f"PYHIP_BACKEND={want!r}: use emu, hsa or auto")
    if want != "auto":
        return want
    if not os.path.exists("/dev/kfd") and thunk_library() is None:
        return "emu"
    try:
        return "hsa" if gpu_agents() else "emu"
    except HipError:
        return "emu"


def precheck() -> HipError | None:
    """Before a program starts on the HSA backend (``pyhip exec``): the error it would meet at once when
    PYHIP_BACKEND=hsa asks for the system's KFD and there is none."""
    if os.environ.get("PYHIP_BACKEND", "").lower() == "hsa" and thunk_library() is None \
            and not os.path.exists("/dev/kfd"):
        return no_gpu("ROCr cannot start without it")
    return None


def gpu_agents():
    from .system import HsaSystem
    return HsaSystem.get(thunk_library()).gpus
