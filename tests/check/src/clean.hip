// No bug: reads and writes stay inside their allocations; memory is freed and reallocated between launches.
#include <hip/hip_runtime.h>
#include <cstdio>

__global__ void saxpy(float* y, const float* x, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

int main() {
  const int n = 777;
  float hx[n], hy[n];
  for (int i = 0; i < n; ++i) { hx[i] = float(i); hy[i] = 1.0f; }
  float *x, *y;
  for (int round = 0; round < 2; ++round) {
    hipMalloc(&x, sizeof hx);
    hipMalloc(&y, sizeof hy);
    hipMemcpy(x, hx, sizeof hx, hipMemcpyHostToDevice);
    hipMemcpy(y, hy, sizeof hy, hipMemcpyHostToDevice);
    saxpy<<<(n + 63) / 64, 64>>>(y, x, 2.0f, n);
    hipMemcpy(hy, y, sizeof hy, hipMemcpyDeviceToHost);
    hipFree(x);
    hipFree(y);
  }
  std::printf("%s y[776] %.0f\n", hipGetErrorName(hipGetLastError()), hy[776]);
  return 0;
}
