"""The HSA backend (pyhip/runtime/hsa/) on Debian's ROCr 5.2 over pyhip's drop-in libhsakmt — the only GPU there
is here is the emulated one, so this is how the backend that drives real GPUs is tested: the same runtime
tests, C ABI programs and kernels run with PYHIP_BACKEND=hsa and must agree with the emulator backend."""
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import BIN, require_tool
from test_device_malloc import V5_RUN, build_v5

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
HSA = {"PYHIP_BACKEND": "hsa", "PYHIP_HSA_THUNK": "pyhip",
       # two MI210s: ROCr 5.2 knows no gfx942 (nor RDNA under its KFD), multi-device tests need two GPUs
       "PYHIP_DEVICES": "gfx90a:sramecc+:xnack-,gfx90a:sramecc+:xnack-"}


# Deselected from the runtime suites on this backend: the checks of the suite's device list (4 emulated devices
# incl. gfx942/RDNA, which ROCr 5.2 does not know), and the fault tests that go on using the faulted device —
# amdkfd keeps the process's queues on it evicted (test_fault_loses_the_gpus_context_as_amdkfd_does).
RUNTIME_DESELECTED = ("not devices_properties and not no_binary and not device_stays_usable "
                      "and not scratch_overflow_faults")


def env(**extra):
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    return {**os.environ, **HSA, "PYTHONPATH": path, **extra}


def test_enumeration_values_match_the_installed_headers(tmp_path):
    """pyhip/runtime/hsa/api.py writes ROCm's enum values by hand (ABI mode needs no headers): check them."""
    from pyhip.runtime.hsa import api

    names = {"HSA_AGENT_INFO_NAME": api.AGENT_INFO_NAME, "HSA_AGENT_INFO_DEVICE": api.AGENT_INFO_DEVICE,
             "HSA_AMD_AGENT_INFO_PRODUCT_NAME": api.AMD_AGENT_INFO_PRODUCT_NAME,
             "HSA_AMD_AGENT_INFO_COMPUTE_UNIT_COUNT": api.AMD_AGENT_INFO_COMPUTE_UNIT_COUNT,
             "HSA_AMD_AGENT_INFO_DRIVER_NODE_ID": api.AMD_AGENT_INFO_DRIVER_NODE_ID,
             "HSA_ISA_INFO_NAME_LENGTH": api.ISA_INFO_NAME_LENGTH, "HSA_ISA_INFO_NAME": api.ISA_INFO_NAME,
             "HSA_AMD_MEMORY_POOL_INFO_SEGMENT": api.POOL_INFO_SEGMENT,
             "HSA_AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS": api.POOL_INFO_GLOBAL_FLAGS,
             "HSA_AMD_MEMORY_POOL_INFO_SIZE": api.POOL_INFO_SIZE,
             "HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALLOWED": api.POOL_INFO_ALLOC_ALLOWED,
             "HSA_AMD_AGENT_MEMORY_POOL_INFO_ACCESS": api.AGENT_POOL_INFO_ACCESS,
             "HSA_AMD_MEMORY_POOL_ACCESS_NEVER_ALLOWED": api.POOL_ACCESS_NEVER_ALLOWED,
             "HSA_AMD_SEGMENT_GLOBAL": api.SEGMENT_GLOBAL,
             "HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_KERNARG_INIT": api.FLAG_KERNARG_INIT,
             "HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_FINE_GRAINED": api.FLAG_FINE_GRAINED,
             "HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED": api.FLAG_COARSE_GRAINED,
             "HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT": api.SYMBOL_INFO_KERNEL_OBJECT,
             "HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_ADDRESS": api.SYMBOL_INFO_VARIABLE_ADDRESS,
             "HSA_DEVICE_TYPE_CPU": api.DEVICE_CPU, "HSA_DEVICE_TYPE_GPU": api.DEVICE_GPU,
             "HSA_QUEUE_TYPE_MULTI": api.QUEUE_TYPE_MULTI, "HSA_SIGNAL_CONDITION_LT": api.COND_LT,
             "HSA_WAIT_STATE_BLOCKED": api.WAIT_BLOCKED, "HSA_AMD_GPU_MEMORY_FAULT_EVENT": api.GPU_MEMORY_FAULT_EVENT,
             "HSA_PROFILE_FULL": api.PROFILE_FULL, "HSA_STATUS_INFO_BREAK": api.STATUS_INFO_BREAK,
             "HSA_STATUS_ERROR_MEMORY_FAULT": 43,
             "HSA_AMD_MEMORY_FAULT_PAGE_NOT_PRESENT": api.FAULT_PAGE_NOT_PRESENT,
             "HSA_AMD_MEMORY_FAULT_READ_ONLY": api.FAULT_READ_ONLY, "HSA_AMD_MEMORY_FAULT_NX": api.FAULT_NX,
             "HSA_AMD_MEMORY_FAULT_HOST_ONLY": api.FAULT_HOST_ONLY, "HSA_AMD_MEMORY_FAULT_DRAMECC": api.FAULT_DRAMECC,
             "HSA_AMD_MEMORY_FAULT_IMPRECISE": api.FAULT_IMPRECISE, "HSA_AMD_MEMORY_FAULT_SRAMECC": api.FAULT_SRAMECC,
             "(uint32_t)HSA_AMD_MEMORY_FAULT_HANG": api.FAULT_HANG,   # 1 << 31 in a uint32 mask
             "HSA_AGENT_INFO_WAVEFRONT_SIZE": api.AGENT_INFO_WAVEFRONT_SIZE,
             "HSA_AGENT_INFO_WORKGROUP_MAX_DIM": api.AGENT_INFO_WORKGROUP_MAX_DIM,
             "HSA_AGENT_INFO_WORKGROUP_MAX_SIZE": api.AGENT_INFO_WORKGROUP_MAX_SIZE,
             "HSA_AGENT_INFO_GRID_MAX_DIM": api.AGENT_INFO_GRID_MAX_DIM,
             "HSA_AGENT_INFO_CACHE_SIZE": api.AGENT_INFO_CACHE_SIZE,
             "HSA_AMD_AGENT_INFO_MAX_CLOCK_FREQUENCY": api.AMD_AGENT_INFO_MAX_CLOCK_FREQUENCY,
             "HSA_AMD_AGENT_INFO_BDFID": api.AMD_AGENT_INFO_BDFID,
             "HSA_AMD_AGENT_INFO_MEMORY_WIDTH": api.AMD_AGENT_INFO_MEMORY_WIDTH,
             "HSA_AMD_AGENT_INFO_MEMORY_MAX_FREQUENCY": api.AMD_AGENT_INFO_MEMORY_MAX_FREQUENCY,
             "HSA_AMD_AGENT_INFO_MAX_WAVES_PER_CU": api.AMD_AGENT_INFO_MAX_WAVES_PER_CU,
             "HSA_AMD_AGENT_INFO_DOMAIN": api.AMD_AGENT_INFO_DOMAIN, "HSA_AMD_SEGMENT_GROUP": api.SEGMENT_GROUP}
    src = tmp_path / "enums.c"
    src.write_text("#include <hsa/hsa.h>\n#include <hsa/hsa_ext_amd.h>\n#include <stddef.h>\n#include <stdint.h>\n#include <stdio.h>\n"
                   "int main(void) {\n" + "".join(f'  printf("{n} %lld\\n", (long long)({n}));\n' for n in names) +
                   '  printf("event %zu %zu %zu\\n", offsetof(hsa_amd_event_t, memory_fault), '
                   "offsetof(hsa_amd_gpu_memory_fault_info_t, virtual_address), "
                   "offsetof(hsa_amd_gpu_memory_fault_info_t, fault_reason_mask));\n  return 0;\n}\n")
    exe = tmp_path / "enums"
    subprocess.run([require_tool("gcc"), str(src), "-o", str(exe)], check=True, capture_output=True)
    out = dict(l.split(" ", 1) for l in subprocess.run([str(exe)], capture_output=True, text=True).stdout.splitlines())
    for n, v in names.items():
        assert int(out[n]) == v, n
    ffi = api.ffi
    assert out["event"].split() == [str(ffi.offsetof("hsa_amd_event_t", "memory_fault")),
                                    str(ffi.offsetof("hsa_amd_gpu_memory_fault_info_t", "virtual_address")),
                                    str(ffi.offsetof("hsa_amd_gpu_memory_fault_info_t", "fault_reason_mask"))]


