"""Vector memory: GLOBAL, FLAT (global, LDS or private by aperture), SCRATCH and MUBUF (buffer resources,
incl. the private-segment V#) loads, stores and atomics.  Every lane's access is bounds-checked."""
from __future__ import annotations

import contextlib

import numpy as np

from ..memory import APERTURE_SIZE, GPUFault, PRIVATE_APERTURE, SHARED_APERTURE
from ..operands import sreader, write_loaded, write_v
from ..state import count, indices
from .registry import op, register
from .. import atomics, fastmem
from .ds import LDS_CHECKS, check_lds, lds_keep

# fn(st, w, widx, lidx, addrs, size, data, kind): told of the global-memory lanes of every vector memory
# access (loads, stores, atomics: not scalar loads) before it is made (pyhip/sanitizer racecheck); ``kind``
# "read", "write" (``data``: (n, size) uint8) or "atomic"; the fast paths are off while any is listed
GLOBAL_CHECKS: list = []


def check_global(st, w, sel, addrs, size, data=None, kind="read"):
    """Tell :data:`GLOBAL_CHECKS` of the lanes ``sel`` (a mask) accessing ``addrs`` (data: (nw, 64, size))."""
    widx, lidx = np.nonzero(sel)
    if len(widx):
        for fn in GLOBAL_CHECKS:
            fn(st, w, widx, lidx, addrs[widx, lidx], size, None if data is None else data[widx, lidx], kind)


def check_scalar(st, w, addrs, n: int, data=None, kind="read"):
    """Tell :data:`GLOBAL_CHECKS` of a scalar access (s_load, s_store, s_atomic: one per wave, ``addrs`` (nw,)
    dword-aligned byte addresses, ``n`` dwords; ``data`` a store's (nw * n, 4) uint8) as the lanes of a vector
    access, lane i the access's dword i: the native engine's ``race_scalar`` tells its shadow the same."""
    if not GLOBAL_CHECKS:
        return
    addrs = np.asarray(addrs, np.uint64).reshape(-1)
    widx = np.repeat(np.arange(len(addrs)), n)
    lidx = np.tile(np.arange(n), len(addrs))
    a = addrs[widx] + np.uint64(4) * lidx.astype(np.uint64)
    for fn in GLOBAL_CHECKS:
        fn(st, w, widx, lidx, a, 4, None if data is None else np.asarray(data).reshape(-1, 4), kind)


U8, U16, U32, U64, I32, I64 = np.uint8, np.uint16, np.uint32, np.uint64, np.int32, np.int64
F32, F64 = np.float32, np.float64
OFF = 0x7F
ADD_TID_ENABLE = 1 << 23       # V# word 3: per-lane (swizzled private) addressing

LOAD_SIZES = {"ubyte": (1, "u"), "sbyte": (1, "s"), "ushort": (2, "u"), "sshort": (2, "s"), "dword": (4, "u"),
              "dwordx2": (8, "u"), "dwordx3": (12, "u"), "dwordx4": (16, "u")}
# D16 loads: 16-bit results into the low half (keeping the high half) or, _hi, the high half
D16_LOADS = {"ubyte_d16": (1, False, "lo"), "sbyte_d16": (1, True, "lo"), "short_d16": (2, False, "lo"),
             "ubyte_d16_hi": (1, False, True), "sbyte_d16_hi": (1, True, True), "short_d16_hi": (2, False, True)}
STORE_SIZES = {"byte": 1, "short": 2, "dword": 4, "dwordx2": 8, "dwordx3": 12, "dwordx4": 16, "byte_d16_hi": 1,
               "short_d16_hi": 2}


# ---- address generation ---------------------------------------------------------------------------------
def _vaddr64(st, w, r):
    return st.vgpr[r, w].astype(U64) | (st.vgpr[r + 1, w].astype(U64) << U64(32))


