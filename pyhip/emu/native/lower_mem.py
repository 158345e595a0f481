"""Lowering of memory instructions: scalar memory (smem.py), vector memory (vmem.py) and LDS (ds.py).
The size tables are the numpy semantics' own."""
from __future__ import annotations

import numpy as np

from ..semantics.buffer_format import layout_table, layout_words
from ..semantics.ds import _DS_ATOMICS
from ..semantics.vmem import D16_LOADS, LOAD_SIZES, STORE_SIZES
from .layout import F_GLC
from .lowerbase import Unsupported, sdesc

OFF = 0x7F
# native/engine/util.h enum AtomicOp
AT = {n: i for i, n in enumerate("swap cmpswap add sub rsub smin umin smax umax and or xor inc dec fadd fmin fmax "
                                  "mskor wrap fcmpswap pk_add_f16 pk_add_bf16 csub".split())}
VM_ATOMIC = {"add_f32": "fadd", "add_f64": "fadd", "min_f64": "fmin", "max_f64": "fmax"}
AK_GLOBAL, AK_FLAT, AK_SCRATCH, AK_BUFFER, AK_GLOBAL_TID = 0, 1, 2, 3, 4


# ---- scalar memory ---------------------------------------------------------------------------------------------
def _smem_address(rec, f, buffer):
    if f["sbase"] > 126:
        raise Unsupported("scalar base register")
    rec.s[0] = f["sbase"]
    a0 = int(buffer)
    if f["imm"]:
        rec.imm = f["offset"]
        if f["soe"]:
            rec.src(1, *sdesc(f["soffset"], None))
            a0 |= 2
    else:
        rec.imm = 0
        rec.src(1, *sdesc(f["offset"] & 0x7F, None))
        a0 |= 2
    rec.a0 = a0


def lower_smem(rec, inst, K) -> bool:
    name, f = inst.name, inst.fields
    if inst.encoding != "SMEM":
        return False
    for pfx, buffer in (("s_load_dword", False), ("s_buffer_load_dword", True), ("s_scratch_load_dword", False)):
        if name.startswith(pfx):
            sfx = name[len(pfx):]
            rec.op, rec.x, rec.d = "s_load", 1 if not sfx else int(sfx[1:]), f["sdata"]
            _smem_address(rec, f, buffer)
            return True
    for pfx, buffer in (("s_store_dword", False), ("s_buffer_store_dword", True), ("s_scratch_store_dword", False)):
        if name.startswith(pfx):
            sfx = name[len(pfx):]
            rec.op, rec.x, rec.d = "s_store", 1 if not sfx else int(sfx[1:]), f["sdata"]
            _smem_address(rec, f, buffer)
            return True
    for pfx, buffer in (("s_atomic_", False), ("s_buffer_atomic_", True)):
        if name.startswith(pfx):
            op = name[len(pfx):]
            wide = op.endswith("_x2")
            op = op[:-3] if wide else op
            if op not in AT:
                raise Unsupported(f"scalar atomic {op}")
            rec.op, rec.x, rec.d = "s_atomic", AT[op], f["sdata"]
            _smem_address(rec, f, buffer)
            rec.a0 |= int(wide) << 8
            if f["glc"]:
                rec.flags |= F_GLC
            return True
    return False


# ---- vector memory ---------------------------------------------------------------------------------------------
def _vm_address(rec, inst, K):
    """NInst.a0 address kind and operands (vmem.address_fn)."""
    f, enc = inst.fields, inst.encoding
    rec.imm = f.get("offset", 0)
    if enc == "GLOBAL":
        rec.s[0] = f["addr"]
        if f["saddr"] == OFF:
            rec.touch(f["addr"] + 2)
            return AK_GLOBAL
        if f["saddr"] > 126:
            raise Unsupported("global saddr")
        rec.s[1] = f["saddr"]
        rec.touch(f["addr"] + 1)
        return AK_GLOBAL | 1 << 10
    if enc == "FLAT":
        rec.s[0] = f["addr"]
        rec.touch(f["addr"] + 2)
        return AK_FLAT
    if enc == "SCRATCH":
        rec.s[0] = f["addr"]
        a0 = AK_SCRATCH
        if f["saddr"] != OFF:
            if f["saddr"] > 127:
                raise Unsupported("scratch saddr")
            rec.s[1] = f["saddr"]
            a0 |= 1 << 10
        if K.family >= 11:                  # GFX11: the SVE bit alone says whether VADDR takes part
            a0 |= (1 << 7) if f["sve"] else (1 << 12)
        elif K.is_gfx94x and f["lds"]:
            a0 |= 1 << 7
        rec.touch(f["addr"] + 1)
        return a0
    if enc in ("MUBUF", "MTBUF"):
        if f.get("lds") and not inst.name.startswith("buffer_load_lds_"):
            raise Unsupported("LDS-bound MUBUF load")
        if f["srsrc"] > 124:
            raise Unsupported("buffer resource register")
        rec.s[0] = f["vaddr"]
        rec.s[1] = f["srsrc"]
        rec.src(2, *sdesc(f["soffset"], None))
        rec.touch(f["vaddr"] + 2)
        return AK_BUFFER | (f["offen"] << 8) | (f["idxen"] << 9)
    raise Unsupported(f"{enc} addressing")


