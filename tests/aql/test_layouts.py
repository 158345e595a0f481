"""AQL layouts checked against ROCm's own headers (hsa.h, amd_hsa_queue.h, amd_hsa_signal.h, hsa_ext_amd.h)
compiled with gcc: the C program fills the real structs and prints their bytes / offsets."""
import random
import subprocess

import pytest

from conftest import require_tool
from pyhip.aql import packets as P
from pyhip.aql.queue import READ_INDEX_OFF, WRITE_INDEX_OFF, Queue

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
  printf("%zu %zu %zu %zu %zu %zu %zu\n", offsetof(amd_queue_t, write_dispatch_id), offsetof(amd_queue_t, read_dispatch_id),
         sizeof(amd_queue_t), offsetof(amd_signal_t, value), offsetof(amd_signal_t, start_ts), offsetof(amd_signal_t, end_ts),
         offsetof(hsa_queue_t, base_address));
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


@pytest.mark.parametrize("seed", range(5))
def test_packets_match_hsa_headers(hsa_prog, seed):
    rng = random.Random(seed)
    v = [rng.getrandbits(16), rng.getrandbits(2), rng.getrandbits(10), rng.getrandbits(10), rng.getrandbits(10),
         rng.getrandbits(32), rng.getrandbits(32), rng.getrandbits(32), rng.getrandbits(32), rng.getrandbits(32)]
    v += [rng.getrandbits(64) for _ in range(6)]
    out = subprocess.run([str(hsa_prog)] + [str(x) for x in v], capture_output=True, text=True, check=True).stdout.split("\n")
    k, b, o, a, bv = (bytes.fromhex(x) for x in out[:5])
    assert P.KernelDispatchPacket(v[1], (v[2], v[3], v[4]), (v[5], v[6], v[7]), v[8], v[9], v[10], v[11], v[12],
                                  header=v[0]).pack() == k
    assert P.BarrierPacket(tuple(v[5:10]), v[12], header=v[0]).pack() == b
    assert P.BarrierPacket(tuple(v[6:11]), v[13], header=v[1]).pack() == o
    assert P.AgentDispatchPacket(v[2], tuple(v[11:15]), v[10], v[15], header=v[0]).pack() == a
    assert P.BarrierValuePacket(v[10], v[11] - (1 << 64) if v[11] >= 1 << 63 else v[11],
                                v[12] - (1 << 64) if v[12] >= 1 << 63 else v[12], v[3] & 3, v[14], header=v[0]).pack() == bv
    # and back
    assert P.KernelDispatchPacket.unpack(k).kernel_object == v[10]
    assert P.BarrierPacket.unpack(o).dep_signals == tuple(v[6:11])
    assert P.decode(P.BarrierPacket((1, 2), 3, kind=P.TYPE_BARRIER_OR).pack()).kind == P.TYPE_BARRIER_OR
    wr, rd, qsize, sval, sts, ets, base = map(int, out[5].split())
    assert (wr, rd, sval, sts, ets, base) == (WRITE_INDEX_OFF, READ_INDEX_OFF, 8, 32, 40, 8)


def test_header_bits():
    assert P.header(P.TYPE_KERNEL_DISPATCH) == 0x1502
    assert P.header(P.TYPE_KERNEL_DISPATCH, barrier=True, acquire=P.FENCE_AGENT, release=P.FENCE_AGENT) == 0x0B02
    assert P.header_fields(0x1502) == (2, True, 2, 2)


def test_queue_struct_fields():
    q = Queue(16)
    import struct
    buf = bytes(q.amd_queue.buffer())
    typ, features, base, doorbell, size = struct.unpack_from("<IIQQI", buf, 0)
    assert (base, doorbell, size) == (q.ring.address, q.doorbell.handle, 16)
    assert q.address == q.amd_queue.address
