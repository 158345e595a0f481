// Kernels of benchmarks/bench_engine.py (built with hipcc 5.2 for gfx90a as a code object).
#include <hip/hip_runtime.h>
extern "C" __global__ void empty() {}
extern "C" __global__ void args16(float* a, float* b, float* c, float* d, int i0, int i1, int i2, int i3,
                                  int i4, int i5, int i6, int i7, float f0, float f1, float f2, float f3) {
  if (blockIdx.x == 0 && threadIdx.x == 0 && i0 == -12345)
    a[0] = b[0] + c[0] + d[0] + f0 + f1 + f2 + f3 + i1 + i2 + i3 + i4 + i5 + i6 + i7;
}
// keeps the device busy while launches are timed
extern "C" __global__ void busy(int n, float* out) {
  float x = threadIdx.x;
  for (int i = 0; i < n; i++) x = x * 1.0001f + 0.5f;
  out[threadIdx.x + blockIdx.x * blockDim.x] = x;
}
extern "C" __global__ void small_work(const float* a, float* b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) b[i] = a[i] * 2.0f + 1.0f;
}
// hipcc 5.2 without -munsafe-fp-atomics: a compare-and-swap loop, every item contending for one address
extern "C" __global__ void cas_add(float* p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(p, 1.0f);
}
// hip-tests' hipMemFaultStackAllocation pattern: a private array per work-item (scratch), then a loop in which
// every lane reads and writes one global element through the same address
extern "C" __global__ void local_array(const int* a, int* c, int iters) {
  int A1[256];
  for (int i = 0; i < 256; ++i) A1[i] = a[i] * 3;
  for (int i = 0; i < iters; ++i) c[i] = a[i] + A1[(i * 7) % 256];
}