def lower_vmem(rec, inst, K) -> bool:
    name, f = inst.name, inst.fields
    if inst.encoding not in ("GLOBAL", "FLAT", "SCRATCH", "MUBUF", "MTBUF"):
        return False
    pfx, _, rest = name.partition("_")
    if pfx not in ("global", "flat", "scratch", "buffer"):
        return False
    if inst.encoding == "MTBUF" or rest.startswith(("load_format", "store_format")):
        raise Unsupported("typed buffer access")
    acc = K.accum_offset if f.get("acc", 0) else 0
    mub = inst.encoding == "MUBUF"
    if pfx == "global" and rest in ("load_dword_addtid", "store_dword_addtid"):
        store = rest.startswith("store")         # (vmem.addtid_global: SADDR, or 0 when it is off)
        rec.imm = f.get("offset", 0)
        a0 = AK_GLOBAL_TID
        if f["saddr"] != OFF:
            if f["saddr"] > 126:
                raise Unsupported("global saddr")
            rec.s[1] = f["saddr"]
            a0 |= 1 << 10
        rec.op, rec.x, rec.a0 = ("vm_store" if store else "vm_load"), 4, a0
        if store:
            rec.sd = f["data"]
            rec.touch(rec.sd + 1)
        else:
            rec.d = f["vdst"]
            rec.touch(rec.d + 1)
        return True
    if rest.startswith("load_lds_"):          # (GFX11's buffer_load_lds_* name their sizes as b32, u8, ...)
        sizes = {"dword": (4, 0), "ubyte": (1, 0), "sbyte": (1, 1), "ushort": (2, 0), "sshort": (2, 1),
                 "b32": (4, 0), "u8": (1, 0), "i8": (1, 1), "u16": (2, 0), "i16": (2, 1)}
        if rest[9:] not in sizes or pfx not in ("global", "scratch", "buffer"):
            raise Unsupported(name)
        size, signed = sizes[rest[9:]]
        a0 = _vm_address(rec, inst, K)
        rec.op, rec.x, rec.a0 = "vm_load_lds", size, a0 | (signed << 4)
        return True
    if rest.startswith("load_"):
        sfx = rest[5:]
        if sfx in LOAD_SIZES:
            size, sg = LOAD_SIZES[sfx]
            signed, d16 = sg == "s", 0
        elif sfx in D16_LOADS:
            size, signed, half = D16_LOADS[sfx]
            d16 = 1 if half == "lo" else 2
        else:
            raise Unsupported(f"{name}")
        a0 = _vm_address(rec, inst, K)
        rec.op, rec.x = "vm_load", size
        rec.a0 = a0 | (int(bool(signed)) << 4) | (d16 << 5)
        rec.d = (f["vdata"] if mub else f["vdst"]) + acc
        rec.touch(rec.d + max(1, size // 4))
        return True
    if rest.startswith("store_"):
        sfx = rest[6:]
        if sfx not in STORE_SIZES:
            raise Unsupported(f"{name}")
        size = STORE_SIZES[sfx]
        a0 = _vm_address(rec, inst, K)
        rec.op, rec.x = "vm_store", size
        rec.a0 = a0 | ((2 if sfx.endswith("_hi") else 0) << 5)
        rec.sd = (f["vdata"] if mub else f["data"]) + acc
        rec.touch(rec.sd + max(1, (size + 3) // 4))
        return True
    if rest.startswith("atomic_"):
        op = rest[7:]
        wide = op.endswith("_x2")
        base = op[:-3] if wide else op
        seq = VM_ATOMIC.get(base, base)
        if seq not in AT or base in ("rsub", "mskor", "wrap"):
            raise Unsupported(f"{name}")
        wide = wide or base in ("add_f64", "min_f64", "max_f64")
        a0 = _vm_address(rec, inst, K)
        rec.op, rec.x = "vm_atomic", AT[seq]
        rec.a0 = a0 | (int(wide) << 11)
        data = f["vdata"] if mub else f["data"]
        rec.sd = data
        rec.d = data if mub else f.get("vdst", data)
        returns = f.get("sc0", 0) if K.is_gfx94x else f.get("glc", 0)
        if returns:
            rec.flags |= F_GLC
        n = (2 if wide else 1) * (2 if seq in ("cmpswap", "fcmpswap") else 1)
        rec.touch(max(rec.sd + n, rec.d + (2 if wide else 1)))
        return True
    if name in ("buffer_invl2", "buffer_wbl2", "buffer_wbinvl1", "buffer_wbinvl1_vol", "buffer_inv"):
        rec.op = "s_nop"
        return True
    raise Unsupported(name)


# ---- typed buffer access ------------------------------------------------------------------------------------
FMT_STATIC = 1 << 14


def _shared_table(aux: list, table) -> int:
    """The offset of ``table`` in the program's aux tables, appended once."""
    at = 0
    for t in aux:
        if len(t) == len(table) and np.array_equal(t, table):
            return at
        at += len(t)
    aux.append(np.asarray(table, np.int32))
    return at


def lower_typed_buffer(rec, inst, K, aux: list) -> bool:
    """buffer_load/store_format_* and tbuffer_* (semantics/buffer_format.py) to native/engine/ops_format.h: the
    element layout of the instruction's format (MTBUF) or the table of the V# format codes (MUBUF)."""
    name, f = inst.name, inst.fields
    pfx, _, rest = name.partition("_")
    if inst.encoding not in ("MUBUF", "MTBUF") or not rest.startswith(("load_format_", "store_format_")):
        return False
    store = rest.startswith("store")
    sfx = rest[len("store_format_" if store else "load_format_"):]
    d16 = 0
    if sfx.startswith("d16_hi_"):
        d16, sfx = 2, sfx[7:]
    elif sfx.startswith("d16_"):
        d16, sfx = 1, sfx[4:]
    n = {"x": 1, "xy": 2, "xyz": 3, "xyzw": 4}[sfx]
    a0 = _vm_address(rec, inst, K)
    rec.a0 = a0 | (d16 << 5) | ((n - 1) << 16)
    if inst.encoding == "MTBUF":
        rec.k[0], rec.k[1] = layout_words(f["dfmt"], f["nfmt"])
        rec.a0 |= FMT_STATIC
    else:
        rec.k[0] = _shared_table(aux, layout_table(K.family))
    reg = f["vdata"] + (K.accum_offset if f.get("acc") else 0)
    rows = 1 if d16 == 2 else (n + 1) // 2 if d16 else n
    if store:
        rec.op, rec.sd = "vm_store_format", reg
    else:
        rec.op, rec.d = "vm_load_format", reg
    rec.touch(reg + rows)
    return True


# ---- LDS -------------------------------------------------------------------------------------------------------
DS_READ = {"b32": (4, 0, 0), "b64": (8, 0, 0), "b96": (12, 0, 0), "b128": (16, 0, 0), "u8": (1, 0, 0),
           "i8": (1, 1, 0), "u16": (2, 0, 0), "i16": (2, 1, 0), "u16_d16_hi": (2, 0, 2), "u16_d16": (2, 0, 1),
           "u8_d16": (1, 0, 1), "i8_d16": (1, 1, 1), "u8_d16_hi": (1, 0, 2), "i8_d16_hi": (1, 1, 2)}
DS_WRITE = {"b32": (4, 0), "b64": (8, 0), "b96": (12, 0), "b128": (16, 0), "b8": (1, 0), "b16": (2, 0),
            "b8_d16_hi": (1, 2), "b16_d16_hi": (2, 2)}


def _ds_atomic_table():
    out = {}
    for stem, op in _DS_ATOMICS.items():
        swap = op in ("cmpswap", "fcmpswap")
        wide = stem.endswith("64")
        if stem.startswith("wrxchg"):
            out[f"ds_{stem}"] = (op, True, swap, wide)
            continue
        out[f"ds_{stem}"] = (op, False, swap, wide)
        base, typ = stem.rsplit("_", 1)
        out[f"ds_{base}_rtn_{typ}"] = (op, True, swap, wide)
    out["ds_wrap_rtn_b32"] = ("wrap", True, False, False)
    for typ, op in (("b32", "cmpswap"), ("f32", "fcmpswap"), ("b64", "cmpswap"), ("f64", "fcmpswap")):
        wide = typ.endswith("64")                           # GFX11 ds_cmpstore: new value in DATA0, compare in DATA1
        out[f"ds_cmpstore_{typ}"] = (op, False, False, wide)
        out[f"ds_cmpstore_rtn_{typ}"] = (op, True, False, wide)
    return out


DS_ATOMIC = _ds_atomic_table()


def lower_ds(rec, inst, K) -> bool:
    if inst.encoding != "DS":
        return False
    name, f = inst.name, inst.fields
    if f.get("gds"):
        raise Unsupported("GDS")
    acc = K.accum_offset if f.get("acc") else 0
    off = f["offset0"] | (f["offset1"] << 8)
    rec.s[0] = f["addr"]
    rec.touch(f["addr"] + 1)
    for pfx, two, mult in (("ds_read2st64_", 1, 64), ("ds_read2_", 1, 1), ("ds_read_", 0, 1)):
        if name.startswith(pfx) and name[len(pfx):] in DS_READ and not (two and name[len(pfx):] not in ("b32", "b64")):
            size, signed, d16 = DS_READ[name[len(pfx):]]
            rec.op, rec.x, rec.d = "ds_read", size, f["vdst"] + acc
            rec.a0 = signed | (d16 << 1) | (two << 3) | (mult << 8)
            rec.imm = (f["offset0"] | (f["offset1"] << 16)) if two else off
            rec.touch(rec.d + max(1, size // 4) * (2 if two else 1))
            return True
    for pfx, two, mult in (("ds_write2st64_", 1, 64), ("ds_write2_", 1, 1), ("ds_write_", 0, 1)):
        if name.startswith(pfx) and name[len(pfx):] in DS_WRITE and not (two and name[len(pfx):] not in ("b32", "b64")):
            size, d16 = DS_WRITE[name[len(pfx):]]
            rec.op, rec.x = "ds_write", size
            rec.s[1], rec.s[2] = f["data0"] + acc, f["data1"] + acc
            rec.a0 = (d16 << 1) | (two << 3) | (mult << 8)
            rec.imm = (f["offset0"] | (f["offset1"] << 16)) if two else off
            rec.touch(max(rec.s[1], rec.s[2] if two else 0) + max(1, size // 4))
            return True
    if name in DS_ATOMIC:
        op, returns, swap, wide = DS_ATOMIC[name]
        if op not in AT:
            raise Unsupported(name)
        rec.op, rec.x, rec.imm, rec.d = "ds_atomic", AT[op], off, f["vdst"]
        rec.s[1], rec.s[2] = f["data0"], f["data1"]
        rec.a0 = int(returns) | (int(swap) << 1) | (int(wide) << 2)
        n = 2 if wide else 1
        rec.touch(max(f["data0"], f["data1"]) + n)
        if returns:
            rec.touch(f["vdst"] + n)
        return True
    if name.startswith(("ds_wrxchg2_rtn_", "ds_wrxchg2st64_rtn_")):
        size = 8 if name.endswith("b64") else 4
        rec.op, rec.x, rec.a0 = "ds_wrxchg2", size, 64 if "st64" in name else 1
        rec.imm = f["offset0"] | (f["offset1"] << 16)
        rec.s[1], rec.s[2], rec.d = f["data0"], f["data1"], f["vdst"]
        rec.touch(max(f["data0"], f["data1"]) + size // 4)
        rec.touch(f["vdst"] + 2 * (size // 4))
        return True
    if name == "ds_condxchg32_rtn_b64":
        rec.op, rec.imm, rec.s[1], rec.d = name, off, f["data0"], f["vdst"]
        rec.touch(max(f["data0"], f["vdst"]) + 2)
        return True
    if name in ("ds_read_addtid_b32", "ds_write_addtid_b32"):
        rec.op, rec.imm = "ds_addtid", off
        rec.x = int(name == "ds_write_addtid_b32")
        rec.s[1], rec.d = f["data0"], f["vdst"]
        rec.touch(max(f["data0"], f["vdst"]) + 1)
        return True
    if name in ("ds_append", "ds_consume"):
        rec.op, rec.imm, rec.d, rec.x = "ds_append", off, f["vdst"], int(name == "ds_append")
        rec.touch(f["vdst"] + 1)
        return True
    if name == "ds_swizzle_b32":
        rec.op, rec.imm, rec.d = name, off, f["vdst"]
        rec.touch(f["vdst"] + 1)
        return True
    if name in ("ds_bpermute_b32", "ds_permute_b32"):
        rec.op, rec.imm, rec.d = name, off, f["vdst"]
        rec.s[1] = f["data0"]
        rec.touch(max(f["data0"], f["vdst"]) + 1)
        return True
    if name == "ds_nop":
        rec.op = name
        return True
    raise Unsupported(name)