def test_runtime_tests_on_the_hsa_backend():
    """The runtime's own tests with PYHIP_BACKEND=hsa: the API, streams' ordering, faults and recovery, a full
    queue, teardown, multi-threaded stress and kernel arguments (tests/registry needs no backend).  Deselected:
    the checks of the suite's device list (4 emulated devices incl. gfx942/RDNA, which ROCr 5.2 does not know)."""
    files = ["test_hip_api.py", "test_fault_matrix.py", "test_teardown.py", "test_stress.py",
             "test_kernargs.py"]
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-x",
                        "-k", RUNTIME_DESELECTED, *[str(HERE / f) for f in files]],
                       capture_output=True, text=True, timeout=1500, cwd=ROOT, env=env())
    assert r.returncode == 0 and " passed" in r.stdout and "failed" not in r.stdout, r.stdout[-4000:] + r.stderr[-2000:]


@pytest.mark.parametrize("quirks", ["no-svm", "small-bar", "cus=228"])
def test_runtime_tests_under_each_thunk_quirk(quirks):
    """The runtime's API, kernel-argument and teardown tests on the HSA backend over each hardware
    variation of the thunk (PYHIP_THUNK_QUIRKS): locked host memory at another GPU address (no-svm), VRAM the
    CPU cannot map (small-bar), another CU count.  Under small-bar a device array's host view is a copy, so
    the tests that write device memory through it (test_fault_matrix's flag) are not run there."""
    files = ["test_hip_api.py", "test_kernargs.py", "test_teardown.py"]
    if quirks != "small-bar":
        files += ["test_fault_matrix.py"]
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-x",
                        "-k", RUNTIME_DESELECTED, *[str(HERE / f) for f in files]],
                       capture_output=True, text=True, timeout=1500, cwd=ROOT, env=env(PYHIP_THUNK_QUIRKS=quirks))
    assert r.returncode == 0 and " passed" in r.stdout and "failed" not in r.stdout, r.stdout[-4000:] + r.stderr[-2000:]


@pytest.mark.parametrize("program, args", [("host_app", []), ("host_api", [BIN / "hipcc52/basic-gfx90a.hsaco"]),
                                           ("host_legacy", [])])
def test_c_abi_programs_on_the_hsa_backend(program, args):
    """pyhip's drop-in libamdhip64 with the HSA backend underneath (its native launch path publishes into
    ROCr's rings): the hipcc fixture programs pass as on the emulator backend."""
    r = subprocess.run([sys.executable, "-m", "pyhip", "exec", str(BIN / "host" / program), *map(str, args)],
                       capture_output=True, text=True, timeout=600, env=env(PYHIP_SHIM_STATS="1"))
    assert r.returncode == 0 and r.stdout.strip().endswith("PASS"), r.stdout + r.stderr


def test_same_output_as_the_emulator_backend(tmp_path):
    """One hipcc program (kernels with random inputs, copies, atomics, symbols, streams/events, the module API,
    four host threads, scratch, pinned memory) prints the same lines on both backends."""
    src = ROOT / "tests" / "thunk" / "src" / "amd_compare.hip"
    exe = tmp_path / "amd_compare"
    subprocess.run([require_tool("hipcc"), "--offload-arch=gfx90a", "-O2", str(src), "-o", str(exe)], check=True,
                   capture_output=True, env={**os.environ, "HIP_PLATFORM": "amd"})
    one = {"PYHIP_DEVICES": "gfx90a:sramecc+:xnack-"}
    outs = [subprocess.run([sys.executable, "-m", "pyhip", "exec", str(exe), str(BIN / "hipcc52/basic-gfx90a.hsaco")],
                           capture_output=True, text=True, timeout=600, env=e)
            for e in ({**os.environ, **one, "PYHIP_BACKEND": "emu"}, env(**one))]
    assert outs[0].returncode == 0 and outs[0].stdout.strip().endswith("PASS"), outs[0].stdout + outs[0].stderr
    assert outs[1].returncode == 0 and outs[1].stdout == outs[0].stdout, outs[1].stdout + outs[1].stderr


def test_every_device_is_driven_through_rocr():
    """The environment the other tests use really selects the HSA backend on ROCr's agents (no silent fallback)."""
    r = subprocess.run([sys.executable, "-m", "pyhip", "info"], capture_output=True, text=True, timeout=300, env=env())
    lines = [l for l in r.stdout.splitlines() if l.startswith("device ")]
    assert r.returncode == 0 and "backend: hsa" in r.stdout and len(lines) == 2, r.stdout + r.stderr
    assert all("— hsa (" in l and "ROCr node" in l for l in lines), r.stdout


def test_corpus_and_triton_kernels_on_the_hsa_backend():
    """The hipcc 5.2 / clang-19 gfx90a corpus (device math, warp ops, atomics, half/bf16, 3-D grids) and the Triton
    corpus (softmax, layer norm, reductions, tl.dot in fp32/fp16/bf16/int8 through MFMA, ...) through pyhip's loader
    and kernarg packing, launched into ROCr's queues, checked against numpy."""
    files = [ROOT / "tests" / "emu" / f for f in ("test_corpus.py", "test_corpus_isa.py", "test_triton.py")]
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-x", "-k", "gfx90a",
                        *map(str, files)],
                       capture_output=True, text=True, timeout=1500, cwd=ROOT, env=env())
    assert r.returncode == 0 and " passed" in r.stdout and "failed" not in r.stdout, r.stdout[-4000:] + r.stderr[-2000:]


