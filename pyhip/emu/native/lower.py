"""Lowering a loaded program to the native instruction array, once per (program, accum_offset): every decoded
instruction becomes one NInst (native/engine/engine.h).  An instruction with a semantics description
(pyhip/emu/spec: every ALU instruction) gets a "described" record: the compiled engine generates its code from
the description, no C handler exists for it.  The others (memory, LDS, matrix, control and system
instructions) are lowered to their C handler, or get a reason when no handler takes them; a kernel whose
reachable code lowers completely runs natively, any other runs whole on the numpy engine (see
:meth:`NativeProgram.kernel_support`)."""
from __future__ import annotations

import dataclasses

import numpy as np

from ..clocks import counter_khz
from ..engine import BLOCK_ENDS
from ..memory import PRIVATE_APERTURE, SHARED_APERTURE
from ..semantics.gpr_indexing import GPR_IDX_DST, GPR_IDX_SRC0, gpr_index_modes
from . import cache
from .layout import F_BLOCK_END, dtype, op_ids
from .lower_image import lower_image
from .lower_mem import AT, _shared_table, lower_ds, lower_smem, lower_typed_buffer, lower_vmem
from .lower_mfma import lower_mfma
from .lowerbase import Rec, Unsupported, sdesc
from ..semantics.rdna import ALIASES as RDNA_NAMES
from ..spec import load_all as _load_descriptions

DESCRIPTIONS = _load_descriptions()


def _simm(inst, signed=True):
    v = inst.fields["simm16"]
    return v - 0x10000 if signed and v & 0x8000 else v


# ---- scalar control and system instructions (the scalar ALU is described: pyhip/emu/spec/salu.py) ----------
CBRANCH = {"s_cbranch_scc0": 0, "s_cbranch_scc1": 1, "s_cbranch_vccz": 2, "s_cbranch_vccnz": 3,
           "s_cbranch_execz": 4, "s_cbranch_execnz": 5}
NOPS = set("""s_waitcnt s_sleep s_setprio s_sethalt s_icache_inv s_dcache_wb s_dcache_inv s_dcache_inv_vol
s_dcache_wb_vol s_waitcnt_vscnt s_ttracedata s_set_gpr_idx_off buffer_wbinvl1 buffer_wbinvl1_vol buffer_wbl2
buffer_inv buffer_invl2 s_waitcnt_depctr s_code_end s_sendmsg s_sendmsghalt s_incperflevel s_decperflevel
s_wakeup s_setkill s_cbranch_cdbgsys s_cbranch_cdbguser s_cbranch_cdbgsys_or_user s_cbranch_cdbgsys_and_user
s_dcache_discard s_dcache_discard_x2 s_atc_probe s_atc_probe_buffer s_clause s_delay_alu s_inst_prefetch
s_set_inst_prefetch_distance s_waitcnt_vmcnt s_waitcnt_expcnt s_waitcnt_lgkmcnt s_wait_idle s_wait_event
s_ttracedata_imm s_version buffer_gl0_inv buffer_gl1_inv s_gl1_inv v_pipeflush v_clrexcp""".split())
SH_MEM_BASES = ((SHARED_APERTURE >> 48) << 16) | (PRIVATE_APERTURE >> 48)


MOVREL = {"v_movrels_b32": 0, "v_movreld_b32": 1, "v_movrelsd_b32": 2, "v_movrelsd_2_b32": 3, "v_swaprel_b32": 4}


def lower_indexed(inst, mode: int) -> Rec:
    """A VALU instruction inside an s_set_gpr_idx_on region (gpr_indexing.indexed): a plain v_mov_b32 is the
    v_movrel handler's index-mode move; anything else has no native form."""
    f = inst.fields
    if inst.name != "v_mov_b32" or inst.encoding != "VOP1" or mode & ~(GPR_IDX_SRC0 | GPR_IDX_DST):
        raise Unsupported("VGPR index mode")
    rec = Rec()
    rec.op, rec.x, rec.d, rec.imm = "v_movrel", 5, f["vdst"], mode
    rec.src(0, *sdesc(f["src0"], inst.literal))
    rec.touch(f["vdst"] + 1)
    if f["src0"] >= 256:
        rec.touch(f["src0"] - 256 + 1)
    return rec


