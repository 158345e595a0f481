#!/usr/bin/env python3
"""Python launch benchmark: the per-launch cost of ``pyhip.hip.hipModuleLaunchKernel`` and of the Pythonic
``Kernel.__call__`` for each way of passing a 16-argument kernel's arguments (pointers, ints, doubles, longs).

Builds a tiny kernel with hipcc (gfx90a code object; one block of 64 work-items computing
``out[i] = p[i] + q[i] + sum of the scalars``), loads it with hipModuleLoad/hipModuleGetFunction and measures,
per argument style (median of ``--runs`` runs):

* submit CPU: CPU time of the submitting thread per launch (``time.thread_time``) over N launches published
  back to back — the Python side's own cost, whatever the packet processor is doing meanwhile;
* submit wall: wall time of that loop per launch (the queue holds all N launches, but the packet processor,
  Python for now, competes for the GIL);
* back to back: wall time per kernel of N launches then one hipDeviceSynchronize;
* launch+sync: wall time per kernel of a launch followed by hipDeviceSynchronize;
* fast: the share of the timed launches published by the native repeat path (runtime/fastlaunch.py), from the
  stream's native launch count.

Each style varies an int argument from launch to launch; the output buffer is compared with numpy after the
runs (a stale or wrong kernarg fails the benchmark).  The device side (the packet processor and the dispatch)
dominates the back-to-back and launch+sync columns.

    PYTHONPATH=. python3 benchmarks/bench_pylaunch.py [--n 200] [--runs 5]
"""
from __future__ import annotations

import argparse
import ctypes
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

SOURCE = r"""
#include <hip/hip_runtime.h>
__global__ void k16(double* out, const double* p, int i0, int i1, int i2, int i3, double d0, double d1, double d2,
                    double d3, long l0, long l1, long l2, long l3, const double* q, int n) {
  int i = threadIdx.x + blockIdx.x * blockDim.x;
  if (i < n) out[i] = p[i] + q[i] + (double)(i0 + i1 + i2 + i3) + d0 + d1 + d2 + d3 + (double)(l0 + l1 + l2 + l3);
}
"""
NAME = "_Z3k16PdPKdiiiiddddllllS1_i"
N_ITEMS = 64
INTS, DOUBLES, LONGS = (2, -3, 4), (0.5, 1.25, -2.0, 3.0), (10, -20, 1 << 40, 7)


class Args(ctypes.Structure):
    """The kernel's explicit arguments as C lays them out (the ``extra`` buffer)."""
    _fields_ = [("out", ctypes.c_void_p), ("p", ctypes.c_void_p), ("i0", ctypes.c_int), ("i1", ctypes.c_int),
                ("i2", ctypes.c_int), ("i3", ctypes.c_int), ("d0", ctypes.c_double), ("d1", ctypes.c_double),
                ("d2", ctypes.c_double), ("d3", ctypes.c_double), ("l0", ctypes.c_long), ("l1", ctypes.c_long),
                ("l2", ctypes.c_long), ("l3", ctypes.c_long), ("q", ctypes.c_void_p), ("n", ctypes.c_int)]


def build(tmp: Path) -> Path:
    src, co = tmp / "k16.hip", tmp / "k16.hsaco"
    src.write_text(SOURCE)
    subprocess.run(["hipcc", "--offload-arch=gfx90a", "-O2", "--genco", str(src), "-o", str(co)], check=True,
                   env={**os.environ, "HIP_PLATFORM": "amd"}, capture_output=True)
    return co


