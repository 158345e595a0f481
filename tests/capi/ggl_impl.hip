// hip_impl::hipLaunchKernelGGLImpl, the entry point of old hipLaunchKernelGGL headers: `kernarg` is an
// `extra`-style config array (HIP_LAUNCH_PARAM_BUFFER_POINTER, packed arguments, HIP_LAUNCH_PARAM_BUFFER_SIZE,
// &size, HIP_LAUNCH_PARAM_END), the function returns void and reports failures through hipGetLastError.
// Run under pyhip's libamdhip64 and AMD's (pyhip exec --runtime amd): both must print the same lines.
#include <hip/hip_runtime.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace hip_impl {
void hipLaunchKernelGGLImpl(uintptr_t function_address, const dim3& numBlocks, const dim3& dimBlocks,
                            uint32_t sharedMemBytes, hipStream_t stream, void** kernarg);
}

#define CHECK(x) do { hipError_t e_ = (x); if (e_ != hipSuccess) { \
  std::printf("FAIL %s:%d %s -> %d\n", __FILE__, __LINE__, #x, (int)e_); std::exit(1); } } while (0)

__global__ void axpy(int* y, const int* x, int a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] += a * x[i];
}

struct AxpyArgs { int* y; const int* x; int a; int n; };      // the kernel's argument layout

int main() {
  const int n = 1000;
  std::vector<int> hx(n), hy(n), out(n);
  for (int i = 0; i < n; ++i) { hx[i] = std::rand() % 1000 - 500; hy[i] = std::rand() % 1000; }
  int *x, *y;
  CHECK(hipMalloc(&x, n * sizeof(int)));
  CHECK(hipMalloc(&y, n * sizeof(int)));
  CHECK(hipMemcpy(x, hx.data(), n * sizeof(int), hipMemcpyHostToDevice));
  CHECK(hipMemcpy(y, hy.data(), n * sizeof(int), hipMemcpyHostToDevice));
  hipStream_t s;
  CHECK(hipStreamCreate(&s));
  uintptr_t fn = (uintptr_t)reinterpret_cast<const void*>(&axpy);

  // 1. packed arguments through the config array, on a stream, last group partial (n = 1000 < 8 * 128)
  AxpyArgs packed = {y, x, 3, n};
  size_t size = sizeof(packed);
  void* config[] = {HIP_LAUNCH_PARAM_BUFFER_POINTER, &packed, HIP_LAUNCH_PARAM_BUFFER_SIZE, &size,
                    HIP_LAUNCH_PARAM_END};
  hip_impl::hipLaunchKernelGGLImpl(fn, dim3(8), dim3(128), 0, s, config);
  std::printf("config launch: %s\n", hipGetErrorName(hipGetLastError()));
  CHECK(hipStreamSynchronize(s));
  CHECK(hipMemcpy(out.data(), y, n * sizeof(int), hipMemcpyDeviceToHost));
  int bad = 0;
  for (int i = 0; i < n; ++i) bad += out[i] != hy[i] + 3 * hx[i];
  std::printf("results: %d wrong\n", bad);

  // 2. a second launch of the same configuration (a repeat may take a faster path), on the null stream
  packed.a = -2;
  hip_impl::hipLaunchKernelGGLImpl(fn, dim3(8), dim3(128), 0, nullptr, config);
  std::printf("repeat launch: %s\n", hipGetErrorName(hipGetLastError()));
  CHECK(hipDeviceSynchronize());
  CHECK(hipMemcpy(out.data(), y, n * sizeof(int), hipMemcpyDeviceToHost));
  bad = 0;
  for (int i = 0; i < n; ++i) bad += out[i] != hy[i] + hx[i];
  std::printf("results: %d wrong\n", bad);

  // 3. a malformed config array: refused, nothing runs
  void* malformed[] = {HIP_LAUNCH_PARAM_BUFFER_SIZE, &size, HIP_LAUNCH_PARAM_BUFFER_POINTER, &packed,
                       HIP_LAUNCH_PARAM_END};
  hip_impl::hipLaunchKernelGGLImpl(fn, dim3(8), dim3(128), 0, nullptr, malformed);
  std::printf("malformed config: %s\n", hipGetErrorName(hipGetLastError()));
  CHECK(hipDeviceSynchronize());
  CHECK(hipMemcpy(out.data(), y, n * sizeof(int), hipMemcpyDeviceToHost));
  bad = 0;
  for (int i = 0; i < n; ++i) bad += out[i] != hy[i] + hx[i];
  std::printf("unchanged: %d wrong\n", bad);

  // 4. an address that is no kernel
  hip_impl::hipLaunchKernelGGLImpl((uintptr_t)&packed, dim3(1), dim3(1), 0, nullptr, config);
  std::printf("unknown function: %s\n", hipGetErrorName(hipGetLastError()));
  std::printf("after: %s\n", hipGetErrorName(hipGetLastError()));
  CHECK(hipStreamDestroy(s));
  CHECK(hipFree(x));
  CHECK(hipFree(y));
  std::printf("PASS\n");
  return 0;
}
