"""Row-local DPP lane moves inside lane regions (pyhip/emu/jit/regions.py, docs/engine.md): a region's chunk is one
DPP row of 16 lanes, so row shifts, rotations, mirrors, quad permutes (and on RDNA row_share, row_xmask and DPP8)
run inside the chunk loop instead of splitting the region.  A chain of them, each reading the one before, mixed
with ordinary VALU work and row masks, is checked against an independent numpy model of DPP written from the ISA
manuals' definitions (full EXEC), and bit for bit against the numpy engine (full and partial EXEC, wave64 and
wave32).  The IR test proves the moves really are inside the region."""
import re

import numpy as np
import pytest

from asmkit import POISON, gpu, run

U32 = np.uint32
M = "row_mask:0xf bank_mask:0xf"


def _body(target):
    rdna = target.startswith("gfx1")
    add, sub = ("v_add_nc_u32", "v_sub_nc_u32") if rdna else ("v_add_u32", "v_sub_u32")
    lines = [
        f"{add} v12, v2, v4",
        "v_mov_b32 v13, v6",
        f"v_mov_b32_dpp v13, v12 row_shr:3 {M}",                                  # lanes 0-2 of a row keep v6
        "v_mov_b32 v14, v6",
        "v_mov_b32_dpp v14, v13 row_ror:5 row_mask:0xa bank_mask:0xf bound_ctrl:1",  # rows 0, 2 keep v6
        f"{add}_dpp v15, v14, v12 quad_perm:[2,3,0,1] {M} bound_ctrl:1",
        f"v_xor_b32_dpp v16, v15, v13 row_mirror {M} bound_ctrl:1",
        f"{sub}_dpp v17, v16, v2 row_shl:9 {M} bound_ctrl:1",                    # lanes 7-15: 0 - v2
        f"v_or_b32_dpp v18, v17, v14 row_half_mirror {M} bound_ctrl:1",
    ]
    if rdna:
        lines += [f"v_mov_b32_dpp v19, v18 row_share:5 {M} bound_ctrl:1",
                  f"{add}_dpp v19, v19, v15 row_xmask:6 {M} bound_ctrl:1",
                  "v_mov_b32_dpp v20, v19 dpp8:[7,0,6,1,5,2,4,3]"]
    else:
        lines += ["v_mov_b32 v19, v18", "v_mov_b32 v20, v18"]
    lines += ["v_mul_f32_dpp v21, v2, v4 row_shr:1 " + M + " bound_ctrl:1",     # a float op in the chain
              "v_mov_b32 v8, v15", "v_mov_b32 v9, v17", "v_mov_b32 v10, v20", "v_mov_b32 v11, v21"]
    return "\n".join("  " + x for x in lines)


