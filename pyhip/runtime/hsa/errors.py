"""The HSA backend's own error: ROCr asked for (PYHIP_BACKEND=hsa) and no AMD GPU found."""
from __future__ import annotations

import os

from ...errors import HipError, hipError_t


def no_gpu(detail: str) -> HipError:
    """PYHIP_BACKEND=hsa where ROCr finds no AMD GPU: said plainly, with the ways to go on."""
    where = "/dev/kfd exists" if os.path.exists("/dev/kfd") else "there is no /dev/kfd (amdgpu's KFD)"
    return HipError(hipError_t.hipErrorNoDevice,
                    f"PYHIP_BACKEND=hsa found no AMD GPU: {where}; {detail}. To run ROCr on pyhip's emulated GPU "
                    "set PYHIP_HSA_THUNK=pyhip; PYHIP_BACKEND=emu (or auto, the default) uses the emulator directly")
