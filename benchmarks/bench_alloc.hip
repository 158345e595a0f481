// Allocation bookkeeping under many live allocations (issue 24): with `live` hipMalloc'd buffers held, per call
// (median of 5 rounds of n calls): hipMalloc + hipFree of 256 bytes, a one-block launch + hipDeviceSynchronize,
// hipMalloc + launch on it + hipDeviceSynchronize + hipFree, and a 256-byte hipMemcpy H2D into the newest buffer.
// Every launch's result is checked.  Run by benchmarks/bench_alloc.py (pyhip exec).
#include <hip/hip_runtime.h>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK(x) do { hipError_t e_ = (x); if (e_ != hipSuccess) { std::printf("FAIL %s: %d\n", #x, (int)e_); std::exit(1); } } while (0)

__global__ void bump(int* d, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) d[i] += 1;
}

static double med(std::vector<double> v) { std::sort(v.begin(), v.end()); return v[v.size() / 2]; }

template <class F> static double per_call(int n, F f) {
  std::vector<double> r;
  for (int round = 0; round < 5; ++round) {
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < n; ++i) f(i);
    auto t1 = std::chrono::steady_clock::now();
    r.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() / n);
  }
  return med(r);
}

int main(int argc, char** argv) {
  int live = argc > 1 ? std::atoi(argv[1]) : 10000, n = argc > 2 ? std::atoi(argv[2]) : 200;
  std::vector<void*> held(live);
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < live; ++i) CHECK(hipMalloc(&held[i], 256 + (i % 7) * 64));
  double setup = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / (live ? live : 1);
  int* d;
  CHECK(hipMalloc(&d, 64 * sizeof(int)));
  CHECK(hipMemset(d, 0, 64 * sizeof(int)));
  int launches = 0;
  bump<<<1, 64>>>(d, 64);
  CHECK(hipDeviceSynchronize());
  ++launches;
  double mf = per_call(n, [&](int) { void* p; CHECK(hipMalloc(&p, 256)); CHECK(hipFree(p)); });
  double ls = per_call(n, [&](int) { bump<<<1, 64>>>(d, 64); CHECK(hipDeviceSynchronize()); ++launches; });
  int wrong = 0;
  double mlf = per_call(n, [&](int i) {
    int* p;
    CHECK(hipMalloc(&p, 64 * sizeof(int)));
    CHECK(hipMemset(p, 0, 64 * sizeof(int)));
    bump<<<1, 64>>>(p, 64);
    CHECK(hipDeviceSynchronize());
    int h[64];
    CHECK(hipMemcpy(h, p, sizeof h, hipMemcpyDeviceToHost));
    for (int k = 0; k < 64; ++k) wrong += h[k] != 1;
    CHECK(hipFree(p));
  });
  unsigned char src[256];
  for (int k = 0; k < 256; ++k) src[k] = (unsigned char)k;
  double h2d = live ? per_call(n, [&](int) { CHECK(hipMemcpy(held[live - 1], src, 256, hipMemcpyHostToDevice)); }) : 0.0;
  int h[64];
  CHECK(hipMemcpy(h, d, sizeof h, hipMemcpyDeviceToHost));
  for (int k = 0; k < 64; ++k) wrong += h[k] != launches;
  for (void* p : held) CHECK(hipFree(p));
  CHECK(hipFree(d));
  std::printf("setup %.2f malloc+free %.2f launch+sync %.2f malloc+launch+free %.2f H2D %.2f us, %d wrong\n", setup, mf,
              ls, mlf, h2d, wrong);
  return wrong != 0;
}
