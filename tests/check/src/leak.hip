// Planted bug: two device allocations are never freed (one from a helper), one is.  --check leaks names the
// two with their sizes and where they were allocated; the program's own output is unchanged.
#include <hip/hip_runtime.h>
#include <cstdio>

__global__ void iota(int* p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] = i;
}

static int* make_table(int n) {
  int* t;
  hipMalloc(&t, n * sizeof(int));  // HELPER-LEAK-LINE
  iota<<<(n + 255) / 256, 256>>>(t, n);
  return t;
}

int main() {
  const int n = 1000;
  int *a, *b;
  hipMalloc(&a, 3000);  // MAIN-LEAK-LINE
  hipMalloc(&b, 5000);
  int* t = make_table(n);
  int h = 0;
  hipMemcpy(&h, t + 777, sizeof h, hipMemcpyDeviceToHost);
  hipFree(b);
  std::printf("t[777] %d\n", h);
  return 0;
}
