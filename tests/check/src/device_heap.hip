// Device-side malloc/free misuse, one planted bug per kernel (tests/check/test_device_heap.py): a free of a
// hipMalloc'd pointer, a free of the middle of a block, a double free, a read after free, a write past the
// requested size, and blocks never freed.  Each kernel's lanes also do correct malloc/free work.
#include <hip/hip_runtime.h>
#include <cstdio>

__global__ void free_host(int* host, int* out) {
  int i = threadIdx.x;
  if (i == 0) free(host);                                   // FREE-HOST
  out[i] = i;
}

__global__ void free_middle(int* out) {
  int i = threadIdx.x;
  int* q = (int*)malloc(16 * sizeof(int));
  if (!q) { out[i] = -1; return; }
  q[0] = i;
  out[i] = q[0];
  if (i < 3) free(q + 4);                                   // FREE-MIDDLE
  free(q);
}

__global__ void double_free(int* out) {
  int i = threadIdx.x;
  int* q = (int*)malloc(8 * sizeof(int));
  if (!q) { out[i] = -1; return; }
  q[1] = i;
  out[i] = q[1];
  free(q);
  if (i % 2) free(q);                                       // DOUBLE-FREE
}

__global__ void use_after_free(int* out) {
  int i = threadIdx.x;
  int* q = (int*)malloc(4 * sizeof(int));
  if (!q) { out[i] = -1; return; }
  q[2] = i;
  free(q);
  out[i] = ((volatile int*)q)[2];                           // UAF-READ
}

__global__ void past_size(int* out, int n) {
  int i = threadIdx.x;
  int* q = (int*)malloc(5 * sizeof(int));
  if (!q) { out[i] = -1; return; }
  for (int j = 0; j <= n; ++j) ((volatile int*)q)[j] = i + j;   // PAST-SIZE
  out[i] = q[0];
  free(q);
}

__global__ void leak(int* out) {
  int i = threadIdx.x;
  int* q = (int*)malloc(3 * sizeof(int));                   // LEAK
  if (!q) { out[i] = -1; return; }
  q[0] = i;
  out[i] = ((volatile int*)q)[0];
}

int main() {
  int *host, *out;
  int h[64];
  hipMalloc(&host, 256);
  hipMalloc(&out, sizeof h);
  auto show = [&](const char* name) {
    hipError_t e = hipDeviceSynchronize();
    hipMemcpy(h, out, sizeof h, hipMemcpyDeviceToHost);
    int bad = 0;
    for (int i = 0; i < 64; ++i) bad += h[i] != i;
    std::printf("%s %s mismatches %d\n", name, hipGetErrorName(e), bad);
  };
  free_host<<<1, 64>>>(host, out);
  show("free_host");
  free_middle<<<1, 64>>>(out);
  show("free_middle");
  double_free<<<1, 64>>>(out);
  show("double_free");
  use_after_free<<<1, 64>>>(out);
  hipDeviceSynchronize();
  std::printf("use_after_free done\n");
  past_size<<<1, 64>>>(out, 5);
  show("past_size");
  leak<<<1, 64>>>(out);
  show("leak");
  hipFree(host);
  hipFree(out);
  return 0;
}
