"""The HSA backend (ROCr): pyhip's runtime on real AMD GPUs, or on pyhip's emulated GPU behind the drop-in
libhsakmt.  ``PYHIP_BACKEND`` = ``emu`` (the emulator, in process), ``hsa`` (ROCr; fails if it finds no GPU)
or ``auto`` (default: ROCr when /dev/kfd exists — or pyhip's thunk is asked for — and ROCr finds a GPU
agent, else the emulator).  ``PYHIP_HSA_THUNK=pyhip`` loads pyhip's libhsakmt.so.1 before ROCr (ROCr over the
emulated GPU; a path selects another library); unset, ROCr uses the system's (the real KFD)."""
from __future__ import annotations

import os

from ...errors import HipError, hipError_t


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


def gpu_agents():
    from .backend import HsaSystem
    return HsaSystem.get(thunk_library()).gpus