def address_fn(inst, K):
    """→ f(st, w) returning (kind, addresses (nw,64)) with kind 'global' | 'private' | 'flat'."""
    f = inst.fields
    enc = inst.encoding
    off = f.get("offset", 0)
    if enc == "GLOBAL":
        if f["saddr"] == OFF:
            return lambda st, w: ("global", _vaddr64(st, w, f["addr"]) + U64(off & 0xFFFFFFFFFFFFFFFF))
        sa = f["saddr"]

        def g(st, w):
            base = st.sgpr[w, sa].astype(U64) | (st.sgpr[w, sa + 1].astype(U64) << U64(32))
            return "global", base[:, None] + st.vgpr[f["addr"], w].astype(U64) + U64(off & 0xFFFFFFFFFFFFFFFF)
        return g
    if enc == "FLAT":
        return lambda st, w: ("flat", _vaddr64(st, w, f["addr"]) + U64(off))
    if enc == "SCRATCH":
        sa, va = f["saddr"], f["addr"]
        if K.family >= 11:                    # GFX11: the SVE bit says whether VADDR takes part
            use_v = bool(f["sve"])
        else:                                 # GFX9/GFX10: VADDR when there is no SADDR (gfx94x: SVE in LDS)
            use_v = sa == OFF or K.is_gfx94x and f["lds"]

        def s(st, w):
            a = np.full((count(st, w), st.lanes), off, dtype=I64)
            if sa != OFF:
                a += st.sgpr[w, sa].astype(I64)[:, None]
            if use_v:
                a += st.vgpr[va, w].astype(I64)
            return "private", a
        return s
    if enc in ("MUBUF", "MTBUF"):
        rs, so = f["srsrc"], sreader(f["soffset"], None)

        def b(st, w):
            d0, d1, d2, d3 = (st.sgpr[w, rs + i].astype(U64) for i in range(4))
            base = d0 | ((d1 & U64(0xFFFF)) << U64(32))
            stride = (d1 >> U64(16)) & U64(0x3FFF)
            wave_off = so(st, w).astype(U64)
            a = np.full((count(st, w), st.lanes), U64(off), dtype=U64)
            if f["offen"] and f["idxen"]:
                a = a + st.vgpr[f["vaddr"] + 1, w].astype(U64)
            elif f["offen"]:
                a = a + st.vgpr[f["vaddr"], w].astype(U64)
            if f["idxen"]:
                a = a + st.vgpr[f["vaddr"], w].astype(U64) * stride[:, None]
            private = (d3 & U64(ADD_TID_ENABLE)) != 0
            if private.all():
                # swizzled private buffer: SOFFSET and the V# base are wave-level byte offsets (scaled by the
                # wave's lanes); instruction offset and VGPR offset are per lane
                wave_level = (base - U64(K.private_vsharp_base) + wave_off).astype(I64) // st.lanes
                return "private", a.astype(I64) + wave_level[:, None]
            if private.any():
                raise GPUFault("mixed private and global buffer resources in one instruction")
            st._buf_limit = d2        # num_records: out-of-range lanes read 0 / drop writes
            st._buf_offs = wave_off[:, None] + a
            return "buffer", base[:, None] + st._buf_offs
        return b
    raise ValueError(enc)


