"""HIP IPC on the emulated devices: several processes, each with its own emulated GPU, sharing device memory
and events.

Memory: ``hipIpcGetMemHandle`` moves the allocation's pages into a memfd (pyhip/emu/sharedmem.py; the
addresses stay; the bytes are copied first, so a kernel writing the allocation while its first handle is
made may lose those writes: export memory no kernel is writing); the 64-byte handle names the owner's pid,
that file's descriptor number and inode, and the allocation's size.  ``hipIpcOpenMemHandle`` in another
process opens ``/proc/PID/fd/N`` and maps the file into its own device arena as a new allocation,
bounds-checked as any; the same handle opened again in that process gives the same pointer (counted: each
open needs its close).  Freeing in the owner gives the owner's addresses private pages again; processes
that opened the memory keep it (the file lives while mapped), as they keep it when the owner exits.

On the HSA backend (ROCr: a real GPU, or the emulated one behind pyhip's libhsakmt) the handle carries
ROCr's ``hsa_amd_ipc_memory_t`` (hsa_amd_ipc_memory_create; the thunk's hsaKmtShareMemory) with the owner's
pid, the pointer's offset and the allocation's size; opening it is hsa_amd_ipc_memory_attach for the
current device's agent, the last close hsa_amd_ipc_memory_detach.

Events: ``hipIpcGetEventHandle`` gives the event a shared page of two counters (records begun, records
completed: :class:`SharedCounter`); a record in any process that holds the event bumps the first and, in
stream order, the second.  The event is complete when both agree: hipEventQuery / Synchronize and
hipStreamWaitEvent (a host operation in the waiting stream's order) look at the counters."""
from __future__ import annotations

import mmap
import os
import struct
import threading
import time
import weakref

import numpy as np

from ..emu import sharedmem
from ..errors import HipError, hipError_t

MEM_MAGIC, EVENT_MAGIC, HSA_MAGIC = b"pyhipIPC", b"pyhipEVT", b"pyhipHSA"
HANDLE_SIZE = 64
_MEM = struct.Struct("<qiiQQQQ")       # owner pid, fd, device, inode, offset of the pointer, size, file size
_HSA = struct.Struct("<qQQ")           # owner pid, offset of the pointer, size; then ROCr's 32-byte handle
_EVENT = struct.Struct("<qiiQ")        # owner pid, fd, 0, inode


def _invalid(msg: str) -> HipError:
    return HipError(hipError_t.hipErrorInvalidValue, msg)


def _own_process(pid: int) -> None:
    if pid == os.getpid():         # ROCclr: a handle opened in the process that made it
        raise HipError(hipError_t.hipErrorInvalidContext, "the IPC handle was made by this process")


def _hsa(device):
    """The device's backend when it is the HSA backend (ROCr's IPC), else None."""
    b = device.backend
    return b if hasattr(b, "ipc_export") else None


def _emulated_memory(device):
    mem = getattr(device.backend, "memory", None)
    if mem is None or not hasattr(mem, "share"):
        raise HipError(hipError_t.hipErrorNotSupported, "IPC needs an emulated device")
    return mem


# -- memory ------------------------------------------------------------------------------------------------------
_opened: dict[tuple, list] = {}        # (pid, inode or ROCr's handle) -> [address, opens, size, release(address)]
_opened_at: dict[int, tuple] = {}      # address -> its key in _opened
_lock = threading.Lock()


def _forget_opened() -> None:
    """A forked child starts with fresh devices: the parent's opened memory is none of its own."""
    global _lock
    _opened.clear()
    _opened_at.clear()
    _lock = threading.Lock()


os.register_at_fork(after_in_child=_forget_opened)


QUIESCE_SECONDS = 5.0                  # as the thunk's Kfd.quiesced


def _quiesce(device, timeout: float = QUIESCE_SECONDS) -> None:
    """The device's work in flight finished (its faults left for its own syncs) before an allocation's pages
    move into shared memory (its first handle): the move copies the bytes and then maps the file in place, so
    a kernel or host operation writing the allocation meanwhile wrote pages already copied, and lost it.  As
    the thunk stops a process's queues while it moves memory, bounded: work still unfinished after ``timeout``
    (gated on the host) is not waited for.  Work submitted during the move, and host threads writing device
    memory directly, are not stopped."""
    end = time.monotonic() + timeout
    for s in [device.null_stream] + device.streams_snapshot():
        s.wait_quietly(max(0.0, end - time.monotonic()))


def mem_handle(device, start: int, size: int, offset: int) -> bytes:
    """The handle of the device allocation ``[start, start + size)`` of ``device`` (``offset``: where the
    caller's pointer lies in it)."""
    hsa = _hsa(device)
    if hsa is not None:
        raw, size = hsa.ipc_export(start)
        return HSA_MAGIC + _HSA.pack(os.getpid(), offset, size) + raw
    mem = _emulated_memory(device)
    if start not in mem.shared:
        _quiesce(device)
    fd, span = mem.share(start)
    raw = MEM_MAGIC + _MEM.pack(os.getpid(), fd, device.index, os.fstat(fd).st_ino, offset, size, span)
    return raw.ljust(HANDLE_SIZE, b"\0")


