"""Registered user memory in the emulated KFD, as libhsakmt's fmm.c and amdkfd treat it: userptr objects are
keyed by address *and* size and may overlap (AMD's HIP pins page-rounded ranges, so copies into neighbouring
slices of one host buffer register overlapping ranges); each is mapped and unmapped on its own, and the GPU
sees exactly the union of what is still mapped.  Runs the KFD in this process, without ROCr."""
import ctypes

import numpy as np
import pytest

from pyhip.thunk import abi
from pyhip.thunk.kfd import Kfd
from pyhip.thunk.memory import PAGE

from test_kfd_queues import FakeNative

HOST = abi.pack_bits(abi.MEM_FLAGS, HostAccess=1)


@pytest.fixture
def kfd():
    k = Kfd(FakeNative(), "gfx90a:sramecc+:xnack-")
    yield k
    k.close()


@pytest.fixture
def host():
    buf = (ctypes.c_uint8 * (16 * PAGE))()
    base = (ctypes.addressof(buf) + PAGE - 1) & ~(PAGE - 1)
    yield base, buf


def visible(kfd, addr, size=1):
    return kfd.memory.gpu_accessible(1, addr, size)


def test_overlapping_registrations_are_separate_objects(kfd, host):
    base, _ = host
    m = kfd.memory
    a, b = (base, 3 * PAGE), (base + 2 * PAGE, 4 * PAGE)           # page-rounded neighbours: one page shared
    for addr, size in (a, b):
        m.register_user(addr, size, HOST)
        m.map(addr, size, [1])
    assert m.pointer_info(base + 100)["SizeInBytes"] == a[1]
    assert m.pointer_info(base + 5 * PAGE)["CPUAddress"] == b[0]
    assert visible(kfd, base, 6 * PAGE) and not visible(kfd, base + 6 * PAGE)
    m.unmap(a[0])                                   # the other registration keeps its pages mapped
    assert not visible(kfd, base) and visible(kfd, b[0], b[1])
    m.deregister(a[0])
    assert m.pointer_info(base) is None and m.pointer_info(b[0])["SizeInBytes"] == b[1]
    m.deregister(b[0])
    assert not visible(kfd, b[0]) and m.pointer_info(b[0]) is None


def test_same_start_different_sizes(kfd, host):
    """Two registrations starting at one address: each is found by (address, size); the address alone is
    ambiguous (libhsakmt's lookup by address with size 0 finds neither) until one is gone."""
    base, _ = host
    m = kfd.memory
    m.register_user(base, PAGE, HOST)
    m.register_user(base, 4 * PAGE, HOST)
    m.map(base, 4 * PAGE, [1])
    assert visible(kfd, base, 4 * PAGE)
    with pytest.raises(abi.KfdError) as e:
        m.deregister(base)
    assert e.value.status == abi.MEMORY_NOT_REGISTERED
    m.register_user(base, PAGE, HOST)              # the same (address, size) again: counted
    assert len(m.user) == 2


def test_gpu_sees_the_bytes_of_the_union(kfd, host):
    """The bounds table entry for overlapping objects is one view of the host pages: a GPU-side write lands
    in the host buffer at the same offset."""
    base, buf = host
    m = kfd.memory
    m.register_user(base + PAGE, 2 * PAGE, HOST)
    m.register_user(base + 2 * PAGE, 3 * PAGE, HOST)
    m.map(base + PAGE, 2 * PAGE, [1])
    m.map(base + 2 * PAGE, 3 * PAGE, [1])
    gpu = kfd.gpus[1]
    data = np.random.default_rng(7).integers(0, 256, 3 * PAGE + 123, dtype=np.uint8)
    gpu.memory.write(base + PAGE + 77, data.tobytes())
    host_bytes = np.frombuffer(buf, dtype=np.uint8)[base - ctypes.addressof(buf):][PAGE + 77:PAGE + 77 + data.size]
    assert np.array_equal(host_bytes, data)


def test_user_memory_overlapping_an_allocation_is_refused(kfd):
    m = kfd.memory
    a = m.alloc(0, 4 * PAGE, HOST)
    with pytest.raises(abi.KfdError) as e:
        m.register_user(a + PAGE, PAGE, HOST)
    assert e.value.status == abi.MEMORY_ALREADY_REGISTERED
    m.free(a)


def test_vram_is_aligned_as_libhsakmt_aligns_it(kfd):
    """libhsakmt aligns a VRAM buffer to the largest power of two not above its size, up to 2 MiB (fmm.c):
    device malloc relies on it (ockl finds a 2 MiB slab's header by rounding a pointer down), so slabs the
    HSA backend allocates for it must be 2 MiB aligned.  Small buffers between them must not disturb that."""
    vram = abi.pack_bits(abi.MEM_FLAGS, NonPaged=1)
    m, got = kfd.memory, []
    for size in (PAGE, 3 * PAGE, 2 << 20, PAGE, 5 * PAGE, 6 << 20, 64 << 10, 2 << 20):
        addr = m.alloc(1, size, vram)
        got.append(addr)
        want = min(2 << 20, 1 << (size.bit_length() - 1))
        assert addr % want == 0, (size, hex(addr))
    for addr in got:
        m.free(addr)


def test_mmio_remap_page_and_hdp_flush_count():
    """Each GPU node reports libhsakmt's MMIO aperture (HSA_HEAPTYPE_MMIO_REMAP, one page, counted in
    NumMemoryBanks as libhsakmt counts it when the aperture is mapped): the page amdkfd remaps the HDP flush
    registers into.  Stores to HDP_MEM_FLUSH_CNTL (word 0) are counted, once per look; HDP_REG_FLUSH_CNTL
    (word 1) is not a memory flush."""
    k = Kfd(FakeNative(), "gfx90a:sramecc+:xnack-,gfx90a:sramecc+:xnack-")
    try:
        for node in (1, 2):
            banks = k.topology.memory_banks(node, k.apertures(node))
            assert len(banks) == k.topology.node_properties(node)["NumMemoryBanks"]
            mmio = [b for b in banks if b["HeapType"] == abi.HEAP_MMIO]
            assert mmio == [dict(HeapType=abi.HEAP_MMIO, SizeInBytes=PAGE, VirtualBaseAddress=k.mmio[node])]
        assert k.mmio[1] != k.mmio[2]
        regs = (ctypes.c_uint32 * 2).from_address(k.mmio[1])
        assert k.hdp_flush_count(1) == 0
        regs[0] = 1
        regs[0] = 1                                   # two stores before a look: one flush seen
        assert k.hdp_flush_count(1) == 1 and k.hdp_flush_count(2) == 0 and regs[0] == 0
        regs[1] = 1                                   # the register flush
        assert k.hdp_flush_count(1) == 1
        regs[0] = 7
        assert k.hdp_flush_count(1) == 2 and k.hdp_flush_count(1) == 2
    finally:
        k.close()
