// No LDS race (racecheck stays silent): a block reduction with all its barriers; a warp reduction by
// shuffles only (ds_bpermute / DPP, no LDS bytes); a histogram of shared atomics; a flag every wave may
// set to the same value; an exchange through LDS within one wave; a compare-and-swap loop (its first load is
// a plain one).  Each result is checked on the host.
#include <hip/hip_runtime.h>
#include <cstdio>

__global__ void block_sum(int* out, const int* in, int n) {
  __shared__ int s[256];
  int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
  s[t] = i < n ? in[i] : 0;
  __syncthreads();
  for (int k = blockDim.x / 2; k > 0; k >>= 1) {
    if (t < k) s[t] += s[t + k];
    __syncthreads();
  }
  if (t == 0) out[blockIdx.x] = s[0];
}

__global__ void warp_sum(int* out, const int* in, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int v = i < n ? in[i] : 0;
  for (int k = warpSize / 2; k > 0; k >>= 1) v += __shfl_xor(v, k);
  if (threadIdx.x % warpSize == 0) out[i / warpSize] = v;
}

__global__ void histogram(int* out, const int* in, int n) {
  __shared__ int h[16];
  int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
  if (t < 16) h[t] = 0;
  __syncthreads();
  if (i < n) atomicAdd(&h[in[i] & 15], 1);
  __syncthreads();
  if (t < 16) atomicAdd(&out[t], h[t]);
}

__global__ void any_negative(int* out, const int* in, int n) {
  __shared__ int flag;
  int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
  if (t == 0) flag = 0;
  __syncthreads();
  if (i < n && in[i] < 0) flag = 1;                  // any wave, the same value
  __syncthreads();
  if (t == 0) out[blockIdx.x] = flag;
}

__global__ void pair_swap(int* out, const int* in, int n) {
  __shared__ int s[256];
  int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
  s[t] = i < n ? in[i] : 0;
  __builtin_amdgcn_wave_barrier();                   // t ^ 1 is in the same wave
  if (i < n) out[i] = s[t ^ 1];
}

__global__ void cas_sum(double* out, const int* in, int n) {
  __shared__ unsigned long long bits;
  int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
  if (t == 0) bits = __double_as_longlong(0.0);
  __syncthreads();
  if (i < n) {
    unsigned long long old = bits, seen;             // the CAS loop's plain first load
    do {
      seen = old;
      old = atomicCAS(&bits, seen, __double_as_longlong(__longlong_as_double(seen) + 0.5 * in[i]));
    } while (old != seen);
  }
  __syncthreads();
  if (t == 0) out[blockIdx.x] = __longlong_as_double(bits);
}

int main() {
  const int n = 1000, blocks = (n + 255) / 256, warps = (n + 63) / 64;
  int h[n], o[n];
  for (int i = 0; i < n; ++i) h[i] = (i * 37) % 101 - (i % 97 == 5 ? 200 : 0);
  int *in, *out;
  hipMalloc(&in, sizeof h);
  hipMalloc(&out, sizeof o);
  hipMemcpy(in, h, sizeof h, hipMemcpyHostToDevice);

  block_sum<<<blocks, 256>>>(out, in, n);
  hipMemcpy(o, out, blocks * sizeof(int), hipMemcpyDeviceToHost);
  int bad = 0;
  for (int b = 0; b < blocks; ++b) {
    int want = 0;
    for (int i = b * 256; i < n && i < (b + 1) * 256; ++i) want += h[i];
    bad += o[b] != want;
  }
  std::printf("block_sum mismatches %d\n", bad);

  warp_sum<<<blocks, 256>>>(out, in, n);
  hipMemcpy(o, out, warps * sizeof(int), hipMemcpyDeviceToHost);
  bad = 0;
  for (int w = 0; w < warps; ++w) {
    int want = 0;
    for (int i = w * 64; i < n && i < (w + 1) * 64; ++i) want += h[i];
    bad += o[w] != want;
  }
  std::printf("warp_sum mismatches %d\n", bad);

  hipMemset(out, 0, 16 * sizeof(int));
  histogram<<<blocks, 256>>>(out, in, n);
  hipMemcpy(o, out, 16 * sizeof(int), hipMemcpyDeviceToHost);
  int want[16] = {};
  for (int i = 0; i < n; ++i) want[h[i] & 15]++;
  bad = 0;
  for (int k = 0; k < 16; ++k) bad += o[k] != want[k];
  std::printf("histogram mismatches %d\n", bad);

  any_negative<<<blocks, 256>>>(out, in, n);
  hipMemcpy(o, out, blocks * sizeof(int), hipMemcpyDeviceToHost);
  bad = 0;
  for (int b = 0; b < blocks; ++b) {
    int neg = 0;
    for (int i = b * 256; i < n && i < (b + 1) * 256; ++i) neg |= h[i] < 0;
    bad += o[b] != neg;
  }
  std::printf("any_negative mismatches %d\n", bad);

  double* sums;
  double got[blocks];
  hipMalloc(&sums, sizeof got);
  cas_sum<<<blocks, 256>>>(sums, in, n);
  hipMemcpy(got, sums, sizeof got, hipMemcpyDeviceToHost);
  bad = 0;
  for (int b = 0; b < blocks; ++b) {
    double want = 0;
    for (int i = b * 256; i < n && i < (b + 1) * 256; ++i) want += 0.5 * h[i];
    bad += got[b] != want;                           // halves of small integers: exact in any order
  }
  std::printf("cas_sum mismatches %d\n", bad);
  hipFree(sums);

  pair_swap<<<blocks, 256>>>(out, in, n);
  hipMemcpy(o, out, sizeof o, hipMemcpyDeviceToHost);
  bad = 0;
  for (int i = 0; i < n; ++i) bad += o[i] != ((i ^ 1) < n ? h[i ^ 1] : 0);
  std::printf("pair_swap mismatches %d %s\n", bad, hipGetErrorName(hipDeviceSynchronize()));
  hipFree(in);
  hipFree(out);
  return 0;
}