def open_mem(device, raw: bytes) -> int:
    """The address in ``device``'s memory where the handle's allocation is mapped (plus the pointer's offset)."""
    if len(raw) == HANDLE_SIZE and raw[:8] == HSA_MAGIC:
        return _open_hsa(device, raw)
    if len(raw) != HANDLE_SIZE or raw[:8] != MEM_MAGIC:
        raise _invalid("not an IPC memory handle")
    pid, fd, _, inode, offset, size, span = _MEM.unpack_from(raw, 8)
    _own_process(pid)
    if not 0 < size <= span or offset >= size:
        raise _invalid("a corrupt IPC memory handle")
    key = (pid, inode)
    with _lock:
        hit = _opened.get(key)
        if hit is None:
            mem = _emulated_memory(device)
            mine = sharedmem.open_file(pid, fd, inode)
            try:
                if os.fstat(mine).st_size < span:
                    raise _invalid("the IPC handle's size does not match its memory")
                hit = _opened[key] = [mem.attach(mine, size, span), 0, size, mem.free]
            finally:
                os.close(mine)
            _opened_at[hit[0]] = key
        hit[1] += 1
        return hit[0] + offset


def _open_hsa(device, raw: bytes) -> int:
    hsa = _hsa(device)
    if hsa is None:
        raise HipError(hipError_t.hipErrorNotSupported, "an IPC handle of ROCr's opened on a device without ROCr")
    pid, offset, size = _HSA.unpack_from(raw, 8)
    _own_process(pid)
    if not size or offset >= size:
        raise _invalid("a corrupt IPC memory handle")
    key = (pid, raw[8 + _HSA.size:])
    with _lock:
        hit = _opened.get(key)
        if hit is None:
            hit = _opened[key] = [hsa.ipc_attach(raw[8 + _HSA.size:], size), 0, size, hsa.ipc_detach]
            _opened_at[hit[0]] = key
        hit[1] += 1
        return hit[0] + offset


def close_mem(addr: int) -> None:
    """hipIpcCloseMemHandle: one open fewer of the memory opened at ``addr``; the last unmaps it."""
    with _lock:
        key = next((k for a, k in _opened_at.items() if a <= addr < a + _opened[k][2]), None)
        if key is None:
            raise _invalid(f"0x{addr:x} is no IPC memory opened in this process")
        hit = _opened[key]
        hit[1] -= 1
        if hit[1] == 0:
            del _opened[key], _opened_at[hit[0]]
            hit[3](hit[0])


# -- events ------------------------------------------------------------------------------------------------------
class SharedCounter:
    """An IPC event's state, a page shared by the processes that hold the event: [0] records begun,
    [1] records completed (the latest completed record's number)."""

    def __init__(self, fd: int, owner: int):
        self.fd, self.owner = fd, owner           # owner: the pid that made it (0: this process)
        self._map = mmap.mmap(fd, mmap.PAGESIZE, mmap.MAP_SHARED)
        self.words = np.frombuffer(self._map, dtype=np.uint64, count=2)
        self.inode = os.fstat(fd).st_ino
        weakref.finalize(self, os.close, fd)      # (other processes open it while its event lives here)

    @classmethod
    def create(cls) -> "SharedCounter":
        return cls(sharedmem.new_file(mmap.PAGESIZE, "pyhip-ipc-event"), 0)

    def begin(self) -> int:
        """A record begins: its number (completed by :meth:`complete` in stream order)."""
        seq = int(self.words[0]) + 1
        self.words[0] = seq
        return seq

    def complete(self, seq: int) -> None:
        if int(self.words[1]) < seq:
            self.words[1] = seq

    def latest(self) -> int:
        """The number of the latest record begun (what a wait from now on waits for)."""
        return int(self.words[0])

    def done(self, target: int | None = None) -> bool:
        if int(self.words[1]) >= (self.latest() if target is None else target):
            return True
        return self.owner != 0 and not _alive(self.owner)   # its recorder gone: nothing will complete it

    def wait(self, target: int | None = None) -> None:
        """Until record ``target`` (default: the latest begun now) completed."""
        target = self.latest() if target is None else target
        pause = 1e-5
        while not self.done(target):
            time.sleep(pause)
            pause = min(pause * 2, 1e-3)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    return True


def event_handle(counter: SharedCounter) -> bytes:
    """The handle of the event whose state is ``counter`` (named by this process's descriptor of it)."""
    return (EVENT_MAGIC + _EVENT.pack(os.getpid(), counter.fd, 0, counter.inode)).ljust(HANDLE_SIZE, b"\0")


def open_event(raw: bytes) -> SharedCounter:
    if len(raw) != HANDLE_SIZE or raw[:8] != EVENT_MAGIC:
        raise _invalid("not an IPC event handle")
    pid, fd, _, inode = _EVENT.unpack_from(raw, 8)
    _own_process(pid)
    return SharedCounter(sharedmem.open_file(pid, fd, inode), pid)
