"""AQL queues: a power-of-two ring of 64-byte packets in native memory with an ``amd_queue_t``
(256 bytes: ``hsa_queue_t`` at 0, write index @56, read index @128) and a doorbell signal.

Producers (any number of threads): reserve a slot with an atomic fetch-add on the write index, wait
while the queue is full (never overwriting a packet the consumer has not taken), write the body, publish
header+setup with one 32-bit release store, ring the doorbell.  The consumer marks slots INVALID after
use and advances the read index with a release store.
"""
from __future__ import annotations

import itertools
import struct
import threading
import time

from .native import NativeBlock, ffi, lib
from .packets import PACKET_SIZE, TYPE_INVALID
from .signal import Signal

AMD_QUEUE_SIZE = 256
WRITE_INDEX_OFF, READ_INDEX_OFF = 56, 128
_ids = itertools.count(1)


class QueueFullTimeout(TimeoutError):
    pass


class Queue:
    def __init__(self, size: int = 256):
        if size < 2 or size & (size - 1):
            raise ValueError("queue size must be a power of two >= 2")
        self.size = size
        self.id = next(_ids)
        self.ring = NativeBlock(size * PACKET_SIZE)
        self.amd_queue = NativeBlock(AMD_QUEUE_SIZE)
        self.doorbell = Signal(-1)
        for i in range(size):                       # every slot starts INVALID
            lib.pyhip_store_release_u32(self.ring.u32(i * PACKET_SIZE), TYPE_INVALID)
        q = self.amd_queue
        struct.pack_into("<IIQQII Q", q.buffer(), 0, 0, 3, self.ring.address, self.doorbell.handle,
                         size, 0, self.id)
        self._write = q.u64(WRITE_INDEX_OFF)
        self._read = q.u64(READ_INDEX_OFF)
        self._space = threading.Condition(threading.Lock())
        self.closed = False

    @property
    def address(self) -> int:
        """``queue_ptr`` for the device: the address of the ``amd_queue_t``."""
        return self.amd_queue.address

    @property
    def write_index(self) -> int:
        return lib.pyhip_load_acquire_u64(self._write)

    @property
    def read_index(self) -> int:
        return lib.pyhip_load_acquire_u64(self._read)

    def slot_address(self, index: int) -> int:
        return self.ring.address + (index % self.size) * PACKET_SIZE

    # -- producer side -------------------------------------------------------------------------------
    def submit(self, packet: bytes, timeout: float | None = None) -> int:
        """Publish one 64-byte packet; returns its index.  Blocks while the queue is full."""
        if len(packet) != PACKET_SIZE:
            raise ValueError("an AQL packet is 64 bytes")
        if self.closed:
            raise RuntimeError("queue is closed")
        index = lib.pyhip_fetch_add_u64(self._write, 1)
        deadline = None if timeout is None else time.monotonic() + timeout
        if index - self.read_index >= self.size:
            with self._space:
                while index - self.read_index >= self.size:
                    if deadline is not None and time.monotonic() > deadline:
                        raise QueueFullTimeout(f"queue {self.id} stayed full for {timeout}s")
                    self._space.wait(0.05)
        slot = ffi.cast("uint8_t*", ffi.cast("char*", self.ring.ptr) + (index % self.size) * PACKET_SIZE)
        lib.pyhip_publish_packet(slot, packet)
        self.doorbell.store_max(index)
        return index

    # -- consumer side ---------------------------------------------------------------------------------
    def peek(self, index: int) -> bytes | None:
        """The packet at ``index`` if its header is published (acquire), else None."""
        slot = ffi.cast("uint8_t*", ffi.cast("char*", self.ring.ptr) + (index % self.size) * PACKET_SIZE)
        out = ffi.new("uint8_t[64]")
        hs = lib.pyhip_take_packet(slot, out)
        if hs & 0xFF == TYPE_INVALID:
            return None
        return bytes(ffi.buffer(out, 64))

    def retire(self, index: int) -> None:
        """Mark the slot INVALID and advance the read index past it."""
        lib.pyhip_store_release_u32(self.ring.u32((index % self.size) * PACKET_SIZE), TYPE_INVALID)
        lib.pyhip_store_release_u64(self._read, index + 1)
        with self._space:
            self._space.notify_all()

    def wait_doorbell(self, index: int, timeout: float) -> None:
        """Sleep until a producer rang the doorbell for ``index`` or later (or the timeout)."""
        self.doorbell.wait(3, index, timeout)      # COND_GTE
