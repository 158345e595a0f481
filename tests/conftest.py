"""Shared test helpers: the fixture corpus (tests/fixtures/bin/manifest.json) and toolchain probes."""
from __future__ import annotations

import atexit
import json
import os
import shutil
import tempfile
from pathlib import Path

import pytest

# The native engine's cross-process cache of lowered programs (pyhip/emu/native/cache.py): a fresh directory
# per test process (inherited by the programs the tests start), so the suite never depends on what earlier
# runs left in ~/.cache, while later loads of the same code (and child processes) run restored programs.
if "PYHIP_CACHE_DIR" not in os.environ:
    os.environ["PYHIP_CACHE_DIR"] = tempfile.mkdtemp(prefix="pyhip-test-cache-")
    atexit.register(shutil.rmtree, os.environ["PYHIP_CACHE_DIR"], True)

# Compiled kernels (pyhip/emu/jit/objcache.py): one directory for the whole session, created by the first process
# (the controller under xdist) and inherited by the workers and the programs they start, so a kernel several
# tests run is compiled once per suite run, never taken from earlier runs.
if "PYHIP_JIT_CACHE_DIR" not in os.environ:
    os.environ["PYHIP_JIT_CACHE_DIR"] = tempfile.mkdtemp(prefix="pyhip-test-jit-")
    atexit.register(shutil.rmtree, os.environ["PYHIP_JIT_CACHE_DIR"], True)
# Triton's kernel cache (tests/triton): a fresh directory per session, so every run compiles what it launches
if "TRITON_CACHE_DIR" not in os.environ:
    os.environ["TRITON_CACHE_DIR"] = tempfile.mkdtemp(prefix="pyhip-test-triton-")
    atexit.register(shutil.rmtree, os.environ["TRITON_CACHE_DIR"], True)
os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")

FIXTURES = Path(__file__).parent / "fixtures"
BIN = FIXTURES / "bin"


def manifest() -> list[dict]:
    path = BIN / "manifest.json"
    if not path.exists():
        return []
    entries = json.loads(path.read_text())
    if isinstance(entries, dict):
        entries = entries.get("files", entries.get("entries", []))
    return [e for e in entries if (BIN / e["file"]).exists()]


def fixture_files(*kinds: str) -> list[dict]:
    return [e for e in manifest() if not kinds or e["kind"] in kinds]


def fixture_path(entry: dict) -> Path:
    return BIN / entry["file"]


def require_tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        pytest.fail(f"{name} is not installed; run tools/run_tests.sh, which installs the Debian toolchain")
    return path


def readelf_metadata(path) -> dict:
    """The AMDGPU metadata note as llvm-readelf-19 prints it (YAML), parsed with PyYAML: an
    independent view of what pyhip's MessagePack reader should find."""
    import subprocess

    import yaml

    out = subprocess.run([require_tool("llvm-readelf-19"), "--notes", str(path)], capture_output=True,
                         text=True, check=True).stdout
    start = out.index("---")
    end = out.index("\n...", start)
    return yaml.safe_load(out[start:end])


# the suite runs with four emulated devices (the default is one gfx90a): two CDNA, then an RX 7900 XTX and an
# RX 6900 XT
import os as _os  # noqa: E402

_os.environ.setdefault("PYHIP_DEVICES", "gfx90a:sramecc+:xnack-,gfx942:sramecc+:xnack-,gfx1100,gfx1030")


@pytest.fixture
def exact_bounds():
    """Lane accesses checked against exact allocation ends for one test, as under memcheck (by default they
    are checked as the GPU checks them: at page granularity; pyhip/emu/memory.py)."""
    from pyhip.emu.memory import set_memcheck
    set_memcheck(True)
    try:
        yield
    finally:
        set_memcheck(False)
