"""Helpers for the drop-in thunk's tests: build C and hipcc programs, run them on AMD's ROCr/HIP over
pyhip's libhsakmt (``pyhip exec --runtime amd``) or on pyhip's own libamdhip64 (``pyhip exec``)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from conftest import BIN, require_tool

HERE = Path(__file__).resolve().parent
BASIC = BIN / "hipcc52" / "basic-gfx90a.hsaco"
# the emulated KFD has MI210 / MI300X boards only: thunk runs use the suite's CDNA pair, not its RDNA devices
CDNA = {"PYHIP_DEVICES": "gfx90a:sramecc+:xnack-,gfx942:sramecc+:xnack-"}


def gcc(tmp: Path, source: Path, *libs: str) -> Path:
    exe = tmp / source.stem
    subprocess.run([require_tool("gcc"), "-O1", str(source), "-o", str(exe), *[f"-l{l}" for l in libs]], check=True,
                   capture_output=True)
    return exe


def hipcc(tmp: Path, source: Path) -> Path:
    exe = tmp / source.stem
    subprocess.run([require_tool("hipcc"), "--offload-arch=gfx90a", "-O2", str(source), "-o", str(exe)], check=True,
                   capture_output=True, env={**os.environ, "HIP_PLATFORM": "amd"})
    return exe


def thunk_env(**extra) -> dict:
    from pyhip.thunk import thunk_path

    env = {**os.environ, **CDNA}
    env["LD_LIBRARY_PATH"] = ":".join([str(thunk_path())] + [p for p in env.get("LD_LIBRARY_PATH", "").split(":") if p])
    env.update(extra)
    return env


def run_on_thunk(exe: Path, *args, timeout: float = 300, **env) -> subprocess.CompletedProcess:
    """A program linked against ROCr or libhsakmt itself, on pyhip's libhsakmt."""
    return subprocess.run([str(exe), *map(str, args)], capture_output=True, text=True, timeout=timeout,
                          env=thunk_env(**env))


def pyhip_exec(exe: Path, *args, runtime: str = "pyhip", timeout: float = 300, **env) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pyhip", "exec", "--runtime", runtime, str(exe), *map(str, args)],
                          capture_output=True, text=True, timeout=timeout, env={**os.environ, **CDNA, **env})
