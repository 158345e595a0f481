"""Process memory of the emulated KFD (what libhsakmt's fmm.c and amdkfd do for hsaKmt*Memory*).

Every GPU virtual address is the host address (a dGPU in libhsakmt's SVM layout):

* VRAM of GPU node N lives in one reserved mapping of the board's VRAM size; it is that device's
  :class:`~pyhip.emu.memory.DeviceMemory` arena, so an allocation enters the emulator's bounds table when it
  is made and device accesses take the emulator's arena fast paths;
* system memory (``hsaKmtAllocMemory`` on the CPU node, or paged memory asked of a GPU node) is an anonymous
  mapping; registered user memory and SVM ranges are the caller's own pages.  Those enter a GPU's bounds
  table when they are mapped to it (``MapMemoryToGPU(Nodes)``, SVM access attributes) and leave it when
  unmapped or freed — a kernel touching memory its GPU has not mapped faults like on hardware;
* registered user memory (userptr objects) may overlap, as in libhsakmt (objects keyed by address and size)
  and amdkfd (each its own BO over the same pages): AMD's HIP registers page-rounded ranges, so neighbouring
  slices of one host buffer overlap.  The emulator's bounds table holds disjoint entries, so a GPU's table
  holds the union of the overlapping objects mapped to it (:class:`GpuHostMaps`);
* the scratch aperture (``MemFlags.Scratch``) is reserved address space; the emulator keeps each lane's
  private memory itself, so mapping scratch only records which ranges the queues may use;
* sharing between processes (``hsaKmtShareMemory`` / ``hsaKmtRegisterSharedHandle(ToNodes)``, what ROCr's
  hsa_amd_ipc_memory_create / attach and so HIP's IPC use): an exported object's pages move into a memfd
  mapped back at the same addresses (pyhip/emu/sharedmem.py: pointers into it stay valid), and the handle
  names the exporter's pid, that file's descriptor and inode (:class:`SharedHandle`).  The importer opens
  ``/proc/PID/fd/N`` and maps the file at a VA of its own (as amdkfd imports a BO at a new VA), an object
  of type REGISTERED_SHARED mapped to GPUs like system memory and released by DeregisterMemory or
  FreeMemory.  Freeing in the exporter gives its addresses private pages again; importers keep the file.
"""
from __future__ import annotations

import bisect
import contextlib
import ctypes
import os
import struct
import threading
import zlib
from dataclasses import dataclass, field

import numpy as np

from ..emu.memory import host_range_mapped
from . import abi

PAGE = 4096
HUGE_PAGE = 2 << 20         # libhsakmt's GPU_HUGE_PAGE_SIZE
_libc = ctypes.CDLL(None, use_errno=True)
_libc.mmap.restype = ctypes.c_void_p
_libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
_libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
MAP_SHARED, MAP_PRIVATE, MAP_ANONYMOUS, MAP_NORESERVE, MAP_FIXED_NOREPLACE = 0x01, 0x02, 0x20, 0x4000, 0x100000
MAP_FAILED = ctypes.c_void_p(-1).value
MAP_FIXED = 0x10


def mmap_anon(size: int, fixed: int = 0, prot: int = abi.PROT_READ | abi.PROT_WRITE) -> int:
    flags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | (MAP_FIXED_NOREPLACE if fixed else 0)
    p = _libc.mmap(fixed or None, size, prot, flags, -1, 0)
    if p is None or p == MAP_FAILED or (fixed and p != fixed):
        if p not in (None, MAP_FAILED):
            _libc.munmap(p, size)
        return 0
    return p


def munmap(addr: int, size: int) -> None:
    _libc.munmap(addr, size)


def mmap_shared(size: int, fd: int, prot: int) -> int:
    p = _libc.mmap(None, size, prot, MAP_SHARED | MAP_NORESERVE, fd, 0)
    return 0 if p is None or p == MAP_FAILED else p


def _map_fixed(addr: int, size: int, prot: int, flags: int, fd: int, offset: int) -> None:
    """``mmap(MAP_FIXED)``: the range at ``addr`` replaced in place (its address stays)."""
    p = _libc.mmap(addr, size, prot, flags | MAP_FIXED, fd, offset)
    if p != addr:
        raise abi.KfdError(abi.NO_MEMORY, f"mapping [0x{addr:x}, +{size}) failed: errno {ctypes.get_errno()}",
                           "ENOMEM")


