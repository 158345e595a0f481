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

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
HSA = {"PYHIP_BACKEND": "hsa", "PYHIP_HSA_THUNK": "pyhip",
       # two MI210s: ROCr 5.2 knows no gfx942 (nor RDNA under its KFD), multi-device tests need two GPUs
       "PYHIP_DEVICES": "gfx90a:sramecc+:xnack-,gfx90a:sramecc+:xnack-"}


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
             "HSA_STATUS_ERROR_MEMORY_FAULT": 43}
    src = tmp_path / "enums.c"
    src.write_text("#include <hsa/hsa.h>\n#include <hsa/hsa_ext_amd.h>\n#include <stddef.h>\n#include <stdio.h>\n"
                   "int main(void) {\n" + "".join(f'  printf("{n} %d\\n", (int)({n}));\n' for n in names) +
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
    queue, teardown, multi-threaded stress, registration and kernel arguments.  Deselected: the checks of
    the suite's device list (4 emulated devices incl. gfx942/RDNA, which ROCr 5.2 does not know)."""
    files = ["test_hip_api.py", "test_fault_matrix.py", "test_teardown.py", "test_stress.py", "test_registry.py",
             "test_kernargs.py"]
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-x",
                        "-k", "not devices_properties and not no_binary", *[str(HERE / f) for f in files]],
                       capture_output=True, text=True, timeout=1500, cwd=ROOT, env=env())
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
    die), and the native path does not keep publishing into the dead queue — the kernel refills the buffer
    and the bytes are right."""
    one = {"PYHIP_DEVICES": "gfx90a:sramecc+:xnack-", "PYHIP_SHIM_STATS": "1"}
    e = env(**one) if backend == "hsa" else {**os.environ, **one, "PYHIP_BACKEND": "emu"}
    r = subprocess.run([sys.executable, "-m", "pyhip", "exec", str(native_fault), "200"], capture_output=True,
                       text=True, timeout=120, env=e)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.splitlines()[-3:] == ["sync: hipErrorIllegalAddress", "after: hipSuccess", "values ok"], r.stdout
    native = int(re.search(r"pyhip shim: (\d+) native launches", r.stderr).group(1))
    assert native >= 500, r.stderr


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
