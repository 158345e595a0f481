"""pyhip's libamdhip64 for clients built against HIP >= 6 headers (native/hip/abi6.c): a small library in
front of the HIP 5.2 shim that reports the headers' HIP version, answers hipGetProcAddress and fills HIP 6's
hipDeviceProp_t.  Triton's launcher is such a client (pyhip.triton).  Built with the C compiler against the
HIP headers the client ships, cached next to the shim per (source, headers' version, shim)."""
from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from pathlib import Path

from ..errors import HipError, hipError_t
from .shim import NATIVE, build_once, shim_path


def compiler() -> str:
    """The C compiler: $CC, else cc, gcc or clang on PATH."""
    for cand in (os.environ.get("CC"), "cc", "gcc", "clang"):
        if cand and shutil.which(cand):
            return cand
    raise HipError(hipError_t.hipErrorSharedObjectInitFailed, "no C compiler (set CC) to build pyhip's HIP 6 library")


def library(include_dir: str | os.PathLike) -> Path:
    """The path of ``libamdhip64.so`` for clients built against the HIP headers under ``include_dir`` (the
    directory holding ``hip/hip_runtime_api.h``), built on first use."""
    include = Path(include_dir)
    version_h = include / "hip" / "hip_version.h"
    if not version_h.exists():
        raise HipError(hipError_t.hipErrorInvalidValue, f"no HIP headers under {include}")
    shim = shim_path() / "libamdhip64.so.5"
    source = NATIVE / "abi6.c"
    key = hashlib.sha256(source.read_bytes() + version_h.read_bytes() + str(shim).encode()).hexdigest()[:16]
    target = shim.parent / f"abi6-{key}" / "libamdhip64.so"

    def build(tmp: Path) -> Path:
        out = tmp / "libamdhip64.so"
        cmd = [compiler(), "-shared", "-fPIC", "-O2", "-Wl,-Bsymbolic", f"-I{include}",
               f'-DPYHIP_SHIM_PATH="{shim}"', str(source), "-o", str(out), "-ldl"]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            raise HipError(hipError_t.hipErrorSharedObjectInitFailed,
                           f"building {source.name} failed:\n{r.stderr.strip()}")
        return out
    return build_once(target, build)
