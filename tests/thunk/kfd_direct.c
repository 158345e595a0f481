/* A client of the thunk interface itself, compiled against Debian's hsakmt.h / hsakmttypes.h (5.2) and run
 * on pyhip's libhsakmt.so.1: topology, memory, pointer info, events with timeouts, queue creation that KFD
 * must reject, and a queue whose command processor completes a barrier packet and raises the completion
 * signal's event through its mailbox.  Prints one "ok ..." line per check and PASS, or FAIL and the reason. */
#include <hsakmt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define OK(x) do { HSAKMT_STATUS s_ = (x); if (s_ != HSAKMT_STATUS_SUCCESS) { \
    printf("FAIL %s -> %d (line %d)\n", #x, s_, __LINE__); exit(1); } } while (0)
#define EXPECT(c, ...) do { if (!(c)) { printf("FAIL line %d: ", __LINE__); printf(__VA_ARGS__); printf("\n"); \
    exit(1); } } while (0)

/* amd_signal_t / amd_queue_t offsets (ROCm's amd_hsa_signal.h / amd_hsa_queue.h) */
typedef struct { int64_t kind, value; uint64_t mailbox; uint32_t event_id, r1; uint64_t start, end, queue, r3; } signal_t;

static void* alloc(uint32_t node, uint64_t size, int vram) {
  HsaMemFlags f;
  memset(&f, 0, sizeof f);
  f.ui32.HostAccess = 1;
  f.ui32.NonPaged = vram;
  f.ui32.CoarseGrain = vram;
  void* p = NULL;
  OK(hsaKmtAllocMemory(node, size, f, &p));
  return p;
}