def lower_scalar(rec: Rec, inst, K) -> bool:
    name, f, lit = inst.name, inst.fields, inst.literal
    if name in NOPS:
        rec.op = "s_nop"
        return True
    if name.startswith(("s_movrels_", "s_movreld_")):
        wide = name.endswith("64")
        if name.startswith("s_movrels"):
            if f["ssrc0"] >= 128 or f["sdst"] + (2 if wide else 1) > 128:
                raise Unsupported("s_movrels operands")
            rec.op, rec.s[0] = "s_movrels", 0x4000 | f["ssrc0"]
        else:
            rec.op = "s_movreld"
            rec.src(0, *sdesc(f["ssrc0"], lit, "b64" if wide else "b32", wide))
        rec.x = int(wide)
        rec.d = f["sdst"]
        return True
    if name in ("s_sendmsg_rtn_b32", "s_sendmsg_rtn_b64"):
        rec.op, rec.imm, rec.d, rec.x = "s_sendmsg_rtn", f["ssrc0"], f["sdst"], int(name.endswith("64"))
        return True
    if name == "s_movrelsd_2_b32":
        if f["ssrc0"] >= 128 or f["sdst"] >= 128:
            raise Unsupported("s_movrelsd_2 operands")
        rec.op, rec.s[0], rec.d = "s_movrelsd_2", 0x4000 | f["ssrc0"], f["sdst"]
        return True
    if name in MOVREL:                      # RDNA's M0-relative VGPR moves (native/engine/ops_scalar.h v_movrel)
        src = f["src0"]
        rec.op, rec.x, rec.d = "v_movrel", MOVREL[name], f["vdst"]
        if name == "v_movreld_b32":
            rec.src(0, *sdesc(src, lit))
        elif src < 256:
            raise Unsupported(f"{name} needs a VGPR source")
        else:
            rec.s[0] = src - 256
            rec.touch(src - 256 + 1)
        rec.touch(rec.d + 1)
        return True
    if name in ("s_getpc_b64", "s_setpc_b64", "s_swappc_b64"):
        rec.op = name
        if name != "s_getpc_b64":
            rec.src(0, *sdesc(f["ssrc0"], None, "b64", True))
            rec.indirect = rec.ends = True
        rec.d = f["sdst"]
        return True
    if name == "s_call_b64":
        rec.op, rec.d, rec.imm = name, f["sdst"], f["simm16"]
        rec.target = inst.pc + 4 + 4 * _simm(inst)
        return True
    if name == "s_getreg_b32":
        rec.op, rec.d, rec.imm, rec.a0 = name, f["sdst"], f["simm16"], SH_MEM_BASES
        return True
    if name in ("s_setreg_b32", "s_setreg_imm32_b32"):
        rec.op, rec.d, rec.imm = "s_setreg_b32", f["sdst"], f["simm16"]
        if name == "s_setreg_imm32_b32":
            rec.x, rec.a0 = 1, lit
        return True
    if name == "s_branch":
        rec.op, rec.imm = name, f["simm16"]
        rec.target = inst.pc + 4 + 4 * _simm(inst)
        rec.ends = True
        return True
    if name in CBRANCH:
        rec.op, rec.x, rec.imm = "s_cbranch", CBRANCH[name], f["simm16"]
        rec.target = inst.pc + 4 + 4 * _simm(inst)
        return True
    if name in ("s_endpgm", "s_endpgm_saved", "s_endpgm_ordered_ps_done"):
        rec.op, rec.ends = "s_endpgm", True
        return True
    if name in ("s_barrier", "s_trap"):
        rec.op = name
        return True
    if name in ("s_memtime", "s_memrealtime"):
        rec.op, rec.d = "s_memtime", f["sdata"]
        rec.imm = counter_khz(name, getattr(K.gpu, "processor", K.processor))      # the counter's rate in kHz (emu/clocks.py)
        return True
    if name == "s_set_gpr_idx_on":
        rec.op, rec.x = name, f["ssrc1"] & 0xF
        rec.src(0, *sdesc(f["ssrc0"], lit))
        return True
    if name == "s_set_gpr_idx_idx":
        rec.op = name
        rec.src(0, *sdesc(f["ssrc0"], lit))
        return True
    if name == "s_set_gpr_idx_mode":
        rec.op, rec.x = name, _simm(inst, signed=False) & 0xF
        return True
    return False


LOWERERS = (lower_scalar, lower_smem, lower_vmem, lower_ds)


def lower_instruction(inst, K, aux: list) -> Rec:
    """The record of one instruction: "described" when it has a description (by its own name, as the
    compiled engine looks it up), else its C handler's; raises Unsupported when no handler takes it."""
    rec = Rec()
    if inst.name in DESCRIPTIONS:
        rec.op = "described"
        if inst.name.startswith(BLOCK_ENDS):
            rec.flags |= F_BLOCK_END
        return rec
    old = RDNA_NAMES.get(inst.name)
    if old is not None:                   # a GFX10/GFX11 name of a GFX9 operation: lowered as that one
        inst = dataclasses.replace(inst, name=old)
    try:
        if not lower_mfma(rec, inst, K, aux) and not lower_typed_buffer(rec, inst, K, aux) \
                and not lower_image(rec, inst, K, aux, _shared_table, AT):
            for fn in LOWERERS:
                if fn(rec, inst, K):
                    break
            else:
                raise Unsupported(f"{inst.name} has no native handler")
    except (KeyError, ValueError, IndexError, TypeError) as exc:     # a form the lowering does not know
        raise Unsupported(f"{inst.name}: no native handler for this form ({type(exc).__name__}: {exc})") from None
    if inst.name.startswith(BLOCK_ENDS):
        rec.flags |= F_BLOCK_END
    return rec


