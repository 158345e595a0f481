"""Hostcalls: device code asking the host for a service (``printf`` in hipcc 5.2 code objects).

A kernel whose metadata has a ``hidden_hostcall_buffer`` argument gets the address of a hostcall buffer,
laid out as ROCclr's (``rocclr/device/devhostcall.hpp``): a header (packet headers, payloads, doorbell
signal, free stack, ready stack, index mask) followed by N packet headers (next, activemask, service,
control) and N payloads of 64 lanes × 8 u64.  A wave pops a free packet, fills its lanes' payloads, pushes
it on the ready stack, rings the doorbell and sleeps (``s_sleep``) until the host clears the packet's
READY bit; then it reads the answers and returns the packet to the free stack.

Who calls :meth:`HostcallBuffer.service`: on pyhip's emulator backend, the emulated device whenever a wave
of a dispatch that uses this buffer executes ``s_sleep`` (in the dispatching thread); on the HSA backend, as
on a real GPU, a host listener thread per device (runtime/hsa/hostcalls.py, ROCclr's HostcallListener) woken
by the buffer's doorbell — a ROCr signal with an event, which ockl's hostcall increments — while the device
runs.  Either way the ready stack is taken with an atomic exchange and a packet's READY bit cleared with a
release store, after its answers are written.  One buffer per stream (ROCclr has one per hardware queue).

Services: 1 = function call (payload[0] is a host function pointer), 2 = printf (messages of u64 words
spread over several hostcalls: ROCclr's devhcmessages.cpp protocol, formatted by :mod:`pyhip.runtime.printf`),
3 = device memory (malloc/free from device code).
"""
from __future__ import annotations

import ctypes
import threading

import numpy as np

from ..aql.native import ffi as aql_ffi
from ..aql.native import lib as aql_lib
from .pinned import pin, unpin
from ..errors import HipError
from .printf import format_message, emit

NUM_PACKETS = 256           # waves that may wait on the host at once (more simply wait for a free packet)
HEADER_START = 56           # sizeof(HostcallBuffer) rounded to alignof(PacketHeader)
HEADER_SIZE = 24
PAYLOAD_SIZE = 64 * 8 * 8
SIGNAL_SIZE = 64
SERVICE_FUNCTION_CALL, SERVICE_PRINTF, SERVICE_DEVMEM = 1, 2, 3