int main(void) {
  EXPECT(hsaKmtGetVersion(&(HsaVersionInfo){0}) == HSAKMT_STATUS_KERNEL_IO_CHANNEL_NOT_OPENED, "call before open");
  OK(hsaKmtOpenKFD());
  HsaVersionInfo v;
  OK(hsaKmtGetVersion(&v));
  printf("ok version %u.%u\n", v.KernelInterfaceMajorVersion, v.KernelInterfaceMinorVersion);

  HsaSystemProperties sys;
  OK(hsaKmtAcquireSystemProperties(&sys));
  EXPECT(sys.NumNodes >= 2, "nodes %u", sys.NumNodes);
  HsaNodeProperties np;
  OK(hsaKmtGetNodeProperties(1, &np));
  char name[65] = {0};
  for (int i = 0; i < 64 && np.MarketingName[i]; ++i) name[i] = (char)np.MarketingName[i];
  printf("ok node1 %s gfx%u.%u.%u simds %u cus/array %u arrays %u banks %u caches %u links %u doorbell %u sramecc %u "
         "lds %u wave %u vram %llu\n", name, np.EngineId.ui32.Major, np.EngineId.ui32.Minor, np.EngineId.ui32.Stepping,
         np.NumFComputeCores, np.NumCUPerArray, np.NumShaderBanks, np.NumMemoryBanks, np.NumCaches, np.NumIOLinks,
         np.Capability.ui32.DoorbellType, np.Capability.ui32.SRAM_EDCSupport, np.LDSSizeInKB, np.WaveFrontSize,
         (unsigned long long)np.LocalMemSize);
  HsaMemoryProperties mp[8];
  OK(hsaKmtGetNodeMemoryProperties(1, np.NumMemoryBanks, mp));
  printf("ok heaps");
  for (uint32_t i = 0; i < np.NumMemoryBanks; ++i) printf(" %u:%llu@%llx", mp[i].HeapType,
                                                           (unsigned long long)mp[i].SizeInBytes,
                                                           (unsigned long long)mp[i].VirtualBaseAddress);
  printf("\n");
  EXPECT(hsaKmtGetNodeProperties(99, &np) == HSAKMT_STATUS_INVALID_NODE_UNIT, "node 99 accepted");

  /* memory: system and VRAM, mapping, pointer info */
  char* sysmem = alloc(0, 1 << 20, 0);
  char* vram = alloc(1, 1 << 20, 1);
  HsaMemFlags bad = {0};
  void* p = NULL;
  EXPECT(hsaKmtAllocMemory(0, 1000, bad, &p) == HSAKMT_STATUS_INVALID_PARAMETER, "unaligned size accepted");
  EXPECT(hsaKmtAllocMemory(7, 4096, bad, &p) == HSAKMT_STATUS_INVALID_NODE_UNIT, "bad node accepted");
  uint32_t gpu_node = 1;
  HsaMemMapFlags mf = {0};
  OK(hsaKmtMapMemoryToGPUNodes(sysmem, 1 << 20, NULL, mf, 1, &gpu_node));
  HsaPointerInfo pi;
  OK(hsaKmtQueryPointerInfo(sysmem + 100, &pi));
  EXPECT(pi.Type == HSA_POINTER_ALLOCATED && pi.SizeInBytes == (1 << 20) && pi.NMappedNodes == 1 &&
         pi.MappedNodes[0] == 1 && pi.CPUAddress == sysmem, "system pointer info");
  OK(hsaKmtQueryPointerInfo(vram, &pi));
  EXPECT(pi.Node == 1 && pi.Type == HSA_POINTER_ALLOCATED, "vram pointer info");
  OK(hsaKmtSetMemoryUserData(vram, (void*)0x1234));
  OK(hsaKmtQueryPointerInfo(vram + 5, &pi));
  EXPECT(pi.UserData == (void*)0x1234, "user data");
  static char user[3 * 4096];
  /* userptr pinning of pages that are not mapped fails (amdgpu's get_user_pages) and records nothing */
  EXPECT(hsaKmtRegisterMemoryWithFlags(user, (size_t)1 << 46, (HsaMemFlags){.ui32.HostAccess = 1}) !=
         HSAKMT_STATUS_SUCCESS, "registering unmapped memory");
  OK(hsaKmtRegisterMemoryWithFlags(user, sizeof user, (HsaMemFlags){.ui32.HostAccess = 1}));
  /* libhsakmt counts registrations of the same range: each needs its own deregistration */
  OK(hsaKmtRegisterMemoryWithFlags(user, sizeof user, (HsaMemFlags){.ui32.HostAccess = 1}));
  /* a range overlapping another registration is its own userptr object (libhsakmt keys them by address and
   * size), found by addresses it covers, deregistered on its own */
  OK(hsaKmtRegisterMemoryWithFlags(user + 4096, 4096, (HsaMemFlags){.ui32.HostAccess = 1}));
  OK(hsaKmtQueryPointerInfo(user + 4096 + 10, &pi));
  EXPECT(pi.Type == HSA_POINTER_REGISTERED_USER && pi.CPUAddress == user + 4096 && pi.SizeInBytes == 4096,
         "overlapping registration");
  OK(hsaKmtDeregisterMemory(user + 4096));
  OK(hsaKmtQueryPointerInfo(user + 10, &pi));
  EXPECT(pi.Type == HSA_POINTER_REGISTERED_USER, "user pointer type %d", pi.Type);
  OK(hsaKmtDeregisterMemory(user));
  OK(hsaKmtQueryPointerInfo(user + 10, &pi));
  EXPECT(pi.Type == HSA_POINTER_REGISTERED_USER, "still registered once");
  OK(hsaKmtDeregisterMemory(user));
  EXPECT(hsaKmtQueryPointerInfo(user, &pi) != HSAKMT_STATUS_SUCCESS && pi.Type == HSA_POINTER_UNKNOWN, "deregistered");
  printf("ok memory\n");

  /* events: timeouts, set/reset, auto reset */
  HsaEventDescriptor ed;
  memset(&ed, 0, sizeof ed);
  ed.EventType = HSA_EVENTTYPE_SIGNAL;
  ed.NodeId = 1;
  HsaEvent *manual, *autoreset;
  OK(hsaKmtCreateEvent(&ed, true, false, &manual));
  OK(hsaKmtCreateEvent(&ed, false, false, &autoreset));
  EXPECT(manual->EventData.HWData2 != 0 && manual->EventData.HWData3 == manual->EventId, "signal event mailbox");
  EXPECT(hsaKmtWaitOnEvent(manual, 30) == HSAKMT_STATUS_WAIT_TIMEOUT, "unset event did not time out");
  OK(hsaKmtSetEvent(manual));
  OK(hsaKmtWaitOnEvent(manual, 0));
  OK(hsaKmtWaitOnEvent(manual, 0));                       /* manual reset: still set */
  OK(hsaKmtResetEvent(manual));
  EXPECT(hsaKmtWaitOnEvent(manual, 0) == HSAKMT_STATUS_WAIT_TIMEOUT, "reset event still set");
  OK(hsaKmtSetEvent(autoreset));
  OK(hsaKmtWaitOnEvent(autoreset, 0));
  EXPECT(hsaKmtWaitOnEvent(autoreset, 0) == HSAKMT_STATUS_WAIT_TIMEOUT, "auto-reset event still set");
  HsaEvent* both[2] = {manual, autoreset};
  OK(hsaKmtSetEvent(autoreset));
  OK(hsaKmtWaitOnMultipleEvents(both, 2, false, 100));    /* any */
  EXPECT(hsaKmtWaitOnMultipleEvents(both, 2, true, 20) == HSAKMT_STATUS_WAIT_TIMEOUT, "all of two, one set");
  ed.EventType = HSA_EVENTTYPE_MEMORY;
  HsaEvent* memev;
  OK(hsaKmtCreateEvent(&ed, true, false, &memev));
  EXPECT(hsaKmtSetEvent(memev) != HSAKMT_STATUS_SUCCESS, "user code set a system event");
  printf("ok events\n");

  /* queues: what KFD rejects */
  const uint64_t ring_size = 64 * 64;
  char* ring = alloc(0, 4096, 0);
  char* aq = alloc(0, 4096, 0);                           /* an amd_queue_t and signals live here */
  OK(hsaKmtMapMemoryToGPUNodes(ring, 4096, NULL, mf, 1, &gpu_node));
  OK(hsaKmtMapMemoryToGPUNodes(aq, 4096, NULL, mf, 1, &gpu_node));
  for (int i = 0; i < 64; ++i) *(uint16_t*)(ring + 64 * i) = 1;        /* INVALID */
  HsaQueueResource qr;
  memset(&qr, 0, sizeof qr);
  qr.Queue_read_ptr_aql = (uint64_t*)(aq + 128);
  qr.Queue_write_ptr_aql = (uint64_t*)(aq + 56);
  EXPECT(hsaKmtCreateQueue(1, HSA_QUEUE_COMPUTE_AQL, 100, HSA_QUEUE_PRIORITY_NORMAL, ring, 3000, NULL, &qr) != 0,
         "ring size 3000 accepted");
  EXPECT(hsaKmtCreateQueue(1, HSA_QUEUE_COMPUTE_AQL, 100, HSA_QUEUE_PRIORITY_NORMAL, user, 4096, NULL, &qr) != 0,
         "unmapped ring accepted");
  EXPECT(hsaKmtCreateQueue(1, HSA_QUEUE_COMPUTE_AQL, 101, HSA_QUEUE_PRIORITY_NORMAL, ring, ring_size, NULL, &qr) != 0,
         "percentage 101 accepted");
  EXPECT(hsaKmtCreateQueue(1, HSA_QUEUE_COMPUTE_AQL, 100, 4, ring, ring_size, NULL, &qr) ==
         HSAKMT_STATUS_INVALID_PARAMETER, "priority 4 accepted");
  EXPECT(hsaKmtCreateQueue(0, HSA_QUEUE_COMPUTE_AQL, 100, 0, ring, ring_size, NULL, &qr) != 0, "CPU queue accepted");
  EXPECT(hsaKmtCreateQueue(1, HSA_QUEUE_SDMA, 100, 0, ring, ring_size, NULL, &qr) != 0, "SDMA queue accepted");
  printf("ok queue validation\n");

  /* a queue, and a barrier-AND packet whose completion signal has our event as its mailbox */
  OK(hsaKmtCreateQueue(1, HSA_QUEUE_COMPUTE_AQL, 100, HSA_QUEUE_PRIORITY_NORMAL, ring, ring_size, NULL, &qr));
  signal_t* sig = (signal_t*)(aq + 1024);
  memset(sig, 0, sizeof *sig);
  sig->kind = 1;
  sig->value = 1;
  sig->mailbox = autoreset->EventData.HWData2;
  sig->event_id = autoreset->EventData.HWData3;
  hsaKmtWaitOnEvent(autoreset, 0);                        /* consume any earlier set */
  uint8_t* slot = (uint8_t*)ring;
  memset(slot + 4, 0, 60);
  *(uint64_t*)(slot + 56) = (uint64_t)(uintptr_t)sig;
  __atomic_store_n((uint32_t*)slot, 3u | (2u << 11), __ATOMIC_RELEASE);    /* BARRIER_AND, system release */
  __atomic_store_n((uint64_t*)(aq + 56), 1, __ATOMIC_RELEASE);
  __atomic_store_n(qr.Queue_DoorBell_aql, 0, __ATOMIC_RELEASE);
  OK(hsaKmtWaitOnEvent(autoreset, 10000));
  EXPECT(__atomic_load_n(&sig->value, __ATOMIC_ACQUIRE) == 0, "signal value %ld", (long)sig->value);
  /* the CP completes the signal, then retires the slot: give it up to 5 s */
  for (int i = 0; i < 5000 && __atomic_load_n((uint64_t*)(aq + 128), __ATOMIC_ACQUIRE) != 1; ++i) usleep(1000);
  EXPECT(*(uint64_t*)(aq + 128) == 1 && (*(uint16_t*)slot & 0xFF) == 1, "read index %lu header %x",
         (unsigned long)*(uint64_t*)(aq + 128), *(uint16_t*)slot);
  OK(hsaKmtUpdateQueue(qr.QueueId, 0, HSA_QUEUE_PRIORITY_NORMAL, ring, ring_size, NULL));
  OK(hsaKmtUpdateQueue(qr.QueueId, 100, HSA_QUEUE_PRIORITY_NORMAL, ring, ring_size, NULL));
  OK(hsaKmtDestroyQueue(qr.QueueId));
  EXPECT(hsaKmtDestroyQueue(qr.QueueId) != HSAKMT_STATUS_SUCCESS, "double destroy");
  printf("ok queue\n");

  HsaClockCounters c1, c2;
  OK(hsaKmtGetClockCounters(1, &c1));
  OK(hsaKmtGetClockCounters(1, &c2));
  EXPECT(c2.GPUClockCounter >= c1.GPUClockCounter && c1.SystemClockFrequencyHz == 1000000000ull, "clocks");
  EXPECT(hsaKmtDbgRegister(1) == HSAKMT_STATUS_NOT_SUPPORTED, "debugger");

  OK(hsaKmtDestroyEvent(manual));
  OK(hsaKmtDestroyEvent(autoreset));
  OK(hsaKmtDestroyEvent(memev));
  OK(hsaKmtUnmapMemoryToGPU(sysmem));
  OK(hsaKmtFreeMemory(sysmem, 1 << 20));
  OK(hsaKmtFreeMemory(vram, 1 << 20));
  OK(hsaKmtFreeMemory(ring, 4096));
  OK(hsaKmtFreeMemory(aq, 4096));
  EXPECT(hsaKmtFreeMemory(vram, 1 << 20) != HSAKMT_STATUS_SUCCESS, "double free");
  OK(hsaKmtReleaseSystemProperties());
  OK(hsaKmtCloseKFD());
  EXPECT(hsaKmtGetVersion(&v) == HSAKMT_STATUS_KERNEL_IO_CHANNEL_NOT_OPENED, "call after close");
  printf("PASS\n");
  return 0;
}
