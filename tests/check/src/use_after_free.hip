// Planted bug: a kernel writes through a pointer whose allocation was freed.  Without memcheck the freed
// block is reused by the next hipMalloc and the kernel silently writes into that allocation (hipSuccess).
#include <hip/hip_runtime.h>
#include <cstdio>

__global__ void fill(int* p, int n, int v) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] = v;  // BUG-LINE
}

int main() {
  const int n = 1000;
  int *a, *c;
  hipMalloc(&a, n * sizeof(int));
  fill<<<(n + 255) / 256, 256>>>(a, n, 1);
  hipFree(a);  // FREE-LINE
  hipMalloc(&c, n * sizeof(int));
  hipMemset(c, 0, n * sizeof(int));
  fill<<<(n + 255) / 256, 256>>>(a, n, 7);
  hipError_t e = hipDeviceSynchronize();
  int h = 0;
  hipMemcpy(&h, c, sizeof h, hipMemcpyDeviceToHost);
  std::printf("sync %s c[0] %d\n", hipGetErrorName(e), h);
  hipFree(c);
  return 0;
}
