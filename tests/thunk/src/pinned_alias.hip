// Registered (pinned) host memory used by a kernel through the device pointer HIP returns for it, then by
// copies: with SVM the device pointer is the host address; without it (PYHIP_THUNK_QUIRKS=no-svm, libhsakmt's
// userptr path) it is another address, and only that one reaches the pages from the GPU.
#include <hip/hip_runtime.h>

#include <cstdio>
#include <cstdlib>

__global__ void square_plus(int* p, int n, int k) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] = p[i] * p[i] + k;
}

int main() {
  const int n = 3000;
  int* h = (int*)std::malloc(n * sizeof(int));
  for (int i = 0; i < n; ++i) h[i] = (i * 37) % 1001 - 500;
  if (hipHostRegister(h, n * sizeof(int), hipHostRegisterDefault) != hipSuccess) return 2;
  int* d = nullptr;
  if (hipHostGetDevicePointer((void**)&d, h, 0) != hipSuccess) return 3;
  std::printf("device pointer %s the host address\n", (void*)d == (void*)h ? "is" : "is not");
  hipLaunchKernelGGL(square_plus, dim3((n + 255) / 256), dim3(256), 0, 0, d, n, 7);
  hipError_t e = hipDeviceSynchronize();
  int* dev;
  hipMalloc(&dev, n * sizeof(int));
  hipMemcpy(dev, h, n * sizeof(int), hipMemcpyHostToDevice);        // pinned -> device
  hipLaunchKernelGGL(square_plus, dim3((n + 255) / 256), dim3(256), 0, 0, dev, n, 1);
  hipMemcpy(h, dev, n * sizeof(int), hipMemcpyDeviceToHost);        // device -> pinned
  int bad = 0;
  for (int i = 0; i < n; ++i) {
    long long x = (i * 37) % 1001 - 500, y = x * x + 7;
    bad += h[i] != (int)(y * y + 1);
  }
  std::printf("kernel through the device pointer: %s; %d wrong\n", hipGetErrorName(e), bad);
  hipHostUnregister(h);
  return 0;
}
