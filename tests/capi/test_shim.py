"""The drop-in libamdhip64.so.5 (cffi embedding): exports and version nodes exactly as HIP 5.2's, and
unmodified hipcc-built programs run on the emulated GPU through ``pyhip exec``."""
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import BIN, require_tool

DOCS = Path(__file__).resolve().parents[2].parent / "shared" / "docs" / "hip-symbol-versions.txt"


@pytest.fixture(scope="module")
def shim():
    from pyhip.capi.shim import shim_path
    return shim_path() / "libamdhip64.so.5"


def test_exports_and_version_nodes_match_hip_5_2(shim):
    out = subprocess.run([require_tool("readelf"), "--dyn-syms", "--wide", str(shim)], capture_output=True,
                         text=True, check=True).stdout
    ours = set(re.findall(r"FUNC\s+GLOBAL\s+DEFAULT\s+\d+\s+(\S+)@@(hip_[\d.]+)", out))
    from pyhip.capi.shim import NATIVE
    ref = set()
    for line in (NATIVE / "exports.txt").read_text().splitlines():
        if line and not line.startswith("#"):
            node, name, _ = line.split()
            ref.add((name, node))
    assert len(ref) == 409 and ours == ref
    if DOCS.exists():                        # the generated list against the reference document itself
        text = DOCS.read_text().split("## B.")[0]
        doc_names = {l.split()[0] for l in text.splitlines() if l and not l.startswith(("#", "[", " "))}
        assert doc_names == {n for n, _ in ref}
    dyn = subprocess.run([require_tool("readelf"), "-d", str(shim)], capture_output=True, text=True).stdout
    assert "Library soname: [libamdhip64.so.5]" in dyn


def _exec(prog):
    return subprocess.run([sys.executable, "-m", "pyhip", "exec", str(prog)], capture_output=True, text=True,
                          timeout=300)


def test_unmodified_host_program_runs():
    r = _exec(BIN / "host/host_app")             # <<<>>>, hipLaunchKernelGGL, hipMemcpyToSymbol, streams
    assert r.returncode == 0 and r.stdout.strip().endswith("PASS"), r.stdout + r.stderr


