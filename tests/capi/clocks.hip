// The device clocks: clock64() (s_memtime) counts shader cycles at hipDeviceAttributeClockRate and the
// real-time counter (s_memrealtime: wall_clock64(), declared for device code only by HIP 5.2's headers) a
// constant clock at the later-HIP hipDeviceAttributeWallClockRate (10017), so a kernel that spins for N milliseconds of clock64() cycles takes N ms of host time.
#include <hip/hip_runtime.h>
#include <chrono>
#include <cstdio>

__global__ void spin(long long cycles, long long* out) {
  long long t0 = clock64(), w0 = (long long)__builtin_amdgcn_s_memrealtime();
  while (clock64() - t0 < cycles) {
  }
  out[0] = clock64() - t0;
  out[1] = (long long)__builtin_amdgcn_s_memrealtime() - w0;
}

static int failures = 0;
static void check(const char* what, bool ok, double a, double b) {
  std::printf("%s (%.3f, %.3f): %s\n", what, a, b, ok ? "ok" : "FAIL");
  if (!ok) ++failures;
}

int main() {
  int core_khz = 0, wall_khz = 0;
  hipDeviceGetAttribute(&core_khz, hipDeviceAttributeClockRate, 0);
  hipError_t e = hipDeviceGetAttribute(&wall_khz, (hipDeviceAttribute_t)10017, 0);
  check("clock rates reported", e == hipSuccess && core_khz > 0 && wall_khz > 0, core_khz, wall_khz);
  long long* out;
  hipMalloc(&out, 16);
  const int ms = 60;
  spin<<<1, 1>>>(1, out);                                          // first launch: load and lower the kernel
  hipDeviceSynchronize();
  auto t0 = std::chrono::steady_clock::now();
  spin<<<1, 1>>>((long long)core_khz * ms, out);
  hipDeviceSynchronize();
  double host_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  long long got[2];
  hipMemcpy(got, out, 16, hipMemcpyDeviceToHost);
  double core_ms = (double)got[0] / core_khz, wall_ms = (double)got[1] / wall_khz;
  check("clock64 cycles / clockRate = host time", host_ms >= ms * 0.95 && host_ms < ms * 10, host_ms, (double)ms);
  check("clock64 counted the cycles asked", core_ms >= ms && core_ms < ms * 10, core_ms, (double)ms);
  check("wall_clock64 / wall clock rate agrees", wall_ms > core_ms * 0.8 && wall_ms < core_ms * 1.25, wall_ms, core_ms);
  std::printf(failures ? "FAILURES %d\n" : "PASS\n", failures);
  return failures;
}
