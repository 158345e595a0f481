"""The command processor of one KFD AQL compute queue: what the MEC firmware does with a ring that ROCr (or
any HSA runtime) owns — the emulated GPU's side of ``hsaKmtCreateQueue``.

Per packet at the read index (``*Queue_read_ptr_aql``, i.e. ``amd_queue_t.read_dispatch_id``):

1. wait until it is submitted: header type not INVALID and the doorbell (the last submitted index, written
   by the producer with a plain store) has reached it — polled with back-off, never a busy core;
2. kernel dispatch: the packet is checked as the CP checks it (dimensions, work-group size, group segment,
   kernel object) — a bad one stops the queue with the CP's error code in ``queue_inactive_signal``; a
   dispatch needing more scratch per wave than ``compute_tmpring_size`` grants takes the dynamic-scratch
   path (error code 1 in ``queue_inactive_signal``, wait until the runtime stores 0, re-read the scratch
   setup, retry); then the emulated GPU runs the grid with ``dispatch_ptr`` = the packet's slot and
   ``queue_ptr`` = the ``amd_queue_t``;
3. barrier-AND/OR, AMD barrier-value and PM4-IB packets (cache invalidation) are executed; agent-dispatch
   packets are not for a GPU CP (invalid packet format);
4. completion: with profiling enabled (``queue_properties`` bit 3) start/end timestamps in the GPU clock;
   the completion signal's value is decremented atomically; if the signal has an event mailbox the event
   id is written there and the interrupt raised (KFD sets the event);
5. the slot's header is set INVALID and the read index advanced.

Native code first: while the ring's packets are ones it can finish — kernel dispatches of kernels the emulated
GPU's native agent knows (they ran natively once, through this path), barriers already satisfied — the
emulated GPU's native loop (``pyhip_agent_cp_process``, native/engine/agent.h) consumes them with no Python,
profiling timestamps and event interrupts included, and returns for anything else (checks that may stop the
queue, scratch, waits, PM4, a fault: its report is built here from the native Dispatch record).
``PYHIP_NATIVE_AQL=0`` keeps every packet in Python; ``PYHIP_CP_STATS=1`` prints the native count at exit.

Faults: a memory fault is reported by pyhip (kernel, workgroup, wave, lane, PC, instruction, address) and
then as KFD reports it (Kfd.memory_fault): every queue of the process on that GPU is evicted for good, then
every memory event of the process is set with the faulting page (ROCr prints "Memory access fault by GPU
node-N" and aborts, unless a system event handler took it).  An illegal or unimplemented instruction
stops the queue with error 0x40000000 in ``queue_inactive_signal``.
"""
from __future__ import annotations

import os
import struct
import sys
import threading

from ..aql import packets as P
from ..aql import pm4
from ..aql.native import ffi, lib
from ..emu.memory import GPUFault
from ..errors import hipError_t
from . import abi

# amd_queue_t offsets (hsa/amd_hsa_queue.h)
AQ_BASE, AQ_SIZE, AQ_WRITE, AQ_READ = 8, 24, 56, 128
AQ_TMPRING, AQ_SCRATCH_SIZE, AQ_PROPERTIES, AQ_INACTIVE = 140, 168, 180, 192
PROP_PROFILING, PROP_USE_SCRATCH_ONCE = 1 << 3, 1 << 4
# amd_signal_t offsets
SIG_VALUE, SIG_MAILBOX, SIG_EVENT_ID, SIG_START, SIG_END = 8, 16, 24, 32, 40
# queue_inactive_signal codes (ROCr's AqlQueue::DynamicScratchHandler)
ERR_SCRATCH_WAVE64, ERR_INVALID_DIM, ERR_GROUP_MEMORY, ERR_INVALID_CODE = 1, 2, 4, 8
ERR_INVALID_FORMAT, ERR_GROUP_TOO_LARGE, ERR_VENDOR_FORMAT, ERR_LARGE_SCRATCH_RECLAIM = 32, 64, 256, 512
ERR_MEMORY_VIOLATION, ERR_ILLEGAL_INSTRUCTION = 0x20000000, 0x40000000
FAULT_NOT_PRESENT = abi.pack_bits(abi.FAULT, NotPresent=1)
FAULT_HANG = abi.pack_bits(abi.FAULT, ErrorType=3)
POLL_NS = 50_000_000
_LOG = os.environ.get("PYHIP_LOG_FAULTS", "") not in ("", "0")
_STATS = os.environ.get("PYHIP_CP_STATS", "") not in ("", "0")    # per queue at its destruction: packets per path


def _u64(addr: int):
    return ffi.cast("uint64_t*", addr)


def _i64(addr: int):
    return ffi.cast("int64_t*", addr)


class QueueStopped(Exception):
    """The CP stopped this queue (an error was reported, or it is being destroyed)."""


