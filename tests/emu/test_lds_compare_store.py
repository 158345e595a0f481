"""LDS compare-and-store (GFX9 ``ds_cmpst_rtn_*``: compare value in DATA0, new value in DATA1; GFX11
``ds_cmpstore_rtn_*``: the other way round) on both engines, wave64 and wave32, full and partial waves, 32 and
64 bits: colliding addresses within a wave resolve in lane order, checked against a sequential numpy model of
the workgroup's LDS (the returned old values and the final contents)."""
import numpy as np
import pytest

from asmkit import engine, run  # noqa: F401 (engine: a fixture)

U64 = np.uint64
RNG = np.random.default_rng(2711)
CASES = [("gfx90a", 64), ("gfx942", 64), ("gfx1100", 32), ("gfx1100", 64)]


def _slots(wave):
    """Lane i's slot: 8 per wave (lanes i and i + 8 collide), the waves of a workgroup on slots of their own
    (their atomics are not ordered among each other)."""
    i = np.arange(64)
    return (i & (32 if wave == 32 else 0)) | ((i * 5 + 3) & 7)


def _body(target, wave, wide):
    rdna = target.startswith("gfx1")
    w = "b64" if wide else "b32"
    init, new, cmp, ret, back = ("v[2:3]", "v[4:5]", "v[6:7]", "v[8:9]", "v[10:11]") if wide else \
        ("v2", "v4", "v6", "v8", "v10")
    if rdna:    # DATA0 = new value, DATA1 = compare value
        st, ld, cas, add = f"ds_store_{w}", f"ds_load_{w}", f"ds_cmpstore_rtn_{w} {ret}, v12, {new}, {cmp}", \
            "v_add_nc_u32"
    else:       # DATA0 = compare value, DATA1 = new value
        st, ld, cas, add = f"ds_write_{w}", f"ds_read_{w}", f"ds_cmpst_rtn_{w} {ret}, v12, {cmp}, {new}", \
            "v_add_u32"
    scale = 3 if wide else 2
    return f"""
  v_lshlrev_b32 v13, {scale}, v0
  {st} v13, {init}
  s_waitcnt lgkmcnt(0)
  s_barrier
  v_mul_u32_u24 v14, 5, v0
  {add} v14, 3, v14
  v_and_b32 v14, 7, v14
  v_and_b32 v15, {32 if wave == 32 else 0}, v0
  v_or_b32 v14, v14, v15
  v_lshlrev_b32 v12, {scale}, v14
  {cas}
  s_waitcnt lgkmcnt(0)
  s_barrier
  {ld} {back}, v13
  s_waitcnt lgkmcnt(0)
""" + ("" if wide else "  v_mov_b32 v9, 0\n  v_mov_b32 v11, 0\n")


@pytest.mark.parametrize("target,wave", CASES)
@pytest.mark.parametrize("lanes", [64, 41])
@pytest.mark.parametrize("wide", [False, True], ids=["b32", "b64"])
def test_compare_and_store_in_lane_order(target, wave, lanes, wide, engine):
    def values():               # few distinct values: many compares match; the high dword matters for b64
        v = RNG.integers(0, 4, 64, dtype=U64)
        return v | (RNG.integers(0, 2, 64, dtype=U64) << U64(32)) if wide else v
    init, new, cmp = values(), values() + U64(2), values()
    mask = U64(2 ** 64 - 1) if wide else U64(0xFFFFFFFF)
    engine(target)
    r0, r1 = run(_body(target, wave, wide), init, new, cmp, target=target, wave=wave, lanes=lanes,
                 lds=64 * (8 if wide else 4))
    engine(target)
    lds = np.zeros(64, U64)
    lds[:lanes] = init[:lanes]
    old = np.zeros(64, U64)
    slots = _slots(wave)
    for i in range(lanes):                                          # lane order
        s = slots[i]
        old[i] = lds[s]
        if lds[s] == cmp[i]:
            lds[s] = new[i]
    assert (old[:lanes] == cmp[:lanes]).any() and (old[:lanes] != cmp[:lanes]).any()    # both outcomes occur
    np.testing.assert_array_equal(r0[:lanes] & mask, old[:lanes])
    np.testing.assert_array_equal(r1[:lanes] & mask, lds[:lanes])
