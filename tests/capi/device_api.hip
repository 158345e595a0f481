// Devices, streams, events and fault semantics through the C ABI.  Run with two emulated devices
// (PYHIP_DEVICES=gfx90a,gfx90a): peer access, per-device events, PCI bus ids.  One line per check
// ("name: ok" / "name: FAIL ..."); the exit status is the number of failures.
#include <hip/hip_runtime.h>
#include <cstdio>
#include <cstring>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

static int failures = 0;
static void check(const char* what, bool ok, const char* detail = "") {
  std::printf("%s: %s%s\n", what, ok ? "ok" : "FAIL ", ok ? "" : detail);
  if (!ok) ++failures;
}
static void code(const char* what, hipError_t got, hipError_t want) {
  char buf[128];
  std::snprintf(buf, sizeof buf, "got %s want %s", hipGetErrorName(got), hipGetErrorName(want));
  check(what, got == want, buf);
}

__global__ void write_n(int* out, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) out[i] = i; }
__global__ void copy_from_peer(const int* peer, int* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = peer[i] * 2;
}
__global__ void slow_add(int* p, int spin) {
  int acc = 0;
  for (int k = 0; k < spin; ++k) acc += k;
  p[threadIdx.x] += 1 + (acc & 0);
}

static void devices() {
  int n = 0;
  hipGetDeviceCount(&n);
  check("two devices", n == 2);
  hipDeviceProp_t p0, p1;
  hipGetDeviceProperties(&p0, 0);
  hipGetDeviceProperties(&p1, 1);
  check("same target ID for both", std::strcmp(p0.gcnArchName, p1.gcnArchName) == 0 &&
        std::strcmp(p0.gcnArchName, "gfx90a:sramecc+:xnack-") == 0, p1.gcnArchName);
  check("cooperative launch reported", p0.cooperativeLaunch == 1 && p0.cooperativeMultiDeviceLaunch == 1);
  check("arch flags as ROCclr", p0.arch.hasFunnelShift == 0 && p0.arch.hasSurfaceFuncs == 0 && p0.arch.hasDoubles == 1);
  char bus[16]; int back = -1;
  code("hipDeviceGetPCIBusId", hipDeviceGetPCIBusId(bus, sizeof bus, 1), hipSuccess);
  code("hipDeviceGetByPCIBusId", hipDeviceGetByPCIBusId(&back, bus), hipSuccess);
  check("PCI bus id roundtrip", back == 1, bus);
  code("short PCI buffer", hipDeviceGetPCIBusId(bus, 5, 0), hipErrorInvalidValue);
  code("unknown PCI bus id", hipDeviceGetByPCIBusId(&back, "0000:ff:1f.0"), hipErrorInvalidValue);
  char name[8];
  code("hipDeviceGetName (truncated)", hipDeviceGetName(name, sizeof name, 0), hipSuccess);
  check("name truncated and terminated", std::strlen(name) == 7 && std::strncmp(name, p0.name, 7) == 0);
  hipDeviceProp_t want = {};
  want.major = 9; want.multiProcessorCount = 1000000;              // no device has that many CUs
  int chosen = -1;
  code("hipChooseDevice", hipChooseDevice(&chosen, &want), hipSuccess);
  check("chosen device", chosen == 0);
  size_t v = 0;
  code("hipDeviceGetLimit heap", hipDeviceGetLimit(&v, hipLimitMallocHeapSize), hipSuccess);
  check("heap limit", v == p0.totalGlobalMem);
  code("hipDeviceGetLimit printf", hipDeviceGetLimit(&v, hipLimitPrintfFifoSize), hipErrorUnsupportedLimit);
  int lo = 9, hi = 9;
  code("hipDeviceGetStreamPriorityRange", hipDeviceGetStreamPriorityRange(&lo, &hi), hipSuccess);
  check("priority range", lo == 1 && hi == -1);
  hipStream_t s; int prio = 7; unsigned flags = 7;
  hipStreamCreateWithPriority(&s, hipStreamNonBlocking, -5);
  hipStreamGetPriority(s, &prio);
  hipStreamGetFlags(s, &flags);
  check("priority clamped, flags kept", prio == -1 && flags == hipStreamNonBlocking);
  hipStreamDestroy(s);
  code("hipStreamCreate(nullptr)", hipStreamCreate(nullptr), hipErrorInvalidValue);
  hipModule_t mod = nullptr; hipFunction_t fn = nullptr; hipDeviceptr_t gp = nullptr; size_t gsz = 0;
  code("hipModuleLoad(nullptr)", hipModuleLoad(nullptr, "x.co"), hipErrorInvalidValue);
  code("hipModuleLoad of a missing file", hipModuleLoad(&mod, "/nonexistent/x.co"), hipErrorFileNotFound);
  code("hipModuleGetFunction on a null module", hipModuleGetFunction(&fn, nullptr, "k"),
       hipErrorInvalidResourceHandle);
  code("hipModuleGetFunction, empty name", hipModuleGetFunction(&fn, mod, ""), hipErrorInvalidValue);
  code("hipModuleGetGlobal, null output", hipModuleGetGlobal(nullptr, &gsz, mod, "g"), hipSuccess);
  code("hipModuleGetGlobal on a null module", hipModuleGetGlobal(&gp, &gsz, nullptr, "g"),
       hipErrorInvalidResourceHandle);
  code("hipSetDeviceFlags bad", hipSetDeviceFlags(0x3), hipErrorInvalidValue);
  code("hipSetDeviceFlags yield", hipSetDeviceFlags(hipDeviceScheduleYield), hipSuccess);
  unsigned got = 0; hipGetDeviceFlags(&got);
  check("device flags", got == hipDeviceScheduleYield);
}

