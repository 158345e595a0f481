"""LDS (DS encoding): reads, writes (incl. read2/write2 and st64 forms), LDS atomics, swizzle, permute.

LDS addresses are 32 bits: a lane's address is (ADDR VGPR + offset) mod 2^32 (``lds_address``), as the hardware
computes it and as LLVM assumes when it folds a constant into the offset field: ``ds_read_u8 v3, v2 offset:128``
with v2 = -64 reads LDS byte 64.  The wrapped address is then checked against the LDS the hardware allocated
the workgroup (its group segment rounded up to the target's granule: ``WaveState.lds_alloc``): beyond it a
read returns 0 and a write (or an atomic) is dropped, without a fault, as the ISA documents (:func:`lds_keep`).
Accesses past the exact group segment are told to :data:`LDS_BOUNDS` (memcheck) whether performed or not."""
from __future__ import annotations

import numpy as np

from ..memory import GPUFault
from ..operands import write_loaded, write_v
from ..state import M0, count
from .registry import op, register
from .. import atomics

U8, U16, U32, U64, I32, F32 = np.uint8, np.uint16, np.uint32, np.uint64, np.int32, np.float32
# fn(st, w, widx, lidx, offsets, size, data, kind): told of every LDS access before it is made (pyhip/sanitizer
# racecheck); ``kind`` "read", "write" (``data``: (n, size) uint8) or "atomic"
LDS_CHECKS: list = []
# fn(st, w, widx, lidx, offsets, size, write): told of lanes accessing LDS past the exact group segment
# (pyhip/sanitizer memcheck); ``widx``: the wave's position in the instruction's selection
LDS_BOUNDS: list = []


def lds_keep(st, w, widx, lidx, o, size, write=False):
    """Which of the listed lanes' LDS accesses (``o``: byte offsets, already wrapped) the hardware performs:
    None when all are inside the group segment, else a bool per lane (inside ``st.lds_alloc``).  Lanes past
    the group segment are told to :data:`LDS_BOUNDS` first."""
    over = o + size > st.lds_size
    if not over.any():
        return None
    for fn in LDS_BOUNDS:
        fn(st, w, widx[over], lidx[over], o[over], size, write)
    return o + size <= st.lds_alloc


def check_lds(st, w, widx, lidx, o, size, data=None, kind="read"):
    """Tell :data:`LDS_CHECKS` of an LDS access by the listed lanes (``o``: their LDS byte offsets)."""
    for fn in LDS_CHECKS:
        fn(st, w, widx, lidx, o, size, data, kind)


def lds_address(offs):
    """LDS byte addresses (VGPR + offset, any integer array) wrapped to 32 bits, as int64."""
    return offs.astype(np.int64, copy=False) & 0xFFFFFFFF


def _lds_io(st, w, m, offs, size, data=None, atomic=False):
    """Gather (data None) → (nw, 64, size) uint8, or scatter ``data`` (nw, 64, size), ``size`` bytes per
    active lane at LDS byte addresses ``offs`` (nw, 64; wrapped to 32 bits here).  The batch's LDS is one flat
    buffer (workgroup g at g * row); aligned dword accesses go through a uint32 view (one gather per dword,
    not per byte).  ``atomic``: one half of an atomic exchange (told to :data:`LDS_CHECKS` as its write)."""
    o = lds_address(offs)
    drop = None
    over = m & (o + size > st.lds_size)
    if over.any():
        widx, lidx = np.nonzero(over)
        keep = lds_keep(st, w, widx, lidx, o[widx, lidx], size, data is not None)
        if not keep.all():
            drop = np.zeros_like(m)
            drop[widx[~keep], lidx[~keep]] = True
            m = m & ~drop
    if LDS_CHECKS and (data is not None or not atomic):
        widx, lidx = np.nonzero(m)
        check_lds(st, w, widx, lidx, o[widx, lidx], size, None if data is None else data[widx, lidx],
                  "atomic" if atomic else "read" if data is None else "write")
    row = st.lds.shape[1]
    flat = st.group[w][:, None] * row + o
    buf = st.lds.reshape(-1)
    words = size % 4 == 0 and row % 4 == 0
    if data is None:
        idx = np.where(m, flat, 0)
        if words and not (idx & 3).any():
            k = size // 4
            wi = idx >> 2
            got = buf.view(U32)[wi if k == 1 else wi[..., None] + np.arange(k)]
            got = got.reshape(idx.shape + (k,)).view(U8)
        else:
            got = buf[idx[..., None] + np.arange(size)]
        if drop is not None:
            got[drop] = 0                               # (out of the LDS: reads 0)
        return got
    if m.all():
        sel, d = flat.reshape(-1), data.reshape(-1, size)
    else:
        sel, d = flat[m], data[m]
    if words and not (sel & 3).any():
        k = size // 4
        dw = np.ascontiguousarray(d).view(U32).reshape(-1, k)
        if k == 1:
            buf.view(U32)[sel >> 2] = dw[:, 0]
        else:
            buf.view(U32)[(sel >> 2)[:, None] + np.arange(k)] = dw
        return None
    buf[sel[:, None] + np.arange(size)] = d
    return None


