// One hipcc program, two runtimes: pyhip's own libamdhip64 and AMD's HIP 5.2 + ROCr over pyhip's
// libhsakmt.  Everything it prints is deterministic, so both runs must print the same lines.  Covers
// device properties, kernels with random inputs and sizes that are not multiples of the block, streams
// and events, the module API (kernelParams and extra), __device__/__constant__ globals and symbols,
// atomics, several host threads with their own streams, a kernel that needs scratch, memset/D2D copies
// and zero-copy pinned host memory.  argv[1]: tests/fixtures/bin/hipcc52/basic-gfx90a.hsaco.
#include <hip/hip_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#define CHECK(x) do { hipError_t e_ = (x); if (e_ != hipSuccess) { std::printf("FAIL %s:%d %s -> %s\n", \
    __FILE__, __LINE__, #x, hipGetErrorName(e_)); std::exit(1); } } while (0)
#define EXPECT(c, ...) do { if (!(c)) { std::printf("FAIL %s:%d ", __FILE__, __LINE__); \
    std::printf(__VA_ARGS__); std::printf("\n"); std::exit(1); } } while (0)

__device__ int g_hits[16];
__constant__ float c_scale[2] = {2.5f, -1.0f};

__global__ void axpb(const float* x, float* y, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + c_scale[0] + y[i];
}

__global__ void histogram(const unsigned* v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(&g_hits[v[i] & 15], 1);
}

// A private array indexed by data: the compiler puts it in scratch (private segment).
__global__ void scratchy(const int* idx, int* out, int n) {
  int local[48];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  for (int k = 0; k < 48; ++k) local[k] = k * (i + 1);
  if (i < n) out[i] = local[idx[i] % 48] + local[(idx[i] * 7) % 48];
}

__global__ void per_thread(int* out, int n, int tag) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = i * 31 + tag;
}

__global__ void touch_host(int* p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] += 1000;
}

static unsigned lcg(unsigned& s) { s = s * 1664525u + 1013904223u; return s; }

