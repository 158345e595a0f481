// The shim's native launch path (native/hip/fastlaunch.c), checked from an unmodified hipcc program:
// kernel arguments of every launch arrive intact across more launches than the queue has slots (kernarg
// buffers are reused per slot), alternating configurations, several host threads, the last-error rules,
// a fault on a natively launched kernel, stream switches and events.  Prints PASS or the first failure.
#include <hip/hip_runtime.h>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#define CHECK(x) do { hipError_t e_ = (x); if (e_ != hipSuccess) { \
  std::printf("FAIL %s:%d %s -> %d\n", __FILE__, __LINE__, #x, (int)e_); std::exit(1); } } while (0)
#define EXPECT(c, ...) do { if (!(c)) { std::printf("FAIL %s:%d ", __FILE__, __LINE__); \
  std::printf(__VA_ARGS__); std::printf("\n"); std::exit(1); } } while (0)

__global__ void tag(int* out, int k, int mul, short add) {
  if (threadIdx.x == 0 && blockIdx.x == 0) out[k] = k * mul + add;
}
__global__ void tag2(int* out, int k) {               // grid of 2 blocks: both blocks write
  if (threadIdx.x == 0) out[2 * k + blockIdx.x] = k + 1000 * (int)blockIdx.x;
}
__global__ void poke(int* p) { p[threadIdx.x] = 1; }

int main() {
  const int N = 3000;                                   // more launches than the 1024-slot queue
  int *d, *d2;
  CHECK(hipMalloc(&d, N * sizeof(int)));
  CHECK(hipMalloc(&d2, 2 * N * sizeof(int)));
  CHECK(hipMemset(d, 0xFF, N * sizeof(int)));
  CHECK(hipMemset(d2, 0xFF, 2 * N * sizeof(int)));
  for (int k = 0; k < N; ++k) {                         // two configurations interleaved
    tag<<<1, 64>>>(d, k, 7 + (k % 5), (short)(k % 13));
    tag2<<<2, 32>>>(d2, k);
  }
  CHECK(hipGetLastError());
  CHECK(hipDeviceSynchronize());
  std::vector<int> h(N), h2(2 * N);
  CHECK(hipMemcpy(h.data(), d, N * sizeof(int), hipMemcpyDeviceToHost));
  CHECK(hipMemcpy(h2.data(), d2, 2 * N * sizeof(int), hipMemcpyDeviceToHost));
  for (int k = 0; k < N; ++k) {
    EXPECT(h[k] == k * (7 + k % 5) + k % 13, "tag %d: %d", k, h[k]);
    EXPECT(h2[2 * k] == k && h2[2 * k + 1] == k + 1000, "tag2 %d: %d %d", k, h2[2 * k], h2[2 * k + 1]);
  }

  // several host threads launching the same configuration
  CHECK(hipMemset(d, 0xFF, N * sizeof(int)));
  std::vector<std::thread> ts;
  for (int t = 0; t < 4; ++t)
    ts.emplace_back([=] { for (int k = t; k < N; k += 4) tag<<<1, 64>>>(d, k, 3, (short)t); });
  for (auto& t : ts) t.join();
  CHECK(hipDeviceSynchronize());
  CHECK(hipMemcpy(h.data(), d, N * sizeof(int), hipMemcpyDeviceToHost));
  for (int k = 0; k < N; ++k) EXPECT(h[k] == k * 3 + k % 4, "threads %d: %d", k, h[k]);

  // last error: a bad launch is reported, a later good (native) launch resets it (HIP 5.2 rules)
  tag<<<1, 2048>>>(d, 0, 1, 0);
  EXPECT(hipPeekAtLastError() == hipErrorInvalidConfiguration, "peek %d", (int)hipPeekAtLastError());
  EXPECT(hipGetLastError() == hipErrorInvalidConfiguration, "bad block not reported");
  EXPECT(hipGetLastError() == hipSuccess, "last error not reset");
  tag<<<1, 2048>>>(d, 0, 1, 0);
  tag<<<1, 64>>>(d, 1, 1, 0);
  EXPECT(hipGetLastError() == hipSuccess, "a good launch did not reset the last error");

  // a fault in a natively launched kernel is reported by the next synchronisation, once
  poke<<<1, 64>>>(d);                                   // first launch of this configuration: Python
  poke<<<1, 64>>>((int*)0x10);                          // same configuration: native, faults
  hipError_t e = hipDeviceSynchronize();
  EXPECT(e == hipErrorIllegalAddress, "fault not reported: %d", (int)e);
  CHECK(hipDeviceSynchronize());
  tag<<<1, 64>>>(d, 5, 1, 0);
  CHECK(hipDeviceSynchronize());
  CHECK(hipMemcpy(h.data(), d, sizeof(int) * 6, hipMemcpyDeviceToHost));
  EXPECT(h[5] == 5, "device unusable after the fault: %d", h[5]);

  // another stream gets work: ordering with the null stream's native launches still holds
  hipStream_t s;
  hipEvent_t ev;
  CHECK(hipStreamCreate(&s));
  CHECK(hipEventCreate(&ev));
  CHECK(hipMemset(d, 0, N * sizeof(int)));
  for (int k = 0; k < 200; ++k) tag<<<1, 64>>>(d, k, 2, 0);        // null stream (native)
  CHECK(hipEventRecord(ev, 0));
  CHECK(hipStreamWaitEvent(s, ev, 0));
  for (int k = 200; k < 400; ++k) tag<<<1, 64, 0, s>>>(d, k, 2, 1);  // stream s
  CHECK(hipStreamSynchronize(s));
  CHECK(hipMemcpy(h.data(), d, 400 * sizeof(int), hipMemcpyDeviceToHost));
  for (int k = 0; k < 400; ++k) EXPECT(h[k] == 2 * k + (k >= 200), "streams %d: %d", k, h[k]);
  CHECK(hipStreamDestroy(s));
  CHECK(hipEventDestroy(ev));
  CHECK(hipFree(d));
  CHECK(hipFree(d2));
  std::printf("PASS\n");
  return 0;
}
