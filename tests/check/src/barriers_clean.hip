// No barrier bug: every wave of a workgroup reaches every __syncthreads() (a reduction whose loop bound is
// uniform, a bounds check that does not skip the barrier, and a whole workgroup returning early).
#include <hip/hip_runtime.h>
#include <cstdio>

__global__ void block_sum(int* out, const int* in, int n) {
  __shared__ int s[256];
  int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
  if (i - t >= n) return;                    // the whole workgroup (uniform): the grid has one block too many
  s[t] = i < n ? in[i] : 0;
  __syncthreads();
  for (int k = blockDim.x / 2; k > 0; k >>= 1) {
    if (t < k) s[t] += s[t + k];
    __syncthreads();
  }
  if (t == 0) out[blockIdx.x] = s[0];
}

int main() {
  const int n = 1000, blocks = (n + 255) / 256;
  int h[n], o[blocks + 1];
  for (int i = 0; i < n; ++i) h[i] = (i * 37) % 101;
  int *in, *out;
  hipMalloc(&in, sizeof h);
  hipMalloc(&out, sizeof o);
  hipMemcpy(in, h, sizeof h, hipMemcpyHostToDevice);
  block_sum<<<blocks + 1, 256>>>(out, in, n);
  hipMemcpy(o, out, sizeof o, hipMemcpyDeviceToHost);
  int bad = 0;
  for (int b = 0; b < blocks; ++b) {
    int want = 0;
    for (int i = b * 256; i < n && i < (b + 1) * 256; ++i) want += h[i];
    bad += o[b] != want;
  }
  std::printf("block_sum %s mismatches %d\n", hipGetErrorName(hipDeviceSynchronize()), bad);
  hipFree(in);
  hipFree(out);
  return 0;
}