@pytest.fixture(scope="module")
def native_fault(tmp_path_factory):
    src = HERE / "src" / "native_fault.hip"
    exe = tmp_path_factory.mktemp("native_fault") / "native_fault"
    subprocess.run([require_tool("hipcc"), "--offload-arch=gfx90a", "-O2", str(src), "-o", str(exe)], check=True,
                   capture_output=True, env={**os.environ, "HIP_PLATFORM": "amd"})
    return exe


@pytest.mark.parametrize("backend", ["hsa", "emu"])
def test_fault_after_native_launches_is_reported_not_hung(native_fault, backend):
    """Hundreds of repeat launches (the C ABI's native path, completing through the stream's counter signal),
    then a launch that faults while repeats are in flight: hipDeviceSynchronize returns hipErrorIllegalAddress
    within the timeout (on ROCr the counter used to be created without its queue: the wait never saw the queue
    die), and the native path does not keep publishing into the dead queue.  On the emulator backend the
    device goes on: the kernel refills the buffer and the bytes are right.  On the HSA backend the GPU's
    context is lost as amdkfd leaves it (the process's queues on it stay evicted): the launches after the
    fault fail at once with hipErrorIllegalAddress (through Python, not into the dead ring), the synchronize
    has nothing left to wait for yet still returns the sticky hipErrorIllegalAddress (as HIP does; it used to
    return hipSuccess), and the copy back fails (the program exits 4)."""
    one = {"PYHIP_DEVICES": "gfx90a:sramecc+:xnack-", "PYHIP_SHIM_STATS": "1"}
    e = env(**one) if backend == "hsa" else {**os.environ, **one, "PYHIP_BACKEND": "emu"}
    r = subprocess.run([sys.executable, "-m", "pyhip", "exec", str(native_fault), "200"], capture_output=True,
                       text=True, timeout=120, env=e)
    if backend == "emu":
        assert r.returncode == 0, r.stdout + r.stderr
        assert r.stdout.splitlines()[-4:] == ["sync: hipErrorIllegalAddress", "launch: hipSuccess", "after: hipSuccess",
                                              "values ok"], r.stdout
    else:
        assert r.returncode == 4, r.stdout + r.stderr
        assert r.stdout.splitlines()[-3:] == ["sync: hipErrorIllegalAddress", "launch: hipErrorIllegalAddress",
                                              "after: hipErrorIllegalAddress"], r.stdout
    native, python = map(int, re.search(r"pyhip shim: (\d+) native launches, (\d+) through Python", r.stderr).groups())
    if backend == "emu":
        assert native >= 500, r.stderr
    else:                   # the repeats before the fault natively, the 200 after it refused through Python
        assert native >= 350 and python >= 200, r.stderr


@pytest.mark.skipif(os.path.exists("/dev/kfd"), reason="this machine has amdgpu's KFD")
@pytest.mark.parametrize("command", [["info"], ["exec", str(BIN / "host" / "host_app")]])
def test_no_gpu_is_said_plainly(command):
    """PYHIP_BACKEND=hsa on a machine without an AMD GPU (no /dev/kfd, ROCr over the system's libhsakmt): the
    error says so and names PYHIP_HSA_THUNK=pyhip — not hipErrorOutOfMemory from hsa_init, and the program is
    not started to fail every call."""
    e = {k: v for k, v in env().items() if k != "PYHIP_HSA_THUNK"}
    r = subprocess.run([sys.executable, "-m", "pyhip", *command], capture_output=True, text=True, timeout=120, env=e)
    assert r.returncode != 0 and "PASS" not in r.stdout, r.stdout + r.stderr
    assert "hipErrorNoDevice" in r.stderr and "found no AMD GPU" in r.stderr, r.stderr
    assert "PYHIP_HSA_THUNK=pyhip" in r.stderr and "OutOfMemory" not in r.stderr, r.stderr


PYTHON_REPEATS = r"""
import sys
import numpy as np
import pyhip
from pyhip.errors import HipError
from pyhip.runtime import fastlaunch

k = pyhip.load(sys.argv[1]).kernel("atomic_at")
rng = np.random.default_rng(5)
buf = pyhip.to_device(np.zeros(4, np.int32))
base, total = int(buf.ptr), 0
for v in rng.integers(-1000, 1000, 60).tolist():
    k(1, 64, base + 4, v)                 # lane 0 adds v
    total += v
pyhip.synchronize()
assert buf.get().tolist() == [0, total, 0, 0], (buf.get(), total)
print("repeats", fastlaunch.hits(k.function))
for what in ("fault", "after", "after", "after"):
    try:
        k(1, 64, base + (2 if what == "fault" else 4), 5)
        pyhip.synchronize()
        print(what, "hipSuccess")
    except HipError as exc:
        print(what, exc.code.name)
"""


def test_python_repeats_publish_into_rocrs_queues_and_stop_at_a_fault(tmp_path):
    """Kernel calls from Python on the HSA backend: repeats are published natively into ROCr's queue (the
    entry's hit count; the sum of 60 random atomic adds checked), then a repeat that faults (a misaligned
    atomic): it and the launches after it report hipErrorIllegalAddress (the GPU's context is lost, as amdkfd
    leaves it) and none of them is published into the dead queue to hang the synchronize."""
    import relkit

    co = relkit.build(tmp_path)
    script = tmp_path / "repeats.py"
    script.write_text(PYTHON_REPEATS)
    r = subprocess.run([sys.executable, str(script), str(co)], capture_output=True, text=True, timeout=120,
                       env=env(PYHIP_DEVICES="gfx90a:sramecc+:xnack-"))
    assert r.returncode == 0, r.stdout + r.stderr
    lines = r.stdout.split()
    assert int(lines[lines.index("repeats") + 1]) == 59, r.stdout
    want = ["fault hipErrorIllegalAddress"] + ["after hipErrorIllegalAddress"] * 3
    assert r.stdout.strip().splitlines()[-4:] == want, r.stdout + r.stderr