def mprotect(addr: int, size: int, prot: int) -> None:
    if _libc.mprotect(ctypes.c_void_p(addr), ctypes.c_size_t(size), prot) != 0:
        raise abi.KfdError(abi.ERROR, f"mprotect(0x{addr:x}, {size}) failed: errno {ctypes.get_errno()}")


def host_array(addr: int, size: int) -> np.ndarray:
    """A uint8 view of ``size`` bytes of this process's memory at ``addr``."""
    return np.frombuffer((ctypes.c_uint8 * size).from_address(addr), dtype=np.uint8)


def vram_alignment(size: int, page: int) -> int:
    """Where libhsakmt starts a VRAM allocation (fmm.c, aperture_allocate_area_aligned): big buffers aligned
    to the largest power of two not above their size, up to a huge page — a 2 MiB buffer is 2 MiB aligned,
    which device malloc's slabs rely on (ockl finds a slab's header by rounding a pointer down to 2 MiB)."""
    align = max(page, PAGE)
    while align < HUGE_PAGE and size >= align << 1:
        align <<= 1
    return align


def page_floor(a: int) -> int:
    return a & ~(PAGE - 1)


def page_ceil(a: int) -> int:
    return (a + PAGE - 1) & ~(PAGE - 1)


@dataclass
class MemObject:
    addr: int
    size: int
    node: int                      # the node it was allocated for / registered on
    flags: int                     # HsaMemFlags
    kind: int                      # abi.PTR_*
    vram_of: int = 0               # GPU node whose VRAM holds it (0: system memory / user memory)
    scratch: bool = False
    owned_mapping: bool = False    # an mmap of ours (munmap on free)
    registered: tuple = ()         # nodes it is registered to (RegisterMemoryToNodes)
    mapped: set = field(default_factory=set)
    scratch_maps: dict = field(default_factory=dict)   # addr -> size (scratch sub-ranges)
    userdata: int = 0
    keep: list = field(default_factory=list)           # cffi arrays handed out by QueryPointerInfo
    registrations: int = 0         # userptr: how many times (addr, size) was registered (libhsakmt counts)
    gpu_addr: int = 0              # its GPU VA when that is not its host address (userptrs without SVM)
    backing: int = 0               # where the GPU's bytes are when not at addr (VRAM behind a small BAR)
    share_fd: int = -1             # exported (ShareMemory): the memfd its pages live in

    @property
    def end(self) -> int:
        return self.addr + self.size

    @property
    def gpu(self) -> int:
        """Where the GPU sees it: its host address (SVM), or the VA of its own BO."""
        return self.gpu_addr or self.addr


class Vram:
    """One GPU node's VRAM: a reserved mapping used as the emulated device's memory arena.

    With a small BAR (``PYHIP_THUNK_QUIRKS=small-bar``) the CPU cannot reach VRAM: the range at the VRAM's
    addresses is mapped without access (a CPU load or store there faults), and the emulated GPU reads and
    writes the same pages through a second mapping of them (``alias``); VRAM allocated with HostAccess (what
    a large BAR gives ROCr) is opened to the CPU."""

    def __init__(self, size: int, small_bar: bool = False):
        from ..emu.memory import DeviceMemory

        self.size = size
        self.fd = -1                     # small BAR: the file both mappings of VRAM map
        if small_bar:
            fd = self.fd = os.memfd_create("pyhip-vram", os.MFD_CLOEXEC)
            os.ftruncate(fd, size)
            self.base = mmap_shared(size, fd, abi.PROT_NONE)
            self.alias = mmap_shared(size, fd, abi.PROT_READ | abi.PROT_WRITE)
        else:
            self.base = self.alias = mmap_anon(size)
        if not self.base or not self.alias:
            raise abi.KfdError(abi.NO_MEMORY, f"cannot reserve {size >> 30} GiB of address space for VRAM")
        self.memory = DeviceMemory(size, base=self.base, arena=host_array(self.alias, size))

    @property
    def small_bar(self) -> bool:
        return self.alias != self.base

    def backing(self, addr: int) -> int:
        """Where the emulated GPU's bytes of VRAM address ``addr`` are in this process."""
        return self.alias + (addr - self.base)

    def open_to_cpu(self, addr: int, size: int, on: bool) -> None:
        if self.small_bar:
            mprotect(addr, size, abi.PROT_READ | abi.PROT_WRITE if on else abi.PROT_NONE)

    def share_pages(self, addr: int, size: int, fd: int, host_access: bool) -> None:
        """VRAM ``[addr, addr + size)`` moved into the file ``fd`` (already holding its bytes): both the
        CPU's and (small BAR) the GPU's mapping of it map the file from now on."""
        if self.small_bar:
            _map_fixed(self.backing(addr), size, abi.PROT_READ | abi.PROT_WRITE, MAP_SHARED, fd, 0)
            _map_fixed(addr, size, abi.PROT_READ | abi.PROT_WRITE if host_access else abi.PROT_NONE,
                       MAP_SHARED, fd, 0)
        else:
            _map_fixed(addr, size, abi.PROT_READ | abi.PROT_WRITE, MAP_SHARED, fd, 0)

    def unshare_pages(self, addr: int, size: int) -> None:
        """Shared VRAM being freed: its addresses get this board's own pages again (the arena zeroes a freed
        block after this)."""
        if self.small_bar:
            off = addr - self.base
            _map_fixed(self.backing(addr), size, abi.PROT_READ | abi.PROT_WRITE, MAP_SHARED, self.fd, off)
            _map_fixed(addr, size, abi.PROT_NONE, MAP_SHARED, self.fd, off)
        else:
            _map_fixed(addr, size, abi.PROT_READ | abi.PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                       -1, 0)

    def close(self) -> None:
        munmap(self.base, self.size)
        if self.small_bar:
            munmap(self.alias, self.size)
            os.close(self.fd)