def test_error_paths_through_the_c_abi():
    """Under memcheck: the program's kernel writing 4 KiB past a 256-byte allocation stays inside the address
    space the allocation owns, where a GPU (and pyhip by default) does not fault; memcheck reports it, once per
    instruction with the count of bad lanes, and goes on as the GPU would (the synchronize succeeds: the program
    itself, written to expect a fault, prints WRONG there)."""
    r = subprocess.run([sys.executable, "-m", "pyhip", "exec", "--check", "memcheck", str(BIN / "host/host_errors")],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 1 and "memcheck: out-of-bounds" in r.stderr, r.stdout + r.stderr
    assert "1 distinct error(s) found (1 memcheck out-of-bounds); 960 occurrence(s)" in r.stderr, r.stderr
    for line in ("launch 2048 threads: hipErrorInvalidConfiguration", "out-of-bounds kernel, sync: hipSuccess",
                 "next launch, sync: hipSuccess", "double free: hipErrorInvalidValue", "bad device: hipErrorInvalidDevice"):
        assert line in r.stdout


def test_unimplemented_exports_return_what_the_docs_say(shim):
    """Every stub has its export's real return type and returns what build_shim.STUB_RETURN (and so
    docs/capi.md) says: called through ctypes with that return type, struct returns included."""
    code = r"""
import ctypes, sys
sys.path.insert(0, sys.argv[2])
import build_shim
lib = ctypes.CDLL(sys.argv[1])
done = build_shim.implemented_names()
types = {"int": ctypes.c_int, "hipError_t": ctypes.c_int, "hiprtcResult": ctypes.c_int, "pointer": ctypes.c_void_p,
         "size_t": ctypes.c_size_t, "bool": ctypes.c_bool, "unsigned_short": ctypes.c_ushort, "float": ctypes.c_float}
seen = 0
for _, name, kind in build_shim.exports():
    if name in done or kind == "void":
        continue
    fn = getattr(lib, name)
    ctype, value, doc = build_shim.stub_return(kind)
    if kind.startswith("struct:"):
        size = int(kind.split(":")[2])
        class R(ctypes.Structure):
            _fields_ = [("b", ctypes.c_ubyte * size)]
        fn.restype = R
        got = bytes(fn(1, 2, 3, 4, 5).b)             # poisoned arguments: the stub must ignore them
        assert got == bytes(size), (name, got)
    else:
        fn.restype = types[kind]
        got = fn()
        want = None if kind == "pointer" else float(value.rstrip("f"))
        assert got == want, (name, kind, got, want)
    seen += 1
stub = next(n for _, n, k in build_shim.exports() if k == "hipError_t" and n not in done)
print(seen, getattr(lib, stub)(), lib.hipGetDeviceCount(ctypes.byref(ctypes.c_int())))
"""
    from pyhip.capi.shim import NATIVE
    r = subprocess.run([sys.executable, "-c", code, str(shim), str(NATIVE)], capture_output=True, text=True, timeout=120)
    seen, ctx, count = r.stdout.split()
    assert int(seen) > 5 and (ctx, count) == ("801", "0"), r.stdout + r.stderr
    docs = (Path(__file__).resolve().parents[2] / "docs" / "capi.md").read_text()
    assert "HIPRTC_ERROR_INTERNAL_ERROR (11)" in docs or "hiprtc" not in docs


def test_unimplemented_exports_say_so_on_request(shim):
    """PYHIP_LOG_UNSUPPORTED=1: the first call of each export pyhip lacks names it on stderr (once, however
    often it is called), and the call still returns its stub value; without the variable, or with 0, nothing."""
    code = r"""
import ctypes, sys
sys.path.insert(0, sys.argv[2])
import build_shim
lib = ctypes.CDLL(sys.argv[1])
done = build_shim.implemented_names()
a, b = [n for _, n, k in build_shim.exports() if k == "hipError_t" and n not in done][:2]
print(a, b, [getattr(lib, n)() for n in (a, a, b, a)])
"""
    import os
    from pyhip.capi.shim import NATIVE
    for flag in ("1", "0", None):
        env = {k: v for k, v in os.environ.items() if k != "PYHIP_LOG_UNSUPPORTED"}
        if flag is not None:
            env["PYHIP_LOG_UNSUPPORTED"] = flag
        r = subprocess.run([sys.executable, "-c", code, str(shim), str(NATIVE)], capture_output=True, text=True,
                           timeout=120, env=env)
        a, b, got = r.stdout.split(" ", 2)
        assert got.strip() == "[801, 801, 801, 801]", r.stdout + r.stderr
        lines = [l for l in r.stderr.splitlines() if l.startswith("pyhip: ")]
        want = [f"pyhip: {n} is not implemented by pyhip's libamdhip64.so.5; it returns hipErrorNotSupported (801)"
                for n in (a, b)] if flag == "1" else []
        assert lines == want, r.stderr


def test_module_api_events_pinned_callbacks_threads():
    r = subprocess.run([sys.executable, "-m", "pyhip", "exec", str(BIN / "host/host_api"),
                        str(BIN / "hipcc52/basic-gfx90a.hsaco")], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and r.stdout.strip() == "PASS", r.stdout + r.stderr


def test_legacy_launch_api():
    r = _exec(BIN / "host/host_legacy")           # hipConfigureCall / hipSetupArgument / hipLaunchByPtr
    assert r.returncode == 0 and r.stdout.strip() == "PASS", r.stdout + r.stderr


def test_device_properties_layout_matches_the_5_2_header(tmp_path, shim):
    """A C program compiled against the installed hip_runtime_api.h reads the struct the shim fills."""
    src = tmp_path / "props.c"
    src.write_text(r"""
#define __HIP_PLATFORM_AMD__ 1
#include <hip/hip_runtime_api.h>
#include <stdio.h>
int main(void) {
  hipDeviceProp_t p; int e = hipGetDeviceProperties(&p, 0);
  printf("%d|%s|%s|%d|%d|%d|%d|%d|%zu|%d|%d|%d\n", e, p.name, p.gcnArchName, p.warpSize, p.maxThreadsPerBlock,
         p.maxThreadsDim[2], p.maxGridSize[0], p.multiProcessorCount, p.totalGlobalMem, p.gcnArch, p.major,
         (int)p.arch.hasDoubles);
  return 0;
}""")
    exe = tmp_path / "props"
    subprocess.run([require_tool("gcc"), "-o", str(exe), str(src), f"-L{shim.parent}", "-l:libamdhip64.so.5"],
                   check=True, capture_output=True)
    r = subprocess.run([sys.executable, "-m", "pyhip", "exec", str(exe)], capture_output=True, text=True, timeout=120)
    from pyhip.runtime.properties import make_properties
    from pyhip.loader.targetid import DeviceISA
    import os
    isa = DeviceISA.parse(os.environ["PYHIP_DEVICES"].split(",")[0])
    p = make_properties(isa, 0, 16 << 30)
    assert r.stdout.strip().split("|") == ["0", p.name, p.gcnArchName, "64", "1024", "1024", str(2 ** 31 - 1),
                                           str(p.multiProcessorCount), str(16 << 30), str(p.gcnArch),
                                           str(p.major), "1"], r.stdout + r.stderr
