"""Running a dispatch on the native engine: the Dispatch record (initial wave state exactly as the numpy
engine's ``Dispatch._setup`` builds it), the allocation table for per-lane bounds checks, and the fault
record turned into the same :class:`GPUFault` report the numpy engine raises."""
from __future__ import annotations

import collections
import threading
import time

import numpy as np

from ...errors import hipError_t
from ..engine import (ADD_TID_ENABLE, MAX_PRIVATE_PER_BATCH, MAX_WAVES_PER_BATCH, PRIVATE_VSHARP_BASE, describe,
                      lds_granule)
from ..memory import GPUFault
from ..semantics.buffer_format import format_fault
from .lower_image import image_fault
from ..state import FLAT_SCRATCH, LANES
from . import module
from .lower import NativeProgram

# native/engine/engine.h enum FaultKind
FK = ["none", "mem", "lds_ds", "lds_range", "scratch", "lds_atomic", "lds_atomic_align", "atomic_align",
      "satomic_align", "jump", "watchdog", "trap", "mixed_private", "unsupported", "buf_format", "internal",
      "vgpr_index", "image"]
CAPTURE_HEAD = 128 * 4 + 16          # SGPRs, SCC, MODE, PC
# The watchdog: the numpy engine counts steps (an instruction of a group of waves at one PC); the native one
# counts each wave's instructions, some two orders of magnitude faster, so one step buys it 100 instructions
# per wave (a kernel spinning on a host flag gets about as much wall time from either engine).  Lockstep runs
# (the differential mode) count exactly as the numpy engine.
INSTRUCTIONS_PER_STEP = 100
TIER0 = "tier0"           # support(): run on the numpy engine now, compile when the kernel is dispatched again


class Result:
    """What run_dispatch returns for a native dispatch (the attributes the numpy Dispatch offers)."""

    __slots__ = ("wave_instructions", "steps", "engine", "capture", "nvgpr", "waves_per_group")

    def __init__(self, d, capture, nvgpr, wpg):
        self.wave_instructions = int(d.wave_instructions)
        self.steps = int(d.steps)
        self.engine = "native"
        self.capture = capture
        self.nvgpr = nvgpr
        self.waves_per_group = wpg