def _read(size, signed=False, count=1, stride_mult=1, d16_hi=False):
    def factory(inst, K):
        f = inst.fields
        a, d = f["addr"], f["vdst"] + (K.accum_offset if f.get("acc") else 0)
        if count == 2:
            offsets = [f["offset0"] * size * stride_mult, f["offset1"] * size * stride_mult]
        else:
            offsets = [f["offset0"] | (f["offset1"] << 8)]

        def run(st, w):
            m = st.exec_mask(w)
            base = st.vgpr[a, w].astype(np.int64)
            reg = d
            for off in offsets:
                reg = write_loaded(st, w, reg, _lds_io(st, w, m, base + off, size), size, signed, d16_hi, m)
        return run
    return factory


def _write(size, count=1, stride_mult=1, d16_hi=False):
    def factory(inst, K):
        f = inst.fields
        a = f["addr"]
        acc = K.accum_offset if f.get("acc") else 0
        datas = [f["data0"] + acc, f["data1"] + acc]
        if count == 2:
            offsets = [f["offset0"] * size * stride_mult, f["offset1"] * size * stride_mult]
        else:
            offsets = [f["offset0"] | (f["offset1"] << 8)]
        nregs = max(1, size // 4)

        def run(st, w):
            m = st.exec_mask(w)
            base = st.vgpr[a, w].astype(np.int64)
            for i, off in enumerate(offsets):
                words = np.stack([st.vgpr[datas[i] + k, w] for k in range(nregs)], axis=-1)
                if d16_hi:
                    words = words >> U32(16)
                _lds_io(st, w, m, base + off, size, words.view(U8)[:, :, :size])
        return run
    return factory


for _n, _sz, _sg in (("b32", 4, False), ("b64", 8, False), ("b96", 12, False), ("b128", 16, False),
                     ("u8", 1, False), ("i8", 1, True), ("u16", 2, False), ("i16", 2, True)):
    register(f"ds_read_{_n}", _read(_sz, _sg))
register("ds_read_u16_d16_hi", _read(2, False, d16_hi=True))
register("ds_read_u16_d16", _read(2, False, d16_hi="lo"))
register("ds_read_u8_d16", _read(1, False, d16_hi="lo"))
register("ds_read_i8_d16", _read(1, True, d16_hi="lo"))
register("ds_read_u8_d16_hi", _read(1, False, d16_hi=True))
register("ds_read_i8_d16_hi", _read(1, True, d16_hi=True))
register("ds_read2_b32", _read(4, count=2))
register("ds_read2_b64", _read(8, count=2))
register("ds_read2st64_b32", _read(4, count=2, stride_mult=64))
register("ds_read2st64_b64", _read(8, count=2, stride_mult=64))
for _n, _sz in (("b32", 4), ("b64", 8), ("b96", 12), ("b128", 16), ("b8", 1), ("b16", 2)):
    register(f"ds_write_{_n}", _write(_sz))
register("ds_write_b8_d16_hi", _write(1, d16_hi=True))
register("ds_write_b16_d16_hi", _write(2, d16_hi=True))
register("ds_write2_b32", _write(4, count=2))
register("ds_write2_b64", _write(8, count=2))
register("ds_write2st64_b32", _write(4, count=2, stride_mult=64))
register("ds_write2st64_b64", _write(8, count=2, stride_mult=64))


def _atomic(name, returns, swap_operands=False, size=4):
    """LDS atomic ``name`` (see :mod:`pyhip.emu.atomics`) on ``size``-byte values; ``swap_operands``:
    ds_cmpst takes the compare value in data0 and the new value in data1."""
    dt = U64 if size == 8 else U32

    def factory(inst, K):
        f = inst.fields
        a, d0, d1, dst = f["addr"], f["data0"], f["data1"], f["vdst"]
        off = f["offset0"] | (f["offset1"] << 8)

        def reg(st, w, r, widx, lidx):
            v = st.vgpr[r, w][widx, lidx]
            if size == 8:
                v = v.astype(U64) | (st.vgpr[r + 1, w][widx, lidx].astype(U64) << U64(32))
            return v

        def run(st, w):
            m = st.exec_mask(w)
            widx, lidx = np.nonzero(m)
            if not len(widx):
                return
            o = lds_address(st.vgpr[a, w][widx, lidx].astype(np.int64) + off)
            keep = lds_keep(st, w, widx, lidx, o, size, True)
            if keep is not None:                            # out of the LDS: no effect, returns 0
                widx, lidx, o = widx[keep], lidx[keep], o[keep]
                if not len(widx):
                    if returns:
                        for r in range(dst, dst + size // 4):
                            write_v(st, w, r, np.zeros((count(st, w), st.lanes), U32), m)
                    return
            if (o % size).any():
                raise GPUFault(f"misaligned LDS atomic: address not aligned to {size} bytes",
                               address=int(o[np.argmax(o % size != 0)]), access=f"{size}-byte atomic")
            if LDS_CHECKS:
                check_lds(st, w, widx, lidx, o, size, kind="atomic")
            g = st.group[w][widx]
            groups = atomics.Groups((g << 33) + o)    # (o < 2^32: one key per workgroup and byte)
            f0 = groups.first
            cols = o[f0][:, None] + np.arange(size)
            init = np.ascontiguousarray(st.lds[g[f0][:, None], cols]).view(dt).reshape(-1)
            v, c = reg(st, w, d0, widx, lidx), reg(st, w, d1, widx, lidx)
            if swap_operands:
                v, c = c, v
            old, final = atomics.apply(name, dt, init, v, c, groups)
            st.lds[g[f0][:, None], cols] = final.astype(dt).view(U8).reshape(-1, size)
            if returns:
                res = np.zeros((count(st, w), st.lanes), dtype=dt)
                res[widx, lidx] = old
                if size == 8:
                    write_v(st, w, dst, (res & U64(0xFFFFFFFF)).astype(U32), m)
                    write_v(st, w, dst + 1, (res >> U64(32)).astype(U32), m)
                else:
                    write_v(st, w, dst, res, m)
        return run
    return factory


# ds mnemonic stem -> (atomics operation, swap data0/data1)
_DS_ATOMICS = {
    "add_u32": "add", "sub_u32": "sub", "rsub_u32": "rsub", "inc_u32": "inc", "dec_u32": "dec",
    "min_i32": "smin", "max_i32": "smax", "min_u32": "umin", "max_u32": "umax",
    "and_b32": "and", "or_b32": "or", "xor_b32": "xor", "mskor_b32": "mskor", "wrxchg_rtn_b32": "swap",
    "cmpst_b32": "cmpswap", "add_f32": "fadd", "min_f32": "fmin", "max_f32": "fmax",
    "cmpst_f32": "fcmpswap", "pk_add_f16": "pk_add_f16", "pk_add_bf16": "pk_add_bf16",
    "add_u64": "add", "sub_u64": "sub", "rsub_u64": "rsub", "inc_u64": "inc", "dec_u64": "dec",
    "min_i64": "smin", "max_i64": "smax", "min_u64": "umin", "max_u64": "umax",
    "and_b64": "and", "or_b64": "or", "xor_b64": "xor", "mskor_b64": "mskor", "wrxchg_rtn_b64": "swap",
    "cmpst_b64": "cmpswap", "cmpst_f64": "fcmpswap", "add_f64": "fadd", "min_f64": "fmin", "max_f64": "fmax",
}
for _n, _op in _DS_ATOMICS.items():
    _swap = _op in ("cmpswap", "fcmpswap")
    _size = 8 if _n.endswith("64") else 4
    if _n.startswith("wrxchg"):
        register(f"ds_{_n}", _atomic(_op, True, size=_size))
        continue
    register(f"ds_{_n}", _atomic(_op, False, _swap, _size))
    base, typ = _n.rsplit("_", 1)
    register(f"ds_{base}_rtn_{typ}", _atomic(_op, True, _swap, _size))
register("ds_wrap_rtn_b32", _atomic("wrap", True))


def _wrxchg2(size, stride):
    """ds_wrxchg2{,st64}_rtn: two exchanges at offset0 / offset1 (in elements, x64 for st64); returns
    both old values in consecutive registers."""
    def factory(inst, K):
        f = inst.fields
        a, dsts = f["addr"], f["vdst"]
        datas = (f["data0"], f["data1"])
        offs = (f["offset0"] * size * stride, f["offset1"] * size * stride)
        n = size // 4

        def run(st, w):
            m = st.exec_mask(w)
            base = st.vgpr[a, w].astype(np.int64)
            for i in range(2):
                old = _lds_io(st, w, m, base + offs[i], size, atomic=True)
                new = np.stack([st.vgpr[datas[i] + k, w] for k in range(n)], axis=-1)
                _lds_io(st, w, m, base + offs[i], size, new.view(U8), atomic=True)
                ow = np.ascontiguousarray(old).view(U32)
                for k in range(n):
                    write_v(st, w, dsts + i * n + k, ow[:, :, k], m)
        return run
    return factory


register("ds_wrxchg2_rtn_b32", _wrxchg2(4, 1))
register("ds_wrxchg2_rtn_b64", _wrxchg2(8, 1))
register("ds_wrxchg2st64_rtn_b32", _wrxchg2(4, 64))
register("ds_wrxchg2st64_rtn_b64", _wrxchg2(8, 64))


@op("ds_condxchg32_rtn_b64")
def _condxchg(inst, K):
    """Two dwords at ADDR and ADDR+4, each replaced by its data dword when that dword's bit 31 is set (the
    bit itself cleared); returns the old pair."""
    f = inst.fields
    a, d0, dst = f["addr"], f["data0"], f["vdst"]
    off = f["offset0"] | (f["offset1"] << 8)

    def run(st, w):
        m = st.exec_mask(w)
        o = st.vgpr[a, w].astype(np.int64) + off
        old = np.ascontiguousarray(_lds_io(st, w, m, o, 8, atomic=True)).view(U32)
        new = old.copy()
        for k in range(2):
            v = st.vgpr[d0 + k, w]
            new[:, :, k] = np.where(v >> U32(31) != 0, v & U32(0x7FFFFFFF), old[:, :, k])
        _lds_io(st, w, m, o, 8, new.view(U8), atomic=True)
        write_v(st, w, dst, old[:, :, 0], m)
        write_v(st, w, dst + 1, old[:, :, 1], m)
    return run


def _addtid(write):
    """ds_read/write_addtid_b32: LDS address M0 + offset + 4 * lane id (no VGPR address)."""
    def factory(inst, K):
        f = inst.fields
        off = f["offset0"] | (f["offset1"] << 8)
        r = f["data0"] if write else f["vdst"]

        def run(st, w):
            m = st.exec_mask(w)
            o = (st.sgpr[w, M0].astype(np.int64) & 0xFFFF)[:, None] + off + 4 * np.arange(st.lanes)
            if write:
                _lds_io(st, w, m, o, 4, st.vgpr[r, w][:, :, None].view(U8))
            else:
                write_v(st, w, r, np.ascontiguousarray(_lds_io(st, w, m, o, 4)).view(U32)[:, :, 0], m)
        return run
    return factory


register("ds_read_addtid_b32", _addtid(False))
register("ds_write_addtid_b32", _addtid(True))


def _append(sign):
    """ds_append / ds_consume: add (subtract) the number of active lanes to the dword at M0 + offset, wave
    after wave; every active lane of a wave gets the value before its wave's update."""
    def factory(inst, K):
        f = inst.fields
        off = f["offset0"] | (f["offset1"] << 8)
        d = f["vdst"]

        def run(st, w):
            m = st.exec_mask(w)
            live = m.any(axis=1)
            o = (st.sgpr[w, M0].astype(np.int64) & 0xFFFF) + off
            wm = np.zeros_like(m)
            wm[:, 0] = live                                  # one access per wave (lane 0 stands for it)
            oo = np.broadcast_to(o[:, None], m.shape)
            cur = np.ascontiguousarray(_lds_io(st, w, wm, oo, 4, atomic=True)).view(U32)[:, :, 0][:, 0]
            g = st.group[w]
            n = m.sum(axis=1).astype(np.int64) * sign
            key = (g << 33) + o
            old = cur.astype(np.int64).copy()
            for k in np.unique(key[live]):                   # waves sharing a counter apply in order
                sel = np.nonzero(live & (key == k))[0]
                run_total = cur[sel[0]].astype(np.int64) + np.concatenate([[0], np.cumsum(n[sel])])
                old[sel] = run_total[:-1]
                last = np.zeros_like(wm)
                last[sel[-1], 0] = True
                _lds_io(st, w, last, oo, 4, np.broadcast_to(
                    np.array([run_total[-1] & 0xFFFFFFFF], U32).view(U8), m.shape + (4,)), atomic=True)
            res = np.broadcast_to((old & 0xFFFFFFFF).astype(U32)[:, None], m.shape)
            write_v(st, w, d, res, m)
        return run
    return factory


register("ds_append", _append(1))
register("ds_consume", _append(-1))


@op("ds_nop")
def _ds_nop(inst, K):
    return lambda st, w: None


@op("ds_swizzle_b32")
def _swizzle(inst, K):
    f = inst.fields
    a, d = f["addr"], f["vdst"]
    pat = f["offset0"] | (f["offset1"] << 8)
    lane = np.arange(K.lanes)
    if pat & 0x8000:                                   # quad permute mode
        src = (lane & ~3) + ((pat >> (2 * (lane & 3))) & 3)
    else:                                              # bitmask mode within groups of 32
        and_m, or_m, xor_m = pat & 0x1F, (pat >> 5) & 0x1F, (pat >> 10) & 0x1F
        src = (lane & 0x20) | ((((lane & 0x1F) & and_m) | or_m) ^ xor_m)

    def run(st, w):
        m = st.exec_mask(w)
        v = st.vgpr[a, w]
        out = np.where(m[:, src], v[:, src], 0).astype(U32)
        write_v(st, w, d, out, m)
    return run


@op("ds_bpermute_b32", "ds_permute_b32")
def _permute(inst, K):
    f = inst.fields
    a, d0, d = f["addr"], f["data0"], f["vdst"]
    off = f["offset0"] | (f["offset1"] << 8)
    back = inst.name == "ds_bpermute_b32"

    def run(st, w):
        m = st.exec_mask(w)
        idx = ((st.vgpr[a, w].astype(np.int64) + off) >> 2) & (st.lanes - 1)
        data = st.vgpr[d0, w]
        rows = np.arange(count(st, w))[:, None]
        if back:
            out = np.where(m[rows, idx], data[rows, idx], 0).astype(U32)
        else:
            out = np.zeros_like(data)
            lanes = np.broadcast_to(np.arange(st.lanes), idx.shape)
            wi, li = np.nonzero(m)
            out[wi, idx[wi, li]] = data[wi, li]
        write_v(st, w, d, out, m)
    return run
