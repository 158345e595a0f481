// Returns from main with work still queued on the null stream and on a stream it never synchronised or
// destroyed (and one kernel spinning for a while): the process must exit promptly with status 0.
#include <hip/hip_runtime.h>
#include <cstdio>

__global__ void busy(int* out, int iters) {
  int acc = threadIdx.x;
  for (int k = 0; k < iters; ++k) acc = acc * 1664525 + 1013904223 + k;
  out[threadIdx.x] = acc;
}

int main() {
  int* d;
  hipStream_t s;
  if (hipMalloc(&d, 64 * sizeof(int)) != hipSuccess || hipStreamCreate(&s) != hipSuccess) return 2;
  busy<<<1, 64, 0, s>>>(d, 200000);
  for (int i = 0; i < 500; ++i) busy<<<1, 64>>>(d, 10);
  std::printf("queued\n");
  return 0;
}
