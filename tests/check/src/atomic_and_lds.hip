// Planted bugs: an atomic on an address that is not 4-byte aligned (the launch fails), and a kernel indexing
// its dynamic shared memory past what the launch gave it (inside the LDS granule the GPU allocates: it runs
// to the right result, as on a GPU).  memcheck names the atomic and the LDS store and load.
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
  d[t] = s[n - 1 - t];  // LDS-READ-LINE
}

int main() {
  char* raw;
  hipMalloc(&raw, 64);
  hipMemset(raw, 0, 64);
  count<<<1, 64>>>(reinterpret_cast<int*>(raw + 2));
  hipError_t e1 = hipDeviceSynchronize();
  int* d;
  int h[128];
  for (int i = 0; i < 128; i++) h[i] = i;
  hipMalloc(&d, 128 * sizeof(int));
  hipMemcpy(d, h, sizeof h, hipMemcpyHostToDevice);
  reverse<<<1, 128, 64 * sizeof(int)>>>(d, 128);  // half the LDS the kernel uses
  hipError_t e2 = hipDeviceSynchronize();
  hipMemcpy(h, d, sizeof h, hipMemcpyDeviceToHost);
  bool ok = true;
  for (int i = 0; i < 128; i++) ok = ok && h[i] == 127 - i;
  std::printf("%s %s %s\n", hipGetErrorName(e1), hipGetErrorName(e2), ok ? "reversed" : "wrong");
  hipFree(raw);
  hipFree(d);
  return 0;
}
