// Device-side malloc and free: every thread allocates a small array, fills it, sums it and frees it; the host
// frees what it allocated.  Under --check all nothing leaks: the slabs of device malloc's heap (made by the
// runtime's hostcall service on its own thread) are the runtime's, not the program's.
#include <hip/hip_runtime.h>
#include <cstdio>

__global__ void sums(int* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int k = 1 + i % 7;
  int* p = (int*)malloc(k * sizeof(int));
  int s = -1;
  if (p) {
    for (int j = 0; j < k; ++j) p[j] = i + j;
    s = 0;
    for (int j = 0; j < k; ++j) s += p[j];
    free(p);
  }
  out[i] = s;
}

int main() {
  const int n = 300;
  int* d;
  int h[n];
  hipMalloc(&d, sizeof h);
  sums<<<(n + 127) / 128, 128>>>(d, n);
  hipMemcpy(h, d, sizeof h, hipMemcpyDeviceToHost);
  int bad = 0;
  for (int i = 0; i < n; ++i) {
    int k = 1 + i % 7;
    bad += h[i] != k * i + k * (k - 1) / 2;
  }
  std::printf("%s mismatches %d\n", hipGetErrorName(hipDeviceSynchronize()), bad);
  hipFree(d);
  return 0;
}