# ---- memory spaces -----------------------------------------------------------------------------------------
class Space:
    """Uniform gather/scatter over global memory, LDS (via FLAT) and per-lane private memory."""

    @staticmethod
    def split(K, st, w, kind, addrs, m):
        """Yield (space, sel mask, offsets) for the active lanes."""
        if kind == "global":
            yield "global", m, addrs
            return
        if kind == "private":
            yield "private", m, addrs.astype(I64)
            return
        if kind == "buffer":
            yield "global", m, addrs
            return
        a = addrs
        lds = (a >= U64(SHARED_APERTURE)) & (a < U64(SHARED_APERTURE + APERTURE_SIZE))
        prv = (a >= U64(PRIVATE_APERTURE)) & (a < U64(PRIVATE_APERTURE + APERTURE_SIZE))
        glob = m & ~lds & ~prv
        if glob.any():
            yield "global", glob, a
        if (m & lds).any():
            yield "lds", m & lds, (a - U64(SHARED_APERTURE)).astype(I64)
        if (m & prv).any():
            yield "private", m & prv, (a - U64(PRIVATE_APERTURE)).astype(I64)

    @staticmethod
    def gather(K, st, w, space, sel, offs, size):
        with _locating(sel):
            return Space._gather(K, st, w, space, sel, offs, size)

    @staticmethod
    def scatter(K, st, w, space, sel, offs, data):
        with _locating(sel):
            Space._scatter(K, st, w, space, sel, offs, data)

    @staticmethod
    def _gather(K, st, w, space, sel, offs, size):
        if space == "global" and GLOBAL_CHECKS:
            check_global(st, w, sel, offs, size)
        if space == "global" and sel.all():
            n = sel.shape[0]
            data = K.memory.gather(offs.reshape(-1).astype(U64, copy=False), size)
            return None, None, data.reshape(n, st.lanes, size)
        widx, lidx = np.nonzero(sel)
        o = offs[widx, lidx]
        if space == "global":
            return widx, lidx, K.memory.gather(o.astype(U64), size)
        if space == "lds":
            return widx, lidx, lane_read(K, st, w, space, widx, lidx, o, size, atomic=False)
        _check_range(o, size, st.private_bytes, "scratch (private segment)")
        flat = st.private.reshape(st.private.shape[0], -1)
        wave = indices(st, w)[widx]
        return widx, lidx, flat[wave[:, None], (lidx * st.private_bytes + o)[:, None] + np.arange(size)]

    @staticmethod
    def _scatter(K, st, w, space, sel, offs, data):
        if space == "global" and GLOBAL_CHECKS:
            check_global(st, w, sel, offs, data.shape[-1], data, "write")
        if space == "global" and sel.all():
            K.memory.scatter(offs.reshape(-1).astype(U64, copy=False), data.reshape(-1, data.shape[-1]))
            return
        widx, lidx = np.nonzero(sel)
        o = offs[widx, lidx]
        size = data.shape[-1]
        d = data[widx, lidx]
        if space == "global":
            K.memory.scatter(o.astype(U64), d)
            return
        if space == "lds":
            lane_write(K, st, w, space, widx, lidx, o, d, "write")
            return
        _check_range(o, size, st.private_bytes, "scratch (private segment)")
        flat = st.private.reshape(st.private.shape[0], -1)
        wave = indices(st, w)[widx]
        flat[wave[:, None], (lidx * st.private_bytes + o)[:, None] + np.arange(size)] = d


class _locating:
    """Turn the ``index`` a bounds check reports (position among the checked lanes: the selected lanes in
    wave-major order) into the wave (position in the instruction's wave selection) and lane that faulted."""

    def __init__(self, sel):
        self.sel = sel

    def __enter__(self):
        return self

    def __exit__(self, typ, exc, tb):
        if isinstance(exc, GPUFault) and "index" in exc.details and "batch_wave" not in exc.details:
            widx, lidx = np.nonzero(self.sel)
            i = exc.details["index"]
            if 0 <= i < len(widx):
                exc.details["batch_wave"], exc.details["lane"] = int(widx[i]), int(lidx[i])
        return False


def _check_range(o, size, limit, what):
    bad = (o < 0) | (o + size > limit)
    if bad.any():
        raise GPUFault(f"{what} access out of range (size {limit} bytes)", address=int(o[np.argmax(bad)]),
                       index=int(np.argmax(bad)),
                       access=f"{size} bytes")


def _check_aligned(a, m, size):
    """Atomics need naturally aligned addresses.  Plain loads and stores may be unaligned (ROCm runs GFX9
    with SH_MEM_CONFIG.alignment_mode = UNALIGNED, which LLVM's amdhsa targets assume), but the read-modify-
    write of an atomic is defined on an aligned dword/qword only; a misaligned one is reported as a fault
    rather than emulated as something the hardware does not do."""
    bad = m & ((a.astype(U64, copy=False) & U64(size - 1)) != 0)
    if bad.any():
        wi, li = (int(x[0]) for x in np.nonzero(bad))
        raise GPUFault(f"misaligned atomic: address not aligned to {size} bytes",
                       address=int(a[wi, li]) & 0xFFFFFFFFFFFFFFFF, access=f"{size}-byte atomic",
                       batch_wave=wi, lane=li)


def lane_keys(st, w, space, widx, lidx, o):
    """One key per distinct memory location (LDS is per workgroup, private memory per lane)."""
    if space == "global":
        return o.astype(U64)
    if space == "lds":
        return (st.group[w][widx].astype(I64) << 33) + o           # (o < 2^32)
    return (indices(st, w)[widx] * st.lanes + lidx) * (st.private_bytes + 16) + o


