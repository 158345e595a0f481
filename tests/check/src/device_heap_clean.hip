// Heavy, correct device malloc/free traffic (tests/check/test_device_heap.py): every thread of 3 blocks of 256 (the last one partial)
// allocates blocks of many sizes in three rounds, fills every byte, reads them back and frees them (in another
// order than it allocated them); thread 0 of each block also takes a 3 MiB block (more than a slab: ockl asks the
// host for it) and frees it.  Under --check all nothing is reported.
#include <hip/hip_runtime.h>
#include <cstdio>

__global__ void churn(int* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  long s = 0;
  for (int round = 0; round < 3; ++round) {
    int k1 = 1 + (i * 7 + round) % 50, k2 = 1 + (i * 13 + round * 5) % 9;
    int* a = (int*)malloc(k1 * sizeof(int));
    char* b = (char*)malloc(k2);
    if (!a || !b) { out[i] = -1; return; }
    for (int j = 0; j < k1; ++j) a[j] = i + j;
    for (int j = 0; j < k2; ++j) b[j] = (char)j;
    for (int j = 0; j < k1; ++j) s += a[j];
    for (int j = 0; j < k2; ++j) s += b[j];
    free(b);
    free(a);
  }
  if (threadIdx.x == 0) {
    const size_t big = 3u << 20;
    char* c = (char*)malloc(big);
    if (!c) { out[i] = -1; return; }
    c[0] = 1;
    c[big - 1] = 2;
    s += c[0] + c[big - 1] - 3;
    free(c);
  }
  out[i] = (int)s;
}

int main() {
  const int n = 700;
  int* d;
  static int h[n];
  hipMalloc(&d, sizeof h);
  churn<<<(n + 255) / 256, 256>>>(d, n);
  hipError_t e = hipDeviceSynchronize();
  hipMemcpy(h, d, sizeof h, hipMemcpyDeviceToHost);
  int bad = 0;
  for (int i = 0; i < n; ++i) {
    long s = 0;
    for (int round = 0; round < 3; ++round) {
      int k1 = 1 + (i * 7 + round) % 50, k2 = 1 + (i * 13 + round * 5) % 9;
      for (int j = 0; j < k1; ++j) s += i + j;
      for (int j = 0; j < k2; ++j) s += j;
    }
    bad += h[i] != (int)s;
  }
  std::printf("churn %s mismatches %d\n", hipGetErrorName(e), bad);
  hipFree(d);
  return 0;
}