def _row_move(v, src_of):
    """DPP within rows of 16: lane i reads lane src_of(i % 16) of its row (None: out of the row)."""
    out, valid = np.zeros_like(v), np.zeros(v.size, bool)
    for i in range(v.size):
        s = src_of(i % 16)
        if s is not None:
            out[i], valid[i] = v[(i // 16) * 16 + s], True
    return out, valid


def _model(a, b, c, rdna):
    """The chain above, per the ISA manuals: an out-of-row source is invalid; with BOUND_CTRL it reads 0,
    without it the lane is not written; rows off in ROW_MASK are not written."""
    v12 = a + b
    m, ok = _row_move(v12, lambda r: r - 3 if r >= 3 else None)
    v13 = np.where(ok, m, c)
    rows_on = np.array([(i // 16) in (1, 3) for i in range(64)])
    m, _ = _row_move(v13, lambda r: (r - 5) % 16)
    v14 = np.where(rows_on, m, c)
    m, _ = _row_move(v14, lambda r: (r // 4) * 4 + [2, 3, 0, 1][r % 4])
    v15 = m + v12
    m, _ = _row_move(v15, lambda r: 15 - r)
    v16 = m ^ v13
    m, _ = _row_move(v16, lambda r: r + 9 if r + 9 < 16 else None)
    v17 = m - a
    m, _ = _row_move(v17, lambda r: (r // 8) * 8 + 7 - r % 8)
    v18 = m | v14
    if not rdna:
        return v15, v17, v18
    v19, _ = _row_move(v18, lambda r: 5)
    m, _ = _row_move(v19, lambda r: r ^ 6)
    v19 = m + v15
    sel = [7, 0, 6, 1, 5, 2, 4, 3]
    v20 = np.array([v19[(i // 8) * 8 + sel[i % 8]] for i in range(64)], U32)
    return v15, v17, v20


CASES = [("gfx90a", 64), ("gfx1100", 32), ("gfx1100", 64), ("gfx1030", 32)]


@pytest.mark.parametrize("target,wave", CASES)
def test_dpp_chain_against_the_isa_model(target, wave, monkeypatch, tmp_path):
    monkeypatch.setenv("PYHIP_JIT_DUMP", str(tmp_path))
    monkeypatch.setenv("PYHIP_JIT_CACHE_DIR", "")
    rng = np.random.default_rng(wave + len(target))
    a, b, c = (rng.integers(0, 2**32, 64, dtype=np.uint64).astype(U32) for _ in range(3))
    monkeypatch.setenv("PYHIP_JIT_TIERING", "0")
    monkeypatch.setattr(gpu(target), "engine", "native")
    before = gpu(target).engine_stats()["native"]
    kw = {"wave": wave} if target.startswith("gfx1") else {}
    with np.errstate(all="ignore"):
        r0, r1 = run(_body(target), a, b, c, target=target, **kw)
    assert gpu(target).engine_stats()["native"] > before
    v15, v17, v20 = _model(a, b, c, target.startswith("gfx1"))
    assert np.array_equal((r0 & 0xFFFFFFFF).astype(U32), v15)
    assert np.array_equal((r0 >> 32).astype(U32), v17)
    assert np.array_equal((r1 & 0xFFFFFFFF).astype(U32), v20)
    # the row moves ran inside the chunk loop: shuffles of a 16-lane chunk, none of the whole wave
    ir = "".join(p.read_text() for p in tmp_path.glob("*.ll"))
    moves = re.findall(r"shufflevector <(\d+) x i32> %\w+, <\d+ x i32> zeroinitializer", ir)
    assert moves.count("16") >= 8 and set(moves) == {"16"}, moves


@pytest.mark.parametrize("target,wave", CASES)
@pytest.mark.parametrize("lanes", [64, 45, 23])
def test_engines_agree_bit_for_bit(target, wave, lanes, monkeypatch):
    rng = np.random.default_rng(lanes * 7 + wave)
    a, b, c = (rng.integers(0, 2**32, 64, dtype=np.uint64).astype(U32) for _ in range(3))
    a[::5] = 0x7FC00001            # NaNs into the float op, in every chunk
    kw = {"wave": wave} if target.startswith("gfx1") else {}
    out = {}
    monkeypatch.setenv("PYHIP_JIT_TIERING", "0")
    for eng in ("numpy", "native"):
        monkeypatch.setattr(gpu(target), "engine", eng)
        out[eng] = run(_body(target), a, b, c, target=target, lanes=lanes, **kw)
    for x, y in zip(out["numpy"], out["native"]):
        assert np.array_equal(x, y)
        assert (x[lanes:] == np.uint64(POISON)).all()


def test_row_moves_are_inside_the_region():
    """The IR of a DPP chain: the row moves are shuffles of one 16-lane chunk, no whole-wave shuffle."""
    from pyhip.emu.jit.irgen import chunk_map
    row_shr3 = [i - 3 if i % 16 >= 3 else -1 for i in range(64)]
    assert chunk_map(row_shr3, 16) == [-1, -1, -1] + list(range(13))
    assert chunk_map(row_shr3, 8) is None                    # lanes 8-10 read the chunk before
    bcast15 = [(i // 16) * 16 - 1 if i >= 16 else -1 for i in range(64)]  # row_bcast:15 crosses rows
    assert chunk_map(bcast15, 16) is None
    assert chunk_map([(i + 1) % 64 for i in range(64)], 16) is None       # a wave rotation
