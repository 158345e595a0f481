"""Operands as the encodings define them, in the semantics language: what a decoded instruction's source
codes read (registers, inline constants, literals), the VALU source modifiers (OP_SEL halves, SDWA selects,
abs/neg, DPP lane moves) and destination rules (output modifiers, 16-bit halves, SDWA destination selects,
DPP write masks, EXEC), and the scalar side (SGPR pairs, SCC, lane masks).

A :class:`Build` is handed to each description with one decoded instruction; it builds nodes and collects
the instruction's writes.  ``mode`` is the MODE register when it is known at build time (an int; the
numpy engine builds once per mode, the compiled engine once per kernel), else None (read at run time)."""
from __future__ import annotations

import functools

import numpy as np

from ..operands import constant
from . import fpops
from .lang import (B1, F16, F32, F64, I16, I32, I64, U16, U32, U64, Node, SpecError, Write, bitcast, const,
                   lane_shuffle, pack64, read, select, word_lanes, TYPES, as_ty)

VCC, M0, EXEC = 106, 124, 126
HALF = {"f16", "u16", "i16", "b16"}
FLOAT = {"f16", "f32", "f64"}
KIND_TY = {"f16": F16, "u16": U16, "i16": I16, "b16": U16, "f32": F32, "u32": U32, "i32": I32, "b32": U32,
           "f64": F64, "u64": U64, "i64": I64, "b64": U64}
WIDTH = {k: (64 if t.bits == 64 else 32) for k, t in KIND_TY.items()}
# SDWA selects: (shift, width) of BYTE_0..3, WORD_0/1, DWORD
SDWA_SEL = {0: (0, 8), 1: (8, 8), 2: (16, 8), 3: (24, 8), 4: (0, 16), 5: (16, 16), 6: (0, 32)}
# VOP3B: bits 14:8 hold SDST, so abs/op_sel bits a decoder may report there are not modifiers
VOP3B_NAMES = frozenset({
    "v_div_scale_f32", "v_div_scale_f64", "v_add_co_u32", "v_sub_co_u32", "v_subrev_co_u32", "v_addc_co_u32",
    "v_subb_co_u32", "v_subbrev_co_u32", "v_mad_u64_u32", "v_mad_i64_i32",
    "v_add_co_ci_u32", "v_sub_co_ci_u32", "v_subrev_co_ci_u32",
})
# 16-bit results: GFX9 zeroes the high half, except these VOP3 ops with OP_SEL, which write the half OP_SEL[3] names
# and keep the other (LLVM: GCNSubtarget::zeroesHigh16BitsOfDest); GFX10+ keeps the other half for every 16-bit result
OPSEL_DEST = frozenset("v_mad_f16 v_fma_f16 v_div_fixup_f16 v_mad_u16 v_mad_i16 v_add_i16 v_sub_i16 v_max3_f16 "
                       "v_min3_f16 v_med3_f16 v_max3_i16 v_min3_i16 v_med3_i16 v_max3_u16 v_min3_u16 "
                       "v_med3_u16".split())


class Fault(Exception):
    """An encoding the hardware rejects when it executes (reserved selects): the instruction faults."""