class NativeProgram:
    """The native code of one loaded program (for one accum_offset): the NInst array in address order plus
    one 'bad address' entry per branch target / fall-through that is not an instruction.  Lowered once per
    process, or restored from the cross-process cache (cache.py) without decoding the program."""

    def __init__(self, program, K):
        self.program = program
        self._support: dict[int, tuple] = {}
        self.pointers = None            # the arrays as C pointers (run.py)
        ck = cache.key(program, K)
        hit = cache.load(ck) if ck is not None else None
        if hit is None or not self._restore(hit, program.base):
            self._lower(program, K)
            if ck is not None:
                cache.store(ck, *self._saved(program.base))
        n = self.n
        self.index = {self.base + int(pc): i for i, pc in enumerate(self.code["pc"][:n].tolist())}

    def _lower(self, program, K) -> None:
        insts = program.instructions
        pcs = sorted(insts)
        self.base = pcs[0] if pcs else program.base
        end = pcs[-1] + insts[pcs[-1]].size if pcs else self.base
        self.size = end - self.base
        ops = op_ids()
        index = {pc: i for i, pc in enumerate(pcs)}
        indexed = gpr_index_modes(insts)
        recs, self.reasons, aux = [], {}, []
        self.described: set[int] = set()
        for i, pc in enumerate(pcs):
            inst = insts[pc]
            try:
                rec = lower_indexed(inst, indexed[pc]) if pc in indexed else lower_instruction(inst, K, aux)
                if rec.op not in ops:
                    raise Unsupported(f"{inst.name}: no native handler {rec.op}")
            except Unsupported as exc:
                rec = Rec()
                rec.op = "badpc"
                self.reasons[i] = f"{inst.name}: {exc}" if not str(exc).startswith(inst.name) else str(exc)
                rec.ends = True
                rec.k = [pc & 0xFFFFFFFF, 0, 0]
                rec.khi = [pc >> 32, 0, 0]
            if rec.op == "described":        # generated by the compiled engine from its description only
                self.described.add(i)
            recs.append(rec)
        n = len(recs)
        sentinels: dict[int, int] = {}

        def resolve(addr):
            i = index.get(addr)
            if i is not None:
                return i
            if addr not in sentinels:
                sentinels[addr] = n + len(sentinels)
            return sentinels[addr]

        nxt = [resolve(pc + insts[pc].size) for pc in pcs]
        tgt = [resolve(r.target) if r.target is not None else -1 for r in recs]
        code = np.zeros(n + len(sentinels), dtype=dtype("NInst"))
        if n:                        # column by column (a field per element cost ~10 us per instruction)
            head = code[:n]
            head["op"] = [ops[r.op] for r in recs]
            head["pc"] = [(pc - self.base) & 0xFFFFFFFF for pc in pcs]
            head["next"], head["target"] = nxt, tgt
            head["d"] = [r.d for r in recs]
            head["sd"] = [r.sd for r in recs]
            head["s"] = [r.s for r in recs]
            head["size"] = [insts[pc].size for pc in pcs]
            head["x"] = [r.x for r in recs]
            head["k"] = [r.k for r in recs]
            head["khi"] = [r.khi for r in recs]
            head["imm"] = [((int(r.imm) + 2 ** 31) % 2 ** 32) - 2 ** 31 for r in recs]
            head["a0"] = [r.a0 & 0xFFFFFFFF for r in recs]
            head["flags"] = [r.flags for r in recs]
        for addr, i in sentinels.items():
            e = code[i]
            e["op"] = ops["badpc"]
            e["pc"] = (addr - self.base) & 0xFFFFFFFF
            e["next"] = e["target"] = i
            e["k"] = [addr & 0xFFFFFFFF, 0, 0]
            e["khi"] = [(addr >> 32) & 0xFFFFFFFF, 0, 0]
            e["flags"] = F_BLOCK_END
        self.code = code
        self.aux = np.concatenate(aux).astype(np.int32) if aux else np.zeros(1, np.int32)
        self.addr_index = np.full(max(1, (self.size + 3) // 4), -1, dtype=np.int32)
        for pc, i in index.items():
            self.addr_index[(pc - self.base) >> 2] = i
        self.n = n
        self.nxt, self.tgt = nxt, tgt
        self.ends = [r.ends for r in recs]
        self.indirect = [r.indirect for r in recs]
        self.vmax = [r.vmax for r in recs]

    # -- the cross-process cache (cache.py) ---------------------------------------------------------------
    def _saved(self, base: int) -> tuple[dict, dict]:
        """Arrays and metadata of an entry: a badpc record's address (k/khi) as an offset from ``base``."""
        code = _badpc_moved(self.code.view(np.uint8).copy().view(self.code.dtype), -base)
        arrays = {"code": code.view(np.uint8), "aux": self.aux,
                  "addr_index": self.addr_index, "nxt": np.asarray(self.nxt, np.int64),
                  "tgt": np.asarray(self.tgt, np.int64), "ends": np.asarray(self.ends, np.uint8),
                  "indirect": np.asarray(self.indirect, np.uint8), "vmax": np.asarray(self.vmax, np.int64)}
        meta = {"base": self.base - base, "size": self.size, "n": self.n,
                "reasons": {str(i): r for i, r in self.reasons.items()}, "described": sorted(self.described)}
        return arrays, meta

    def _restore(self, e: dict, base: int) -> bool:
        try:
            meta = e["meta"]
            code = _badpc_moved(e["code"].copy().view(dtype("NInst")), base)   # bytes copied, padding included
            n = int(meta["n"])
            lists = {name: e[name].tolist() for name in ("nxt", "tgt", "ends", "indirect", "vmax")}
            if len(code) < n or any(len(v) != n for v in lists.values()):
                return False
            self.code, self.n = code, n
            self.aux = e["aux"].astype(np.int32)
            self.addr_index = e["addr_index"].astype(np.int32)
        except (KeyError, ValueError, TypeError):
            cache.stats["bad"] += 1
            return False
        self.base, self.size = base + int(meta["base"]), int(meta["size"])
        self.nxt, self.tgt = lists["nxt"], lists["tgt"]
        self.ends = [bool(x) for x in lists["ends"]]
        self.indirect = [bool(x) for x in lists["indirect"]]
        self.vmax = lists["vmax"]
        self.reasons = {int(i): r for i, r in meta["reasons"].items()}
        self.described = set(meta.get("described", ()))
        return True

    def reachable(self, entry_ip: int) -> set:
        """Instruction indices reachable from ``entry_ip`` (all of them when an indirect jump is)."""
        seen, todo, indirect = set(), [entry_ip], False
        n = self.n
        while todo:
            i = todo.pop()
            if i in seen or i >= n or i < 0:
                continue
            seen.add(i)
            indirect |= self.indirect[i]
            if not self.ends[i]:
                todo.append(self.nxt[i])
            if self.tgt[i] >= 0:
                todo.append(self.tgt[i])
        return set(range(n)) if indirect else seen

    def kernel_support(self, entry: int, compiled: bool = False):
        """(None, rows) when every instruction reachable from ``entry`` runs natively (``rows``: VGPR rows
        the lowered records touch), else (reason, 0).  An indirect jump makes the whole program reachable.
        Instructions only the compiled engine generates (from their descriptions) count as native when
        ``compiled``, else as unsupported."""
        hit = self._support.get((entry, compiled))
        if hit is not None:
            return hit
        i0 = self.index.get(entry)
        if i0 is None:
            res = ("entry is not an instruction", 0)
        else:
            seen = self.reachable(i0)
            bad = sorted(i for i in seen if i in self.reasons or not compiled and i in self.described)
            if bad:
                i = bad[0]
                res = (self.reasons.get(i) or f"{self.program.instructions[self.base + int(self.code[i]['pc'])].name}"
                       f" runs only on the compiled engine", 0)
            else:
                res = (None, max((self.vmax[i] for i in seen), default=0))
        self._support[(entry, compiled)] = res
        return res


def _badpc_moved(code: np.ndarray, delta: int) -> np.ndarray:
    """``code`` (in place) with every badpc record's 64-bit address (k[0] | khi[0] << 32) moved by ``delta``
    (device addresses and their offsets from a program base fit int64)."""
    bad = code["op"] == op_ids()["badpc"]
    addr = (code["k"][:, 0].astype(np.int64) | (code["khi"][:, 0].astype(np.int64) << 32)) + delta
    code["k"][:, 0] = np.where(bad, addr & 0xFFFFFFFF, code["k"][:, 0])
    code["khi"][:, 0] = np.where(bad, (addr >> 32) & 0xFFFFFFFF, code["khi"][:, 0])
    return code
