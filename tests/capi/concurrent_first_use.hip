// Many host threads calling in at once while nothing is loaded yet: 8 threads make the first launches of
// eight different kernels (each kernel's code object is loaded lazily by whichever thread gets there
// first) and each loads and launches its own module from argv[1] concurrently.  Every result is checked.
#include <hip/hip_runtime.h>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <thread>
#include <vector>

#define CHECK(x) do { hipError_t e_ = (x); if (e_ != hipSuccess) { \
  std::printf("FAIL %s:%d %s -> %d\n", __FILE__, __LINE__, #x, (int)e_); std::exit(1); } } while (0)

template <int K> __global__ void mul(int* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = i * K + K;
}

template <int K> void run(std::vector<char>* image, int t) {
  const int n = 777;
  int* d;
  CHECK(hipMalloc(&d, 2 * n * sizeof(int)));
  mul<K><<<(n + 255) / 256, 256>>>(d, n);                  // first use of this kernel: lazy load
  hipModule_t mod;
  hipFunction_t f;
  CHECK(hipModuleLoadData(&mod, image->data()));
  CHECK(hipModuleGetFunction(&f, mod, "vadd_c"));
  float *a;
  CHECK(hipMalloc(&a, n * sizeof(float)));
  std::vector<float> ha(n);
  for (int i = 0; i < n; ++i) ha[i] = i + t;
  CHECK(hipMemcpy(a, ha.data(), n * sizeof(float), hipMemcpyHostToDevice));
  float* c = (float*)(d + n);
  int nn = n;
  void* args[] = {&a, &a, &c, &nn};
  CHECK(hipModuleLaunchKernel(f, (n + 63) / 64, 1, 1, 64, 1, 1, 0, nullptr, args, nullptr));
  CHECK(hipDeviceSynchronize());
  std::vector<int> h(2 * n);
  CHECK(hipMemcpy(h.data(), d, 2 * n * sizeof(int), hipMemcpyDeviceToHost));
  for (int i = 0; i < n; ++i) {
    if (h[i] != i * K + K) { std::printf("FAIL thread %d mul<%d>[%d] = %d\n", t, K, i, h[i]); std::exit(1); }
    float v = ((float*)(h.data() + n))[i];
    if (v != 2.0f * (i + t)) { std::printf("FAIL thread %d vadd[%d] = %f\n", t, i, v); std::exit(1); }
  }
  CHECK(hipModuleUnload(mod));
  CHECK(hipFree(a));
  CHECK(hipFree(d));
}

int main(int argc, char** argv) {
  std::ifstream in(argv[1], std::ios::binary);
  std::vector<char> image((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (int round = 0; round < 2; ++round) {
    std::vector<std::thread> ts;
    ts.emplace_back(run<1>, &image, 0); ts.emplace_back(run<2>, &image, 1);
    ts.emplace_back(run<3>, &image, 2); ts.emplace_back(run<4>, &image, 3);
    ts.emplace_back(run<5>, &image, 4); ts.emplace_back(run<6>, &image, 5);
    ts.emplace_back(run<7>, &image, 6); ts.emplace_back(run<8>, &image, 7);
    for (auto& t : ts) t.join();
  }
  std::printf("PASS\n");
  return 0;
}
