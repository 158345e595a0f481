"""The execution engine: initial wave state exactly as the descriptor enables it, workgroups run in
batches whose waves step together, grouped by PC; barriers per workgroup; a watchdog for hangs."""
from __future__ import annotations

import time

import numpy as np

from ..errors import hipError_t
from ..loader.descriptor import KernelDescriptor
from .memory import GPUFault
from .program import uses_gws
from .semantics import SEMANTICS, gws, load_all
from .state import EXEC, FLAT_SCRATCH, LANES, WaveState, count, indices

load_all()
U32, U64 = np.uint32, np.uint64
PRIVATE_VSHARP_BASE = 0
ADD_TID_ENABLE = 1 << 23
MAX_WAVES_PER_BATCH = 1024
MAX_RESIDENT_WAVES = 32768        # one batch of a dispatch that uses global wave sync (ds_gws_*)
MAX_PRIVATE_PER_BATCH = 256 << 20
ALL = slice(None)
MAX_BLOCK = 256
YIELD_STEPS = 64          # instruction steps between voluntary GIL releases
# Fair turns (a wave spinning on a flag another wave of the batch will set, e.g. a decoupled look-back): after
# SPIN_TURNS blocks in a row that ran only some live waves and jumped back, workgroups whose waves all wait at
# a barrier are released and the next FAIR_TURNS picks go round the waves' PCs upwards instead of lowest first.
SPIN_TURNS = 32
FAIR_TURNS = 64
BARRIER_CHECKS: list = []  # fn(dispatch, state, ready groups): told before barriers release (pyhip/sanitizer)
GWS_CHECKS: list = []      # fn(dispatch, state, waves): told when a GWS barrier releases its waves (pyhip/sanitizer)
# instructions after which the engine re-examines the waves' PCs (control flow, waits, traps)
BLOCK_ENDS = ("s_branch", "s_cbranch", "s_endpgm", "s_barrier", "s_setpc", "s_swappc", "s_getpc", "s_call",
              "s_trap", "s_sethalt", "s_rfe", "s_subvector", "s_set_gpr_idx", "s_sleep", "ds_gws_barrier",
              "ds_gws_sema_p")


class KernelContext:
    """What semantics need at compile time (shared by all instructions of one program on one device, per
    wave size): ``family`` 9 (GFX9), 10 (RDNA2) or 11 (RDNA3); ``lanes`` 64 or 32."""

    def __init__(self, gpu, processor: str, accum_offset: int, lanes: int = LANES):
        self.memory = gpu.memory
        self.gpu = gpu
        self.processor = processor
        self.is_gfx94x = processor.startswith("gfx94")
        self.family = isa_family(processor)
        self.lanes = lanes
        self.accum_offset = accum_offset
        self.private_vsharp_base = PRIVATE_VSHARP_BASE


def isa_family(processor: str) -> int:
    """9 for GFX9 (CDNA), 10 for GFX10.x, 11 for GFX11 (generic targets included)."""
    if processor.startswith("gfx11"):
        return 11
    if processor.startswith("gfx10"):
        return 10
    return 9


def lds_granule(processor: str) -> int:
    """The bytes in which the hardware allocates a workgroup's LDS (COMPUTE_PGM_RSRC2.LDS_SIZE's unit, LLVM's
    AMDGPUUsage): 128 dwords from GFX7 to GFX12.0 (CDNA and RDNA alike), 320 dwords on gfx950."""
    return 1280 if processor.startswith("gfx950") else 512


