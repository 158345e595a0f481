// Planted bugs for synccheck: __syncthreads() reached by only some waves of a workgroup.  On AMD hardware
// both kernels run to the end (waves that ended do not count towards the barrier; any s_barrier releases it):
// the program prints what the GPU computes.
#include <hip/hip_runtime.h>
#include <cstdio>

// waves 2 and 3 of each 256-thread workgroup return before the barrier waves 0 and 1 wait at
__global__ void early_exit(int* out, const int* in, int n) {
  __shared__ int tile[256];
  int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
  if (t >= 128) return;
  tile[t] = i < n ? in[i] : 0;
  __syncthreads();                                        // SYNC-EARLY-EXIT
  if (i < n) out[i] = tile[t ^ 1];
}

// wave 0 waits at one __syncthreads(), the other waves at another
__global__ void two_barriers(int* out, const int* in, int n) {
  __shared__ int tile[256];
  int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
  int v = i < n ? in[i] : 0;
  if (t < 64) {
    tile[t] = v * 3;
    __syncthreads();                                      // SYNC-WAVE0
    v = tile[t ^ 1] + 1;
  } else {
    tile[t] = v * 5;
    __builtin_amdgcn_s_barrier();                         // SYNC-OTHERS
    v = tile[t ^ 2] - 1;
  }
  if (i < n) out[i] = v;
}

int main() {
  const int n = 1000;
  int h[n], o[n], want[n];
  for (int i = 0; i < n; ++i) h[i] = i * 7 + 1;
  int *in, *out;
  hipMalloc(&in, sizeof h);
  hipMalloc(&out, sizeof o);
  hipMemcpy(in, h, sizeof h, hipMemcpyHostToDevice);
  hipMemset(out, 0, sizeof o);
  early_exit<<<(n + 255) / 256, 256>>>(out, in, n);
  hipMemcpy(o, out, sizeof o, hipMemcpyDeviceToHost);
  int bad = 0;
  for (int i = 0; i < n; ++i) {
    int t = i % 256, j = i ^ 1;
    want[i] = t >= 128 ? 0 : (j < n ? h[j] : 0);
    bad += o[i] != want[i];
  }
  std::printf("early_exit %s mismatches %d\n", hipGetErrorName(hipDeviceSynchronize()), bad);
  two_barriers<<<(n + 255) / 256, 256>>>(out, in, n);
  hipMemcpy(o, out, sizeof o, hipMemcpyDeviceToHost);
  bad = 0;
  for (int i = 0; i < n; ++i) {
    int t = i % 256;
    int j = t < 64 ? (i ^ 1) : (i ^ 2);
    int v = j < n ? h[j] : 0;
    want[i] = t < 64 ? v * 3 + 1 : v * 5 - 1;
    bad += o[i] != want[i];
  }
  std::printf("two_barriers %s mismatches %d\n", hipGetErrorName(hipDeviceSynchronize()), bad);
  hipFree(in);
  hipFree(out);
  return 0;
}
