"""The runtime's pitched-allocation table (runtime/pitched.py) and hipMemAdvise table (runtime/advice.py)."""
from pyhip.runtime.advice import ADVISE_SET_COARSE, ADVISE_UNSET_COARSE, MemAdvice
from pyhip.runtime.context import runtime
from pyhip.runtime.pitched import PitchedAllocations


def test_pitched_geometry_is_recorded_and_forgotten():
    t = PitchedAllocations()
    t.record(0x1000, 512, 100, 4, 1)
    assert t.geometry(0x1000) == (512, 100, 4, 1) and t.geometry(0x2000) is None
    t.forget(0x1000)
    t.forget(0x1000)                                  # forgetting twice (hipFree of other memory) is fine
    assert t.geometry(0x1000) is None


def test_advice_set_and_unset_pairs():
    a = MemAdvice()
    assert a.hints(0x10) == {}
    a.advise(0x10, 1, 0)                              # read mostly
    a.advise(0x10, 3, -1)                             # preferred location: the CPU
    a.advise(0x10, 5, 0)
    a.advise(0x10, 5, 1)
    a.advise(0x10, 5, 0)                              # accessed by: a set of devices
    a.advise(0x10, ADVISE_SET_COARSE, 0)
    a.prefetch(0x10, 1)
    assert a.hints(0x10) == {1: 0, 3: -1, 5: [0, 1], ADVISE_SET_COARSE: 0, "prefetch": 1}
    for advice, device in ((2, 0), (4, 0), (6, 0), (ADVISE_UNSET_COARSE, 0)):
        a.advise(0x10, advice, device)
    assert a.hints(0x10) == {5: [1], "prefetch": 1}
    a.clear()
    assert a.hints(0x10) == {}


def test_the_runtime_holds_one_of_each():
    rt = runtime()
    assert isinstance(rt.pitched, PitchedAllocations) and isinstance(rt.advice, MemAdvice)
