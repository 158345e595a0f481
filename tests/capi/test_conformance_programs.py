"""The C ABI's memory, device/stream/event, printf, cooperative, graph, clock and legacy-launch families
(issue 18): hipcc-built programs (memory_api.hip, device_api.hip, kernel_api.hip) under ``pyhip exec`` checking
every behaviour the conformance suite needed, against host references (random data, odd sizes, poisoned
outputs), the host C library's printf, and HIP 5.2's documented error codes.  Each program prints one line
per check; a test fails on any line that is not ``ok``."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import require_tool

HERE = Path(__file__).resolve().parent
TWO_GFX90A = "gfx90a:sramecc+:xnack-,gfx90a"        # the second device gets the same features by default


@pytest.fixture(scope="module")
def build(tmp_path_factory):
    out = tmp_path_factory.mktemp("programs")
    cache = {}

    def get(name: str) -> Path:
        if name not in cache:
            exe = out / name
            subprocess.run([require_tool("hipcc"), "--offload-arch=gfx90a", "-O2", str(HERE / f"{name}.hip"), "-o",
                            str(exe)], check=True, capture_output=True, env={**os.environ, "HIP_PLATFORM": "amd"})
            cache[name] = exe
        return cache[name]
    return get


def run(exe: Path, *args: str, devices: str | None = None) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    if devices:
        env["PYHIP_DEVICES"] = devices
    return subprocess.run([sys.executable, "-m", "pyhip", "exec", str(exe), *args], capture_output=True,
                          text=True, timeout=600, env=env)


def assert_all_ok(r: subprocess.CompletedProcess, at_least: int) -> None:
    lines = [l for l in r.stdout.splitlines() if ": " in l and not l.startswith(("REF ", "dev "))]
    bad = [l for l in lines if not l.endswith(": ok")]
    assert not bad and r.returncode == 0 and r.stdout.rstrip().endswith("PASS"), r.stdout[-3000:] + r.stderr[-2000:]
    assert len(lines) >= at_least, r.stdout


def test_memory_family(build):
    """Pitched/3-D memory, every copy and fill form, pinned ordering, attributes, registration, managed
    memory, pools, hipMemGetInfo across a first launch."""
    assert_all_ok(run(build("memory_api")), 70)


def test_devices_peers_streams_events_faults(build):
    """Two emulated gfx90a: same target ID, peer access (a kernel reads the other device's memory; access
    after disabling faults), PCI ids, limits, priorities, per-device events, hipStreamSynchronize(0) and
    hipStreamPerThread, fault semantics (reported once, device usable after)."""
    assert_all_ok(run(build("device_api"), devices=TWO_GFX90A), 56)


def test_device_printf_matches_host_printf(build):
    """Device printf through the hostcall buffer: every line equals what the host's C library prints for
    the same format and values, in the program's order (before/after the kernel on the same stdout)."""
    r = run(build("kernel_api"), "printf")
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    lines = r.stdout.splitlines()
    before, after = lines.index("BEFORE"), lines.index("AFTER")
    device = lines[before + 1:after]
    ref = [l[4:] for l in lines if l.startswith("REF ")]
    assert len(device) == 120 and device == ref


def test_cooperative_grid_sync(build):
    assert_all_ok(run(build("kernel_api"), "coop"), 4)


def test_cooperative_multi_device(build):
    assert_all_ok(run(build("kernel_api"), "multi", devices=TWO_GFX90A), 2)


def test_graphs_capture_and_nodes(build):
    assert_all_ok(run(build("kernel_api"), "graph"), 20)


@pytest.mark.parametrize("engine", ["native", "numpy"])
def test_device_clocks(build, engine):
    """clock64() counts at hipDeviceAttributeClockRate and wall_clock64() at the wall clock rate: a kernel
    spinning 60 ms of cycles takes 60 ms of host time (both engines count the same clocks)."""
    env_engine = os.environ.get("PYHIP_ENGINE")
    os.environ["PYHIP_ENGINE"] = engine
    try:
        assert_all_ok(run(build("clocks")), 4)
    finally:
        if env_engine is None:
            os.environ.pop("PYHIP_ENGINE")
        else:
            os.environ["PYHIP_ENGINE"] = env_engine


def test_legacy_launch_api(build):
    """hipConfigureCall / __hipPushCallConfiguration + hipSetupArgument + hipLaunchByPtr (hip-tests'
    launch_api): arguments at their offsets, data checked against the host."""
    assert_all_ok(run(build("kernel_api"), "legacy"), 9)
