// The C ABI's allocation table (native/hip/fastlaunch.c, kept by pyhip/capi/fastpath.py one allocation at a time)
// against the allocations this program holds: 3000 random hipMalloc / hipFree steps; after each, a copy of random
// bytes into a random live buffer at a random offset and back (compared), a copy running one byte past that
// buffer's end (an error, not a write past it), and a fill at the start of a freed buffer no live one covers
// (an error).  tests/capi/test_native_sync.py checks the copies were done in C.
#include <hip/hip_runtime.h>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <map>
#include <vector>

#define CHECK(x) do { hipError_t e_ = (x); if (e_ != hipSuccess) { std::printf("FAIL %s: %d\n", #x, (int)e_); return 1; } } while (0)

int main() {
  std::map<unsigned char*, size_t> live;
  std::vector<unsigned char*> freed;
  unsigned seed = 2024;
  auto rnd = [&]() { seed = seed * 1103515245u + 12345u; return (seed >> 8) & 0xFFFFFF; };
  std::vector<unsigned char> h(9000), o(9000);
  auto covered = [&](unsigned char* p) {
    auto it = live.upper_bound(p);
    if (it == live.begin()) return false;
    --it;
    return p < it->first + it->second;
  };
  int errors_seen = 0;
  for (int step = 0; step < 3000; ++step) {
    if (live.empty() || rnd() % 100 < 55) {
      unsigned char* p;
      size_t n = 1 + rnd() % 8000;
      CHECK(hipMalloc(&p, n));
      if (live.count(p)) { std::printf("FAIL address handed out twice\n"); return 1; }
      live[p] = n;
    } else {
      auto it = std::next(live.begin(), rnd() % live.size());
      freed.push_back(it->first);
      CHECK(hipFree(it->first));
      live.erase(it);
    }
    if (live.empty()) continue;
    auto it = std::next(live.begin(), rnd() % live.size());
    size_t off = rnd() % it->second, n = 1 + rnd() % (it->second - off);
    for (size_t i = 0; i < n; ++i) h[i] = (unsigned char)rnd();
    CHECK(hipMemcpy(it->first + off, h.data(), n, hipMemcpyHostToDevice));
    std::memset(o.data(), 0xEE, n);
    CHECK(hipMemcpy(o.data(), it->first + off, n, hipMemcpyDeviceToHost));
    if (std::memcmp(o.data(), h.data(), n)) { std::printf("FAIL bytes at step %d\n", step); return 1; }
    if (hipMemcpy(it->first + off, h.data(), it->second - off + 1, hipMemcpyHostToDevice) == hipSuccess) {
      std::printf("FAIL a copy past the end of a %zu-byte allocation at step %d\n", it->second, step);
      return 1;
    }
    if (!freed.empty()) {
      unsigned char* f = freed[rnd() % freed.size()];
      if (!covered(f)) {
        if (hipMemset(f, 1, 1) == hipSuccess) { std::printf("FAIL a fill of freed memory at step %d\n", step); return 1; }
        ++errors_seen;
      }
    }
  }
  (void)hipGetLastError();
  for (auto& kv : live) CHECK(hipFree(kv.first));
  std::printf("%zu freed, %d fills of freed memory refused\nPASS\n", freed.size(), errors_seen);
  return 0;
}
