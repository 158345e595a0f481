"""Repeat launches from Python (pyhip.hip.hipModuleLaunchKernel, Kernel.__call__) published by one native call
(pyhip/runtime/fastlaunch.py): new argument values are honoured, arguments of other types take the full
path, and the launches really went the native way (the stream's native launch count)."""
import numpy as np

import pyhip
import pyhip.hip as hip
from conftest import BIN
from pyhip.runtime.context import runtime

RNG = np.random.default_rng(13)


def test_kernel_call_repeats_natively_with_new_values():
    pyhip.set_device(0)
    k = pyhip.load(BIN / "hipcc52/basic-gfx90a.hsaco").kernel("vadd")
    n = 1000
    bufs = [(RNG.standard_normal(n).astype(np.float32), RNG.standard_normal(n).astype(np.float32))
            for _ in range(4)]
    c = pyhip.empty(n, np.float32)
    for i, (a, b) in enumerate(bufs):
        m = n - 37 * i                                   # a new value of the int argument each time
        c.set(np.full(n, np.nan, np.float32))
        k((n + 255) // 256, 256, pyhip.to_device(a), pyhip.to_device(b), c, m)
        pyhip.synchronize()
        got = c.get()
        np.testing.assert_array_equal(got[:m], a[:m] + b[:m])
        assert np.isnan(got[m:]).all()
    entries = k.function.fast
    assert entries, "no native launch entry was prepared"


def test_hip_module_launch_repeats_natively_and_falls_back_on_other_types():
    hip.hipSetDevice(0)
    err, mod = hip.hipModuleLoad(str(BIN / "hipcc52/basic-gfx90a.hsaco").encode())
    assert err == hip.hipError_t.hipSuccess
    err, f = hip.hipModuleGetFunction(mod, b"vadd")
    n = 700
    a, b = RNG.standard_normal(n).astype(np.float32), RNG.standard_normal(n).astype(np.float32)
    da, db, dc = (hip.hipMalloc(4 * n)[1] for _ in range(3))
    hip.hipMemcpy(da, a, 4 * n, hip.hipMemcpyKind.hipMemcpyHostToDevice)
    hip.hipMemcpy(db, b, 4 * n, hip.hipMemcpyKind.hipMemcpyHostToDevice)
    fs_before = None
    for m in (n, n - 1, n - 100, 5):
        hip.hipMemset(dc, 0xFF, 4 * n)
        assert hip.hipModuleLaunchKernel(f, 3, 1, 1, 256, 1, 1, 0, None, [da, db, dc, m], None)[0] == \
            hip.hipError_t.hipSuccess
        hip.hipDeviceSynchronize()
        out = np.zeros(n, np.float32)
        hip.hipMemcpy(out, dc, 4 * n, hip.hipMemcpyKind.hipMemcpyDeviceToHost)
        np.testing.assert_array_equal(out[:m], a[:m] + b[:m])
        assert np.isnan(out[m:]).all()
        st = runtime().resolve_stream(None)
        fs = st.fast_state()
        if fs_before is None:
            fs_before = fs.launch_count() if fs is not None else None
    assert fs_before is not None, "the null stream has no native launch state"
    assert runtime().resolve_stream(None).fast_state().launch_count() >= fs_before + 3   # the repeats
    # a float where an int was: not the cached types, the full path checks and converts it as before
    err = hip.hipModuleLaunchKernel(f, 3, 1, 1, 256, 1, 1, 0, None, [da, db, dc, np.int32(3)], None)[0]
    assert err == hip.hipError_t.hipSuccess
    hip.hipDeviceSynchronize()
    for p in (da, db, dc):
        hip.hipFree(p)
    hip.hipModuleUnload(mod)


def test_untyped_by_value_arguments_repeat_natively(tmp_path):
    """extern "C" kernels from hipcc 5.2 name no argument types: Python ints and floats there repeat natively
    too, with their new values, and a value the signed format refuses takes the full path."""
    import subprocess
    src = tmp_path / "k.hip"
    src.write_text('#include <hip/hip_runtime.h>\n'
                   'extern "C" __global__ void lin(float* o, int a, unsigned b, float s, double t) {\n'
                   '  int i = threadIdx.x; o[i] = (float)(a * i) + (float)(b % 1000u) + s * i + (float)t; }\n')
    co = tmp_path / "k.hsaco"
    import os
    subprocess.run(["hipcc", "--offload-arch=gfx90a", "-O2", "--genco", str(src), "-o", str(co)], check=True,
                   env={**os.environ, "HIP_PLATFORM": "amd"}, capture_output=True)
    pyhip.set_device(0)
    k = pyhip.load(co).kernel("lin")
    o = pyhip.empty(64, np.float32)
    i = np.arange(64, dtype=np.float32)
    for a, b, s, t in ((1, 2, 0.5, 1.25), (-3, 7, 2.0, -4.0), (5, 2 ** 32 - 1, -1.5, 0.0), (2, 9, 0.25, 3.0)):
        k(1, 64, o, a, b, s, t)
        pyhip.synchronize()
        want = (np.float32(a) * i + np.float32(b % 1000) + np.float32(s) * i + np.float32(t)).astype(np.float32)
        np.testing.assert_allclose(o.get(), want, rtol=1e-6)
    assert k.function.fast, "no native launch entry for the untyped arguments"


# -- every argument kind -----------------------------------------------------------------------------------------
# One kernel with a slot of each common type (padding between them), launched several times with new random
# values for each way of passing arguments; each output is compared with numpy (a stale or misplaced kernarg
# byte shows), and the repeats must have been published by the native path (fastlaunch.hits).
import ctypes  # noqa: E402
import os  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402

import pytest  # noqa: E402

from pyhip.hip._api import last_exception  # noqa: E402
from pyhip.hip.packed_args import HipModuleLaunchKernel_extra  # noqa: E402
from pyhip.runtime import fastlaunch  # noqa: E402

KINDS_SRC = r"""
#include <hip/hip_runtime.h>
__global__ void kinds(double* out, const float* p, int i, unsigned u, long l, unsigned long ul, short s,
                      unsigned char c, float f, double d, bool b, const double* q) {
  int t = threadIdx.x;
  out[t] = (double)p[t] + q[t] + (double)i + (double)u + (double)l + (double)ul + (double)s + (double)c
           + (double)f + d + (double)b;
}
"""
N = 64


class KindArgs(ctypes.Structure):
    _fields_ = [("out", ctypes.c_void_p), ("p", ctypes.c_void_p), ("i", ctypes.c_int), ("u", ctypes.c_uint),
                ("l", ctypes.c_long), ("ul", ctypes.c_ulong), ("s", ctypes.c_short), ("c", ctypes.c_ubyte),
                ("f", ctypes.c_float), ("d", ctypes.c_double), ("b", ctypes.c_bool),
                ("q", ctypes.c_void_p)]


@pytest.fixture(scope="module")
def kinds_co(tmp_path_factory):
    d = tmp_path_factory.mktemp("kinds")
    (d / "k.hip").write_text(KINDS_SRC)
    subprocess.run(["hipcc", "--offload-arch=gfx90a", "-O2", "--genco", str(d / "k.hip"), "-o", str(d / "k.hsaco")],
                   check=True, env={**os.environ, "HIP_PLATFORM": "amd"}, capture_output=True)
    return d / "k.hsaco"


def _values(rng):
    return dict(i=int(rng.integers(-2 ** 31, 2 ** 31)), u=int(rng.integers(0, 2 ** 32)),
                l=int(rng.integers(-2 ** 40, 2 ** 40)), ul=int(rng.integers(0, 2 ** 53)),
                s=int(rng.integers(-2 ** 15, 2 ** 15)), c=int(rng.integers(0, 256)),
                f=float(np.float32(rng.standard_normal())), d=float(rng.standard_normal() * 1e3),
                b=bool(rng.integers(0, 2)))


def _expected(p, q, v):
    acc = p.astype(np.float64) + q
    for x in (v["i"], v["u"], v["l"], v["ul"], v["s"], v["c"], v["f"], v["d"], float(v["b"])):
        acc = acc + np.float64(x)
    return acc


def _typed(v, out, p, q, kind):
    """kernelParams / Kernel-call arguments of one kind."""
    if kind == "python":
        return [out, p, v["i"], v["u"], v["l"], v["ul"], v["s"], v["c"], v["f"], v["d"], v["b"], q]
    if kind == "int addresses":
        return [int(out), int(p), v["i"], v["u"], v["l"], v["ul"], v["s"], v["c"], v["f"], v["d"], v["b"],
                int(q)]
    if kind == "numpy":
        return [np.uint64(int(out)), np.uint64(int(p)), np.int32(v["i"]), np.uint32(v["u"]), np.int64(v["l"]),
                np.uint64(v["ul"]), np.int16(v["s"]), np.uint8(v["c"]), np.float32(v["f"]), np.float64(v["d"]),
                np.uint8(v["b"]), np.int64(int(q))]
    if kind == "ctypes":
        return [ctypes.c_void_p(int(out)), ctypes.c_void_p(int(p)), ctypes.c_int(v["i"]), ctypes.c_uint(v["u"]),
                ctypes.c_long(v["l"]), ctypes.c_ulong(v["ul"]), ctypes.c_short(v["s"]), ctypes.c_ubyte(v["c"]),
                ctypes.c_float(v["f"]), ctypes.c_double(v["d"]), ctypes.c_bool(v["b"]),
                ctypes.c_void_p(int(q))]
    raise AssertionError(kind)


def _extra_tuple(v, out, p, q):
    return (out, p, ctypes.c_int(v["i"]), ctypes.c_uint(v["u"]), ctypes.c_long(v["l"]), ctypes.c_ulong(v["ul"]),
            ctypes.c_short(v["s"]), ctypes.c_ubyte(v["c"]), ctypes.c_float(v["f"]), ctypes.c_double(v["d"]),
            ctypes.c_bool(v["b"]), q)


class _Launcher:
    """hipModuleLaunchKernel with the arguments of one style; keeps what a C caller would keep alive."""

    def __init__(self, f, out, p, q, style):
        self.f, self.out, self.p, self.q, self.style = f, out, p, q, style
        self.cargs = KindArgs()
        self.size = ctypes.c_size_t(ctypes.sizeof(KindArgs))
        self.config = (ctypes.c_void_p * 5)(hip.HIP_LAUNCH_PARAM_BUFFER_POINTER, ctypes.addressof(self.cargs),
                                            hip.HIP_LAUNCH_PARAM_BUFFER_SIZE, ctypes.addressof(self.size),
                                            hip.HIP_LAUNCH_PARAM_END)

    def __call__(self, v):
        out, p, q, style = self.out, self.p, self.q, self.style
        params, extra = None, None
        if style in ("python", "int addresses", "numpy", "ctypes"):
            params = _typed(v, out, p, q, style)
        elif style == "tuple kernelParams":
            params = tuple(_typed(v, out, p, q, "python"))
        elif style == "extra tuple":
            extra = _extra_tuple(v, out, p, q)
        elif style == "extra object":
            extra = HipModuleLaunchKernel_extra(_extra_tuple(v, out, p, q))
        elif style in ("extra config array", "void** kernelParams"):
            for name, x in zip([fl[0] for fl in KindArgs._fields_],
                               (int(out), int(p), v["i"], v["u"], v["l"], v["ul"], v["s"], v["c"], v["f"], v["d"],
                                v["b"], int(q))):
                setattr(self.cargs, name, x)
            if style == "extra config array":
                extra = self.config
            else:                           # one pointer per argument, into the same C struct
                base = ctypes.addressof(self.cargs)
                self.ptrs = (ctypes.c_void_p * 12)(*(base + getattr(KindArgs, fl[0]).offset
                                                     for fl in KindArgs._fields_))
                params = self.ptrs
        else:
            raise AssertionError(style)
        return hip.hipModuleLaunchKernel(self.f, 1, 1, 1, N, 1, 1, 0, None, params, extra)[0]


def _device_buffers(rng):
    p_h, q_h = rng.standard_normal(N).astype(np.float32), rng.standard_normal(N)
    out, p, q = (hip.hipMalloc(8 * N)[1] for _ in range(3))
    hip.hipMemcpy(p, p_h, 4 * N, hip.hipMemcpyKind.hipMemcpyHostToDevice)
    hip.hipMemcpy(q, q_h, 8 * N, hip.hipMemcpyKind.hipMemcpyHostToDevice)
    return p_h, q_h, out, p, q


def _read(out):
    got = np.empty(N)
    hip.hipMemcpy(got, out, 8 * N, hip.hipMemcpyKind.hipMemcpyDeviceToHost)
    return got


STYLES = ("python", "int addresses", "numpy", "ctypes", "tuple kernelParams", "extra tuple", "extra object",
          "extra config array", "void** kernelParams")


@pytest.mark.parametrize("style", STYLES)
def test_each_argument_kind_repeats_natively_with_new_values(kinds_co, style):
    hip.hipSetDevice(0)
    rng = np.random.default_rng(abs(hash(style)) % 2 ** 32)
    err, mod = hip.hipModuleLoad(str(kinds_co).encode())
    assert err == hip.hipError_t.hipSuccess
    f = hip.hipModuleGetFunction(mod, b"_Z5kindsPdPKfijlmshfdbPKd")[1]
    assert f is not None
    p_h, q_h, out, p, q = _device_buffers(rng)
    launch = _Launcher(f, out, p, q, style)
    launches = 5
    for _ in range(launches):
        v = _values(rng)
        hip.hipMemset(out, 0xFF, 8 * N)
        err = launch(v)
        assert err == hip.hipError_t.hipSuccess, last_exception()
        assert hip.hipDeviceSynchronize()[0] == hip.hipError_t.hipSuccess
        np.testing.assert_array_equal(_read(out), _expected(p_h, q_h, v), err_msg=f"{style}: {v}")
    assert fastlaunch.hits(f) == launches - 1, f"{style}: repeats not published natively"
    for x in (out, p, q):
        hip.hipFree(x)
    hip.hipModuleUnload(mod)


def test_device_arrays_in_kernel_params_repeat_natively(kinds_co):
    """pyhip DeviceArrays (``__hip_pointer__`` objects) in a hipModuleLaunchKernel kernelParams list: repeats
    are published natively, every result checked."""
    hip.hipSetDevice(0)
    rng = np.random.default_rng(17)
    mod = hip.hipModuleLoad(str(kinds_co).encode())[1]
    f = hip.hipModuleGetFunction(mod, b"_Z5kindsPdPKfijlmshfdbPKd")[1]
    p_h, q_h = rng.standard_normal(N).astype(np.float32), rng.standard_normal(N)
    out, p, q = pyhip.empty(N, np.float64), pyhip.to_device(p_h), pyhip.to_device(q_h)
    for _ in range(4):
        v = _values(rng)
        out.set(np.full(N, np.nan))
        err = hip.hipModuleLaunchKernel(f, 1, 1, 1, N, 1, 1, 0, None, _typed(v, out, p, q, "python"), None)[0]
        assert err == hip.hipError_t.hipSuccess, last_exception()
        assert hip.hipDeviceSynchronize()[0] == hip.hipError_t.hipSuccess
        np.testing.assert_array_equal(out.get(), _expected(p_h, q_h, v))
    assert fastlaunch.hits(f) == 3
    hip.hipModuleUnload(mod)


@pytest.mark.parametrize("style", ("python", "numpy", "ctypes"))
def test_kernel_call_of_each_kind_repeats_natively(kinds_co, style):
    pyhip.set_device(0)
    rng = np.random.default_rng(7)
    k = pyhip.load(kinds_co).kernel("kinds")
    p_h, q_h = rng.standard_normal(N).astype(np.float32), rng.standard_normal(N)
    out, p, q = pyhip.empty(N, np.float64), pyhip.to_device(p_h), pyhip.to_device(q_h)
    for _ in range(4):
        v = _values(rng)
        k(1, N, *_typed(v, out, p, q, style))
        pyhip.synchronize()
        np.testing.assert_array_equal(out.get(), _expected(p_h, q_h, v))
    assert fastlaunch.hits(k.function) == 3


def _outcome(call):
    """(error code, message) of a hipModuleLaunchKernel call."""
    err = call()[0]
    exc = last_exception() if err != hip.hipError_t.hipSuccess else None
    return err, (type(exc).__name__, str(exc)) if exc is not None else None


BAD = {
    # after a launch with these good arguments, the bad ones
    "one argument short": (lambda v, o, p, q: _typed(v, o, p, q, "python"),
                           lambda v, o, p, q: _typed(v, o, p, q, "python")[:-1]),
    "int32 out of range": (lambda v, o, p, q: _typed(v, o, p, q, "python"),
                           lambda v, o, p, q: _typed({**v, "i": 2 ** 32}, o, p, q, "python")),
    "np.int64 out of range for int": (
        lambda v, o, p, q: [np.int64(x) if j == 2 else x for j, x in enumerate(_typed(v, o, p, q, "numpy"))],
        lambda v, o, p, q: [np.int64(2 ** 40) if j == 2 else x for j, x in enumerate(_typed(v, o, p, q, "numpy"))]),
    "c_long out of range for int": (
        lambda v, o, p, q: [ctypes.c_long(v["i"]) if j == 2 else x for j, x in enumerate(_typed(v, o, p, q, "ctypes"))],
        lambda v, o, p, q: [ctypes.c_long(-2 ** 40) if j == 2 else x
                            for j, x in enumerate(_typed(v, o, p, q, "ctypes"))]),
    "negative address": (lambda v, o, p, q: _typed(v, o, p, q, "int addresses"),
                         lambda v, o, p, q: [-8] + _typed(v, o, p, q, "int addresses")[1:]),
    "float for a pointer": (lambda v, o, p, q: _typed(v, o, p, q, "python"),
                            lambda v, o, p, q: [1.5] + _typed(v, o, p, q, "python")[1:]),
    "np.float64 for a pointer": (lambda v, o, p, q: _typed(v, o, p, q, "numpy"),
                                 lambda v, o, p, q: [np.float64(1.5)] + _typed(v, o, p, q, "numpy")[1:]),
    "c_double for a pointer": (lambda v, o, p, q: _typed(v, o, p, q, "ctypes"),
                               lambda v, o, p, q: [ctypes.c_double(1.5)] + _typed(v, o, p, q, "ctypes")[1:]),
    "float64 for a float": (lambda v, o, p, q: _typed(v, o, p, q, "numpy"),
                            lambda v, o, p, q: [np.float64(x) if j == 8 else x
                                                for j, x in enumerate(_typed(v, o, p, q, "numpy"))]),
    "c_float for a double": (lambda v, o, p, q: _typed(v, o, p, q, "ctypes"),
                             lambda v, o, p, q: [ctypes.c_float(1.0) if j == 9 else x
                                                 for j, x in enumerate(_typed(v, o, p, q, "ctypes"))]),
    "extra buffer too short": (lambda v, o, p, q: ("extra", _extra_tuple(v, o, p, q)),
                               lambda v, o, p, q: ("extra", _extra_tuple(v, o, p, q)[:-1])),
    "extra and kernelParams": (lambda v, o, p, q: ("extra", _extra_tuple(v, o, p, q)),
                               lambda v, o, p, q: ("both", _extra_tuple(v, o, p, q))),
    "config array without END": (lambda v, o, p, q: ("extra", _config_array(_extra_tuple(v, o, p, q))),
                                 lambda v, o, p, q: ("extra", _config_array(_extra_tuple(v, o, p, q), end=7))),
    "config array too short": (lambda v, o, p, q: ("extra", _config_array(_extra_tuple(v, o, p, q))),
                               lambda v, o, p, q: ("extra", _config_array(_extra_tuple(v, o, p, q), cut=4))),
}
_KEEP = []


def _config_array(entries, end=hip.HIP_LAUNCH_PARAM_END, cut=0):
    """A C ``extra`` config array over the packing of ``entries`` (the repeat path reads it in C): END replaced
    by ``end``, the size ``cut`` bytes short."""
    x = HipModuleLaunchKernel_extra(entries)
    size = ctypes.c_size_t(x.args_size.value - cut)
    cfg = (ctypes.c_void_p * 5)(hip.HIP_LAUNCH_PARAM_BUFFER_POINTER, ctypes.addressof(x.args),
                                hip.HIP_LAUNCH_PARAM_BUFFER_SIZE, ctypes.addressof(size), end)
    _KEEP[:] = _KEEP[-8:] + [(x, size, cfg)]
    return cfg


@pytest.mark.parametrize("case", sorted(BAD))
def test_a_bad_argument_after_a_native_entry_is_reported_as_by_the_full_path(kinds_co, case):
    hip.hipSetDevice(0)
    rng = np.random.default_rng(3)
    mod = hip.hipModuleLoad(str(kinds_co).encode())[1]
    f = hip.hipModuleGetFunction(mod, b"kinds")[1]
    _, _, out, p, q = _device_buffers(rng)
    good, bad = BAD[case]

    def call(args):
        if isinstance(args, tuple) and args[0] in ("extra", "both"):
            params = list(args[1]) if args[0] == "both" else None
            return lambda: hip.hipModuleLaunchKernel(f, 1, 1, 1, N, 1, 1, 0, None, params, args[1])
        return lambda: hip.hipModuleLaunchKernel(f, 1, 1, 1, N, 1, 1, 0, None, args, None)

    v = _values(rng)
    for _ in range(2):
        assert call(good(v, out, p, q))()[0] == hip.hipError_t.hipSuccess
    assert fastlaunch.hits(f) == 1 and f.fast, "no native entry to test against"
    with_entry = _outcome(call(bad(v, out, p, q)))
    assert fastlaunch.hits(f) == 1, "the bad launch was published natively"
    f.fast.clear()
    full_path = _outcome(call(bad(v, out, p, q)))
    assert with_entry[0] != hip.hipError_t.hipSuccess
    assert with_entry == full_path
    hip.hipDeviceSynchronize()
    for x in (out, p, q):
        hip.hipFree(x)
    hip.hipModuleUnload(mod)


def test_kernel_call_bad_argument_after_a_native_entry_raises_as_the_full_path(kinds_co):
    pyhip.set_device(0)
    k = pyhip.load(kinds_co).kernel("kinds")
    rng = np.random.default_rng(11)
    out, p, q = pyhip.empty(N, np.float64), pyhip.to_device(np.zeros(N, np.float32)), pyhip.to_device(np.zeros(N))
    v = _values(rng)
    for _ in range(2):
        k(1, N, *_typed(v, out, p, q, "python"))
    assert fastlaunch.hits(k.function) == 1
    outcomes = []
    for _ in range(2):
        with pytest.raises(pyhip.HipError) as info:
            k(1, N, *_typed({**v, "i": 2 ** 40}, out, p, q, "python"))
        outcomes.append((info.value.code, str(info.value)))
        k.function.fast.clear()
    assert outcomes[0] == outcomes[1]
    assert fastlaunch.hits(k.function) == 0
    pyhip.synchronize()


def test_values_struct_refuses_fall_back_and_are_written_as_c_converts_them(kinds_co):
    """Values the full path accepts but the entry's format does not (2^32-1 for an int, -1 for an unsigned, an
    address ≥ 2^63 as np.int64 cannot be): the full path runs and writes C's conversion."""
    hip.hipSetDevice(0)
    rng = np.random.default_rng(17)
    mod = hip.hipModuleLoad(str(kinds_co).encode())[1]
    f = hip.hipModuleGetFunction(mod, b"kinds")[1]
    p_h, q_h, out, p, q = _device_buffers(rng)
    v = _values(rng)
    for args in (_typed(v, out, p, q, "python"), _typed(v, out, p, q, "python")):
        assert hip.hipModuleLaunchKernel(f, 1, 1, 1, N, 1, 1, 0, None, args, None)[0] == hip.hipError_t.hipSuccess
    assert fastlaunch.hits(f) == 1
    edge = {**v, "i": 2 ** 32 - 1, "u": -1, "ul": -2}
    args = _typed(edge, out, p, q, "python")
    assert hip.hipModuleLaunchKernel(f, 1, 1, 1, N, 1, 1, 0, None, args, None)[0] == hip.hipError_t.hipSuccess
    hip.hipDeviceSynchronize()
    np.testing.assert_array_equal(_read(out), _expected(p_h, q_h, {**v, "i": -1, "u": 2 ** 32 - 1, "ul": 2 ** 64 - 2}))
    assert fastlaunch.hits(f) == 1
    entry = next(iter(f.fast.values()))
    args = _typed(v, out, p, q, "python")              # the entry was kept for the next repeat
    assert hip.hipModuleLaunchKernel(f, 1, 1, 1, N, 1, 1, 0, None, args, None)[0] == hip.hipError_t.hipSuccess
    assert fastlaunch.hits(f) == 2 and next(iter(f.fast.values())) is entry
    hip.hipDeviceSynchronize()
    np.testing.assert_array_equal(_read(out), _expected(p_h, q_h, v))
    for x in (out, p, q):
        hip.hipFree(x)
    hip.hipModuleUnload(mod)


UNTYPED_SRC = r"""
#include <hip/hip_runtime.h>
extern "C" __global__ void ukinds(double* o, int a, float s, double t, _Float16 h, short w, unsigned char c) {
  int i = threadIdx.x;
  o[i] = (double)a * i + (double)s + t + (double)h + (double)w + (double)c;
}
"""


@pytest.mark.parametrize("style", ("python", "numpy", "ctypes"))
def test_untyped_arguments_of_each_kind_repeat_natively(tmp_path, style):
    """extern "C" kernels name no argument types: numpy scalars and ctypes values go in as their own bytes, ints
    and floats by the argument's size (a half needs a numpy or ctypes value)."""
    (tmp_path / "u.hip").write_text(UNTYPED_SRC)
    co = tmp_path / "u.hsaco"
    subprocess.run(["hipcc", "--offload-arch=gfx90a", "-O2", "--genco", str(tmp_path / "u.hip"), "-o", str(co)],
                   check=True, env={**os.environ, "HIP_PLATFORM": "amd"}, capture_output=True)
    pyhip.set_device(0)
    k = pyhip.load(co).kernel("ukinds")
    assert all(pk.kind == "other" for pk in k.function.packer.kinds[1:])
    o = pyhip.empty(N, np.float64)
    rng = np.random.default_rng(23)
    for _ in range(4):
        # a Python int for the 1-byte slot is written signed (as the full path does): 128..255 would take it
        a, w = int(rng.integers(-1000, 1000)), int(rng.integers(-2 ** 15, 2 ** 15))
        c = int(rng.integers(0, 128 if style == "python" else 256))
        s, t, h = np.float32(rng.standard_normal()), rng.standard_normal(), np.float16(rng.standard_normal())
        if style == "python":
            args = (a, float(s), float(t), h, w, c)
        elif style == "numpy":
            args = (np.int32(a), s, np.float64(t), h, np.int16(w), np.uint8(c))
        else:
            args = (ctypes.c_int(a), ctypes.c_float(s), ctypes.c_double(t), ctypes.c_uint16(int(h.view(np.uint16))),
                    ctypes.c_short(w), ctypes.c_ubyte(c))
        k(1, N, o, *args)
        pyhip.synchronize()
        i = np.arange(N, dtype=np.float64)
        want = np.float64(a) * i + np.float64(s) + t + np.float64(h) + np.float64(w) + np.float64(c)
        np.testing.assert_array_equal(o.get(), want)
    assert fastlaunch.hits(k.function) == 3


def test_extra_tuple_packed_natively_across_changing_entry_types(kinds_co):
    """hip-python's ``extra`` tuple: its layout is bound into the native entry per tuple of entry types (the
    native launcher packs it, no ctypes work per launch); the pointers given as pointer objects, int addresses,
    numpy integers or c_void_p in turn (a new binding each time), every result checked against numpy, every
    repeat published natively."""
    hip.hipSetDevice(0)
    rng = np.random.default_rng(2424)
    err, mod = hip.hipModuleLoad(str(kinds_co).encode())
    f = hip.hipModuleGetFunction(mod, b"_Z5kindsPdPKfijlmshfdbPKd")[1]
    p_h, q_h, out, p, q = _device_buffers(rng)
    forms = (lambda x: x, int, lambda x: np.uint64(int(x)), lambda x: ctypes.c_void_p(int(x)))
    launches = 0
    for k in range(16):
        form = forms[k // 4]
        v = _values(rng)
        hip.hipMemset(out, 0xFF, 8 * N)
        extra = _extra_tuple(v, form(out), form(p), form(q))
        assert hip.hipModuleLaunchKernel(f, 1, 1, 1, N, 1, 1, 0, None, None, extra)[0] == hip.hipError_t.hipSuccess
        launches += 1
        assert hip.hipDeviceSynchronize()[0] == hip.hipError_t.hipSuccess
        np.testing.assert_array_equal(_read(out), _expected(p_h, q_h, v), err_msg=f"launch {k}: {v}")
    entries = list(f.fast.values())
    assert len(entries) == 1 and entries[0].extra_types is not None
    assert fastlaunch.hits(f) == launches - 1
    for x in (out, p, q):
        hip.hipFree(x)
    hip.hipModuleUnload(mod)


# -- the native launch call (native/aql_launch.c: hml, kcall): ctypes values read from their buffers, the
#    null stream's device, lists changed by a reader, the same errors as the full path --------------------------

def _launch_outcome(f, args, out, extra=None):
    """(error code, the full path's exception, the output) of one launch of ``kinds`` and a synchronize."""
    hip.hipMemset(out, 0xFF, 8 * N)
    err = hip.hipModuleLaunchKernel(f, 1, 1, 1, N, 1, 1, 0, None, args, extra)[0]
    exc = last_exception() if err != hip.hipError_t.hipSuccess else None
    assert hip.hipDeviceSynchronize()[0] == hip.hipError_t.hipSuccess
    return err, (type(exc).__name__, str(exc)) if exc is not None else None, _read(out)


# (argument index in kinds(), ctypes type, values): in range of the slot and out of it (the native reading refuses
# those, the full path converts or reports them)
CT_CASES = [
    (2, ctypes.c_int, [-2 ** 31, 2 ** 31 - 1, 0]), (2, ctypes.c_long, [-2 ** 31, 2 ** 31 - 1, 2 ** 31, -2 ** 40]),
    (2, ctypes.c_uint, [2 ** 31 - 1, 2 ** 31, 2 ** 32 - 1]), (2, ctypes.c_short, [-7]), (2, ctypes.c_byte, [-128]),
    (2, ctypes.c_ubyte, [255]), (2, ctypes.c_longlong, [2 ** 62]), (2, ctypes.c_ulonglong, [2 ** 63, 5]),
    (3, ctypes.c_uint, [0, 2 ** 32 - 1]), (3, ctypes.c_int, [-1, 5]), (3, ctypes.c_ulong, [2 ** 32, 7]),
    (3, ctypes.c_ushort, [65535]),
    (4, ctypes.c_long, [-2 ** 63, 2 ** 63 - 1]), (4, ctypes.c_ulong, [2 ** 63 - 1, 2 ** 63, 2 ** 64 - 1]),
    (4, ctypes.c_int, [-9]),
    (5, ctypes.c_ulong, [0, 2 ** 64 - 1]), (5, ctypes.c_long, [-1, 12]), (5, ctypes.c_uint, [2 ** 32 - 1]),
    (6, ctypes.c_short, [-2 ** 15, 2 ** 15 - 1]), (6, ctypes.c_int, [40000, -3]), (6, ctypes.c_ushort, [65535]),
    (7, ctypes.c_ubyte, [0, 255]), (7, ctypes.c_byte, [-1, 3]), (7, ctypes.c_int, [256, 9]),
    (8, ctypes.c_float, [3.0e38, -1.5e-38, float("inf")]), (9, ctypes.c_double, [1e300, -2.5, float("-inf")]),
    (10, ctypes.c_bool, [True, False]), (10, ctypes.c_int, [1, 0, 2]),
]


@pytest.mark.parametrize("index,ctype,values", CT_CASES, ids=[f"{i}-{t.__name__}" for i, t, _ in CT_CASES])
def test_ctypes_values_read_natively_as_the_full_path_reads_them(kinds_co, index, ctype, values):
    """ctypes' own types are read from their buffers by the native launcher: for every value, in the slot's range
    or not, a launch with a native entry has the outcome (error, exception, output) of the full path's, and
    the in-range ones were published natively."""
    hip.hipSetDevice(0)
    rng = np.random.default_rng(index * 1000 + len(values))
    mod = hip.hipModuleLoad(str(kinds_co).encode())[1]
    f = hip.hipModuleGetFunction(mod, b"kinds")[1]
    p_h, q_h, out, p, q = _device_buffers(rng)
    v = _values(rng)

    def args(x):
        a = _typed(v, out, p, q, "ctypes")
        a[index] = ctype(x)
        return a

    prime = 1.0 if ctype in (ctypes.c_float, ctypes.c_double) else 1
    for x in values:
        f.fast.clear()
        for _ in range(2):                          # the full path, then a repeat through the new entry
            assert _launch_outcome(f, args(prime), out)[0] == hip.hipError_t.hipSuccess
        assert f.fast
        hits = fastlaunch.hits(f)
        fast = _launch_outcome(f, args(x), out)
        published = fastlaunch.hits(f) > hits
        f.fast.clear()
        full = _launch_outcome(f, args(x), out)
        assert fast[:2] == full[:2], (x, fast[:2], full[:2])
        np.testing.assert_array_equal(fast[2], full[2], err_msg=f"{ctype.__name__}({x})")
        if fast[0] == hip.hipError_t.hipSuccess and published and not (index == 10 and x not in (0, 1)):
            want = dict(v, **{("i", "u", "l", "ul", "s", "c", "f", "d", "b")[index - 2]: ctype(x).value})
            np.testing.assert_array_equal(fast[2], _expected(p_h, q_h, want))
    # the common values of each type do take the native way
    f.fast.clear()
    for _ in range(3):
        assert _launch_outcome(f, args(prime), out)[0] == hip.hipError_t.hipSuccess
    assert fastlaunch.hits(f) == 2
    for x in (out, p, q):
        hip.hipFree(x)
    hip.hipModuleUnload(mod)


@pytest.mark.parametrize("style", ("python", "numpy", "ctypes", "tuple kernelParams", "extra tuple", "kernel call"))
def test_random_values_of_each_style_match_numpy_and_bad_ones_fail_as_before(kinds_co, style):
    """Every argument style through the native launch call: random values checked against numpy over many
    repeats, then one argument short, one too many and a wrong type: the error (code, exception) the full path
    gives without an entry, nothing published natively."""
    hip.hipSetDevice(0)
    pyhip.set_device(0)
    rng = np.random.default_rng(abs(hash(style)) % 2 ** 32)
    mod = hip.hipModuleLoad(str(kinds_co).encode())[1]
    f = hip.hipModuleGetFunction(mod, b"kinds")[1]
    k = pyhip.load(kinds_co).kernel("kinds")
    p_h, q_h = rng.standard_normal(N).astype(np.float32), rng.standard_normal(N)
    da, dp, dq = pyhip.empty(N, np.float64), pyhip.to_device(p_h), pyhip.to_device(q_h)

    def arguments(v):
        if style == "extra tuple":
            return _extra_tuple(v, da, dp, dq)
        a = _typed(v, da, dp, dq, {"tuple kernelParams": "python", "kernel call": "python"}.get(style, style))
        return tuple(a) if style == "tuple kernelParams" else a

    def launch(a):
        """(error code, exception) of one launch with the arguments ``a``."""
        if style == "kernel call":
            try:
                k(1, N, *a)
            except pyhip.HipError as exc:
                return exc.code, str(exc)
            return hip.hipError_t.hipSuccess, None
        kp, extra = (None, a) if style == "extra tuple" else (a, None)
        err = hip.hipModuleLaunchKernel(f, 1, 1, 1, N, 1, 1, 0, None, kp, extra)[0]
        exc = last_exception() if err != hip.hipError_t.hipSuccess else None
        return err, (type(exc).__name__, str(exc)) if exc is not None else None

    func = k.function if style == "kernel call" else f
    launches = 12
    for _ in range(launches):
        v = _values(rng)
        da.set(np.full(N, np.nan))
        assert launch(arguments(v))[0] == hip.hipError_t.hipSuccess
        pyhip.synchronize()
        np.testing.assert_array_equal(da.get(), _expected(p_h, q_h, v), err_msg=f"{style}: {v}")
    assert fastlaunch.hits(func) == launches - 1, "repeats not published natively"
    v = _values(rng)
    good = arguments(v)
    bad = {"one short": good[:-1], "one too many": good + type(good)([good[-1]]),
           "a str for an int": type(good)(list(good[:2]) + ["3"] + list(good[3:])),
           "a float for a pointer": type(good)([1.5] + list(good[1:]))}
    if style == "extra tuple":
        del bad["one too many"]     # a longer argument buffer is cut to the segment (HIP copies its size)
    for what, a in bad.items():
        assert launch(good)[0] == hip.hipError_t.hipSuccess     # an entry for the good types
        hits = fastlaunch.hits(func)
        with_entry = launch(a)
        assert fastlaunch.hits(func) == hits, f"{what}: published natively"
        func.fast.clear()
        without = launch(a)
        assert with_entry[0] != hip.hipError_t.hipSuccess, what
        assert with_entry == without, what
    pyhip.synchronize()
    hip.hipModuleUnload(mod)


def test_a_reader_changing_the_kernel_params_list_is_safe(kinds_co):
    """A pointer object whose ``__hip_pointer__`` empties the kernelParams list being read: the values read are
    the list's at the call (no dangling item), as the full path's copy of the list has them."""
    hip.hipSetDevice(0)
    rng = np.random.default_rng(99)
    mod = hip.hipModuleLoad(str(kinds_co).encode())[1]
    f = hip.hipModuleGetFunction(mod, b"kinds")[1]
    p_h, q_h, out, p, q = _device_buffers(rng)

    class Meddler:
        lst = None

        def __init__(self, address):
            self.address = address

        def __hip_pointer__(self):
            if Meddler.lst is not None:
                Meddler.lst.clear()
                Meddler.lst.extend([object()] * 40)
            return self.address

    for _ in range(4):
        v = _values(rng)
        a = _typed(v, Meddler(int(out)), Meddler(int(p)), Meddler(int(q)), "python")
        Meddler.lst = a
        err, exc, got = _launch_outcome(f, a, out)
        assert err == hip.hipError_t.hipSuccess, exc
        np.testing.assert_array_equal(got, _expected(p_h, q_h, v))
    assert fastlaunch.hits(f) == 3
    for x in (out, p, q):
        hip.hipFree(x)
    hip.hipModuleUnload(mod)


def test_null_stream_entry_serves_its_device_only(kinds_co):
    """On the null stream the native call checks the thread's current device (the runtime's thread-local): with
    another device current, the launch goes the full path and gets its error, nothing published."""
    hip.hipSetDevice(0)
    rng = np.random.default_rng(5)
    mod = hip.hipModuleLoad(str(kinds_co).encode())[1]
    f = hip.hipModuleGetFunction(mod, b"kinds")[1]
    k = pyhip.load(kinds_co).kernel("kinds")
    _, _, out, p, q = _device_buffers(rng)
    v = _values(rng)
    a = _typed(v, out, p, q, "python")
    for _ in range(2):
        assert hip.hipModuleLaunchKernel(f, 1, 1, 1, N, 1, 1, 0, None, a, None)[0] == hip.hipError_t.hipSuccess
        k(1, N, *a)
    assert fastlaunch.hits(f) == 1 and fastlaunch.hits(k.function) == 1
    tls = runtime()._tls
    tls.device = 1                                  # as if hipSetDevice(1) had succeeded
    try:
        outcomes = []
        for _ in range(2):
            before = fastlaunch.hits(f), fastlaunch.hits(k.function)
            err = hip.hipModuleLaunchKernel(f, 1, 1, 1, N, 1, 1, 0, None, a, None)[0]
            try:
                k(1, N, *a)
                kexc = None
            except Exception as exc:                # noqa: BLE001 - whatever the full path raises
                kexc = (type(exc).__name__, str(exc))
            outcomes.append((err, kexc))
            assert (fastlaunch.hits(f), fastlaunch.hits(k.function)) == before, "published natively"
            f.fast.clear()
            k.function.fast.clear()
        assert outcomes[0] == outcomes[1]
        assert outcomes[0][0] != hip.hipError_t.hipSuccess
    finally:
        tls.device = 0
    hip.hipDeviceSynchronize()
    for x in (out, p, q):
        hip.hipFree(x)
    hip.hipModuleUnload(mod)


def test_keywords_and_arity_go_the_full_way():
    """hipModuleLaunchKernel keeps hip-python's signature: keywords work, a wrong arity is a TypeError."""
    hip.hipSetDevice(0)
    mod = hip.hipModuleLoad(str(BIN / "hipcc52/basic-gfx90a.hsaco").encode())[1]
    f = hip.hipModuleGetFunction(mod, b"vadd")[1]
    n = 256
    a = RNG.standard_normal(n).astype(np.float32)
    da, dc = (hip.hipMalloc(4 * n)[1] for _ in range(2))
    hip.hipMemcpy(da, a, 4 * n, hip.hipMemcpyKind.hipMemcpyHostToDevice)
    for m in (n, 100, 7):
        hip.hipMemset(dc, 0, 4 * n)
        assert hip.hipModuleLaunchKernel(f, 1, 1, 1, 256, 1, 1, 0, None, extra=None,
                                         kernelParams=[da, da, dc, m])[0] == hip.hipError_t.hipSuccess
        hip.hipDeviceSynchronize()
        got = np.zeros(n, np.float32)
        hip.hipMemcpy(got, dc, 4 * n, hip.hipMemcpyKind.hipMemcpyDeviceToHost)
        np.testing.assert_array_equal(got[:m], 2 * a[:m])
    with pytest.raises(TypeError):
        hip.hipModuleLaunchKernel(f, 1, 1, 1, 256, 1, 1, 0, None, [da, da, dc, n], None, None)
    with pytest.raises(TypeError):
        hip.hipModuleLaunchKernel(f, 1, 1, 1, 256, 1, 1, 0, None, [da, da, dc, n])
    for x in (da, dc):
        hip.hipFree(x)
    hip.hipModuleUnload(mod)


def test_kernel_call_repeats_natively_without_pyhip_hip():
    """The Pythonic API alone (pyhip.hip never imported): Kernel calls repeat natively."""
    code = f"""
import sys, numpy as np, pyhip
from pathlib import Path
from pyhip.runtime import fastlaunch
k = pyhip.load(Path({str(BIN / "hipcc52/basic-gfx90a.hsaco")!r})).kernel("vadd")
n = 300
a = pyhip.to_device(np.arange(n, dtype=np.float32))
c = pyhip.empty(n, np.float32)
for m in (n, 200, 100):
    c.set(np.zeros(n, np.float32))
    k(2, 256, a, a, c, m)
    pyhip.synchronize()
    assert (c.get()[:m] == 2 * np.arange(m)).all() and not c.get()[m:].any()
assert fastlaunch.hits(k.function) == 2
assert "pyhip.hip" not in sys.modules
print("ok")
"""
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr[-2000:]
