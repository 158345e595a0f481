"""The emulated AMD GPU: device memory, loaded programs, kernel dispatch (the AQL agent interface).

Dispatches run on the native engine (pyhip/emu/jit's compiled code over the C runtime pyhip/emu/native, off
the GIL) when it supports every instruction the kernel can reach, else whole on the numpy engine
(pyhip/emu/engine.py, the reference).
``PYHIP_ENGINE`` (or ``EmulatedGPU.engine``) picks: ``native`` (default), ``numpy``, or ``diff`` (both,
compared: pyhip/emu/native/diff.py)."""
from __future__ import annotations

import os
import threading
import time
import weakref

from ..errors import HipError, hipError_t
from ..loader.descriptor import KD_SIZE, KernelDescriptor
from .engine import Dispatch, KernelContext, compile_instruction
from .memory import DEVICE_BASE, DeviceMemory, GPUFault

DEVICE_STRIDE = 1 << 40          # 1 TiB of address space per device
from .program import ForeignKernel, LoadedProgram, MemoryProgram

SUPPORTED = ("gfx90a", "gfx940", "gfx941", "gfx942", "gfx1030", "gfx1100")
DEFAULT_ENGINE = "native"
S_ENDPGM = bytes.fromhex("000081bf")
_WARNED = False          # the native engine's absence is reported once per process
FAULT_LISTENERS: list = []   # fn(gpu, fault): told of every dispatch fault a device records (pyhip/sanitizer)
ENGINE_OVERRIDE: str | None = None   # the engine every device uses while a check needs it (pyhip/sanitizer)
# racecheck on the native engine (pyhip/sanitizer): fn(native program) -> per instruction flags (native/engine/race.h
# RC_*), or None (the numpy engine runs it); while set, native dispatches run in the numpy engine's schedule with
# the engine's race shadows on
RACE_FLAGS = None
# fn(program, pc, inst, fn) -> fn: may wrap the numpy engine's function for the instruction at ``pc`` when it is
# compiled (pyhip/sanitizer/devheap.py: device malloc and free); GPU.recompile() drops what was compiled before
PC_HOOKS: list = []
# fn(program) -> a reason (str) or None: the reason keeps the program's kernels off the native engine
NATIVE_VETOES: list = []
DISPATCH_LISTENERS: list = []    # fn(gpu): told after every dispatch run from Python (pyhip/sanitizer)
GPUS: weakref.WeakSet[EmulatedGPU] = weakref.WeakSet()     # every emulated device (the sanitizer names code)


class FaultLog(list):
    """A device's dispatch faults (every engine's path records them here), told to FAULT_LISTENERS."""

    def __init__(self, gpu):
        super().__init__()
        self._gpu = weakref.ref(gpu)

    def append(self, fault) -> None:
        super().append(fault)
        gpu = self._gpu()
        for fn in list(FAULT_LISTENERS):
            fn(gpu, fault)


def _runs_generic(code_processor: str, device_processor: str) -> bool:
    """A generic RDNA code object (gfx10-3-generic, gfx11-generic) on a member of its family: same encodings,
    decoded by the family's tables."""
    from ..loader.targetid import GENERIC_FAMILIES
    from .isa.families import rdna
    return device_processor in GENERIC_FAMILIES.get(code_processor, ()) and rdna(code_processor) is not None


