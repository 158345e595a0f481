"""Hardware variations of the emulated KFD (PYHIP_THUNK_QUIRKS, pyhip/thunk/quirks.py), checked in the KFD
itself (this process, no ROCr): a small BAR keeps VRAM out of the CPU's reach while the GPU still reads and
writes it; without SVM, registered user memory gets a GPU address of its own and only that one reaches the
pages from the GPU; cus=N changes the node's compute units (and the queue buffer sizes derived from them)."""
import ctypes

import numpy as np
import pytest

from pyhip.emu.memory import host_range_mapped
from pyhip.thunk import abi
from pyhip.thunk.kfd import Kfd
from pyhip.thunk.memory import PAGE
from pyhip.thunk.quirks import Quirks

from test_kfd_queues import FakeNative

ONE = "gfx90a:sramecc+:xnack-"


@pytest.mark.parametrize("text, want", [("", Quirks()), ("cus=228", Quirks(cus=228)),
                                        ("small-bar, no-svm,cus=20", Quirks(20, True, True)),
                                        ("no-p2p", Quirks(no_p2p=True)),
                                        ("strict-events", Quirks(strict_events=True))])
def test_parse(text, want):
    assert Quirks.parse(text) == want


@pytest.mark.parametrize("text", ["cus=0", "cus=many", "large-bar"])
def test_bad_quirks_are_refused(text):
    with pytest.raises(abi.KfdError):
        Quirks.parse(text)


def test_small_bar_vram_is_not_cpu_mapped():
    k = Kfd(FakeNative(), ONE, Quirks(small_bar=True))
    try:
        m, gpu = k.memory, k.gpus[1]
        hidden = m.alloc(1, 4 * PAGE, abi.pack_bits(abi.MEM_FLAGS, NonPaged=1))
        public = m.alloc(1, 4 * PAGE, abi.pack_bits(abi.MEM_FLAGS, NonPaged=1, HostAccess=1))
        assert not host_range_mapped(hidden, 1) and host_range_mapped(public, 4 * PAGE)
        data = np.random.default_rng(2).integers(0, 256, 4 * PAGE - 3, dtype=np.uint8).tobytes()
        for a in (hidden, public):                      # the GPU reaches both
            gpu.memory.write(a + 3, data)
            assert gpu.memory.read(a + 3, len(data)) == data
        assert ctypes.string_at(public + 3, len(data)) == data      # the CPU sees the GPU's bytes where mapped
        assert k.topology.memory_banks(1, k.apertures(1))[0]["HeapType"] == abi.HEAP_FB_PRIVATE
        m.free(hidden)
        m.free(public)
    finally:
        k.close()


def test_without_svm_user_memory_has_its_own_gpu_address():
    k = Kfd(FakeNative(), ONE, Quirks(no_svm=True))
    buf = (ctypes.c_uint8 * (8 * PAGE))()
    host = ctypes.addressof(buf) + 100                  # not page-aligned: the GPU VA keeps the page offset
    try:
        m, gpu = k.memory, k.gpus[1]
        m.register_user(host, 3 * PAGE, abi.pack_bits(abi.MEM_FLAGS, HostAccess=1))
        va = m.map(host, 3 * PAGE, [1])
        assert va != host and va % PAGE == host % PAGE
        assert m.pointer_info(host + 5)["GPUAddress"] == va
        assert m.gpu_accessible(1, va, 3 * PAGE) and not m.gpu_accessible(1, host, 1)
        data = np.random.default_rng(4).integers(0, 256, 3 * PAGE, dtype=np.uint8).tobytes()
        gpu.memory.write(va, data)
        assert ctypes.string_at(host, 3 * PAGE) == data
        assert abi.bits(k.topology.node_properties(1)["Capability"], abi.CAPABILITY)["SVMAPISupported"] == 0
        m.deregister(host)
        assert not m.gpu_accessible(1, va, 1)
    finally:
        k.close()


def test_cu_count_quirk_sizes_the_node():
    base = Kfd(FakeNative(), ONE, Quirks())
    small = Kfd(FakeNative(), ONE, Quirks(cus=20))
    try:
        b, s = base.topology.node_properties(1), small.topology.node_properties(1)
        assert b["NumFComputeCores"] == 104 * 4 and s["NumFComputeCores"] == 20 * 4
        assert small.topology.gpu(1).cwsr_size() < base.topology.gpu(1).cwsr_size()
    finally:
        base.close()
        small.close()


@pytest.mark.parametrize("no_p2p", [False, True])
def test_no_p2p_leaves_the_gpus_unlinked(no_p2p):
    """no-p2p: each GPU links to the CPU only (ROCr then never allows one GPU's VRAM to another)."""
    k = Kfd(FakeNative(), f"{ONE},{ONE}", Quirks(no_p2p=no_p2p))
    try:
        for node, other in ((1, 2), (2, 1)):
            ends = [l["NodeTo"] for l in k.topology.io_links(node)]
            assert 0 in ends and (other in ends) != no_p2p, ends
            assert k.topology.node_properties(node)["NumIOLinks"] == len(ends)
    finally:
        k.close()
