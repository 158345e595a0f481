"""hipcc 5.2 programs sampling textures (tex1D/2D/3D, layered, every addressing mode, point and linear
filtering, normalized and unnormalized coordinates, 8/16/32-bit formats, linear and pitched memory), writing
surfaces and binding a legacy texture reference, under ``pyhip exec`` (tests/capi/textures.hip), against
tests/texref.py's numpy sampler; the MIMG instructions the build contains are all executable.  Built for
gfx90a (run on the MI210) and for gfx1030 (run on the RX 6900 XT: GFX10.3 descriptors, wave32)."""
import os
import subprocess
import sys

import numpy as np
import pytest

import texref as R
from conftest import require_tool
from pyhip.emu.semantics import SEMANTICS, load_all
from pyhip.loader import load

from pathlib import Path

HERE = Path(__file__).resolve().parent
N = 256
rng = np.random.default_rng(2016)
MODES = {"wrap": R.WRAP, "clamp": R.CLAMP, "mirror": R.MIRROR, "border": R.BORDER}


@pytest.fixture(scope="module", params=["gfx90a", "gfx1030"])
def program(tmp_path_factory, request):
    d = tmp_path_factory.mktemp("textures")
    exe = d / "textures"
    subprocess.run([require_tool("hipcc"), f"--offload-arch={request.param}", "-O2", str(HERE / "textures.hip"), "-o",
                    str(exe)], check=True, capture_output=True, env={**os.environ, "HIP_PLATFORM": "amd"})
    return exe, request.param


def _inputs(d):
    f32 = np.float32
    x = {}
    x["coords2"] = np.stack([rng.uniform(-0.7, 1.7, N), rng.uniform(-0.7, 1.7, N)], 1).astype(f32)
    x["coords2u"] = np.stack([rng.uniform(-2.5, 15.5, N), rng.uniform(-2.5, 9.5, N)], 1).astype(f32)
    x["coords2u"][:16] = np.stack([np.arange(16) % 13 + 0.5, np.arange(16) % 7 + 0.5], 1)    # texel centres
    x["coords3"] = np.stack([rng.uniform(-1.2, 2.2, N) for _ in range(3)] + [np.zeros(N)], 1).astype(f32)
    x["coords1"] = rng.uniform(-1.5, 2.5, N).astype(f32)
    x["coords1l"] = np.stack([rng.uniform(-0.7, 1.7, N), rng.integers(-1, 5, N)], 1).astype(f32)
    x["coords2l"] = np.stack([rng.uniform(-0.3, 1.3, N), rng.uniform(-0.3, 1.3, N), rng.integers(-1, 5, N),
                              np.zeros(N)], 1).astype(f32)
    x["f2d"] = rng.uniform(-10, 10, (7, 13)).astype(f32)
    x["f1d"] = rng.uniform(-10, 10, 11).astype(f32)
    x["f1dl"] = rng.uniform(-10, 10, (3, 9, 2)).astype(f32)
    x["f2dl"] = rng.uniform(-10, 10, (3, 4, 5, 4)).astype(f32)
    x["f3d"] = rng.uniform(-10, 10, (4, 5, 6)).astype(f32)
    x["u8x4"] = rng.integers(0, 256, (5, 6, 4)).astype(np.uint8)
    x["s16x2"] = rng.integers(-32768, 32768, (5, 6, 2)).astype(np.int16)
    x["f16"] = rng.uniform(-4, 4, (5, 6)).astype(np.float16)
    x["lin"] = rng.uniform(-10, 10, 100).astype(f32)
    x["fetch_idx"] = rng.integers(-5, 106, N).astype(np.int32)
    x["pitch"] = rng.uniform(-10, 10, (7, 64)).astype(f32)            # 9 used columns of a 256-byte pitch
    for k, v in x.items():
        (d / f"{k}.in").write_bytes(np.ascontiguousarray(v).tobytes())
    return x


def _out(d, name, dtype, shape=(N,)):
    return np.fromfile(d / f"{name}.out", dtype).reshape(shape)


