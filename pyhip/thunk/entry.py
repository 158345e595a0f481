"""The Python half of the drop-in libhsakmt.so.1: ``install()`` runs once in the library's embedded
interpreter and attaches every ``pyhip_kfd_py_*`` entry point (native/hsakmt/build_thunk.py) to the
emulated KFD (pyhip.thunk.kfd).  C types in, HSAKMT_STATUS out; a KfdError carries the status, anything
else unexpected is HSAKMT_STATUS_ERROR (and is printed when PYHIP_LOG_FAULTS=1) — nothing unwinds into C."""
from __future__ import annotations

import os
import sys
import threading
import traceback

from . import abi
from .memory import PAGE

_LOG = os.environ.get("PYHIP_LOG_FAULTS", "") not in ("", "0")


class Native:
    """The C side of the thunk as the KFD sees it."""

    def __init__(self, lib, ffi=None):
        self.lib, self.ffi = lib, ffi

    def function_address(self, name: str) -> int:
        """The address of a C function of the thunk (for native code that calls it), 0 if unknown."""
        if self.ffi is None:
            return 0
        return int(self.ffi.cast("uintptr_t", self.ffi.addressof(self.lib, name)))

    def event_page(self) -> tuple[int, int]:
        """(address, size) of the event page: the signal events' mailboxes."""
        return int(self.ffi.cast("uintptr_t", self.lib.pyhip_kfd_event_page())), abi.SIGNAL_EVENT_LIMIT * 8

    def interrupt(self, event_id: int) -> int:
        return self.lib.pyhip_kfd_interrupt(event_id)

    def memory_fault(self, node: int, va: int, failure: int, flags: int) -> None:
        self.lib.pyhip_kfd_memory_fault(node, va, failure, flags)

    def gpu_clock(self) -> int:
        return self.lib.pyhip_kfd_gpu_clock()

    def xchg_u32(self, addr: int, value: int) -> int:
        return self.lib.pyhip_kfd_xchg_u32(addr, value)

    def set_strict_events(self, strict: bool) -> None:
        self.lib.pyhip_kfd_set_strict_events(int(strict))


class State:
    kfd = None
    opens = 0
    snapshot = False
    lock = threading.RLock()


def current():
    """The open KFD of this process (None before hsaKmtOpenKFD)."""
    return State.kfd


