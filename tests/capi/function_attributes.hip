// Function attributes, occupancy, hipMallocHost, hipMemsetD*Async and hipModuleLoadDataEx through the C ABI.
// argv[1]: a gfx90a code object with extern "C" vadd_c.  Values are checked against what the program itself
// declares (static LDS, launch bounds) and against each other; the test also compares them with pyhip.hip.
#include <hip/hip_runtime.h>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <vector>

#define CHECK(x) do { hipError_t e_ = (x); if (e_ != hipSuccess) { \
  std::printf("FAIL %s:%d %s -> %d\n", __FILE__, __LINE__, #x, (int)e_); std::exit(1); } } while (0)
#define EXPECT(c, ...) do { if (!(c)) { std::printf("FAIL %s:%d ", __FILE__, __LINE__); \
  std::printf(__VA_ARGS__); std::printf("\n"); std::exit(1); } } while (0)

__global__ void __launch_bounds__(256) staged(int* out) {
  __shared__ int buf[256];
  buf[threadIdx.x] = threadIdx.x * 2;
  __syncthreads();
  out[blockIdx.x * 256 + threadIdx.x] = buf[255 - threadIdx.x];
}

int main(int argc, char** argv) {
  hipFuncAttributes a;
  CHECK(hipFuncGetAttributes(&a, reinterpret_cast<const void*>(&staged)));
  EXPECT(a.sharedSizeBytes == 256 * sizeof(int), "sharedSizeBytes %zu", a.sharedSizeBytes);
  EXPECT(a.maxThreadsPerBlock == 256, "maxThreadsPerBlock %d", a.maxThreadsPerBlock);
  EXPECT(a.numRegs > 0 && a.maxDynamicSharedSizeBytes == 65536 - 1024, "regs %d dyn %d", a.numRegs,
         a.maxDynamicSharedSizeBytes);
  int grid = 0, block = 0, blocks = 0;
  CHECK(hipOccupancyMaxPotentialBlockSize(&grid, &block, reinterpret_cast<const void*>(&staged), 0, 0));
  EXPECT(block > 0 && block <= 256 && block % 64 == 0 && grid > 0, "potential %d x %d", grid, block);
  CHECK(hipOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, reinterpret_cast<const void*>(&staged), 256, 0));
  EXPECT(blocks > 0, "active blocks %d", blocks);
  EXPECT(hipFuncGetAttributes(&a, reinterpret_cast<const void*>(&main)) == hipErrorInvalidDeviceFunction,
         "unregistered function accepted");
  std::printf("attrs %d %d %d %d %d\n", a.numRegs, a.maxThreadsPerBlock, grid, block, blocks);

  int* h;
  CHECK(hipMallocHost((void**)&h, 4 * 256 * sizeof(int)));
  staged<<<4, 256>>>(h);                               // pinned host memory is device-visible
  CHECK(hipDeviceSynchronize());
  for (int i = 0; i < 1024; ++i) EXPECT(h[i] == 2 * (255 - i % 256), "staged %d: %d", i, h[i]);
  CHECK(hipHostFree(h));

  int* d;
  hipStream_t s;
  CHECK(hipStreamCreate(&s));
  CHECK(hipMalloc(&d, 1000 * sizeof(int)));
  CHECK(hipMemsetD32Async(d, 0x12345678, 1000, s));
  CHECK(hipMemsetD16Async(d, 0xABCD, 3, s));                                  // first 6 bytes
  CHECK(hipMemsetD8Async((unsigned char*)d + 3999, 0x7F, 1, s));              // last byte
  CHECK(hipStreamSynchronize(s));
  std::vector<unsigned> hv(1000);
  CHECK(hipMemcpy(hv.data(), d, 4000, hipMemcpyDeviceToHost));
  EXPECT(hv[0] == 0xABCDABCDu && hv[1] == 0x1234ABCDu && hv[2] == 0x12345678u, "%x %x %x", hv[0], hv[1], hv[2]);
  EXPECT(hv[999] == 0x7F345678u, "%x", hv[999]);

  std::ifstream f(argv[1], std::ios::binary);
  std::vector<char> image((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  hipModule_t mod;
  hipFunction_t fn;
  CHECK(hipModuleLoadDataEx(&mod, image.data(), 0, nullptr, nullptr));
  CHECK(hipModuleGetFunction(&fn, mod, "vadd_c"));
  int v = 0;
  CHECK(hipFuncGetAttribute(&v, HIP_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, fn));
  EXPECT(v == 1024, "vadd_c max threads %d", v);
  CHECK(hipModuleUnload(mod));
  CHECK(hipFree(d));
  CHECK(hipStreamDestroy(s));
  std::printf("PASS\n");
  return 0;
}