def lane_read(K, st, w, space, widx, lidx, o, size, atomic=True):
    """``size`` bytes per listed lane → (n, size) uint8 (bounds-checked); ``atomic``: the read half of an
    atomic (not told to :data:`LDS_CHECKS`)."""
    if space == "global":
        return K.memory.gather(o.astype(U64), size)
    if space == "lds":
        # out of the workgroup's LDS: reads 0, no fault (ds.lds_keep)
        keep = lds_keep(st, w, widx, lidx, o, size)
        if keep is not None:
            out = np.zeros((len(o), size), np.uint8)
            out[keep] = lane_read(K, st, w, space, widx[keep], lidx[keep], o[keep], size, atomic)
            return out
        if LDS_CHECKS and not atomic:
            check_lds(st, w, widx, lidx, o, size)
        return st.lds[st.group[w][widx][:, None], o[:, None] + np.arange(size)]
    _check_range(o, size, st.private_bytes, "scratch (private segment)")
    flat = st.private.reshape(st.private.shape[0], -1)
    return flat[indices(st, w)[widx][:, None], (lidx * st.private_bytes + o)[:, None] + np.arange(size)]


def lane_write(K, st, w, space, widx, lidx, o, data, kind="atomic"):
    """``data`` (n, size) uint8 to the listed lanes' bytes (bounds-checked); ``kind``: what
    :data:`LDS_CHECKS` is told ("atomic": the atomics' write)."""
    size = data.shape[-1]
    if space == "global":
        K.memory.scatter(o.astype(U64), data)
        return
    if space == "lds":
        keep = lds_keep(st, w, widx, lidx, o, size, True)
        if keep is not None:                # out of the workgroup's LDS: dropped, no fault (ds.lds_keep)
            widx, lidx, o, data = widx[keep], lidx[keep], o[keep], data[keep]
        if LDS_CHECKS:
            check_lds(st, w, widx, lidx, o, size, data, kind)
        st.lds[st.group[w][widx][:, None], o[:, None] + np.arange(size)] = data
        return
    _check_range(o, size, st.private_bytes, "scratch (private segment)")
    flat = st.private.reshape(st.private.shape[0], -1)
    flat[indices(st, w)[widx][:, None], (lidx * st.private_bytes + o)[:, None] + np.arange(size)] = data