def install() -> None:
    from _pyhip_thunk import ffi, lib  # provided by the embedding

    from .kfd import KFD_VERSION, Kfd

    def entry(fn):
        name = "pyhip_kfd_py_" + fn.__name__

        def wrapper(*args):
            try:
                r = fn(*args)
                return abi.SUCCESS if r is None else r
            except abi.KfdError as exc:
                if _LOG:
                    print(f"pyhip: hsaKmt{fn.__name__}: {exc}", file=sys.stderr, flush=True)
                return exc.status
            except Exception:  # noqa: BLE001 - nothing may unwind into C
                print(f"pyhip: hsaKmt{fn.__name__} failed:\n{traceback.format_exc()}", file=sys.stderr, flush=True)
                return abi.ERROR
        wrapper.__name__ = name
        return ffi.def_extern(name=name)(wrapper)

    def kfd():
        return State.kfd

    def addr(p) -> int:
        return int(ffi.cast("uintptr_t", p))

    def nodes_of(n, array) -> list[int]:
        if n and array == ffi.NULL:
            raise abi.KfdError(abi.INVALID_PARAMETER, "null node array")
        return [int(array[i]) for i in range(n)]

    def fill(struct_ptr, values: dict) -> None:
        for k, v in values.items():
            if k == "MarketingName":
                units = [ord(c) for c in v[:63]] + [0]
                for i, u in enumerate(units):
                    struct_ptr.MarketingName[i] = u
            elif k == "SiblingMap":
                for i, m in enumerate(v):
                    struct_ptr.SiblingMap[i] = m
            elif k == "AMDName":
                raw = v.encode()[:63] + b"\0"
                for i, b in enumerate(raw):
                    struct_ptr.AMDName[i] = b
            else:
                setattr(struct_ptr, k, v)

    # -- open / close --------------------------------------------------------------------------------
    @entry
    def OpenKFD():
        with State.lock:
            if State.kfd is None:
                State.kfd = Kfd(Native(lib, ffi))
            State.opens += 1
            lib.pyhip_kfd_set_open(State.opens)
        return abi.SUCCESS if State.opens == 1 else abi.KERNEL_ALREADY_OPENED

    @entry
    def CloseKFD():
        with State.lock:
            State.opens -= 1
            lib.pyhip_kfd_set_open(State.opens)
            if State.opens == 0 and State.kfd is not None:
                State.kfd.close()
                State.kfd = None

    @entry
    def GetVersion(info):
        if info == ffi.NULL:
            raise abi.KfdError(abi.INVALID_PARAMETER, "null version info")
        info.KernelInterfaceMajorVersion, info.KernelInterfaceMinorVersion = KFD_VERSION

    @entry
    def RuntimeEnable(r_debug, setup_ttmp):
        return abi.NOT_SUPPORTED            # the KFD debugger interface of ROCm 5.2 is not emulated

    @entry
    def RuntimeDisable():
        return abi.NOT_SUPPORTED

    # -- topology ------------------------------------------------------------------------------------
    @entry
    def AcquireSystemProperties(props):
        if props == ffi.NULL:
            raise abi.KfdError(abi.INVALID_PARAMETER, "null system properties")
        State.snapshot = True
        props.NumNodes = kfd().topology.num_nodes
        props.PlatformOem, props.PlatformId, props.PlatformRev = 0x414D44, 0x50594849, 1

    @entry
    def ReleaseSystemProperties():
        State.snapshot = False

    def need_snapshot():
        if not State.snapshot:
            raise abi.KfdError(abi.INVALID_NODE_UNIT, "no topology snapshot (hsaKmtAcquireSystemProperties)")

    @entry
    def GetNodeProperties(node, props):
        if props == ffi.NULL:
            raise abi.KfdError(abi.INVALID_PARAMETER, "null node properties")
        need_snapshot()
        ffi.memmove(props, bytes(ffi.sizeof("HsaNodeProperties")), ffi.sizeof("HsaNodeProperties"))
        fill(props, kfd().topology.node_properties(node))

    @entry
    def GetNodeMemoryProperties(node, n, props):
        if props == ffi.NULL:
            raise abi.KfdError(abi.INVALID_PARAMETER, "null memory properties")
        need_snapshot()
        banks = kfd().topology.memory_banks(node, kfd().apertures(node))
        size = ffi.sizeof("HsaMemoryProperties")
        ffi.memmove(props, bytes(size * n), size * n)
        for i, b in enumerate(banks[:n]):
            fill(props[i], b)

    @entry
    def GetNodeCacheProperties(node, processor_id, n, props):
        if props == ffi.NULL:
            raise abi.KfdError(abi.INVALID_PARAMETER, "null cache properties")
        need_snapshot()
        caches = kfd().topology.caches(node)
        if n > len(caches):
            raise abi.KfdError(abi.INVALID_PARAMETER, f"{n} caches asked, node {node} has {len(caches)}")
        for i, c in enumerate(caches[:n]):
            fill(props[i], c)

    @entry
    def GetNodeIoLinkProperties(node, n, props):
        if props == ffi.NULL:
            raise abi.KfdError(abi.INVALID_PARAMETER, "null IO link properties")
        need_snapshot()
        links = kfd().topology.io_links(node)
        if n > len(links):
            raise abi.KfdError(abi.INVALID_PARAMETER, f"{n} links asked, node {node} has {len(links)}")
        for i, link in enumerate(links[:n]):
            fill(props[i], link)

    @entry
    def GetXNACKMode(enable):
        if enable == ffi.NULL:
            raise abi.KfdError(abi.INVALID_PARAMETER, "null")
        enable[0] = kfd().xnack

    @entry
    def SetXNACKMode(enable):
        k = kfd()
        if k.queues:
            raise abi.KfdError(abi.ERROR, "XNACK mode cannot change while queues exist", "EBUSY")
        k.xnack = int(bool(enable))

    @entry
    def GetTileConfig(node, config):
        if config == ffi.NULL or kfd().topology.gpu(node) is None:
            raise abi.KfdError(abi.INVALID_PARAMETER, "bad node or config")
        config.NumTileConfigs = config.NumMacroTileConfigs = 0
        config.GbAddrConfig, config.NumBanks, config.NumRanks = 0x2A114042, 16, 2

    @entry
    def SetTrapHandler(node, tba, tba_size, tma, tma_size):
        if kfd().topology.gpu(node) is None:
            raise abi.KfdError(abi.INVALID_NODE_UNIT, f"node {node} is not a GPU")
        kfd().trap_handlers[node] = (addr(tba), tba_size, addr(tma), tma_size)

    @entry
    def SetMemoryPolicy(node, default, alternate, alt_addr, alt_size):
        kfd().topology.check_node(node)
        return abi.NOT_IMPLEMENTED          # libhsakmt: a legacy Kaveri-only call on every dGPU

    # -- memory --------------------------------------------------------------------------------------
    @entry
    def AllocMemory(node, size, flags, out):
        if out == ffi.NULL:
            raise abi.KfdError(abi.INVALID_PARAMETER, "null address pointer")
        fixed = addr(out[0]) if abi.bits(flags.Value, abi.MEM_FLAGS)["FixedAddress"] else 0
        out[0] = ffi.cast("void*", kfd().memory.alloc(node, size, flags.Value, fixed))

    @entry
    def FreeMemory(ptr, size):
        if ptr == ffi.NULL:
            raise abi.KfdError(abi.ERROR, "freeing a null pointer")
        kfd().memory.free(addr(ptr))

    @entry
    def RegisterMemory(ptr, size):
        kfd().memory.register_user(addr(ptr), size, abi.pack_bits(abi.MEM_FLAGS, HostAccess=1))

    @entry
    def RegisterMemoryToNodes(ptr, size, n, nodes):
        kfd().memory.register_user(addr(ptr), size, abi.pack_bits(abi.MEM_FLAGS, HostAccess=1), nodes_of(n, nodes))

    @entry
    def RegisterMemoryWithFlags(ptr, size, flags):
        f = abi.bits(flags.Value, abi.MEM_FLAGS)
        if f["HostAccess"] != 1 or f["NonPaged"]:
            return abi.NOT_SUPPORTED        # registered memory is ordinary paged host memory
        kfd().memory.register_user(addr(ptr), size, flags.Value)

    @entry
    def DeregisterMemory(ptr):
        kfd().memory.deregister(addr(ptr))

    @entry
    def MapMemoryToGPU(ptr, size, alt):
        va = kfd().memory.map(addr(ptr), size)
        if alt != ffi.NULL:
            alt[0] = va

    @entry
    def MapMemoryToGPUNodes(ptr, size, alt, flags, n, nodes):
        va = kfd().memory.map(addr(ptr), size, nodes_of(n, nodes))
        if alt != ffi.NULL:
            alt[0] = va

    @entry
    def UnmapMemoryToGPU(ptr):
        if ptr == ffi.NULL:
            raise abi.KfdError(abi.INVALID_PARAMETER, "null pointer")
        kfd().memory.unmap(addr(ptr))

    @entry
    def QueryPointerInfo(ptr, info):
        if info == ffi.NULL:
            raise abi.KfdError(abi.INVALID_PARAMETER, "null pointer info")
        ffi.memmove(info, bytes(ffi.sizeof("HsaPointerInfo")), ffi.sizeof("HsaPointerInfo"))
        i = kfd().memory.pointer_info(addr(ptr))
        if i is None:
            info.Type = abi.PTR_UNKNOWN
            return abi.ERROR
        o = i.pop("obj")
        reg = ffi.new("uint32_t[]", i.pop("registered") or [0])
        mapped = ffi.new("uint32_t[]", i.pop("mapped") or [0])
        o.keep = [reg, mapped]                       # the arrays stay valid while the object lives
        info.NRegisteredNodes, info.RegisteredNodes = len(o.registered), reg
        info.NMappedNodes, info.MappedNodes = len(o.mapped), mapped
        info.Type, info.Node, info.MemFlags.Value = i["Type"], i["Node"], i["MemFlags"]
        info.CPUAddress = ffi.cast("void*", i["CPUAddress"])
        info.GPUAddress, info.SizeInBytes = i["GPUAddress"], i["SizeInBytes"]
        info.UserData = ffi.cast("void*", i["UserData"])

    @entry
    def SetMemoryUserData(ptr, data):
        kfd().memory.set_userdata(addr(ptr), addr(data))

    @entry
    def SVMSetAttr(start, size, n, attrs):
        if attrs == ffi.NULL and n:
            raise abi.KfdError(abi.INVALID_PARAMETER, "null attributes")
        kfd().memory.svm_set(addr(start), size, [(attrs[i].type, attrs[i].value) for i in range(n)])

    @entry
    def SVMGetAttr(start, size, n, attrs):
        if attrs == ffi.NULL and n:
            raise abi.KfdError(abi.INVALID_PARAMETER, "null attributes")
        out = kfd().memory.svm_get(addr(start), size, [(attrs[i].type, attrs[i].value) for i in range(n)])
        for i, (t, v) in enumerate(out):
            attrs[i].type, attrs[i].value = t, v

    @entry
    def ShareMemory(ptr, size, handle):
        if handle == ffi.NULL:
            raise abi.KfdError(abi.INVALID_PARAMETER, "null shared memory handle")
        h = kfd().memory.share(addr(ptr), size)
        for i, w in enumerate(h.words()):
            handle.Handle[i] = w

    def register_shared(handle, out, size, nodes):
        if handle == ffi.NULL or out == ffi.NULL:
            raise abi.KfdError(abi.INVALID_PARAMETER, "null shared memory handle or address")
        from .memory import SharedHandle

        a, n = kfd().memory.import_shared(SharedHandle.parse([handle.Handle[i] for i in range(8)]), nodes)
        out[0] = ffi.cast("void*", a)
        if size != ffi.NULL:
            size[0] = n

    @entry
    def RegisterSharedHandle(handle, out, size):
        register_shared(handle, out, size, [])

    @entry
    def RegisterSharedHandleToNodes(handle, out, size, n, nodes):
        register_shared(handle, out, size, nodes_of(n, nodes))

    @entry
    def RegisterGraphicsHandleToNodes(handle, info, n, nodes):
        raise abi.KfdError(abi.INVALID_PARAMETER, "no such graphics buffer (no graphics driver)")

    # -- queues --------------------------------------------------------------------------------------
    @entry
    def CreateQueue(node, qtype, percentage, priority, ring, ring_size, event, res):
        if res == ffi.NULL:
            raise abi.KfdError(abi.INVALID_PARAMETER, "null queue resource")
        event_id = event.EventId if event != ffi.NULL else 0
        q = kfd().create_queue(node, qtype, percentage, priority, addr(ring), ring_size, event_id,
                               res.QueueRptrValue, res.QueueWptrValue)
        res.QueueId = q.queue_id
        res.QueueDoorBell = q.doorbell

    @entry
    def UpdateQueue(qid, percentage, priority, ring, ring_size, event):
        kfd().update_queue(qid, percentage, priority, addr(ring), ring_size)

    @entry
    def DestroyQueue(qid):
        kfd().destroy_queue(qid)

    @entry
    def SetQueueCUMask(qid, count, mask):
        if mask == ffi.NULL or count == 0 or count % 32:
            raise abi.KfdError(abi.INVALID_PARAMETER, "the CU mask is a non-empty multiple of 32 bits")
        kfd().set_cu_mask(qid, [int(mask[i]) for i in range(count // 32)])

    @entry
    def AllocQueueGWS(qid, n, first):
        f = kfd().alloc_gws(qid, n)
        if first != ffi.NULL:
            first[0] = f

    assert PAGE == 4096
