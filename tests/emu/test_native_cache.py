"""The cross-process cache of lowered programs (pyhip/emu/native/cache.py): an entry restores exactly what
lowering produces, for a program loaded at another address; a later process runs from it without decoding;
a damaged entry is recomputed; the key follows the code bytes and the kernel context."""
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from pyhip.emu.device import EmulatedGPU
from pyhip.emu.native import cache
from pyhip.emu.native.lower import NativeProgram
from pyhip.loader import load


@pytest.fixture(autouse=True)
def _compiled_engine(monkeypatch):
    """The native engine compiles before it runs (no numpy-engine first runs while compiling): what these tests
    compare or count is the compiled engine."""
    monkeypatch.setenv("PYHIP_JIT_TIERING", "0")


ROOT = Path(__file__).resolve().parents[2]
BIN = ROOT / "tests/fixtures/bin/hipcc52"
FIELDS = ("code", "aux", "addr_index")


def _program(gpu, name):
    co = load((BIN / name).read_bytes()).code_objects[0].code_object
    return gpu.load_program(co)


def _same(a: NativeProgram, b: NativeProgram):
    for f in FIELDS:
        x, y = getattr(a, f), getattr(b, f)
        assert x.dtype == y.dtype and x.tobytes() == y.tobytes(), f
    for f in ("base", "size", "n", "nxt", "tgt", "ends", "indirect", "vmax", "reasons", "index"):
        assert getattr(a, f) == getattr(b, f), f


# textures: with its image instructions taken as lacking a native handler here (badpc records carrying their
# address; the engine runs them, ops_image.h), and sentinels
@pytest.mark.parametrize("name", ["textures-gfx90a.hsaco", "devmath-gfx90a.hsaco", "warp-gfx90a.hsaco"])
def test_an_entry_restores_what_lowering_gives_at_another_address(name, tmp_path, monkeypatch):
    monkeypatch.setenv("PYHIP_CACHE_DIR", str(tmp_path))
    if name.startswith("textures"):
        from pyhip.emu.native import lower
        from pyhip.emu.native.lowerbase import Unsupported

        def no_images(rec, inst, *args):
            if inst.encoding.startswith("MIMG"):
                raise Unsupported(f"{inst.name}: (this test) no handler")
            return False
        monkeypatch.setattr(lower, "lower_image", no_images)
    gpu = EmulatedGPU("gfx90a")
    gpu.native_engine()
    first, second = _program(gpu, name), _program(gpu, name)
    assert first.base != second.base
    before = dict(cache.stats)
    NativeProgram(first, gpu.context_for(first, 64))                 # lowered and stored
    restored = NativeProgram(second, gpu.context_for(second, 64))    # restored for the other base
    assert cache.stats["hit"] == before.get("hit", 0) + 1
    assert second._instructions is None                              # nothing was decoded
    monkeypatch.setenv("PYHIP_CACHE_DIR", "")                        # off: a fresh lowering to compare with
    fresh = NativeProgram(second, gpu.context_for(second, 64))
    _same(restored, fresh)
    assert fresh.reasons or not name.startswith("textures")      # badpc records, the relocated case
    for pc in sorted(fresh.index)[::37]:                             # reachability and its verdicts
        assert restored.kernel_support(pc) == fresh.kernel_support(pc)


def test_the_key_follows_code_and_context(tmp_path, monkeypatch):
    monkeypatch.setenv("PYHIP_CACHE_DIR", str(tmp_path))
    gpu = EmulatedGPU("gfx90a")
    gpu.native_engine()
    a, b = _program(gpu, "basic-gfx90a.hsaco"), _program(gpu, "warp-gfx90a.hsaco")
    ka = cache.key(a, gpu.context_for(a, 64))
    assert ka == cache.key(_program(gpu, "basic-gfx90a.hsaco"), gpu.context_for(a, 64))   # same bytes
    assert ka != cache.key(b, gpu.context_for(b, 64))                                     # other code
    assert ka != cache.key(a, gpu.context_for(a, 32))                                     # other accum_offset
    monkeypatch.setenv("PYHIP_CACHE_DIR", "")
    assert cache.key(a, gpu.context_for(a, 64)) is None                                   # turned off


