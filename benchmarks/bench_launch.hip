// 100,000 empty-kernel launches through hipLaunchKernel (<<<>>>): submit cost per launch, then the drain.
#include <hip/hip_runtime.h>
#include <chrono>
#include <cstdio>
#include <cstdlib>

__global__ void empty() {}

int main(int argc, char** argv) {
  int n = argc > 1 ? std::atoi(argv[1]) : 100000;
  empty<<<1, 64>>>();
  hipDeviceSynchronize();
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < n; ++i) empty<<<1, 64>>>();
  auto t1 = std::chrono::steady_clock::now();
  hipError_t e = hipDeviceSynchronize();
  auto t2 = std::chrono::steady_clock::now();
  double submit = std::chrono::duration<double, std::micro>(t1 - t0).count() / n;
  double total = std::chrono::duration<double, std::micro>(t2 - t0).count() / n;
  std::printf("%d launches: submit %.2f us/launch, end-to-end %.2f us/launch (%s)\n", n, submit, total,
              hipGetErrorName(e));
  return e == hipSuccess ? 0 : 1;
}
