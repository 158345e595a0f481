// Synchronizing in C (native/hip/fastlaunch.c): hipDeviceSynchronize / hipStreamSynchronize wait for the
// granted stream's native launches without Python once a synchronize through Python left the device idle.
// Checks that such a synchronize really waits (every result read right after it), that a fault in a natively
// launched kernel is still reported by the next synchronize (once), and that work submitted through Python on
// another stream after arming is waited for too.
#include <hip/hip_runtime.h>
#include <cstdio>
#include <cstdlib>

#define CHECK(x) do { hipError_t e_ = (x); if (e_ != hipSuccess) { \
  std::printf("FAIL %s:%d %s -> %d\n", __FILE__, __LINE__, #x, (int)e_); std::exit(1); } } while (0)

__global__ void fill(int* out, int base, int iters) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int acc = base;
  for (int k = 0; k < iters; ++k) acc = acc * 3 + 1;      // iters = 0: acc = base
  out[i] = acc + i;
}

static int expect(const int* h, int base, int n) {
  for (int i = 0; i < n; ++i) if (h[i] != base + i) { std::printf("out[%d] = %d, want %d\n", i, h[i], base + i); return 1; }
  return 0;
}

int main() {
  const int n = 256;
  int *d, *d2, h[n];
  CHECK(hipMalloc(&d, n * 4));
  CHECK(hipMalloc(&d2, n * 4));
  // 1. the null stream: launch + synchronize, result read right after each synchronize
  for (int k = 0; k < 300; ++k) {
    fill<<<n / 64, 64>>>(d, 1000 * k, 0);
    CHECK(hipDeviceSynchronize());
    if (k % 50 == 49) {                       // (hipMemcpy goes through Python: disarms, re-armed after)
      CHECK(hipMemcpy(h, d, n * 4, hipMemcpyDeviceToHost));
      if (expect(h, 1000 * k, n)) return 1;
    }
  }
  // 2. a fault in a natively launched kernel: reported by the next synchronize, once; the device recovers
  fill<<<n / 64, 64>>>(d, 7, 0);
  CHECK(hipDeviceSynchronize());
  fill<<<n / 64, 64>>>(d + (1 << 28), 7, 0);   // 1 GiB past the allocation
  hipError_t e = hipDeviceSynchronize();
  if (e == hipSuccess) { std::printf("FAIL: the fault was not reported\n"); return 1; }
  CHECK(hipDeviceSynchronize());
  fill<<<n / 64, 64>>>(d, 9, 0);
  CHECK(hipDeviceSynchronize());
  CHECK(hipMemcpy(h, d, n * 4, hipMemcpyDeviceToHost));
  if (expect(h, 9, n)) return 1;
  // 3. armed, then a long kernel on another stream (through Python): hipDeviceSynchronize waits for it
  hipStream_t s;
  CHECK(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));
  for (int k = 0; k < 3; ++k) { fill<<<n / 64, 64>>>(d, k, 0); CHECK(hipDeviceSynchronize()); }
  CHECK(hipMemsetAsync(d2, 0xFF, n * 4, s));
  fill<<<n / 64, 64, 0, s>>>(d2, 0, 200000);
  CHECK(hipDeviceSynchronize());
  int want = 0;
  for (int k = 0; k < 200000; ++k) want = want * 3 + 1;
  CHECK(hipMemcpy(h, d2, n * 4, hipMemcpyDeviceToHost));
  if (expect(h, want, n)) return 1;
  // 4. a created stream holding the grant: hipStreamSynchronize in C
  CHECK(hipDeviceSynchronize());
  for (int k = 0; k < 200; ++k) {
    fill<<<n / 64, 64, 0, s>>>(d2, 5 * k, 0);
    CHECK(hipStreamSynchronize(s));
    if (k % 40 == 39) {
      CHECK(hipMemcpy(h, d2, n * 4, hipMemcpyDeviceToHost));
      if (expect(h, 5 * k, n)) return 1;
    }
  }
  CHECK(hipStreamDestroy(s));
  std::printf("PASS\n");
  return 0;
}
