// __managed__ variables (__hipRegisterManagedVar), hipMallocManaged, hip_impl::hipLaunchKernelGGLImpl and
// hipExtModuleLaunchKernel (global work-item sizes, events) from an unmodified hipcc program.
// argv[1]: a gfx90a code object V5 with extern "C" vadd_c(const float*, const float*, float*, int) (with
// code object V4, hipcc 5.2's blockDim.x is the partial group's size in the last group, so such a launch
// would not cover every work-item; V5 code reads the hidden block counts/remainders).
#include <hip/hip_runtime.h>
#include <hip/hip_ext.h>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace hip_impl {
void hipLaunchKernelGGLImpl(uintptr_t function_address, const dim3& numBlocks, const dim3& dimBlocks,
                            uint32_t sharedMemBytes, hipStream_t stream, void** kernarg);
}

#define CHECK(x) do { hipError_t e_ = (x); if (e_ != hipSuccess) { \
  std::printf("FAIL %s:%d %s -> %d\n", __FILE__, __LINE__, #x, (int)e_); std::exit(1); } } while (0)
#define EXPECT(c, ...) do { if (!(c)) { std::printf("FAIL %s:%d ", __FILE__, __LINE__); \
  std::printf(__VA_ARGS__); std::printf("\n"); std::exit(1); } } while (0)

__managed__ int counter = 42;
__managed__ int table[8] = {1, 2, 3, 4, 5, 6, 7, 8};

__global__ void bump(int by) {
  atomicAdd(&counter, by);
  if (threadIdx.x < 8) table[threadIdx.x] *= 10;
}
__global__ void axpy(int* y, const int* x, int a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] += a * x[i];
}

int main(int argc, char** argv) {
  // managed variables: initial values visible on the host, kernel updates visible after synchronising
  EXPECT(counter == 42 && table[7] == 8, "initial managed values %d %d", counter, table[7]);
  bump<<<1, 64>>>(2);
  CHECK(hipDeviceSynchronize());
  EXPECT(counter == 42 + 128, "managed counter %d", counter);
  for (int i = 0; i < 8; ++i) EXPECT(table[i] == (i + 1) * 10, "table[%d] = %d", i, table[i]);
  counter = 7;                                       // host write, then the kernel sees it
  bump<<<1, 1>>>(1);
  CHECK(hipDeviceSynchronize());
  EXPECT(counter == 8, "host-written managed value not seen: %d", counter);

  // hipMallocManaged: the same pointer on host and device
  const int n = 1000;
  int *x, *y;
  CHECK(hipMallocManaged((void**)&x, n * sizeof(int), hipMemAttachGlobal));
  CHECK(hipMallocManaged((void**)&y, n * sizeof(int), hipMemAttachGlobal));
  for (int i = 0; i < n; ++i) { x[i] = i; y[i] = 3 * i + 1; }
  axpy<<<(n + 127) / 128, 128>>>(y, x, 5, n);
  CHECK(hipDeviceSynchronize());
  for (int i = 0; i < n; ++i) EXPECT(y[i] == 8 * i + 1, "managed axpy %d: %d", i, y[i]);

  // hip_impl::hipLaunchKernelGGLImpl (the old macro launch path): packed arguments in a config array
  struct { int* y; const int* x; int a; int n; } packed = {y, x, 2, n};
  size_t psize = sizeof(packed);
  void* config[] = {HIP_LAUNCH_PARAM_BUFFER_POINTER, &packed, HIP_LAUNCH_PARAM_BUFFER_SIZE, &psize,
                    HIP_LAUNCH_PARAM_END};
  hip_impl::hipLaunchKernelGGLImpl((uintptr_t)reinterpret_cast<const void*>(&axpy), dim3(8), dim3(128), 0,
                                   nullptr, config);
  CHECK(hipGetLastError());
  CHECK(hipDeviceSynchronize());
  for (int i = 0; i < n; ++i) EXPECT(y[i] == 10 * i + 1, "GGLImpl %d: %d", i, y[i]);
  CHECK(hipFree(x));
  CHECK(hipFree(y));

  // hipExtModuleLaunchKernel: 1,000 work-items in groups of 256 (last group partial), with events
  hipModule_t mod;
  hipFunction_t f;
  CHECK(hipModuleLoad(&mod, argv[1]));
  CHECK(hipModuleGetFunction(&f, mod, "vadd_c"));
  const int m = 2000;                                 // the kernel's own bound is larger: only the launch limits
  float *da, *db, *dc;
  CHECK(hipMalloc(&da, m * sizeof(float)));
  CHECK(hipMalloc(&db, m * sizeof(float)));
  CHECK(hipMalloc(&dc, m * sizeof(float)));
  std::vector<float> ha(m), hb(m), hc(m);
  for (int i = 0; i < m; ++i) { ha[i] = 0.5f * i; hb[i] = 1000.0f - i; }
  CHECK(hipMemcpy(da, ha.data(), m * sizeof(float), hipMemcpyHostToDevice));
  CHECK(hipMemcpy(db, hb.data(), m * sizeof(float), hipMemcpyHostToDevice));
  CHECK(hipMemset(dc, 0xFF, m * sizeof(float)));
  hipEvent_t start, stop;
  CHECK(hipEventCreate(&start));
  CHECK(hipEventCreate(&stop));
  int mm = m;
  void* kargs[] = {&da, &db, &dc, &mm};
  CHECK(hipExtModuleLaunchKernel(f, 1000, 1, 1, 256, 1, 1, 0, nullptr, kargs, nullptr, start, stop, 0));
  CHECK(hipEventSynchronize(stop));
  float ms = -1;
  CHECK(hipEventElapsedTime(&ms, start, stop));
  EXPECT(ms >= 0, "elapsed %f", ms);
  CHECK(hipMemcpy(hc.data(), dc, m * sizeof(float), hipMemcpyDeviceToHost));
  for (int i = 0; i < m; ++i) {
    if (i < 1000) EXPECT(hc[i] == ha[i] + hb[i], "ext %d: %f", i, hc[i]);
    else EXPECT(*(unsigned*)&hc[i] == 0xFFFFFFFFu, "work-item %d ran outside the global size", i);
  }
  void* extra_and_params[] = {nullptr};
  EXPECT(hipExtModuleLaunchKernel(f, 64, 1, 1, 64, 1, 1, 0, nullptr, kargs, extra_and_params, nullptr, nullptr, 0)
         == hipErrorInvalidValue, "kernelParams and extra together must be refused");
  CHECK(hipModuleUnload(mod));
  std::printf("PASS\n");
  return 0;
}
