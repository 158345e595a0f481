"""AMD's own libraries under ``pyhip exec`` (docs/amd-libraries.md has the full runner): rocRAND's prebuilt
``librocrand.so.1`` (host API) and its device API, checked element for element against a Philox4x32-10 in
numpy; rocPRIM's device-wide scan and radix sort (header-only, compiled here), checked against numpy.
Skipped when Debian's librocrand-dev / librocprim-dev are not installed (tools/run_tests.sh installs them)."""
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from conftest import require_tool

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import philox  # noqa: E402

SEED = 0x1234567890ABCDEF
N_U32, N_F32, N_NORMAL, THREADS, DRAWS = 100003, 4099, 65536, 300, 5     # as in rocrand_philox.cpp


def _build(tmp_path, name, *flags):
    exe = tmp_path / name
    r = subprocess.run([require_tool("hipcc"), "--offload-arch=gfx90a", "-O2", "-w", *flags,
                        str(HERE / f"{name}.cpp"), "-o", str(exe)], capture_output=True, text=True,
                       env={**os.environ, "HIP_PLATFORM": "amd"})
    assert r.returncode == 0, r.stderr[-3000:]
    return exe


def _exec(exe, *args):
    r = subprocess.run([sys.executable, "-m", "pyhip", "exec", str(exe), *map(str, args)], capture_output=True,
                       text=True, timeout=600)
    assert r.returncode == 0 and r.stdout.strip().endswith("PASS"), r.stdout + r.stderr


def test_philox_reference_matches_random123_known_answers():
    """The numpy reference itself, against Random123's known-answer vectors for philox4x32 (10 rounds)."""
    kat = [((0, 0, 0, 0), (0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
           ((0xFFFFFFFF,) * 4, (0xFFFFFFFF,) * 2, (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
           ((0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344), (0xA4093822, 0x299F31D0),
            (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1))]
    for ctr, key, want in kat:
        assert tuple(philox.philox4x32_10(np.array([ctr], dtype=np.uint32), key)[0]) == want


@pytest.mark.skipif(not (Path("/usr/include/rocrand/rocrand.h").exists()
                         and Path("/usr/lib/x86_64-linux-gnu/librocrand.so").exists()),
                    reason="Debian's librocrand-dev is not installed")
def test_rocrand_philox_host_and_device_api(tmp_path):
    exe = _build(tmp_path, "rocrand_philox", "-lrocrand")
    out = tmp_path / "out.bin"
    out.write_bytes(b"\xff" * 16)
    _exec(exe, out)
    d = np.fromfile(out, dtype=np.uint32)
    assert len(d) == N_U32 + N_F32 + N_NORMAL + THREADS * DRAWS
    u, d = d[:N_U32], d[N_U32:]
    f, d = d[:N_F32].view(np.float32), d[N_F32:]
    n, d = d[:N_NORMAL].view(np.float32), d[N_NORMAL:]
    dev = d.reshape(THREADS, DRAWS)
    # host API (the library's generate kernel, 1024 x 256 threads leaping through one stream): the stream
    # itself for unsigned ints, the tail of a length not a multiple of 4 included
    np.testing.assert_array_equal(u, philox.stream(SEED, 0, 0, N_U32))
    # the next call continues at offset N_U32 (not a multiple of 4: the leap's interleaving path);
    # uniform floats are u * 2^-32 + 2^-33 in float (an FMA may round once instead of twice)
    ref = philox.stream(SEED, 0, N_U32, N_F32).astype(np.float32) * np.float32(2.3283064e-10) \
        + np.float32(2.3283064e-10 / 2)
    np.testing.assert_allclose(f, ref, rtol=1e-5, atol=0)
    assert f.min() > 0 and f.max() <= 1
    # normal(2, 3) by Box-Muller: moments within 6 standard errors
    se = 3 / np.sqrt(N_NORMAL)
    assert abs(n.mean() - 2) < 6 * se and abs(n.std() - 3) < 6 * se * np.sqrt(0.5) + 1e-3
    # device API: rocrand_init(seed, subsequence=i, offset=i % 7) then DRAWS draws per thread
    for i in range(THREADS):
        np.testing.assert_array_equal(dev[i], philox.stream(SEED, i, i % 7, DRAWS), err_msg=f"thread {i}")


@pytest.mark.skipif(not Path("/usr/include/rocprim/rocprim.hpp").exists(),
                    reason="Debian's librocprim-dev is not installed")
def test_rocprim_device_scan_and_radix_sort(tmp_path):
    exe = _build(tmp_path, "rocprim_scan_sort", "-std=c++17")
    a = np.random.default_rng(28).integers(-1000, 1000, size=50021, dtype=np.int32)   # 50021: no tile multiple
    (tmp_path / "in.bin").write_bytes(a.tobytes())
    out = tmp_path / "out.bin"
    _exec(exe, tmp_path / "in.bin", out)
    o = np.fromfile(out, dtype=np.int32)
    assert len(o) == 2 * len(a)
    np.testing.assert_array_equal(o[:len(a)], np.cumsum(a, dtype=np.int32))
    np.testing.assert_array_equal(o[len(a):], np.sort(a))
