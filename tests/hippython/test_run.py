"""``pyhip run``: an unmodified hip-python script (``import hip``, ``from hip import hip, hiprtc``, package-level
names) runs on pyhip with no edit, in that process only; and the package-level names as hip-python has them."""
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pyhip
from pyhip import hip
from pyhip.hip._hippython_api import HIP_PYTHON_VERSIONS

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = textwrap.dedent('''\
    import sys
    import hip
    from hip import ROCM_VERSION_TUPLE, HIP_VERSION_NAME
    from hip import hip as hiprt, hiprtc
    import hip.hiprtc

    assert hip.hiprtc is hiprtc and hiprt.hipGetDeviceCount()[1] >= 1
    assert ROCM_VERSION_TUPLE[0] == 5 and HIP_VERSION_NAME.startswith("5.2.")
    src = b'extern "C" __global__ void k(float* p) { p[threadIdx.x] = 2.0f * threadIdx.x + 1.0f; }'
    prog = hiprtc.hiprtcCreateProgram(src, b"k.hip", 0, [], [])[1]
    assert hiprtc.hiprtcCompileProgram(prog, 0, [])[0] == hiprtc.hiprtcResult.HIPRTC_SUCCESS
    code = bytearray(hiprtc.hiprtcGetCodeSize(prog)[1])
    hiprtc.hiprtcGetCode(prog, code)
    err, module = hiprt.hipModuleLoadData(code)
    err, kernel = hiprt.hipModuleGetFunction(module, b"k")
    err, d = hiprt.hipMalloc(4 * 40)
    assert hiprt.hipModuleLaunchKernel(kernel, 1, 1, 1, 40, 1, 1, 0, None, None, (d,))[0] == 0
    out = bytearray(4 * 40)
    hiprt.hipMemcpy(out, d, 4 * 40, hiprt.hipMemcpyKind.hipMemcpyDeviceToHost)
    import struct
    assert list(struct.unpack("40f", out)) == [2.0 * i + 1 for i in range(40)]
    print("args", sys.argv[1:], __name__)
    sys.exit(int(sys.argv[1]) if len(sys.argv) > 1 and sys.argv[1].isdigit() else 0)
''')


def run(*args, cwd):
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=600, env=env, cwd=cwd)


def test_run_resolves_hip_to_pyhip_for_that_process(tmp_path):
    script = tmp_path / "example.py"
    script.write_text(SCRIPT)
    r = run("-m", "pyhip", "run", str(script), "x", "--flag", cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "args ['x', '--flag'] __main__" in r.stdout
    r = run("-m", "pyhip", "run", str(script), "3", cwd=tmp_path)            # the script's exit status
    assert r.returncode == 3 and "args ['3']" in r.stdout, r.stderr
    r = run(str(script), cwd=tmp_path)                     # without pyhip run there is no `hip` (no hip-python)
    assert r.returncode != 0 and "No module named 'hip'" in r.stderr
    r = run("-m", "pyhip", "run", str(tmp_path / "missing.py"), cwd=tmp_path)
    assert r.returncode == 2 and "no such file" in r.stderr


def test_unavailable_hip_python_modules_fail_to_import(tmp_path):
    script = tmp_path / "blas.py"
    script.write_text("from hip import hipblas\n")
    r = run("-m", "pyhip", "run", str(script), cwd=tmp_path)
    assert r.returncode == 1 and "ImportError" in r.stderr


def test_package_level_names_as_hip_python_has_them():
    for name, value in HIP_PYTHON_VERSIONS.items():          # hip-python 5.4.3's names, HIP 5.2's values
        ours = getattr(pyhip, name)
        assert type(ours) is type(value) and ours == getattr(hip, name), name
        assert getattr(pyhip, name.lower(), ours) == ours
    major, minor, patch = pyhip.ROCM_VERSION_TUPLE
    assert pyhip.ROCM_VERSION == major * 10_000_000 + minor * 100_000 + patch     # 5.4.3 -> 50400003 encoding
    assert pyhip.ROCM_VERSION_NAME == f"{major}.{minor}.{patch}"
    assert pyhip.HIP_VERSION == hip.HIP_VERSION and pyhip.HIP_VERSION_TUPLE[:2] == (major, minor)
    assert pyhip.HIP_VERSION_NAME == "{}.{}.{}-{}".format(*pyhip.HIP_VERSION_TUPLE)