static void peers() {
  int can = -1;
  code("hipDeviceCanAccessPeer", hipDeviceCanAccessPeer(&can, 0, 1), hipSuccess);
  check("peers can access each other", can == 1);
  hipDeviceCanAccessPeer(&can, 0, 0);
  check("not itself", can == 0);
  const int n = 333;
  int *on1, *on0;
  hipSetDevice(1);
  hipMalloc(&on1, n * 4);
  write_n<<<2, 256>>>(on1, n);
  hipDeviceSynchronize();
  hipSetDevice(0);
  hipMalloc(&on0, n * 4);
  code("disable before enable", hipDeviceDisablePeerAccess(1), hipErrorPeerAccessNotEnabled);
  code("hipDeviceEnablePeerAccess", hipDeviceEnablePeerAccess(1, 0), hipSuccess);
  code("enable twice", hipDeviceEnablePeerAccess(1, 0), hipErrorPeerAccessAlreadyEnabled);
  copy_from_peer<<<2, 256>>>(on1, on0, n);                     // device 0 reads device 1's memory
  code("peer kernel", hipDeviceSynchronize(), hipSuccess);
  std::vector<int> h(n);
  hipMemcpy(h.data(), on0, n * 4, hipMemcpyDeviceToHost);
  bool ok = true; for (int i = 0; i < n; ++i) ok &= h[i] == 2 * i;
  check("peer data", ok);
  code("hipDeviceDisablePeerAccess", hipDeviceDisablePeerAccess(1), hipSuccess);
  copy_from_peer<<<2, 256>>>(on1, on0, n);                     // no access any more: a fault
  code("access after disable faults", hipDeviceSynchronize(), hipErrorIllegalAddress);
  std::vector<int> z(n, 0);
  hipMemcpy(on0, z.data(), n * 4, hipMemcpyHostToDevice);
  code("hipMemcpyPeer", hipMemcpyPeer(on0, 0, on1, 1, n * 4), hipSuccess);
  hipMemcpy(h.data(), on0, n * 4, hipMemcpyDeviceToHost);
  ok = true; for (int i = 0; i < n; ++i) ok &= h[i] == i;
  check("hipMemcpyPeer data", ok);
  int attr = -1;
  code("hipDeviceGetP2PAttribute", hipDeviceGetP2PAttribute(&attr, hipDevP2PAttrAccessSupported, 0, 1), hipSuccess);
  check("P2P access supported", attr == 1);
  code("P2P attribute of one device", hipDeviceGetP2PAttribute(&attr, hipDevP2PAttrAccessSupported, 1, 1),
       hipErrorInvalidDevice);
  hipFree(on0);
  hipSetDevice(1); hipFree(on1); hipSetDevice(0);
}

