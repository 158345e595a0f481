"""hipMemcpyAsync / hipMemsetAsync from C (native/hip/fastlaunch.c): tests/capi/native_async_copies.hip, built
here with hipcc, interleaves native launches with asynchronous copies and fills on random data (a copy reading
what the kernel before it wrote, a kernel overwriting what the copy before it read), on the null stream and on a
created stream, with pageable and pinned host memory.  PYHIP_SHIM_STATS proves they were queued or done in C."""
from shim_programs import counter, run_counted


def test_native_async_copies(tmp_path):
    stats = run_counted(tmp_path, "native_async_copies")
    assert counter(stats, "native copies and fills") >= 2000, stats      # of 2500 asynchronous copies and fills (5 per round, 500 rounds)
