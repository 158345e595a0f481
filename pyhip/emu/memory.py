"""Emulated device memory: one arena for device allocations plus host buffers mapped at their own addresses
(pinned memory), an allocation table, and vectorized bounds-checked lane accesses.

The arena is the device's whole capacity reserved at once as address space (an anonymous mapping without a
swap reservation: pages cost memory only once touched) and never moves, so a native dispatch's raw pointers
stay valid while other threads allocate.  Where such a mapping is refused (strict overcommit), the arena
starts smaller and grows by copying: an allocation that grows it then waits until no native dispatch holds
pointers into it (``DeviceMemory.pinned``).

A bad access raises :class:`GPUFault` (hipErrorIllegalAddress) carrying the offending addresses; the
engine adds kernel, wave, PC and instruction before reporting it.

Lane accesses are checked as the GPU checks them: against mapped memory, at the granularity the GPU maps it.
AMD's runtime carves allocations below 2 MiB out of 2 MiB blocks (ROCr's fragment allocator), so on a GPU an
access a little past an allocation's end lands in mapped memory and does not fault (hip-tests'
``hipMallocPitch_KernelLaunch`` reads rows past its allocation).  Here every allocation of an arena this
memory reserved itself owns whole ``FRAGMENT``s of address space (device memory is accounted by pages,
``GRANULE``: address space is reserved beyond the capacity for this), so such an access reads or writes that
allocation's own padding, never another allocation, and does not fault; a given arena (pyhip's KFD thunk,
where ROCr lays out its own blocks) gives each allocation its own pages.  memcheck (pyhip/sanitizer) makes
the lane checks exact (``set_memcheck``): the region table then ends every allocation at its exact end, and
freed allocations are quarantined (not reused) so that a later access to them faults and can be named —
or, with the sanitizer's checker, is reported and goes on as the GPU would do it (``DeviceMemory.check``).
"""
from __future__ import annotations

import bisect
import contextlib
import mmap
import os
import threading
import weakref

import numpy as np

from ..errors import HipError, hipError_t
from . import sharedmem
from .memindex import TableIndex

DEVICE_BASE = 0x1000_0000_0000          # 16 TiB: far from the host heap and mmap areas
SHARED_APERTURE = 0x1_0000_0000 * 0x10000   # src_shared_base (LDS aperture, 4 GiB aligned)
PRIVATE_APERTURE = 0x2_0000_0000 * 0x10000  # src_private_base (scratch aperture)
APERTURE_SIZE = 1 << 32
ALIGN = 256
GRANULE = 4096                          # the GPU's page: device memory is accounted in pages
FRAGMENT = 2 << 20                      # the address space an allocation of a reserved arena owns at least
SPARE_ADDRESS_SPACE = 128 << 30         # reserved beyond the capacity for the fragments' padding
QUARANTINE_LIMIT = 16 << 30             # memcheck: address space of freed allocations kept unreused (oldest go)
MAP_NORESERVE = getattr(mmap, "MAP_NORESERVE", 0x4000)     # Linux's value (Python < 3.12 does not name it)


def reserve(size: int) -> tuple[np.ndarray, mmap.mmap] | None:
    """``size`` zero bytes of address space as a uint8 array (and its mapping), or None when the system
    refuses the mapping."""
    try:
        m = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | MAP_NORESERVE)
    except (OSError, ValueError, OverflowError):
        return None
    return np.frombuffer(m, dtype=np.uint8), m



def host_range_mapped(addr: int, size: int) -> bool:
    """Is [addr, addr + size) readable memory of this process (contiguous mappings in /proc/self/maps)?
    Pinning memory that is not there fails, as the kernel driver's page pinning (get_user_pages) does."""
    try:
        with open("/proc/self/maps") as f:
            lines = f.readlines()
    except OSError:                                     # no procfs: trust the caller
        return True
    pos, end = addr, addr + size
    for line in lines:
        rng, perms = line.split(None, 2)[:2]
        lo, hi = (int(x, 16) for x in rng.split("-"))
        if hi <= pos:
            continue
        if lo > pos or perms[0] != "r":
            return False
        pos = hi
        if pos >= end:
            return True
    return False