COOPERATIVE = r"""
import sys
import numpy as np
import pyhip.hip as hip
from pyhip.errors import hipError_t as E
from pyhip._hip_enums import hipDeviceAttribute_t as A

def ok(r):
    err, *rest = r if isinstance(r, tuple) else (r,)
    assert err == E.hipSuccess, err
    return rest[0] if len(rest) == 1 else rest

m = ok(hip.hipModuleLoad(sys.argv[1]))
f = ok(hip.hipModuleGetFunction(m, "exchange"))
cus = ok(hip.hipDeviceGetAttribute(A.hipDeviceAttributeMultiprocessorCount, 0))
per_cu = ok(hip.hipOccupancyMaxActiveBlocksPerMultiprocessor(f, 64, 65536))
groups = per_cu * cus
n = groups * 64 - 5
a = np.random.default_rng(3).integers(-1000, 1000, n).astype(np.int32)
din, tmp, dout = (ok(hip.hipMalloc(n * 4)) for _ in range(3))
ok(hip.hipMemcpy(din, a, n * 4, hip.hipMemcpyKind.hipMemcpyHostToDevice))
ok(hip.hipLaunchCooperativeKernel(f, (groups, 1, 1), (64, 1, 1), [din, tmp, dout, np.int32(n)], 65536, None))
ok(hip.hipDeviceSynchronize())
out = np.zeros(n, np.int32)
ok(hip.hipMemcpy(out, dout, n * 4, hip.hipMemcpyKind.hipMemcpyDeviceToHost))
assert np.array_equal(out, np.roll(a * 3, -(n // 2 + 1))), "grid.sync exchange"
too_many = hip.hipLaunchCooperativeKernel(f, (groups + 1, 1, 1), (64, 1, 1), [din, tmp, dout, np.int32(n)], 65536, None)
print("cus", cus, "per_cu", per_cu, "groups", groups, "one more:", E(too_many[0] if isinstance(too_many, tuple) else too_many).name)
"""


@pytest.mark.parametrize("cus", [228, 20])
def test_properties_and_cooperative_launches_from_the_agent(tmp_path, cus):
    """PYHIP_THUNK_QUIRKS=cus=N: the emulated KFD reports N CUs (an MI300A's 228, a small partition's 20)
    instead of the board's 104.  The HSA backend's properties come from ROCr's agent (CUs, name, clocks,
    memory, limits — checked against `pyhip info` and the agent), so hipDeviceGetAttribute reports N and a
    cooperative launch of occupancy x N work-groups (one per CU: each needs the whole LDS) runs its grid.sync()
    to the right bytes, while one group more is hipErrorCooperativeLaunchTooLarge."""
    co = tmp_path / "coop_fill.co"
    subprocess.run([require_tool("hipcc"), "--genco", "--offload-arch=gfx90a", str(HERE / "src" / "coop_fill.hip"),
                    "-o", str(co)], check=True, capture_output=True, env={**os.environ, "HIP_PLATFORM": "amd"})
    e = env(PYHIP_DEVICES="gfx90a:sramecc+:xnack-", PYHIP_THUNK_QUIRKS=f"cus={cus}")
    r = subprocess.run([sys.executable, "-c", COOPERATIVE, str(co)], capture_output=True, text=True, timeout=600,
                       env=e)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.split() == ["cus", str(cus), "per_cu", "1", "groups", str(cus), "one", "more:",
                                "hipErrorCooperativeLaunchTooLarge"], r.stdout
    info = subprocess.run([sys.executable, "-m", "pyhip", "info"], capture_output=True, text=True, timeout=300, env=e)
    assert f" {cus} CUs " in info.stdout and "— hsa (" in info.stdout, info.stdout + info.stderr


def test_device_properties_are_the_agents():
    """Every property the backend takes from ROCr's agent agrees with the KFD topology the agent was made from
    (pyhip's thunk in this process: its node properties are the independent source) — and differs from the
    emulator preset where the topology does (the PCI location)."""
    script = r"""
import pyhip.runtime.context as c
from pyhip.thunk.entry import current
d = c.runtime().devices[0]
p, g = d.props, current().topology.gpu(d.backend.agent.node)
node = current().topology.node_properties(g.node_id)
banks = current().topology.memory_banks(g.node_id, current().apertures(g.node_id))
caches = current().topology.caches(g.node_id)
assert p.name == node["MarketingName"], p.name
assert p.multiProcessorCount == node["NumFComputeCores"] // node["NumSIMDPerCU"] == 96
assert p.clockRate == node["MaxEngineClockMhzFCompute"] * 1000
assert p.memoryClockRate == banks[0]["MemoryClockMax"] * 1000 and p.memoryBusWidth == banks[0]["Width"]
assert p.totalGlobalMem == banks[0]["SizeInBytes"]
assert p.l2CacheSize == next(x["CacheSize"] for x in caches if x["CacheLevel"] == 2) * 1024
assert p.sharedMemPerBlock == node["LDSSizeInKB"] * 1024
assert p.maxThreadsPerMultiProcessor == node["MaxWavesPerSIMD"] * node["NumSIMDPerCU"] * 64
assert p.pciBusID == (node["LocationId"] >> 8) & 0xFF != 1
print("ok")
"""
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300,
                       env=env(PYHIP_DEVICES="gfx90a:sramecc+:xnack-", PYHIP_THUNK_QUIRKS="cus=96"))
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stdout + r.stderr


@pytest.fixture(scope="module")
def recursion(tmp_path_factory):
    src, tmp = HERE / "src" / "recursion.hip", tmp_path_factory.mktemp("recursion")
    hip_env = {**os.environ, "HIP_PLATFORM": "amd"}
    subprocess.run([require_tool("hipcc"), "--offload-arch=gfx90a", "-O2", str(src), "-o", str(tmp / "recursion")],
                   check=True, capture_output=True, env=hip_env)
    subprocess.run([require_tool("hipcc"), "--genco", "--offload-arch=gfx90a", "-O2", str(src), "-o",
                    str(tmp / "recursion.co")], check=True, capture_output=True, env=hip_env)
    return tmp


# the default engine: the compiled code's indirect calls land on the code object's functions (STT_FUNC)
RECURSION_ENV = {"PYHIP_DEVICES": "gfx90a:sramecc+:xnack-"}


def _backend_env(backend):
    return env(**RECURSION_ENV) if backend == "hsa" else {**os.environ, **RECURSION_ENV, "PYHIP_BACKEND": "emu"}


@pytest.mark.parametrize("backend", ["hsa", "emu"])
@pytest.mark.parametrize("depth, fits", [(300, True), (600, False)])
def test_dynamic_stack_gets_the_scratch_amd_sizes(recursion, backend, depth, fits):
    """A recursive kernel (uses_dynamic_stack; hipcc 5.2 puts 16 KiB + its frame in private_segment_fixed_size)
    gets the scratch AMD's runtime gives it, max(stack size limit 1 KiB, fixed size) per work-item, on both
    backends: 300 levels of 48-byte frames fit and are right against the host's recursion; 600 overflow it
    and fault, as they would on hardware — the emulator no longer adds 16 KiB that hid the overflow."""
    r = subprocess.run([sys.executable, "-m", "pyhip", "exec", str(recursion / "recursion"), str(depth)],
                       capture_output=True, text=True, timeout=600, env=_backend_env(backend))
    assert r.returncode == 0 and "stack limit 1024" in r.stdout, r.stdout + r.stderr
    verdict = r.stdout.strip().splitlines()[-1]
    if fits:
        assert verdict == f"recursion depth {depth}..{depth + 3}: hipSuccess, 0 wrong", r.stdout + r.stderr
    else:
        assert "hipErrorIllegalAddress" in verdict, r.stdout + r.stderr


