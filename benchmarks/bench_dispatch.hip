// Tiny 16-argument kernels (ints, doubles, longs, pointers; one add per lane, 1 block of 64) back to back and
// launch+synchronize, per kernel: the median of 5 rounds.  Run by benchmarks/bench_dispatch.py.
#include <hip/hip_runtime.h>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

__global__ void tiny16(int a0, double a1, long a2, float* p3, int a4, double a5, long a6, float* p7,
                       int a8, double a9, long a10, float* p11, int a12, double a13, long a14, float* out) {
  int i = threadIdx.x;
  out[i] = p3[i] + (float)(a0 + a4 + a8 + a12) + (float)(a1 + a5 + a9 + a13) + (float)(a2 + a6 + a10 + a14);
}

static double med(std::vector<double> v) { std::sort(v.begin(), v.end()); return v[v.size() / 2]; }

int main(int argc, char** argv) {
  int n = argc > 1 ? std::atoi(argv[1]) : 2000;
  float *x, *y;
  hipMalloc(&x, 64 * 4); hipMalloc(&y, 64 * 4);
  float hx[64]; for (int i = 0; i < 64; ++i) hx[i] = i;
  hipMemcpy(x, hx, sizeof hx, hipMemcpyHostToDevice);
  auto launch = [&](int k) {
    tiny16<<<1, 64>>>(k, 0.5, 2, x, 1, 0.25, 3, x, 1, 0.25, 4, x, 1, 0.0, 5, y);
  };
  launch(0); hipDeviceSynchronize();
  std::vector<double> b2b, ls;
  for (int r = 0; r < 5; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < n; ++i) launch(i);
    hipDeviceSynchronize();
    auto t1 = std::chrono::steady_clock::now();
    b2b.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() / n);
    auto t2 = std::chrono::steady_clock::now();
    for (int i = 0; i < n / 4; ++i) { launch(i); hipDeviceSynchronize(); }
    auto t3 = std::chrono::steady_clock::now();
    ls.push_back(std::chrono::duration<double, std::micro>(t3 - t2).count() / (n / 4));
  }
  float hy[64];
  hipMemcpy(hy, y, sizeof hy, hipMemcpyDeviceToHost);
  int k = n / 4 - 1, bad = 0;
  for (int i = 0; i < 64; ++i) {
    float want = hx[i] + (float)(k + 3) + (float)(0.5 + 0.25 + 0.25 + 0.0) + (float)(2 + 3 + 4 + 5);
    if (hy[i] != want) ++bad;
  }
  std::printf("back-to-back %.2f us/kernel, launch+sync %.2f us/kernel, %d wrong\n", med(b2b), med(ls), bad);
  return bad != 0;
}