def _word_view(buf: np.ndarray, offs: np.ndarray, size: int):
    """``(k, buf as k-byte words)`` for lane accesses of ``size`` bytes at byte offsets ``offs`` into the arena
    (at least 16-byte aligned, as numpy allocates) when every access is made of whole naturally aligned k-byte
    words (the largest k of 8, 4, 2 that fits every lane), else ``(0, None)``."""
    for k, dt in ((8, np.uint64), (4, np.uint32), (2, np.uint16)):
        if size % k == 0 and buf.nbytes % k == 0 and not (offs & (k - 1)).any():
            return k, buf.view(dt)
    return 0, None


class GPUFault(HipError):
    """A device-side fault; ``details`` holds kernel, workgroup, wave, pc, instruction, address."""

    def __init__(self, message: str, code: int = hipError_t.hipErrorIllegalAddress, **details):
        self.details = details
        super().__init__(code, message)

    FIELDS = ("kernel", "workgroup", "wave", "lane", "pc", "instruction", "address", "access")

    def __getattr__(self, name):
        # fault.kernel, fault.workgroup, fault.wave, fault.pc, fault.instruction, fault.address, ...
        if name in GPUFault.FIELDS:
            return self.__dict__.get("details", {}).get(name)
        raise AttributeError(name)

    def with_context(self, **ctx) -> "GPUFault":
        d = dict(self.details)
        d.update({k: v for k, v in ctx.items() if v is not None})
        parts = [self.message]
        for key in ("kernel", "workgroup", "wave", "lane", "pc", "instruction", "address", "access"):
            if key in d:
                v = d[key]
                parts.append(f"{key}={'0x%x' % v if key in ('pc', 'address') and isinstance(v, int) else v}")
        return GPUFault("; ".join(parts), self.code, **d)


class Freed:
    """A freed allocation memcheck keeps unreused: ``[start, start + size)`` (the exact size), the address space
    it owned ``[start, start + span)``, and where it was allocated and freed (pyhip/sanitizer's records, or
    None)."""

    __slots__ = ("start", "size", "span", "kind", "allocated", "freed")

    def __init__(self, start, size, span, kind, allocated, freed):
        self.start, self.size, self.span, self.kind = start, size, span, kind
        self.allocated, self.freed = allocated, freed


_LIVE: "weakref.WeakSet[DeviceMemory]" = weakref.WeakSet()
_MEMCHECK: tuple = (False, None, None)    # (exact, origin, checker) for memories created from now on


def set_memcheck(exact: bool, origin=None, checker=None) -> None:
    """memcheck on (``exact``) or off for every device memory, now and later.  ``origin``: fn(event) -> a
    description of where an allocation or free happens (recorded while it is set: memcheck, leaks).  ``checker``
    (pyhip/sanitizer): ``bad_access(memory, addrs, size, bad, write)`` is told of lane accesses outside the
    exact allocations, which then go on as the GPU would do them (``DeviceMemory.check``) instead of
    faulting; ``checked(memory)`` of each memory memcheck is on for; ``freeing(memory)`` before each free."""
    global _MEMCHECK
    _MEMCHECK = (exact, origin, checker)
    for m in list(_LIVE):
        m.set_memcheck(exact, origin, checker)


_INITCHECK = None       # initcheck: fn(memory) -> its shadow (pyhip/sanitizer/initcheck.py), or None


def set_initcheck(shadow_of=None) -> None:
    """initcheck on (``shadow_of``: fn(memory) -> the shadow that tracks which bytes were written) or off
    (None), for every device memory, now and later."""
    global _INITCHECK
    _INITCHECK = shadow_of
    for m in list(_LIVE):
        with m.lock:
            m.shadow = shadow_of(m) if shadow_of is not None and m._fixed_arena else None
            m._reindex()                        # (told to the C ABI's copies: fastpath.publish_memory)


