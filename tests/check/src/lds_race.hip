// Planted bug for racecheck: a block reduction missing the __syncthreads() between filling the shared tile
// and the first step of the tree (waves 0 and 1 read what waves 2 and 3 wrote with no barrier between).
// On a GPU the sums may come out wrong; the emulator's waves step together, so they come out right.
#include <hip/hip_runtime.h>
#include <cstdio>

__global__ void block_sum(int* out, const int* in, int n) {
  __shared__ int s[256];
  int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
  s[t] = i < n ? in[i] : 0;                                 // RACE-WRITE
  for (int k = blockDim.x / 2; k > 0; k >>= 1) {            // (the missing __syncthreads() belongs above)
    if (t < k) s[t] += s[t + k];                            // RACE-READ
    __syncthreads();
  }
  if (t == 0) out[blockIdx.x] = s[0];
}

int main() {
  const int n = 1000, blocks = (n + 255) / 256;
  int h[n], o[blocks];
  for (int i = 0; i < n; ++i) h[i] = (i * 37) % 101;
  int *in, *out;
  hipMalloc(&in, sizeof h);
  hipMalloc(&out, sizeof o);
  hipMemcpy(in, h, sizeof h, hipMemcpyHostToDevice);
  block_sum<<<blocks, 256>>>(out, in, n);
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