class EmulatedGPU:
    def __init__(self, target: str = "gfx90a", memory_size: int = 16 << 30, watchdog_steps: int = 20_000_000,
                 index: int = 0, memory: DeviceMemory | None = None):
        proc = target.split(":")[0]
        if proc not in SUPPORTED:
            raise HipError(hipError_t.hipErrorInvalidDevice, f"the emulator does not support {proc}")
        self.target = target
        self.processor = proc
        GPUS.add(self)
        self.memory = memory or DeviceMemory(memory_size, base=DEVICE_BASE + index * DEVICE_STRIDE)
        self._watchdog_steps = watchdog_steps
        self._agent = None                 # the native agent (pyhip/emu/native/agent.py), with the first queue
        self.programs: list[LoadedProgram] = []
        self._contexts = {}
        self._compiled = {}
        self._blocks = {}
        self._lock = threading.RLock()
        self._mirrors: dict[int, int] = {}
        self._descriptors: dict[bytes, KernelDescriptor] = {}    # decoded once per descriptor contents
        self._foreign_programs: dict[int, MemoryProgram] = {}     # code other loaders put in memory
        self.faults: list[GPUFault] = FaultLog(self)
        self.trivial_kernels: tuple[int, ...] = ()     # kernel objects of loaded kernels that are a lone s_endpgm
        self.last_dispatch = None
        self.sleep_hook = None             # fn(dispatch): the host's side of waiting waves (hostcalls)
        self.interrupt_hook = None         # fn(data): s_sendmsg(MSG_INTERRUPT) reaching the driver (the thunk's)
        self._tls = threading.local()
        self.engine = os.environ.get("PYHIP_ENGINE", DEFAULT_ENGINE)
        self._native = None

    def native_engine(self):
        """The native engine of this device, or None when it is unavailable (no compiled extension)."""
        if self._native is None:
            from . import native
            if not native.available():
                global _WARNED
                if not _WARNED:
                    _WARNED = True
                    import warnings
                    try:
                        native.module()
                    except ImportError as exc:
                        warnings.warn(f"pyhip: {exc}; kernels run on the numpy engine (slower)", RuntimeWarning,
                                      stacklevel=2)
                return None
            from .native.run import NativeEngine
            with self._lock:
                if self._native is None:
                    self._native = NativeEngine(self)
        return self._native

    @property
    def watchdog_steps(self) -> int:
        return self._watchdog_steps

    @watchdog_steps.setter
    def watchdog_steps(self, steps: int) -> None:
        self._watchdog_steps = steps
        if self._agent is not None:
            self._agent.sync_watchdog()

    def engine_stats(self) -> dict:
        """Dispatches run natively / on the numpy engine, and why each fallback happened."""
        n = self._native
        if n is None:
            return {"native": 0, "fallback": 0, "reasons": {}, "tier0": 0}
        agent = self._agent.counts() if self._agent is not None else {"dispatched": 0, "faults": 0}
        out = {"native": n.stats["native"] + agent["dispatched"], "fallback": n.stats["fallback"],
               "reasons": dict(n.fallbacks), "tier0": n.stats["tier0"], "agent": agent}
        if n.jit is not None:            # compiles: all, tier 1 (quick), tier 2 (optimised), loaded from disk
            out["compiled"] = dict(n.jit.stats)
        return out

    # -- programs -----------------------------------------------------------------------------------------
    def load_program(self, co) -> LoadedProgram:
        if co.processor not in SUPPORTED and co.processor != self.processor and not _runs_generic(co.processor, self.processor):
            raise HipError(hipError_t.hipErrorNoBinaryForGpu, f"code object for {co.processor} on a {self.processor}")
        p = LoadedProgram(self, co)
        trivial = [k for k in p.kernels if self._is_trivial(p, k)]
        with self._lock:
            self.programs.append(p)
            if trivial:
                self.trivial_kernels = self.trivial_kernels + tuple(trivial)
        if self._agent is not None:
            for k in trivial:
                self._agent.add_trivial(k)
        return p

    def _is_trivial(self, p, kernel_object: int) -> bool:
        """A kernel whose first instruction is s_endpgm: dispatching it changes nothing but its completion
        signal (the packet processor may retire such packets natively)."""
        kd = KernelDescriptor.from_bytes(self.memory.read(kernel_object, KD_SIZE), p.code_object.processor)
        if kd.preload["kernarg_preload_spec_length"]:
            return False
        entry = kernel_object + kd.kernel_code_entry_byte_offset
        return p.contains(entry) and p.contains(entry + 3) and self.memory.read(entry, 4) == S_ENDPGM

    def unload_program(self, p: LoadedProgram) -> None:
        with self._lock:
            if p in self.programs:
                self.programs.remove(p)
                self.trivial_kernels = tuple(k for k in self.trivial_kernels if not p.contains(k))
                self._forget(p)
                self.memory.free(p.base)

    def _forget(self, p) -> None:
        """Drop everything compiled for a program that is gone."""
        with self._lock:
            for cache in (self._compiled, self._blocks):
                for key in [k for k in cache if k[0] == id(p)]:
                    del cache[key]      # ids are reused: a later program must not see this code
            for key in [k for k in self._contexts if k[0] == id(p)]:
                del self._contexts[key]
            if self._foreign_programs.get(p.base) is p:
                del self._foreign_programs[p.base]
            if self._agent is not None:
                self._agent.forget(p)
            if self._native is not None:
                self._native.forget(p)
            p.unloaded = True

    def context_for(self, program, accum_offset: int, lanes: int = 64) -> KernelContext:
        key = (id(program), accum_offset, lanes)
        K = self._contexts.get(key)
        if K is None:
            K = self._contexts[key] = KernelContext(self, program.code_object.processor, accum_offset, lanes)
        return K

    def compiled(self, program, K) -> dict:
        return self._compiled.setdefault((id(program), K.accum_offset, K.lanes), {})

    def recompile(self) -> None:
        """Forget the numpy engine's compiled instructions and blocks (:data:`PC_HOOKS` changed)."""
        self._compiled.clear()
        self._blocks.clear()

    def blocks(self, program, K) -> dict:
        return self._blocks.setdefault((id(program), K.accum_offset, K.lanes), {})

    def compile_at(self, program, K, pc: int):
        inst = program.instructions.get(pc)
        if inst is None:
            raise GPUFault("jump to an address that is not an instruction", code=hipError_t.hipErrorIllegalAddress,
                           address=pc)
        modes = getattr(program, "_gpr_index_modes", None)
        if modes is None:
            from .semantics.gpr_indexing import gpr_index_modes
            modes = program._gpr_index_modes = gpr_index_modes(program.instructions)
        if pc in modes:
            from .semantics.gpr_indexing import indexed
            fn = indexed(inst, K, modes[pc], compile_instruction)
        else:
            fn = compile_instruction(inst, K)
        for hook in PC_HOOKS:
            fn = hook(program, pc, inst, fn)
        self.compiled(program, K)[pc] = fn
        return fn

    def _find(self, kernel_object: int):
        with self._lock:
            for p in self.programs:
                if p.contains(kernel_object):
                    return p, p.kernels.get(kernel_object)
            return self._foreign(kernel_object)

    def _foreign(self, kernel_object: int):
        """A kernel object in a code object another loader put in device memory (ROCr's, over pyhip's KFD
        thunk): the allocation holding it is decoded as a :class:`MemoryProgram` once per allocation."""
        hit = self.memory.find(kernel_object)
        if hit is None:
            return None, None
        start, serial = hit[0], self.memory.serials.get(hit[0])
        p = self._foreign_programs.get(start)
        if p is not None and p.serial != serial:          # freed and reused since: forget its code
            self._forget(p)
            p = None
        if p is None:
            p = self._foreign_programs[start] = MemoryProgram(self, start, hit[1], serial)
        return p, p.kernels.get(kernel_object) or ForeignKernel(f"kernel@0x{kernel_object:x}")

    # -- dispatch -----------------------------------------------------------------------------------------------
    def dispatch_record(self, *, kernel_object: int, kernarg_address: int, grid_size, workgroup_size,
                        group_segment_size: int, private_segment_size: int, dispatch_ptr: int = 0,
                        queue_ptr: int = 0, dispatch_id: int = 0, max_steps: int | None = None) -> Dispatch:
        """The numpy engine's record of a dispatch (geometry, descriptor, initial state), not run yet; raises
        the GPUFault of a dispatch that cannot start."""
        program, kernel = self._find(kernel_object)
        if program is None:
            raise GPUFault("invalid kernel_object: not inside any loaded code object",
                           code=hipError_t.hipErrorInvalidDeviceFunction, address=kernel_object)
        raw = self.memory.read(kernel_object, KD_SIZE)
        kd = self._descriptors.get(raw)
        if kd is None:
            kd = self._descriptors[raw] = KernelDescriptor.from_bytes(raw, program.code_object.processor)
        if kernel is None:
            raise GPUFault("invalid kernel_object: not a kernel descriptor", code=hipError_t.hipErrorInvalidDeviceFunction,
                           address=kernel_object)
        if isinstance(program, MemoryProgram):
            program.entry_seen(kernel_object + kd.kernel_code_entry_byte_offset)
        if kd.kernarg_size and not self.memory.owns(kernarg_address):
            raise GPUFault("bad kernarg pointer", code=hipError_t.hipErrorIllegalAddress, address=kernarg_address,
                           kernel=kernel.demangled)
        d = Dispatch(self, program, kernel, kd, kernel_object=kernel_object, kernarg_address=kernarg_address,
                     grid_size=grid_size, workgroup_size=workgroup_size, group_segment_size=group_segment_size,
                     private_segment_size=private_segment_size, dispatch_ptr=dispatch_ptr, queue_ptr=queue_ptr,
                     dispatch_id=dispatch_id, max_steps=max_steps)
        return d

    def run_dispatch(self, *, kernel_object: int, kernarg_address: int, grid_size, workgroup_size,
                     group_segment_size: int, private_segment_size: int, dispatch_ptr: int = 0,
                     queue_ptr: int = 0, dispatch_id: int = 0, max_steps: int | None = None) -> Dispatch:
        d = self.dispatch_record(kernel_object=kernel_object, kernarg_address=kernarg_address, grid_size=grid_size,
                                 workgroup_size=workgroup_size, group_segment_size=group_segment_size,
                                 private_segment_size=private_segment_size, dispatch_ptr=dispatch_ptr,
                                 queue_ptr=queue_ptr, dispatch_id=dispatch_id, max_steps=max_steps)
        try:
            return self._run(d, max_steps)
        finally:
            for fn in DISPATCH_LISTENERS:
                fn(self)

    def _run(self, d, max_steps):
        if RACE_FLAGS is not None and max_steps is None and d.kernel_object in self.trivial_kernels:
            # a lone s_endpgm, retired as the native agent retires it (which racecheck keeps out of the way):
            # it touches nothing a check looks at, and running every workgroup of a huge grid one by one in
            # racecheck's schedule took minutes (hip-tests' NOPKernel at the maximum grid size)
            self.last_dispatch = d
            return d
        if (ENGINE_OVERRIDE or self.engine) != "numpy":
            nat = self.native_engine()
            race = RACE_FLAGS
            if nat is not None:
                reason, nprog = nat.support(d, tier0=race is None)
                flags = race(nprog) if race is not None and reason is None else None
                if race is not None and reason is None and flags is None:
                    reason = "racecheck: program too large for the native engine's race shadow"
                if reason is None and NATIVE_VETOES:
                    reason = next((r for r in (f(nprog.program) for f in NATIVE_VETOES) if r), None)
                if reason is None:
                    if flags is not None:
                        res = nat.run(d, nprog, lockstep=2, race=flags)
                    elif self.engine == "diff":
                        from .native.diff import differential
                        res = differential(self, d, nat, nprog)
                    else:
                        res = nat.run(d, nprog, register=self._agent if max_steps is None else None)
                    self.last_dispatch = res
                    return res
                if reason != "tier0":                  # (tier 0: the kernel is compiling meanwhile)
                    nat.stats["fallback"] += 1
                    nat.fallbacks[reason] += 1
        prev = getattr(self._tls, "dispatch", None)
        self._tls.dispatch = d
        try:
            d.run()
        finally:
            self._tls.dispatch = prev
        self.last_dispatch = d
        return d

    def on_sleep(self) -> None:
        """A wave executed s_sleep: give the host's services (hostcall buffers) a turn, in this thread."""
        hook = self.sleep_hook
        if hook is not None:
            hook(self._tls.dispatch)
        else:                              # a host thread serves the wave (a hostcall listener): let it run
            time.sleep(0)

    def on_interrupt(self, data: int) -> None:
        """A wave sent MSG_INTERRUPT (s_sendmsg) with ``data`` (M0[7:0]): the SQ raises an interrupt the driver
        handles (amdkfd sets the signal event whose id matches, as ockl's hostcall doorbell expects)."""
        hook = self.interrupt_hook
        if hook is not None:
            hook(data)

    # -- AQL agent interface --------------------------------------------------------------------------------------
    def dispatch_kernel(self, packet, packet_address: int, queue) -> None:
        """Run an AQL kernel dispatch packet.  The packet and the amd_queue_t are mirrored into device
        memory so kernels that read them through dispatch_ptr / queue_ptr see the real bytes."""
        pkt_bytes = packet.pack()
        mirror = self._mirror_buffer(queue)
        self.memory.write(mirror, pkt_bytes)
        qptr = 0
        if queue is not None:
            self.memory.write(mirror + 256, bytes(queue.amd_queue.buffer()))
            qptr = mirror + 256
        try:
            self.run_dispatch(kernel_object=packet.kernel_object, kernarg_address=packet.kernarg_address,
                              grid_size=packet.grid_size, workgroup_size=packet.workgroup_size,
                              group_segment_size=packet.group_segment_size,
                              private_segment_size=packet.private_segment_size, dispatch_ptr=mirror,
                              queue_ptr=qptr, dispatch_id=0)
        except GPUFault as exc:
            self.faults.append(exc)
            raise

    def _native_agent(self):
        from . import native
        if ((ENGINE_OVERRIDE or self.engine) != "native" or RACE_FLAGS is not None or not self.memory._fixed_arena
                or not native.available()):
            return None                        # (the first dispatch warns about a missing engine, not this)
        nat = self.native_engine()
        if nat is None:
            return None
        with self._lock:
            if self._agent is None:
                from .native.agent import NativeAgent
                self._agent = NativeAgent(self, nat)
        return self._agent

    def native_kfd_queue(self, kq, stop, paused, lds_bytes: int, interrupt: int, clock: int):
        """The native half of a KFD queue's command processor (pyhip/thunk/cp.py), or None."""
        agent = self._native_agent()
        return agent.kfd_queue(kq, stop, paused, lds_bytes, interrupt, clock) if agent is not None else None

    def native_queue(self, queue):
        """The packet processor's native hook for ``queue`` (pyhip/emu/native/agent.py): kernel dispatches of
        kernels that ran natively before run with no Python.  None when the agent cannot be used (numpy or
        differential engine, no native engine, an arena that may move)."""
        agent = self._native_agent()
        return agent.queue(queue, self._mirror_buffer(queue)) if agent is not None else None

    def _mirror_buffer(self, queue) -> int:
        """Per-queue device copy of the current packet and amd_queue_t: queues run concurrently."""
        key = id(queue)
        with self._lock:
            addr = self._mirrors.get(key)
            if addr is None:
                addr = self._mirrors[key] = self.memory.alloc(512, kind="internal")
            return addr

    def release_queue(self, queue) -> None:
        """Free the packet mirror of a queue that was closed."""
        with self._lock:
            addr = self._mirrors.pop(id(queue), None)
        if addr is not None:
            self.memory.free(addr)

    def copy(self, dst: int, src: int, size: int) -> None:
        self.memory.copy(dst, src, size)

    def fill(self, dst: int, value: int, count: int, width: int) -> None:
        self.memory.fill(dst, value, count, width)
