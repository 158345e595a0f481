// Recursion: the compiler cannot bound the call stack, so the kernel is marked uses_dynamic_stack and its
// private_segment_fixed_size covers only the kernel's own frame.  AMD's runtime dispatches it with
// max(the device's stack size limit, fixed size) bytes of scratch per work-item (1 KiB by default,
// hipDeviceSetLimit(hipLimitStackSize) to change) — enough for this depth, far more than the fixed size.
#include <hip/hip_runtime.h>

#include <cstdio>
#include <cstdlib>

__device__ __attribute__((noinline)) long long walk(const int* v, int i, int depth) {
  volatile int local[4];                       // a frame that really lives in scratch
  for (int k = 0; k < 4; ++k) local[k] = v[(i + k * depth) & 1023] ^ depth;
  if (depth == 0) return local[0];
  long long below = walk(v, i + 1, depth - 1);
  return below * 3 + local[depth & 3] - local[(depth + 1) & 3];
}

extern "C" __global__ void recurse(const int* v, long long* out, int n, int depth) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = walk(v, i, depth + (i & 3));
}

static long long walk_host(const int* v, int i, int depth) {
  int local[4];
  for (int k = 0; k < 4; ++k) local[k] = v[(i + k * depth) & 1023] ^ depth;
  if (depth == 0) return local[0];
  long long below = walk_host(v, i + 1, depth - 1);
  return below * 3 + local[depth & 3] - local[(depth + 1) & 3];
}

int main(int argc, char** argv) {
  const int n = 300, depth = argc > 1 ? std::atoi(argv[1]) : 8;
  int hv[1024];
  srand(11);
  for (int& x : hv) x = rand() % 2000 - 1000;
  int* v;
  long long* out;
  if (hipMalloc(&v, sizeof hv) != hipSuccess || hipMalloc(&out, n * sizeof(long long)) != hipSuccess) return 2;
  hipMemcpy(v, hv, sizeof hv, hipMemcpyHostToDevice);
  size_t stack = 0;
  hipDeviceGetLimit(&stack, (hipLimit_t)0);          // hipLimitStackSize (not in HIP 5.2's enum)
  std::printf("stack limit %zu\n", stack);
  hipLaunchKernelGGL(recurse, dim3((n + 63) / 64), dim3(64), 0, 0, v, out, n, depth);
  hipError_t e = hipDeviceSynchronize();
  long long h[n];
  hipMemcpy(h, out, sizeof h, hipMemcpyDeviceToHost);
  int bad = 0;
  for (int i = 0; i < n; ++i) bad += h[i] != walk_host(hv, i, depth + (i & 3));
  std::printf("recursion depth %d..%d: %s, %d wrong\n", depth, depth + 3, hipGetErrorName(e), bad);
  return 0;
}
