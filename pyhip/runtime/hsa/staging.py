"""Copies between pageable host memory and a device's memory through pinned staging buffers, as AMD's runtime
stages them: the host side is copied by the CPU into (or out of) pinned system memory, the device side moves by
DMA (``hsa_amd_memory_async_copy``), chunk by chunk, each chunk with its own completion signal.  Two buffers
alternate, so the CPU fills (or drains) one while the DMA engine works on the other; a copy whose size is not
a multiple of the chunk ends with a short chunk.  Nothing needs the CPU to reach the device's memory, so this
works on a GPU whose VRAM the CPU cannot map (a small BAR) and without SVM.

One staged copy at a time per device (the buffers are the device's); the copy runs in stream order on the
host thread that serves the stream's host operations, and returns once the last chunk has landed."""
from __future__ import annotations

import ctypes
import threading

from ...errors import HipError, hipError_t
from . import api
from .api import ffi

CHUNK = 1 << 20            # bytes per staging buffer
DEPTH = 2                  # staging buffers in flight
WAIT_SLICE_NS = 100_000_000


class Staging:
    def __init__(self, backend):
        self.backend, self.system, self.hsa = backend, backend.system, backend.hsa
        self._lock = threading.Lock()
        self._buffers: list[int] = []
        self._signals: list = []
        self.chunks = 0                        # chunks moved by DMA (for tests and benchmarks)

    def _ready(self) -> None:
        if self._buffers:
            return
        for _ in range(DEPTH):
            self._buffers.append(self.system.alloc_host(CHUNK))
            out = ffi.new("hsa_signal_t*")
            self.hsa.check(self.hsa.lib.hsa_signal_create(0, 0, ffi.NULL, out), "hsa_signal_create")
            self._signals.append(out[0])

    def close(self) -> None:
        with self._lock:
            for b in self._buffers:
                self.system.free_host(b)
            for s in self._signals:
                self.hsa.lib.hsa_signal_destroy(s)
            self._buffers, self._signals = [], []

    def _dma(self, k: int, dst: int, dst_agent, src: int, src_agent, n: int) -> None:
        sig = self._signals[k]
        self.hsa.lib.hsa_signal_store_relaxed(sig, 1)
        self.hsa.check(self.hsa.lib.hsa_amd_memory_async_copy(ffi.cast("void*", dst), dst_agent, ffi.cast("void*", src),
                                                               src_agent, n, 0, ffi.NULL, sig),
                       "hsa_amd_memory_async_copy")
        self.chunks += 1

    def _wait(self, k: int) -> None:
        sig, lib = self._signals[k], self.hsa.lib
        while True:
            value = lib.hsa_signal_wait_scacquire(sig, api.COND_LT, 1, WAIT_SLICE_NS, api.WAIT_BLOCKED)
            if value < 0:
                raise HipError(hipError_t.hipErrorLaunchFailure, "a staged copy's DMA failed")
            if value < 1:
                return
            self.backend.check_usable()        # a GPU that lost its queues would never finish the DMA

    def to_device(self, dst: int, src: int, size: int) -> None:
        """``size`` bytes from pageable host memory at ``src`` to device memory at ``dst``."""
        gpu, cpu = self.backend.agent.struct, self.system.cpu
        dst = self.backend.device_address(dst)
        with self._lock:
            self._ready()
            busy = [False] * DEPTH
            for i, off in enumerate(range(0, size, CHUNK)):
                k, n = i % DEPTH, min(CHUNK, size - off)
                if busy[k]:
                    self._wait(k)                   # the buffer's previous chunk has left it
                ctypes.memmove(self._buffers[k], src + off, n)
                self._dma(k, dst + off, gpu, self._buffers[k], cpu, n)
                busy[k] = True
            for k in range(DEPTH):
                if busy[k]:
                    self._wait(k)

    def to_host(self, dst: int, src: int, size: int) -> None:
        """``size`` bytes from device memory at ``src`` to pageable host memory at ``dst``."""
        gpu, cpu = self.backend.agent.struct, self.system.cpu
        src = self.backend.device_address(src)
        offsets = list(range(0, size, CHUNK))
        with self._lock:
            self._ready()

            def issue(i: int) -> None:
                off = offsets[i]
                self._dma(i % DEPTH, self._buffers[i % DEPTH], cpu, src + off, gpu, min(CHUNK, size - off))

            for i in range(min(DEPTH, len(offsets))):
                issue(i)
            for i, off in enumerate(offsets):
                k = i % DEPTH
                self._wait(k)
                ctypes.memmove(dst + off, self._buffers[k], min(CHUNK, size - off))
                if i + DEPTH < len(offsets):
                    issue(i + DEPTH)                # the buffer is drained: its next chunk may come in
