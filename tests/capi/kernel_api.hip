// Device-side printf, cooperative launches with grid-wide sync, and graphs (capture and node API) through the
// C ABI.  argv[1] selects a part: "printf", "coop", "multi" (needs two devices), "graph".  Checks print
// "name: ok" / "name: FAIL ..."; the printf part prints the device's lines, then REF lines the host formats
// with the same formats and values (the test compares them).
#include <hip/hip_runtime.h>
#include <hip/hip_cooperative_groups.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace cg = cooperative_groups;
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

// -- printf ---------------------------------------------------------------------------------------------
#define FORMATS(P, t, x, f, s)                                                                        \
  P("dev %d|%u|%x|%5d|%-6d|%+d|%05d\n", (int)t - 7, (unsigned)t * 3000000000u, (unsigned)x, (int)t, (int)t, (int)t, (int)t); \
  P("dev %ld|%lld|%llx|%hhd|%hd|%c|%%\n", (long)t * -100000000000L, (long long)x << 20, (unsigned long long)x * 77u, \
    (signed char)(t * 40), (short)(t * 3000), (char)('A' + t));                                          \
  P("dev %f|%.3f|%e|%g|%10.2f|%a|%s|%8s|%-5s|\n", f, f / 7.0, f * 1e10, f, -f, f, s, s, "ab");

__global__ void printer(int count, double scale, const char* const* strings) {
  int t = threadIdx.x;
  if (t >= count) return;
  unsigned x = 0x9E3779B9u * (unsigned)(t + 1);
  double f = scale * (t - 3.5);
  const char* s = strings[t % 3];
  FORMATS(printf, t, x, f, s)
}

static int part_printf() {
  const int count = 40;                                       // one wave, lanes printed in order
  const char* host_strings[3] = {"alpha", "", "longer string"};
  char** dstrings; hipMalloc(&dstrings, 3 * sizeof(char*));
  std::vector<char*> ptrs(3);
  for (int i = 0; i < 3; ++i) {
    hipMalloc(&ptrs[i], 32);
    hipMemcpy(ptrs[i], host_strings[i], std::strlen(host_strings[i]) + 1, hipMemcpyHostToDevice);
  }
  hipMemcpy(dstrings, ptrs.data(), 3 * sizeof(char*), hipMemcpyHostToDevice);
  std::printf("BEFORE\n");
  printer<<<1, 64>>>(count, 1.25, dstrings);
  hipDeviceSynchronize();
  std::printf("AFTER\n");
  char line[512];
  for (int part = 0; part < 3; ++part)
    for (int t = 0; t < count; ++t) {
      unsigned x = 0x9E3779B9u * (unsigned)(t + 1);
      double f = 1.25 * (t - 3.5);
      const char* s = host_strings[t % 3];
      int k = 0;
#define REF(...) do { if (k++ == part) { std::snprintf(line, sizeof line, __VA_ARGS__); std::printf("REF %s", line); } } while (0)
      FORMATS(REF, t, x, f, s)
#undef REF
    }
  return 0;
}

// -- cooperative groups -----------------------------------------------------------------------------------
__global__ void relax(float* a, float* b, int n, int steps) {
  cg::grid_group grid = cg::this_grid();
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  for (int s = 0; s < steps; ++s) {
    const float* src = (s & 1) ? b : a;
    float* dst = (s & 1) ? a : b;
    if (i < n) dst[i] = 0.25f * src[(i + n - 1) % n] + 0.5f * src[i] + 0.25f * src[(i + 1) % n];
    grid.sync();                                             // every block's writes before the next step
  }
}

