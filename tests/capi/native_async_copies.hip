// hipMemcpyAsync / hipMemsetAsync queued or done in C (native/hip/fastlaunch.c) on an armed device: ordering
// with the native launches before and after them, on random data, many rounds, on the null stream and on a
// created stream holding the native launch grant; host memory (pageable and pinned) on one side; a range
// past an allocation still reported by Python.
#include <hip/hip_runtime.h>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#define CHECK(x) do { hipError_t e_ = (x); if (e_ != hipSuccess) { \
  std::printf("FAIL %s:%d %s -> %d\n", __FILE__, __LINE__, #x, (int)e_); std::exit(1); } } while (0)
#define WANT(c) do { if (!(c)) { std::printf("FAIL %s:%d %s\n", __FILE__, __LINE__, #c); std::exit(1); } } while (0)

__global__ void mix(unsigned* out, const unsigned* in, unsigned salt, int iters, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  unsigned acc = in[i] ^ salt;
  for (int k = 0; k < iters; ++k) acc = acc * 3u + 1u;
  out[i] = acc;
}

static unsigned host_mix(unsigned v, unsigned salt, int iters) {
  unsigned acc = v ^ salt;
  for (int k = 0; k < iters; ++k) acc = acc * 3u + 1u;
  return acc;
}

static void rounds(hipStream_t st, int count, std::mt19937& rng, unsigned* pinned) {
  const int n = 300;                            // not a multiple of the block
  unsigned *a, *b, *c;
  CHECK(hipMalloc(&a, n * 4));
  CHECK(hipMalloc(&b, n * 4));
  CHECK(hipMalloc(&c, n * 4));
  std::vector<unsigned> hin(n), hout(n), hout2(n);
  CHECK(hipDeviceSynchronize());
  for (int k = 0; k < count; ++k) {
    for (auto& v : hin) v = rng();
    unsigned salt = rng(), salt2 = rng();
    int iters = k % 5 * 200, fillv = (int)(rng() & 0xFF);
    size_t part = 1 + rng() % (n * 4 - 1);      // a fill of a random length
    CHECK(hipMemcpyAsync(a, hin.data(), n * 4, hipMemcpyHostToDevice, st));
    mix<<<(n + 63) / 64, 64, 0, st>>>(b, a, salt, iters, n);       // b = f(a)
    CHECK(hipMemcpyAsync(c, b, n * 4, hipMemcpyDeviceToDevice, st));     // must see the kernel's b
    mix<<<(n + 63) / 64, 64, 0, st>>>(b, c, salt2, 1, n);          // b = g(c): after the copy read b
    CHECK(hipMemsetAsync(a, fillv, part, st));                     // after the first kernel read a
    CHECK(hipMemcpyAsync(hout.data(), b, n * 4, hipMemcpyDeviceToHost, st));
    CHECK(hipMemcpyAsync(pinned, a, n * 4, hipMemcpyDeviceToHost, st));
    CHECK(hipStreamSynchronize(st));
    for (int i = 0; i < n; ++i) WANT(hout[i] == host_mix(host_mix(hin[i], salt, iters), salt2, 1));
    const unsigned char* pa = (const unsigned char*)pinned;
    const unsigned char* pin = (const unsigned char*)hin.data();
    for (size_t i = 0; i < (size_t)n * 4; ++i) WANT(pa[i] == (i < part ? (unsigned char)fillv : pin[i]));
  }
  // a range past an allocation: reported (by Python), nothing crashes, the stream still works
  WANT(hipMemcpyAsync(c, a, n * 4 + 4096 * 1024, hipMemcpyDeviceToDevice, st) != hipSuccess);
  WANT(hipMemsetAsync(c, 0, n * 4 + 4096 * 1024, st) != hipSuccess);
  CHECK(hipStreamSynchronize(st));
  CHECK(hipFree(a));
  CHECK(hipFree(b));
  CHECK(hipFree(c));
}

int main() {
  std::mt19937 rng(2424);
  unsigned* pinned;
  CHECK(hipHostMalloc(&pinned, 300 * 4, 0));
  rounds(0, 300, rng, pinned);
  hipStream_t s;
  CHECK(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));
  rounds(s, 200, rng, pinned);
  CHECK(hipStreamDestroy(s));
  CHECK(hipHostFree(pinned));
  std::printf("PASS\n");
  return 0;
}
