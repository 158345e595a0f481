// Copies, fills and synchronizes of a program that launches almost nothing (tests/capi/test_native_sync.py):
// random bytes copied host -> device -> device -> host and filled, every result compared with what the host
// computed; a kernel every 100 rounds writes a buffer the next copy reads (the copy must see its result).
#include <hip/hip_runtime.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define CHECK(x) do { hipError_t e_ = (x); if (e_ != hipSuccess) { std::printf("FAIL %s: %d\n", #x, (int)e_); return 1; } } while (0)

__global__ void plus(unsigned char* p, int n, int k) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] = (unsigned char)(p[i] + k);
}

int main() {
  const int cap = 5000;
  unsigned char *d, *d2;
  CHECK(hipMalloc(&d, cap));
  CHECK(hipMalloc(&d2, cap));
  std::vector<unsigned char> h(cap), o(cap), want(cap);
  unsigned seed = 12345;
  auto rnd = [&]() { seed = seed * 1103515245u + 12345u; return (seed >> 16) & 0x7FFF; };
  for (int round = 0; round < 400; ++round) {
    int n = 1 + rnd() % (cap - 1);
    for (int i = 0; i < n; ++i) h[i] = (unsigned char)rnd();
    CHECK(hipMemcpy(d, h.data(), n, hipMemcpyHostToDevice));
    std::memcpy(want.data(), h.data(), n);
    if (round % 100 == 99) {                      // a kernel between two copies: the copy after it sees it
      plus<<<(n + 63) / 64, 64>>>(d, n, round & 0x7F);
      for (int i = 0; i < n; ++i) want[i] = (unsigned char)(want[i] + (round & 0x7F));
    }
    CHECK(hipMemcpy(d2, d, n, hipMemcpyDeviceToDevice));
    int f = rnd() % n, v = rnd() & 0xFF;          // fill a tail of d2
    CHECK(hipMemset(d2 + f, v, n - f));
    std::memset(want.data() + f, v, n - f);
    CHECK(round % 2 ? hipDeviceSynchronize() : hipStreamSynchronize(0));
    std::memset(o.data(), 0xEE, cap);
    CHECK(hipMemcpy(o.data(), d2, n, hipMemcpyDeviceToHost));
    if (std::memcmp(o.data(), want.data(), n) != 0 || (n < cap && o[n] != 0xEE)) {   // nothing past n written
      std::printf("FAIL round %d (n %d)\n", round, n);
      return 1;
    }
  }
  // repeat launches (native after the first) each read back at once, with no synchronize: the copy waits
  CHECK(hipMemcpy(d, h.data(), cap, hipMemcpyHostToDevice));
  CHECK(hipDeviceSynchronize());
  std::memcpy(want.data(), h.data(), cap);
  for (int k = 1; k <= 60; ++k) {
    plus<<<(cap + 63) / 64, 64>>>(d, cap, k);
    for (int i = 0; i < cap; ++i) want[i] = (unsigned char)(want[i] + k);
    CHECK(hipMemcpy(o.data(), d, cap, hipMemcpyDeviceToHost));
    if (std::memcmp(o.data(), want.data(), cap) != 0) { std::printf("FAIL launch %d read back\n", k); return 1; }
  }
  // ranges C refuses go to Python, which reports them as before; the device stays usable
  CHECK(hipDeviceSynchronize());
  if (hipMemcpy(o.data(), d, cap + 1, hipMemcpyDeviceToHost) != hipErrorInvalidValue) { std::printf("FAIL overrun\n"); return 1; }
  if (hipMemset(d + 1, 0, cap) != hipErrorInvalidValue) { std::printf("FAIL memset overrun\n"); return 1; }
  if (hipMemcpy(o.data(), h.data(), 8, (hipMemcpyKind)7) != hipErrorInvalidMemcpyDirection) { std::printf("FAIL kind\n"); return 1; }
  CHECK(hipMemcpy(d, h.data(), cap, hipMemcpyHostToDevice));
  CHECK(hipMemcpy(o.data(), d, cap, hipMemcpyDeviceToHost));
  if (std::memcmp(o.data(), h.data(), cap) != 0) { std::printf("FAIL after errors\n"); return 1; }
  std::printf("PASS\n");
  return 0;
}
