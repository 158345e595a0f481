// memcheck under AMD's HIP over pyhip's thunk (pyhip exec --runtime amd --check memcheck): ROCr asks the thunk
// for an 8 MiB hipMalloc as one block of its own, so the checks see its exact end and its free.  A kernel
// writes one element past the end, then (after hipFree) into the freed block.  (A small hipMalloc is carved out
// of a larger ROCr block: out of bounds of it is not seen; docs/check.md.)
#include <hip/hip_runtime.h>
#include <cstdio>

__global__ void fill(int* p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i <= n) p[i] = i;                                     // BUG-LINE (i == n: one past the end)
}

int main() {
  const int n = 2 << 20;                                     // 8 MiB of ints
  int* big;
  hipMalloc(&big, n * sizeof(int));
  fill<<<(n + 256) / 256, 256>>>(big, n);
  std::printf("past_end %s\n", hipGetErrorName(hipDeviceSynchronize()));
  hipFree(big);
  fill<<<1, 64>>>(big, 10);                                 // after the free
  std::printf("after_free %s\n", hipGetErrorName(hipDeviceSynchronize()));
  return 0;
}
