"""hipDeviceSynchronize / hipStreamSynchronize waiting in C (tests/capi/native_sync.hip, built here with hipcc):
results read right after each synchronize, a fault in a natively launched kernel reported once, work another
stream got through Python waited for.  PYHIP_SHIM_STATS proves most synchronizes did not enter Python."""
from shim_programs import counter, run_counted


def test_native_synchronize(tmp_path):
    stats = run_counted(tmp_path, "native_sync")
    assert counter(stats, "native synchronizes") >= 400, stats        # of ~510 synchronizes; those after a Python command take Python


def test_idle_copies_and_synchronizes(tmp_path):
    """A copies-only program (tests/capi/idle_copies.hip: 400 rounds of random copies and fills, a kernel every
    100 rounds, every result checked): its synchronizes wait in C although it has no native launch stream
    (the device is armed with no grant), its copies and fills are done in C (fastlaunch.c), every result is
    right, and what C refuses (ranges past an allocation, a bad kind) is reported by Python as before."""
    stats = run_counted(tmp_path, "idle_copies")
    assert counter(stats, "native synchronizes") >= 350, stats     # of 400; the 4 after a kernel launch take Python
    assert counter(stats, "native copies and fills") >= 1400, stats    # of 1600 copies and fills in the loop


def test_allocation_table_follows_malloc_and_free(tmp_path):
    """The allocation table C copies with (kept one hipMalloc / hipFree at a time: pyhip/capi/fastpath.py,
    pyhip_mem_insert / pyhip_mem_remove) matches the program's allocations through 3000 random steps
    (tests/capi/alloc_table.hip): copies into live buffers are done in C and right, a copy one byte past a
    buffer's end and a fill of freed memory are refused."""
    stats = run_counted(tmp_path, "alloc_table")
    assert counter(stats, "native copies and fills") >= 5500, stats      # of ~5990 in-range copies