class GpuHostMaps:
    """Memory objects outside a GPU's VRAM mapped into its bounds table, at their GPU VA.  They may overlap
    (userptrs); the table's entries may not, so each entry is the union of a cluster of overlapping objects,
    rebuilt whenever an object of the cluster is mapped or unmapped.  (Objects whose GPU VA is not their host
    address never overlap anything: their VA is a reservation of their own.)"""

    def __init__(self, memory):
        self.memory = memory                   # the GPU's DeviceMemory
        self.objects: list[MemObject] = []
        self.spans: dict[int, int] = {}        # table entries made here: start -> end

    def add(self, o: MemObject) -> None:
        self.objects.append(o)
        self._rebuild(o.gpu, o.gpu + o.size)

    def remove(self, o: MemObject) -> None:
        self.objects.remove(o)
        self._rebuild(o.gpu, o.gpu + o.size)

    def _rebuild(self, lo: int, hi: int) -> None:
        for start, end in list(self.spans.items()):
            if start < hi and lo < end:
                lo, hi = min(lo, start), max(hi, end)
                self.memory.unmap_host(start)
                del self.spans[start]
        merged: list[list[int]] = []          # [gpu start, gpu end, host start]
        cluster = [x for x in self.objects if x.gpu < hi and lo < x.gpu + x.size]
        for a, b, h in sorted((x.gpu, x.gpu + x.size, x.backing or x.addr) for x in cluster):
            if merged and a < merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], b)
            else:
                merged.append([a, b, h])
        for a, b, h in merged:
            self.memory.map_host(a, host_array(h, b - a))
            self.spans[a] = b


class SharedHandle:
    """libhsakmt's HsaSharedMemoryStruct layout of the 8-word HsaSharedMemoryHandle: ShareHandle[4] (here:
    exporter pid, its memfd's descriptor number, the file's inode, low and high word), ApeInfo (here: a magic
    word, and a CRC of the other words), SizeInPages, ExportGpuId (0: system memory).  ROCr copies it into
    the hipIpcMemHandle and, for an allocation inside a 2 MiB fragment block, marks word 6 (bit 31 and the
    page offset in bits 0-8, cleared again before it calls RegisterSharedHandle)."""
    MAGIC = 0x4B504850                   # "PHPK"
    WORDS = struct.Struct("<8I")

    def __init__(self, pid: int, fd: int, inode: int, pages: int, gpu_id: int):
        self.pid, self.fd, self.inode, self.pages, self.gpu_id = pid, fd, inode, pages, gpu_id

    def _check(self) -> int:
        return zlib.crc32(struct.pack("<IIQII", self.pid, self.fd, self.inode, self.pages, self.gpu_id))

    def words(self) -> tuple:
        return (self.pid, self.fd, self.inode & 0xFFFFFFFF, self.inode >> 32, self.MAGIC, self._check(),
                self.pages, self.gpu_id)

    @classmethod
    def parse(cls, words) -> "SharedHandle":
        w = [int(x) & 0xFFFFFFFF for x in words]
        if len(w) != 8 or w[4] != cls.MAGIC:
            raise abi.KfdError(abi.INVALID_HANDLE, "not a shared memory handle of pyhip's KFD")
        h = cls(w[0], w[1], w[2] | w[3] << 32, w[6], w[7])
        if h._check() != w[5] or not h.pages or not h.pid:
            raise abi.KfdError(abi.INVALID_HANDLE, "a corrupt shared memory handle")
        return h


