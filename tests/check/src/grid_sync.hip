// racecheck and cooperative groups' grid sync (hipcc 5.2 on gfx90a: __syncthreads, one wave per workgroup at
// ds_gws_barrier, __syncthreads): a ping-pong stencil whose workgroups read their neighbours' elements of the
// previous step is race-free with grid.sync() between the steps, and races without it (the planted bug).
#include <hip/hip_runtime.h>
#include <hip/hip_cooperative_groups.h>
#include <cstdio>
#include <vector>
namespace cg = cooperative_groups;

__device__ void step(float* dst, const float* src, int i, int n) {
  if (i < n) dst[i] = 0.25f * src[(i + n - 1) % n] + 0.5f * src[i] + 0.25f * src[(i + 1) % n];   // STEP
}

__global__ void relax_synced(float* a, float* b, int n, int steps) {
  cg::grid_group grid = cg::this_grid();
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  for (int s = 0; s < steps; ++s) {
    step((s & 1) ? a : b, (s & 1) ? b : a, i, n);
    grid.sync();
  }
}

__global__ void relax_unsynced(float* a, float* b, int n, int steps) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  for (int s = 0; s < steps; ++s) {
    step((s & 1) ? a : b, (s & 1) ? b : a, i, n);
    __syncthreads();                                          // the workgroup only: not enough
  }
}

int main(int argc, char** argv) {
  const int n = argc > 1 ? atoi(argv[1]) : 1000, steps = 4, block = 128, grid = (n + block - 1) / block;
  std::vector<float> h(n), ref(n), tmp(n), out(n);
  for (int i = 0; i < n; ++i) h[i] = float((i * 7919) % 101) - 50.0f;
  ref = h;
  for (int s = 0; s < steps; ++s) {
    for (int i = 0; i < n; ++i) tmp[i] = 0.25f * ref[(i + n - 1) % n] + 0.5f * ref[i] + 0.25f * ref[(i + 1) % n];
    ref = tmp;
  }
  float *a, *b;
  hipMalloc(&a, n * 4);
  hipMalloc(&b, n * 4);
  int nn = n, ss = steps;
  void* args[] = {&a, &b, &nn, &ss};
  const void* kernels[] = {(const void*)relax_synced, (const void*)relax_unsynced};
  const char* names[] = {"relax_synced", "relax_unsynced"};
  for (int k = 0; k < 2; ++k) {
    hipMemcpy(a, h.data(), n * 4, hipMemcpyHostToDevice);
    hipMemset(b, 0, n * 4);
    hipError_t e = hipLaunchCooperativeKernel(kernels[k], dim3(grid), dim3(block), args, 0, 0);
    if (e == hipSuccess) e = hipDeviceSynchronize();
    hipMemcpy(out.data(), a, n * 4, hipMemcpyDeviceToHost);
    int bad = 0;
    for (int i = 0; i < n; ++i) bad += out[i] != ref[i];
    std::printf("%s %s%s\n", names[k], hipGetErrorName(e), k == 0 ? (bad ? " wrong" : " right") : "");
  }
  hipFree(a);
  hipFree(b);
  return 0;
}
