// Planted bugs: an atomic on an address that is not 4-byte aligned, and a kernel indexing its dynamic shared
// memory past what the launch gave it.  Each launch fails; memcheck names both (two distinct reports).
#include <hip/hip_runtime.h>
#include <cstdio>

__global__ void count(int* counter) {
  atomicAdd(counter, 1);  // ATOMIC-LINE
}

__global__ void reverse(int* d, int n) {
  extern __shared__ int s[];
  int t = threadIdx.x;
  s[t] = d[t];  // LDS-LINE
  __syncthreads();
  d[t] = s[n - 1 - t];
}

int main() {
  char* raw;
  hipMalloc(&raw, 64);
  hipMemset(raw, 0, 64);
  count<<<1, 64>>>(reinterpret_cast<int*>(raw + 2));
  hipError_t e1 = hipDeviceSynchronize();
  int* d;
  hipMalloc(&d, 128 * sizeof(int));
  reverse<<<1, 128, 64 * sizeof(int)>>>(d, 128);  // half the LDS the kernel uses
  hipError_t e2 = hipDeviceSynchronize();
  std::printf("%s %s\n", hipGetErrorName(e1), hipGetErrorName(e2));
  hipFree(raw);
  hipFree(d);
  return 0;
}
