// Planted bug for initcheck: a kernel reads elements of a hipMalloc'd buffer that nothing wrote (the host
// copies only the first half in).  The other buffers are written by a copy, a memset and a kernel first.
#include <hip/hip_runtime.h>
#include <cstdio>

__global__ void fill(int* p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] = i;
}

__global__ void add(int* out, const int* a, const int* b, const int* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = a[i] + b[i] + c[i];                  // INIT-READ
}

int main() {
  const int n = 1000;
  int h[n];
  for (int i = 0; i < n; ++i) h[i] = 3 * i;
  int *a, *b, *c, *out;
  hipMalloc(&a, sizeof h);
  hipMalloc(&b, sizeof h);
  hipMalloc(&c, sizeof h);
  hipMalloc(&out, sizeof h);
  hipMemset(b, 0, sizeof h);                               // b: a memset
  fill<<<(n + 255) / 256, 256>>>(c, n);                    // c: a kernel
  hipMemcpy(a, h, sizeof h, hipMemcpyHostToDevice);        // a: a copy
  add<<<(n + 255) / 256, 256>>>(out, a, b, c, n);          // all written: silent
  hipMemcpy(h, out, sizeof h, hipMemcpyDeviceToHost);
  std::printf("out[999] %d\n", h[999]);
  hipFree(a);
  hipMalloc(&a, sizeof h);                                 // fresh: nothing wrote it
  hipMemcpy(a, h, sizeof h / 2, hipMemcpyHostToDevice);    // the first half only
  add<<<(n + 255) / 256, 256>>>(out, a, b, c, n);          // reads a[500..999]: reported
  hipMemcpy(h, out, sizeof h, hipMemcpyDeviceToHost);
  std::printf("%s\n", hipGetErrorName(hipDeviceSynchronize()));
  hipFree(a); hipFree(b); hipFree(c); hipFree(out);
  return 0;
}
