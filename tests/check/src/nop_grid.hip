// An empty kernel (a lone s_endpgm) at the largest grid HIP allows, as hip-tests' NOPKernel launches it: under
// --check all it must retire as fast as without checks (racecheck used to run its 2^31 - 1 workgroups one by one).
#include <hip/hip_runtime.h>
#include <cstdio>

__global__ void nop() {}

int main() {
  int x = 0;
  hipDeviceGetAttribute(&x, hipDeviceAttributeMaxGridDimX, 0);
  nop<<<dim3((unsigned)x), dim3(1)>>>();
  std::printf("%d %s\n", x, hipGetErrorName(hipDeviceSynchronize()));
  return 0;
}
