"""Migration check: the described semantics (pyhip/emu/spec) against the hand-written numpy semantics they
replace (pyhip/emu/semantics/*.py), instruction by instruction, on random operands and states.

    python tools/spec_compare.py [MNEMONIC,...] [--targets gfx90a,gfx1100] [--trials N] [--show K]

Every opcode-table sample of each target whose mnemonic is described is decoded, its operand and modifier
fields varied at random (pyhip/emu/spec/samples.py), and run by both on the same random wave state; all
VGPRs, SGPRs, SCC and MODE must agree.  Tolerated, and counted apart: results where both are NaN (the old code's
NaN payloads depended on numpy's operand order), the old code refusing an operand the description accepts,
and 1-ulp differences for the transcendental approximations (the old code rounded libm's binary64 results).
This tool goes away with the hand-written semantics."""
from __future__ import annotations

import argparse
import collections
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

os.environ["PYHIP_SPEC"] = "0"          # the hand-written semantics on the old side
from pyhip.emu.memory import GPUFault  # noqa: E402
from pyhip.emu.semantics import load_all  # noqa: E402
from pyhip.emu.semantics.described import factory as new_factory  # noqa: E402
from pyhip.emu.spec import load_all as spec_all  # noqa: E402
from pyhip.emu.spec.samples import TARGETS, context, random_state, sample_instructions, snapshot, vary  # noqa: E402

TRANSCENDENTAL = ("v_exp_", "v_log_", "v_sin_", "v_cos_", "v_rcp_legacy", "v_exp_legacy", "v_log_legacy")


def run(f, inst, K, st):
    try:
        op = f(inst, K)
        with np.errstate(all="ignore"):
            op(st, slice(None))
    except NotImplementedError as e:
        return ("NI", str(e)[:60])
    except GPUFault as e:
        return ("fault", str(e)[:60])
    except Exception as e:  # noqa: BLE001
        return ("exc", type(e).__name__, str(e)[:100])
    return None


def _f32nan(x):
    return (x & 0x7F800000) == 0x7F800000 and (x & 0x7FFFFF) != 0


def _f16nan(x):
    return (x & 0x7C00) == 0x7C00 and (x & 0x3FF) != 0


def tolerated(name, old, new, row_old, row_new, r, lane):
    """Why a differing VGPR word is acceptable, or None."""
    o, n = int(old), int(new)
    if _f32nan(o) and _f32nan(n):
        return "nan"
    if _f16nan(o & 0xFFFF) and _f16nan(n & 0xFFFF) and (o >> 16) == (n >> 16):
        return "nan"
    if _f16nan(o >> 16) and _f16nan(n >> 16) and (o & 0xFFFF) == (n & 0xFFFF):
        return "nan"
    for pair in ((r, r + 1), (r - 1, r)):
        if pair[0] < 0 or pair[1] >= row_old.shape[0]:
            continue
        a = int(row_old[pair[0], lane]) | int(row_old[pair[1], lane]) << 32
        b = int(row_new[pair[0], lane]) | int(row_new[pair[1], lane]) << 32
        if all((v >> 52) & 0x7FF == 0x7FF and v & ((1 << 52) - 1) for v in (a, b)):
            return "nan"
    if name.startswith(TRANSCENDENTAL):
        if abs(o - n) <= 1 or abs((o & 0xFFFF) - (n & 0xFFFF)) <= 1 and (o >> 16) == (n >> 16):
            return "ulp"
    return None


def compare(names, targets, trials, show, seed=1):
    OLD = dict(load_all())
    D = spec_all()
    names = set(D) if not names else set(names)
    rng = np.random.default_rng(seed)
    bad, good, notes, examples = collections.Counter(), collections.Counter(), collections.Counter(), {}
    for t in targets:
        for lanes in ((64,) if t.startswith("gfx9") else (32, 64)):
            K = context(t, lanes)
            for name, inst in sample_instructions(t, names):
                if name not in OLD or name not in D:
                    continue
                for trial in range(trials):
                    v = vary(inst, rng, lanes) if trial else inst
                    st = random_state(rng, K)
                    s0 = snapshot(st)
                    st2 = random_state(np.random.default_rng(0), K)
                    st2.vgpr[:], st2.sgpr[:], st2.scc[:], st2.mode = s0[0], s0[1], s0[2], s0[3]
                    e1 = run(OLD[name], v, K, st)
                    if e1 is not None and e1[0] == "NI":
                        notes["old refuses"] += 1
                        continue
                    e2 = run(new_factory, v, K, st2)
                    problem = None
                    if (e1 is None) != (e2 is None) or (e1 is not None and e1[0] != e2[0]):
                        problem = f"old {e1} new {e2}"
                    elif e1 is None:
                        if not np.array_equal(st.sgpr, st2.sgpr):
                            w, r = np.argwhere(st.sgpr != st2.sgpr)[0]
                            problem = f"s{r} wave {w}: old {st.sgpr[w, r]:08x} new {st2.sgpr[w, r]:08x}"
                        elif not np.array_equal(st.scc, st2.scc) or st.mode != st2.mode:
                            problem = f"scc/mode: old {st.scc} {st.mode:#x} new {st2.scc} {st2.mode:#x}"
                        else:
                            for r, w, lane in np.argwhere(st.vgpr != st2.vgpr):
                                why = tolerated(name, st.vgpr[r, w, lane], st2.vgpr[r, w, lane], st.vgpr[:, w],
                                                st2.vgpr[:, w], r, lane)
                                if why is None:
                                    ins = [hex(int(x)) for x in s0[0][:8, w, lane]]
                                    sg = [hex(int(x)) for x in s0[1][w, :8]]
                                    problem = (f"v{r} wave {w} lane {lane}: old {st.vgpr[r, w, lane]:08x} new "
                                               f"{st2.vgpr[r, w, lane]:08x}; v0-7 {ins} s0-7 {sg} lit {v.literal}")
                                    break
                                notes[why] += 1
                    if problem:
                        bad[name] += 1
                        examples.setdefault(name, (t, lanes, v.encoding, v.fields, v.sdwa, v.dpp, hex(s0[3]), problem))
                    else:
                        good[name] += 1
    print(f"{len(good)} mnemonics agreed, {len(bad)} differ; tolerated: {dict(notes)}")
    for n, c in bad.most_common(show):
        print(f"{n}: {c} differing trials; e.g. {examples[n]}")
    return bad


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("names", nargs="?", default="")
    ap.add_argument("--targets", default=",".join(TARGETS))
    ap.add_argument("--trials", type=int, default=12)
    ap.add_argument("--show", type=int, default=40)
    a = ap.parse_args(argv)
    bad = compare([n for n in a.names.split(",") if n], a.targets.split(","), a.trials, a.show)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
