// Planted bug (the one hip-tests' hipMallocPitch_KernelLaunch has): a byte pitch used as an element stride,
// so rows are read and written far past the end of both pitched allocations.  A GPU does not fault there
// (the addresses lie in mapped memory of the 2 MiB block the runtime carved the allocation from), nor does
// pyhip by default; memcheck reports the first read and the first write past the end (each counted).
#include <hip/hip_runtime.h>
#include <cstdio>

__global__ void copy_rows(double* a, const double* b, size_t rows, size_t pitch_bytes) {
  for (size_t i = 0; i < rows * pitch_bytes; i += pitch_bytes) a[i] = b[i];  // BUG-LINE
}

int main() {
  const size_t w = 10 * sizeof(double), h = 10;
  double *a, *b;
  size_t pa, pb;
  hipMallocPitch((void**)&a, &pa, w, h);
  hipMallocPitch((void**)&b, &pb, w, h);
  hipMemset2D(b, pb, 0, w, h);
  copy_rows<<<1, 1>>>(a, b, 8, pa);
  hipError_t e = hipDeviceSynchronize();
  std::printf("sync %s pitch %zu\n", hipGetErrorName(e), pa);
  hipFree(a);
  hipFree(b);
  return 0;
}