static int part_coop() {
  int attr = 0;
  hipDeviceGetAttribute(&attr, hipDeviceAttributeCooperativeLaunch, 0);
  check("cooperative launch attribute", attr == 1);
  const int n = 1000, steps = 5, block = 128, grid = (n + block - 1) / block;
  std::vector<float> h(n), ref(n), tmp(n);
  for (int i = 0; i < n; ++i) h[i] = (float)((i * 7919) % 101) - 50.0f;
  ref = h;
  for (int s = 0; s < steps; ++s) {
    for (int i = 0; i < n; ++i)
      tmp[i] = 0.25f * ref[(i + n - 1) % n] + 0.5f * ref[i] + 0.25f * ref[(i + 1) % n];
    ref = tmp;
  }
  float *a, *b;
  hipMalloc(&a, n * 4); hipMalloc(&b, n * 4);
  hipMemcpy(a, h.data(), n * 4, hipMemcpyHostToDevice);
  hipMemset(b, 0xFF, n * 4);
  int nn = n, ss = steps;
  void* args[] = {&a, &b, &nn, &ss};
  code("hipLaunchCooperativeKernel", hipLaunchCooperativeKernel((void*)relax, dim3(grid), dim3(block), args, 0, 0),
       hipSuccess);
  code("grid sync kernel", hipDeviceSynchronize(), hipSuccess);
  std::vector<float> out(n);
  hipMemcpy(out.data(), steps & 1 ? b : a, n * 4, hipMemcpyDeviceToHost);
  bool same = true;
  for (int i = 0; i < n; ++i) same &= out[i] == ref[i];
  check("grid-synchronised stencil", same);
  int per_cu = 0, cus = 0;
  hipOccupancyMaxActiveBlocksPerMultiprocessor(&per_cu, (void*)relax, block, 0);
  hipDeviceGetAttribute(&cus, hipDeviceAttributeMultiprocessorCount, 0);
  code("grid larger than the device", hipLaunchCooperativeKernel((void*)relax, dim3(per_cu * cus + 1), dim3(block),
                                                                 args, 0, 0), hipErrorCooperativeLaunchTooLarge);
  return 0;
}

__global__ void multi(int* mine, const int* theirs, int* out, int n) {
  cg::multi_grid_group mg = cg::this_multi_grid();
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) mine[i] = (mg.grid_rank() + 1) * 1000 + i;
  mg.sync();                                                  // both devices' writes are done
  if (i < n) out[i] = mine[i] + theirs[i] * (mg.num_grids() == 2);
}

static int part_multi() {
  const int n = 256;
  int *buf[2], *out[2];
  hipStream_t s[2];
  for (int d = 0; d < 2; ++d) {
    hipSetDevice(d);
    hipMalloc(&buf[d], n * 4);
    hipMalloc(&out[d], n * 4);
    hipStreamCreate(&s[d]);
  }
  hipSetDevice(0); hipDeviceEnablePeerAccess(1, 0);
  hipSetDevice(1); hipDeviceEnablePeerAccess(0, 0);
  int nn = n;
  void* a0[] = {&buf[0], &buf[1], &out[0], &nn};
  void* a1[] = {&buf[1], &buf[0], &out[1], &nn};
  hipLaunchParams lp[2];
  for (int d = 0; d < 2; ++d) {
    lp[d].func = (void*)multi; lp[d].gridDim = dim3(2); lp[d].blockDim = dim3(128);
    lp[d].args = d ? a1 : a0; lp[d].sharedMem = 0; lp[d].stream = s[d];
  }
  code("hipLaunchCooperativeKernelMultiDevice", hipLaunchCooperativeKernelMultiDevice(lp, 2, 0), hipSuccess);
  std::vector<int> h(n);
  bool ok = true;
  for (int d = 0; d < 2; ++d) {
    hipSetDevice(d);
    hipMemcpy(h.data(), out[d], n * 4, hipMemcpyDeviceToHost);
    for (int i = 0; i < n; ++i) ok &= h[i] == 1000 + i + 2000 + i;
  }
  check("multi-grid sync data", ok);
  return 0;
}

// -- graphs ----------------------------------------------------------------------------------------------
__global__ void add1(int* x, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] += 1; }
__global__ void twice(int* x, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] *= 2; }
static void host_fn(void* p) { ++*static_cast<int*>(p); }

