"""Events recorded and answered in C (native/hip/fastlaunch.c): tests/capi/native_events.hip, built here with
hipcc, checks ordering on random data, elapsed times against the wall clock, events of a stream through Python,
a fault between events, destroys right after a record.  PYHIP_SHIM_STATS proves the event calls stayed in C.
Sections 1-5 of the program also pass on AMD's HIP over pyhip's thunk (``pyhip exec --runtime amd``; a GPU fault
ends a program there, so section 6 is pyhip's own)."""
from shim_programs import counter, run_counted


def test_native_events(tmp_path):
    stats = run_counted(tmp_path, "native_events")
    assert counter(stats, "native event calls") >= 1000, stats      # section 1 alone: 300 records + 300 waits + 300 queries