class Build:
    """One decoded instruction being described: reads build nodes, ``write_*`` collect the effects."""

    def __init__(self, inst, K, mode):
        self.inst = inst
        self.K = K
        self.lanes = K.lanes
        self.family = K.family
        self.mode_value = mode
        self.mode_used = False
        self.writes: list[Write] = []
        self._dpp_invalid = None

    # -- machine state -----------------------------------------------------------------------------------------
    @property
    def mode(self):
        """MODE: an int when known at build time, else a U32 node read at run time."""
        self.mode_used = True
        if self.mode_value is not None:
            return self.mode_value
        return read(("mode",), U32, True)

    @property
    def exec(self) -> Node:
        """EXEC as per-lane B1."""
        return read(("exec_lanes",), B1, False)

    def exec_word(self) -> Node:
        return self.sreg(EXEC, 64 if self.lanes == 64 else 32)

    def vgpr(self, r: int) -> Node:
        return read(("v", int(r)), U32, False)

    def vgpr64(self, r: int) -> Node:
        return pack64(self.vgpr(r), self.vgpr(r + 1))

    def sgpr(self, r: int) -> Node:
        return read(("s", int(r)), U32, True)

    def scc(self) -> Node:
        return read(("scc",), B1, True)

    def sreg(self, r: int, width: int = 32) -> Node:
        """SGPR ``r`` (a pair from ``r`` for 64 bits)."""
        if width == 64:
            return pack64(self.sgpr(r), self.sgpr(r + 1))
        return self.sgpr(r)

    def lane_mask(self, r: int) -> Node:
        """The lane mask held in SGPR ``r`` (a pair in wave64) as per-lane B1 (machine state ("mask", r))."""
        if r == EXEC:
            return self.exec
        if r >= 128:
            raise NotImplementedError(f"lane mask in operand {r}")
        return read(("mask", int(r)), B1, False)

    def mask_operand(self, code: int) -> Node:
        """A lane-mask source operand as per-lane B1: an SGPR (pair), or a constant taken as the mask word."""
        if code < 128 and code not in (125,):
            return self.lane_mask(code)
        return word_lanes(self.scalar(code, 64 if self.lanes == 64 else 32), self.lanes)

    # -- source operands ---------------------------------------------------------------------------------------------
    def scalar(self, code: int, width: int = 32, kind: str | None = None) -> Node:
        """A scalar source code: SGPRs, inline constants and literals, VCCZ/EXECZ/SCC.  A 64-bit operand reads
        an inline float constant (1.0, 0.5, 1/(2pi), ...) as binary64 whatever its type: LLVM encodes
        ``icmp eq i64 %x, 0x3FF0000000000000`` as ``s_cmp_eq_u64 s[6:7], 1.0`` (a literal stays 32 bits)."""
        kind = kind or ("b64" if width == 64 else "b32")
        if width == 64 and 240 <= code <= 248:
            kind = "f64"
        c = constant(code, self.inst.literal, kind)
        ty = U64 if width == 64 else U32
        if c is not None:
            return const(c & ty.mask, ty)
        if code == 251:
            return self._zflag(VCC, ty)
        if code == 252:
            return self._zflag(EXEC, ty)
        if code == 253:
            return self.scc().to(ty)
        if code < 128:
            return self.sreg(code, width)
        raise NotImplementedError(f"source operand {code} ({'LDS_DIRECT' if code == 254 else 'reserved'}) is not supported")

    def _zflag(self, r, ty):
        word = self.sreg(r, 64 if self.lanes == 64 else 32)
        return word.eq(0).to(ty)

    def vector(self, code: int, width: int = 32, kind: str | None = None) -> Node:
        """A VALU source code: a VGPR (pair), or a scalar source."""
        if code >= 256:
            return self.vgpr64(code - 256) if width == 64 else self.vgpr(code - 256)
        return self.scalar(code, width, kind)

    def codes(self) -> list[int]:
        inst = self.inst
        f = inst.fields
        if inst.encoding in ("VOP2", "VOPC"):
            # SDWA's S1 bit: VSRC1 names a scalar register or constant, not a VGPR
            return [f["src0"], f["vsrc1"] if inst.sdwa is not None and inst.sdwa["s1"] else 256 + f["vsrc1"]]
        if inst.encoding == "VOP1":
            return [f["src0"]]
        return [f["src0"], f["src1"], f["src2"]]

    @property
    def vop3(self) -> bool:
        return self.inst.encoding in ("VOP3", "VOP3B")

    def raw(self, i: int, kind: str = "b32", is_float: bool = False) -> Node:
        """Source ``i``'s bits (U32, or U64 for 64-bit kinds) after the source modifiers, in the order the
        hardware applies them: OP_SEL high half, SDWA select/sign extension, SDWA abs/neg, VOP3 abs/neg, the
        DPP lane move (src0), DPP abs/neg."""
        inst, f = self.inst, self.inst.fields
        wdt = WIDTH[kind]
        code = self.codes()[i]
        v = self.vector(code, wdt, _constant_kind(kind))
        sbits = 64 if wdt == 64 else (16 if kind == "f16" else 32)
        if (self.vop3 or f.get("t16")) and kind in HALF and f.get("opsel", 0) >> i & 1:
            v = v >> 16
        if inst.sdwa is not None and i < 2:
            s = inst.sdwa
            v = _sdwa_src(v, s[f"src{i}_sel"], s[f"src{i}_sext"])
            if is_float:
                v = _float_mods(v, s[f"src{i}_abs"], s[f"src{i}_neg"], sbits)
        if is_float and self.vop3:
            absf = 0 if inst.name in VOP3B_NAMES else f.get("abs", 0)
            v = _float_mods(v, absf >> i & 1, f.get("neg", 0) >> i & 1, sbits)
        if i == 0 and inst.dpp is not None:
            v = self._dpp(v)
        if inst.dpp is not None and is_float:
            d = inst.dpp
            v = _float_mods(v, d.get(f"src{i}_abs", 0) if i < 2 else 0, d.get(f"src{i}_neg", 0) if i < 2 else 0, sbits)
        return v

    def src(self, i: int, kind: str, is_float: bool | None = None) -> Node:
        """Source ``i`` typed as ``kind`` (f32, u16, i64, ...) after the modifiers."""
        if is_float is None:
            is_float = kind in FLOAT
        return typed(self.raw(i, kind, is_float), kind)

    def srcs(self, kinds, is_float: bool | None = None) -> list[Node]:
        """The sources typed by ``kinds``; float modifiers apply to every source of an instruction with a float
        operand (as the hardware decodes them)."""
        if is_float is None:
            is_float = any(k in FLOAT for k in kinds)
        return [self.src(i, k, is_float) for i, k in enumerate(kinds)]

    # -- DPP ------------------------------------------------------------------------------------------------------------
    def _dpp(self, v: Node) -> Node:
        """The DPP lane permutation of src0.  A source lane that does not exist, or (without FI) is inactive,
        reads 0 with BOUND_CTRL (always for DPP8) and otherwise disables the write of its lane."""
        d = self.inst.dpp
        ctrl = tuple(d["sel"]) if "sel" in d else d["dpp_ctrl"]
        rdna = "fi" in d
        if not isinstance(ctrl, tuple) and (not rdna and 0x150 <= ctrl <= 0x16F
                                            or rdna and ctrl in (0x130, 0x134, 0x138, 0x13C, 0x142, 0x143)):
            raise NotImplementedError(f"DPP control 0x{ctrl:x} does not exist on this target")
        lane_map = dpp_lanes(ctrl, self.lanes)
        moved = lane_shuffle(v, lane_map)
        valid = lane_shuffle(self.exec, lane_map) if not d.get("fi", 0) else \
            word_lanes(const(sum(1 << i for i, s in enumerate(lane_map) if s >= 0), U64), self.lanes)
        if d.get("bound_ctrl", 0) or isinstance(ctrl, tuple):
            return select(valid, moved, const(0, v.ty))
        self._dpp_invalid = valid
        return moved

    def write_mask(self) -> Node:
        """The lanes a VALU result may be written to: EXEC, restricted by DPP row/bank masks and, without
        BOUND_CTRL, by the lanes whose DPP source was invalid."""
        m = self.exec
        d = self.inst.dpp
        if d is None:
            return m
        if "row_mask" in d:
            word = 0
            for lane in range(self.lanes):
                if (d["row_mask"] >> (lane // 16)) & 1 and (d["bank_mask"] >> ((lane % 16) // 4)) & 1:
                    word |= 1 << lane
            if word != (1 << self.lanes) - 1:
                m = m & word_lanes(const(word, U64), self.lanes)
        if self._dpp_invalid is not None:
            m = m & self._dpp_invalid
        return m

    # -- results ------------------------------------------------------------------------------------------------------
    def dst(self) -> int:
        return self.inst.fields.get("vdst", 0)

    def out_mods(self) -> tuple[int, int]:
        """(omod, clamp) of a float result."""
        inst = self.inst
        if inst.encoding == "VOP3":
            f = inst.fields
        elif inst.sdwa is not None and inst.encoding != "VOPC":
            f = inst.sdwa
        else:
            return 0, 0
        return f.get("omod", 0), f.get("clamp", 0)

    def finish_float(self, r: Node) -> Node:
        """Output modifiers, then output denormal flushing."""
        omod, clamp = self.out_mods()
        if omod or clamp:
            r = fpops.output_modifiers(r, omod, clamp, self.mode)
        return fpops.flush(r, self.mode, True)

    def write_d(self, value: Node, kind: str) -> None:
        """The destination VGPR(s) from a typed result: 16-bit halves, SDWA destination select, DPP/EXEC mask."""
        bits = value.bits() if value.ty.is_float or value.ty.kind == "i" else value
        if WIDTH[kind] == 64:
            bits = bitcast(bits, U64) if bits.ty is not U64 else bits
            m = self.write_mask()
            d = self.dst()
            self.writes.append(Write(("v", d), bits.trunc(U32), m))
            self.writes.append(Write(("v", d + 1), (bits >> 32).trunc(U32), m))
            return
        if kind in HALF:
            bits = self._half(bits.zext(U32) if bits.ty.bits < 32 else bits)
        else:
            bits = bitcast(bits, U32) if bits.ty is not U32 else bits
        self.write_vgpr32(self.dst(), bits)

    def write_vgpr32(self, d: int, bits: Node) -> None:
        inst = self.inst
        if inst.sdwa is not None:
            if inst.sdwa["dst_sel"] not in SDWA_SEL:
                raise Fault(f"reserved SDWA destination select {inst.sdwa['dst_sel']}")
            bits = self._sdwa_dst(d, bits)
        self.writes.append(Write(("v", d), bits, self.write_mask()))

    def _half(self, bits: Node) -> Node:
        inst = self.inst
        rdna = self.family >= 10 and inst.sdwa is None
        keep = inst.encoding == "VOP3" and inst.name in OPSEL_DEST or rdna
        if not keep:
            return bits & 0xFFFF
        old = self.vgpr(self.dst())
        if inst.fields.get("opsel", 0) >> 3 & 1:
            return (old & 0xFFFF) | (bits << 16)
        return (old & 0xFFFF0000) | (bits & 0xFFFF)

    def _sdwa_dst(self, d: int, v: Node) -> Node:
        s = self.inst.sdwa
        sel = s["dst_sel"]
        if sel == 6:
            return v
        sh, wd = SDWA_SEL[sel]
        mask = (1 << wd) - 1
        v = v & mask
        if s["dst_unused"] == 2:                              # UNUSED_PRESERVE
            return (self.vgpr(d) & (~(mask << sh) & 0xFFFFFFFF)) | (v << sh)
        if s["dst_unused"] == 1:                              # UNUSED_SEXT
            v = ((v.view(I32) << (32 - wd)) >> (32 - wd)).view(U32)
        return v << sh

    def write_lanes(self, r: int, lanes: Node, active_only: bool = True) -> None:
        """A per-lane B1 into the lane-mask register ``r`` (SGPR pair in wave64; NULL and what is not an SGPR
        discarded): machine state ("mask", r); inactive lanes write 0 when ``active_only``."""
        if active_only:
            lanes = lanes & self.exec
        if r == 125 or r >= 128:
            return
        self.writes.append(Write(("mask", int(r)), lanes))

    def write_sreg(self, r: int, value: Node, width: int = 32, null_check: str = "sgpr") -> None:
        """An SGPR (pair) write; the NULL register and what is not an SGPR are discarded."""
        if null_check == "mask":
            if r == 125 or r >= 128:
                return
        if width == 64:
            v = value.bits() if value.ty is not U64 else value
            self._ws(r, v.trunc(U32))
            self._ws(r + 1, (v >> 32).trunc(U32))
        else:
            v = value.bits() if value.ty is not U32 else value
            self._ws(r, v if v.ty is U32 else v.zext(U32))

    def _ws(self, r, v):
        if r == 125 or r >= 128:
            return
        self.writes.append(Write(("s", r), v))

    def write_scc(self, c: Node) -> None:
        self.writes.append(Write(("scc",), c if c.ty is B1 else c.ne(0)))

    def write_vgpr(self, r: int, value: Node, mask: Node | None = None) -> None:
        self.writes.append(Write(("v", r), value, self.exec if mask is None else mask))


def typed(bits: Node, kind: str) -> Node:
    ty = KIND_TY[kind]
    if ty.bits == 16:
        return bitcast(bits.trunc(U16), ty)
    return bitcast(bits, ty) if bits.ty is not ty else bits


def _constant_kind(k: str) -> str:
    return {"f16": "f16", "f32": "f32", "f64": "f64", "u64": "b64", "i64": "b64", "b64": "b64"}.get(k, "b32")


def _sdwa_src(v: Node, sel: int, sext: int) -> Node:
    if sel == 6:
        return v
    if sel not in SDWA_SEL:
        raise NotImplementedError(f"reserved SDWA select {sel}")
    sh, wd = SDWA_SEL[sel]
    v = (v >> sh) & ((1 << wd) - 1)
    if sext:
        v = ((v.view(I32) << (32 - wd)) >> (32 - wd)).view(U32)
    return v


def _float_mods(v: Node, a: int, n: int, width: int) -> Node:
    if not a and not n:
        return v
    sign = 1 << (width - 1)
    if a:
        v = v & (v.ty.mask ^ sign)
    if n:
        v = v ^ sign
    return v


@functools.lru_cache(maxsize=None)
def dpp_lanes(ctrl, lanes: int) -> tuple:
    """Source lane of every lane (-1: none) for a DPP16 control (GFX9 and GFX10+ row_share/row_xmask) or, for
    a tuple, the DPP8 lane selects."""
    lane = np.arange(lanes)
    row, inrow = lane // 16, lane % 16
    if isinstance(ctrl, tuple):                         # DPP8: within groups of 8 lanes
        out = (lane & ~7) + np.array(ctrl)[lane & 7]
    elif ctrl <= 0xFF:                                  # quad_perm
        sel = np.array([(ctrl >> (2 * (i % 4))) & 3 for i in range(lanes)])
        out = (lane & ~3) + sel
    elif 0x101 <= ctrl <= 0x10F:                        # row_shl
        n = ctrl & 0xF
        out = np.where(inrow + n < 16, lane + n, -1)
    elif 0x111 <= ctrl <= 0x11F:                        # row_shr
        n = ctrl & 0xF
        out = np.where(inrow - n >= 0, lane - n, -1)
    elif 0x121 <= ctrl <= 0x12F:                        # row_ror
        out = row * 16 + (inrow - (ctrl & 0xF)) % 16
    elif ctrl == 0x130:                                 # wave_shl1
        out = np.where(lane + 1 < lanes, lane + 1, -1)
    elif ctrl == 0x134:                                 # wave_rol1
        out = (lane + 1) % lanes
    elif ctrl == 0x138:                                 # wave_shr1
        out = lane - 1
    elif ctrl == 0x13C:                                 # wave_ror1
        out = (lane - 1) % lanes
    elif ctrl == 0x140:                                 # row_mirror
        out = row * 16 + 15 - inrow
    elif ctrl == 0x141:                                 # row_half_mirror
        out = (lane & ~7) + 7 - (lane & 7)
    elif ctrl == 0x142:                                 # row_bcast15
        out = np.where(row > 0, row * 16 - 1, -1)
    elif ctrl == 0x143:                                 # row_bcast31
        out = np.where(row > 1, 31, -1)
    elif 0x150 <= ctrl <= 0x15F:                        # row_share (GFX10+): lane n of the row
        out = row * 16 + (ctrl & 0xF)
    elif 0x160 <= ctrl <= 0x16F:                        # row_xmask (GFX10+): lane ^ n within the row
        out = row * 16 + (inrow ^ (ctrl & 0xF))
    else:
        raise NotImplementedError(f"DPP control 0x{ctrl:x}")
    return tuple(int(x) for x in out)


# ---- registration -----------------------------------------------------------------------------------------------------
DESCRIPTIONS: dict[str, object] = {}          # mnemonic -> builder(b: Build) (fills b.writes)


def describe(*names):
    """Register ``fn(b)`` as the description of the mnemonics ``names``."""
    def deco(fn):
        for n in names:
            for m in n.split():
                DESCRIPTIONS[m] = fn
        return fn
    return deco


INT_CLAMP = frozenset("v_add_u32 v_sub_u32 v_subrev_u32 v_add_i32 v_sub_i32 v_add_u16 v_sub_u16 v_subrev_u16 "
                      "v_add_i16 v_sub_i16 v_add3_u32 v_add_lshl_u32 v_mad_u32_u24 v_mad_i32_i24 v_mad_u32_u16 "
                      "v_mad_i32_i16 v_mad_u16 v_mad_i16 "
                      "v_add_nc_u32 v_sub_nc_u32 v_subrev_nc_u32 v_add_nc_i32 v_sub_nc_i32 v_add_nc_u16 v_sub_nc_u16 "
                      "v_add_nc_i16 v_sub_nc_i16".split())
_INT_RANGE = {"u32": (0, 2 ** 32 - 1), "i32": (-2 ** 31, 2 ** 31 - 1), "u16": (0, 65535), "i16": (-32768, 32767)}


def valu(names: str, kinds_in, kind_out: str, fn, *, mode_aware: bool = False):
    """A plain VALU operation: typed sources (modifiers applied, input denormals flushed by MODE) →
    ``fn(*sources)`` (``fn(*sources, mode=...)`` when ``mode_aware``) → output modifiers and flushing →
    the destination under EXEC.  Integer ops named in INT_CLAMP saturate under the VOP3 CLAMP bit."""
    kinds_in = tuple(kinds_in)

    def build(b: Build) -> None:
        inst = b.inst
        is_float = any(k in FLOAT for k in kinds_in)
        args = b.srcs(kinds_in, is_float)
        args = [fpops.flush(a, b.mode, False) if k in FLOAT else a for a, k in zip(args, kinds_in)]
        clamp_sat = b.vop3 and inst.fields.get("clamp") and inst.name in INT_CLAMP
        if clamp_sat:
            r = _saturating(fn, args, kind_out)
        else:
            r = fn(*args, mode=b.mode) if mode_aware else fn(*args)
        if kind_out in FLOAT:
            r = b.finish_float(r)
        b.write_d(r, kind_out)
    build.spec = (kinds_in, kind_out)
    return describe(names)(build)


def _saturating(fn, args, kind_out):
    """The op evaluated on exact 64-bit operands, clamped to the destination type's range."""
    lo, hi = _INT_RANGE[kind_out]
    wide = [a.to(I64) for a in args]
    r = fn(*wide)
    r = select(r < lo, const(lo, I64), select(r > hi, const(hi, I64), r))
    return r.trunc(KIND_TY[kind_out])


__all__ = ["Build", "Fault", "describe", "valu", "DESCRIPTIONS", "typed", "dpp_lanes", "KIND_TY", "as_ty", "TYPES",
           "SpecError"]
