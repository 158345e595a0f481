"""AMD's ROCr 5.2 (libhsa-runtime64.so.1) unmodified, on the emulated GPU through pyhip's libhsakmt:
a plain HSA program (agents, memory pools, an executable, hand-written dispatch and barrier packets, signal
waits, ROCr's own blit kernels for async copies), the agent listing rocminfo would print, and the thunk
interface used directly from a C program compiled against Debian's hsakmt.h."""
import re
import subprocess

import pytest

from conftest import require_tool
from thunkkit import BASIC, HERE, gcc, run_on_thunk


@pytest.fixture(scope="module")
def hsa_dispatch(tmp_path_factory):
    return gcc(tmp_path_factory.mktemp("hsa"), HERE / "hsa_dispatch.c", "hsa-runtime64")


@pytest.mark.parametrize("n", [1000, 65537])
def test_hsa_program_dispatches_barriers_and_copies(hsa_dispatch, n):
    r = run_on_thunk(hsa_dispatch, BASIC, n)
    assert r.returncode == 0 and r.stdout.strip() == f"PASS {n}", r.stdout + r.stderr
    assert "leak" not in r.stderr, r.stderr


def test_thunk_interface_from_c(tmp_path):
    r = run_on_thunk(gcc(tmp_path, HERE / "kfd_direct.c", "hsakmt"), timeout=120)
    assert r.returncode == 0 and r.stdout.strip().endswith("PASS"), r.stdout + r.stderr
    from pyhip.runtime.properties import PRESETS
    name, cus, (major, minor, step), _ = PRESETS["gfx90a"]
    line = next(l for l in r.stdout.splitlines() if l.startswith("ok node1"))
    assert f"{name} gfx{major}.{minor}.{step} simds {cus * 4}" in line and "doorbell 2 sramecc 1" in line


def test_agent_listing(tmp_path):
    """What rocminfo prints (it refuses to start without /dev/kfd), through the HSA API: ROCr sees the CPU
    and one GPU agent per emulated device it knows — ROCr 5.2 has no gfx942, so it skips the MI300X node
    exactly as it skips any GPU with an ISA it does not know."""
    exe = gcc(tmp_path, HERE / "agents.c", "hsa-runtime64")
    r = run_on_thunk(exe, timeout=120, PYHIP_DEVICES="gfx90a:sramecc+:xnack-,gfx942,gfx90a:sramecc-:xnack-")
    assert r.returncode == 0, r.stdout + r.stderr
    gpus = [l for l in r.stdout.splitlines() if l.startswith("GPU ")]
    assert len(gpus) == 2, r.stdout
    from pyhip.emu.clocks import core_khz
    from pyhip.runtime.properties import PRESETS
    name, cus, _, l2 = PRESETS["gfx90a"]
    mhz = core_khz("gfx90a") // 1000
    for g, feat in zip(gpus, ("sramecc+:xnack-", "sramecc-:xnack-")):
        fields = dict(kv.split("=", 1) for kv in g.split("|")[1:])
        assert fields["isa"] == f"amdgcn-amd-amdhsa--gfx90a:{feat}"
        assert fields["product"] == name and int(fields["cus"]) == cus and int(fields["clock"]) == mhz
        assert fields["wavefront"] == "64" and fields["wg_max"] == "1024" and int(fields["l2"]) == l2
        assert int(fields["vram"]) == 64 << 30 and fields["lds"] == "65536"
    cpu = next(l for l in r.stdout.splitlines() if l.startswith("CPU "))
    assert re.search(r"cus=\d+", cpu)


def test_a_wait_never_wakes_on_the_event_that_reused_its_slot(tmp_path):
    """hsaKmtWaitOnEvent on an event destroyed meanwhile, whose id and slot a new event took and was set: the
    wait fails as amdkfd's does (destroy_event clears the waiter's event) and the new event's set stays for
    its owner — the old thunk, which kept only the table entry, returned success on the new event's set
    (99 of 100 rounds)."""
    r = run_on_thunk(gcc(tmp_path, HERE / "event_reuse.c", "hsakmt", "pthread"), timeout=300)
    assert r.returncode == 0 and r.stdout.strip().endswith("PASS"), r.stdout + r.stderr


def test_a_forever_wait_whose_set_another_waiter_consumed_comes_back(tmp_path):
    """ROCr's queue destructor and its async-events thread wait on one auto-reset event (the queue's inactive
    signal); when the destructor's own wait consumed the set meant for the async thread, both slept for good
    (hsa_queue_destroy hung in test_hsa_backend's runtime tests).  A wait of ROCr's "forever" now comes back
    with WAIT_TIMEOUT after a short slice (ROCr re-checks its signal values and waits again): tests/thunk/
    event_forever.c, whose watchdog fails it if the wait never returns."""
    r = run_on_thunk(gcc(tmp_path, HERE / "event_forever.c", "hsakmt", "pthread"), timeout=120)
    assert r.returncode == 0 and r.stdout.strip().endswith("PASS"), r.stdout + r.stderr


@pytest.mark.parametrize("quirks", ["", "strict-events"])
def test_event_age_as_amdkfd(tmp_path, quirks):
    """hsaKmtWaitOnEvent_Ext / hsaKmtWaitOnMultipleEvents_Ext (later libhsakmt; ROCr 5.2 does not call them) with
    amdkfd's event ages: a new event's age is 1, every set bumps it, a waiter passing an older age wakes at once
    even when another waiter consumed the set, a completed wait hands back the age of each activated signal
    event (age 0 and memory events: the old semantics), and a waiter activated at registration is not on the
    event's wait queue.  Then 200 rounds of the lost wake-up (the set meant for a sleeper consumed before it
    sleeps) with a "forever" wait that passes its age — under strict-events there is no spurious wake-up to
    hide a lost one.  Fails on a thunk that ignores the age (line 77) or counts an activated waiter (line 116)."""
    exe = tmp_path / "event_age"
    subprocess.run([require_tool("gcc"), "-O1", str(HERE / "event_age.c"), "-o", str(exe), "-lhsakmt", "-lpthread",
                    "-ldl"], check=True, capture_output=True)
    r = run_on_thunk(exe, timeout=300, PYHIP_THUNK_QUIRKS=quirks)
    assert r.returncode == 0 and r.stdout.strip() == "PASS", r.stdout + r.stderr


def test_queue_destroy_under_concurrent_event_traffic(tmp_path):
    """hsa_queue_destroy on ROCr 5.2 while other threads create, fire and destroy async-handler signals: three
    threads each create, use (a barrier-AND packet, its completion signal waited on blocked) and destroy 20
    queues while two threads run 40 async handlers each and one thread burns CPU (preemption inside ROCr's
    short windows).  Every queue's inactive signal shares one auto-reset KFD event with the others; a destroy
    whose wake-up is lost would sleep forever — the program's watchdog and the subprocess timeout are the hang
    check.  Under strict-events (amdkfd's forever, no spurious wake-up) 1,800 destroys in 12 runs did not hang
    either: the window is narrow; tests/thunk/event_forever.c shows the mechanism itself."""
    exe = gcc(tmp_path, HERE / "queue_destroy_stress.c", "hsa-runtime64", "pthread")
    r = run_on_thunk(exe, 20, 3, 240, 1, timeout=300)
    assert r.returncode == 0 and r.stdout.strip() == "PASS 60 80", r.stdout + r.stderr[-3000:]