static void events_and_streams() {
  hipEvent_t e0, e1, never;
  hipSetDevice(0); hipEventCreate(&e0); hipEventCreate(&never);
  hipSetDevice(1); hipEventCreate(&e1);
  code("record device 0's event on device 1's null stream", hipEventRecord(e0, nullptr), hipErrorInvalidHandle);
  hipEventRecord(e1, nullptr);
  hipEventSynchronize(e1);
  hipSetDevice(0);
  hipEventRecord(e0, nullptr);
  hipEventSynchronize(e0);
  float ms = 0;
  code("elapsed time across devices", hipEventElapsedTime(&ms, e0, e1), hipErrorInvalidHandle);
  code("elapsed time, never recorded", hipEventElapsedTime(&ms, e0, never), hipErrorInvalidHandle);
  code("elapsed time, null event", hipEventElapsedTime(&ms, nullptr, e0), hipErrorInvalidHandle);
  hipEvent_t rel;
  code("release-scope flags", hipEventCreateWithFlags(&rel, hipEventReleaseToSystem | hipEventDisableTiming),
       hipSuccess);
  code("two release scopes", hipEventCreateWithFlags(&rel, hipEventReleaseToSystem | hipEventReleaseToDevice),
       hipErrorInvalidValue);
  code("interprocess needs DisableTiming", hipEventCreateWithFlags(&rel, hipEventInterprocess), hipErrorInvalidValue);
  hipEvent_t ipc, opened;
  hipIpcEventHandle_t eh;
  hipEventCreateWithFlags(&ipc, hipEventInterprocess | hipEventDisableTiming);
  code("hipIpcGetEventHandle", hipIpcGetEventHandle(&eh, ipc), hipSuccess);
  code("open an IPC event in its own process", hipIpcOpenEventHandle(&opened, eh), hipErrorInvalidContext);
  code("IPC handle of a timing event", hipIpcGetEventHandle(&eh, e0), hipErrorInvalidConfiguration);   // HIP 5.2's
  code("IPC handle of no event", hipIpcGetEventHandle(&eh, nullptr), hipErrorInvalidValue);
  int* dm; hipMalloc(&dm, 256); hipIpcMemHandle_t mh; void* mp = nullptr;
  code("hipIpcGetMemHandle", hipIpcGetMemHandle(&mh, dm), hipSuccess);
  code("open IPC memory in its own process", hipIpcOpenMemHandle(&mp, mh, 0), hipErrorInvalidContext);
  hipFree(dm); hipEventDestroy(ipc);
  hipStream_t s; hipStreamCreate(&s);
  code("callback null", hipStreamAddCallback(s, nullptr, nullptr, 0), hipErrorInvalidValue);
  // hipStreamSynchronize(0) waits for work on hipStreamPerThread (the legacy null stream's rule)
  int* p; hipHostMalloc((void**)&p, 64 * 4, 0);
  std::memset(p, 0, 64 * 4);
  slow_add<<<1, 64, 0, hipStreamPerThread>>>(p, 20000);
  code("hipStreamSynchronize(0)", hipStreamSynchronize(0), hipSuccess);
  check("per-thread stream work done", p[0] == 1 && p[63] == 1);
  hipHostFree(p);
  hipStreamDestroy(s);
  code("destroy a destroyed stream", hipStreamDestroy(s), hipErrorContextIsDestroyed);
  code("destroy hipStreamPerThread", hipStreamDestroy(hipStreamPerThread), hipErrorInvalidResourceHandle);
  hipEventDestroy(e0); hipEventDestroy(never);
  hipSetDevice(1); hipEventDestroy(e1); hipSetDevice(0);
}

