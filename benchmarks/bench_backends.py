"""The two backends of pyhip's runtime on the same work: the emulator in process (PYHIP_BACKEND=emu) and ROCr 5.2
over pyhip's drop-in libhsakmt on the same emulated GPU (PYHIP_BACKEND=hsa, PYHIP_HSA_THUNK=pyhip).

Per backend, in its own process (medians of repeated runs):
  submit      wall time per hipModuleLaunchKernel (scale<float>, 3 arguments) while earlier launches queue and
              execute (the emulated GPU runs in the same process: the wall time includes waiting for the GIL)
  submit CPU  CPU time of the submitting thread per launch: the Python work a launch costs
  launch+sync one small launch and its completion, end to end
  memcpy      hipMemcpy of 1 MiB to the device and back
Run: python benchmarks/bench_backends.py"""
from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CODE = ROOT / "tests" / "fixtures" / "bin" / "hipcc52" / "basic-gfx90a.hsaco"


def worker() -> dict:
    import numpy as np

    from pyhip import hip

    def ok(r):
        assert r[0] == hip.hipError_t.hipSuccess, r
        return r[1] if len(r) == 2 else r[1:]

    mod = ok(hip.hipModuleLoad(str(CODE).encode()))
    f = ok(hip.hipModuleGetFunction(mod, b"_Z5scaleIfEvPT_S0_i"))
    n = 1024
    x = ok(hip.hipMalloc(n * 4))
    stream = ok(hip.hipStreamCreate())
    args = [x, np.float32(1.0), n]
    out = {"submit_us": [], "submit_cpu_us": [], "launch_sync_ms": [], "memcpy_ms": []}
    for _ in range(5):
        t0, c0 = time.perf_counter(), time.thread_time()
        for _ in range(200):
            ok(hip.hipModuleLaunchKernel(f, 4, 1, 1, 256, 1, 1, 0, stream, args, None))
        out["submit_cpu_us"].append((time.thread_time() - c0) / 200 * 1e6)
        out["submit_us"].append((time.perf_counter() - t0) / 200 * 1e6)
        ok(hip.hipStreamSynchronize(stream))
    for _ in range(30):
        t0 = time.perf_counter()
        ok(hip.hipModuleLaunchKernel(f, 4, 1, 1, 256, 1, 1, 0, stream, args, None))
        ok(hip.hipStreamSynchronize(stream))
        out["launch_sync_ms"].append((time.perf_counter() - t0) * 1e3)
    host = np.random.default_rng(0).standard_normal(1 << 18).astype(np.float32)
    back = np.empty_like(host)
    d = ok(hip.hipMalloc(host.nbytes))
    for _ in range(10):
        t0 = time.perf_counter()
        ok(hip.hipMemcpy(d, host, host.nbytes, hip.hipMemcpyKind.hipMemcpyHostToDevice))
        ok(hip.hipMemcpy(back, d, host.nbytes, hip.hipMemcpyKind.hipMemcpyDeviceToHost))
        out["memcpy_ms"].append((time.perf_counter() - t0) * 1e3)
    assert np.array_equal(back, host)
    from pyhip.runtime.context import runtime
    out["backend"] = runtime().backend_kind
    return {k: (statistics.median(v) if isinstance(v, list) else v) for k, v in out.items()}


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        print(json.dumps(worker()))
        return 0
    rows = []
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))     # run from a checkout too
    path = os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")]))
    base = {**os.environ, "PYHIP_DEVICES": "gfx90a:sramecc+:xnack-", "PYTHONPATH": path}
    for name, env in (("emu", {"PYHIP_BACKEND": "emu"}),
                      ("hsa (ROCr 5.2 over pyhip's thunk)", {"PYHIP_BACKEND": "hsa", "PYHIP_HSA_THUNK": "pyhip"})):
        r = subprocess.run([sys.executable, __file__, "--worker"], capture_output=True, text=True,
                           env={**base, **env}, timeout=1800)
        if r.returncode:
            print(f"{name}: failed\n{r.stderr[-2000:]}")
            return 1
        rows.append((name, json.loads(r.stdout.strip().splitlines()[-1])))
    print(f"{'backend':<36} {'submit µs':>10} {'submit CPU µs':>14} {'launch+sync ms':>15} {'memcpy 1MiB x2 ms':>18}")
    for name, r in rows:
        print(f"{name:<36} {r['submit_us']:>10.1f} {r['submit_cpu_us']:>14.1f} {r['launch_sync_ms']:>15.2f} "
              f"{r['memcpy_ms']:>18.2f}")
    e, h = rows[0][1], rows[1][1]
    print(f"\nhsa / emu: submit {h['submit_us'] / e['submit_us']:.2f}x (CPU {h['submit_cpu_us'] / e['submit_cpu_us']:.2f}x), launch+sync "
          f"{h['launch_sync_ms'] / e['launch_sync_ms']:.2f}x, memcpy {h['memcpy_ms'] / e['memcpy_ms']:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