STACK_LIMIT = r"""
import sys
import numpy as np
import pyhip.hip as hip
from pyhip.errors import hipError_t as E
from pyhip.runtime.context import runtime

def ok(r):
    err, *rest = r if isinstance(r, tuple) else (r,)
    assert err == E.hipSuccess, err
    return rest[0] if len(rest) == 1 else rest

def walk(v, i, depth):                               # wraps like the device's 64-bit arithmetic
    local = [v[(i + k * depth) & 1023] ^ depth for k in range(4)]
    if depth == 0:
        return local[0]
    x = (walk(v, i + 1, depth - 1) * 3 + local[depth & 3] - local[(depth + 1) & 3]) & (2**64 - 1)
    return x - 2**64 if x >= 2**63 else x

sys.setrecursionlimit(10000)
dev = runtime().device()
dev.set_stack_size(int(sys.argv[2]))                 # hipDeviceSetLimit(hipLimitStackSize) of newer HIP
m = ok(hip.hipModuleLoad(sys.argv[1]))
f = ok(hip.hipModuleGetFunction(m, "recurse"))
n, depth = 100, 600
v = np.random.default_rng(5).integers(-1000, 1000, 1024).astype(np.int32)
dv, dout = ok(hip.hipMalloc(v.nbytes)), ok(hip.hipMalloc(n * 8))
ok(hip.hipMemcpy(dv, v, v.nbytes, hip.hipMemcpyKind.hipMemcpyHostToDevice))
ok(hip.hipModuleLaunchKernel(f, 2, 1, 1, 64, 1, 1, 0, None, [dv, dout, np.int32(n), np.int32(depth)], None))
err = hip.hipDeviceSynchronize()
err = err[0] if isinstance(err, tuple) else err
out = np.zeros(n, np.int64)
hip.hipMemcpy(out, dout, n * 8, hip.hipMemcpyKind.hipMemcpyDeviceToHost)
want = np.array([walk([int(x) for x in v], i, depth + (i & 3)) for i in range(n)], np.int64)
print(E(err).name, int((out != want).sum()), "wrong")
"""


@pytest.mark.parametrize("backend", ["hsa", "emu"])
def test_stack_size_limit_sizes_a_deep_recursion(recursion, backend):
    """With the device's stack size limit raised to 32 KiB (above the kernel's fixed 16 KiB + frame), AMD's
    sizing max(limit, fixed) covers 600 levels: the same kernel that faults with the default limit runs
    right on both backends."""
    r = subprocess.run([sys.executable, "-c", STACK_LIMIT, str(recursion / "recursion.co"), "32768"],
                       capture_output=True, text=True, timeout=600, env=_backend_env(backend))
    assert r.returncode == 0 and r.stdout.split() == ["hipSuccess", "0", "wrong"], r.stdout + r.stderr


@pytest.mark.parametrize("quirks, same", [("no-svm", False), ("", True)])
def test_pinned_memory_through_the_address_rocr_returns(tmp_path, quirks, same):
    """tests/thunk/src/pinned_alias.hip: hipHostRegister'ed memory used by a kernel through
    hipHostGetDevicePointer, then as the source and destination of copies.  Without SVM (no-svm) ROCr's
    hsa_amd_memory_lock returns another address than the host's and the backend uses it (it used to refuse
    the lock with hipErrorNotSupported); with SVM it is the host address."""
    exe = tmp_path / "pinned_alias"
    subprocess.run([require_tool("hipcc"), "--offload-arch=gfx90a", "-O2", str(ROOT / "tests" / "thunk" / "src" /
                    "pinned_alias.hip"), "-o", str(exe)], check=True, capture_output=True,
                   env={**os.environ, "HIP_PLATFORM": "amd"})
    r = subprocess.run([sys.executable, "-m", "pyhip", "exec", str(exe)], capture_output=True, text=True,
                       timeout=300, env=env(PYHIP_DEVICES="gfx90a:sramecc+:xnack-", PYHIP_THUNK_QUIRKS=quirks))
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.splitlines() == [f"device pointer {'is' if same else 'is not'} the host address",
                                     "kernel through the device pointer: hipSuccess; 0 wrong"], r.stdout


def test_small_bar_host_access_goes_through_copies():
    """PYHIP_THUNK_QUIRKS=small-bar: VRAM is not CPU-mapped (a CPU access would fault), so the backend's host
    view of a device allocation is a copy, not the memory, and hipMemcpy/hipMemset still give the right bytes."""
    script = r"""
import numpy as np
import pyhip.hip as hip
from pyhip.runtime.context import runtime
from pyhip.emu.memory import host_range_mapped
err, d = hip.hipMalloc(10000)
a = np.random.default_rng(9).integers(-99, 99, 2500).astype(np.int32)
hip.hipMemcpy(d, a, a.nbytes, hip.hipMemcpyKind.hipMemcpyHostToDevice)
hip.hipMemset(int(d) + 400, 7, 40)
b = np.zeros_like(a)
hip.hipMemcpy(b, d, b.nbytes, hip.hipMemcpyKind.hipMemcpyDeviceToHost)
want = a.copy(); want.view(np.uint8)[400:440] = 7
be = runtime().device().backend
view = be.host_view(int(d), 16)
print(host_range_mapped(int(d), 1), view.readonly, np.array_equal(b, want))
"""
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300,
                       env=env(PYHIP_DEVICES="gfx90a:sramecc+:xnack-", PYHIP_THUNK_QUIRKS="small-bar"))
    assert r.returncode == 0 and r.stdout.split() == ["False", "True", "True"], r.stdout + r.stderr


