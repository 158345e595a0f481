// A kernel that writes far outside every allocation (4 GiB past a 1 KiB buffer).  On pyhip's own runtime the
// next synchronising call returns hipErrorIllegalAddress and the device stays usable; on AMD's HIP + ROCr
// (over pyhip's libhsakmt) the fault arrives as a KFD memory event and ROCr reports it and aborts the process,
// as it does on real hardware.
#include <hip/hip_runtime.h>

#include <cstdio>
#include <cstdlib>

__global__ void wild(int* p, long long offset, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i + offset] = i;
}

int main(int argc, char** argv) {
  int* d;
  if (hipMalloc(&d, 1024) != hipSuccess) return 2;
  std::printf("buffer %p\n", (void*)d);
  std::fflush(stdout);
  int warm = argc > 1 ? std::atoi(argv[1]) : 0;   // launches that succeed first (the kernel then runs in native code)
  for (int k = 0; k < warm; ++k) wild<<<1, 64>>>(d, 0, 64);
  if (warm && hipDeviceSynchronize() != hipSuccess) return 3;
  wild<<<1, 64>>>(d, 1ll << 30, 64);
  hipError_t e = hipDeviceSynchronize();
  std::printf("sync: %s\n", hipGetErrorName(e));
  wild<<<1, 64>>>(d, 0, 64);
  std::printf("after: %s\n", hipGetErrorName(hipDeviceSynchronize()));
  return 0;
}
