"""Queue creation in the emulated KFD, checked the way amdkfd 6.x checks AMDKFD_IOC_CREATE_QUEUE
(kfd_chardev.c, kfd_queue.c): every buffer a compute queue needs must be GPU-mapped and of the node's size —
the EOP buffer exactly, the control stack exactly, the context-save area at least the node's CWSR size (what
kfd_queue_ctx_save_restore_size() computes from the topology).  A thunk that sizes the CWSR area with a
formula the kernel does not use (the VGPR size per CU of an older GPU, say) gets EINVAL, not a queue that
later corrupts memory.  Runs the KFD in this process, without ROCr."""
import pytest

from pyhip.thunk import abi
from pyhip.thunk.kfd import Kfd
from pyhip.thunk.memory import PAGE


class FakeNative:
    def __init__(self):
        self.interrupts, self.faults = [], []

    def interrupt(self, event_id):
        self.interrupts.append(event_id)

    def memory_fault(self, *args):
        self.faults.append(args)

    def gpu_clock(self):
        return 0


@pytest.fixture(scope="module")
def kfd():
    k = Kfd(FakeNative(), "gfx90a:sramecc+:xnack-,gfx942:sramecc+:xnack-")
    yield k
    k.close()


def buffers(kfd, node, ring_size=4096):
    m = kfd.memory
    sysflags = abi.pack_bits(abi.MEM_FLAGS, HostAccess=1)
    ring = m.alloc(0, max(ring_size, PAGE), sysflags)
    aq = m.alloc(0, PAGE, sysflags)
    m.map(ring, ring_size, [node])
    m.map(aq, PAGE, [node])
    g = kfd.topology.gpu(node)
    eop = m.alloc(node, PAGE, abi.pack_bits(abi.MEM_FLAGS, NonPaged=1))
    ctx_total = (g.cwsr_size() + g.debug_memory_size() + PAGE - 1) & ~(PAGE - 1)
    ctx = m.alloc(0, ctx_total + 64 * PAGE, sysflags)
    m.map(ctx, ctx_total + 64 * PAGE, [node])
    return dict(ring=ring, ring_size=ring_size, read_ptr=aq + 128, write_ptr=aq + 56, eop=eop,
                eop_size=g.eop_buffer_size(), ctx=ctx, ctx_size=g.cwsr_size(), ctl_stack_size=g.ctl_stack_size())


def create(kfd, node=1, **overrides):
    args = buffers(kfd, node)
    args.update(overrides)
    q = kfd.create_queue_raw(node, 100, 7, **args)
    kfd.destroy_queue(q.queue_id)
    return q


@pytest.mark.parametrize("node", [1, 2])
def test_node_sizes_are_accepted(kfd, node):
    q = create(kfd, node)
    assert q.ctl_stack_size == kfd.topology.gpu(node).ctl_stack_size()


def test_sizes_follow_kfd_queue_c(kfd):
    g = kfd.topology.gpu(1)               # MI210: 104 CUs, 8 shader arrays, 0x80000 VGPR bytes per CU
    waves = min(104 * 40, 8 * 512)
    assert g.ctl_stack_size() == (40 + waves * 8 + 8 + 4095) // 4096 * 4096
    assert g.cwsr_size() == g.ctl_stack_size() + (104 * (0x80000 + 0x4000 + 0x10000 + 0x1000) + 4095) // 4096 * 4096
    assert g.eop_buffer_size() == 4096


@pytest.mark.parametrize("bad, message", [
    (dict(eop_size=8192), "EOP buffer size"),
    (dict(ctl_stack_size=0x1000), "control stack size"),
    (dict(ctl_stack_size=None), "control stack size"),                # node's + one page
    (dict(ctx_size=None), "context-save area"),                      # the pre-Aldebaran VGPR size per CU
    (dict(ring_size=3000), "not a power of two"),
    (dict(ring=0), "ring"),
    (dict(read_ptr=0x1000), "read pointer"),
])
def test_wrong_queue_buffers_are_rejected(kfd, bad, message):
    g = kfd.topology.gpu(1)
    if bad.get("ctl_stack_size", 0) is None:
        bad["ctl_stack_size"] = g.ctl_stack_size() + 4096
    if bad.get("ctx_size", 0) is None:
        legacy_wg = (104 * (0x40000 + 0x4000 + 0x10000 + 0x1000) + 4095) // 4096 * 4096
        bad["ctx_size"] = g.ctl_stack_size() + legacy_wg
    with pytest.raises(abi.KfdError, match=message) as e:
        create(kfd, **bad)
    assert e.value.status in (abi.ERROR, abi.INVALID_PARAMETER)
    assert not kfd.queues


def test_unmapped_context_save_area_is_rejected(kfd):
    args = buffers(kfd, 1)
    kfd.memory.unmap(args["ctx"])
    with pytest.raises(abi.KfdError, match="not mapped"):
        kfd.create_queue_raw(1, 100, 7, **args)


def test_ring_mapped_to_another_gpu_is_rejected(kfd):
    args = buffers(kfd, 2)
    with pytest.raises(abi.KfdError, match="not in memory mapped to node 1"):
        kfd.create_queue_raw(1, 100, 7, **{**args, **{k: v for k, v in buffers(kfd, 1).items() if k != "ring"}})


def test_small_rings_are_clamped_like_kfd(kfd):
    q = create(kfd, ring_size=256)
    assert q.ring_size == 1024


def test_percentage_and_priority_ranges(kfd):
    args = buffers(kfd, 1)
    with pytest.raises(abi.KfdError, match="percentage"):
        kfd.create_queue_raw(1, 101, 7, **args)
    with pytest.raises(abi.KfdError, match="priority"):
        kfd.create_queue_raw(1, 100, 16, **args)
    with pytest.raises(abi.KfdError) as e:
        kfd.create_queue(1, abi.QUEUE_COMPUTE_AQL, 100, 4, args["ring"], 4096, 0, args["read_ptr"],
                         args["write_ptr"])
    assert e.value.status == abi.INVALID_PARAMETER
