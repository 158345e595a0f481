"""Build tests/runtime/src/reliability.hip with clang-19 (gfx90a, code object V5) once per session."""
from __future__ import annotations

import subprocess
from pathlib import Path

import pyhip

from conftest import require_tool

HERE = Path(__file__).resolve().parent
FIXTURE_SRC = HERE.parent / "fixtures" / "src"


def build(tmp_dir: Path) -> Path:
    out = tmp_dir / "reliability-gfx90a.hsaco"
    subprocess.run([require_tool("clang-19"), "-x", "hip", "-nogpulib", "-nogpuinc", "-O2", "--cuda-device-only",
                    "--no-gpu-bundle-output", "-DPYHIP_MINIHIP", f"-I{FIXTURE_SRC}", "--offload-arch=gfx90a",
                    "-mcode-object-version=5", str(HERE / "src" / "reliability.hip"), "-o", str(out)],
                   check=True, capture_output=True)
    return out


def load(tmp_path_factory):
    pyhip.set_device(0)
    return pyhip.load(build(tmp_path_factory.mktemp("reliability")))