def expected(p, q, k):
    return p + q + float(k + sum(INTS)) + sum(DOUBLES) + float(sum(LONGS))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=200, help="launches per back-to-back run (≤ the queue size)")
    ap.add_argument("--sync-n", type=int, default=30, help="launch+sync iterations per run")
    ap.add_argument("--runs", type=int, default=5)
    opts = ap.parse_args()

    import pyhip
    import pyhip.hip as hip
    from pyhip.api import DeviceArray
    from pyhip.runtime.context import runtime

    def ok(r):
        if r[0] != hip.hipError_t.hipSuccess:
            from pyhip.hip._api import last_exception
            raise RuntimeError(f"{r[0]!r}: {last_exception()}")
        return r[1] if len(r) == 2 else r[1:]

    with tempfile.TemporaryDirectory() as tmp:
        co = build(Path(tmp))
        ok(hip.hipSetDevice(0))
        # one module per hipModuleLaunchKernel style: a style's repeats are not packed by the native entry another
        # style prepared for the same function (a program passes its arguments one way per call site)
        funcs = [ok(hip.hipModuleGetFunction(ok(hip.hipModuleLoad(str(co).encode())), NAME.encode())) for _ in range(5)]
        kernel = pyhip.load(co).kernel(NAME)

    rng = np.random.default_rng(5)
    p_h, q_h = rng.standard_normal(N_ITEMS), rng.standard_normal(N_ITEMS)
    out, p, q = (ok(hip.hipMalloc(8 * N_ITEMS)) for _ in range(3))
    ok(hip.hipMemcpy(p, p_h, 8 * N_ITEMS, hip.hipMemcpyKind.hipMemcpyHostToDevice))
    ok(hip.hipMemcpy(q, q_h, 8 * N_ITEMS, hip.hipMemcpyKind.hipMemcpyHostToDevice))
    a_out, a_p, a_q = pyhip.empty(N_ITEMS, np.float64), pyhip.to_device(p_h), pyhip.to_device(q_h)
    i1, i2, i3 = INTS
    d0, d1, d2, d3 = DOUBLES
    l0, l1, l2, l3 = LONGS
    n = N_ITEMS
    cargs = Args(int(out), int(p), 0, i1, i2, i3, d0, d1, d2, d3, l0, l1, l2, l3, int(q), n)
    size = ctypes.c_size_t(ctypes.sizeof(Args))
    config = (ctypes.c_void_p * 5)(hip.HIP_LAUNCH_PARAM_BUFFER_POINTER, ctypes.addressof(cargs),
                                   hip.HIP_LAUNCH_PARAM_BUFFER_SIZE, ctypes.addressof(size), hip.HIP_LAUNCH_PARAM_END)
    ci, cd, cl, cp = ctypes.c_int, ctypes.c_double, ctypes.c_long, ctypes.c_void_p
    launch = hip.hipModuleLaunchKernel

    # each style: launch(k) publishes one launch whose first int argument (i0) is k, and the buffer it writes.
    # The other arguments are built once: the loop measures the runtime, not the construction of 16 objects.
    def with_k(args, make):
        def launch_k(k):
            a = list(args)
            a[2] = make(k)
            return a
        return launch_k

    def styles():
        py = with_k([out, p, 0, i1, i2, i3, d0, d1, d2, d3, l0, l1, l2, l3, q, n], int)
        yield "Python ints/floats", lambda k, f=funcs[0]: launch(f, 1, 1, 1, 64, 1, 1, 0, None, py(k), None), out
        npa = with_k([out, p, 0, np.int32(i1), np.int32(i2), np.int32(i3), np.float64(d0), np.float64(d1),
                      np.float64(d2), np.float64(d3), np.int64(l0), np.int64(l1), np.int64(l2), np.int64(l3), q,
                      np.int32(n)], np.int32)
        yield "numpy scalars", lambda k, f=funcs[1]: launch(f, 1, 1, 1, 64, 1, 1, 0, None, npa(k), None), out
        cta = with_k([cp(int(out)), cp(int(p)), 0, ci(i1), ci(i2), ci(i3), cd(d0), cd(d1), cd(d2), cd(d3),
                      cl(l0), cl(l1), cl(l2), cl(l3), cp(int(q)), ci(n)], ci)
        yield "ctypes values (kernelParams)", \
            lambda k, f=funcs[2]: launch(f, 1, 1, 1, 64, 1, 1, 0, None, cta(k), None), out
        ext = with_k([out, p, 0, ci(i1), ci(i2), ci(i3), cd(d0), cd(d1), cd(d2), cd(d3), cl(l0), cl(l1), cl(l2),
                      cl(l3), q, ci(n)], ci)
        yield "ctypes tuple (extra)", \
            lambda k, f=funcs[3]: launch(f, 1, 1, 1, 64, 1, 1, 0, None, None, tuple(ext(k))), out

        def extra_buffer(k, f=funcs[4]):
            cargs.i0 = k
            return launch(f, 1, 1, 1, 64, 1, 1, 0, None, None, config)
        yield "extra buffer (config array)", extra_buffer, out

        pya = with_k([a_out, a_p, 0, i1, i2, i3, d0, d1, d2, d3, l0, l1, l2, l3, a_q, n], int)

        def pythonic(k):
            kernel(1, 64, *pya(k))
            return (hip.hipError_t.hipSuccess,)
        yield "Pythonic Kernel call", pythonic, a_out

    def native_count():
        fs = runtime().resolve_stream(None).fast_state()
        return fs.launch_count() if fs is not None else 0

    def read(buf):
        if isinstance(buf, DeviceArray):
            return buf.get()
        h = np.empty(N_ITEMS)
        ok(hip.hipMemcpy(h, buf, 8 * N_ITEMS, hip.hipMemcpyKind.hipMemcpyDeviceToHost))
        return h

    rows = []
    for name, fn, buf in styles():
        try:
            ok(fn(1))                                   # the first launch takes the full path
            ok(hip.hipDeviceSynchronize())
        except Exception as exc:                        # noqa: BLE001 - a style this runtime refuses
            rows.append((name, f"refused: {str(exc)[:60]}"))
            continue
        cpu, wall, b2b, sync, fast = [], [], [], [], []
        k = 1
        for _ in range(opts.runs):
            c0 = native_count()
            t0, w0 = time.thread_time(), time.perf_counter()
            for _ in range(opts.n):
                k += 1
                fn(k)
            t1, w1 = time.thread_time(), time.perf_counter()
            ok(hip.hipDeviceSynchronize())
            w2 = time.perf_counter()
            fast.append((native_count() - c0) / opts.n)
            cpu.append((t1 - t0) / opts.n)
            wall.append((w1 - w0) / opts.n)
            b2b.append((w2 - w0) / opts.n)
            w0 = time.perf_counter()
            for _ in range(opts.sync_n):
                k += 1
                fn(k)
                hip.hipDeviceSynchronize()
            sync.append((time.perf_counter() - w0) / opts.sync_n)
        got = read(buf)
        np.testing.assert_allclose(got, expected(p_h, q_h, k), rtol=1e-12, atol=1e-9,
                                   err_msg=f"{name}: wrong output after {k} launches")
        med = statistics.median
        rows.append((name, med(fast), med(cpu) * 1e6, med(wall) * 1e6, med(b2b) * 1e6, med(sync) * 1e6))

    print(f"16-argument kernel, 1 block of 64; N={opts.n} back to back, {opts.sync_n} launch+sync; "
          f"median of {opts.runs} runs; output checked against numpy")
    head = ("argument style", "fast", "submit CPU µs", "submit wall µs", "back-to-back µs", "launch+sync µs")
    print(f"{head[0]:<30} {head[1]:>5} {head[2]:>14} {head[3]:>15} {head[4]:>16} {head[5]:>15}")
    for r in rows:
        if len(r) == 2:
            print(f"{r[0]:<30} {r[1]}")
        else:
            print(f"{r[0]:<30} {r[1]:>5.0%} {r[2]:>14.1f} {r[3]:>15.1f} {r[4]:>16.1f} {r[5]:>15.1f}")


if __name__ == "__main__":
    sys.exit(main())
