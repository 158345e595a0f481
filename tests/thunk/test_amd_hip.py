"""AMD's own HIP runtime 5.2 (libamdhip64.so.5) and ROCr, unmodified, on pyhip's emulated GPU through the
drop-in libhsakmt (``pyhip exec --runtime amd``), held against pyhip's own libamdhip64: the same hipcc
programs give the same output under both, and a GPU memory fault is reported (pyhip's report, then ROCr's
"Memory access fault by GPU node-1" and abort — what AMD's stack does on hardware), never a hang."""
import re
import signal

import pytest

import stresskit
from conftest import BIN
from thunkkit import BASIC, HERE, hipcc, pyhip_exec


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("amdhip")
    return {name: hipcc(tmp, HERE / "src" / f"{name}.hip") for name in ("amd_compare", "amd_fault")}


ONE_MI210 = {"PYHIP_DEVICES": "gfx90a:sramecc+:xnack-"}     # ROCr 5.2 does not know the suite's second (gfx942)


def test_same_output_under_both_runtimes(built):
    amd = pyhip_exec(built["amd_compare"], BASIC, runtime="amd", PYHIP_LOG_FAULTS="1", **ONE_MI210)
    ours = pyhip_exec(built["amd_compare"], BASIC, runtime="pyhip", **ONE_MI210)
    assert amd.returncode == 0 and amd.stdout.strip().endswith("PASS"), amd.stdout + amd.stderr
    assert ours.returncode == 0 and ours.stdout == amd.stdout, ours.stdout + ours.stderr
    assert "scratch ok" in amd.stdout and "threads 300 317 334 351" in amd.stdout
    # the scratch kernel went through ROCr's dynamic scratch handler: the CP stopped the queue with error 1,
    # ROCr allocated scratch, rewrote the queue's scratch setup and resumed it
    need = re.search(r"needs (\d+) bytes of scratch per wave, the queue grants 0: queue inactive \(error 0x1\)",
                     amd.stderr)
    granted = re.search(r"resumed with (\d+) bytes of scratch per wave", amd.stderr)
    assert need and granted and int(granted.group(1)) >= int(need.group(1)), amd.stderr


@pytest.mark.parametrize("program", ["host_app", "host_api", "host_legacy"])
def test_fixture_programs_on_amds_runtime(program):
    args = [BASIC] if program == "host_api" else []
    r = pyhip_exec(BIN / "host" / program, *args, runtime="amd")
    assert r.returncode == 0 and r.stdout.strip().endswith("PASS"), r.stdout + r.stderr


@pytest.mark.parametrize("warm", [0, 3])
def test_memory_fault_is_reported_not_hung(built, warm):
    """warm = 3: the kernel ran fine three times first, so the faulting dispatch runs in native code (the
    agent and, on AMD's stack, the command processor's native loop) — reported exactly the same way."""
    ours = pyhip_exec(built["amd_fault"], warm, runtime="pyhip", timeout=120)
    assert ours.returncode == 0 and "sync: hipErrorIllegalAddress" in ours.stdout and "after: hipSuccess" in ours.stdout
    # (warm: its code compiled before its first dispatch — a small kernel's quick compile otherwise runs in the
    # background while its dispatches stay on the numpy engine, for as long as the box makes it take)
    tiering = {"PYHIP_JIT_TIERING": "quick"} if warm else {}
    amd = pyhip_exec(built["amd_fault"], warm, runtime="amd", timeout=120, PYHIP_LOG_FAULTS="1", **tiering)
    assert amd.returncode == 128 + signal.SIGABRT, amd.stdout + amd.stderr
    buffer = int(re.search(r"buffer (0x[0-9a-f]+)", amd.stdout).group(1), 16)
    want = buffer + (1 << 32)                  # p[1 << 30] of int
    report = re.search(r"pyhip: GPU fault on node 1 .*kernel=wild\(int\*, long long, int\).*lane=0; pc=0x[0-9a-f]+; "
                       r"instruction=global_store_dword .*address=(0x[0-9a-f]+)", amd.stderr)
    assert report and int(report.group(1), 16) == want, amd.stderr
    assert f"Memory access fault by GPU node-1 (Agent handle: " in amd.stderr
    # amdkfd reports the faulting page (kfd_signal_vm_fault_event: page_addr << PAGE_SHIFT), ROCr prints it
    assert f"on address {hex(want & ~0xFFF)}. Reason: Page not present or supervisor privilege." in amd.stderr
    assert (re.search(r"pyhip: KFD: queue \d+: packet \d+ faulted in native code", amd.stderr) is not None) == bool(warm)


