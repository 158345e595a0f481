// initcheck on every kind of access the engines perform: a kernel reads a hipMalloc'd struct that nothing wrote
// through scalar loads (the address is uniform), adds atomically into counters nothing wrote, and copies
// 16-byte elements of which the host wrote only some bytes (hipMemset of every other 8 bytes).  Both engines
// must report the same lanes; what the program computes is unchanged.
#include <hip/hip_runtime.h>
#include <cstdio>

struct Params { int scale, bias; };

__global__ void scalar_read(int* out, const Params* p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = i * p->scale + p->bias;               // INIT-SCALAR
}

__global__ void count(unsigned* counters, const int* keys, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(&counters[keys[i] & 7], 1u);         // INIT-ATOMIC
}

__global__ void copy16(int4* out, const int4* in, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i];                                // INIT-WIDE
}

int main() {
  const int n = 300;
  int *out, *keys;
  Params* p;
  unsigned* counters;
  int4 *a, *b;
  hipMalloc(&out, n * sizeof(int));
  hipMalloc(&keys, n * sizeof(int));
  hipMalloc(&p, sizeof(Params));
  hipMalloc(&counters, 8 * sizeof(unsigned));
  hipMalloc(&a, n * sizeof(int4));
  hipMalloc(&b, n * sizeof(int4));
  hipMemset(keys, 0, n * sizeof(int));
  for (int k = 0; k < n; k += 2) hipMemset(reinterpret_cast<char*>(a) + 16 * k, 1, 8);   // half of every other one
  for (int k = 1; k < n; k += 2) hipMemset(reinterpret_cast<char*>(a) + 16 * k, 2, 16);  // the others whole
  scalar_read<<<(n + 127) / 128, 128>>>(out, p, n);
  count<<<(n + 127) / 128, 128>>>(counters, keys, n);
  copy16<<<(n + 127) / 128, 128>>>(b, a, n);
  int4 h[n];
  hipMemcpy(h, b, sizeof h, hipMemcpyDeviceToHost);
  std::printf("b[1].x %d %s\n", h[1].x, hipGetErrorName(hipDeviceSynchronize()));
  hipFree(out); hipFree(keys); hipFree(p); hipFree(counters); hipFree(a); hipFree(b);
  return 0;
}
