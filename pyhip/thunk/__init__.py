"""pyhip's drop-in ``libhsakmt.so.1``: the ROCm 5.2 KFD thunk interface over pyhip's emulated GPUs, so AMD's
own ROCr (libhsa-runtime64.so.1) and HIP (libamdhip64.so.5) run unmodified on the emulated device.

``pyhip thunk-path`` prints the directory to put first on LD_LIBRARY_PATH; ``pyhip exec --runtime amd
PROGRAM`` runs a hipcc program on AMD's HIP + ROCr over it.  See docs/amd-stack.md."""
from .build import thunk_path

__all__ = ["thunk_path"]
