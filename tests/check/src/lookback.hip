// A decoupled look-back prefix sum with the tile id taken from blockIdx.x (no atomic ticket): workgroup i's first
// lane spins on the flag workgroup i-1 publishes, while its second wave waits at a barrier.  On a GPU this ends
// because workgroups are dispatched in order and run concurrently; an emulator that runs the spinning wave and
// never the waves it waits for hangs.  `scan_fenced` orders each tile's data store before its flag store with
// __threadfence(); `scan_unfenced` (the planted bug) does not: the flag may become visible before the data.
#include <hip/hip_runtime.h>
#include <cstdio>
#include <cstdlib>

constexpr int BLOCK = 128;

template <bool FENCE>
__device__ void scan_tile(const unsigned* in, unsigned* out, unsigned* sums, unsigned* flags, int n) {
  __shared__ unsigned s[BLOCK];
  __shared__ unsigned prefix;
  const int t = threadIdx.x, tile = blockIdx.x, i = tile * BLOCK + t;
  s[t] = i < n ? in[i] : 0u;
  __syncthreads();
  for (int k = 1; k < BLOCK; k <<= 1) {                      // inclusive scan of the tile in LDS
    unsigned v = t >= k ? s[t - k] : 0u;
    __syncthreads();
    s[t] += v;
    __syncthreads();
  }
  if (t == 0) {
    unsigned before = 0;
    if (tile > 0) {
      while (__hip_atomic_load(&flags[tile - 1], __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT) == 0) {
      }                                                      // SPIN
      __threadfence();
      before = __hip_atomic_load(&sums[tile - 1], __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
    }
    prefix = before;
    sums[tile] = before + s[BLOCK - 1];                      // DATA-STORE
    if (FENCE) __threadfence();
    __hip_atomic_store(&flags[tile], 1u, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);   // FLAG-STORE
  }
  __syncthreads();
  if (i < n) out[i] = prefix + s[t];
}

__global__ void scan_fenced(const unsigned* in, unsigned* out, unsigned* sums, unsigned* flags, int n) {
  scan_tile<true>(in, out, sums, flags, n);
}

__global__ void scan_unfenced(const unsigned* in, unsigned* out, unsigned* sums, unsigned* flags, int n) {
  scan_tile<false>(in, out, sums, flags, n);
}

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 1000;       // not a multiple of the block
  const bool fenced = argc > 2 ? std::atoi(argv[2]) != 0 : true;
  const int tiles = (n + BLOCK - 1) / BLOCK;
  unsigned* h = new unsigned[n];
  unsigned* r = new unsigned[n];
  srand(7);
  for (int i = 0; i < n; ++i) h[i] = rand() % 1000;
  unsigned *in, *out, *sums, *flags;
  hipMalloc(&in, n * sizeof(unsigned));
  hipMalloc(&out, n * sizeof(unsigned));
  hipMalloc(&sums, tiles * sizeof(unsigned));
  hipMalloc(&flags, tiles * sizeof(unsigned));
  hipMemcpy(in, h, n * sizeof(unsigned), hipMemcpyHostToDevice);
  hipMemset(out, 0xff, n * sizeof(unsigned));                // poisoned
  hipMemset(flags, 0, tiles * sizeof(unsigned));
  if (fenced)
    scan_fenced<<<tiles, BLOCK>>>(in, out, sums, flags, n);
  else
    scan_unfenced<<<tiles, BLOCK>>>(in, out, sums, flags, n);
  hipError_t e = hipDeviceSynchronize();
  hipMemcpy(r, out, n * sizeof(unsigned), hipMemcpyDeviceToHost);
  for (int i = 0; i < n; ++i) std::printf("%u %u\n", h[i], r[i]);   // input, prefix sum
  std::fprintf(stderr, "scan %s\n", hipGetErrorName(e));
  hipFree(in); hipFree(out); hipFree(sums); hipFree(flags);
  delete[] h; delete[] r;
  return 0;
}
