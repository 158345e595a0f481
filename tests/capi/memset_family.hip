// hipMemsetD8 / D16 / D32 and their Async forms from C (tests/capi/test_native_async_copies.py writes the cases and
// compares every byte with numpy).  argv[1]: the poison image (CAP bytes) then the cases, one per line:
//   memory (0 hipMalloc, 1 hipHostMalloc)  width (1, 2, 4)  async (0, 1)  stream (0 null, 1 created)
//   offset (elements)  count  value  stamp (0, or k: a kernel writes p[i] = i * 7 + k over the buffer first)
// Each case poisons the whole buffer, fills, synchronizes and appends the whole buffer to argv[2].
#include <hip/hip_runtime.h>
#include <cstdio>
#include <cstring>
#include <vector>

#define CHECK(x) do { hipError_t e_ = (x); if (e_ != hipSuccess) { std::printf("FAIL %s: %d\n", #x, (int)e_); return 1; } } while (0)

__global__ void stamp(unsigned char* p, int n, int k) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] = (unsigned char)(i * 7 + k);
}

static hipError_t fill(void* p, int width, int async, hipStream_t s, unsigned value, size_t count) {
  switch (width * 2 + async) {
  case 2: return hipMemsetD8(p, (unsigned char)value, count);
  case 3: return hipMemsetD8Async(p, (unsigned char)value, count, s);
  case 4: return hipMemsetD16(p, (unsigned short)value, count);
  case 5: return hipMemsetD16Async(p, (unsigned short)value, count, s);
  case 8: return hipMemsetD32(p, (int)value, count);
  case 9: return hipMemsetD32Async(p, (int)value, count, s);
  }
  return hipErrorInvalidValue;
}

int main(int argc, char** argv) {
  if (argc != 3) { std::printf("FAIL usage\n"); return 1; }
  FILE* in = std::fopen(argv[1], "rb");
  FILE* out = std::fopen(argv[2], "wb");
  if (!in || !out) { std::printf("FAIL files\n"); return 1; }
  int cap = 0;
  if (std::fscanf(in, "%d\n", &cap) != 1 || cap <= 0) { std::printf("FAIL header\n"); return 1; }
  std::vector<unsigned char> poison(cap), back(cap);
  if (std::fread(poison.data(), 1, cap, in) != (size_t)cap) { std::printf("FAIL poison\n"); return 1; }
  unsigned char *dev, *pinned;
  CHECK(hipMalloc(&dev, cap));
  CHECK(hipHostMalloc(&pinned, cap, 0));
  hipStream_t created;
  CHECK(hipStreamCreate(&created));
  int memory, width, async, stream, stamped, cases = 0;
  unsigned value;
  size_t offset, count;
  while (std::fscanf(in, "%d %d %d %d %zu %zu %u %d", &memory, &width, &async, &stream, &offset, &count, &value,
                     &stamped) == 8) {
    unsigned char* p = memory ? pinned : dev;
    hipStream_t s = stream ? created : nullptr;
    if (memory) std::memcpy(p, poison.data(), cap);
    else CHECK(hipMemcpy(p, poison.data(), cap, hipMemcpyHostToDevice));
    if (stamped) stamp<<<(cap + 63) / 64, 64, 0, s>>>(p, cap, stamped);   // ordered before an async fill
    CHECK(fill(p + offset * width, width, async, s, value, count));
    CHECK(hipStreamSynchronize(s));
    if (memory) std::memcpy(back.data(), p, cap);
    else CHECK(hipMemcpy(back.data(), p, cap, hipMemcpyDeviceToHost));
    std::fwrite(back.data(), 1, cap, out);
    ++cases;
  }
  // what the runtime rejects: a fill past the allocation's end, a null pointer
  if (hipMemsetD32(dev + 4, 1, cap / 4) != hipErrorInvalidValue) { std::printf("FAIL D32 overrun\n"); return 1; }
  if (hipMemsetD16Async(nullptr, 1, 8, created) != hipErrorInvalidValue) { std::printf("FAIL D16 null\n"); return 1; }
  CHECK(hipStreamDestroy(created));
  CHECK(hipHostFree(pinned));
  CHECK(hipFree(dev));
  std::fclose(out);
  std::printf("%d cases\nPASS\n", cases);
  return 0;
}
