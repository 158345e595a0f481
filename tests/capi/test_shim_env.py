"""How the shim meets the Python it runs under: the C ABI's struct layouts against HIP 5.2's headers, the
cache key (a shim built under one interpreter is not reused under another), and ``pyhip exec`` from a
virtual environment (the embedded interpreter sees the venv's site directories)."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import cffi

from conftest import require_tool

ROOT = Path(__file__).resolve().parents[2]
FIELDS = {
    "hipPitchedPtr": ["ptr", "pitch", "xsize", "ysize"],
    "hipExtent": ["width", "height", "depth"],
    "hipPos": ["x", "y", "z"],
    "hipMemcpy3DParms": ["srcArray", "srcPos", "srcPtr", "dstArray", "dstPos", "dstPtr", "extent", "kind"],
    "HIP_MEMCPY3D": ["srcXInBytes", "srcMemoryType", "srcHost", "srcDevice", "srcPitch", "srcHeight", "dstXInBytes",
                     "dstMemoryType", "dstHost", "dstDevice", "dstArray", "dstPitch", "dstHeight", "WidthInBytes",
                     "Height", "Depth"],
    "hip_Memcpy2D": ["srcXInBytes", "srcY", "srcMemoryType", "srcHost", "srcDevice", "srcArray", "srcPitch",
                     "dstXInBytes", "dstY", "dstMemoryType", "dstHost", "dstDevice", "dstArray", "dstPitch",
                     "WidthInBytes", "Height"],
    "hipPointerAttribute_t": ["memoryType", "device", "devicePointer", "hostPointer", "isManaged",
                              "allocationFlags"],
    "hipLaunchParams": ["func", "gridDim", "blockDim", "args", "sharedMem", "stream"],
    "hipMemPoolProps": ["allocType", "handleTypes", "location", "win32SecurityAttributes", "reserved"],
    "hipMemAccessDesc": ["location", "flags"],
    "hipKernelNodeParams": ["blockDim", "extra", "func", "gridDim", "kernelParams", "sharedMemBytes"],
    "hipMemsetParams": ["dst", "elementSize", "height", "pitch", "value", "width"],
    "hipHostNodeParams": ["fn", "userData"],
    "hipChannelFormatDesc": ["x", "y", "z", "w", "f"],
}


def test_struct_layouts_match_the_hip_5_2_headers(tmp_path):
    """native/hip/types.h (what pyhip reads and writes) has the size and every field offset that gcc gives
    the real structs of /usr/include/hip."""
    lines = []
    for name, fields in FIELDS.items():
        lines.append(f'printf("{name} %zu\\n", sizeof({name}));')
        lines += [f'printf("{name}.{f} %zu\\n", offsetof({name}, {f}));' for f in fields]
    src = tmp_path / "layout.c"
    src.write_text("#define __HIP_PLATFORM_AMD__ 1\n#include <hip/hip_runtime_api.h>\n#include <stddef.h>\n"
                   "#include <stdio.h>\nint main(void) {\n" + "\n".join(lines) + "\nreturn 0; }\n")
    exe = tmp_path / "layout"
    subprocess.run([require_tool("gcc"), "-o", str(exe), str(src)], check=True, capture_output=True)
    real = dict(l.rsplit(" ", 1) for l in subprocess.run([str(exe)], capture_output=True, text=True).stdout.splitlines())
    ffi = cffi.FFI()
    ffi.cdef("typedef unsigned int uint32_t;\n" + (ROOT / "native/hip/types.h").read_text())
    ours = {}
    for name, fields in FIELDS.items():
        ours[name] = str(ffi.sizeof(name))
        ours.update({f"{name}.{f}": str(ffi.offsetof(name, f)) for f in fields})
    assert ours == real


def test_exec_from_a_venv_sees_its_site_packages(tmp_path):
    """A venv's site directory (where an editable install's .pth lives) is visible to the embedded
    interpreter, which starts from the base Python: a .pth there reports every interpreter that reads it.
    The venv's shim is its own (the cache is keyed by the interpreter, not only by the sources)."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", "--system-site-packages", str(venv)], check=True)
    py = venv / "bin" / "python"
    code = "import sys; sys.path.insert(0, sys.argv[1]); import build_shim; print(build_shim.fingerprint())"
    keys = {subprocess.run([str(p), "-c", code, str(ROOT / "native/hip")], capture_output=True, text=True,
                           check=True).stdout.strip() for p in (sys.executable, py)}
    assert len(keys) == 2 and all(len(k) == 16 for k in keys)
    site = subprocess.run([str(py), "-c", "import site; print(site.getsitepackages()[0])"], capture_output=True,
                          text=True, check=True).stdout.strip()
    Path(site, "zz_pyhip_probe.pth").write_text(
        'import sys; sys.stderr.write("PYHIP-PROBE %s\\n" % sys.prefix)\n')
    prog = tmp_path / "count.c"
    prog.write_text('int hipGetDeviceCount(int*);\n#include <stdio.h>\n'
                    'int main(void) { int n = 0; printf("rc %d n %d\\n", hipGetDeviceCount(&n), n); return 0; }\n')
    from pyhip.capi.shim import shim_path
    exe = tmp_path / "count"
    subprocess.run([require_tool("gcc"), "-o", str(exe), str(prog), f"-L{shim_path()}", "-l:libamdhip64.so.5"],
                   check=True, capture_output=True)
    r = subprocess.run([str(py), "-m", "pyhip", "exec", str(exe)], capture_output=True, text=True, timeout=600,
                       cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert "rc 0 n " in r.stdout, r.stdout + r.stderr
    prefixes = set(re.findall(r"PYHIP-PROBE (\S+)", r.stderr))
    assert str(venv) in prefixes and len(prefixes) == 2, r.stderr   # the venv's python and the embedded one


def test_half_conversions_match_numpy(tmp_path):
    """__gnu_f2h_ieee / __gnu_h2f_ieee against numpy's float16: every half value, and floats around every
    rounding boundary (ties to even), subnormals, overflow, NaN."""
    code = r"""
import ctypes, sys
import numpy as np
lib = ctypes.CDLL(sys.argv[1])
h2f, f2h = lib.__gnu_h2f_ieee, lib.__gnu_f2h_ieee
h2f.restype, h2f.argtypes = ctypes.c_float, [ctypes.c_ushort]
f2h.restype, f2h.argtypes = ctypes.c_ushort, [ctypes.c_float]
halves = np.arange(1 << 16, dtype=np.uint16)
want = halves.view(np.float16).astype(np.float32)
got = np.array([h2f(int(h)) for h in halves], np.float32)
nan = np.isnan(want)
assert np.array_equal(got[~nan].view(np.uint32), want[~nan].view(np.uint32)) and np.isnan(got[nan]).all()
rng = np.random.default_rng(5)
mids = (want[:-1].astype(np.float64) + want[1:]) / 2                 # exact ties between neighbours
floats = np.concatenate([want, mids.astype(np.float32), rng.standard_normal(20000).astype(np.float32) * 1e3,
                         rng.standard_normal(20000).astype(np.float32) * 1e-6, np.float32([65504, 65519.99, 65520, 1e9, 6e-8, 2.9e-8, 3e-8])])
floats = floats[np.isfinite(floats)]
ours = np.array([f2h(float(f)) for f in floats], np.uint16)
theirs = floats.astype(np.float16).view(np.uint16)
bad = np.nonzero(ours != theirs)[0]
assert len(bad) == 0, [(float(floats[i]), hex(ours[i]), hex(theirs[i])) for i in bad[:5]]
assert np.isnan(np.uint16(f2h(float("nan"))).view(np.float16))
print("ok", len(floats))
"""
    from pyhip.capi.shim import shim_path
    r = subprocess.run([sys.executable, "-c", code, str(shim_path() / "libamdhip64.so.5")], capture_output=True,
                       text=True, timeout=300)
    assert r.stdout.startswith("ok"), r.stdout + r.stderr