class HostcallBuffer:
    def __init__(self, device, doorbell: int = 0):
        """``doorbell``: the amd_signal_t the device rings (0: one without event mailbox, in the buffer)."""
        self.device = device
        n = NUM_PACKETS
        self.payload_start = (HEADER_START + HEADER_SIZE * n + 63) // 64 * 64
        self.signal_off = self.payload_start + PAYLOAD_SIZE * n
        size = self.signal_off + SIGNAL_SIZE
        self.address, self.mem = pin([device], size)       # one address for host and GPU (pinned.py)
        self.words = self.mem.view(np.uint64)
        w = self.words
        w[0] = self.address + HEADER_START                  # headers
        w[1] = self.address + self.payload_start            # payloads
        w[2] = doorbell or self.address + self.signal_off   # doorbell: the listener's signal, or a bare one
        self.mask = n - 1
        w[5] = self.mask                                    # index mask
        # free stack: every packet, headers[1].next -> 0 tagged so that no pointer is 0 (as ROCclr)
        nxt = self.mask + 1
        hdr = HEADER_START // 8
        w[hdr] = 0
        for i in range(1, n):
            w[hdr + i * 3] = nxt
            nxt = i
        w[3] = nxt                                          # free stack
        w[4] = 0                                            # ready stack
        self.lock = threading.Lock()
        self.messages: dict[int, list[int]] = {}
        self._free_ids: list[int] = []
        self._next_id = 0

    def close(self) -> None:
        unpin([self.device], self.address)

    # -- the host side -------------------------------------------------------------------------------------
    def service(self) -> None:
        with self.lock:
            w = self.words
            ready = _take(self.address + 32)                # the ready stack, while waves may push on it
            while ready:
                idx = ready & self.mask
                h = HEADER_START // 8 + idx * 3
                nxt = int(w[h])
                active = int(w[h + 1])
                service = int(w[h + 2]) & 0xFFFFFFFF
                base = (self.payload_start + idx * PAYLOAD_SIZE) // 8
                while active:
                    lane = (active & -active).bit_length() - 1
                    active &= active - 1
                    slot = w[base + lane * 8:base + lane * 8 + 8]
                    self._handle(service, slot)
                control = int(w[h + 2]) >> 32
                aql_lib.pyhip_store_release_u64(aql_ffi.cast("uint64_t*", self.address + (h + 2) * 8),
                                                (int(w[h + 2]) & 0xFFFFFFFF) | ((control & ~1) << 32))
                ready = nxt

    def _handle(self, service: int, slot: np.ndarray) -> None:
        if service == SERVICE_PRINTF:
            self._message(slot)
        elif service == SERVICE_FUNCTION_CALL:
            fn = ctypes.CFUNCTYPE(None, ctypes.POINTER(ctypes.c_uint64), ctypes.POINTER(ctypes.c_uint64))(int(slot[0]))
            args = (ctypes.c_uint64 * 7)(*[int(x) for x in slot[1:8]])
            out = (ctypes.c_uint64 * 2)()
            fn(out, args)
            slot[0], slot[1] = out[0], out[1]
        elif service == SERVICE_DEVMEM:
            slot[0] = device_heap_service(self.device, int(slot[0]), int(slot[1]))
        else:
            slot[0] = np.uint64(0xFFFFFFFFFFFFFFFF)

    def _message(self, slot: np.ndarray) -> None:
        """ROCclr's message protocol: descriptor bit 0 BEGIN, bit 1 END, bits 5-7 length, bits 8-63 id."""
        desc = int(slot[0])
        if desc & 1:
            mid = self._free_ids.pop() if self._free_ids else self._new_id()
            self.messages[mid] = []
            desc = (desc & ~1 & 0xFF) | (mid << 8)
            slot[0] = desc
        mid = desc >> 8
        data = self.messages.get(mid)
        if data is None:
            slot[0] = np.uint64(0xFFFFFFFFFFFFFFFF)
            return
        n = (desc >> 5) & 7
        data.extend(int(x) for x in slot[1:1 + n])
        if desc & 2:
            del self.messages[mid]
            self._free_ids.append(mid)
            stream, text = format_message(data)
            emit(stream, text)
            slot[0] = len(text) if text is not None else np.uint64(0xFFFFFFFFFFFFFFFF)

    def _new_id(self) -> int:
        self._next_id += 1
        return self._next_id - 1


def _take(address: int) -> int:
    """Atomically exchange the u64 at ``address`` with 0 (a compare-and-swap loop): what it held."""
    p = aql_ffi.cast("uint64_t*", address)
    while True:
        old = aql_lib.pyhip_load_acquire_u64(p)
        if not old or aql_lib.pyhip_cas_u64(p, old, 0):
            return old


def device_heap_service(dev, addr: int, size: int) -> int:
    """ROCclr's SERVICE_DEVMEM hostcall, made by ockl's ``__ockl_devmem_request(addr, size)`` when device
    malloc's heap needs another slab: a nonzero ``size`` asks for that many bytes of device memory (the
    address is returned, 0 when the device is out of memory, which device malloc reports as NULL); a zero
    ``size`` frees ``addr`` and returns 0. Runs on the hostcall thread while the kernel waits, so it neither
    synchronizes the device nor raises."""
    if size:
        try:
            return int(dev.backend.alloc(int(size)))
        except HipError:
            return 0
    if addr:
        try:
            dev.backend.free(int(addr))
        except HipError:
            pass
    return 0
