// hipMemcpy into (and out of) neighbouring unaligned slices of one malloc'ed host buffer, as rocRAND's
// continuity tests do.  AMD's HIP stages pageable copies by registering page-rounded ranges with ROCr, so
// neighbouring slices register overlapping ranges (libhsakmt and amdkfd allow that).  The bytes are checked
// against what the kernel wrote (a value per index), and the way back against the host pattern.
#include <hip/hip_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

__global__ void pattern(unsigned char* p, size_t n, unsigned seed) {
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (i < n) p[i] = (unsigned char)((i * 2654435761u + seed) >> 7);
}

static unsigned char expect(size_t i, unsigned seed) { return (unsigned char)((i * 2654435761u + seed) >> 7); }

int main() {
  // slices above ROCclr's GPU_PINNED_MIN_XFER_SIZE (128 KiB) are copied by pinning the host range (its
  // pages rounded out), smaller ones through staging buffers; the buffer and the cuts are not page-aligned
  const size_t n = (3 << 20) / 2 + 1237;
  const size_t cuts[] = {0, 200001, 200003, 400000 + 4095, 600000, 600000 + 1000, 900013, n};
  const int slices = sizeof cuts / sizeof cuts[0] - 1;
  unsigned char* d;
  if (hipMalloc(&d, n) != hipSuccess) return 2;
  unsigned char* h = (unsigned char*)std::malloc(n + 64) + 7;     // an unaligned start
  std::memset(h, 0xEE, n);
  pattern<<<(n + 255) / 256, 256>>>(d, n, 12345);
  for (int s = 0; s < slices; ++s) {
    hipError_t e = hipMemcpy(h + cuts[s], d + cuts[s], cuts[s + 1] - cuts[s], hipMemcpyDeviceToHost);
    if (e != hipSuccess) { std::printf("d2h slice %d: %s\n", s, hipGetErrorName(e)); return 3; }
  }
  size_t bad = 0;
  for (size_t i = 0; i < n; ++i) bad += h[i] != expect(i, 12345);
  std::printf("device to host slices: %zu wrong bytes\n", bad);
  for (size_t i = 0; i < n; ++i) h[i] = expect(i, 999);
  for (int s = slices - 1; s >= 0; --s) {               // the other way, in the other order
    hipError_t e = hipMemcpy(d + cuts[s], h + cuts[s], cuts[s + 1] - cuts[s], hipMemcpyHostToDevice);
    if (e != hipSuccess) { std::printf("h2d slice %d: %s\n", s, hipGetErrorName(e)); return 4; }
  }
  unsigned char* back = (unsigned char*)std::malloc(n);
  if (hipMemcpy(back, d, n, hipMemcpyDeviceToHost) != hipSuccess) return 5;
  size_t bad2 = 0;
  for (size_t i = 0; i < n; ++i) bad2 += back[i] != expect(i, 999);
  std::printf("host to device slices: %zu wrong bytes\n", bad2);
  std::printf(bad || bad2 ? "FAIL\n" : "PASS\n");
  return 0;
}