LOST = r"""
import sys
import numpy as np
import pyhip.hip as hip
from pyhip.errors import hipError_t as E

def ok(r):
    err, *rest = r if isinstance(r, tuple) else (r,)
    assert err == E.hipSuccess, E(err).name
    return rest[0] if len(rest) == 1 else (rest or None)

def name(r):
    return E(r[0] if isinstance(r, tuple) else r).name

m = ok(hip.hipModuleLoad(sys.argv[1]))
f = ok(hip.hipModuleGetFunction(m, "scale<int>"))
n = 1000
a = np.random.default_rng(4).integers(-999, 999, n).astype(np.int32)
d = ok(hip.hipMalloc(n * 4))
ok(hip.hipMemcpy(d, a, n * 4, hip.hipMemcpyKind.hipMemcpyHostToDevice))
s1, s2 = ok(hip.hipStreamCreate()), ok(hip.hipStreamCreate())
ev = ok(hip.hipEventCreate())
ok(hip.hipModuleLaunchKernel(f, 4, 1, 1, 256, 1, 1, 0, s1, [np.uint64(0x1000), np.int32(3), np.int32(n)], None))
ok(hip.hipEventRecord(ev, s1))
ok(hip.hipStreamWaitEvent(s2, ev, 0))                    # s2's kernel is queued behind the faulting one
ok(hip.hipModuleLaunchKernel(f, 4, 1, 1, 256, 1, 1, 0, s2, [d, np.int32(3), np.int32(n)], None))
print("s1:", name(hip.hipStreamSynchronize(s1)))
print("why:", hip.last_exception(), file=sys.stderr)
print("s2:", name(hip.hipStreamSynchronize(s2)))
print("again:", name(hip.hipStreamSynchronize(s1)))
print("launch:", name(hip.hipModuleLaunchKernel(f, 4, 1, 1, 256, 1, 1, 0, s2, [d, np.int32(3), np.int32(n)], None)))
print("then:", hip.last_exception(), file=sys.stderr)
out = np.zeros(n, np.int32)
print("copy:", name(hip.hipMemcpy(out, d, n * 4, hip.hipMemcpyKind.hipMemcpyDeviceToHost)))
ok(hip.hipSetDevice(1))                                  # the process's other GPU was not evicted
m1 = ok(hip.hipModuleLoad(sys.argv[1]))
f1 = ok(hip.hipModuleGetFunction(m1, "scale<int>"))
d1 = ok(hip.hipMalloc(n * 4))
ok(hip.hipMemcpy(d1, a, n * 4, hip.hipMemcpyKind.hipMemcpyHostToDevice))
ok(hip.hipModuleLaunchKernel(f1, 4, 1, 1, 256, 1, 1, 0, None, [d1, np.int32(3), np.int32(n)], None))
ok(hip.hipDeviceSynchronize())
ok(hip.hipMemcpy(out, d1, n * 4, hip.hipMemcpyKind.hipMemcpyDeviceToHost))
print("device 1:", "ok" if np.array_equal(out, a * 3) else "WRONG")
"""


def test_fault_loses_the_gpus_context_as_amdkfd_does():
    """A kernel reading an unmapped page: amdkfd evicts every queue of the process on that GPU for good
    (kfd_dqm_evict_pasid; later queues are created evicted) and ROCr's handler reports the first fault only.
    The backend reports hipErrorIllegalAddress naming the kernel; the other stream's kernel queued behind it
    (hipStreamWaitEvent) is lost with it — on hardware it never runs either — and says so with the same
    error; later launches and copies on that GPU fail at once (no hang on a queue that never runs), while
    the process's other GPU still computes the right bytes."""
    r = subprocess.run([sys.executable, "-c", LOST, str(BIN / "hipcc52/basic-gfx90a.hsaco")], capture_output=True,
                       text=True, timeout=300, env=env())
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.splitlines() == ["s1: hipErrorIllegalAddress", "s2: hipErrorIllegalAddress",
                                     "again: hipSuccess", "launch: hipErrorIllegalAddress",
                                     "copy: hipErrorIllegalAddress", "device 1: ok"], r.stdout + r.stderr
    why = re.search(r"^why: (.*)$", r.stderr, re.M).group(1)
    assert "hipErrorIllegalAddress" in why and "scale<int>" in why and "0x1000" in why, r.stderr
    assert "lost its context" in re.search(r"^then: (.*)$", r.stderr, re.M).group(1), r.stderr


@pytest.fixture(scope="module")
def hip_programs(tmp_path_factory):
    tmp, hip_env = tmp_path_factory.mktemp("hip_programs"), {**os.environ, "HIP_PLATFORM": "amd"}
    for src in (HERE / "src" / "device_malloc.hip", ROOT / "tests" / "capi" / "kernel_api.hip"):
        subprocess.run([require_tool("hipcc"), "--offload-arch=gfx90a", "-O2", str(src), "-o", str(tmp / src.stem)],
                       check=True, capture_output=True, env=hip_env)
    build_v5(tmp)
    return tmp


@pytest.mark.parametrize("quirks", ["", "no-svm"])
def test_device_printf_and_malloc_on_the_hsa_backend(hip_programs, quirks):
    """Hostcalls on ROCr's queues, served as on a real GPU by the device's listener thread (woken through the
    doorbell signal's event by the wave's s_sendmsg interrupt; the emulator's s_sleep hook is not set): device
    printf (120 lines, each equal to the host C library's for the same format and values) and device malloc/free in
    300 work-items (ockl's heap asks the host for 2 MiB slabs through SERVICE_DEVMEM; every sum checked on the
    host). Both used to spin until the watchdog: a kernel ROCr loaded had no metadata, so its hostcall buffer was
    never served; the slabs must be 2 MiB aligned as libhsakmt aligns VRAM (ockl finds a slab's header by rounding
    down). Under no-svm the hostcall buffer is ROCr's system memory, which the GPU reaches at its host address (a
    locked numpy buffer faulted). A code object V5 kernel's malloc finds the heap state in hidden_heap_v1 (it used
    to get 0).
    """
    e = env(PYHIP_DEVICES="gfx90a:sramecc+:xnack-", PYHIP_THUNK_QUIRKS=quirks)
    r = subprocess.run([sys.executable, "-m", "pyhip", "exec", str(hip_programs / "kernel_api"), "printf"],
                       capture_output=True, text=True, timeout=600, env=e)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    lines = r.stdout.splitlines()
    device = lines[lines.index("BEFORE") + 1:lines.index("AFTER")]
    assert len(device) == 120 and device == [l[4:] for l in lines if l.startswith("REF ")], r.stdout[-3000:]
    r = subprocess.run([sys.executable, "-m", "pyhip", "exec", str(hip_programs / "device_malloc"), "300"],
                       capture_output=True, text=True, timeout=600, env=e)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.strip().splitlines()[-1] == "device malloc 300: hipSuccess, 0 wrong, 0 null", r.stdout + r.stderr
    r = subprocess.run([sys.executable, "-c", V5_RUN + LISTENED, str(hip_programs / "device_malloc-v5.hsaco")],
                       capture_output=True, text=True, timeout=600, env=e)
    assert r.returncode == 0, r.stdout + r.stderr
    out = r.stdout.split()
    assert out[:5] == ["hipSuccess", "0", "wrong", "0", "null"] and out[5:7] == ["hook", "None"], r.stdout + r.stderr
    assert int(out[8]) > 0, r.stdout          # the doorbell's interrupts woke the listener


