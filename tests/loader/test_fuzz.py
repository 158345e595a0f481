"""Mutation fuzzing of the loader over the real fixtures: only LoaderError may escape, nothing hangs,
memory stays bounded.  10,000 inputs in 4 shards (so pytest-xdist can spread them)."""
import random
import resource
import struct
import time

import pytest

from conftest import fixture_files, fixture_path
from pyhip.errors import LoaderError
from pyhip.loader import load

SHARDS, PER_SHARD = 4, 2500
EXTREMES = [0, 1, 0x7F, 0x80, 0xFF, 0xFFFF, 0x7FFFFFFF, 0xFFFFFFFF, 1 << 32, (1 << 63) - 1, (1 << 64) - 1]


def _corpus() -> list[bytes]:
    seen, out = set(), []
    for kind in ("hsaco", "bundle", "ccob", "host_exe", "host_so"):
        for e in fixture_files(kind)[:4]:
            data = fixture_path(e).read_bytes()
            if len(data) <= 256 * 1024 and data not in seen:
                seen.add(data)
                out.append(data)
    return out


def mutate(rng: random.Random, data: bytes) -> bytes:
    b = bytearray(data)
    for _ in range(rng.choice((1, 1, 2, 3, 5, 8))):
        op = rng.randrange(7)
        hot = rng.random() < 0.7                 # most mutations hit headers and tables
        lim = min(len(b), 1024) if hot else len(b)
        if not b:
            break
        pos = rng.randrange(lim)
        if op == 0:
            b[pos] ^= 1 << rng.randrange(8)
        elif op == 1:
            b[pos] = rng.randrange(256)
        elif op == 2 and pos + 8 <= len(b):
            v = rng.choice(EXTREMES) if rng.random() < 0.7 else rng.getrandbits(64)
            b[pos - pos % 4:pos - pos % 4 + 8] = struct.pack("<Q", v & ((1 << 64) - 1))
        elif op == 3 and pos + 4 <= len(b):
            v = rng.choice(EXTREMES) & 0xFFFFFFFF
            b[pos - pos % 4:pos - pos % 4 + 4] = struct.pack("<I", v)
        elif op == 4:
            del b[rng.randrange(len(b)):]
        elif op == 5:
            n = rng.randrange(1, 64)
            src = rng.randrange(len(b))
            b[pos:pos + n] = b[src:src + n]
        else:
            del b[pos:pos + rng.randrange(1, 32)]
    return bytes(b)


def exercise(data: bytes) -> None:
    b = load(data)
    for ref in b.code_objects:
        try:
            ref.target
        except LoaderError:
            pass
        co = ref.code_object.validate()
        co.summary()
        for name in list(co.kernels)[:2]:
            co.find_kernel(name)
    try:
        b.select("gfx90a:sramecc+:xnack-")
    except LoaderError:
        pass


@pytest.mark.parametrize("shard", range(SHARDS))
def test_mutation_fuzz(shard):
    corpus = _corpus()
    assert len(corpus) >= 4
    rng = random.Random(1000 + shard)
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    worst, errors, ok = 0.0, 0, 0
    for i in range(PER_SHARD):
        data = mutate(rng, rng.choice(corpus))
        t0 = time.process_time()        # CPU time: a loaded machine must not fail the bound
        try:
            exercise(data)
            ok += 1
        except LoaderError as exc:
            assert exc.code and exc.message
            errors += 1
        except Exception as exc:  # pragma: no cover - this is the failure being looked for
            path = f"/tmp/pyhip-fuzz-crash-{shard}-{i}.bin"
            open(path, "wb").write(data)
            raise AssertionError(f"input {i} (saved to {path}) raised {type(exc).__name__}: {exc}") from exc
        worst = max(worst, time.process_time() - t0)
    growth_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss0) / 1024
    assert errors + ok == PER_SHARD
    assert errors > PER_SHARD // 10          # the mutations do reach the validators
    assert worst < 2.0, f"slowest input took {worst:.2f}s of CPU"
    assert growth_mb < 256, f"peak RSS grew by {growth_mb:.0f} MB"