class CommandProcessor:
    def __init__(self, kfd, queue):
        self.kfd, self.q = kfd, queue
        self.gpu = kfd.gpus[queue.node]
        self.stop_flag = ffi.new("uint32_t*", 0)
        self.paused = ffi.new("uint32_t*", 0)     # the native loop's view of ``active`` (UpdateQueue)
        self.active = threading.Event()
        self.idle = threading.Event()             # inactive and between packets (Kfd.quiesced waits for it)
        if queue.percentage:
            self.active.set()
        else:
            self.paused[0] = 1
        self.error = 0                          # the code this CP stopped the queue with (0: running)
        self._processed = 0
        self._native = None
        self.thread = threading.Thread(target=self._run, name=f"pyhip-kfd-cp-{queue.queue_id}", daemon=True)

    def start(self) -> None:
        self.thread.start()

    @property
    def processed(self) -> int:
        native = self._native
        return self._processed + (native.processed if native is not None else 0)

    def suspend(self) -> None:
        """UpdateQueue with percentage 0: the CP stops taking packets (the one running completes)."""
        lib.pyhip_store_release_u32(self.paused, 1)
        self.active.clear()

    def resume(self) -> None:
        lib.pyhip_store_release_u32(self.paused, 0)
        self.active.set()

    def _native_half(self):
        """The emulated GPU's native loop for this ring (pyhip/emu/native/agent.py KfdAgentQueue), or None
        (PYHIP_NATIVE_AQL=0, no native engine)."""
        if os.environ.get("PYHIP_NATIVE_AQL", "1") == "0":
            return None
        hook = getattr(self.gpu, "native_kfd_queue", None)
        address = getattr(self.kfd.native, "function_address", None)
        interrupt = address("pyhip_kfd_interrupt") if address is not None else 0
        clock = address("pyhip_kfd_gpu_clock") if address is not None else 0
        if hook is None or not interrupt or not clock:
            return None
        return hook(self.q, ffi.cast("uintptr_t", self.stop_flag), ffi.cast("uintptr_t", self.paused),
                    self.kfd.topology.gpu(self.q.node).lds_bytes, interrupt, clock)

    def stop(self, timeout: float = 5.0) -> None:
        self.stop_flag[0] = 1
        self.active.set()
        if self.thread.is_alive() and threading.current_thread() is not self.thread:
            self.thread.join(timeout)
        if _STATS:
            native = self._native.processed if self._native is not None else 0
            print(f"pyhip: KFD queue {self.q.queue_id}: {native} packets in native code, {self._processed} through "
                  "Python", file=sys.stderr, flush=True)

    # -- the loop ----------------------------------------------------------------------------------
    def _run(self) -> None:
        q = self.q
        index = ffi.cast("uint64_t*", q.read_ptr)[0]
        native = self._native = self._native_half()
        try:
            while not self.stop_flag[0]:
                if not self.active.is_set():
                    self.idle.set()
                    self.active.wait(0.05)
                    continue
                self.idle.clear()
                if native is not None:
                    status = native.process(POLL_NS)
                    index = ffi.cast("uint64_t*", q.read_ptr)[0]
                    if status in (native.IDLE, native.STOPPED):
                        continue
                    if status == native.FAULT:
                        slot = q.ring + (index % q.slots) * 64
                        self._log(f"queue {q.queue_id}: packet {index} faulted in native code")
                        self._fault(native.failure(bytes(ffi.buffer(ffi.cast("uint8_t*", slot), 64)), index))
                slot = q.ring + (index % q.slots) * 64
                if not lib.pyhip_cp_wait_packet(ffi.cast("uint16_t*", slot), _u64(q.doorbell), index,
                                                self.stop_flag, POLL_NS):
                    continue
                if not self.active.is_set():
                    continue
                raw = bytes(ffi.buffer(ffi.cast("uint8_t*", slot), 64))
                self._packet(raw, slot, index)
                lib.pyhip_store_release_u16(ffi.cast("uint16_t*", slot), P.TYPE_INVALID)
                index += 1
                lib.pyhip_store_release_u64(_u64(q.read_ptr), index)
                self._processed += 1
        except QueueStopped:
            pass
        except BaseException as exc:          # a bug of ours: report, stop the queue
            print(f"pyhip: KFD queue {q.queue_id}: command processor error: {type(exc).__name__}: {exc}",
                  file=sys.stderr, flush=True)
            self._queue_error(ERR_ILLEGAL_INSTRUCTION)

    # -- packets -----------------------------------------------------------------------------------
    def _packet(self, raw: bytes, slot: int, index: int) -> None:
        ptype = raw[0]
        if ptype == P.TYPE_KERNEL_DISPATCH:
            self._dispatch(P.KernelDispatchPacket.unpack(raw), slot, index)
        elif ptype in (P.TYPE_BARRIER_AND, P.TYPE_BARRIER_OR):
            pkt = P.BarrierPacket.unpack(raw)
            self._start(pkt.completion_signal)
            deps = [h for h in pkt.dep_signals if h]
            self._check_signals(deps)
            arr = ffi.new("int64_t*[]", [_i64(h + SIG_VALUE) for h in deps]) if deps else ffi.NULL
            while not lib.pyhip_raw_wait_multi(arr, len(deps), int(ptype == P.TYPE_BARRIER_AND), POLL_NS):
                self._check_stop()
                self._idle_if_stopped()
            self._complete(pkt.completion_signal)
        elif ptype == P.TYPE_VENDOR and raw[2] == 2:       # AMD barrier-value
            pkt = P.BarrierValuePacket.unpack(raw)
            if pkt.condition not in (P.BV_EQ, P.BV_NE, P.BV_LT, P.BV_GTE):
                self._queue_error(ERR_VENDOR_FORMAT)
            self._check_signals([pkt.signal])
            self._start(pkt.completion_signal)
            while not lib.pyhip_raw_wait_value(_i64(pkt.signal + SIG_VALUE), pkt.condition, pkt.value, pkt.mask,
                                               POLL_NS):
                self._check_stop()
                self._idle_if_stopped()
            self._complete(pkt.completion_signal)
        elif ptype == P.TYPE_VENDOR and raw[2] == pm4.PM4_IB_FORMAT:
            sig = struct.unpack_from("<Q", raw, 56)[0]
            self._start(sig)
            try:
                pm4.execute(struct.unpack_from("<4I", raw, 4), self._read)
            except (pm4.Pm4Error, GPUFault) as exc:
                self._log(f"PM4 packet {index}: {exc}")
                self._queue_error(ERR_VENDOR_FORMAT)
            self._complete(sig)
        elif ptype == P.TYPE_VENDOR:
            self._queue_error(ERR_VENDOR_FORMAT)
        else:                                              # agent dispatch, reserved types
            self._queue_error(ERR_INVALID_FORMAT)

    def _idle_if_stopped(self) -> None:
        """A barrier waiting for its signals runs no kernel: a queue stopped meanwhile counts as between
        packets (Kfd.quiesced need not wait for the host to satisfy the barrier)."""
        if not self.active.is_set():
            self.idle.set()

    def _read(self, addr: int, size: int) -> bytes:
        if not self.kfd.memory.gpu_accessible(self.q.node, addr, size):
            raise GPUFault("PM4 indirect buffer outside GPU-mapped memory", address=addr)
        return bytes(ffi.buffer(ffi.cast("uint8_t*", addr), size))

    def _dispatch(self, pkt: P.KernelDispatchPacket, slot: int, index: int) -> None:
        wg, grid = pkt.workgroup_size, pkt.grid_size
        if not all(wg) or not all(grid) or pkt.setup_dims not in (1, 2, 3):
            self._queue_error(ERR_INVALID_DIM)
        if wg[0] * wg[1] * wg[2] > 1024:
            self._queue_error(ERR_GROUP_TOO_LARGE)
        if pkt.group_segment_size > self.kfd.topology.gpu(self.q.node).lds_bytes:
            self._queue_error(ERR_GROUP_MEMORY)
        if not pkt.kernel_object:
            self._queue_error(ERR_INVALID_CODE)
        if pkt.private_segment_size:
            self._ensure_scratch(pkt.private_segment_size)
        self._start(pkt.completion_signal)
        try:
            self.gpu.run_dispatch(kernel_object=pkt.kernel_object, kernarg_address=pkt.kernarg_address,
                                  grid_size=grid, workgroup_size=wg, group_segment_size=pkt.group_segment_size,
                                  private_segment_size=pkt.private_segment_size, dispatch_ptr=slot,
                                  queue_ptr=self.q.amd_queue, dispatch_id=index)
        except GPUFault as exc:
            self._fault(exc)
        if self.q.evicted:             # another queue's VM fault evicted this one mid-dispatch: never completes
            raise QueueStopped(0)
        props = ffi.cast("uint32_t*", self.q.amd_queue + AQ_PROPERTIES)[0]
        if pkt.private_segment_size and props & PROP_USE_SCRATCH_ONCE:
            self._scratch_request(ERR_LARGE_SCRATCH_RECLAIM)        # give single-use scratch back
        self._complete(pkt.completion_signal)

    # -- scratch -----------------------------------------------------------------------------------
    def _scratch_granted(self) -> int:
        aq = self.q.amd_queue
        tmpring = ffi.cast("uint32_t*", aq + AQ_TMPRING)[0]
        if not _u64(aq + AQ_SCRATCH_SIZE)[0]:
            return 0
        return (tmpring >> 12 & 0x1FFF) * 1024             # COMPUTE_TMPRING_SIZE.WAVESIZE, 1 KiB units

    def _ensure_scratch(self, per_lane: int) -> None:
        need = (per_lane * 64 + 1023) // 1024 * 1024
        while self._scratch_granted() < need:
            self._log(f"queue {self.q.queue_id}: dispatch needs {need} bytes of scratch per wave, the queue grants "
                      f"{self._scratch_granted()}: queue inactive (error 0x{ERR_SCRATCH_WAVE64:x})")
            self._scratch_request(ERR_SCRATCH_WAVE64)
            self._log(f"queue {self.q.queue_id}: resumed with {self._scratch_granted()} bytes of scratch per wave")

    def _scratch_request(self, code: int) -> None:
        """Raise ``code`` in queue_inactive_signal and wait for the runtime's handler to store 0 (done, the
        queue resumes) — anything else stops the queue."""
        sig = _u64(self.q.amd_queue + AQ_INACTIVE)[0]
        if not sig:
            self._queue_error(code)
        self._signal_store(sig, code)
        value = _i64(sig + SIG_VALUE)
        while not lib.pyhip_raw_wait_value(value, 0, 0, -1, POLL_NS):     # until == 0
            self._check_stop()
            v = value[0]
            if v not in (code, 0) and not (v & (1 << 63) and (v & ~(1 << 63)) == code):
                self.error = code
                raise QueueStopped(code)

    # -- signals -----------------------------------------------------------------------------------
    def _check_signals(self, handles) -> None:
        for h in handles:
            if not self.kfd.memory.gpu_accessible(self.q.node, h, 64):
                self._log(f"signal 0x{h:x} is not in GPU-mapped memory")
                self._fault(GPUFault("signal outside GPU-mapped memory", address=h))

    def _profiling(self) -> bool:
        return bool(ffi.cast("uint32_t*", self.q.amd_queue + AQ_PROPERTIES)[0] & PROP_PROFILING)

    def _start(self, sig: int) -> None:
        if sig and self._profiling():
            self._check_signals([sig])
            _u64(sig + SIG_START)[0] = self.kfd.gpu_clock()

    def _complete(self, sig: int) -> None:
        if not sig:
            return
        self._check_signals([sig])
        if self._profiling():
            _u64(sig + SIG_END)[0] = self.kfd.gpu_clock()
        lib.pyhip_add_fetch_i64(_i64(sig + SIG_VALUE), -1)
        self._interrupt(sig)

    def _signal_store(self, sig: int, value: int) -> None:
        lib.pyhip_store_release_i64(_i64(sig + SIG_VALUE), value)
        self._interrupt(sig)

    def _interrupt(self, sig: int) -> None:
        mailbox = _u64(sig + SIG_MAILBOX)[0]
        if mailbox:
            event_id = ffi.cast("uint32_t*", sig + SIG_EVENT_ID)[0]
            lib.pyhip_store_release_u64(_u64(mailbox), event_id)
            self.kfd.interrupt(event_id)

    # -- errors ------------------------------------------------------------------------------------
    def _check_stop(self) -> None:
        if self.stop_flag[0]:
            raise QueueStopped(0)

    def _queue_error(self, code: int) -> None:
        """Stop the queue and report ``code`` through queue_inactive_signal (and its event)."""
        self.error = code
        self.active.clear()
        sig = _u64(self.q.amd_queue + AQ_INACTIVE)[0]
        self._log(f"queue {self.q.queue_id} stopped with error 0x{code:x}")
        if sig and self.kfd.memory.gpu_accessible(self.q.node, sig, 64):
            self._signal_store(sig, code)
        raise QueueStopped(code)

    def _fault(self, exc: GPUFault) -> None:
        print(f"pyhip: GPU fault on node {self.q.node} (queue {self.q.queue_id}): {exc.message}",
              file=sys.stderr, flush=True)
        code = int(exc.code)
        if code == hipError_t.hipErrorIllegalAddress:
            self.error = ERR_MEMORY_VIOLATION
            self.active.clear()
            self.kfd.memory_fault(self.q.node, exc.address or 0, FAULT_NOT_PRESENT, exc)
            raise QueueStopped(self.error)
        if code == hipError_t.hipErrorLaunchTimeOut:            # a hang: KFD's "generic hang recovery"
            self.error = ERR_MEMORY_VIOLATION
            self.active.clear()
            self.kfd.memory_fault(self.q.node, 0, FAULT_HANG, exc)
            raise QueueStopped(self.error)
        if code == hipError_t.hipErrorInvalidDeviceFunction:
            self._queue_error(ERR_INVALID_CODE)
        self._queue_error(ERR_ILLEGAL_INSTRUCTION)

    def _log(self, msg: str) -> None:
        if _LOG:
            print(f"pyhip: KFD: {msg}", file=sys.stderr, flush=True)
