// Planted bug for racecheck through generic (FLAT) pointers to LDS: each thread stores its element through a
// pointer a noinline function receives (flat_store to the LDS aperture), then reads its neighbour 64 slots on
// (another wave's) through one, with no barrier between; then an atomicAdd through a generic pointer (a flat
// atomic on LDS) by every thread on one counter, which races with nothing but the plain read after it.
#include <hip/hip_runtime.h>
#include <cstdio>

__device__ __attribute__((noinline)) void put(int* p, int v) { *p = v; }                 // FLAT-WRITE
__device__ __attribute__((noinline)) int get(const int* p) { return *p; }                 // FLAT-READ
__device__ __attribute__((noinline)) void bump(int* p, int v) { atomicAdd(p, v); }        // FLAT-ATOMIC

__global__ void shift(int* out, const int* in, int n) {
  __shared__ int s[256];
  __shared__ int count;
  int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
  if (t == 0) count = 0;
  __syncthreads();
  put(&s[t], i < n ? in[i] : 0);
  int v = get(&s[(t + 64) % 256]);                                                      // (no barrier above)
  bump(&count, 1);
  __syncthreads();
  if (i < n) out[i] = v + count;
}

int main(int argc, char** argv) {
  const int n = argc > 1 ? atoi(argv[1]) : 1000, blocks = (n + 255) / 256;
  int *h = new int[n], *o = new int[n];
  for (int i = 0; i < n; ++i) h[i] = (i * 37) % 101;
  int *in, *out;
  hipMalloc(&in, n * sizeof(int));
  hipMalloc(&out, n * sizeof(int));
  hipMemcpy(in, h, n * sizeof(int), hipMemcpyHostToDevice);
  shift<<<blocks, 256>>>(out, in, n);
  hipMemcpy(o, out, n * sizeof(int), hipMemcpyDeviceToHost);
  std::printf("shift %s\n", hipGetErrorName(hipDeviceSynchronize()));
  hipFree(in);
  hipFree(out);
  return 0;
}
