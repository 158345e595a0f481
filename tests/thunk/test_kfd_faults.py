"""A GPU VM fault in the emulated KFD, as amdkfd handles one (event_interrupt_wq_v9 -> kfd_dqm_evict_pasid ->
evict_process_queues_cpsch, then kfd_signal_vm_fault_event): every queue of the process on the faulting GPU
is evicted — later doorbells are ignored, UpdateQueue does not revive it, queues created there afterwards
are created evicted (create_queue_cpsch: is_evicted = !!qpd->evicted) — while queues on the process's other
GPUs go on; the memory event carries the faulting page (page_addr << PAGE_SHIFT), not the byte address.
Runs the KFD in this process with a recording stand-in for the C side, without ROCr."""
import time

import pytest
from test_kfd_queues import FakeNative, buffers

from pyhip.aql.native import ffi
from pyhip.aql.packets import TYPE_BARRIER_AND, BarrierPacket
from pyhip.emu.memory import GPUFault
from pyhip.thunk.kfd import Kfd


@pytest.fixture
def kfd():
    k = Kfd(FakeNative(), "gfx90a:sramecc+:xnack-,gfx90a:sramecc+:xnack-")
    yield k
    k.close()


def make_queue(kfd, node):
    b = buffers(kfd, node)
    headers = ffi.cast("uint16_t*", b["ring"])
    for i in range(b["ring_size"] // 64):
        headers[32 * i] = 1                     # HSA_PACKET_TYPE_INVALID, as ROCr leaves an empty ring
    return kfd.create_queue_raw(node, 100, 7, b["ring"], b["ring_size"], b["read_ptr"], b["write_ptr"], b["eop"],
                                b["eop_size"], b["ctx"], b["ctx_size"], b["ctl_stack_size"])


def submit_barrier(q, index):
    """A barrier-AND packet with no dependencies at ``index``, then the doorbell."""
    slot = q.ring + (index % q.slots) * 64
    ffi.memmove(ffi.cast("void*", slot), BarrierPacket((), 0, kind=TYPE_BARRIER_AND).pack(), 64)
    ffi.cast("uint64_t*", q.doorbell)[0] = index


def consumed(q, count, timeout=5.0):
    """True once the CP's read index reached ``count`` (within ``timeout``)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if ffi.cast("uint64_t*", q.read_ptr)[0] >= count:
            return True
        time.sleep(0.01)
    return False


def fault(kfd, q, address):
    """The CP's fault path of a dispatch on ``q`` that touched ``address``."""
    try:
        q.cp._fault(GPUFault(f"load from unmapped 0x{address:x}", address=address))
    except Exception:  # noqa: BLE001 - QueueStopped: the faulting CP's own loop would end here
        pass


def test_vm_fault_evicts_every_queue_of_the_process_on_that_gpu(kfd):
    a, b, other = make_queue(kfd, 1), make_queue(kfd, 1), make_queue(kfd, 2)
    for q in (a, b, other):
        submit_barrier(q, 0)
        assert consumed(q, 1), "the queue runs before the fault"
    address = 0x7F12_3456_789A
    fault(kfd, a, address)
    assert kfd.native.faults == [(1, address & ~0xFFF, 1, 1)]        # the page, NotPresent, FATAL_PROCESS
    assert kfd.faults[-1][:2] == (1, address)                          # pyhip's own report keeps the byte
    submit_barrier(b, 1)                                               # a doorbell after the eviction
    assert not consumed(b, 2, timeout=0.5), "an evicted queue took a packet"
    kfd.update_queue(b.queue_id, 100, 0, 0, 0)                         # UpdateQueue does not revive it
    assert not consumed(b, 2, timeout=0.3)
    late = make_queue(kfd, 1)                                          # created after the fault: evicted
    submit_barrier(late, 0)
    assert late.evicted and not consumed(late, 1, timeout=0.5)
    submit_barrier(other, 1)                                           # the process's other GPU goes on
    assert consumed(other, 2) and not other.evicted


def test_without_a_fault_queues_run_and_update_queue_pauses_them(kfd):
    """The control: the same packets are consumed when nothing faulted, and percentage 0 pauses a queue
    that percentage 100 resumes (what an evicted queue must not do)."""
    q = make_queue(kfd, 1)
    submit_barrier(q, 0)
    assert consumed(q, 1)
    kfd.update_queue(q.queue_id, 0, 0, 0, 0)
    submit_barrier(q, 1)
    assert not consumed(q, 2, timeout=0.3)
    kfd.update_queue(q.queue_id, 100, 0, 0, 0)
    assert consumed(q, 2)