# ---- loads and stores ---------------------------------------------------------------------------------------
def _load(size, signed, d16_hi=False):
    def factory(inst, K):
        addr = address_fn(inst, K)
        d = inst.fields.get("vdst") if inst.encoding not in ("MUBUF", "MTBUF") else inst.fields["vdata"]
        acc = inst.fields.get("acc", 0)
        dreg = d + (K.accum_offset if acc else 0)
        fast = fastmem.address_parts(inst) if size % 4 == 0 and not d16_hi else None

        def run(st, w):
            m = st.exec_mask(w)
            if fast is not None and m.all() and not GLOBAL_CHECKS and fastmem.load(K.memory, st, w, fast, dreg,
                                                                                   size // 4):
                return
            kind, a = addr(st, w)
            raw = read_lanes(K, st, w, kind, a, m, size, max(size, 4))
            write_loaded(st, w, dreg, raw, size, signed, d16_hi, m)
        return run
    return factory


def read_lanes(K, st, w, kind, a, m, size, width):
    """``size`` bytes per active lane from addresses ``a`` of an address kind → (nw, 64, width) uint8, zero
    where a lane is inactive or (raw buffers) out of range."""
    raw = np.zeros((count(st, w), st.lanes, width), dtype=U8)
    for space, sel, offs in Space.split(K, st, w, kind, a, m):
        if kind == "buffer":
            sel = _in_buffer(st, a, sel, size)
            offs = a
        widx, lidx, data = Space.gather(K, st, w, space, sel, offs, size)
        if widx is None:
            raw[:, :, :size] = data
        else:
            raw[widx, lidx, :size] = data
    return raw


def write_lanes(K, st, w, kind, a, m, data):
    """Store ``data`` (nw, 64, size) uint8 for the active lanes (raw buffers: in-range lanes only)."""
    size = data.shape[-1]
    for space, sel, offs in Space.split(K, st, w, kind, a, m):
        if kind == "buffer":
            sel = _in_buffer(st, a, sel, size)
            offs = a
        Space.scatter(K, st, w, space, sel, offs, data)


def _in_buffer(st, a, sel, size):
    """Raw buffer range checking: a lane whose offset + size exceeds num_records reads 0 / drops its write."""
    limit = getattr(st, "_buf_limit", None)
    if limit is None:
        return sel
    return sel & ((st._buf_offs + U64(size)) <= limit[:, None])


def _store(size, d16_hi=False):
    def factory(inst, K):
        addr = address_fn(inst, K)
        f = inst.fields
        src = f["data"] if inst.encoding in ("GLOBAL", "FLAT", "SCRATCH") else f["vdata"]
        src += K.accum_offset if f.get("acc", 0) else 0
        nregs = max(1, (size + 3) // 4)
        fast = fastmem.address_parts(inst) if size % 4 == 0 and not d16_hi else None

        def run(st, w):
            m = st.exec_mask(w)
            if fast is not None and m.all() and not GLOBAL_CHECKS and fastmem.store(K.memory, st, w, fast, src,
                                                                                    nregs):
                return
            kind, a = addr(st, w)
            words = np.stack([st.vgpr[src + i, w] for i in range(nregs)], axis=-1)
            if d16_hi:
                words = words >> U32(16)
            write_lanes(K, st, w, kind, a, m, words.view(U8)[:, :, :size])
        return run
    return factory


for _pfx in ("global", "flat", "scratch", "buffer"):
    for _n, (_sz, _sg) in LOAD_SIZES.items():
        register(f"{_pfx}_load_{_n}", _load(_sz, _sg == "s"))
    for _n, (_sz, _sg, _half) in D16_LOADS.items():
        register(f"{_pfx}_load_{_n}", _load(_sz, _sg, d16_hi=_half))
    for _n, _sz in STORE_SIZES.items():
        register(f"{_pfx}_store_{_n}", _store(_sz, d16_hi=_n.endswith("_hi")))


# ---- atomics ----------------------------------------------------------------------------------------------------
_NO_LOCK = contextlib.nullcontext()
ATOMICS = ("swap", "add", "sub", "smin", "umin", "smax", "umax", "and", "or", "xor", "inc", "dec", "cmpswap",
           "add_f32", "add_f64", "min_f64", "max_f64", "pk_add_f16", "pk_add_bf16")


def _atomic(opname, wide):
    def factory(inst, K):
        addr = address_fn(inst, K)
        f = inst.fields
        data = f["data"] if inst.encoding in ("GLOBAL", "FLAT", "SCRATCH") else f["vdata"]
        dst = f.get("vdst", data)
        returns = bool(f.get("glc", 0) if not K.is_gfx94x else f.get("sc0", 0))
        if inst.encoding in ("MUBUF", "MTBUF"):
            dst = data
        is64 = wide or opname in ("add_f64", "min_f64", "max_f64")
        size = 8 if is64 else 4
        dt = U64 if is64 else U32

        def rd(st, w, r):
            if is64:
                return st.vgpr[r, w].astype(U64) | (st.vgpr[r + 1, w].astype(U64) << U64(32))
            return st.vgpr[r, w]

        seq_name = {"add_f32": "fadd", "add_f64": "fadd", "min_f64": "fmin", "max_f64": "fmax"}.get(opname, opname)

        def run(st, w):
            m = st.exec_mask(w)
            kind, a = addr(st, w)
            if opname in ("cmpswap", "fcmpswap"):
                val = rd(st, w, data)
                cmp = rd(st, w, data + (2 if is64 else 1))
            else:
                val, cmp = rd(st, w, data), None
            result = np.zeros((count(st, w), st.lanes), dtype=dt)
            _check_aligned(a, m, size)
            for space, sel, offs in Space.split(K, st, w, kind, a, m):
                if kind == "buffer":
                    sel = _in_buffer(st, a, sel, size)
                    offs = a
                if space == "global" and GLOBAL_CHECKS:
                    check_global(st, w, sel, offs, size, kind="atomic")
                widx, lidx = np.nonzero(sel)
                if not len(widx):
                    continue
                o = offs[widx, lidx]
                keys = lane_keys(st, w, space, widx, lidx, o)
                groups = atomics.Groups(keys)
                f0 = groups.first
                with atomics.LOCK if space == "global" else _NO_LOCK:
                    init = np.ascontiguousarray(lane_read(K, st, w, space, widx[f0], lidx[f0], o[f0], size)) \
                        .view(dt).reshape(-1)
                    old, final = atomics.apply(seq_name, dt, init, val[widx, lidx],
                                               cmp[widx, lidx] if cmp is not None else None, groups)
                    lane_write(K, st, w, space, widx[f0], lidx[f0], o[f0],
                               final.astype(dt).view(U8).reshape(len(f0), size))
                result[widx, lidx] = old
            if returns:
                if is64:
                    write_v(st, w, dst, (result & U64(0xFFFFFFFF)).astype(U32), m)
                    write_v(st, w, dst + 1, (result >> U64(32)).astype(U32), m)
                else:
                    write_v(st, w, dst, result, m)
        return run
    return factory


for _pfx in ("global", "flat", "buffer"):
    for _op in ATOMICS:
        if _op.endswith(("_f32", "_f64", "_f16", "_bf16")):
            register(f"{_pfx}_atomic_{_op}", _atomic(_op, False))
            continue
        register(f"{_pfx}_atomic_{_op}", _atomic(_op, False))
        register(f"{_pfx}_atomic_{_op}_x2", _atomic(_op, True))


# ---- loads straight into LDS (global_load_lds_*, scratch_load_lds_*) ----------------------------------------------
def _load_lds(size, signed):
    """Each active lane's value (zero/sign-extended to a dword) goes to LDS at M0 + instruction offset +
    4 * lane id instead of a VGPR."""
    def factory(inst, K):
        addr = address_fn(inst, K)
        off = inst.fields.get("offset", 0)
        if inst.encoding == "SCRATCH":
            off = 0                               # the offset is part of the scratch address, not of M0's

        def run(st, w):
            m = st.exec_mask(w)
            kind, a = addr(st, w)
            v = np.ascontiguousarray(read_lanes(K, st, w, kind, a, m, size, 4)).view(U32)[:, :, 0]
            if size < 4:
                v = v & U32((1 << 8 * size) - 1)
                if signed:
                    sh = np.int32(32 - 8 * size)
                    v = ((v.view(I32) << sh) >> sh).view(U32)
            lds_off = (st.sgpr[w, 124].astype(np.int64) & 0x3FFFF)[:, None] + off + 4 * np.arange(st.lanes)
            from .ds import _lds_io
            _lds_io(st, w, m, lds_off, 4, v[:, :, None].view(U8))
        return run
    return factory


for _pfx in ("global", "scratch"):
    for _n, _sz, _sg in (("dword", 4, False), ("ubyte", 1, False), ("sbyte", 1, True), ("ushort", 2, False),
                         ("sshort", 2, True)):
        register(f"{_pfx}_load_lds_{_n}", _load_lds(_sz, _sg))


def addtid_global(store):
    """global_load/store_dword_addtid (GFX10): address = SADDR (or 0) + offset + 4 * lane id."""
    def factory(inst, K):
        f = inst.fields
        sa, off, reg = f["saddr"], f.get("offset", 0), (f["data"] if store else f["vdst"])

        def run(st, w):
            m = st.exec_mask(w)
            base = np.zeros(count(st, w), U64) if sa == OFF else \
                st.sgpr[w, sa].astype(U64) | (st.sgpr[w, sa + 1].astype(U64) << U64(32))
            a = base[:, None] + U64(off & 0xFFFFFFFFFFFFFFFF) + U64(4) * np.arange(st.lanes, dtype=U64)
            if store:
                write_lanes(K, st, w, "global", a, m, st.vgpr[reg, w][:, :, None].view(U8))
            else:
                raw = read_lanes(K, st, w, "global", a, m, 4, 4)
                write_v(st, w, reg, np.ascontiguousarray(raw).view(U32)[:, :, 0], m)
        return run
    return factory


@op("buffer_invl2", "buffer_wbl2", "buffer_wbinvl1", "buffer_wbinvl1_vol", "buffer_inv")
def _cache_op(inst, K):
    return lambda st, w: None