# served as on a real GPU: no s_sleep hook on the emulated GPU, the device's listener woke up on its doorbell
LISTENED = r"""
from pyhip.runtime.hsa.system import HsaSystem
from pyhip.thunk.entry import current
print("hook", next(iter(current().gpus.values())).sleep_hook)
print("woken", sum(b._hostcalls.served for b in HsaSystem.get().backends.values() if b._hostcalls))
"""


@pytest.mark.parametrize("quirks", ["", "no-svm"])
def test_multi_device_cooperative_launch_with_peer_access(hip_programs, quirks):
    """tests/capi/kernel_api.hip's multi part on two GPUs: hipDeviceEnablePeerAccess both ways, then a
    cooperative multi-device launch whose kernels write their own buffer, meet in multi_grid.sync() and read
    the other GPU's buffer.  Peer access is ROCr's hsa_amd_agents_allow_access on the peer's VRAM (it used to
    be refused on this backend, and the reads faulted); the multi-grid sync blocks are in ROCr's system memory,
    so without SVM the kernels still reach them at their host address (they faulted under no-svm)."""
    r = subprocess.run([sys.executable, "-m", "pyhip", "exec", str(hip_programs / "kernel_api"), "multi"],
                       capture_output=True, text=True, timeout=600, env=env(PYHIP_THUNK_QUIRKS=quirks))
    assert r.returncode == 0 and r.stdout.rstrip().endswith("PASS"), r.stdout[-2000:] + r.stderr[-2000:]
    assert "hipLaunchCooperativeKernelMultiDevice: ok" in r.stdout and "multi-grid sync data: ok" in r.stdout, \
        r.stdout


PEER = r"""
import pyhip.hip as hip
from pyhip.errors import hipError_t as E
print(hip.hipDeviceCanAccessPeer(0, 1)[1], hip.hipDeviceCanAccessPeer(1, 0)[1], hip.hipDeviceCanAccessPeer(0, 0)[1],
      E(hip.hipDeviceEnablePeerAccess(1, 0)[0]).name)
"""


@pytest.mark.parametrize("quirks, reachable", [("", True), ("no-p2p", False)])
def test_peer_access_as_rocr_allows_it(quirks, reachable):
    """hipDeviceCanAccessPeer asks ROCr whether one GPU's agent may access the other's VRAM pool: over the
    thunk's peer-to-peer PCIe links it may (and enabling succeeds); with no-p2p (no GPU-GPU links, ROCr:
    never allowed) the answer is 0 and hipDeviceEnablePeerAccess fails with hipErrorInvalidDevice, as AMD's
    HIP does on such a board."""
    r = subprocess.run([sys.executable, "-c", PEER], capture_output=True, text=True, timeout=300,
                       env=env(PYHIP_THUNK_QUIRKS=quirks))
    want = ["1", "1", "0", "hipSuccess"] if reachable else ["0", "0", "0", "hipErrorInvalidDevice"]
    assert r.returncode == 0 and r.stdout.split() == want, r.stdout + r.stderr


STAGED = r"""
import numpy as np
import pyhip.hip as hip
from pyhip.errors import hipError_t as E
from pyhip.runtime.hsa.staging import CHUNK
from pyhip.runtime.hsa.system import HsaSystem
from pyhip.thunk.entry import current

def ok(r):
    err, *rest = r if isinstance(r, tuple) else (r,)
    assert err == E.hipSuccess, E(err).name
    return rest[0] if len(rest) == 1 else (rest or None)

rng = np.random.default_rng()
n = 2 * CHUNK + int(rng.integers(1, CHUNK))          # two full chunks and a short one
src = rng.integers(0, 256, n, dtype=np.uint8)
d = ok(hip.hipMalloc(n + 64))
ok(hip.hipMemset(d, 0x5A, n + 64))
ok(hip.hipMemcpy(d, src, n, hip.hipMemcpyKind.hipMemcpyHostToDevice))        # pageable -> device
gpu = np.frombuffer(next(iter(current().gpus.values())).memory.read(int(d), n + 64), np.uint8)  # what the GPU sees
back = np.full(n, 0xC3, np.uint8)                                             # poisoned destination
s = ok(hip.hipStreamCreate())
off = int(rng.integers(1, 4096))
ok(hip.hipMemcpyAsync(back[off:], int(d) + off, n - off, hip.hipMemcpyKind.hipMemcpyDeviceToHost, s))
ok(hip.hipStreamSynchronize(s))
ok(hip.hipMemcpy(back[:off], d, off, hip.hipMemcpyKind.hipMemcpyDeviceToHost))
chunks = sum(b.staging.chunks for b in HsaSystem.get().backends.values())
print("h2d", int((gpu[:n] != src).sum()), "tail", int((gpu[n:] != 0x5A).sum()), "d2h", int((back != src).sum()),
      "chunks", chunks == -(-n // CHUNK) + -(-(n - off) // CHUNK) + 1)
"""


@pytest.mark.parametrize("quirks", ["small-bar", "no-svm"])
def test_pageable_copies_go_through_staging_buffers(quirks):
    """hipMemcpy(Async) between pageable host memory and device memory moves through the device's pinned
    staging buffers by DMA (hsa_amd_memory_async_copy, chunk by chunk, runtime/hsa/staging.py), as AMD's runtime
    does, instead of a host callback touching device memory: a random size of two chunks and a short one, the
    device's bytes read by the emulated GPU itself (not by ROCr's DMA back), a poisoned destination read back
    in two copies at a random split (the first asynchronous), the number of chunks the staging moved counted —
    behind a small BAR (VRAM the CPU cannot map) and without SVM."""
    r = subprocess.run([sys.executable, "-c", STAGED], capture_output=True, text=True, timeout=300,
                       env=env(PYHIP_DEVICES="gfx90a:sramecc+:xnack-", PYHIP_THUNK_QUIRKS=quirks))
    assert r.returncode == 0 and r.stdout.split() == ["h2d", "0", "tail", "0", "d2h", "0", "chunks", "True"], \
        r.stdout + r.stderr


