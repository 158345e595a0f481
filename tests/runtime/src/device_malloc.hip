// Device malloc/free from many threads: each work-item allocates a block whose size depends on its index
// (1..4099 ints, so the heap asks the host for slabs through the SERVICE_DEVMEM hostcall), fills it, sums it,
// frees it; the host recomputes every sum. Prints "device malloc N: <hipError name>, <wrong> wrong, <null> null".
#include <hip/hip_runtime.h>
#include <cstdio>
#include <cstdlib>

__device__ int words(int i) { return 1 + (i * 2654435761u) % 4099u; }

__global__ void fill_and_sum(long long* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int m = words(i);
  int* p = (int*)malloc(m * sizeof(int));
  if (!p) { out[i] = -1; return; }
  for (int j = 0; j < m; ++j) p[j] = i * 7 + j;
  long long s = 0;
  for (int j = m - 1; j >= 0; --j) s += p[j];
  free(p);
  out[i] = s;
}

int main(int argc, char** argv) {
  int n = argc > 1 ? atoi(argv[1]) : 1000;
  long long* d;
  if (hipMalloc(&d, n * sizeof(long long)) != hipSuccess) return 2;
  hipLaunchKernelGGL(fill_and_sum, dim3((n + 127) / 128), dim3(128), 0, 0, d, n);
  hipError_t e = hipDeviceSynchronize();
  long long* h = (long long*)calloc(n, sizeof(long long));
  hipMemcpy(h, d, n * sizeof(long long), hipMemcpyDeviceToHost);
  int wrong = 0, null = 0;
  for (int i = 0; i < n; ++i) {
    long long m = 1 + (i * 2654435761u) % 4099u, s = m * (i * 7LL) + m * (m - 1) / 2;
    if (h[i] == -1) null++;
    else if (h[i] != s) wrong++;
  }
  printf("device malloc %d: %s, %d wrong, %d null\n", n, hipGetErrorName(e), wrong, null);
  return 0;
}
