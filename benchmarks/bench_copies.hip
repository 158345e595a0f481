// Small copies, fills and synchronizes from C, per call: the median of 5 rounds of n calls each.  Every copy is
// checked (the bytes read back equal what was written; a fill's bytes equal its value).  Run by
// benchmarks/bench_copies.py (pyhip exec, pyhip exec --runtime amd).
#include <hip/hip_runtime.h>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

__global__ void bump(unsigned char* d, int n) {
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
  int n = argc > 1 ? std::atoi(argv[1]) : 2000;
  size_t bytes = argc > 2 ? (size_t)std::atol(argv[2]) : 256;
  unsigned char *d, *d2;
  hipMalloc(&d, bytes); hipMalloc(&d2, bytes);
  std::vector<unsigned char> h(bytes), o(bytes);
  for (size_t i = 0; i < bytes; ++i) h[i] = (unsigned char)(i * 7 + 3);
  hipMemcpy(d, h.data(), bytes, hipMemcpyHostToDevice);
  hipDeviceSynchronize();
  int bad = 0;
  double h2d = per_call(n, [&](int i) { h[0] = (unsigned char)i; hipMemcpy(d, h.data(), bytes, hipMemcpyHostToDevice); });
  double d2h = per_call(n, [&](int) { hipMemcpy(o.data(), d, bytes, hipMemcpyDeviceToHost); });
  bad += std::memcmp(o.data(), h.data(), bytes) != 0;
  double d2d = per_call(n, [&](int) { hipMemcpy(d2, d, bytes, hipMemcpyDeviceToDevice); });
  hipMemcpy(o.data(), d2, bytes, hipMemcpyDeviceToHost);
  bad += std::memcmp(o.data(), h.data(), bytes) != 0;
  double fill = per_call(n, [&](int i) { hipMemset(d2, i & 0xFF, bytes); });
  hipMemcpy(o.data(), d2, bytes, hipMemcpyDeviceToHost);
  for (size_t i = 0; i < bytes; ++i) bad += o[i] != (unsigned char)((n - 1) & 0xFF);
  double dsync = per_call(n, [&](int) { hipDeviceSynchronize(); });
  double ssync = per_call(n, [&](int) { hipStreamSynchronize(0); });
  hipEvent_t ev;
  hipEventCreate(&ev);
  double esync = per_call(n / 4, [&](int) { hipEventRecord(ev, 0); hipEventSynchronize(ev); });
  double equery = per_call(n / 4, [&](int) { hipEventRecord(ev, 0); while (hipEventQuery(ev) == hipErrorNotReady) {} });
  hipEvent_t ev2;
  hipEventCreate(&ev2);
  float total = 0.0f;
  double elapsed = per_call(n / 4, [&](int) {
    float ms = 0.0f;
    hipEventRecord(ev, 0); hipEventRecord(ev2, 0); hipEventSynchronize(ev2);
    bad += hipEventElapsedTime(&ms, ev, ev2) != hipSuccess || ms < 0.0f;
    total += ms;
  });
  // asynchronous copies and fills on the null stream, each followed by a stream synchronize
  double ah2d = per_call(n, [&](int i) { h[0] = (unsigned char)i; hipMemcpyAsync(d, h.data(), bytes, hipMemcpyHostToDevice, 0);
                                          hipStreamSynchronize(0); });
  double ad2h = per_call(n, [&](int) { hipMemcpyAsync(o.data(), d, bytes, hipMemcpyDeviceToHost, 0); hipStreamSynchronize(0); });
  bad += std::memcmp(o.data(), h.data(), bytes) != 0;
  double afill = per_call(n, [&](int i) { hipMemsetAsync(d2, i & 0xFF, bytes, 0); hipStreamSynchronize(0); });
  hipMemcpy(o.data(), d2, bytes, hipMemcpyDeviceToHost);
  for (size_t i = 0; i < bytes; ++i) bad += o[i] != (unsigned char)((n - 1) & 0xFF);
  // with a kernel before: the launch stream holds the native launch grant (events and copies in stream order)
  int blocks = (int)((bytes + 63) / 64);
  for (int i = 0; i < 400; ++i) { bump<<<blocks, 64>>>(d2, (int)bytes); hipDeviceSynchronize(); }   // warm-up:
  // a kernel's first launches run while the engine compiles it (milliseconds each)
  double kev = per_call(n / 4, [&](int) { bump<<<blocks, 64>>>(d2, (int)bytes); hipEventRecord(ev, 0); hipEventSynchronize(ev); });
  hipMemcpy(o.data(), d2, bytes, hipMemcpyDeviceToHost);
  double kd2h = per_call(n / 4, [&](int) {
    bump<<<blocks, 64>>>(d2, (int)bytes);
    hipMemcpyAsync(o.data(), d2, bytes, hipMemcpyDeviceToHost, 0);
    hipStreamSynchronize(0);
  });
  double kd2d = per_call(n / 4, [&](int) {
    bump<<<blocks, 64>>>(d2, (int)bytes);
    hipMemcpyAsync(d, d2, bytes, hipMemcpyDeviceToDevice, 0);
    hipStreamSynchronize(0);
  });
  {                                               // the D2D loop: (n / 4) * 5 bumps past what the last D2H read
    std::vector<unsigned char> before(o), now(bytes);
    hipMemcpy(now.data(), d, bytes, hipMemcpyDeviceToHost);
    for (size_t i = 0; i < bytes; ++i) bad += now[i] != (unsigned char)(before[i] + (n / 4) * 5);
  }
  std::printf("H2D %.2f D2H %.2f D2D %.2f memset %.2f device-sync %.2f stream-sync %.2f event-record+sync %.2f "
              "event-record+query %.2f event-elapsed %.2f async-H2D+sync %.2f async-D2H+sync %.2f "
              "async-memset+sync %.2f launch+event-sync %.2f launch+async-D2H+sync %.2f launch+async-D2D+sync %.2f "
              "us, %d wrong\n", h2d, d2h, d2d, fill, dsync, ssync, esync, equery, elapsed, ah2d, ad2h, afill,
              kev, kd2h, kd2d, bad);
  return bad != 0;
}
