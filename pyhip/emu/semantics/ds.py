"""LDS (DS encoding): reads, writes (incl. read2/write2 and st64 forms), LDS atomics, swizzle, permute."""
from __future__ import annotations

import numpy as np

from ..memory import GPUFault
from ..operands import write_loaded, write_v
from ..state import count, indices, LANES
from . import op, register
from .. import atomics

U8, U16, U32, U64, I32, F32 = np.uint8, np.uint16, np.uint32, np.uint64, np.int32, np.float32


def _lds_io(st, w, m, offs, size, data=None):
    """Gather (data None) → (nw, 64, size) uint8, or scatter ``data`` (nw, 64, size), ``size`` bytes per
    active lane at LDS byte offsets ``offs`` (nw, 64).  The batch's LDS is one flat buffer (workgroup g at
    g * row); aligned dword accesses go through a uint32 view (one gather per dword, not per byte)."""
    o = offs.astype(np.int64, copy=False)
    bad = m & ((o < 0) | (o + size > st.lds_size))
    if bad.any():
        raise GPUFault(f"LDS access out of range (allocated {st.lds_size} bytes)", address=int(o[bad][0]),
                       access=f"{size} bytes")
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
            return got.reshape(idx.shape + (k,)).view(U8)
        return buf[idx[..., None] + np.arange(size)]
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


def _atomic(name, returns, swap_operands=False):
    """LDS atomic ``name`` (see :mod:`pyhip.emu.atomics`); ``swap_operands``: ds_cmpst takes the compare
    value in data0 and the new value in data1."""
    def factory(inst, K):
        f = inst.fields
        a, d0, d1, dst = f["addr"], f["data0"], f["data1"], f["vdst"]
        off = f["offset0"] | (f["offset1"] << 8)

        def run(st, w):
            m = st.exec_mask(w)
            widx, lidx = np.nonzero(m)
            if not len(widx):
                return
            o = st.vgpr[a, w][widx, lidx].astype(np.int64) + off
            bad = (o < 0) | (o + 4 > st.lds_size)
            if bad.any():
                raise GPUFault(f"LDS atomic out of range (allocated {st.lds_size} bytes)",
                               address=int(o[np.argmax(bad)]), access="4 bytes")
            g = st.group[w][widx]
            groups = atomics.Groups(g * (st.lds_size + 16) + o)
            f0 = groups.first
            cols = o[f0][:, None] + np.arange(4)
            init = np.ascontiguousarray(st.lds[g[f0][:, None], cols]).view(U32).reshape(-1)
            v, c = st.vgpr[d0, w][widx, lidx], st.vgpr[d1, w][widx, lidx]
            if swap_operands:
                v, c = c, v
            old, final = atomics.apply(name, U32, init, v, c, groups)
            st.lds[g[f0][:, None], cols] = final.view(U8).reshape(-1, 4)
            if returns:
                res = np.zeros((count(st, w), LANES), dtype=U32)
                res[widx, lidx] = old
                write_v(st, w, dst, res, m)
        return run
    return factory


# ds mnemonic stem -> (atomics operation, swap data0/data1)
_DS_ATOMICS = {
    "add_u32": "add", "sub_u32": "sub", "rsub_u32": "rsub", "inc_u32": "inc", "dec_u32": "dec",
    "min_i32": "smin", "max_i32": "smax", "min_u32": "umin", "max_u32": "umax",
    "and_b32": "and", "or_b32": "or", "xor_b32": "xor", "mskor_b32": "mskor", "wrxchg_rtn_b32": "swap",
    "cmpst_b32": "cmpswap", "add_f32": "fadd", "min_f32": "fmin", "max_f32": "fmax",
}
for _n, _op in _DS_ATOMICS.items():
    _swap = _op == "cmpswap"
    if _n.startswith("wrxchg"):
        register(f"ds_{_n}", _atomic(_op, True))
        continue
    register(f"ds_{_n}", _atomic(_op, False, _swap))
    base, typ = _n.rsplit("_", 1)
    register(f"ds_{base}_rtn_{typ}", _atomic(_op, True, _swap))


@op("ds_swizzle_b32")
def _swizzle(inst, K):
    f = inst.fields
    a, d = f["addr"], f["vdst"]
    pat = f["offset0"] | (f["offset1"] << 8)
    lane = np.arange(LANES)
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
        idx = ((st.vgpr[a, w].astype(np.int64) + off) >> 2) & 63
        data = st.vgpr[d0, w]
        rows = np.arange(count(st, w))[:, None]
        if back:
            out = np.where(m[rows, idx], data[rows, idx], 0).astype(U32)
        else:
            out = np.zeros_like(data)
            lanes = np.broadcast_to(np.arange(LANES), idx.shape)
            wi, li = np.nonzero(m)
            out[wi, idx[wi, li]] = data[wi, li]
        write_v(st, w, d, out, m)
    return run