SCRIPT = textwrap.dedent("""
    import sys
    import numpy as np
    sys.path.insert(0, {root!r})
    import pyhip
    from pyhip.emu.native import cache
    from pyhip.runtime.context import runtime
    m = pyhip.load({path!r})
    k = m.kernel("_Z4vaddPKfS0_Pfi")
    n = 1000
    rng = np.random.default_rng()
    a, b = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    out = pyhip.to_device(np.full(n, np.nan, np.float32))
    k((n + 255) // 256, 256, pyhip.to_device(a), pyhip.to_device(b), out, n)
    pyhip.synchronize()
    assert np.array_equal(out.get(), a + b)
    gpu = runtime().device(pyhip.get_device()).backend.emulated_gpu
    print(cache.stats["hit"], cache.stats["miss"], cache.stats["store"], cache.stats["bad"],
          gpu.engine_stats()["native"])
""")


def _child(tmp_path):
    env = {**os.environ, "PYHIP_CACHE_DIR": str(tmp_path), "PYHIP_ENGINE": "native"}
    src = SCRIPT.format(root=str(ROOT), path=str(BIN / "basic-gfx90a.hsaco"))
    r = subprocess.run([sys.executable, "-c", src], env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    return [int(x) for x in r.stdout.split()]


def test_a_later_process_runs_from_the_entry(tmp_path):
    hit, miss, store, bad, native = _child(tmp_path)
    assert (hit, miss, store, bad) == (0, 1, 1, 0) and native >= 1
    entries = list((tmp_path / "native").glob("*" + cache.SUFFIX))
    assert len(entries) == 1
    hit, miss, store, bad, native = _child(tmp_path)
    assert (hit, miss, store, bad) == (1, 0, 0, 0) and native >= 1
    # a damaged entry: counted, recomputed, rewritten; the kernel still runs natively and correctly
    entries[0].write_bytes(entries[0].read_bytes()[:100])
    hit, miss, store, bad, native = _child(tmp_path)
    assert (hit, bad, store) == (0, 1, 1) and native >= 1
    hit, miss, store, bad, native = _child(tmp_path)
    assert (hit, bad) == (1, 0)
    # cut inside the arrays (the header line intact): also refused, not half-read
    whole = entries[0].read_bytes()
    entries[0].write_bytes(whole[:whole.index(b"\n") + 9])
    hit, miss, store, bad, native = _child(tmp_path)
    assert (hit, bad, store) == (0, 1, 1) and native >= 1


def test_the_directory_is_trimmed_least_recently_used_first(tmp_path):
    d = tmp_path / "native"
    d.mkdir()
    for i in range(10):
        f = d / f"{i:02d}{cache.SUFFIX}"
        f.write_bytes(b"x")
        os.utime(f, ns=(10**18 + i * 10**9, 10**18 + i * 10**9))
    os.utime(d / f"01{cache.SUFFIX}", ns=(2 * 10**18, 2 * 10**18))         # used recently
    cache.trim(d, limit=8)
    left = sorted(p.stem for p in d.glob("*" + cache.SUFFIX))
    assert left == ["01", "05", "06", "07", "08", "09"]   # down to 3/4 of 8
    cache.trim(d, limit=8)                                       # under the limit: nothing removed
    assert len(list(d.glob("*" + cache.SUFFIX))) == 6


OPENSSL_SPY = textwrap.dedent("""
    import hashlib, threading
    seen = []
    def spy(name, real):
        def f(*a, **k):
            if threading.current_thread() is not threading.main_thread():
                seen.append((name, threading.current_thread().name))
            return real(*a, **k)
        return f
    for name in ("sha1", "sha224", "sha256", "sha384", "sha512", "md5", "new"):
        setattr(hashlib, name, spy(name, getattr(hashlib, name)))
""")


def test_the_device_threads_hash_without_openssl(tmp_path):
    """Cache keys are computed on queue threads and the compile thread, which go on while a C program under
    ``pyhip exec`` runs its exit handlers — OpenSSL's frees what its digests use (a SIGSEGV at exit): every
    digest off the main thread is BLAKE2 (CPython's own).  Both caches on, a process that stores and one
    that loads; each OpenSSL constructor is wrapped to note the thread that calls it."""
    env = {**os.environ, "PYHIP_CACHE_DIR": str(tmp_path), "PYHIP_JIT_CACHE_DIR": str(tmp_path / "jit"),
           "PYHIP_ENGINE": "native"}
    body = SCRIPT.format(root=str(ROOT), path=str(BIN / "basic-gfx90a.hsaco"))
    src = OPENSSL_SPY + body + "\nprint('openssl', seen)\n"
    for stored in (False, True):
        r = subprocess.run([sys.executable, "-c", src], env=env, capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stderr
        hits, spied = r.stdout.splitlines()[0].split(), r.stdout.splitlines()[-1]
        assert int(hits[0]) == int(stored) and int(hits[4]) >= 1          # the lowered cache was used
        assert spied == "openssl []", spied
    assert list((tmp_path / "jit").glob("*.o"))                              # the object cache too