static int part_graph() {
  const int n = 300;
  int* d; std::vector<int> h(n), o(n);
  hipMalloc(&d, n * 4);
  hipStream_t s, s2; hipStreamCreate(&s); hipStreamCreate(&s2);
  hipEvent_t fork, join; hipEventCreate(&fork); hipEventCreate(&join);
  // capture across two streams: copy in, fork (add1 on s2), join, twice, copy out
  code("hipStreamBeginCapture", hipStreamBeginCapture(s, hipStreamCaptureModeGlobal), hipSuccess);
  hipStreamCaptureStatus st;
  hipStreamIsCapturing(s, &st);
  check("capturing", st == hipStreamCaptureStatusActive);
  hipMemcpyAsync(d, h.data(), n * 4, hipMemcpyHostToDevice, s);
  hipEventRecord(fork, s);
  hipStreamWaitEvent(s2, fork, 0);
  add1<<<(n + 63) / 64, 64, 0, s2>>>(d, n);
  hipEventRecord(join, s2);
  hipStreamWaitEvent(s, join, 0);
  twice<<<(n + 63) / 64, 64, 0, s>>>(d, n);
  hipMemcpyAsync(o.data(), d, n * 4, hipMemcpyDeviceToHost, s);
  code("sync while capturing", hipStreamSynchronize(s), hipErrorStreamCaptureUnsupported);
  hipGraph_t g;
  code("hipStreamEndCapture", hipStreamEndCapture(s, &g), hipErrorStreamCaptureInvalidated);
  // again, without the synchronize
  hipStreamBeginCapture(s, hipStreamCaptureModeGlobal);
  hipMemcpyAsync(d, h.data(), n * 4, hipMemcpyHostToDevice, s);
  hipEventRecord(fork, s);
  hipStreamWaitEvent(s2, fork, 0);
  add1<<<(n + 63) / 64, 64, 0, s2>>>(d, n);
  hipEventRecord(join, s2);
  hipStreamWaitEvent(s, join, 0);
  twice<<<(n + 63) / 64, 64, 0, s>>>(d, n);
  hipMemcpyAsync(o.data(), d, n * 4, hipMemcpyDeviceToHost, s);
  code("hipStreamEndCapture", hipStreamEndCapture(s, &g), hipSuccess);
  size_t count = 0;
  hipGraphGetNodes(g, nullptr, &count);
  check("captured nodes", count == 6);
  hipGraphExec_t ge;
  code("hipGraphInstantiate", hipGraphInstantiate(&ge, g, nullptr, nullptr, 0), hipSuccess);
  for (int rep = 0; rep < 2; ++rep) {
    for (int i = 0; i < n; ++i) { h[i] = i * 3 + rep; o[i] = -1; }      // the graph reads these at launch
    code("hipGraphLaunch", hipGraphLaunch(ge, s), hipSuccess);
    hipStreamSynchronize(s);
    bool ok = true; for (int i = 0; i < n; ++i) ok &= o[i] == (h[i] + 1) * 2;
    check("captured graph data", ok);
  }
  // node API: memset -> kernel -> host, then an updated kernel parameter
  hipGraph_t g2; hipGraphCreate(&g2, 0);
  hipMemsetParams mp = {}; mp.dst = d; mp.elementSize = 4; mp.width = n; mp.height = 1; mp.value = 7;
  hipGraphNode_t ms, kn, hn;
  code("hipGraphAddMemsetNode", hipGraphAddMemsetNode(&ms, g2, nullptr, 0, &mp), hipSuccess);
  int nn = n; void* args[] = {&d, &nn};
  hipKernelNodeParams kp = {}; kp.func = (void*)add1; kp.gridDim = dim3((n + 63) / 64); kp.blockDim = dim3(64);
  kp.kernelParams = args;
  code("hipGraphAddKernelNode", hipGraphAddKernelNode(&kn, g2, &ms, 1, &kp), hipSuccess);
  int counter = 0; hipHostNodeParams hp = {host_fn, &counter};
  code("hipGraphAddHostNode", hipGraphAddHostNode(&hn, g2, &kn, 1, &hp), hipSuccess);
  nn = 1;                                                      // parameters were copied when the node was made
  hipGraphExec_t ge2;
  hipGraphInstantiate(&ge2, g2, nullptr, nullptr, 0);
  hipGraphLaunch(ge2, s);
  hipStreamSynchronize(s);
  hipMemcpy(o.data(), d, n * 4, hipMemcpyDeviceToHost);
  bool ok = true; for (int i = 0; i < n; ++i) ok &= o[i] == 8;
  check("node graph data", ok && counter == 1);
  kp.func = (void*)twice; nn = n;
  code("hipGraphExecKernelNodeSetParams", hipGraphExecKernelNodeSetParams(ge2, kn, &kp), hipSuccess);
  hipGraphLaunch(ge2, s);
  hipStreamSynchronize(s);
  hipMemcpy(o.data(), d, n * 4, hipMemcpyDeviceToHost);
  ok = true; for (int i = 0; i < n; ++i) ok &= o[i] == 14;
  check("updated exec graph data", ok && counter == 2);
  hipGraphNodeType t; hipGraphNodeGetType(kn, &t);
  size_t edges = 0; hipGraphGetEdges(g2, nullptr, nullptr, &edges);
  size_t roots = 0; hipGraphGetRootNodes(g2, nullptr, &roots);
  check("node type, edges, roots", t == hipGraphNodeTypeKernel && edges == 2 && roots == 1);
  hipGraph_t cl; hipGraphClone(&cl, g2);
  hipGraphNode_t found;
  code("hipGraphNodeFindInClone", hipGraphNodeFindInClone(&found, kn, cl), hipSuccess);
  code("cycle rejected at instantiate", (hipGraphAddDependencies(g2, &hn, &ms, 1),
                                         hipGraphInstantiate(&ge, g2, nullptr, nullptr, 0)), hipErrorInvalidValue);
  hipGraphExecDestroy(ge2); hipGraphDestroy(g); hipGraphDestroy(g2); hipGraphDestroy(cl);
  return 0;
}