class NativeEngine:
    """The native engine of one EmulatedGPU: lowered programs, the memory table, statistics."""

    def __init__(self, gpu):
        self.gpu = gpu
        self.mod = module()
        self.ffi, self.lib = self.mod.ffi, self.mod.lib
        self._programs: dict = {}
        self._regions = None            # (memory._index, regions array, keep-alive)
        self._lock = threading.Lock()
        self._hostcalls: dict = {}                  # id(kernel) -> (kernel, uses a hostcall buffer)
        self.stats = collections.Counter()          # "native", "fallback"
        self.fallbacks = collections.Counter()      # reason -> dispatches
        self.jit_failures = collections.Counter()   # reason -> dispatches the compiled engine did not take
        self._loops: dict = {}                      # (program, entry) -> [program, has loops, instructions, dispatches]
        from .. import jit
        self.jit = jit.KernelCache(self.ffi, self.lib) if jit.enabled() and jit.available() else None
        _init_tables(self.lib, self.ffi)
        if self.jit is not None:
            from ..jit import objcache
            objcache.prime()

    # -- programs --------------------------------------------------------------------------------------------
    def program(self, program, K) -> NativeProgram:
        key = (id(program), K.accum_offset)
        p = self._programs.get(key)
        if p is None or p.program is not program:
            with self._lock:
                p = self._programs.get(key)
                if p is None or p.program is not program:
                    p = self._programs[key] = NativeProgram(program, K)
        return p

    def forget(self, program) -> None:
        with self._lock:
            for key in [k for k, v in self._programs.items() if v.program is program]:
                del self._programs[key]

    def support(self, d, tier0: bool = True) -> tuple[str | None, NativeProgram | None]:
        """(None, native program) when the dispatch ``d`` (a numpy engine Dispatch) can run natively, else
        (reason, None).  ``tier0``: a small first dispatch may go to the numpy engine while it compiles."""
        if self.jit is None and d.K.family != 9:
            return f"{d.processor}: RDNA (GFX{d.K.family}) code runs on the numpy engine", None
        if self.jit is None and d.lanes != LANES:
            return f"wave{d.lanes} dispatch", None
        if self._hostcall(d.kernel):
            # device printf / hostcalls: waves wait in s_sleep loops for the host (served on s_sleep, or by a
            # host listener woken by the doorbell's MSG_INTERRUPT), which the numpy engine models
            return "hostcall (device printf): waves wait for the host on the numpy engine", None
        np_ = self.program(d.program, d.K)
        reason, rows = np_.kernel_support(d.entry, compiled=self.jit is not None)
        if reason is None and rows > d.nvgpr + 8:
            reason = f"uses VGPR rows up to {rows}, more than the {d.nvgpr + 8} allocated"
        if reason is None and self.jit is not None:
            args = (np_, d.program, d.K, np_.index[d.entry], layout_for(d).mode, d.nvgpr + 8)
            try:
                if tier0 and self.gpu.engine == "native" and self.jit.ready(*args) is None and self._tier0(d, np_, args):
                    self.stats["tier0"] += 1
                    return TIER0, None
                self.jit.function(*args)
            except Exception as exc:  # noqa: BLE001 - what the compiler cannot take runs on the numpy engine
                reason = f"compiled engine: {exc}"
        return reason, (np_ if reason is None else None)

    def _tier0(self, d, np_, args) -> bool:
        """A small loop-free dispatch of a kernel not compiled yet runs on the numpy engine: its first (most
        kernels of a test or a short script run once: nothing is compiled for them), and, from its second on,
        those that come while its quick code is compiled in the background (the compile starts at the
        second: no dispatch waits for it)."""
        from .. import jit
        if not jit.tiering() or jit.quick_only():
            return False
        entry = np_.index[d.entry]
        hit = self._loops.get((id(np_), entry))
        if hit is None or hit[0] is not np_:
            reach = np_.reachable(entry)
            loops = any(0 <= np_.tgt[i] <= i for i in reach) or any(np_.indirect[i] for i in reach)
            hit = self._loops[(id(np_), entry)] = [np_, loops, len(reach), 0]
        hit[3] += 1
        _, loops, ninst, seen = hit
        waves = d.counts[0] * d.counts[1] * d.counts[2] * d.waves_per_group
        if loops or waves * ninst > jit.TIER0_WORK:
            return False
        return seen <= 1 or self.jit.compile_soon(*args)

    def _hostcall(self, kernel) -> bool:
        hit = self._hostcalls.get(id(kernel))
        if hit is None or hit[0] is not kernel:
            uses = any(a.value_kind == "hidden_hostcall_buffer" for a in getattr(kernel, "hidden_args", ()))
            hit = self._hostcalls[id(kernel)] = (kernel, uses)
        return hit[1]

    # -- memory --------------------------------------------------------------------------------------------------
    def regions(self):
        mem = self.gpu.memory
        index = mem._index
        cached = self._regions
        if cached is not None and cached[0] is index:
            return cached[1], cached[3]
        arena = mem.arena
        # Region records (start, end, host: three u8 each, emu/native/layout.py) are the rows of an (n, 3) array
        reg = np.empty((len(index[0]), 3), dtype=np.uint64)
        reg[:, 0], reg[:, 1], reg[:, 2] = index[0], index[1], index.hosts
        ptr = self.ffi.cast("const Region*", reg.ctypes.data)
        self._regions = (index, reg, (arena, index[3]), ptr)
        return reg, ptr

    # -- one dispatch -----------------------------------------------------------------------------------------------
    def run(self, d, nprog: NativeProgram, *, lockstep=False, capture=False, nthreads=0, register=None,
            race=None) -> Result:
        """Run ``d`` natively.  ``register``: the device's native agent, which then learns the kernel (later
        dispatches of it from a queue run without Python).  ``lockstep``: 1 the numpy engine's schedule lowest PC
        first (the differential test), 2 with its fair turns too.  ``race``: racecheck's per-instruction flags
        (uint8 array, native/engine/race.h), which turn the engine's race shadows on."""
        ffi, lib = self.ffi, self.lib
        c = ffi.new("Dispatch*")
        ptrs = nprog.pointers
        if ptrs is None:      # the program's arrays as C pointers, once (NativeProgram keeps the arrays alive)
            ptrs = nprog.pointers = (ffi.cast("const NInst*", nprog.code.ctypes.data),
                                     ffi.cast("const int32_t*", nprog.addr_index.ctypes.data),
                                     ffi.cast("const int32_t*", nprog.aux.ctypes.data))
        c.code, c.addr_index, c.aux = ptrs
        c.code_base = nprog.base
        c.code_size = nprog.size
        c.ncode = len(nprog.code)
        c.entry = nprog.index[d.entry]
        for i in range(3):
            c.grid[i], c.wg[i], c.counts[i] = d.grid[i], d.wg[i], d.counts[i]
        c.waves_per_group = d.waves_per_group
        c.lanes = d.lanes
        rows = max(d.nvgpr + 8, 1)
        c.nvgpr = rows
        c.lds_size = d.lds_size
        c.lds_alloc = d.lds_alloc
        c.lds_granule = lds_granule(d.processor)
        c.private_size = d.private
        setup_registers(c, d, self.gpu.memory, ffi)
        c.is_gfx94x = int(d.K.is_gfx94x)
        c.private_vsharp_base = PRIVATE_VSHARP_BASE
        c.lockstep = int(lockstep)
        if race is not None:
            c.race_pc = ffi.cast("const uint8_t*", race.ctypes.data)
            self.stats["racecheck"] += 1
        c.capture = int(capture)
        c.nthreads = nthreads
        c.max_steps = d.max_steps if lockstep else d.max_steps * INSTRUCTIONS_PER_STEP
        wpg = d.waves_per_group
        if lockstep:
            per = max(1, MAX_WAVES_PER_BATCH // wpg)
            if d.private:
                per = max(1, min(per, MAX_PRIVATE_PER_BATCH // (d.private * LANES * wpg)))
            c.batch_groups = per
        cap = None
        if capture:
            total = d.counts[0] * d.counts[1] * d.counts[2] * wpg
            stride = CAPTURE_HEAD + rows * LANES * 4
            cap = np.zeros((total, stride), dtype=np.uint8)
            c.capture_buf = ffi.cast("uint8_t*", cap.ctypes.data)
            c.capture_stride = stride
        if self.jit is not None:
            fn = self.jit.function(nprog, d.program, d.K, nprog.index[d.entry], int(c.mode), rows, bool(lockstep))
            c.jit_fn = ffi.cast("void*", fn)
        with self.gpu.memory.pinned():       # the arena's pointers stay valid until the dispatch ends
            reg, reg_ptr = self.regions()
            c.regions = reg_ptr
            c.nregions = len(reg)
            t0 = time.perf_counter()
            failed = lib.pyhip_engine_run(c)
            seconds = time.perf_counter() - t0
        del reg
        self.stats["native"] += 1
        if failed:
            exc = self.fault(c, d, nprog)
            exc.capture = cap
            raise exc
        final = self.jit is None or self.jit.ran(nprog, c.entry, int(c.mode), rows, bool(lockstep), seconds)
        if register is not None and final and not lockstep and not capture and not nthreads:
            register.add(d, nprog, c)
        return Result(c, cap, rows, wpg)

    def fault(self, c, d, nprog) -> GPUFault:
        f = c.fault
        kind = FK[f.kind] if 0 <= f.kind < len(FK) else "internal"
        size = int(f.size)
        details = {}
        if f.has_address:
            addr = int(f.address)
            if kind in ("lds_ds", "lds_range", "scratch", "lds_atomic", "lds_atomic_align") and addr >= 1 << 63:
                addr -= 1 << 64                      # LDS / private offsets are signed
            details["address"] = addr
        if f.lane >= 0:
            details["lane"] = int(f.lane)
        code = hipError_t.hipErrorIllegalAddress
        arg = int(f.arg)
        if kind == "mem":
            msg, details["access"] = "memory access outside any allocation", f"{size} bytes"
        elif kind == "lds_ds":
            msg, details["access"] = f"LDS access out of range (allocated {arg} bytes)", f"{size} bytes"
        elif kind == "lds_range":
            msg, details["access"] = f"LDS access out of range (size {arg} bytes)", f"{size} bytes"
        elif kind == "scratch":
            msg, details["access"] = f"scratch (private segment) access out of range (size {arg} bytes)", f"{size} bytes"
        elif kind == "lds_atomic":
            msg, details["access"] = f"LDS atomic out of range (allocated {arg} bytes)", f"{size} bytes"
        elif kind == "lds_atomic_align":
            msg, details["access"] = f"misaligned LDS atomic: address not aligned to {size} bytes", f"{size}-byte atomic"
        elif kind == "atomic_align":
            msg, details["access"] = f"misaligned atomic: address not aligned to {size} bytes", f"{size}-byte atomic"
        elif kind == "satomic_align":
            msg, details["access"] = f"misaligned scalar atomic: address not aligned to {size} bytes", f"{size}-byte atomic"
        elif kind == "jump":
            msg = "jump to an address that is not an instruction"
        elif kind == "trap":
            msg, code = "s_trap executed (assert or trap in the kernel)", 710
        elif kind == "watchdog":
            msg = (f"watchdog: dispatch exceeded {d.max_steps} instruction steps (infinite loop?); "
                   f"waves: {self._dump(f, nprog, d)}")
            code = hipError_t.hipErrorLaunchTimeOut
        elif kind == "buf_format":
            exc = format_fault(arg >> 8 & 0xFF, arg & 0xFF, bool(arg >> 16 & 1))
            msg, code = exc.message, exc.code
        elif kind == "image":
            inst = d.program.instructions.get(nprog.base + int(nprog.code[f.ip]["pc"])) if 0 <= f.ip < nprog.n else None
            exc = image_fault(inst, d.K.family, arg) if inst is not None else GPUFault("image descriptor")
            msg, code = exc.message, exc.code
        elif kind == "vgpr_index":
            inst = d.program.instructions.get(nprog.base + int(nprog.code[f.ip]["pc"])) if 0 <= f.ip < nprog.n else None
            msg = f"{inst.name if inst is not None else 'v_movrel*'}: VGPR index beyond the wave's registers"
        elif kind == "internal":
            msg, code = "native engine: out of memory for the workgroup state", hipError_t.hipErrorOutOfMemory
        else:
            msg, code = f"native engine fault ({kind})", hipError_t.hipErrorLaunchFailure
        exc = GPUFault(msg, code=code, **details)
        inst = None
        pc = None
        if 0 <= f.ip < nprog.n:
            pc = nprog.base + int(nprog.code[f.ip]["pc"])
            inst = d.program.instructions.get(pc)
        kernel = d.kernel.demangled if d.kernel is not None else None
        return exc.with_context(kernel=kernel, workgroup=tuple(int(x) for x in f.wg), wave=int(f.wave),
                                pc=(pc - d.program.base) if pc is not None else None,
                                instruction=describe(inst, d.processor) if inst is not None else None)

    def _dump(self, f, nprog, d) -> str:
        parts = []
        for i in range(f.ndump):
            w = f.dump[i]
            pc = int(w.pc)
            inst = d.program.instructions.get(pc)
            sregs = " ".join(f"s{r}=0x{int(w.s[r]):x}" for r in range(4))
            vregs = f"v0[0]=0x{int(w.v0):x} v1[0]=0x{int(w.v1):x}"
            parts.append(f"wave {int(w.wave)} of workgroup {tuple(int(x) for x in w.wg)} at pc 0x{pc - d.program.base:x} "
                         f"({describe(inst, d.processor) if inst else '?'}) exec=0x{int(w.exec):016x} {sregs} {vregs}")
        return "; ".join(parts)


class _RegisterLayout:
    """What a kernel descriptor fixes of the initial wave state (engine.Dispatch._setup), computed once per
    descriptor: the SGPR template with the per-dispatch slots named, the workgroup-id / workgroup-info SGPRs,
    the work-item VGPR layout and MODE."""

    __slots__ = ("kd", "template", "slots", "preload", "ids", "info", "vgpr_ids", "wid", "mode")

    def __init__(self, kd, processor: str):
        self.kd = kd
        init = np.zeros(128, dtype=np.uint32)
        fixed = {"private_segment_buffer": [PRIVATE_VSHARP_BASE & 0xFFFFFFFF, PRIVATE_VSHARP_BASE >> 32, 0xFFFFFFFF,
                                            ADD_TID_ENABLE | 0x00027000],
                 "flat_scratch_init": [0, 0]}
        self.slots, self.preload = [], None
        for name, first, count in kd.user_sgpr_layout():
            if name == "kernarg_preload":
                self.preload = (kd.preload["kernarg_preload_spec_offset"] * 4, first, count)
            elif name in fixed:
                init[first:first + count] = np.array(fixed[name], dtype=np.uint64).astype(np.uint32)
            else:       # filled per dispatch from the Dispatch attribute of that name
                self.slots.append((DISPATCH_ATTR[name], first, count))
        s = kd.user_sgpr_count
        ids = [-1, -1, -1]
        for i, axis in enumerate("xyz"):
            if kd.rsrc2[f"enable_sgpr_workgroup_id_{axis}"]:
                ids[i] = s
                s += 1
        self.ids = ids
        self.info = -1
        if kd.rsrc2["enable_sgpr_workgroup_info"]:
            self.info = s
            s += 1
        if kd.rsrc2["enable_private_segment"]:
            if processor.startswith(("gfx94", "gfx95", "gfx11", "gfx12")):
                init[FLAT_SCRATCH] = init[FLAT_SCRATCH + 1] = 0
            else:
                init[s] = 0
        self.template = init
        self.vgpr_ids = int(processor.startswith(("gfx90a", "gfx94", "gfx95", "gfx11", "gfx12")))
        self.wid = kd.rsrc2["enable_vgpr_workitem_id"]
        r1 = kd.rsrc1
        self.mode = r1["float_round_mode_32"] | r1["float_round_mode_16_64"] << 2 | r1["float_denorm_mode_32"] << 4 | \
            r1["float_denorm_mode_16_64"] << 6 | r1["enable_dx10_clamp"] << 8 | r1["enable_ieee_mode"] << 9


_LAYOUTS: dict = {}
# user SGPRs that change per dispatch -> the engine.Dispatch attribute holding the value
DISPATCH_ATTR = {"dispatch_ptr": "dispatch_ptr", "queue_ptr": "queue_ptr", "kernarg_segment_ptr": "kernarg",
                 "dispatch_id": "dispatch_id", "private_segment_size": "private"}


def layout_for(d) -> _RegisterLayout:
    key = (id(d.kd), d.processor)
    lay = _LAYOUTS.get(key)
    if lay is None or lay.kd is not d.kd:
        lay = _LAYOUTS[key] = _RegisterLayout(d.kd, d.processor)
    return lay


def setup_registers(c, d, memory, ffi) -> None:
    """The SGPR template, workgroup-id SGPRs, work-item VGPR layout and MODE (engine.Dispatch._setup)."""
    lay = layout_for(d)
    init = lay.template.copy()
    for attr, first, count in lay.slots:
        v = getattr(d, attr)
        init[first] = v & 0xFFFFFFFF
        if count > 1:
            init[first + 1] = v >> 32
    if lay.preload is not None:
        off, first, count = lay.preload
        init[first:first + count] = np.frombuffer(memory.read(d.kernarg + off, count * 4), dtype=np.uint32)
    ffi.memmove(c.sgpr_init, init, 128 * 4)
    c.wgid_sgpr[0], c.wgid_sgpr[1], c.wgid_sgpr[2] = lay.ids
    c.wginfo_sgpr = lay.info
    c.vgpr_ids = lay.vgpr_ids
    c.wid = lay.wid
    c.mode = lay.mode


_tables_done = False


def _init_tables(lib, ffi) -> None:
    """Constants the C side takes from the numpy semantics (one source): the values of the 8-bit float formats
    (the MFMA handler's fp8/bf8 inputs)."""
    global _tables_done
    if _tables_done:
        return
    from ..semantics.mfma import BF8_VALUES, FP8_VALUES
    fp8, bf8 = np.ascontiguousarray(FP8_VALUES, np.float64), np.ascontiguousarray(BF8_VALUES, np.float64)
    lib.pyhip_engine_set_fp8(ffi.cast("const double*", fp8.ctypes.data), ffi.cast("const double*", bf8.ctypes.data))
    _tables_done = True
