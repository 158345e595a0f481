"""AQL layouts checked against independent references:

* ROCm's own headers (hsa.h, hsa_ext_amd.h, amd_hsa_queue.h, amd_hsa_signal.h) compiled with gcc: the C
  program fills the real structs from random values and prints their bytes and ``offsetof``s;
* the §8 tables of docs/code-object.md written out as ``struct`` offsets by hand below.
"""
import random
import struct
import subprocess

import pytest

from conftest import require_tool
from pyhip.aql import packets as P
from pyhip.aql.queue import READ_INDEX_OFF, WRITE_INDEX_OFF, Queue
from pyhip.aql.signal import END_TS_OFF, START_TS_OFF, VALUE_OFF, Signal

C_SRC = r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stddef.h>
#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>
#include <hsa/amd_hsa_queue.h>
#include <hsa/amd_hsa_signal.h>
static void dump(const void* p) { const unsigned char* b = p; for (int i = 0; i < 64; ++i) printf("%02x", b[i]); printf("\n"); }
int main(int argc, char** argv) {
  unsigned long long v[16]; for (int i = 0; i < 16; ++i) v[i] = strtoull(argv[i + 1], 0, 0);
  hsa_kernel_dispatch_packet_t k; memset(&k, 0, sizeof k);
  k.header = v[0]; k.setup = v[1]; k.workgroup_size_x = v[2]; k.workgroup_size_y = v[3]; k.workgroup_size_z = v[4];
  k.grid_size_x = v[5]; k.grid_size_y = v[6]; k.grid_size_z = v[7]; k.private_segment_size = v[8];
  k.group_segment_size = v[9]; k.kernel_object = v[10]; k.kernarg_address = (void*)v[11];
  k.completion_signal.handle = v[12]; dump(&k);
  hsa_barrier_and_packet_t b; memset(&b, 0, sizeof b); b.header = v[0];
  for (int i = 0; i < 5; ++i) b.dep_signal[i].handle = v[5 + i]; b.completion_signal.handle = v[12]; dump(&b);
  hsa_barrier_or_packet_t o; memset(&o, 0, sizeof o); o.header = v[1];
  for (int i = 0; i < 5; ++i) o.dep_signal[i].handle = v[6 + i]; o.completion_signal.handle = v[13]; dump(&o);
  hsa_agent_dispatch_packet_t a; memset(&a, 0, sizeof a); a.header = v[0]; a.type = v[2];
  a.return_address = (void*)v[10]; for (int i = 0; i < 4; ++i) a.arg[i] = v[11 + i]; a.completion_signal.handle = v[15]; dump(&a);
  hsa_amd_barrier_value_packet_t bv; memset(&bv, 0, sizeof bv); bv.header.header = v[0];
  bv.header.AmdFormat = HSA_AMD_PACKET_TYPE_BARRIER_VALUE; bv.signal.handle = v[10]; bv.value = v[11];
  bv.mask = v[12]; bv.cond = v[3] & 3; bv.completion_signal.handle = v[14]; dump(&bv);
  printf("%zu %zu %zu %zu %zu %zu %zu %zu %zu %zu %zu %zu %zu %zu %zu %zu %zu %zu\n",
         offsetof(amd_queue_t, write_dispatch_id), offsetof(amd_queue_t, read_dispatch_id), sizeof(amd_queue_t),
         offsetof(hsa_queue_t, type), offsetof(hsa_queue_t, features), offsetof(hsa_queue_t, base_address),
         offsetof(hsa_queue_t, doorbell_signal), offsetof(hsa_queue_t, size), offsetof(hsa_queue_t, id),
         sizeof(amd_signal_t), offsetof(amd_signal_t, kind), offsetof(amd_signal_t, value),
         offsetof(amd_signal_t, start_ts), offsetof(amd_signal_t, end_ts), offsetof(amd_signal_t, reserved3),
         offsetof(amd_queue_t, read_dispatch_id_field_base_byte_offset), offsetof(amd_queue_t, queue_properties),
         offsetof(amd_queue_t, reserved4));
  printf("%d %d %d %d %d %d\n", HSA_PACKET_TYPE_KERNEL_DISPATCH | (1 << HSA_PACKET_HEADER_BARRIER)
         | (HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_SCACQUIRE_FENCE_SCOPE)
         | (HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_SCRELEASE_FENCE_SCOPE),
         HSA_PACKET_TYPE_INVALID, HSA_PACKET_TYPE_BARRIER_AND, HSA_PACKET_TYPE_BARRIER_OR,
         HSA_PACKET_TYPE_AGENT_DISPATCH, AMD_SIGNAL_KIND_USER);
  return 0;
}
"""


@pytest.fixture(scope="module")
def hsa_prog(tmp_path_factory):
    d = tmp_path_factory.mktemp("hsa")
    src = d / "layout.c"
    src.write_text(C_SRC)
    exe = d / "layout"
    subprocess.run([require_tool("gcc"), "-D__HIP_PLATFORM_AMD__", "-o", str(exe), str(src)], check=True)
    return exe


def _run(exe, v):
    return subprocess.run([str(exe)] + [str(x) for x in v], capture_output=True, text=True, check=True).stdout.split("\n")


def _s64(x):
    return x - (1 << 64) if x >= 1 << 63 else x


@pytest.mark.parametrize("seed", range(4))
def test_packets_match_hsa_headers(hsa_prog, seed):
    rng = random.Random(seed)
    v = [rng.getrandbits(16), rng.getrandbits(2), rng.getrandbits(10), rng.getrandbits(10), rng.getrandbits(10),
         rng.getrandbits(32), rng.getrandbits(32), rng.getrandbits(32), rng.getrandbits(32), rng.getrandbits(32)]
    v += [rng.getrandbits(64) for _ in range(6)]
    out = _run(hsa_prog, v)
    k, b, o, a, bv = (bytes.fromhex(x) for x in out[:5])
    kp = P.KernelDispatchPacket(v[1], (v[2], v[3], v[4]), (v[5], v[6], v[7]), v[8], v[9], v[10], v[11], v[12], header=v[0])
    assert kp.pack() == k
    assert P.BarrierPacket(tuple(v[5:10]), v[12], header=v[0]).pack() == b
    assert P.BarrierPacket(tuple(v[6:11]), v[13], header=v[1]).pack() == o
    assert P.AgentDispatchPacket(v[2], tuple(v[11:15]), v[10], v[15], header=v[0]).pack() == a
    bvp = P.BarrierValuePacket(v[10], _s64(v[11]), _s64(v[12]), v[3] & 3, v[14], header=v[0])
    assert bvp.pack() == bv
    # decoding the C bytes gives the same fields back
    assert P.KernelDispatchPacket.unpack(k) == kp
    assert P.BarrierPacket.unpack(o).dep_signals == tuple(v[6:11])
    assert P.AgentDispatchPacket.unpack(a).args == tuple(v[11:15])
    assert P.BarrierValuePacket.unpack(bv) == bvp


def test_struct_offsets_match_hsa_headers(hsa_prog):
    out = _run(hsa_prog, [0] * 16)
    (wr, rd, qsize, qtype, qfeat, qbase, qdoor, qsz, qid, ssize, skind, sval, sts, ets, sres, rdbase, qprops,
     res4) = map(int, out[5].split())
    assert (wr, rd, qsize) == (WRITE_INDEX_OFF, READ_INDEX_OFF, 256)
    assert (qtype, qfeat, qbase, qdoor, qsz, qid) == (0, 4, 8, 16, 24, 32)
    assert (ssize, skind, sval, sts, ets) == (64, 0, VALUE_OFF, START_TS_OFF, END_TS_OFF)
    assert sres == 56 and rdbase == 136 and qprops == 180 and res4 == 200   # pyhip's private words live here
    hdr, invalid, band, bor, agent, kind_user = map(int, out[6].split())
    assert P.header(P.TYPE_KERNEL_DISPATCH) == hdr == 0x1502
    assert (P.TYPE_INVALID, P.TYPE_BARRIER_AND, P.TYPE_BARRIER_OR, P.TYPE_AGENT_DISPATCH) == (invalid, band, bor, agent)
    # a live queue / signal, read back at the C offsets
    q = Queue(16)
    buf = bytes(q.amd_queue.buffer())
    assert len(buf) == qsize
    assert struct.unpack_from("<I", buf, qtype)[0] == 0                    # multi-producer
    assert struct.unpack_from("<I", buf, qfeat)[0] == 3                    # kernel + agent dispatch
    assert struct.unpack_from("<Q", buf, qbase)[0] == q.ring.address == q.base_address
    assert struct.unpack_from("<Q", buf, qdoor)[0] == q.doorbell.handle
    assert struct.unpack_from("<I", buf, qsz)[0] == 16
    assert struct.unpack_from("<Q", buf, qid)[0] == q.id
    assert struct.unpack_from("<Q", buf, wr)[0] == struct.unpack_from("<Q", buf, rd)[0] == 0
    q.submit(P.BarrierPacket(()).pack())
    buf = bytes(q.amd_queue.buffer())
    assert struct.unpack_from("<Q", buf, wr)[0] == 1 == q.write_index       # the index IS the struct field
    s = Signal(-7)
    raw = s.raw()
    assert struct.unpack_from("<q", raw, skind)[0] == kind_user == 1
    assert struct.unpack_from("<q", raw, sval)[0] == -7
    s.set_times(111, 222)
    assert struct.unpack_from("<QQ", s.raw(), sts) == (111, 222)


def test_layouts_match_doc_tables():
    """Second reference: docs/code-object.md §8.2 offsets, spelled out field by field."""
    pk = P.KernelDispatchPacket(3, (64, 2, 1), (1000, 20, 3), 16, 4096, 0x1122334455667788, 0xAABBCCDD00, 0x5000,
                                header=P.header(P.TYPE_KERNEL_DISPATCH, True, P.FENCE_AGENT, P.FENCE_AGENT)).pack()
    doc = bytearray(64)
    for off, fmt, val in [(0, "H", 0x0B02), (2, "H", 3), (4, "H", 64), (6, "H", 2), (8, "H", 1), (12, "I", 1000),
                          (16, "I", 20), (20, "I", 3), (24, "I", 16), (28, "I", 4096), (32, "Q", 0x1122334455667788),
                          (40, "Q", 0xAABBCCDD00), (56, "Q", 0x5000)]:
        struct.pack_into("<" + fmt, doc, off, val)
    assert pk == bytes(doc)
    bv = P.BarrierValuePacket(0x1000, 5, 0xFF, P.BV_GTE, 0x2000).pack()
    doc = bytearray(64)
    for off, fmt, val in [(0, "H", P.header(P.TYPE_VENDOR)), (2, "B", 2), (8, "Q", 0x1000), (16, "q", 5),
                          (24, "q", 0xFF), (32, "I", 3), (56, "Q", 0x2000)]:
        struct.pack_into("<" + fmt, doc, off, val)
    assert bv == bytes(doc)
    ag = P.AgentDispatchPacket(P.AGENT_FILL, (1, 2, 3, 4), 0x99, 0x77).pack()
    assert struct.unpack_from("<HHIQ4QQQ", ag) == (P.header(P.TYPE_AGENT_DISPATCH), 0x8002, 0, 0x99, 1, 2, 3, 4, 0, 0x77)


def test_header_bits():
    assert P.header(P.TYPE_KERNEL_DISPATCH) == 0x1502
    assert P.header(P.TYPE_KERNEL_DISPATCH, barrier=True, acquire=P.FENCE_AGENT, release=P.FENCE_AGENT) == 0x0B02
    assert P.header_fields(0x1502) == (2, True, 2, 2)
    assert P.header_fields(0x0B02) == (2, True, 1, 1)
    assert P.header_fields(P.header(P.TYPE_BARRIER_OR, False, 0, 1)) == (5, False, 0, 1)


def test_publish_writes_the_packet_bytes_verbatim():
    q = Queue(4)                                   # no consumer: the slots keep what producers wrote
    pkts = [P.KernelDispatchPacket(1, (i + 1, 1, 1), (64, 1, 1), 0, 0, 0x1000 + i, 0x2000 + i, 0).pack()
            for i in range(4)]
    for i, p in enumerate(pkts):
        assert q.submit(p) == i
    for i, p in enumerate(pkts):
        assert q.slot_bytes(i) == p
        assert q.peek(i) == p
    assert q.doorbell.load() == 3
    q.retire(0)
    assert q.slot_bytes(0)[:2] == b"\x01\x00" and q.read_index == 1 and q.peek(0) is None
