"""pytest plugin for tests/emu/test_native_diff.py: after a session run with PYHIP_ENGINE=diff, write what the
differential mode did (dispatches compared, faults alike, fallbacks and their reasons) to the JSON file named
by PYHIP_DIFF_REPORT."""
import gc
import json
import os


def pytest_sessionfinish(session):
    path = os.environ.get("PYHIP_DIFF_REPORT")
    if not path:
        return
    from pyhip.emu.device import EmulatedGPU
    from pyhip.emu.native import diff

    native = fallback = 0
    reasons: dict = {}
    for o in gc.get_objects():
        if isinstance(o, EmulatedGPU):
            s = o.engine_stats()
            native += s["native"]
            fallback += s["fallback"]
            for r, n in s["reasons"].items():
                reasons[r] = reasons.get(r, 0) + n
    with open(path, "w") as f:
        json.dump({"compared": diff.STATS["compared"], "faulted_alike": diff.STATS["faulted-alike"],
                   "threaded": diff.STATS["threaded"], "lockstep_only": diff.STATS["lockstep-only"],
                   "native": native, "fallback": fallback, "reasons": reasons}, f)