PINNED = r"""
import numpy as np
import pyhip.hip as hip
from pyhip.errors import hipError_t as E
from pyhip.runtime.hsa.backend import HsaDeviceBackend
from pyhip.runtime.hsa.queues import HsaQueueBackend
from pyhip.runtime.hsa.system import HsaSystem
from pyhip.thunk.entry import current

dma = []
real = HsaQueueBackend.copy
def counted(self, dst, src, size, host=(False, False)):
    dma.append(host)
    return real(self, dst, src, size, host)
HsaQueueBackend.copy = counted

def ok(r):
    err, *rest = r if isinstance(r, tuple) else (r,)
    assert err == E.hipSuccess, E(err).name
    return rest[0] if len(rest) == 1 else (rest or None)

K = hip.hipMemcpyKind
rng = np.random.default_rng()
n = int(rng.integers(100_000, 300_000))
src = rng.integers(0, 256, n, dtype=np.uint8)
h = ok(hip.hipHostMalloc(n, 0))                               # ROCr's fine-grained system memory
h.array[:] = src
reg = np.full(n + 8192, 0xC3, np.uint8)                       # pageable, then registered (no-svm: another GPU address)
ok(hip.hipHostRegister(reg, reg.nbytes, 0))
d = ok(hip.hipMalloc(n + 64))
ok(hip.hipMemset(d, 0x5A, n + 64))
s = ok(hip.hipStreamCreate())
ok(hip.hipMemcpyAsync(d, h, n, K.hipMemcpyHostToDevice, s))                    # pinned -> device
ok(hip.hipStreamSynchronize(s))
gpu = np.frombuffer(next(iter(current().gpus.values())).memory.read(int(d), n + 64), np.uint8)   # the GPU's bytes
off = int(rng.integers(1, 4096))
ok(hip.hipMemcpyAsync(reg[off:].ctypes.data, d, n, K.hipMemcpyDeviceToHost, s))  # device -> registered, inside
ok(hip.hipStreamSynchronize(s))
h.array[:] = 0xE7
ok(hip.hipMemcpy(h, reg[off:].ctypes.data, n, K.hipMemcpyHostToHost))         # pinned -> pinned (a host copy)
chunks = sum(b.staging.chunks for b in HsaSystem.get().backends.values())
print("h2d", int((gpu[:n] != src).sum()), "tail", int((gpu[n:] != 0x5A).sum()),
      "d2h", int((reg[off:off + n] != src).sum()), "edges", int((reg[:off] != 0xC3).sum() + (reg[off + n:] != 0xC3).sum()),
      "h2h", int((h.array[:n] != src).sum()), "dma", dma == [(False, True), (True, False)], "staged", chunks)
"""


@pytest.mark.parametrize("quirks", ["", "small-bar", "no-svm"])
def test_pinned_copies_are_dma_in_stream_order(quirks):
    """Copies between pinned host memory (hipHostMalloc'ed, and hipHostRegister'ed — without SVM its GPU
    address is not its host address) and device memory are ROCr DMA (hsa_amd_memory_async_copy, the CPU agent named as the pinned
    side's owner) from the stream's queue, as AMD's runtime makes them: not staged, not a host callback
    touching VRAM. Random sizes and offsets, poisoned destinations, the device's bytes read by the emulated GPU
    itself, the DMA calls and their host sides counted."""
    r = subprocess.run([sys.executable, "-c", PINNED], capture_output=True, text=True, timeout=300,
                       env=env(PYHIP_DEVICES="gfx90a:sramecc+:xnack-", PYHIP_THUNK_QUIRKS=quirks))
    assert r.returncode == 0 and r.stdout.split() == ["h2d", "0", "tail", "0", "d2h", "0", "edges", "0", "h2h", "0",
                                                      "dma", "True", "staged", "0"], r.stdout + r.stderr


HDP = r"""
import numpy as np
import pyhip.hip as hip
from pyhip.errors import hipError_t as E
from pyhip.runtime.hsa.system import HsaSystem
from pyhip.thunk.entry import current

def ok(r):
    err, *rest = r if isinstance(r, tuple) else (r,)
    assert err == E.hipSuccess, E(err).name
    return rest[0] if len(rest) == 1 else (rest or None)

K = hip.hipMemcpyKind
rng = np.random.default_rng()
w, h = int(rng.integers(40, 200)), int(rng.integers(3, 9))
d, pitch = ok(hip.hipMallocPitch(w, h))                     # (starts the runtime, ROCr and the thunk)
ok(hip.hipDeviceSynchronize())
kfd = current()
backend = next(iter(HsaSystem.get().backends.values()))
node = backend.agent.node
gpu = kfd.gpus[node]
print("register", backend.agent.info["hdp_mem_flush"] == kfd.mmio[node])
flushes = lambda: kfd.hdp_flush_count(node)
steps = []
before = flushes()
src = rng.integers(0, 256, (h, w + 16), dtype=np.uint8)
ok(hip.hipMemcpy2D(d, pitch, src, w + 16, w, h, K.hipMemcpyHostToDevice))      # host writes rows into VRAM
seen = np.frombuffer(gpu.memory.read(int(d), pitch * h), np.uint8).reshape(h, pitch)[:, :w]   # the GPU's bytes
steps.append(("copy2d", flushes() - before, int((seen != src[:, :w]).sum())))
before = flushes()
back = np.full((h, w), 0xC3, np.uint8)
ok(hip.hipMemcpy2D(back, w, d, pitch, w, h, K.hipMemcpyDeviceToHost))          # reads only: no flush
steps.append(("read2d", flushes() - before, int((back != src[:, :w]).sum())))
before = flushes()
v = int(rng.integers(1, 255))
ok(hip.hipMemset2D(d, pitch, v, w, h))                                          # host fill of the rows
seen = np.frombuffer(gpu.memory.read(int(d), pitch * h), np.uint8).reshape(h, pitch)[:, :w]
steps.append(("memset2d", flushes() - before, int((seen != v).sum())))
before = flushes()
s = ok(hip.hipStreamCreate())
word = int(rng.integers(1, 1 << 31))
ok(hip.hipStreamWriteValue32(s, d, word, 0))
ok(hip.hipStreamSynchronize(s))
steps.append(("writevalue", flushes() - before, int(np.frombuffer(gpu.memory.read(int(d), 4), np.uint32)[0] != word)))
for name, n, wrong in steps:
    print(name, n, wrong)
"""


def test_hdp_flush_after_host_writes_into_vram():
    """The thunk reports each GPU's MMIO remap page (libhsakmt's MMIO aperture, where amdkfd maps the HDP flush
    registers) and ROCr hands it out as HSA_AMD_AGENT_INFO_HDP_FLUSH; the backend writes HDP_MEM_FLUSH_CNTL after
    host writes into VRAM through the CPU's mapping, as AMD's HIP does, and not after reads: a pitched copy
    host->device (random sizes), a read back, a 2-D memset and a stream write-value, each checked against the
    GPU's own bytes, with the flushes the thunk counted during each step.  Without the backend's flush the
    host-write steps count 0."""
    r = subprocess.run([sys.executable, "-c", HDP], capture_output=True, text=True, timeout=300,
                       env=env(PYHIP_DEVICES="gfx90a:sramecc+:xnack-"))
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.split() == ["register", "True", "copy2d", "1", "0", "read2d", "0", "0", "memset2d", "1", "0",
                                "writevalue", "1", "0"], r.stdout + r.stderr
