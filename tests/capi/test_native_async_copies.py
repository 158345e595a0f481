"""hipMemcpyAsync / hipMemsetAsync from C (native/hip/fastlaunch.c): tests/capi/native_async_copies.hip, built
here with hipcc, interleaves native launches with asynchronous copies and fills on random data (a copy reading
what the kernel before it wrote, a kernel overwriting what the copy before it read), on the null stream and on a
created stream, with pageable and pinned host memory.  PYHIP_SHIM_STATS proves they were queued or done in C."""
import numpy as np

from shim_programs import counter, run_counted


def test_native_async_copies(tmp_path):
    stats = run_counted(tmp_path, "native_async_copies")
    assert counter(stats, "native copies and fills") >= 2000, stats      # of 2500 asynchronous copies and fills (5 per round, 500 rounds)


def test_memset_d8_d16_d32_from_c_match_numpy(tmp_path):
    """hipMemsetD8/D16/D32 and their Async forms called from a hipcc program (tests/capi/memset_family.hip): random
    widths, element offsets and counts (not multiples of 4, up to the allocation's end, some 0), random values
    (wider than the element for D8/D16: the C prototypes truncate), device and pinned host memory, the null and a
    created stream, some after a kernel that wrote the buffer; every byte of the poisoned buffer compared.  On an
    armed device they are done (or queued, AGENT_FILL) in C, as hipMemset / hipMemsetAsync are."""
    rng = np.random.default_rng(2416)
    cap = 4099
    poison = rng.integers(0, 256, cap, dtype=np.uint8)
    cases, want = [], []
    for _ in range(150):
        width = int(rng.choice([1, 2, 4]))
        memory, asynchronous, stream = (int(x) for x in rng.integers(0, 2, 3))
        elems = cap // width
        offset = int(rng.integers(0, elems))
        count = int(rng.choice([0, elems - offset, rng.integers(1, elems - offset + 1)], p=[0.05, 0.15, 0.8]))
        value = int(rng.integers(0, 1 << 32))
        stamp = int(rng.integers(1, 200)) if rng.random() < 0.3 else 0
        cases.append(f"{memory} {width} {asynchronous} {stream} {offset} {count} {value} {stamp}")
        buf = (np.arange(cap) * 7 + stamp).astype(np.uint8) if stamp else poison.copy()
        dtype = {1: np.uint8, 2: np.uint16, 4: np.uint32}[width]
        buf[offset * width:(offset + count) * width].view(dtype)[:] = value & ((1 << 8 * width) - 1)
        want.append(buf)
    src, dst = tmp_path / "cases", tmp_path / "out"
    src.write_bytes(f"{cap}\n".encode() + poison.tobytes() + "\n".join(cases).encode() + b"\n")
    stats = run_counted(tmp_path, "memset_family", (src, dst))
    got = np.fromfile(dst, np.uint8)
    assert got.size == cap * len(cases)
    for k, (row, w) in enumerate(zip(got.reshape(len(cases), cap), want)):
        bad = np.flatnonzero(row != w)
        assert bad.size == 0, (k, cases[k], bad[:8], row[bad[:8]], w[bad[:8]])
    # the program's copies in C are at most the device buffer's H2D and D2H per case: the rest are fills in C
    copies = 2 * sum(c[0] == "0" for c in cases)
    assert counter(stats, "native copies and fills") >= copies + 20, (copies, stats)
