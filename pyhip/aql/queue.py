"""AQL queues: a power-of-two ring of 64-byte packets in native memory, an ``amd_queue_t`` (256 bytes:
``hsa_queue_t`` at 0, write index = write_dispatch_id @56, read index = read_dispatch_id @128) and a
doorbell signal.  ``Queue.address`` is the ``queue_ptr`` a device is given.

Producers (any number of threads, :meth:`Queue.submit`): reserve a slot with a CAS on the write index —
only when ``write - read < size``, so an unconsumed slot is never overwritten and a timed-out producer
leaves no hole — sleeping on a futex while the queue is full; write the body (bytes 4..63); publish
header+setup with ONE 32-bit release store; ring the doorbell (doorbell value = max(value, index)).
The consumer (:class:`~pyhip.aql.processor.PacketProcessor`) waits for the header of the next slot to
stop being INVALID, processes the packet, then marks the slot INVALID (header type 1) and advances the
read index (release store), waking producers that wait for space.  All of it is in native/aql_atomics.c.

pyhip's host bookkeeping lives in ``amd_queue_t.reserved4`` (@200 retire sequence, @204 sleeping
producers, @208 closed flag); it is invisible to device code that follows the ROCm layout.
"""
from __future__ import annotations

import itertools
import struct
import time

import numpy as np

from .native import NativeBlock, ffi, lib
from .packets import PACKET_SIZE, TYPE_INVALID
from . import signal as _signal
from .signal import _CHUNK_S, Signal

AMD_QUEUE_SIZE = 256
QUEUE_TYPE_MULTI, QUEUE_TYPE_SINGLE = 0, 1
FEATURE_KERNEL_DISPATCH, FEATURE_AGENT_DISPATCH = 1, 2
WRITE_INDEX_OFF, READ_INDEX_OFF = 56, 128
READ_DISPATCH_ID_BASE_OFF, QUEUE_PROPERTIES_OFF = 136, 180
QUEUE_PROPERTY_IS_PTR64 = 1 << 1
_ids = itertools.count(1)


class QueueFullTimeout(TimeoutError):
    """:meth:`Queue.submit` waited ``timeout`` seconds for a free slot (nothing was reserved)."""


class QueueClosed(RuntimeError):
    """The queue was closed (its processor stopped); no more packets are accepted."""