def test_many_launches_on_amds_runtime_run_in_native_code(tmp_path):
    """tests/capi/stress.hip (8 threads x 1,000 launches on private and shared streams, cross-stream events;
    every result checked against numpy by tests/stresskit.py) on AMD's HIP + ROCr over pyhip's thunk: the KFD
    queues' command processors finish most packets in native code (PYHIP_CP_STATS)."""
    exe = hipcc(tmp_path, stresskit.SOURCE)
    n = 1000
    state0, mul = stresskit.write_inputs(tmp_path / "in.bin", seed=7)
    r = pyhip_exec(exe, n, tmp_path / "in.bin", tmp_path / "out.bin", runtime="amd", timeout=600,
                   PYHIP_CP_STATS="1", **ONE_MI210)
    assert r.returncode == 0 and f"{8 * (n + n // 100)} launches from 8 threads" in r.stdout, r.stdout + r.stderr
    stresskit.check(tmp_path / "out.bin", state0, mul, n)
    native = int(re.search(r"KFD command processors: (\d+) packets in native code", r.stderr).group(1))
    assert native >= 6000, r.stderr


def test_copies_into_neighbouring_slices_of_one_host_buffer(tmp_path):
    """tests/thunk/src/host_slices.hip on AMD's HIP: hipMemcpy to and from neighbouring unaligned slices of one
    malloc'ed buffer.  ROCclr pins each slice's page-rounded range (GPU_PINNED_MIN_XFER_SIZE lowered to 128 KiB
    so slices of ~200 KiB take that path rather than staging), so the registrations overlap: the thunk must
    accept them as libhsakmt does (it used to refuse; ROCclr then fell back to staging, or faulted in
    rocRAND's continuity tests), and the bytes must be those the kernel wrote / the host wrote."""
    exe = hipcc(tmp_path, HERE / "src" / "host_slices.hip")
    r = pyhip_exec(exe, runtime="amd", timeout=600, PYHIP_LOG_FAULTS="1", GPU_PINNED_MIN_XFER_SIZE="128",
                   **ONE_MI210)
    assert r.returncode == 0 and r.stdout.strip().endswith("PASS"), r.stdout + r.stderr
    assert "device to host slices: 0 wrong bytes" in r.stdout and "host to device slices: 0 wrong bytes" in r.stdout
    assert "hsaKmtRegisterMemory" not in r.stderr, r.stderr       # no registration refused


def test_device_malloc_on_amds_runtime(tmp_path):
    """tests/runtime/src/device_malloc.hip on AMD's HIP: 300 work-items malloc, fill, sum and free (every sum
    checked by the program); ockl's heap asks ROCclr's HostcallListener for slabs.  The wave rings the
    listener's doorbell signal — its event id stored in the signal's mailbox, then s_sendmsg(MSG_INTERRUPT) —
    which faulted while the thunk's event page was not mapped to the GPU (libhsakmt maps it)."""
    exe = hipcc(tmp_path, HERE.parent / "runtime" / "src" / "device_malloc.hip")
    r = pyhip_exec(exe, 300, runtime="amd", timeout=600, **ONE_MI210)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    assert r.stdout.strip().splitlines()[-1] == "device malloc 300: hipSuccess, 0 wrong, 0 null", r.stdout
