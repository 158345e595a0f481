#!/usr/bin/env python3
"""Loader benchmarks (prints a table; medians of repeated runs).

1. Indexing a 64 MB synthetic offload bundle (target ≤ 10 ms): the entry table is read, code objects are
   zero-copy slices parsed only when used, so the cost is O(entries), not O(bytes).
2. First kernel lookup in a code object with 1,000 kernels (target ≤ 20 ms): load + find one kernel by name.
   The 1,000-kernel object is built with clang-19 (needs the Debian toolchain).
"""
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pyhip.loader import load  # noqa: E402
from pyhip.loader.bundle import build_bundle  # noqa: E402


def median_ms(fn, runs=15):
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def big_bundle(target_bytes=64 << 20) -> tuple[bytes, int]:
    co = (ROOT / "tests/fixtures/bin/clang19/basic-gfx942-v5.hsaco").read_bytes()
    padded = co + b"\0" * (256 * 1024 - len(co))           # 256 KiB per entry
    n = target_bytes // len(padded)
    entries = [("host-x86_64-unknown-linux--", b"")]
    entries += [(f"hipv4-amdgcn-amd-amdhsa--gfx942-copy{i}", padded) for i in range(n)]
    return build_bundle(entries, align=4096), n


def thousand_kernels(tmp: Path) -> bytes | None:
    src = ['#include "%s"' % (ROOT / "tests/fixtures/src/minihip.h")]
    src += [f'extern "C" __global__ void k{i}(float* x, int n) {{ int j = threadIdx.x; if (j < n) x[j] += {i}.0f; }}'
            for i in range(1000)]
    (tmp / "k.hip").write_text("\n".join(src))
    try:
        subprocess.run(["clang-19", "-x", "hip", "--offload-arch=gfx942", "-nogpulib", "-nogpuinc", "-O2",
                        "--cuda-device-only", "--no-gpu-bundle-output", "-o", str(tmp / "k.hsaco"), str(tmp / "k.hip")],
                       check=True, capture_output=True)
    except (OSError, subprocess.CalledProcessError):
        return None
    return (tmp / "k.hsaco").read_bytes()


def main() -> None:
    rows = []
    data, n = big_bundle()
    ms = median_ms(lambda: load(data))
    b = load(data)
    assert len(b.code_objects) == n and not any(r.parsed for r in b.code_objects)
    rows.append((f"index a {len(data) / 2**20:.0f} MB bundle ({n} entries)", ms, 10.0))
    half, _ = big_bundle(32 << 20)
    rows.append((f"index a {len(half) / 2**20:.0f} MB bundle (same entry size)", median_ms(lambda: load(half)), None))
    with tempfile.TemporaryDirectory() as tmp:
        k1000 = thousand_kernels(Path(tmp))
    if k1000 is not None:
        def first_lookup():
            load(k1000).code_objects[0].code_object.find_kernel("k500")
        rows.append(("first lookup, 1,000-kernel code object", median_ms(first_lookup), 20.0))

    else:
        rows.append(("first lookup, 1,000-kernel code object", float("nan"), 20.0))
    print(f"{'benchmark':<58} {'median ms':>10} {'target ms':>10}")
    for name, ms, target in rows:
        t = f"{target:.0f}" if target else "-"
        print(f"{name:<58} {ms:>10.2f} {t:>10}")


if __name__ == "__main__":
    main()