class Queue:
    def __init__(self, size: int = 256):
        if size < 2 or size & (size - 1) or size > 1 << 31:
            raise ValueError("queue size must be a power of two >= 2")
        self.size = size
        self.id = next(_ids)
        self.ring = NativeBlock(size * PACKET_SIZE)
        self.amd_queue = NativeBlock(AMD_QUEUE_SIZE)
        self.doorbell = Signal(-1)
        # every slot starts INVALID: one plain write of all headers — the ring is not shared yet, and one
        # native call per slot would re-take the GIL 1,024 times while an emulator thread holds it
        np.frombuffer(self.ring.buffer(), dtype=np.uint32)[::PACKET_SIZE // 4] = TYPE_INVALID
        buf = self.amd_queue.buffer()
        struct.pack_into("<IIQQIIQ", buf, 0, QUEUE_TYPE_MULTI, FEATURE_KERNEL_DISPATCH | FEATURE_AGENT_DISPATCH,
                         self.ring.address, self.doorbell.handle, size, 0, self.id)
        struct.pack_into("<I", buf, READ_DISPATCH_ID_BASE_OFF, READ_INDEX_OFF)
        struct.pack_into("<I", buf, QUEUE_PROPERTIES_OFF, QUEUE_PROPERTY_IS_PTR64)
        self._q = ffi.cast("void*", self.amd_queue.ptr)
        self._write = self.amd_queue.u64(WRITE_INDEX_OFF)
        self._read = self.amd_queue.u64(READ_INDEX_OFF)
        self._on_submit = None                      # lazy consumer start (set by a PacketProcessor)

    def __repr__(self) -> str:
        return f"<Queue {self.id} size={self.size} read={self.read_index} write={self.write_index}>"

    @property
    def address(self) -> int:
        """``queue_ptr`` for the device: the address of the ``amd_queue_t``."""
        return self.amd_queue.address

    @property
    def base_address(self) -> int:
        return self.ring.address

    @property
    def write_index(self) -> int:
        return lib.pyhip_load_acquire_u64(self._write)

    @property
    def read_index(self) -> int:
        return lib.pyhip_load_acquire_u64(self._read)

    @property
    def closed(self) -> bool:
        return bool(lib.pyhip_load_acquire_u32(self.amd_queue.u32(208)))

    def slot_address(self, index: int) -> int:
        return self.ring.address + (index & (self.size - 1)) * PACKET_SIZE

    def slot_bytes(self, index: int) -> bytes:
        """The 64 bytes currently in the slot of ``index`` (a racy snapshot; for tests and debugging)."""
        return bytes(ffi.buffer(self.ring.bytes_at((index & (self.size - 1)) * PACKET_SIZE), PACKET_SIZE))

    # -- producer side -------------------------------------------------------------------------------
    def reserve(self, timeout: float | None = None) -> int:
        """Reserve the next slot (waits while the queue is full); the caller must :meth:`publish` it."""
        if self._on_submit is not None:
            self._on_submit()
        deadline = None if timeout is None else time.monotonic() + max(timeout, 0.0)
        while True:
            left = _CHUNK_S if deadline is None else min(_CHUNK_S, deadline - time.monotonic())
            r = lib.pyhip_queue_reserve(self._q, max(int(left * 1e9), 0))
            if r >= 0:
                return r
            if r == -2:
                raise QueueClosed(f"queue {self.id} is closed")
            if deadline is not None and time.monotonic() >= deadline:
                raise QueueFullTimeout(f"queue {self.id} stayed full for {timeout}s")

    def publish(self, index: int, packet: bytes) -> None:
        """Write the body of a reserved slot, release-store header+setup, ring the doorbell."""
        if len(packet) != PACKET_SIZE:
            raise ValueError("an AQL packet is 64 bytes")
        if packet[0] == TYPE_INVALID:
            raise ValueError("cannot publish a packet whose header type is INVALID")
        lib.pyhip_queue_publish(self._q, index, packet)

    def submit(self, packet, timeout: float | None = None) -> int:
        """Publish one packet (64 bytes or an object with ``pack()``); returns its index.  Blocks while
        the queue is full; raises :class:`QueueFullTimeout` after ``timeout`` s (no slot is then used) or
        :class:`QueueClosed`."""
        if not isinstance(packet, (bytes, bytearray, memoryview)):
            packet = packet.pack()
        if len(packet) != PACKET_SIZE:
            raise ValueError("an AQL packet is 64 bytes")
        if packet[0] == TYPE_INVALID:
            raise ValueError("cannot publish a packet whose header type is INVALID")
        index = self.reserve(timeout)
        lib.pyhip_queue_publish(self._q, index, bytes(packet))
        return index

    def close(self) -> None:
        """Refuse further reservations; producers sleeping on a full queue get :class:`QueueClosed`."""
        lib.pyhip_queue_close(self._q)

    # -- consumer side ---------------------------------------------------------------------------------
    def wait_packet(self, index: int, timeout: float, spin_ns: int | None = None) -> bytes | None:
        """The packet at ``index`` once its header is published (acquire), or None after ``timeout``."""
        if spin_ns is None:
            spin_ns = _signal.SPIN_NS
        out = ffi.new("uint8_t[64]")
        if lib.pyhip_queue_wait_packet(self._q, index, out, max(int(timeout * 1e9), 0), spin_ns):
            return bytes(ffi.buffer(out, PACKET_SIZE))
        return None

    def peek(self, index: int) -> bytes | None:
        """The packet at ``index`` if its header is published, else None (does not wait)."""
        return self.wait_packet(index, 0.0, 0)

    def retire(self, index: int) -> None:
        """Mark the slot INVALID and advance the read index past it."""
        lib.pyhip_queue_retire(self._q, index)

    def kick(self) -> None:
        """Wake a consumer waiting for a packet (it re-checks its stop flag)."""
        lib.pyhip_queue_kick(self._q)

    def wait_doorbell(self, index: int, timeout: float) -> None:
        """Sleep until a producer rang the doorbell for ``index`` or later (or the timeout)."""
        self.doorbell.wait(3, index, timeout)      # COND_GTE
