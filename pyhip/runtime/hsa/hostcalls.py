"""Hostcalls on the HSA backend as on a real GPU: one host listener thread per device, as ROCclr's
``HostcallListener`` (rocclr/device/devhostcall.cpp).

The listener owns a ROCr signal made with ``hsa_signal_create`` and no consumers — an interrupt signal, whose
amd_signal_t has an event mailbox and event id.  Every hostcall buffer of the device names it as its doorbell.
ockl's hostcall pushes its packet on the buffer's ready stack and adds 1 to the doorbell's value; the signal
update stores the event id in the mailbox and sends MSG_INTERRUPT, so amdkfd sets the event and the
listener's ``hsa_signal_wait_scacquire(doorbell, NE, last value)`` returns.  It then serves every buffer of
the device (HostcallBuffer.service takes a ready stack with an atomic exchange, so waves may go on pushing
meanwhile) and waits for the next change.  Nothing here needs the emulator: on pyhip's emulated GPU behind
the drop-in thunk, the emulated wave's s_sendmsg reaches the thunk's event page the same way.

Closing stores SIGNAL_DONE (all ones, as ROCclr) in the doorbell, joins the thread and destroys the signal;
the HSA system closes its listeners before ``hsa_shut_down``."""
from __future__ import annotations

import sys
import threading

from . import api
from .api import ffi

SIGNAL_DONE = -1                   # ROCclr's SIGNAL_DONE (UINT64_MAX) as an hsa_signal_value_t
FOREVER = 0xFFFFFFFFFFFFFFFF


class HostcallListener:
    def __init__(self, hsa, name: str):
        self.hsa = hsa
        out = ffi.new("hsa_signal_t*")
        hsa.check(hsa.lib.hsa_signal_create(0, 0, ffi.NULL, out), "hsa_signal_create")
        self.signal = out[0]
        self.doorbell = int(self.signal.handle)      # the amd_signal_t address the device's ockl increments
        self._buffers: set = set()
        self._lock = threading.Lock()
        self.served = 0                              # doorbell changes the listener woke up for
        self._thread = threading.Thread(target=self._listen, name=f"pyhip hostcalls {name}", daemon=True)
        self._thread.start()

    def add(self, buf) -> None:
        with self._lock:
            self._buffers.add(buf)

    def remove(self, buf) -> None:
        with self._lock:
            self._buffers.discard(buf)

    def _listen(self) -> None:
        lib, seen = self.hsa.lib, 0
        while True:
            value = lib.hsa_signal_wait_scacquire(self.signal, api.COND_NE, seen, FOREVER, api.WAIT_BLOCKED)
            if value == SIGNAL_DONE:
                return
            if value == seen:                        # a spurious return
                continue
            seen = value
            self.served += 1
            with self._lock:
                buffers = list(self._buffers)
            for buf in buffers:
                try:
                    buf.service()
                except Exception as exc:  # noqa: BLE001 - the listener must outlive a bad request
                    print(f"pyhip: hostcall service failed: {exc!r}", file=sys.stderr)

    def close(self) -> None:
        if self._thread is None:
            return
        self.hsa.lib.hsa_signal_store_screlease(self.signal, SIGNAL_DONE)
        self._thread.join()
        self._thread = None
        self.hsa.lib.hsa_signal_destroy(self.signal)