// -- the legacy launch API: hipSetupArgument after either hipConfigureCall or __hipPushCallConfiguration ----
extern "C" hipError_t __hipPushCallConfiguration(dim3, dim3, size_t, hipStream_t);
static int part_legacy() {
  const int n = 300;                                                  // not a multiple of the block
  int* x; hipMallocManaged((void**)&x, n * sizeof(int));
  int ref[n];
  for (int i = 0; i < n; ++i) ref[i] = x[i] = std::rand() % 1000;
  for (int form = 0; form < 2; ++form) {
    hipError_t e = form == 0 ? hipConfigureCall(dim3((n + 127) / 128), dim3(128), 0, nullptr)
                             : __hipPushCallConfiguration(dim3((n + 127) / 128), dim3(128), 0, nullptr);
    code(form == 0 ? "hipConfigureCall" : "__hipPushCallConfiguration", e, hipSuccess);
    code("hipSetupArgument pointer", hipSetupArgument(&x, sizeof x, 0), hipSuccess);
    int count = n;
    code("hipSetupArgument int", hipSetupArgument(&count, sizeof count, 8), hipSuccess);
    code("hipLaunchByPtr", hipLaunchByPtr(reinterpret_cast<const void*>(add1)), hipSuccess);
    hipDeviceSynchronize();
    bool ok = true;
    for (int i = 0; i < n; ++i) ok &= x[i] == ref[i] + form + 1;
    check(form == 0 ? "legacy launch data" : "legacy launch after a pushed configuration data", ok);
  }
  code("hipSetupArgument without a configuration", hipSetupArgument(&x, sizeof x, 0), hipErrorMissingConfiguration);
  hipFree(x);
  return 0;
}

int main(int argc, char** argv) {
  const char* part = argc > 1 ? argv[1] : "";
  if (!std::strcmp(part, "printf")) part_printf();
  else if (!std::strcmp(part, "coop")) part_coop();
  else if (!std::strcmp(part, "multi")) part_multi();
  else if (!std::strcmp(part, "graph")) part_graph();
  else if (!std::strcmp(part, "legacy")) part_legacy();
  else { std::printf("usage: %s printf|coop|multi|graph\n", argv[0]); return 2; }
  std::printf(failures ? "FAILURES %d\n" : "PASS\n", failures);
  return failures;
}
