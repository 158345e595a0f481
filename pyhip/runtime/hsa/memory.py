"""Device memory on the HSA backend: VRAM from the agent's pool, kernargs carved from slabs of ROCr's kernarg
pool, the allocation table pointer lookups use, copies and fills from the host (through ROCr, or in place
where the CPU really has the memory mapped), pinned host memory through the address ROCr returns."""
from __future__ import annotations

import bisect

from ...emu.memory import host_range_mapped
from ...errors import HipError, hipError_t
from . import api
from .api import ffi


class DeviceMemory:
    """The memory half of HsaDeviceBackend (its ``DeviceBackend`` memory interface); the backend sets up the
    state it uses (allocation table, locks, the system) and ``check_usable`` (a GPU that lost its context)."""

    KERNARG_SLAB = 1 << 20

    def alloc(self, size: int, kind: str = "user") -> int:
        if size <= 0:
            raise HipError(hipError_t.hipErrorInvalidValue, "allocation size must be positive")
        if kind == "kernarg" and size <= self.KERNARG_SLAB // 4:
            return self._kernarg_from_slab(size)
        return self._pool_alloc(size, kind)

    def _kernarg_from_slab(self, size: int) -> int:
        """Kernarg buffers are carved from 1 MiB slabs of the kernarg pool (one ROCr allocation and one
        allow-access per slab, not per launch); the runtime recycles them per size once their command completed."""
        size = (size + 4095) & ~4095
        with self._lock:
            nxt, end = self._slab
            if nxt + size <= end:
                self._slab = (nxt + size, end)
                self._allocs[nxt] = (size, "kernarg")
                bisect.insort(self._starts, nxt)
                self._host_visible.add(nxt)
                return nxt
        base = self._pool_alloc(self.KERNARG_SLAB, "kernarg-slab")
        with self._lock:
            del self._allocs[base]                 # the slab itself is not an allocation: its pieces are
            self._starts.remove(base)
            self._allocs[base] = (size, "kernarg")
            bisect.insort(self._starts, base)
            self._slab = (base + size, base + self.KERNARG_SLAB)
        return base

    def _pool_alloc(self, size: int, kind: str) -> int:
        host = kind.startswith("kernarg")
        pool = self.system.kernarg_pool if host else self.agent.vram_pool
        out = ffi.new("void**")
        st = self.hsa.lib.hsa_amd_memory_pool_allocate(pool, size, 0, out)
        if st != 0:
            raise HipError(hipError_t.hipErrorOutOfMemory, f"{size} bytes: {self.hsa.status_string(st)}")
        addr = int(ffi.cast("uintptr_t", out[0]))
        if host:
            a = ffi.new("hsa_agent_t[1]", [self.agent.struct])
            self.hsa.check(self.hsa.lib.hsa_amd_agents_allow_access(1, a, ffi.NULL, out[0]), "allow access")
            self._host_visible.add(addr)
        elif self.peers:
            self._allow_peers(addr)
        with self._lock:
            self._allocs[addr] = (size, kind)
            bisect.insort(self._starts, addr)
            self.used += size
        return addr

    # -- peer access (hipDeviceEnablePeerAccess from another GPU to this one) ------------------------------
    def _allow_peers(self, addr: int) -> None:
        agents = ffi.new("hsa_agent_t[]", [self.agent.struct] + [p.agent.struct for p in self.peers])
        self.hsa.check(self.hsa.lib.hsa_amd_agents_allow_access(len(agents), agents, ffi.NULL, ffi.cast("void*", addr)),
                       "hsa_amd_agents_allow_access (peer)")

    def peer_reachable(self, other) -> bool:
        """Whether ROCr lets this GPU's agent access ``other``'s VRAM pool at all (a board without peer-to-peer
        over PCIe reports it never allowed)."""
        out = ffi.new("uint32_t*", api.POOL_ACCESS_NEVER_ALLOWED)
        st = self.hsa.lib.hsa_amd_agent_memory_pool_get_info(self.agent.struct, other.agent.vram_pool,
                                                             api.AGENT_POOL_INFO_ACCESS, out)
        return st == 0 and out[0] != api.POOL_ACCESS_NEVER_ALLOWED

    def map_peer(self, other) -> None:
        """This GPU's kernels reach the VRAM of backend ``other``'s GPU at its addresses: every allocation
        ``other`` made so far and every later one (ROCr's hsa_amd_agents_allow_access, as AMD's HIP grants
        peer access)."""
        with other._lock:
            if self in other.peers:
                return
            other.peers.append(self)
            vram = [a for a, (_, kind) in other._allocs.items() if not kind.startswith("kernarg")]
        for addr in vram:
            other._allow_peers(addr)

    def unmap_peer(self, other) -> None:
        """``other``'s later allocations are not granted to this GPU any more; ROCr cannot take access back
        from those already granted, so they stay reachable (as under AMD's HIP)."""
        with other._lock:
            if self in other.peers:
                other.peers.remove(self)

    def track(self, addr: int, size: int, kind: str) -> None:
        """Device memory this backend did not allocate (variables of loaded code objects)."""
        with self._lock:
            if addr not in self._allocs:
                self._allocs[addr] = (size, kind)
                bisect.insort(self._starts, addr)

    def untrack(self, addr: int) -> None:
        with self._lock:
            if self._allocs.pop(addr, None) is not None:
                self._starts.remove(addr)

    def free(self, addr: int) -> None:
        with self._lock:
            entry = self._allocs.get(addr)
            if entry is None or entry[1] != "user":
                raise HipError(hipError_t.hipErrorInvalidValue, f"0x{addr:x} is not the start of a hipMalloc allocation")
            del self._allocs[addr]
            self._starts.remove(addr)
            self._host_visible.discard(addr)
            self._host_hidden.discard(addr)
            self.used -= entry[0]
        self.hsa.lib.hsa_amd_memory_pool_free(ffi.cast("void*", addr))

    # -- sharing with other processes (HIP IPC: pyhip/runtime/ipc.py) -------------------------------------
    IPC_HANDLE_SIZE = 32                        # hsa_amd_ipc_memory_t

    def ipc_export(self, start: int) -> tuple[bytes, int]:
        """ROCr's handle of the hipMalloc allocation at ``start`` (hsa_amd_ipc_memory_create: the thunk's
        hsaKmtShareMemory of its block) and the allocation's size."""
        self.check_usable()
        with self._lock:
            entry = self._allocs.get(start)
        if entry is None or entry[1] != "user":
            raise HipError(hipError_t.hipErrorInvalidValue, f"0x{start:x} is not the start of a hipMalloc allocation")
        h = ffi.new("hsa_amd_ipc_memory_t*")
        length = (entry[0] + 4095) & ~4095      # ROCr 5.2 shares whole pages (AMD's HIP passes them too)
        st = self.hsa.lib.hsa_amd_ipc_memory_create(ffi.cast("void*", start), length, h)
        if st != 0:
            raise HipError(api.hip_error(st), f"hsa_amd_ipc_memory_create: {self.hsa.status_string(st)}")
        return bytes(ffi.buffer(h)), entry[0]

    def ipc_attach(self, raw: bytes, size: int) -> int:
        """Another process's allocation of ``size`` bytes (its ROCr handle ``raw``) mapped for this GPU's
        agent (hsa_amd_ipc_memory_attach); an allocation of kind 'ipc' here until :meth:`ipc_detach`."""
        self.check_usable()
        h = ffi.new("hsa_amd_ipc_memory_t*")
        ffi.memmove(h, raw, self.IPC_HANDLE_SIZE)
        agents = ffi.new("hsa_agent_t[1]", [self.agent.struct])
        out = ffi.new("void**")
        st = self.hsa.lib.hsa_amd_ipc_memory_attach(h, size, 1, agents, out)
        if st != 0:
            raise HipError(api.hip_error(st), f"hsa_amd_ipc_memory_attach: {self.hsa.status_string(st)} (a bad or "
                                              "stale IPC handle)")
        addr = int(ffi.cast("uintptr_t", out[0]))
        self.track(addr, size, "ipc")
        return addr

    def ipc_detach(self, addr: int) -> None:
        self.untrack(addr)
        st = self.hsa.lib.hsa_amd_ipc_memory_detach(ffi.cast("void*", addr))
        if st != 0:
            raise HipError(api.hip_error(st), f"hsa_amd_ipc_memory_detach: {self.hsa.status_string(st)}")

    def allocation_size(self, addr: int) -> int:
        return self._allocs[addr][0]

    def _find(self, addr: int):
        with self._lock:
            i = bisect.bisect_right(self._starts, addr) - 1
            if i >= 0:
                start = self._starts[i]
                size, kind = self._allocs[start]
                if addr < start + size:
                    return start, size, kind
        return None

    def find(self, addr: int):
        """``(start, end, kind)`` of this device's allocation holding ``addr``, or None (as the emulator
        backend's)."""
        hit = self._find(addr)
        return None if hit is None else (hit[0], hit[0] + hit[1], hit[2])

    def owns(self, addr: int) -> bool:
        return self._find(addr) is not None

    def in_device_range(self, addr: int) -> bool:
        hit = self._find(addr)
        return hit is not None and hit[2] == "user"

    def check_range(self, addr: int, size: int) -> None:
        hit = self._find(addr)
        if hit is None or addr + size > hit[0] + hit[1]:
            raise HipError(hipError_t.hipErrorInvalidValue, f"[0x{addr:x}, +{size}) is not inside one device allocation")

    def read(self, addr: int, size: int) -> bytes:
        self.check_usable()                     # hsa_memory_copy runs ROCr's blit kernels on the GPU
        buf = bytearray(size)
        self.hsa.check(self.hsa.lib.hsa_memory_copy(ffi.from_buffer(buf), ffi.cast("void*", addr), size), "read")
        return bytes(buf)

    def write(self, addr: int, data) -> None:
        self.check_usable()
        data = bytes(data)
        if addr in self._host_visible:          # kernargs, CPU-visible VRAM: written directly
            ffi.memmove(ffi.cast("void*", addr), data, len(data))
            self.host_wrote(addr, len(data))
            return
        self.hsa.check(self.hsa.lib.hsa_memory_copy(ffi.cast("void*", addr), ffi.from_buffer(data), len(data)),
                       "write")

    def host_wrote(self, addr: int, size: int) -> None:
        """The host wrote [addr, addr + size) through the CPU's mapping: if that is VRAM, the write may sit in
        the GPU's HDP (the host data path's buffers) — flushed as AMD's HIP does it (ROCclr: a store to
        HDP_MEM_FLUSH_CNTL, then a load of it so the store has landed) before the GPU is told to read.
        Kernarg and other system memory needs none."""
        hit = self._find(addr)
        if hit is None or hit[2].startswith("kernarg"):
            return
        self.hdp_flush()

    def hdp_flush(self) -> None:
        reg = self.agent.info.get("hdp_mem_flush", 0)
        if reg:
            p = ffi.cast("uint32_t*", reg)
            p[0] = 1
            p[0]                                # read back: the store reached the register

    def zero_fresh(self, addr: int, size: int) -> None:
        """Zero bytes the runtime just allocated for its own reasons (DeviceBackend.zero_fresh: no initcheck here)."""
        self.fill(addr, 0, size, 1)

    def fill(self, addr: int, value: int, count: int, width: int) -> None:
        pattern = int(value).to_bytes(width, "little")
        if width < 4:
            pattern = pattern * (4 // width)
        nbytes = count * width
        word = int.from_bytes(pattern[:4], "little")
        head = (-addr) % 4 if width < 4 else 0
        head = min(head, nbytes)
        body = (nbytes - head) // 4 * 4
        if head:
            self.write(addr, (pattern * 4)[(addr % 4):(addr % 4) + head])
        if body and width <= 4 and (addr + head) % 4 == 0:
            self.hsa.check(self.hsa.lib.hsa_amd_memory_fill(ffi.cast("void*", addr + head), word, body // 4),
                           "hsa_amd_memory_fill")
        elif body:
            self.write(addr + head, (pattern * ((body // len(pattern)) + 1))[:body])
        tail = nbytes - head - body
        if tail:
            off = (head + body) % len(pattern)
            self.write(addr + head + body, (pattern * 2)[off:off + tail])

    def host_view(self, addr: int, size: int):
        """Device memory the CPU can access directly (system memory; VRAM once the CPU agent is allowed to,
        which needs a large BAR) as a writable view; otherwise a read-only snapshot.  ROCr 5.2 allows the CPU
        agent on VRAM whatever the BAR, so whether the CPU really has the allocation mapped is checked too
        (behind a small BAR it has not: host access goes through copies)."""
        hit = self._find(addr)
        if hit is None:
            raise HipError(hipError_t.hipErrorInvalidValue, f"0x{addr:x} is not device memory")
        start = hit[0]
        if start not in self._host_visible and start not in self._host_hidden and hit[2] == "user":
            cpu = ffi.new("hsa_agent_t[1]", [self.system.cpu])
            if self.hsa.lib.hsa_amd_agents_allow_access(1, cpu, ffi.NULL, ffi.cast("void*", start)) == 0 \
                    and host_range_mapped(start, hit[1]):
                self._host_visible.add(start)
            else:
                self._host_hidden.add(start)
        if start in self._host_visible:
            return memoryview(ffi.buffer(ffi.cast("void*", addr), size))
        return memoryview(self.read(addr, size))

    def mem_info(self) -> tuple[int, int]:
        return self.agent.vram_size - self.used, self.agent.vram_size

    def map_host(self, addr: int, array) -> None:
        self.system.lock_host(addr, array.nbytes)
        self._locked[addr] = array.nbytes

    def alloc_host(self, size: int) -> int:
        return self.system.alloc_host(size)

    def free_host(self, addr: int) -> bool:
        return self.system.free_host(addr)

    def device_address(self, addr: int) -> int:
        """Where kernels and copies reach host address ``addr`` of pinned memory (ROCr's agent pointer)."""
        return self.system.agent_address(addr)

    def unmap_host(self, addr: int) -> bool:
        if self._locked.pop(addr, None) is None:
            return False
        self.system.unlock_host(addr)
        return True

    def free_all_user(self) -> None:
        for a in [a for a, (_, k) in self._allocs.items() if k == "user"]:
            self.free(a)