def test_texture_and_surface_programs(program, tmp_path):
    program, target = program
    x = _inputs(tmp_path)
    r = subprocess.run([sys.executable, "-m", "pyhip", "exec", str(program), str(tmp_path)], capture_output=True,
                       text=True, timeout=600, env={**os.environ, "PYHIP_DEVICES": target})
    assert r.returncode == 0 and r.stdout.strip().endswith("DONE") and "FAIL" not in r.stdout, r.stdout + r.stderr
    f2d = x["f2d"][None, :, :, None].astype(np.float64)
    c2, c2u = x["coords2"], x["coords2u"]
    for mname, mode in MODES.items():
        for fname, linear in (("point", False), ("linear", True)):
            for norm, c in (("n", c2), ("u", c2u)):
                got = _out(tmp_path, f"f2d_{mname}_{fname}_{norm}", np.float32)
                want = R.sample(f2d, [c[:, 0], c[:, 1]], linear, mode, norm == "n")[:, 0]
                np.testing.assert_allclose(got, want, rtol=1e-6, atol=2e-6, err_msg=f"{mname} {fname} {norm}")
    checks = [
        ("f1d_wrap_linear", np.float32, (N,), x["f1d"][None, None, :, None], [x["coords1"]], True, R.WRAP, None),
        ("f1dl_mirror_linear", np.float32, (N, 2), x["f1dl"][:, None], [x["coords1l"][:, 0]], True, R.MIRROR,
         x["coords1l"][:, 1].astype(np.int64)),
        ("f2dl_clamp_point", np.float32, (N, 4), x["f2dl"], [x["coords2l"][:, 0], x["coords2l"][:, 1]], False,
         R.CLAMP, x["coords2l"][:, 2].astype(np.int64)),
        ("f3d_wrap_linear", np.float32, (N,), x["f3d"][..., None], [x["coords3"][:, k] for k in range(3)], True,
         R.WRAP, None),
        ("u8x4_clamp_linear", np.float32, (N, 4), x["u8x4"][None] / 255.0, [c2[:, 0], c2[:, 1]], True, R.CLAMP, None),
        ("f16_wrap_linear", np.float32, (N,), x["f16"][None, :, :, None], [c2[:, 0], c2[:, 1]], True, R.WRAP, None),
        ("pitch_clamp_linear", np.float32, (N,), x["pitch"][None, :, :9, None], [c2[:, 0], c2[:, 1]], True, R.CLAMP,
         None),
        ("legacy_clamp_linear_u", np.float32, (N,), f2d, [c2u[:, 0], c2u[:, 1]], True, R.CLAMP, None),
        ("drv_pitch_mirror_point", np.float32, (N,), x["pitch"][None, :, :9, None], [c2[:, 0], c2[:, 1]], False,
         R.MIRROR, None),
    ]
    for name, dt, shape, tex, coords, linear, mode, layer in checks:
        got = _out(tmp_path, name, dt, shape).reshape(N, -1)
        want = R.sample(tex.astype(np.float64), coords, linear, mode, not name.endswith("_u"), layer)
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=2e-6, err_msg=name)
    got = _out(tmp_path, "s16x2_border_point", np.int16, (N, 2))
    want = R.sample(x["s16x2"][None].astype(np.float64), [c2[:, 0], c2[:, 1]], False, R.BORDER, True)
    np.testing.assert_array_equal(got, want.astype(np.int16))
    idx = x["fetch_idx"]
    want = np.where((idx >= 0) & (idx < 100), x["lin"][np.clip(idx, 0, 99)], 0)
    np.testing.assert_array_equal(_out(tmp_path, "lin_fetch", np.float32), want)
    np.testing.assert_array_equal(_out(tmp_path, "legacy_fetch", np.float32), want)
    surf = _out(tmp_path, "surface", np.float32, (7, 13))
    # 3 * v + x: gfx1030 code fuses it (one rounding), numpy rounds twice: 1 ulp of 3 * v apart at most
    np.testing.assert_allclose(surf, 3 * x["f2d"] + np.arange(13), rtol=1e-6, atol=4e-6)


def test_hipcc_mimg_instructions_are_executable(program):
    """Every image instruction hipcc 5.2 emitted for the program decodes and has semantics."""
    program, target = program
    load_all()
    co = load(program).select(target)
    from pyhip.emu.isa.decoder import decode
    _, text = co.section_bytes(".text")
    names = {i.name for i in decode(text, target) if i.encoding == "MIMG"}
    sample = "image_sample" if target == "gfx90a" else "image_sample_lz"
    assert {sample, "image_load", "image_store"} <= names, names
    assert all(n in SEMANTICS for n in names), names
