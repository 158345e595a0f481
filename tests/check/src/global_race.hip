// Planted bugs for racecheck, global memory: an in-place stencil (each thread reads its right neighbour's
// element, which the neighbour overwrites in the same dispatch: across waves and workgroups), and a "last
// block" sum that trusts blockIdx.x instead of an atomic counter (the last workgroup reads the other
// workgroups' partial sums with nothing ordering the reads after their writes).  On a GPU both may compute
// garbage; the emulator's order happens to give the intended results, which the program checks.
#include <hip/hip_runtime.h>
#include <cstdio>

__global__ void smooth_in_place(int* a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i + 1 < n) {
    int right = a[i + 1];                                   // RACE-READ
    a[i] = (a[i] + right) / 2;                              // RACE-WRITE
  }
}

__global__ void last_block_sum(int* partial, int* total, const int* in, int n) {
  __shared__ int s[64];
  int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
  s[t] = i < n ? in[i] : 0;
  __syncthreads();
  for (int k = 32; k > 0; k >>= 1) {
    if (t < k) s[t] += s[t + k];
    __syncthreads();
  }
  if (t == 0) partial[blockIdx.x] = s[0];                   // PARTIAL-WRITE
  if (blockIdx.x == gridDim.x - 1 && t == 0) {              // (the bug: no atomic counter, no fence)
    int sum = 0;
    for (unsigned b = 0; b < gridDim.x; ++b) sum += partial[b];   // PARTIAL-READ
    *total = sum;
  }
}

int main() {
  const int n = 300, blocks = (n + 63) / 64;
  int h[n], r[n];
  for (int i = 0; i < n; ++i) h[i] = (i * 37) % 101;
  int *a, *in, *partial, *total;
  hipMalloc(&a, sizeof h);
  hipMalloc(&in, sizeof h);
  hipMalloc(&partial, blocks * sizeof(int));
  hipMalloc(&total, sizeof(int));
  hipMemcpy(a, h, sizeof h, hipMemcpyHostToDevice);
  hipMemcpy(in, h, sizeof h, hipMemcpyHostToDevice);
  smooth_in_place<<<(n + 127) / 128, 128>>>(a, n);
  hipMemcpy(r, a, sizeof r, hipMemcpyDeviceToHost);
  int bad = 0;
  for (int i = 0; i + 1 < n; ++i) bad += r[i] != (h[i] + h[i + 1]) / 2;
  std::printf("smooth_in_place %s mismatches %d\n", hipGetErrorName(hipDeviceSynchronize()), bad);
  last_block_sum<<<blocks, 64>>>(partial, total, in, n);
  int got = 0, want = 0;
  hipMemcpy(&got, total, sizeof got, hipMemcpyDeviceToHost);
  for (int i = 0; i < n; ++i) want += h[i];
  std::printf("last_block_sum %s %s\n", hipGetErrorName(hipDeviceSynchronize()), got == want ? "right" : "wrong");
  hipFree(a);
  hipFree(in);
  hipFree(partial);
  hipFree(total);
  return 0;
}
