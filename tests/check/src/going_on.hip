// Planted bugs memcheck reports and goes on after, as the GPU would: a kernel writes 16 ints past the end of
// its allocation (inside the address space the allocation owns: the GPU performs those stores), a second one
// reads one of them back (the GPU reads what was written), a third reads 64 MiB past the end (nothing mapped
// there: a GPU faults; memcheck reports it and the load reads 0).
#include <hip/hip_runtime.h>
#include <cstdio>

__global__ void write_past(int* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n + 16) x[i] = i + 1;  // WRITE-LINE
}

__global__ void read_back(const int* x, int* out, int at) {
  if (threadIdx.x == 0) out[0] = x[at];  // READ-LINE
}

int main() {
  const int n = 1000;
  int *x, *out;
  hipMalloc(&x, n * sizeof(int));
  hipMalloc(&out, 2 * sizeof(int));
  write_past<<<(n + 16 + 255) / 256, 256>>>(x, n);
  read_back<<<1, 64>>>(x, out, n + 5);
  int h[2] = {-1, -1};
  hipError_t e = hipMemcpy(h, out, sizeof h, hipMemcpyDeviceToHost);
  std::printf("back %s %d\n", hipGetErrorName(e), h[0]);
  read_back<<<1, 64>>>(x, out, 16 << 20);
  h[0] = -1;
  e = hipMemcpy(h, out, sizeof h, hipMemcpyDeviceToHost);
  std::printf("far %s %d\n", hipGetErrorName(e), e == hipSuccess ? h[0] : -1);
  hipFree(x);
  hipFree(out);
  return 0;
}
