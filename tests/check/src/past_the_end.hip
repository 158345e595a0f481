// Planted bug: an off-by-one bound (i <= n) writes one element past the end of the allocation, inside its
// last page: a GPU does not fault there (nor does pyhip by default); memcheck reports it.
#include <hip/hip_runtime.h>
#include <cstdio>

__global__ void scale(float* x, float s, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i <= n) x[i] = x[i] * s;  // BUG-LINE
}

int main() {
  const int n = 1000;
  float h[n];
  for (int i = 0; i < n; ++i) h[i] = float(i);
  float* d;
  hipMalloc(&d, n * sizeof(float));  // ALLOC-LINE
  hipMemcpy(d, h, sizeof h, hipMemcpyHostToDevice);
  scale<<<(n + 127) / 128, 128>>>(d, 2.0f, n);
  hipError_t e = hipDeviceSynchronize();
  hipMemcpy(h, d, sizeof h, hipMemcpyDeviceToHost);
  std::printf("sync %s h[999] %.0f\n", hipGetErrorName(e), h[999]);
  hipFree(d);
  return 0;
}