class ProcessMemory:
    """The memory objects of the process: allocations by address; userptr objects (registered user memory,
    which may overlap) by address and size."""

    def __init__(self, topology, gpus: dict, no_svm: bool = False, vram: dict | None = None):
        self.topology = topology
        self.vram = vram or {}                 # node id -> Vram
        self.no_svm = no_svm                   # userptrs get a GPU VA of their own (PYHIP_THUNK_QUIRKS=no-svm)
        self.gpus = gpus                       # node id -> EmulatedGPU (its .memory is the VRAM arena)
        self.objects: dict[int, MemObject] = {}
        self._starts: list[int] = []
        self.user: list[MemObject] = []        # userptr objects, sorted by (address, size)
        self.host_maps = {n: GpuHostMaps(g.memory) for n, g in gpus.items()}
        self.svm: list[tuple[int, int, dict]] = []     # (start, end, {attr type: value or set of nodes})
        self.lock = threading.RLock()
        self.scratch_size = 4 << 30
        self.quiesce = contextlib.nullcontext      # () -> context with the GPUs between packets (Kfd.quiesced)

    # -- lookup ------------------------------------------------------------------------------------
    def find(self, addr: int) -> MemObject | None:
        """The object holding ``addr``: an allocation, else the userptr object starting nearest below it
        (libhsakmt's range lookup walks its userptr tree from the right)."""
        with self.lock:
            i = bisect.bisect_right(self._starts, addr) - 1
            if i >= 0:
                o = self.objects[self._starts[i]]
                if addr < o.end:
                    return o
            for o in reversed(self.user[:bisect.bisect_right(self.user, (addr, 1 << 64), key=_key)]):
                if addr < o.end:
                    return o
        return None

    def _userptr(self, addr: int, size: int = 0) -> MemObject | None:
        """libhsakmt's vm_find_object_by_userptr: the object registered as (addr, size); size 0: the only
        object starting at addr (None when several do)."""
        i = bisect.bisect_left(self.user, (addr, 0), key=_key)
        same = []
        while i < len(self.user) and self.user[i].addr == addr:
            same.append(self.user[i])
            i += 1
        if size:
            return next((o for o in same if o.size == size), None)
        return same[0] if len(same) == 1 else None

    def _object_at(self, addr: int, size: int = 0) -> MemObject | None:
        """The object an address names (and a size, for userptrs), as hsaKmtMap/Unmap/Deregister look it up."""
        return self.objects.get(addr) or self._userptr(addr, size) or (self._userptr(addr) if size else None)

    def _add(self, o: MemObject) -> None:
        if o.kind == abi.PTR_REGISTERED_USER:
            bisect.insort(self.user, o, key=_key)
            return
        self.objects[o.addr] = o
        bisect.insort(self._starts, o.addr)

    def _remove(self, o: MemObject) -> None:
        if o.kind == abi.PTR_REGISTERED_USER:
            self.user.remove(o)
            return
        del self.objects[o.addr]
        self._starts.remove(o.addr)

    def gpu_accessible(self, node: int, addr: int, size: int) -> bool:
        """Whether [addr, addr+size) is mapped to GPU ``node`` (queue buffers are checked with this)."""
        gpu = self.gpus.get(node)
        hit = gpu.memory.find(addr) if gpu is not None else None
        return hit is not None and addr + size <= hit[1]

    # -- allocation --------------------------------------------------------------------------------
    def alloc(self, node: int, size: int, flags: int, fixed: int = 0) -> int:
        f = abi.bits(flags, abi.MEM_FLAGS)
        self.topology.check_node(node)
        page = abi.PAGE_SIZES[f["PageSize"]]
        if not size or size % page:
            raise abi.KfdError(abi.INVALID_PARAMETER, f"size {size} is not a positive multiple of {page}")
        if f["FixedAddress"] and not fixed:
            raise abi.KfdError(abi.INVALID_PARAMETER, "FixedAddress without an address")
        with self.lock:
            if f["Scratch"]:
                if node == 0:
                    raise abi.KfdError(abi.INVALID_PARAMETER, "scratch on the CPU node")
                addr = mmap_anon(size, fixed, abi.PROT_NONE)
                if not addr:
                    raise abi.KfdError(abi.NO_MEMORY, f"no {size}-byte scratch range")
                o = MemObject(addr, size, node, flags, abi.PTR_UNKNOWN, scratch=True, owned_mapping=True)
            elif node == 0 or not f["NonPaged"]:         # system memory (libhsakmt: paged GPU requests too)
                addr = mmap_anon(size, fixed)
                if not addr:
                    raise abi.KfdError(abi.ERROR if not fixed else abi.NO_MEMORY,
                                       f"cannot map {size} bytes of system memory")
                o = MemObject(addr, size, node, flags, abi.PTR_ALLOCATED, owned_mapping=True)
            else:                                         # VRAM
                if fixed:
                    raise abi.KfdError(abi.NO_MEMORY, "fixed-address VRAM allocations are not supported")
                from ..errors import HipError
                try:
                    addr = self.gpus[node].memory.alloc(size, kind="kfd", align=vram_alignment(size, page))
                except HipError as exc:
                    raise abi.KfdError(abi.NO_MEMORY, str(exc), "ENOMEM") from None
                o = MemObject(addr, size, node, flags, abi.PTR_ALLOCATED, vram_of=node)
                o.mapped.add(node)                        # in its own GPU's table from the start
                v = self.vram.get(node)
                if v is not None and v.small_bar:
                    o.backing = v.backing(addr)
                    if f["HostAccess"]:
                        v.open_to_cpu(addr, size, True)
            self._add(o)
            return addr

    def free(self, addr: int) -> None:
        with self.lock:
            o = self.objects.get(addr)
            if o is None or o.kind in (abi.PTR_REGISTERED_USER,):
                raise abi.KfdError(abi.INVALID_PARAMETER, f"0x{addr:x} is not an allocation of this process")
            self._unmap_all(o)
            self._remove(o)
            if o.vram_of:
                v = self.vram.get(o.vram_of)
                if o.share_fd >= 0 and v is not None:   # importers keep the file; our addresses get own pages
                    v.unshare_pages(addr, o.size)       # (before the arena clears them)
                if v is not None:
                    v.open_to_cpu(addr, o.size, False)
                self.gpus[o.vram_of].memory.free(addr)
            elif o.owned_mapping:
                munmap(o.addr, o.size)
            if o.share_fd >= 0:
                os.close(o.share_fd)
                o.share_fd = -1

    def register_user(self, addr: int, size: int, flags: int, nodes=()) -> None:
        """libhsakmt's fmm_register_memory: registering the start of an existing allocation records the
        nodes; registering an existing user range again (same address and size) counts one more
        registration; new user memory becomes a userptr object — if its pages are mapped — even where it
        overlaps other userptr objects (libhsakmt keys them by address and size; amdkfd gives each its own
        BO).  Registering with other nodes than a registered object already has is MEMORY_ALREADY_REGISTERED,
        and so is user memory overlapping an allocation of the thunk's (its pages are not user pages)."""
        if not addr or not size:
            raise abi.KfdError(abi.INVALID_PARAMETER, "null or empty user range")
        with self.lock:
            for n in nodes:
                self.topology.check_node(n)
            o = self.objects.get(addr) or self._userptr(addr, size)
            if o is not None:
                if o.registered and nodes and tuple(nodes) != o.registered:
                    raise abi.KfdError(abi.MEMORY_ALREADY_REGISTERED, f"0x{addr:x} is registered to other nodes")
                if o.kind == abi.PTR_REGISTERED_USER:
                    o.registrations += 1
                if nodes and not o.registered:
                    o.registered = tuple(nodes)
                return
            i = bisect.bisect_left(self._starts, addr + size)
            if i and self.objects[self._starts[i - 1]].end > addr:
                raise abi.KfdError(abi.MEMORY_ALREADY_REGISTERED, f"0x{addr:x} overlaps an allocation")
            if not host_range_mapped(addr, size):     # amdgpu's userptr pinning (get_user_pages) fails
                raise abi.KfdError(abi.ERROR, f"0x{addr:x}..0x{addr + size:x} is not mapped memory", "EFAULT")
            o = MemObject(addr, size, 0, flags, abi.PTR_REGISTERED_USER, registered=tuple(nodes), registrations=1)
            if self.no_svm:                    # libhsakmt's userptr BO: a VA of the GPU aperture, same page offset
                offset = addr & (PAGE - 1)
                base = mmap_anon(page_ceil(offset + size), prot=abi.PROT_NONE)
                if not base:
                    raise abi.KfdError(abi.NO_MEMORY, f"no GPU VA for {size} bytes of user memory")
                o.gpu_addr = base + offset
            self._add(o)

    def map_event_page(self, addr: int, size: int) -> None:
        """The thunk's event page (the mailboxes of signal events): libhsakmt allocates it as system memory
        mapped to every GPU at its host address (allocate_exec_aligned_memory_gpu), so that a wave's signal
        update (ockl's update_mbox after a hostcall) can store an event id in its signal's mailbox."""
        with self.lock:
            if addr in self.objects:
                return
            self._add(MemObject(addr, size, 0, 0, abi.PTR_ALLOCATED))
        self.map(addr, size)

    def deregister(self, addr: int) -> None:
        with self.lock:
            o = self._object_at(addr)
            if o is None:
                raise abi.KfdError(abi.MEMORY_NOT_REGISTERED, f"0x{addr:x} is not registered (or is the start "
                                                              "of several overlapping registrations)")
            if o.kind == abi.PTR_REGISTERED_USER:
                o.registrations -= 1
                if o.registrations > 0:                # registered again: still pinned
                    return
                self._drop_userptr(o)
            elif o.kind == abi.PTR_REGISTERED_SHARED:  # libhsakmt: deregistering an import releases its BO
                self.free(o.addr)
            else:                         # allocations: libhsakmt only drops the registration record
                o.registered = ()

    def _drop_userptr(self, o: MemObject) -> None:
        self._unmap_all(o)
        self._remove(o)
        if o.gpu_addr:
            munmap(page_floor(o.gpu_addr), page_ceil((o.gpu_addr & (PAGE - 1)) + o.size))

    # -- sharing between processes (IPC) --------------------------------------------------------------
    def share(self, addr: int, size: int) -> SharedHandle:
        """hsaKmtShareMemory: the handle of the allocation starting at ``addr`` (``size`` bytes of it, page
        rounded).  Its first export moves its pages into a memfd mapped back at the same addresses, with the
        queues stopped between packets (a kernel writing it meanwhile would write the old pages after they
        were copied)."""
        with self.lock:
            moved = self._exportable(addr, size).share_fd >= 0
        if not moved:
            with self.quiesce(), self.lock:
                o = self._exportable(addr, size)          # (again: it may have gone meanwhile)
                if o.share_fd < 0:
                    self._move_to_file(o)
        with self.lock:
            o = self._exportable(addr, size)
            gpu = self.topology.gpu(o.vram_of)
            return SharedHandle(os.getpid(), o.share_fd, os.fstat(o.share_fd).st_ino, page_ceil(size) // PAGE,
                                gpu.gpu_id if gpu is not None else 0)

    def _exportable(self, addr: int, size: int) -> MemObject:
        o = self.objects.get(addr)
        if o is None or o.scratch or o.kind != abi.PTR_ALLOCATED:
            raise abi.KfdError(abi.INVALID_PARAMETER, f"0x{addr:x} is not the start of an allocation of this process")
        if not size or page_ceil(size) > o.size:
            raise abi.KfdError(abi.INVALID_PARAMETER, f"{size} bytes do not fit the {o.size}-byte allocation at "
                                                      f"0x{addr:x}")
        if not o.vram_of and not o.owned_mapping:
            raise abi.KfdError(abi.INVALID_PARAMETER, f"0x{addr:x} cannot be shared")
        return o

    def _move_to_file(self, o: MemObject) -> None:
        """The object's pages into a new memfd, mapped back in place (lock held, GPUs quiesced)."""
        fd = os.memfd_create("pyhip-kfd-ipc", os.MFD_CLOEXEC)
        try:
            os.ftruncate(fd, o.size)
            os.pwrite(fd, host_array(o.backing or o.addr, o.size), 0)
            if o.vram_of:
                host = abi.bits(o.flags, abi.MEM_FLAGS)["HostAccess"]
                self.vram[o.vram_of].share_pages(o.addr, o.size, fd, bool(host))
            else:
                _map_fixed(o.addr, o.size, abi.PROT_READ | abi.PROT_WRITE, MAP_SHARED, fd, 0)
        except BaseException:
            os.close(fd)
            raise
        o.share_fd = fd

    def import_shared(self, h: SharedHandle, nodes=()) -> tuple[int, int]:
        """hsaKmtRegisterSharedHandle(ToNodes): the memory of handle ``h`` mapped into this process at a VA of
        its own, a REGISTERED_SHARED object registered to ``nodes``; ``(address, size)``."""
        for n in nodes:
            if n not in self.gpus:
                raise abi.KfdError(abi.INVALID_NODE_UNIT, f"node {n} is not a GPU")
        size = h.pages * PAGE
        try:
            fd = os.open(f"/proc/{h.pid}/fd/{h.fd}", os.O_RDWR | os.O_CLOEXEC)
        except OSError as e:
            raise abi.KfdError(abi.INVALID_HANDLE, f"the shared memory handle's memory is gone ({e.strerror})",
                               "EINVAL") from None
        try:
            st = os.fstat(fd)
            if st.st_ino != h.inode:
                raise abi.KfdError(abi.INVALID_HANDLE, "the shared memory handle's memory is gone (freed by "
                                                       "its exporter)")
            if st.st_size < size:
                raise abi.KfdError(abi.INVALID_HANDLE, "the shared memory handle's size exceeds its memory")
            align = vram_alignment(size, PAGE)      # a VA as libhsakmt reserves one for a BO of this size
            span = size + align
            res = mmap_anon(span, prot=abi.PROT_NONE)
            if not res:
                raise abi.KfdError(abi.NO_MEMORY, f"no VA for {size} bytes of shared memory")
            addr = (res + align - 1) & ~(align - 1)
            if addr > res:
                munmap(res, addr - res)
            if res + span > addr + size:
                munmap(addr + size, res + span - addr - size)
            _map_fixed(addr, size, abi.PROT_READ | abi.PROT_WRITE, MAP_SHARED, fd, 0)
        finally:
            os.close(fd)
        gpu = next((g for g in self.topology.gpus if g.gpu_id == h.gpu_id), None) if h.gpu_id else None
        node = nodes[0] if nodes else (gpu.node_id if gpu is not None else 0)
        flags = abi.pack_bits(abi.MEM_FLAGS, NonPaged=1 if h.gpu_id else 0, HostAccess=1)
        with self.lock:
            self._add(MemObject(addr, size, node, flags, abi.PTR_REGISTERED_SHARED, owned_mapping=True,
                                registered=tuple(nodes)))
        return addr, size

    # -- GPU mappings ------------------------------------------------------------------------------
    def map(self, addr: int, size: int, nodes=None) -> int:
        """MapMemoryToGPU(Nodes); ``nodes`` None = the GPUs libhsakmt maps to by default (the owning GPU for
        VRAM and scratch, every GPU for system and user memory).  Returns the GPU VA (addr, but a userptr's own
        VA without SVM)."""
        with self.lock:
            o = self._object_at(addr, size) or self.find(addr)
            if o is None:
                raise abi.KfdError(abi.INVALID_PARAMETER, f"0x{addr:x} is not in a known memory object")
            if o.scratch:
                if addr & (PAGE - 1) or addr + size > o.end or not size:
                    raise abi.KfdError(abi.INVALID_PARAMETER, "scratch mapping outside the scratch range")
                o.scratch_maps[addr] = size
                return addr
            if addr != o.addr:
                raise abi.KfdError(abi.INVALID_PARAMETER, f"0x{addr:x} is not the start of its object")
            if nodes is None:
                nodes = [o.vram_of] if o.vram_of else (list(o.registered) or list(self.gpus))
            for n in nodes:
                if n not in self.gpus:
                    raise abi.KfdError(abi.INVALID_NODE_UNIT, f"node {n} is not a GPU")
            for n in nodes:
                if n not in o.mapped:
                    self.host_maps[n].add(o)
                    o.mapped.add(n)
            return o.gpu

    def unmap(self, addr: int) -> None:
        with self.lock:
            o = self._object_at(addr) or self.find(addr)
            if o is None:
                raise abi.KfdError(abi.INVALID_PARAMETER, f"0x{addr:x} is not in a known memory object")
            if o.scratch:
                if o.scratch_maps.pop(addr, None) is None:
                    raise abi.KfdError(abi.INVALID_PARAMETER, f"scratch at 0x{addr:x} was not mapped")
                return
            self._unmap_all(o)

    def _unmap_all(self, o: MemObject) -> None:
        for n in list(o.mapped):
            if n != o.vram_of:
                self.host_maps[n].remove(o)
            o.mapped.discard(n)
        if o.vram_of:
            o.mapped.add(o.vram_of)      # VRAM stays in its own GPU's table until freed

    # -- SVM (hsaKmtSVMSetAttr / GetAttr) ------------------------------------------------------------
    def svm_set(self, start: int, size: int, attrs: list[tuple[int, int]]) -> None:
        if start & (PAGE - 1) or size & (PAGE - 1) or not size:
            raise abi.KfdError(abi.INVALID_PARAMETER, "SVM ranges are page aligned")
        with self.lock:
            rec = {}
            for t, v in attrs:
                if t in (abi.SVM_ACCESS, abi.SVM_ACCESS_IN_PLACE, abi.SVM_NO_ACCESS, abi.SVM_PREFERRED_LOC,
                         abi.SVM_PREFETCH_LOC) and v not in (0, 0xFFFFFFFF) and v not in self.gpus:
                    raise abi.KfdError(abi.INVALID_PARAMETER, f"SVM attribute {t}: node {v} is not a GPU")
                if t > abi.SVM_GRANULARITY:
                    raise abi.KfdError(abi.INVALID_PARAMETER, f"unknown SVM attribute {t}")
                rec[t] = v
            self.svm.append((start, start + size, rec))
            for t, v in attrs:
                if t in (abi.SVM_ACCESS, abi.SVM_ACCESS_IN_PLACE) and v in self.gpus:
                    self._svm_map(v, start, size)
                elif t == abi.SVM_NO_ACCESS and v in self.gpus:
                    self._svm_unmap(v, start)

    def _svm_map(self, node: int, start: int, size: int) -> None:
        mem = self.gpus[node].memory
        hit = mem.find(start)
        if hit is None:
            mem.map_host(start, host_array(start, size))

    def _svm_unmap(self, node: int, start: int) -> None:
        self.gpus[node].memory.unmap_host(start)

    def svm_get(self, start: int, size: int, attrs: list[tuple[int, int]]) -> list[tuple[int, int]]:
        with self.lock:
            out = []
            for t, v in attrs:
                val = {abi.SVM_PREFERRED_LOC: 0xFFFFFFFF, abi.SVM_PREFETCH_LOC: 0xFFFFFFFF,
                       abi.SVM_GRANULARITY: 9}.get(t, 0)
                for s, e, rec in self.svm:
                    if s <= start < e and t in rec:
                        val = rec[t] if t not in (abi.SVM_ACCESS, abi.SVM_ACCESS_IN_PLACE, abi.SVM_NO_ACCESS) \
                            else v
                out.append((t, val))
            return out

    # -- pointer info ------------------------------------------------------------------------------
    def pointer_info(self, addr: int) -> dict | None:
        o = self.find(addr)
        if o is None or o.scratch:
            return None
        return dict(Type=o.kind, Node=o.vram_of or o.node, MemFlags=o.flags, CPUAddress=o.addr,
                    GPUAddress=o.gpu, SizeInBytes=o.size, registered=list(o.registered),
                    mapped=sorted(o.mapped), UserData=o.userdata, obj=o)

    def set_userdata(self, addr: int, data: int) -> None:
        o = self.find(addr)
        if o is None:
            raise abi.KfdError(abi.INVALID_PARAMETER, f"0x{addr:x} is not in a known memory object")
        o.userdata = data

    def release_all(self) -> None:
        with self.lock:
            for o in list(self.user):
                self._drop_userptr(o)
            for o in list(self.objects.values()):
                try:
                    self.free(o.addr)
                except abi.KfdError:
                    pass


def _key(o: MemObject) -> tuple[int, int]:
    return (o.addr, o.size)


def pid() -> int:
    return os.getpid()
