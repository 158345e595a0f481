"""The two backends of the semantics language hold each other: every described instruction of every target
(each opcode-table sample, operands and modifiers varied at random) runs on the numpy engine (generated
numpy code) and on the compiled engine (generated LLVM IR) from the same random wave state (three waves: EXEC full
and random), under the MODE settings below, and every VGPR, SGPR, SCC and MODE bit must agree.

What this cannot catch is a wrong description (both backends share it): the per-instruction ISA tests
(test_isa_ops.py, test_isa_alu.py, test_isa_memory.py, test_isa_matrix.py, test_isa_rdna.py, tests/isa) check the described semantics against
independent references (numpy/host math, bit-exact IEEE helpers, llvm-mc), and the corpus against numpy."""
import numpy as np
import pytest

from pyhip.emu.spec.samples import context, sample_instructions, vary

# (target, wave size, MODE): every target, both RDNA wave sizes, and MODE as HIP's default (IEEE, DX10_CLAMP,
# denormals kept: 0x3F0), IEEE off (0x0F0), denormals flushed (0x300) and everything off (0x000), spread over
# the targets (each combination is one compile of ~900 functions: about 15 s)
CASES = (("gfx90a", 64, 0x3F0), ("gfx90a", 64, 0x000), ("gfx942", 64, 0x300), ("gfx1030", 32, 0x0F0),
         ("gfx1100", 32, 0x3F0), ("gfx1100", 64, 0x300))


def _runner():
    from pyhip.emu.jit import available
    from pyhip.emu import native
    if not available() or not native.available():
        pytest.skip("the compiled engine needs llvmlite and the native runtime")
    from pyhip.emu.jit.check import Runner
    return Runner()


@pytest.mark.parametrize("target,lanes,mode", CASES)
def test_every_described_instruction_agrees_on_both_backends(target, lanes, mode):
    from pyhip.emu.semantics.described import factory
    from pyhip.emu.spec import load_all
    descriptions = load_all()
    runner = _runner()
    rng = np.random.default_rng(sum(map(ord, target)) + lanes + mode)
    samples = [(n, i) for n, i in sample_instructions(target) if n in descriptions]
    assert len(samples) > 300, len(samples)
    K = context(target, lanes)
    insts = [vary(inst, rng, lanes) for _, inst in samples]
    fns = runner.batch(insts, K, mode)
    failures, checked = [], 0
    for inst, fn in zip(insts, fns):
        if fn is None:
            continue
        ok, msg = _compare(runner, inst, K, rng, factory, fn, mode)
        checked += 1
        if not ok:
            failures.append(f"{inst.name}: {msg}")
    assert checked > 0.95 * len(samples), (checked, len(samples))
    assert not failures, f"{len(failures)} of {checked}:\n" + "\n".join(failures[:20])


def _compare(runner, inst, K, rng, factory, fn, mode):
    from pyhip.emu.jit.check import compare_one
    return compare_one(runner, inst, K, rng, factory, fn=fn, mode=mode)


def test_a_wrong_compiled_result_is_reported():
    """The comparison can fail: a function that runs a different instruction is caught."""
    from pyhip.emu.semantics.described import factory
    from pyhip.emu.jit.check import compare_one
    runner = _runner()
    K = context("gfx90a", 64)
    add = next(i for n, i in sample_instructions("gfx90a", {"v_add_f32"}))
    sub = next(i for n, i in sample_instructions("gfx90a", {"v_sub_f32"}))
    fadd, fsub = runner.batch([add, sub], K, 0x3F0)
    rng = np.random.default_rng(1)
    assert compare_one(runner, add, K, rng, factory, fn=fadd, mode=0x3F0)[0]
    ok, msg = compare_one(runner, add, K, rng, factory, fn=fsub, mode=0x3F0)
    assert not ok and "numpy" in msg and "jit" in msg