int main(int argc, char** argv) {
  if (argc < 2) { std::printf("usage: amd_compare basic-gfx90a.hsaco\n"); return 2; }
  int ndev = 0;
  CHECK(hipGetDeviceCount(&ndev));
  hipDeviceProp_t p;
  CHECK(hipGetDeviceProperties(&p, 0));
  std::printf("devices %d: %s %s CUs %d warp %d maxThreads %d shared %zu\n", ndev, p.name, p.gcnArchName,
              p.multiProcessorCount, p.warpSize, p.maxThreadsPerBlock, p.sharedMemPerBlock);

  // axpb on 1000 random floats, output poisoned first (hipMemset) then initialised by a copy
  const int n = 1000;
  unsigned seed = 12345;
  std::vector<float> hx(n), hy(n), out(n);
  for (int i = 0; i < n; ++i) { hx[i] = (lcg(seed) % 2000) / 100.0f - 10.0f; hy[i] = (lcg(seed) % 100) / 8.0f; }
  float *dx, *dy;
  CHECK(hipMalloc(&dx, n * sizeof(float)));
  CHECK(hipMalloc(&dy, n * sizeof(float)));
  CHECK(hipMemset(dy, 0xFF, n * sizeof(float)));
  CHECK(hipMemcpy(dx, hx.data(), n * sizeof(float), hipMemcpyHostToDevice));
  CHECK(hipMemcpy(dy, hy.data(), n * sizeof(float), hipMemcpyHostToDevice));
  axpb<<<(n + 127) / 128, 128>>>(dx, dy, 0.5f, n);
  CHECK(hipGetLastError());
  CHECK(hipMemcpy(out.data(), dy, n * sizeof(float), hipMemcpyDeviceToHost));
  for (int i = 0; i < n; ++i) EXPECT(out[i] == 0.5f * hx[i] + 2.5f + hy[i], "axpb %d: %g", i, out[i]);
  std::printf("axpb ok\n");

  // D2D copy and memset
  float* dz;
  CHECK(hipMalloc(&dz, n * sizeof(float)));
  CHECK(hipMemcpy(dz, dy, n * sizeof(float), hipMemcpyDeviceToDevice));
  CHECK(hipMemset(dy, 0, n * sizeof(float)));
  CHECK(hipMemcpy(hy.data(), dz, n * sizeof(float), hipMemcpyDeviceToHost));
  EXPECT(std::memcmp(hy.data(), out.data(), n * sizeof(float)) == 0, "device-to-device copy differs");
  CHECK(hipMemcpy(hy.data(), dy, n * sizeof(float), hipMemcpyDeviceToHost));
  for (int i = 0; i < n; ++i) EXPECT(hy[i] == 0.0f, "memset %d", i);
  std::printf("copies ok\n");

  // atomics: a histogram of 5,000 random values into a __device__ array, read back by symbol
  const int m = 5000;
  std::vector<unsigned> hv(m);
  int want[16] = {0};
  for (int i = 0; i < m; ++i) { hv[i] = lcg(seed) >> 8; want[hv[i] & 15]++; }
  unsigned* dv;
  CHECK(hipMalloc(&dv, m * sizeof(unsigned)));
  CHECK(hipMemcpy(dv, hv.data(), m * sizeof(unsigned), hipMemcpyHostToDevice));
  int zeros[16] = {0}, got[16];
  CHECK(hipMemcpyToSymbol(HIP_SYMBOL(g_hits), zeros, sizeof zeros));
  histogram<<<(m + 255) / 256, 256>>>(dv, m);
  CHECK(hipMemcpyFromSymbol(got, HIP_SYMBOL(g_hits), sizeof got));
  for (int k = 0; k < 16; ++k) EXPECT(got[k] == want[k], "bin %d: %d want %d", k, got[k], want[k]);
  std::printf("histogram ok\n");

  // streams and events
  hipStream_t s1, s2;
  hipEvent_t e0, e1;
  CHECK(hipStreamCreate(&s1));
  CHECK(hipStreamCreateWithFlags(&s2, hipStreamNonBlocking));
  CHECK(hipEventCreate(&e0));
  CHECK(hipEventCreate(&e1));
  int *da, *db;
  const int k = 777;
  CHECK(hipMalloc(&da, k * sizeof(int)));
  CHECK(hipMalloc(&db, k * sizeof(int)));
  CHECK(hipEventRecord(e0, s1));
  per_thread<<<(k + 63) / 64, 64, 0, s1>>>(da, k, 1);
  CHECK(hipEventRecord(e1, s1));
  CHECK(hipStreamWaitEvent(s2, e1, 0));
  CHECK(hipMemcpyAsync(db, da, k * sizeof(int), hipMemcpyDeviceToDevice, s2));
  CHECK(hipStreamSynchronize(s2));
  float ms = -1;
  CHECK(hipEventElapsedTime(&ms, e0, e1));
  EXPECT(ms >= 0.0f, "elapsed %g", ms);
  std::vector<int> hb(k);
  CHECK(hipMemcpy(hb.data(), db, k * sizeof(int), hipMemcpyDeviceToHost));
  for (int i = 0; i < k; ++i) EXPECT(hb[i] == i * 31 + 1, "stream copy %d: %d", i, hb[i]);
  EXPECT(hipStreamQuery(s1) == hipSuccess && hipEventQuery(e1) == hipSuccess, "queries");
  std::printf("streams ok\n");

  // module API: the fixture code object, kernelParams and extra
  hipModule_t mod;
  hipFunction_t scale, use_globals;
  CHECK(hipModuleLoad(&mod, argv[1]));
  CHECK(hipModuleGetFunction(&scale, mod, "_Z5scaleIfEvPT_S0_i"));
  CHECK(hipModuleGetFunction(&use_globals, mod, "use_globals"));
  float factor = 3.0f;
  int nn = n;
  void* params[] = {&dz, &factor, &nn};
  CHECK(hipModuleLaunchKernel(scale, (n + 255) / 256, 1, 1, 256, 1, 1, 0, nullptr, params, nullptr));
  struct { float* x; float a; int n; } packed = {dz, 2.0f, n};
  size_t packed_size = sizeof packed;
  void* extra[] = {HIP_LAUNCH_PARAM_BUFFER_POINTER, &packed, HIP_LAUNCH_PARAM_BUFFER_SIZE, &packed_size,
                   HIP_LAUNCH_PARAM_END};
  CHECK(hipModuleLaunchKernel(scale, (n + 255) / 256, 1, 1, 256, 1, 1, 0, nullptr, nullptr, extra));
  CHECK(hipMemcpy(hy.data(), dz, n * sizeof(float), hipMemcpyDeviceToHost));
  for (int i = 0; i < n; ++i) EXPECT(hy[i] == out[i] * 6.0f, "module scale %d: %g", i, hy[i]);
  hipDeviceptr_t table;
  size_t table_size = 0;
  CHECK(hipModuleGetGlobal(&table, &table_size, mod, "g_table"));
  EXPECT(table_size == 64 * sizeof(float), "g_table size %zu", table_size);
  std::vector<float> tv(64);
  for (int i = 0; i < 64; ++i) tv[i] = i * 0.25f;
  CHECK(hipMemcpy(table, tv.data(), table_size, hipMemcpyHostToDevice));
  float* gout;
  CHECK(hipMalloc(&gout, 64 * sizeof(float)));
  int sixty_four = 64;
  void* gparams[] = {&gout, &sixty_four};
  CHECK(hipModuleLaunchKernel(use_globals, 1, 1, 1, 64, 1, 1, 0, nullptr, gparams, nullptr));
  std::vector<float> gv(64);
  CHECK(hipMemcpy(gv.data(), gout, 64 * sizeof(float), hipMemcpyDeviceToHost));
  double sum = 0;
  for (float v : gv) sum += v;
  std::printf("module ok: use_globals sum %.3f\n", sum);
  CHECK(hipModuleUnload(mod));

  // four host threads, each with its own stream
  std::vector<std::thread> threads;
  std::vector<int> results(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([t, &results] {
      hipStream_t s;
      int* d;
      const int len = 300 + 17 * t;
      CHECK(hipStreamCreate(&s));
      CHECK(hipMalloc(&d, len * sizeof(int)));
      for (int rep = 0; rep < 5; ++rep) per_thread<<<(len + 63) / 64, 64, 0, s>>>(d, len, t * 100 + rep);
      std::vector<int> h(len);
      CHECK(hipMemcpyAsync(h.data(), d, len * sizeof(int), hipMemcpyDeviceToHost, s));
      CHECK(hipStreamSynchronize(s));
      int bad = 0;
      for (int i = 0; i < len; ++i) bad += h[i] != i * 31 + t * 100 + 4;
      results[t] = bad ? -bad : len;
      CHECK(hipFree(d));
      CHECK(hipStreamDestroy(s));
    });
  }
  for (auto& th : threads) th.join();
  std::printf("threads %d %d %d %d\n", results[0], results[1], results[2], results[3]);

  // scratch
  std::vector<int> hidx(n), hs(n);
  for (int i = 0; i < n; ++i) hidx[i] = lcg(seed) % 1000;
  int *didx, *ds;
  CHECK(hipMalloc(&didx, n * sizeof(int)));
  CHECK(hipMalloc(&ds, n * sizeof(int)));
  CHECK(hipMemcpy(didx, hidx.data(), n * sizeof(int), hipMemcpyHostToDevice));
  scratchy<<<(n + 255) / 256, 256>>>(didx, ds, n);
  CHECK(hipMemcpy(hs.data(), ds, n * sizeof(int), hipMemcpyDeviceToHost));
  for (int i = 0; i < n; ++i) {
    int w = (hidx[i] % 48) * (i + 1) + ((hidx[i] * 7) % 48) * (i + 1);
    EXPECT(hs[i] == w, "scratch %d: %d want %d", i, hs[i], w);
  }
  std::printf("scratch ok\n");

  // zero-copy pinned host memory
  int* pinned;
  CHECK(hipHostMalloc(&pinned, 100 * sizeof(int), hipHostMallocDefault));
  for (int i = 0; i < 100; ++i) pinned[i] = i;
  touch_host<<<1, 128>>>(pinned, 100);
  CHECK(hipDeviceSynchronize());
  for (int i = 0; i < 100; ++i) EXPECT(pinned[i] == i + 1000, "pinned %d: %d", i, pinned[i]);
  CHECK(hipHostFree(pinned));
  std::printf("pinned ok\n");

  for (void* q : {(void*)dx, (void*)dy, (void*)dz, (void*)dv, (void*)da, (void*)db, (void*)gout, (void*)didx,
                  (void*)ds})
    CHECK(hipFree(q));
  CHECK(hipStreamDestroy(s1));
  CHECK(hipStreamDestroy(s2));
  CHECK(hipEventDestroy(e0));
  CHECK(hipEventDestroy(e1));
  std::printf("PASS\n");
  return 0;
}
