// A kernel launched many times (repeats take the C ABI's native launch path: packets published straight into
// the queue, completed through the stream's counter signal), then once with a pointer 4 GiB past its buffer
// while launches are still in flight.  hipDeviceSynchronize must return the fault, never hang; on pyhip's
// runtime the device stays usable: the same kernel then fills the buffer again and the bytes are checked.
#include <hip/hip_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

__global__ void stamp(int* p, long long offset, int n, int value) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i + offset] = value * 1000 + i;
}

int main(int argc, char** argv) {
  const int n = 1000, block = 64, grid = (n + block - 1) / block;     // n not a multiple of the block
  int repeats = argc > 1 ? std::atoi(argv[1]) : 200;
  int* d;
  if (hipMalloc(&d, n * sizeof(int)) != hipSuccess) return 2;
  for (int k = 0; k < repeats; ++k) stamp<<<grid, block>>>(d, 0, n, k);
  if (hipDeviceSynchronize() != hipSuccess) return 3;
  for (int k = 0; k < repeats; ++k) stamp<<<grid, block>>>(d, 0, n, k);     // still in flight at the fault
  stamp<<<grid, block>>>(d, 1ll << 30, n, 7);
  std::printf("sync: %s\n", hipGetErrorName(hipDeviceSynchronize()));
  std::fflush(stdout);
  for (int k = 0; k < repeats; ++k) stamp<<<grid, block>>>(d, 0, n, 5 + k);
  std::printf("launch: %s\n", hipGetErrorName(hipGetLastError()));
  hipError_t e = hipDeviceSynchronize();
  std::printf("after: %s\n", hipGetErrorName(e));
  std::vector<int> h(n);
  if (hipMemcpy(h.data(), d, n * sizeof(int), hipMemcpyDeviceToHost) != hipSuccess) return 4;
  int bad = 0;
  for (int i = 0; i < n; ++i) bad += h[i] != (5 + repeats - 1) * 1000 + i;
  std::printf("values %s\n", bad ? "WRONG" : "ok");
  return 0;
}
