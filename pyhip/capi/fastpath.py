"""Registering launch configurations with the shim's native launch path (native/hip/fastlaunch.c).

After a hipLaunchKernel went through Python successfully, :func:`register` hands the shim everything a
repeat of the same (handle, stream, grid, block, shared memory) needs: the full kernarg segment with the
hidden arguments filled for that geometry, where each explicit argument goes, the AQL dispatch packet, the
stream's queue, kernarg ring and counter signal.  Repeats then run in C without the interpreter.

Only configurations whose kernarg segment is fully determined by geometry + explicit arguments are
registered (the packer's hidden arguments are: block counts, group sizes, remainders, dimensions, dynamic
LDS, offsets), on a stream the runtime grants native launches to (:meth:`Stream.fast_state`).
"""
from __future__ import annotations

import weakref

import numpy as np

from ..aql import KernelDispatchPacket
from ..aql.native import NativeBlock, ffi as aql_ffi, lib as aql_lib
from ..aql.signal import Signal
from ..emu.device import DEVICE_STRIDE

MAX_ARGS = 64
MAX_KERNARG = 2048


class FastPath:
    def __init__(self, ffi, lib, runtime):
        self.ffi, self.lib, self.rt = ffi, lib, runtime
        names = ("pyhip_queue_reserve", "pyhip_queue_publish", "pyhip_signal_add")
        if getattr(runtime, "backend_kind", "emu") == "hsa":     # ROCr's queues and signals
            from ..runtime.hsa.backend import HsaFastLaunchState
            names = HsaFastLaunchState.publish_functions
        fns = [aql_ffi.cast("uintptr_t", aql_ffi.addressof(aql_lib, n)) for n in names]
        lib.pyhip_fast_set_fns(*(ffi.cast("void*", int(f)) for f in fns))
        self.enabled = True
        self._handles: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()   # stream -> its C handle
        self._event_memory: dict = {}           # C event handle -> (its signal, its state block)
        self._retired: list = []                # those of destroyed events whose last record is in flight
        self.sync_enabled = getattr(runtime, "backend_kind", "emu") != "hsa"     # counters are pyhip signals
        if self.sync_enabled:
            waits = [aql_ffi.cast("uintptr_t", aql_ffi.addressof(aql_lib, n))
                     for n in ("pyhip_signal_wait", "pyhip_fault_epoch")]
            lib.pyhip_sync_set_fns(*(ffi.cast("void*", int(f)) for f in waits))

    # -- synchronizing in C (fastlaunch.c): the runtime's armed state (Device.arm_sync) mirrored ------------
    def mirror_armed(self, dev, stream, counter, epoch: int) -> None:
        """Device.fast_sync_arm: arm (stream given) or disarm (None) hipDeviceSynchronize / hipStreamSynchronize
        in C.  A stream whose C handle is unknown (never launched through the C ABI) is not armed in C."""
        handle = None
        if stream is not None and self.enabled and self.sync_enabled:
            handle = 0 if stream.is_null else self._handles.get(stream)
        null = self.ffi.NULL
        if handle is None:
            self.lib.pyhip_sync_arm(dev.index, null, null, 0, null, null)
            return
        fs = stream._fast if dev.fast_stream is stream else None      # the grant's queue: events recorded in C
        queue = null if fs is None else self.ffi.cast("void*", fs.queue.address)
        launches = null if fs is None else self.ffi.cast("uint64_t*", fs.launches.address)
        self.lib.pyhip_sync_arm(dev.index, self.ffi.cast("void*", handle), self.ffi.cast("void*", counter.handle),
                                epoch, queue, launches)

    # -- events in C (fastlaunch.c): each C ABI event's own signal and state block ----------------------------
    def register_event(self, handle: int, event) -> None:
        """Let C record ``event`` (C handle ``handle``) on an armed device and answer for such records."""
        if not (self.enabled and self.sync_enabled):
            return
        sig = Signal(0)
        sig.sticky = True
        state = NativeBlock(16)
        if self.lib.pyhip_event_register(self.ffi.cast("void*", handle), event.device.index, event.flags,
                                         self.ffi.cast("void*", sig.handle), self.ffi.cast("uint64_t*", state.address)):
            event.attach_native(sig, state.u64(0))
            self._event_memory[handle] = (sig, state)

    def unregister_event(self, handle: int, event) -> None:
        """hipEventDestroy: C forgets the event (after a record in progress); its signal lives on while a record's
        packet may still complete it."""
        mem = self._event_memory.pop(handle, None)
        if mem is None:
            return
        self.lib.pyhip_event_register(self.ffi.cast("void*", handle), 0, 0, self.ffi.NULL, self.ffi.NULL)
        self._retired = [m for m in self._retired if m[0].load() != 0]
        if mem[0].load() != 0:
            self._retired.append(mem)

    def invalidate(self, stream=None) -> None:
        """Drop every native entry (streams, modules and devices changing make any of them suspect)."""
        self.lib.pyhip_fast_invalidate(self.ffi.NULL)

    def hook_device(self, dev) -> None:
        if dev.fast_invalidate is None:
            dev.fast_invalidate = self.invalidate
        if dev.fast_sync_arm is None:
            dev.fast_sync_arm = self.mirror_armed
            memory = getattr(dev.backend, "memory", None) if self.sync_enabled else None
            if memory is not None:
                with memory.lock:               # no table change between the whole table and the first update
                    memory.on_reindex.append(lambda index, d=dev: self.publish_memory(d, index))
                    self.publish_memory(dev)

    # -- copies and fills in C (fastlaunch.c): the device's address range and allocation table mirrored ------
    def publish_memory(self, dev, index=None) -> None:
        """Hand C ``dev``'s address range and, when its arena never moves, its allocations in that range as
        (start, end, host address) (``index``: the memory's table index, DeviceMemory.on_reindex's argument).
        A change of one allocation (``index.change``) updates C's table in place: a binary search there."""
        memory = dev.backend.memory
        lo, hi = memory.base, memory.base + DEVICE_STRIDE
        if not getattr(memory, "_fixed_arena", False) or getattr(memory, "shadow", None) is not None:
            self.lib.pyhip_mem_set(dev.index, lo, hi, self.ffi.NULL, 0)    # every address in range: Python
            return                                                          # (initcheck: its shadow sees them)
        if index is None:
            index = memory._index
        change = index.change
        if change is not None and self._publish_change(dev.index, index, change, lo, hi):
            return
        starts, _, ext, _ = index
        own = (starts >= lo) & (starts < hi) & ~ext            # arena allocations (mappings: Python)
        # each allocation's exact end (the table's), not where its region ends: a region may reach to the end
        # of the address space the allocation owns (emu/memory.py), and a copy past the allocation is an error
        spans = np.ascontiguousarray(np.stack([starts[own], index.table_ends[own], index.hosts[own]], axis=1),
                                     np.uint64)
        self.lib.pyhip_mem_set(dev.index, lo, hi, self.ffi.from_buffer("uint64_t[]", spans), len(spans))

    def _publish_change(self, device: int, index, change, lo: int, hi: int) -> bool:
        """One allocation added or removed: C's table updated in place.  False: publish the whole table."""
        if change[0] == "remove":
            start = change[2]
            return not lo <= start < hi or bool(self.lib.pyhip_mem_remove(device, start))
        i = change[1]
        start = int(index[0][i])
        if index[2][i] or not lo <= start < hi:
            return True                                         # a mapping: never in C's table
        return bool(self.lib.pyhip_mem_insert(device, start, int(index.table_ends[i]), int(index.hosts[i])))

    def register(self, c_handle, c_stream, grid, block, shared: int, function, stream) -> bool:
        if not self.enabled:
            return False
        self.hook_device(stream.device)
        kernel = function.kernel
        explicit = kernel.explicit_args
        size = function.packer.size
        if len(explicit) > MAX_ARGS or size > MAX_KERNARG:
            return False
        fs = stream.fast_state()
        if fs is None or size > fs.SLOT:
            return False
        blob = bytes(function.packer.explicit_end)
        template = bytes(function.packer.pack_raw(blob, grid, block, dynamic_lds=shared,
                                                  extra_hidden=function.hidden_values(stream, grid, block)))
        items = tuple(g * b for g, b in zip(grid, block))
        dims = 3 if items[2] > 1 or block[2] > 1 else (2 if items[1] > 1 or block[1] > 1 else 1)
        packet = KernelDispatchPacket(dims, tuple(block), items, stream.device.private_segment_size(kernel),
                                      kernel.group_segment_fixed_size + shared, function.kernel_object, 0,
                                      fs.signal.handle).pack()
        e = self.ffi.new("pyhip_fast_entry*")
        e.handle = c_handle
        e.stream = c_stream
        e.grid = list(grid)
        e.block = list(block)
        e.shared = shared
        e.nargs = len(explicit)
        e.kernarg_size = len(template)
        for i, a in enumerate(explicit):
            e.arg_offset[i], e.arg_size[i] = a.offset, a.size
        self.ffi.memmove(e.kernarg, template, len(template))
        self.ffi.memmove(e.packet, packet, 64)
        e.queue = self.ffi.cast("void*", fs.queue.address)
        e.ring = self.ffi.cast("uint8_t*", fs.ring_address)
        e.slot_size = fs.SLOT
        e.queue_mask = fs.queue.size - 1
        e.counter = self.ffi.cast("void*", fs.signal.handle)
        e.launches = self.ffi.cast("uint64_t*", fs.launches.address)
        e.device = stream.device.index       # the null stream (0) is the calling thread's current device
        self._handles[stream] = int(self.ffi.cast("uintptr_t", c_stream))
        return bool(self.lib.pyhip_fast_register(e))

    def hits(self) -> int:
        return int(self.lib.pyhip_fast_hit_count())
