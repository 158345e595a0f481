// A cooperative kernel whose every work-group needs the whole LDS (64 KiB dynamic), so one fits per CU:
// a grid of exactly (occupancy x CUs) groups must be accepted and its grid.sync() complete; one more group
// is too large.  Each group writes its slice, syncs the grid, then reads a slice another group wrote.
#include <hip/hip_runtime.h>
#include <hip/hip_cooperative_groups.h>

extern "C" __global__ void exchange(const int* in, int* tmp, int* out, int n) {
  extern __shared__ int lds[];
  cooperative_groups::grid_group g = cooperative_groups::this_grid();
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  lds[threadIdx.x] = i < n ? in[i] * 3 : 0;
  __syncthreads();
  if (i < n) tmp[i] = lds[threadIdx.x];
  g.sync();
  if (i < n) out[i] = tmp[(i + n / 2 + 1) % n];
}