class DeviceMemory:
    def __init__(self, capacity: int = 16 << 30, initial: int = 1 << 32, base: int = DEVICE_BASE,
                 arena: np.ndarray | None = None):
        # np.zeros uses calloc: the arena is reserved lazily, pages cost memory only once touched.  A given
        # ``arena`` (uint8, ``capacity`` bytes; e.g. a mapping whose address is ``base``) is used as it is
        # and never grows: device addresses are then host addresses.
        self.capacity = capacity
        self.base = base                        # each device gets its own range (unified addressing)
        if arena is not None and (arena.dtype != np.uint8 or arena.ndim != 1 or len(arena) < capacity):
            raise ValueError("a given arena must be a flat uint8 array of at least `capacity` bytes")
        self._mapping = None                    # the reserved arena's mapping (pages given back on free)
        if arena is None:
            got = reserve(capacity + SPARE_ADDRESS_SPACE)
            if got is not None:
                arena, self._mapping = got
        self._fixed_arena = arena is not None
        self.fragment = FRAGMENT if self._mapping is not None else GRANULE   # module doc
        self.spans: dict[int, int] = {}         # arena allocation start -> the address space it owns
        self.arena = np.zeros(initial, dtype=np.uint8) if arena is None else arena
        self._arena_address = self.arena.ctypes.data
        self._pins = 0                          # native dispatches holding raw pointers into the arena
        self._unpinned = threading.Condition(threading.RLock())
        self._top = 0                           # bump pointer (bytes into the arena)
        self._free: list[tuple[int, int]] = []  # (offset, size) free blocks
        self.starts: list[int] = []             # sorted allocation start addresses
        self.table: dict[int, tuple[int, int, str, np.ndarray | None]] = {}  # start -> (end, size, kind, ext)
        self._index = TableIndex.empty()        # the table as sorted arrays (pyhip/emu/memindex.py)
        self.lock = threading.RLock()
        self.used = 0
        self.peer_views: list["DeviceMemory"] = []   # memories that map this arena (peer access)
        self.serials: dict[int, int] = {}       # start -> a number no other allocation/mapping ever had
        self._serial = 0
        self.on_reindex: list = []              # fn(index), called (lock held) whenever the table changed
                                                # (index.change: the allocation added or removed, or None)
        self.exact = False                      # memcheck: lane checks against exact allocation ends
        self.origin = None                      # memcheck: fn(event) -> where an allocation / free happens
        self.origins: dict[int, object] = {}    # start -> where it was allocated (while ``origin`` is set)
        self.quarantine: list[Freed] = []       # freed allocations kept unreused (memcheck), oldest first
        self.checker = None                     # memcheck: told of bad accesses and frees (set_memcheck)
        self._hw_ends = (None, None)            # (index, where the GPU's mapping of each allocation ends)
        self._quarantined = 0                   # the address space they hold
        self.shadow = None                      # initcheck: which arena bytes were written (pyhip/sanitizer)
        self.shared: dict[int, int] = {}        # IPC: allocation start -> the memfd its pages live in
        _LIVE.add(self)
        if any(x is not None and x is not False for x in _MEMCHECK):
            self.set_memcheck(*_MEMCHECK)
        if _INITCHECK is not None and self._fixed_arena:
            self.shadow = _INITCHECK(self)

    def set_memcheck(self, exact: bool, origin=None, checker=None) -> None:
        with self.lock:
            self.exact, self.origin, self.checker = exact, origin, checker
            if checker is not None:
                checker.checked(self)
            if origin is None:
                self.origins.clear()
            if not exact:
                while self.quarantine:
                    self._release(self.quarantine.pop(0))
            self._reindex()

    @contextlib.contextmanager
    def pinned(self):
        """While a native dispatch runs with raw pointers into the arena: a growing arena (only where the
        address space could not be reserved up front) waits for it."""
        if self._fixed_arena:
            yield
            return
        with self._unpinned:
            self._pins += 1
        try:
            yield
        finally:
            with self._unpinned:
                self._pins -= 1
                self._unpinned.notify_all()

    # -- allocation --------------------------------------------------------------------------------------
    def _reindex(self) -> None:
        """The index rebuilt from the table (a change of every entry: memcheck's exact ends, a grown arena)."""
        entries = [self._entry(s) for s in self.starts]
        self._indexed(TableIndex.build(self.starts, *zip(*entries)) if entries else TableIndex.empty())

    def _entry(self, start: int) -> tuple:
        """(region end, exact end, host address, mapped array or None) of the allocation at ``start``: an arena
        allocation's region ends where the address space it owns ends, or (memcheck) exactly."""
        end, _, _, x = self.table[start]
        if x is not None:
            return end, end, x.ctypes.data, x
        return (end if self.exact else start + self.spans[start]), end, self._arena_address + start - self.base, None

    def _indexed(self, index: TableIndex) -> None:
        # one object, replaced atomically: lane checks running on other threads read a consistent snapshot
        self._index = index
        for fn in self.on_reindex:
            fn(index)

    def _added(self, start: int) -> None:
        """``start`` entered the table and self.starts."""
        region_end, end, host, array = self._entry(start)
        self._indexed(self._index.added(bisect.bisect_left(self.starts, start), start, region_end, end, array, host))

    def _removed(self, start: int) -> None:
        """``start`` left the table: out of self.starts too (a binary search, not a scan)."""
        i = bisect.bisect_left(self.starts, start)
        del self.starts[i]
        self._indexed(self._index.removed(i))

    def alloc(self, size: int, kind: str = "user", align: int = ALIGN) -> int:
        if size <= 0:
            raise HipError(hipError_t.hipErrorInvalidValue, "allocation size must be positive")
        rounded = -(-size // GRANULE) * GRANULE         # what it costs of the capacity
        frag = self.fragment
        span = -(-size // frag) * frag                  # the address space it owns (module doc)
        align = max(align, frag)
        grew = False
        with self.lock:
            if self.used + rounded > self.capacity:
                raise HipError(hipError_t.hipErrorOutOfMemory,
                               f"out of device memory: {size} bytes requested, {self.capacity - self.used} free")
            off = None
            for i, (o, s) in enumerate(self._free):
                aligned = (o + align - 1) // align * align
                if aligned + span <= o + s:
                    off = aligned
                    rest = []
                    if aligned > o:
                        rest.append((o, aligned - o))
                    if aligned + span < o + s:
                        rest.append((aligned + span, o + s - aligned - span))
                    self._free[i:i + 1] = rest
                    break
            if off is None:
                off = (self._top + align - 1) // align * align
                if off + span > len(self.arena) and self._fixed_arena:
                    raise HipError(hipError_t.hipErrorOutOfMemory,
                                   f"out of device memory: no {size}-byte range left in the arena")
                self._top = off + span
                if self._top > len(self.arena):
                    grew = True
                    with self._unpinned:            # no dispatch may hold pointers into the old arena
                        self._unpinned.wait_for(lambda: self._pins == 0)
                    new = np.zeros(max(self._top, 2 * len(self.arena)), dtype=np.uint8)
                    new[:len(self.arena)] = self.arena
                    self.arena = new
                    self._arena_address = new.ctypes.data
                    for m in list(self.peer_views):     # peers see the grown arena
                        m.unmap_host(self.base)
                        m.map_host(self.base, new, kind="peer")
            addr = self.base + off
            bisect.insort(self.starts, addr)
            self.table[addr] = (addr + size, rounded, kind, None)
            self.spans[addr] = span
            self._serial += 1
            self.serials[addr] = self._serial
            self.used += rounded
            if self.shadow is not None:
                self.shadow.allocated(off, size, span, kind)
            if self.origin is not None:
                self.origins[addr] = self.origin("alloc")
            if grew:
                self._reindex()                 # every arena allocation's host address moved
            else:
                self._added(addr)
            return addr

    def free(self, addr: int) -> None:
        if self.checker is not None:        # memcheck: what kernels did to it, named while it is still live
            self.checker.freeing(self)
        with self.lock:
            entry = self.table.get(addr)
            if entry is None or entry[3] is not None:
                raise HipError(hipError_t.hipErrorInvalidDevicePointer, f"0x{addr:x} is not the start of an allocation")
            self._unshare(addr)
            del self.table[addr]
            self.serials.pop(addr, None)
            self.used -= entry[1]
            span = self.spans.pop(addr)
            if self.exact:                  # memcheck: kept unreused, so that later accesses fault and are named
                f = Freed(addr, entry[0] - addr, span, entry[2], self.origins.pop(addr, None),
                          self.origin("free") if self.origin is not None else None)
                self._clear(addr - self.base, f.span)
                self.quarantine.append(f)
                self._quarantined += f.span
                while self._quarantined > QUARANTINE_LIMIT and len(self.quarantine) > 1:
                    self._release(self.quarantine.pop(0))
            else:
                self.origins.pop(addr, None)
                self._release(Freed(addr, entry[0] - addr, span, entry[2], None, None), quarantined=False)
            self._removed(addr)

    # -- sharing with other processes (HIP IPC: pyhip/runtime/ipc.py) ------------------------------------------
    def share(self, start: int) -> tuple[int, int]:
        """``(memfd, its size)`` holding the pages of the arena allocation at ``start`` from now on (the
        allocation's bytes move there; its addresses stay).  hipErrorNotSupported where the arena was not
        reserved up front (it may move)."""
        with self.lock:
            entry = self.table.get(start)
            if entry is None or entry[3] is not None:
                raise HipError(hipError_t.hipErrorInvalidValue, f"0x{start:x} is not the start of a device allocation")
            span = self.spans[start]
            if start not in self.shared:
                if self._mapping is None:
                    raise HipError(hipError_t.hipErrorNotSupported, "this device's memory cannot be shared")
                off = start - self.base
                fd = sharedmem.new_file(span)
                os.pwrite(fd, self.arena[off:off + entry[1]], 0)    # its bytes (the rest of its pages are 0)
                sharedmem.map_file(self._arena_address + off, span, fd)
                self.shared[start] = fd
            return self.shared[start], span

    def attach(self, fd: int, size: int, span: int) -> int:
        """Another process's shared allocation (the file ``fd`` of ``span`` bytes, ``size`` of them the
        allocation) mapped into this arena: a new allocation of kind 'ipc' (bounds-checked as any), its
        address returned.  Undone by :meth:`free`."""
        if self._mapping is None:
            raise HipError(hipError_t.hipErrorNotSupported, "this device's memory cannot map shared memory")
        addr = self.alloc(size, kind="ipc")
        with self.lock:
            mine = self.spans[addr]
            if mine > span:                     # its padding past the file would fault (SIGBUS): refused
                self.free(addr)
                raise HipError(hipError_t.hipErrorInvalidValue, "the IPC handle's size does not match its memory")
            sharedmem.map_file(self._arena_address + addr - self.base, mine, fd)
            self.shared[addr] = os.dup(fd)
            if self.shadow is not None:         # initcheck: the other process wrote these bytes
                self.shadow.wrote(addr - self.base, size)
        return addr

    def _unshare(self, start: int) -> None:
        """A shared allocation being freed (lock held): its addresses get private zero pages again; the file
        lives on while other processes map it."""
        fd = self.shared.pop(start, None)
        if fd is not None:
            sharedmem.map_private(self._arena_address + start - self.base, self.spans[start])
            os.close(fd)

    def _release(self, f: Freed, quarantined: bool = True) -> None:
        """A freed block back to the free list (lock held; a quarantined block was cleared when freed)."""
        if quarantined:
            self._quarantined -= f.span
        else:
            self._clear(f.start - self.base, f.span)
        off, size = f.start - self.base, f.span
        free = self._free                       # sorted; neighbours joined (a binary search, no sort)
        i = bisect.bisect_left(free, (off, 0))
        if i < len(free) and off + size == free[i][0]:
            size += free.pop(i)[1]
        if i and free[i - 1][0] + free[i - 1][1] == off:
            free[i - 1] = (free[i - 1][0], free[i - 1][1] + size)
        else:
            free.insert(i, (off, size))

    def freed_at(self, addr: int) -> Freed | None:
        """The quarantined allocation whose pages hold ``addr`` (memcheck), the latest freed first."""
        with self.lock:
            for f in reversed(self.quarantine):
                if f.start <= addr < f.start + f.span:
                    return f
        return None

    def nearest(self, addr: int):
        """``(start, exact end, pages end, kind)`` of the allocation whose pages hold ``addr`` or, failing
        that, the last one starting below it; None when there is none."""
        with self.lock:
            i = bisect.bisect_right(self.starts, addr) - 1
            if i < 0:
                return None
            s = self.starts[i]
            end, _, kind, ext = self.table[s]
            return s, end, end if ext is not None else s + self.spans[s], kind

    def _clear(self, off: int, n: int) -> None:
        """A freed block back to zeros (every free block is zero, as never-used space is: allocations write
        nothing).  In the reserved arena the whole pages of a large block go back to the system (they read
        zero again when touched), so freed memory costs none."""
        page = mmap.PAGESIZE
        lo, hi = -(-off // page) * page, (off + n) // page * page
        if self._mapping is not None and hi - lo >= 16 * page:
            self._mapping.madvise(mmap.MADV_DONTNEED, lo, hi - lo)
            self.arena[off:lo] = 0
            self.arena[hi:off + n] = 0
        else:
            self.arena[off:off + n] = 0

    def map_host(self, addr: int, array: np.ndarray, kind: str = "host") -> None:
        """Make ``array`` addressable at ``addr`` (pinned host memory; kind 'peer': another device's arena)."""
        with self.lock:
            old = self.table.get(addr)
            if old is not None:                 # mapped again: the new array replaces the old one
                if old[3] is None:
                    raise HipError(hipError_t.hipErrorInvalidValue, f"0x{addr:x} is an allocation of this device")
                self._removed(addr)
            bisect.insort(self.starts, addr)
            self.table[addr] = (addr + array.nbytes, array.nbytes, kind, array.view(np.uint8).reshape(-1))
            self._serial += 1
            self.serials[addr] = self._serial
            if self.origin is not None:
                self.origins[addr] = self.origin("map")
            self._added(addr)

    def map_peer(self, other: "DeviceMemory") -> None:
        """Peer access: ``other``'s whole arena becomes addressable here (and stays so when it grows)."""
        with self.lock:
            if other.base not in self.table:
                self.map_host(other.base, other.arena, kind="peer")
        with other.lock:
            if self not in other.peer_views:
                other.peer_views.append(self)

    def unmap_peer(self, other: "DeviceMemory") -> None:
        with other.lock:
            if self in other.peer_views:
                other.peer_views.remove(self)
        self.unmap_host(other.base)

    def unmap_host(self, addr: int) -> bool:
        with self.lock:
            entry = self.table.get(addr)
            if entry is None or entry[3] is None:
                return False
            del self.table[addr]
            self.serials.pop(addr, None)
            self.origins.pop(addr, None)
            self._removed(addr)
            return True

    def allocation_size(self, addr: int) -> int:
        return self.table[addr][1]

    def find(self, addr: int):
        """``(start, end, kind)`` of the allocation holding ``addr``, or None."""
        with self.lock:
            i = bisect.bisect_right(self.starts, addr) - 1
            if i < 0:
                return None
            s = self.starts[i]
            end, _, kind, _ = self.table[s]
            return (s, end, kind) if addr < end else None

    def owns(self, addr: int) -> bool:
        return self.find(addr) is not None

    def user_allocations(self) -> list[int]:
        return [s for s, (e, sz, k, ext) in self.table.items() if k == "user"]

    # -- host access -----------------------------------------------------------------------------------
    def _span(self, addr: int, size: int, write: bool = False):
        hit = self.find(addr)
        if hit is None or addr + size > hit[1]:
            raise GPUFault(f"host access [0x{addr:x}, +{size}) is outside any allocation", address=addr)
        ext = self.table[hit[0]][3]
        if ext is not None:
            return ext, addr - hit[0]
        if write and self.shadow is not None:      # initcheck: the host writes (or may, through the pointer)
            self.shadow.wrote(addr - self.base, size)
        return self.arena, addr - self.base

    def host_range(self, addr: int, size: int) -> int | None:
        """The host address of ``size`` bytes at ``addr`` when they lie in one allocation, else None (no
        exception: the idle copies' lookup, runtime/idlecopy.py); like :meth:`view`, a write under initcheck."""
        with self.lock:
            i = bisect.bisect_right(self.starts, addr) - 1
            if i < 0:
                return None
            s = self.starts[i]
            end, _, _, ext = self.table[s]
            if addr + size > end:
                return None
            if ext is not None:
                return ext.ctypes.data + addr - s
            if self.shadow is not None:
                self.shadow.wrote(addr - self.base, size)
            return self._arena_address + addr - self.base

    def host_address(self, addr: int, size: int = 1) -> int:
        """The host address of device address ``addr`` (``size`` bytes must lie in one allocation)."""
        buf, off = self._span(addr, size, write=True)
        return buf.ctypes.data + off

    def read(self, addr: int, size: int) -> bytes:
        buf, off = self._span(addr, size)
        return buf[off:off + size].tobytes()

    def view(self, addr: int, size: int) -> memoryview:
        buf, off = self._span(addr, size, write=True)
        return memoryview(buf[off:off + size])

    def write(self, addr: int, data) -> None:
        data = memoryview(data).cast("B")
        buf, off = self._span(addr, len(data), write=True)
        buf[off:off + len(data)] = np.frombuffer(data, dtype=np.uint8)

    def copy(self, dst: int, src: int, size: int) -> None:
        self.write(dst, self.read(src, size))

    def fill(self, dst: int, value: int, count: int, width: int) -> None:
        buf, off = self._span(dst, count * width, write=True)
        dt = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[width]
        buf[off:off + count * width] = np.full(count, value, dtype=dt).view(np.uint8)

    # -- lane access (vectorized) ---------------------------------------------------------------------------
    def check(self, addrs: np.ndarray, size: int, write: bool = False):
        """Validate every address; returns ``(buffer, offsets)`` for the fast single-buffer case, or
        raises GPUFault naming the first bad address (memcheck's ``on_bad``: reports them instead, and the
        access goes on as the GPU would do it: ``(None, (lanes' regions, index, lanes performed))``)."""
        addrs = addrs.astype(np.uint64, copy=False)
        starts, ends, ext, _ = index = self._index
        if len(addrs) > 64 and len(starts):
            # fast path: the whole access range inside one arena allocation
            lo, hi = int(addrs.min()), int(addrs.max()) + size
            i = int(np.searchsorted(starts, np.uint64(lo), side="right")) - 1
            if i >= 0 and hi <= int(ends[i]) and not ext[i]:
                return self.arena, (addrs - np.uint64(self.base)).astype(np.int64)
        idx = np.searchsorted(starts, addrs, side="right").astype(np.int64) - 1
        ok = idx >= 0
        safe = np.where(ok, idx, 0)
        if len(starts):
            ok &= addrs + np.uint64(size) <= ends[safe]
        else:
            ok[:] = False
        if not ok.all():
            checker = self.checker
            if checker is None or not self.exact:
                i = int(np.argmin(ok))
                raise GPUFault("memory access outside any allocation", address=int(addrs[i]), access=f"{size} bytes",
                               index=i)
            checker.bad_access(self, addrs, size, ~ok, write)
            return None, (safe, index, self._mapped(addrs, size, idx, index))
        if len(addrs) and ext[safe].any():
            return None, (safe, index, None)
        return self.arena, (addrs - np.uint64(self.base)).astype(np.int64)

    def _mapped(self, addrs, size, idx, index) -> np.ndarray:
        """memcheck going on after a bad access: which lanes the GPU would perform — inside the address space an
        allocation owns (its fragments; a host mapping's exact extent).  The others read 0 and drop stores."""
        hw_index, hw_ends = self._hw_ends
        if hw_index is not index:
            starts, ends, ext, _ = index
            hw_ends = np.array([e if x else s + self.spans.get(s, e - s) for s, e, x in
                                zip(starts.tolist(), ends.tolist(), ext.tolist())], dtype=np.uint64)
            self._hw_ends = (index, hw_ends)
        ok = idx >= 0
        if len(hw_ends):
            ok &= addrs + np.uint64(size) <= hw_ends[np.where(ok, idx, 0)]
        else:
            ok[:] = False
        return ok

    def gather(self, addrs: np.ndarray, size: int) -> np.ndarray:
        """Bytes at each address → array (n, size) uint8.  When every lane is naturally aligned, each lane's
        2-, 4- or 8-byte access (and each 8-byte half of a 16-byte one) is one element copy: whole, against
        other host threads writing the memory (docs/memory-model.md)."""
        buf, offs = self.check(addrs, size)
        if buf is None:
            return self._gather_mixed(addrs, size, offs)
        if self.shadow is not None and buf is self.arena:
            self.shadow.read_lanes(addrs, offs, size)
        k, words = _word_view(buf, offs, size)
        if words is not None:
            n = size // k
            i = offs // k
            return words[i if n == 1 else i[:, None] + np.arange(n)].view(np.uint8).reshape(len(offs), size)
        return buf[offs[:, None] + np.arange(size)]

    def scatter(self, addrs: np.ndarray, data: np.ndarray) -> None:
        """Write data (n, size) uint8 at each address (later lanes win on overlap, as in hardware order), each
        lane's naturally aligned 2-, 4- or 8-byte value by one element store (as gather)."""
        size = data.shape[1]
        buf, offs = self.check(addrs, size, write=True)
        if buf is None:
            return self._scatter_mixed(addrs, data, offs)
        if self.shadow is not None and buf is self.arena:
            self.shadow.wrote_lanes(offs, size)
        k, words = _word_view(buf, offs, size)
        if words is not None:
            n = size // k
            d = np.ascontiguousarray(data).view(words.dtype).reshape(len(offs), n)
            i = offs // k
            if n == 1:
                words[i] = d[:, 0]
            else:
                words[i[:, None] + np.arange(n)] = d
            return
        buf[offs[:, None] + np.arange(size)] = data

    def _spans(self, addrs, size, found):
        """For lanes spread over several allocations (some host-mapped): ``(lanes, buffer, byte offsets)`` per
        allocation touched."""
        idx, (starts, _, _, exts), performed = found
        for i in np.unique(idx if performed is None else idx[performed]):
            sel = idx == i if performed is None else (idx == i) & performed
            start, ext = int(starts[i]), exts[i]
            buf = ext if ext is not None else self.arena
            base = 0 if ext is not None else start - self.base
            yield sel, buf, base + (addrs[sel] - np.uint64(start)).astype(np.int64)

    @staticmethod
    def _aligned_words(buf, offs, size):
        """_word_view for any buffer (host-mapped arrays need not be aligned themselves)."""
        k, words = _word_view(buf, offs, size)
        if words is not None and buf.ctypes.data % k:
            return 0, None
        return k, words

    def _gather_mixed(self, addrs, size, found):
        out = (np.empty if found[2] is None else np.zeros)((len(addrs), size), dtype=np.uint8)
        for sel, buf, offs in self._spans(addrs, size, found):
            if self.shadow is not None and buf is self.arena:
                self.shadow.read_lanes(addrs[sel], offs, size)
            k, words = self._aligned_words(buf, offs, size)
            if words is not None:
                out[sel] = words[(offs // k)[:, None] + np.arange(size // k)].view(np.uint8).reshape(-1, size)
            else:
                out[sel] = buf[offs[:, None] + np.arange(size)]
        return out

    def _scatter_mixed(self, addrs, data, found):
        size = data.shape[1]
        for sel, buf, offs in self._spans(addrs, size, found):
            if self.shadow is not None and buf is self.arena:
                self.shadow.wrote_lanes(offs, size)
            k, words = self._aligned_words(buf, offs, size)
            if words is not None:
                words[(offs // k)[:, None] + np.arange(size // k)] = \
                    np.ascontiguousarray(data[sel]).view(words.dtype).reshape(len(offs), size // k)
            else:
                buf[offs[:, None] + np.arange(size)] = data[sel]
