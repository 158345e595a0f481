// No global-memory race (racecheck stays silent): a histogram of global atomics over many workgroups; the
// threadfence reduction (each workgroup's partial sum, __threadfence(), an atomic counter; the workgroup
// that comes last sums the partials after a __syncthreads()); every workgroup storing the same
// value to one flag; a float atomicMax done as a compare-and-swap loop (its first load is a plain one); and
// workgroups that each write their own elements and read them back.  Each result is checked on the host.
#include <hip/hip_runtime.h>
#include <cstdio>

__global__ void histogram(int* bins, const int* in, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(&bins[in[i] & 15], 1);
}

__device__ unsigned int arrived = 0;

__global__ void fence_sum(int* partial, int* total, const int* in, int n) {
  __shared__ int s[128];
  __shared__ bool last;
  int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
  s[t] = i < n ? in[i] : 0;
  __syncthreads();
  for (int k = 64; k > 0; k >>= 1) {
    if (t < k) s[t] += s[t + k];
    __syncthreads();
  }
  if (t == 0) {
    partial[blockIdx.x] = s[0];
    __threadfence();
    last = atomicInc(&arrived, gridDim.x) == gridDim.x - 1;
  }
  __syncthreads();
  if (last) {                                   // every wave of the last workgroup reads partials
    int sum = 0;
    for (unsigned b = t; b < gridDim.x; b += blockDim.x) sum += partial[b];
    s[t] = sum;
    __syncthreads();
    for (int k = 64; k > 0; k >>= 1) {
      if (t < k) s[t] += s[t + k];
      __syncthreads();
    }
    if (t == 0) *total = s[0];
  }
}

__global__ void any_large(int* flag, const int* in, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n && in[i] > 90) *flag = 1;            // any workgroup, the same value
}

__global__ void float_max(float* out, const int* in, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float v = in[i] * 0.5f, old = *out;
    while (old < v) {
      float seen = __int_as_float(atomicCAS(reinterpret_cast<int*>(out), __float_as_int(old), __float_as_int(v)));
      if (seen == old) break;
      old = seen;
    }
  }
}

__global__ void own_elements(int* a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] = a[i] * 3 + 1;
  if (i < n) a[i] += 1;
}

int main() {
  const int n = 1000, blocks = (n + 127) / 128;
  int h[n];
  for (int i = 0; i < n; ++i) h[i] = (i * 37) % 101;
  int *in, *bins, *partial, *total, *any, *a;
  float* mx;
  hipMalloc(&in, sizeof h);
  hipMemcpy(in, h, sizeof h, hipMemcpyHostToDevice);
  hipMalloc(&bins, 16 * sizeof(int));
  hipMemset(bins, 0, 16 * sizeof(int));
  hipMalloc(&partial, blocks * sizeof(int));
  hipMalloc(&total, sizeof(int));
  hipMalloc(&any, sizeof(int));
  hipMemset(any, 0, sizeof(int));
  hipMalloc(&mx, sizeof(float));
  hipMemset(mx, 0, sizeof(float));
  hipMalloc(&a, sizeof h);
  hipMemcpy(a, h, sizeof h, hipMemcpyHostToDevice);

  histogram<<<blocks, 128>>>(bins, in, n);
  int hb[16], want[16] = {0};
  hipMemcpy(hb, bins, sizeof hb, hipMemcpyDeviceToHost);
  int bad = 0;
  for (int i = 0; i < n; ++i) want[h[i] & 15]++;
  for (int k = 0; k < 16; ++k) bad += hb[k] != want[k];
  std::printf("histogram mismatches %d\n", bad);

  fence_sum<<<blocks, 128>>>(partial, total, in, n);
  int got = 0, sum = 0;
  hipMemcpy(&got, total, sizeof got, hipMemcpyDeviceToHost);
  for (int i = 0; i < n; ++i) sum += h[i];
  std::printf("fence_sum %s\n", got == sum ? "right" : "wrong");

  any_large<<<blocks, 128>>>(any, in, n);
  hipMemcpy(&got, any, sizeof got, hipMemcpyDeviceToHost);
  std::printf("any_large %d\n", got);

  float_max<<<blocks, 128>>>(mx, in, n);
  float m = 0;
  hipMemcpy(&m, mx, sizeof m, hipMemcpyDeviceToHost);
  std::printf("float_max %g\n", m);

  own_elements<<<blocks, 128>>>(a, n);
  int r[n];
  hipMemcpy(r, a, sizeof r, hipMemcpyDeviceToHost);
  bad = 0;
  for (int i = 0; i < n; ++i) bad += r[i] != h[i] * 3 + 2;
  std::printf("own_elements %s mismatches %d\n", hipGetErrorName(hipDeviceSynchronize()), bad);
  hipFree(in); hipFree(bins); hipFree(partial); hipFree(total); hipFree(any);
  hipFree(mx); hipFree(a);
  return 0;
}