def lds_allocation(processor: str, group_segment_size: int) -> int:
    """The LDS a workgroup gets on the hardware: its group segment rounded up to the granule.  An access
    inside it is performed; beyond it a read returns 0 and a write is dropped (no fault): ISA."""
    g = lds_granule(processor)
    return -(-int(group_segment_size) // g) * g


def wave_lanes(processor: str, kd: KernelDescriptor) -> int:
    """The wave size of a dispatch: 64 on GFX9; RDNA runs wave32 unless the descriptor asks for wave64."""
    return kd.wavefront_size if isa_family(processor) >= 10 else LANES


def compile_instruction(inst, K):
    factory = SEMANTICS.get(inst.name)
    if factory is None and inst.encoding == "INVALID":
        def invalid(st, w, inst=inst):
            raise GPUFault(f"not a valid instruction: {inst.fields.get('error')}",
                           code=hipError_t.hipErrorLaunchFailure)
        return invalid
    if factory is None:
        def unsupported(st, w, inst=inst):
            raise GPUFault(f"instruction {inst.name} is not implemented by the emulator",
                           code=hipError_t.hipErrorLaunchFailure)
        return unsupported
    try:
        return factory(inst, K)
    except NotImplementedError as exc:
        msg = str(exc)

        def unsupported(st, w, msg=msg):
            raise GPUFault(f"{inst.name}: {msg}", code=hipError_t.hipErrorLaunchFailure)
        return unsupported


def describe(inst, processor: str = "gfx90a") -> str:
    """The instruction as llvm-objdump prints it, with its encoding words."""
    from .isa.disasm import format_instruction

    try:
        text = format_instruction(inst, processor)
    except Exception:  # a report must never fail because of formatting
        text = inst.name
    return f"{text} [{' '.join(f'{w:08x}' for w in inst.words)}]"


class Dispatch:
    """One kernel dispatch: geometry, descriptor, and the per-batch run loop."""

    # fair turns (above) on; the differential test's lockstep replays the lowest-PC-first order, so it
    # turns them off for the numpy engine's run (pyhip/emu/native/diff.py)
    fair_turns = True
    engine = "numpy"            # which engine ran it (a native run returns pyhip/emu/native/run.Result)

    def __init__(self, gpu, program, kernel, kd: KernelDescriptor, *, kernel_object, kernarg_address, grid_size,
                 workgroup_size, group_segment_size, private_segment_size, dispatch_ptr=0, queue_ptr=0,
                 dispatch_id=0, max_steps=None):
        self.gpu, self.program, self.kernel, self.kd = gpu, program, kernel, kd
        self.processor = program.code_object.processor
        self.kernel_object = kernel_object
        self.kernarg = kernarg_address
        self.grid = tuple(int(g) for g in grid_size)
        self.wg = tuple(max(1, int(x)) for x in workgroup_size)
        self.lds_size = int(group_segment_size)          # the exact group segment (memcheck's bound)
        self.lds_alloc = lds_allocation(self.processor, self.lds_size)    # what the hardware gives it
        priv = max(int(private_segment_size), kd.private_segment_fixed_size)   # the runtime sized a dynamic stack
        self.private = (priv + 15) // 16 * 16
        self.dispatch_ptr, self.queue_ptr, self.dispatch_id = dispatch_ptr, queue_ptr, dispatch_id
        self.max_steps = max_steps or gpu.watchdog_steps
        self.entry = kernel_object + kd.kernel_code_entry_byte_offset
        if kd.preload["kernarg_preload_spec_length"]:
            self.entry += 256
        acc = kd.accum_offset()
        self.nvgpr = kd.vgpr_count(self.processor)
        self.lanes = wave_lanes(self.processor, kd)
        if self.lanes == 64 and isa_family(self.processor) == 10:      # GFX10 wave64: shared VGPRs follow
            self.nvgpr += 8 * kd.rsrc3.get("shared_vgpr_count", 0)
        self.K = gpu.context_for(program, acc or 0, self.lanes)
        self.counts = tuple(-(-g // w) for g, w in zip(self.grid, self.wg))
        self.waves_per_group = -(-(self.wg[0] * self.wg[1] * self.wg[2]) // self.lanes)
        self.steps = 0
        self.wave_instructions = 0
        self._state = None                # reused by the next batch of the same size
        self._template = None             # initial registers of a batch of whole workgroups
        self.capture = None               # tests: (waves, stride) uint8 array receiving every wave's final state

    # -- geometry ---------------------------------------------------------------------------------------
    def run(self) -> None:
        total = self.counts[0] * self.counts[1] * self.counts[2]
        if total == 0:
            return
        # as many lanes per batch in wave32 as in wave64
        per_batch = max(1, MAX_WAVES_PER_BATCH * LANES // self.lanes // self.waves_per_group)
        if uses_gws(self.program):
            # global wave sync: every workgroup must be resident at once, as a cooperative launch guarantees
            if total * self.waves_per_group > MAX_RESIDENT_WAVES:
                raise GPUFault(f"global wave sync needs all {total} workgroups resident; at most "
                               f"{MAX_RESIDENT_WAVES} waves fit", code=hipError_t.hipErrorCooperativeLaunchTooLarge)
            per_batch = total
        elif self.private:
            per_batch = max(1, min(per_batch, MAX_PRIVATE_PER_BATCH // (self.private * self.lanes * self.waves_per_group)))
        try:
            for start in range(0, total, per_batch):
                self._run_batch(np.arange(start, min(total, start + per_batch)))
        finally:
            self._state = self._template = None

    def _group_ids(self, flat):
        cx, cy, _ = self.counts
        return np.stack([flat % cx, (flat // cx) % cy, flat // (cx * cy)], axis=1)

    def _setup(self, flat_groups) -> WaveState:
        ng, wpg = len(flat_groups), self.waves_per_group
        nw = ng * wpg
        if self.capture is not None:
            self._state = self._template = None       # fresh (zeroed) registers: comparable final states
        st = self._state
        tmpl = self._template
        if tmpl is not None and tmpl[0] != ng:
            tmpl = None
        if st is not None and st.n == nw and st.lds.shape[0] == ng:
            st.reset(sgpr=tmpl is None)
        else:
            st = self._state = WaveState(nw, self.nvgpr + 8, ng, self.lds_size, self.private, self.lanes,
                                                  lds_alloc=self.lds_alloc)
        if tmpl is not None:
            # same batch shape as before and no partial workgroups: only the workgroup ids differ
            _, sgpr, vgpr, st.group, st.wave_in_group, id_cols, st.mode = tmpl
            st.sgpr[:] = sgpr
            st.vgpr[:len(vgpr)] = vgpr
            gid = st.group_ids = self._group_ids(flat_groups)
            for col, axis in id_cols:
                st.sgpr[:, col] = gid[st.group, axis].astype(U32)
            st.pc[:] = self.entry
            return st
        gid = self._group_ids(flat_groups)
        st.group_ids = gid
        st.group = np.repeat(np.arange(ng), wpg)
        st.wave_in_group = np.tile(np.arange(wpg), ng)
        kd = self.kd
        wid = kd.rsrc2["enable_vgpr_workitem_id"]
        packed = self.processor.startswith(("gfx90a", "gfx94", "gfx95", "gfx11", "gfx12"))
        # work-item ids and EXEC: one pattern per distinct (partial) workgroup shape, tiled over the batch
        if all(g % w == 0 for g, w in zip(self.grid, self.wg)):
            shapes, inverse = np.array([self.wg]), np.zeros(ng, dtype=np.int64)   # no partial workgroups
        else:
            psize = np.minimum(np.array(self.wg)[None, :], np.array(self.grid)[None, :] - gid * np.array(self.wg)[None, :])
            shapes, inverse = np.unique(psize, axis=0, return_inverse=True)
            inverse = inverse.reshape(-1)
        nv = 3 if not packed else 1
        lanes = self.lanes
        exec_pat = np.zeros((len(shapes), wpg, 2), dtype=U32)        # wave32: EXEC_HI stays 0
        vgpr_pat = np.zeros((len(shapes), nv, wpg, lanes), dtype=U32)
        for k, (px, py, pz) in enumerate(shapes):
            t = np.arange(wpg * lanes).reshape(wpg, lanes)
            active = t < px * py * pz
            ids = [t % px, (t // px) % py, t // (px * py)]
            exec_pat[k, :, :lanes // 32] = np.packbits(active, axis=1, bitorder="little").view(U32)
            if packed:
                v0 = ids[0].astype(U32)
                if wid >= 1:
                    v0 |= ids[1].astype(U32) << U32(10)
                if wid >= 2:
                    v0 |= ids[2].astype(U32) << U32(20)
                vgpr_pat[k, 0] = np.where(active, v0, 0)
            else:
                for i in range(min(wid, 2) + 1):
                    vgpr_pat[k, i] = np.where(active, ids[i], 0)
        if len(shapes) == 1:
            st.sgpr[:, EXEC:EXEC + 2] = np.tile(exec_pat[0], (ng, 1))
            for i in range(nv):
                st.vgpr[i] = np.tile(vgpr_pat[0, i], (ng, 1))
        else:
            st.sgpr[:, EXEC:EXEC + 2] = exec_pat[inverse].reshape(nw, 2)
            for i in range(nv):
                st.vgpr[i] = vgpr_pat[inverse, i].reshape(nw, lanes)
        # user SGPRs
        vals = {
            "private_segment_buffer": [PRIVATE_VSHARP_BASE & 0xFFFFFFFF, PRIVATE_VSHARP_BASE >> 32, 0xFFFFFFFF,
                                       ADD_TID_ENABLE | 0x00027000],
            "dispatch_ptr": [self.dispatch_ptr & 0xFFFFFFFF, self.dispatch_ptr >> 32],
            "queue_ptr": [self.queue_ptr & 0xFFFFFFFF, self.queue_ptr >> 32],
            "kernarg_segment_ptr": [self.kernarg & 0xFFFFFFFF, self.kernarg >> 32],
            "dispatch_id": [self.dispatch_id & 0xFFFFFFFF, self.dispatch_id >> 32],
            "flat_scratch_init": [0, 0],
            "private_segment_size": [self.private],
        }
        for name, first, count in kd.user_sgpr_layout():
            if name == "kernarg_preload":
                off = kd.preload["kernarg_preload_spec_offset"] * 4
                words = np.frombuffer(self.gpu.memory.read(self.kernarg + off, count * 4), dtype=U32)
                st.sgpr[:, first:first + count] = words[None, :]
            else:
                st.sgpr[:, first:first + count] = np.array(vals[name], dtype=U64).astype(U32)[None, :]
        s = kd.user_sgpr_count
        id_cols = []
        for i, axis in enumerate("xyz"):
            if kd.rsrc2[f"enable_sgpr_workgroup_id_{axis}"]:
                st.sgpr[:, s] = gid[st.group, i].astype(U32)
                id_cols.append((s, i))
                s += 1
        if kd.rsrc2["enable_sgpr_workgroup_info"]:
            st.sgpr[:, s] = U32(wpg) | np.where(st.wave_in_group == 0, U32(1 << 31), U32(0))
            s += 1
        arch_flat_scratch = self.processor.startswith(("gfx94", "gfx95", "gfx11", "gfx12"))
        if kd.rsrc2["enable_private_segment"]:
            if arch_flat_scratch:
                st.sgpr[:, FLAT_SCRATCH] = 0
                st.sgpr[:, FLAT_SCRATCH + 1] = 0
            else:
                st.sgpr[:, s] = 0           # scratch wave offset: each wave has its own private space
                s += 1
        st.pc[:] = self.entry
        st.mode = kd.rsrc1["float_round_mode_32"] | kd.rsrc1["float_round_mode_16_64"] << 2 | \
            kd.rsrc1["float_denorm_mode_32"] << 4 | kd.rsrc1["float_denorm_mode_16_64"] << 6 | \
            kd.rsrc1["enable_dx10_clamp"] << 8 | kd.rsrc1["enable_ieee_mode"] << 9
        if all(g % w == 0 for g, w in zip(self.grid, self.wg)):      # every batch of this size looks the same
            self._template = (ng, st.sgpr.copy(order="K"), st.vgpr[:nv].copy(), st.group, st.wave_in_group, id_cols, st.mode)
        return st

    # -- the loop --------------------------------------------------------------------------------------------
    def _run_batch(self, flat_groups) -> None:
        with np.errstate(all="ignore"):
            self._run_batch_inner(flat_groups)

    def _run_batch_inner(self, flat_groups) -> None:
        st = self._setup(flat_groups)
        prog, K, gpu = self.program, self.K, self.gpu
        blocks = gpu.blocks(prog, K)
        done, at_barrier, pc = st.done, st.at_barrier, st.pc
        max_steps = self.max_steps
        next_yield = self.steps + YIELD_STEPS
        at_gws = st.at_gws
        spins = fair = last = 0
        while True:
            live = ~done & ~at_barrier & ~at_gws
            if not live.any():
                if done.all():
                    break
                if at_gws.any() and gws.release(st, [lambda waves, f=f: f(self, st, waves) for f in GWS_CHECKS]):
                    continue
                if not at_barrier.any():
                    if at_gws.any():
                        raise GPUFault(f"global wave sync deadlock: {gws.describe(st)}",
                                       code=hipError_t.hipErrorLaunchFailure)
                    break
                self._release_barriers(st)
                continue
            lp = pc[live]
            p = int(lp.min())
            if live.all() and lp.max() == p:
                w = ALL                      # a slice: register reads are views, writes in place
                nw = st.n
                spins = fair = 0
            else:
                if fair:                     # round the PCs: the lowest above the last pick, else the lowest
                    fair -= 1
                    above = lp[lp > last]
                    if above.size:
                        p = int(above.min())
                w = np.nonzero(live & (pc == p))[0]
                nw = len(w)
            blk = blocks.get(p)
            if blk is None:
                blk = blocks[p] = self._block(p)
            fns, pcs = blk
            n = len(fns)
            self.steps += n
            if self.steps >= next_yield:
                # let host threads in: a thread that released the GIL for a native call (queue, signal, cffi)
                # would otherwise wait a whole switch interval (5 ms) per call while a kernel runs
                time.sleep(0)
                next_yield = self.steps + YIELD_STEPS
            self.wave_instructions += nw * n
            if self.steps > max_steps:
                raise self._fault(GPUFault(f"watchdog: dispatch exceeded {max_steps} instruction steps "
                                           f"(infinite loop?); waves: {self._wave_dump(st)}",
                                           code=hipError_t.hipErrorLaunchTimeOut), st, w, p)
            i = 0
            try:
                for i in range(n - 1):
                    fns[i](st, w)
                i = n - 1
                pc[w] = pcs[n]               # the last instruction may branch: pc points past it first
                fns[i](st, w)
                if w is not ALL and self.fair_turns and int(pc[w].min()) <= p:
                    spins += 1               # some waves looped while others waited: maybe a spin
                    if spins >= SPIN_TURNS:
                        spins, fair = 0, FAIR_TURNS
                        self._release_barriers(st, eager=True)
                last = p
            except GPUFault as exc:
                pc[w] = pcs[i]
                raise self._fault(exc, st, w, pcs[i]) from None
            except (IndexError, ValueError, KeyError, FloatingPointError, OverflowError) as exc:
                pc[w] = pcs[i]
                raise self._fault(GPUFault(f"emulator error: {type(exc).__name__}: {exc}",
                                           code=hipError_t.hipErrorLaunchFailure), st, w, pcs[i]) from None
        if self.capture is not None:
            self._record(st, flat_groups)

    def _record(self, st: WaveState, flat_groups) -> None:
        """Every wave's final SGPRs, SCC, MODE, PC and VGPRs into ``capture`` (the native engine's layout:
        pyhip/emu/native/run.py), rows by flat workgroup index x waves per group + wave."""
        rows = np.asarray(flat_groups)[st.group] * self.waves_per_group + st.wave_in_group
        head = np.zeros((st.n, 132), dtype=np.uint32)
        head[:, :128] = st.sgpr
        head[:, 128] = st.scc
        head[:, 129] = st.mode
        head[:, 130] = st.pc.astype(np.uint64) & 0xFFFFFFFF
        head[:, 131] = st.pc.astype(np.uint64) >> 32
        out = self.capture
        out[rows, :132 * 4] = head.view(np.uint8)
        v = st.vgpr.transpose(1, 0, 2)                   # (waves, rows, lanes): a wave32 row fills 32 of 64 words
        full = np.zeros((st.n, v.shape[1], 64), np.uint32)
        full[:, :, :st.lanes] = v
        out[rows, 132 * 4:] = full.view(np.uint8).reshape(st.n, -1)

    def _block(self, p: int):
        """The straight-line run of instructions from ``p`` up to and including the first one that may
        change control flow (branches, calls, s_getpc, s_endpgm, s_barrier, traps), or up to the end of
        the code: ``(functions, pcs)`` where ``pcs`` has one more entry, the address after the block."""
        prog, K, gpu = self.program, self.K, self.gpu
        code = gpu.compiled(prog, K)
        insts = prog.instructions
        fns, pcs = [], []
        while True:
            fn = code.get(p)
            if fn is None:
                fn = gpu.compile_at(prog, K, p)      # faults for an address that is not an instruction
            inst = insts[p]
            fns.append(fn)
            pcs.append(p)
            p += inst.size
            if inst.name.startswith(BLOCK_ENDS) or p not in insts or len(fns) >= MAX_BLOCK:
                break
        pcs.append(p)
        return fns, pcs

    def _release_barriers(self, st: WaveState, eager: bool = False) -> None:
        """Release the workgroups whose live waves all wait at a barrier; none is a deadlock, unless ``eager``
        (other waves still run)."""
        if eager and not st.at_barrier.any():
            return
        live_g = np.bincount(st.group, weights=(~st.done).astype(np.int64), minlength=len(st.group_ids))
        wait_g = np.bincount(st.group, weights=(st.at_barrier & ~st.done).astype(np.int64), minlength=len(st.group_ids))
        ready = (live_g == wait_g) & (wait_g > 0)
        if eager and not ready.any():
            return
        if not ready.any():
            extra = gws.describe(st)
            raise GPUFault("barrier deadlock" + (f" ({extra})" if extra else ""), code=hipError_t.hipErrorLaunchFailure)
        for fn in BARRIER_CHECKS:
            fn(self, st, ready)
        st.at_barrier &= ~ready[st.group]

    def _wave_dump(self, st: WaveState, limit: int = 8) -> str:
        live = np.nonzero(~st.done)[0][:limit]
        parts = []
        for i in live:
            p = int(st.pc[i])
            inst = self.program.instructions.get(p)
            exec_mask = int(st.sgpr[i, EXEC]) | int(st.sgpr[i, EXEC + 1]) << 32
            sregs = " ".join(f"s{r}=0x{int(st.sgpr[i, r]):x}" for r in range(4))
            vregs = " ".join(f"v{r}[0]=0x{int(st.vgpr[r, i, 0]):x}" for r in range(min(2, st.vgpr.shape[0])))
            parts.append(f"wave {int(st.wave_in_group[i])} of workgroup {tuple(int(x) for x in st.group_ids[st.group[i]])} "
                         f"at pc 0x{p - self.program.base:x} ({describe(inst, self.processor) if inst else '?'}) "
                         f"exec=0x{exec_mask:016x} {sregs} {vregs}")
        return "; ".join(parts)

    def _fault(self, exc: GPUFault, st: WaveState, w, p: int) -> GPUFault:
        # the faulting wave when the semantics located it (position in the selection), else the first one
        first = int(indices(st, w)[exc.details.get("batch_wave", 0)]) if count(st, w) else 0
        inst = self.program.instructions.get(p)
        return exc.with_context(kernel=self.kernel.demangled if self.kernel is not None else None,
                                workgroup=tuple(int(x) for x in st.group_ids[st.group[first]]),
                                wave=int(st.wave_in_group[first]),
                                pc=p - self.program.base,
                                instruction=describe(inst, self.processor) if inst is not None else None)