static void stream_memory_operations() {
  int yes = 0;
  hipDeviceGetAttribute(&yes, hipDeviceAttributeCanUseStreamWaitValue, 0);
  check("stream wait value supported", yes == 1);
  hipStream_t s, other;
  hipStreamCreate(&s);
  hipStreamCreateWithFlags(&other, hipStreamNonBlocking);
  uint64_t* dev; hipMalloc(&dev, 64); hipMemset(dev, 0, 64);
  uint32_t* flag = new uint32_t[4]();
  hipHostRegister(flag, 16, 0);
  uint64_t* sig = nullptr;
  code("signal memory", hipExtMallocWithFlags((void**)&sig, 8, hipMallocSignalMemory), hipSuccess);
  *sig = 0;
  hipEvent_t done; hipEventCreate(&done);
  // s: write dev[1], wait until flag[2] & 0xF0 == 0x30, write the signal, record
  code("hipStreamWriteValue64 device", hipStreamWriteValue64(s, dev + 1, 0x1122334455667788ull, 0), hipSuccess);
  code("hipStreamWaitValue32 masked eq", hipStreamWaitValue32(s, flag + 2, 0x30, hipStreamWaitValueEq, 0xF0),
       hipSuccess);
  code("hipStreamWriteValue64 signal", hipStreamWriteValue64(s, sig, 42, 0), hipSuccess);
  hipEventRecord(done, s);
  flag[2] = 0x0F;                                  // does not satisfy the mask
  usleep(50000);
  code("blocked at the wait", hipEventQuery(done), hipErrorNotReady);
  check("nothing after the wait ran", *sig == 0);
  code("other stream writes the flag", hipStreamWriteValue32(other, flag + 2, 0x3F, 0), hipSuccess);
  hipStreamSynchronize(other);
  code("released", hipStreamSynchronize(s), hipSuccess);
  uint64_t back = 0; hipMemcpy(&back, dev + 1, 8, hipMemcpyDeviceToHost);
  check("device word written", back == 0x1122334455667788ull);
  check("signal written after the wait", *sig == 42);
  // 64-bit nor and and on a device word
  hipMemset(dev, 0xFF, 8);
  code("wait64 and", hipStreamWaitValue64(s, dev, 0x8000000000000000ull, hipStreamWaitValueAnd, ~0ull), hipSuccess);
  code("wait64 gte passes", hipStreamWaitValue64(s, dev, 5, hipStreamWaitValueGte, ~0ull), hipSuccess);
  code("done", hipStreamSynchronize(s), hipSuccess);
  code("wait null", hipStreamWaitValue32(s, nullptr, 0, hipStreamWaitValueGte, ~0u), hipErrorInvalidValue);
  code("write null", hipStreamWriteValue64(s, nullptr, 0, 0), hipErrorInvalidValue);
  code("wait bad flag", hipStreamWaitValue32(s, flag, 0, 7, ~0u), hipErrorInvalidValue);
  hipFree(sig); hipFree(dev); hipHostUnregister(flag); delete[] flag;
  hipEventDestroy(done); hipStreamDestroy(s); hipStreamDestroy(other);
}

static void faults() {
  // a fault is reported once, by the first synchronising call of its stream (or of the device); the device
  // and the stream are usable right after
  int* d; hipMalloc(&d, 64 * sizeof(int));
  int* bad = (int*)0x1000;
  write_n<<<1, 64>>>(d, 64);                         // teaches the native launch path this configuration
  code("valid launch", hipDeviceSynchronize(), hipSuccess);
  write_n<<<1, 64>>>(bad, 64);                       // same configuration: a native launch that faults
  code("fault, device sync", hipDeviceSynchronize(), hipErrorIllegalAddress);
  code("reported once", hipDeviceSynchronize(), hipSuccess);
  write_n<<<1, 64>>>(d, 64);
  code("next launch", hipDeviceSynchronize(), hipSuccess);
  write_n<<<1, 64>>>(bad, 64);
  code("fault, stream sync", hipStreamSynchronize(0), hipErrorIllegalAddress);
  write_n<<<1, 64>>>(d, 64);
  code("next launch, stream sync", hipStreamSynchronize(0), hipSuccess);
  hipStream_t s; hipStreamCreate(&s);
  write_n<<<2, 32, 0, s>>>(bad, 64);
  code("fault on a stream, its sync", hipStreamSynchronize(s), hipErrorIllegalAddress);
  write_n<<<2, 32, 0, s>>>(d, 64);
  code("next launch on it", hipStreamSynchronize(s), hipSuccess);
  int h[64];
  code("device usable", hipMemcpy(h, d, sizeof h, hipMemcpyDeviceToHost), hipSuccess);
  bool ok = true; for (int i = 0; i < 64; ++i) ok &= h[i] == i;
  check("data after faults", ok);
  hipStreamDestroy(s);
  hipFree(d);
}

static int child_work() {
  int n = 1000, *d;
  std::vector<int> h(n, -1);
  if (hipMalloc(&d, n * 4) != hipSuccess) return 1;
  write_n<<<4, 256, 0, hipStreamPerThread>>>(d, n);
  if (hipStreamSynchronize(hipStreamPerThread) != hipSuccess) return 2;
  hipMemcpy(h.data(), d, n * 4, hipMemcpyDeviceToHost);
  for (int i = 0; i < n; ++i) if (h[i] != i) return 3;
  return 0;
}

static void forked() {
  // a child forked after the runtime started (its threads, queues) runs HIP work of its own
  pid_t pid = fork();
  if (pid == 0) _exit(10 + child_work());
  int status = 0;
  waitpid(pid, &status, 0);
  check("forked child runs kernels", WIFEXITED(status) && WEXITSTATUS(status) == 10);
  check("parent after the fork", child_work() == 0);
}

int main() {
  devices();
  peers();
  events_and_streams();
  stream_memory_operations();
  faults();
  forked();
  std::printf(failures ? "FAILURES %d\n" : "PASS\n", failures);
  return failures;
}
