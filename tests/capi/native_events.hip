// Events recorded and answered in C (native/hip/fastlaunch.c) on an armed device, checked against what HIP
// promises: an event completes after the work recorded before it (results read right after
// hipEventSynchronize, on random data), hipEventQuery is hipSuccess once it completed, elapsed times are
// monotone along a stream and within the host's wall clock, events on another stream (through Python) mix
// with native ones, a fault between two events is reported once by the next synchronize and events keep
// working, hipEventDestroy right after a record is safe, a device synchronize waits for recorded events.
#include <hip/hip_runtime.h>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>

#define CHECK(x) do { hipError_t e_ = (x); if (e_ != hipSuccess) { \
  std::printf("FAIL %s:%d %s -> %d\n", __FILE__, __LINE__, #x, (int)e_); std::exit(1); } } while (0)
#define WANT(c) do { if (!(c)) { std::printf("FAIL %s:%d %s\n", __FILE__, __LINE__, #c); std::exit(1); } } while (0)

__global__ void mix(int* out, const int* in, int salt, int iters, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;                           // (the grid's last block runs past n: --check memcheck found it)
  int acc = in[i] ^ salt;
  for (int k = 0; k < iters; ++k) acc = acc * 3 + 1;
  out[i] = acc;
}

static int host_mix(int v, int salt, int iters) {
  unsigned acc = (unsigned)(v ^ salt);
  for (int k = 0; k < iters; ++k) acc = acc * 3u + 1u;
  return (int)acc;
}

static double now_ms() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

int main() {
  const int n = 200;                            // not a multiple of the block
  std::mt19937 rng(24);
  int *din, *dout, hin[n], hout[n];
  CHECK(hipMalloc(&din, n * 4));
  CHECK(hipMalloc(&dout, n * 4));
  hipEvent_t ev, ev2, evs[5];
  CHECK(hipEventCreate(&ev));
  CHECK(hipEventCreate(&ev2));
  for (auto& e : evs) CHECK(hipEventCreate(&e));
  CHECK(hipDeviceSynchronize());                // arms the device (no kernel yet: no stream holds the grant)
  // 0. an idle device: a record completes at once, elapsed times follow the wall clock
  for (int k = 0; k < 50; ++k) {
    double t0 = now_ms();
    CHECK(hipEventRecord(evs[0], 0));
    CHECK(hipEventQuery(evs[0]));
    double t1 = now_ms();                       // the start stamp is taken before this (a preemption in the
    while (now_ms() - t1 < 0.2) {}              // record must not shorten the interval the test measures)
    CHECK(hipEventRecord(evs[1], 0));
    CHECK(hipEventSynchronize(evs[1]));
    double wall = now_ms() - t0;
    float ms = -1.0f;
    CHECK(hipEventElapsedTime(&ms, evs[0], evs[1]));
    WANT(ms >= 0.19f && ms <= wall + 0.05);
  }
  // 1. ordering: a kernel, a record, hipEventSynchronize, the result read right away (random data each round)
  for (int k = 0; k < 300; ++k) {
    for (int i = 0; i < n; ++i) hin[i] = (int)rng();
    CHECK(hipMemcpy(din, hin, n * 4, hipMemcpyHostToDevice));
    int salt = (int)rng(), iters = k % 7;
    mix<<<(n + 63) / 64, 64>>>(dout, din, salt, iters, n);
    CHECK(hipEventRecord(ev, 0));
    if (k % 2) CHECK(hipEventSynchronize(ev));
    else while (hipEventQuery(ev) == hipErrorNotReady) {}
    CHECK(hipEventQuery(ev));
    CHECK(hipMemcpy(hout, dout, n * 4, hipMemcpyDeviceToHost));
    for (int i = 0; i < n; ++i) WANT(hout[i] == host_mix(hin[i], salt, iters));
  }
  // 2. elapsed times: monotone along the stream, within the wall clock, plausible for a long kernel
  for (int k = 0; k < 20; ++k) {
    double t0 = now_ms();
    CHECK(hipEventRecord(evs[0], 0));
    for (int j = 1; j < 5; ++j) {
      mix<<<(n + 63) / 64, 64>>>(dout, din, j, j * 2000, n);
      CHECK(hipEventRecord(evs[j], 0));
    }
    CHECK(hipEventSynchronize(evs[4]));
    double wall = now_ms() - t0;
    float prev = 0.0f;
    for (int j = 1; j < 5; ++j) {
      float ms = -1.0f;
      CHECK(hipEventElapsedTime(&ms, evs[0], evs[j]));
      WANT(ms >= prev && ms <= wall + 0.5);
      prev = ms;
    }
    WANT(prev > 0.0f);
    float back = 0.0f;
    CHECK(hipEventElapsedTime(&back, evs[4], evs[0]));
    WANT(back == -prev);
  }
  // 3. a device synchronize waits for a recorded event; a record alone (no kernel) completes too
  mix<<<(n + 63) / 64, 64>>>(dout, din, 1, 50000, n);
  CHECK(hipEventRecord(ev, 0));
  CHECK(hipDeviceSynchronize());
  CHECK(hipEventQuery(ev));
  CHECK(hipEventRecord(ev2, 0));
  CHECK(hipEventSynchronize(ev2));
  // 4. hipEventDisableTiming: elapsed time is hipErrorInvalidHandle; never recorded: hipErrorInvalidHandle
  hipEvent_t nt, fresh;
  CHECK(hipEventCreateWithFlags(&nt, hipEventDisableTiming));
  CHECK(hipEventCreate(&fresh));
  CHECK(hipEventRecord(nt, 0));
  CHECK(hipEventSynchronize(nt));
  float ms = 0.0f;
  WANT(hipEventElapsedTime(&ms, ev, nt) == hipErrorInvalidHandle);
  WANT(hipEventElapsedTime(&ms, ev, fresh) == hipErrorInvalidHandle);
  CHECK(hipEventQuery(fresh));
  // 5. another stream (through Python) and the null stream's native events, mixed
  hipStream_t s;
  CHECK(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));
  for (int k = 0; k < 10; ++k) {
    CHECK(hipDeviceSynchronize());
    double t0 = now_ms();
    CHECK(hipEventRecord(ev, 0));
    mix<<<(n + 63) / 64, 64, 0, s>>>(dout, din, k, 3000, n);
    CHECK(hipEventRecord(ev2, s));
    CHECK(hipEventSynchronize(ev2));
    double wall = now_ms() - t0;
    CHECK(hipEventElapsedTime(&ms, ev, ev2));
    WANT(ms <= wall + 0.5 && -ms <= wall + 0.5);      // the streams are not ordered with each other
    CHECK(hipMemcpy(hout, dout, n * 4, hipMemcpyDeviceToHost));
    for (int i = 0; i < n; ++i) WANT(hout[i] == host_mix(hin[i], k, 3000));
  }
  // 6. a fault between two events: both complete, the next synchronize reports it once, events keep working
  CHECK(hipDeviceSynchronize());
  CHECK(hipEventRecord(ev, 0));
  mix<<<(n + 63) / 64, 64>>>(dout + (1 << 28), din, 0, 0, n);
  CHECK(hipEventRecord(ev2, 0));
  CHECK(hipEventSynchronize(ev2));
  CHECK(hipEventQuery(ev));
  WANT(hipDeviceSynchronize() != hipSuccess);
  CHECK(hipDeviceSynchronize());
  for (int k = 0; k < 20; ++k) {
    mix<<<(n + 63) / 64, 64>>>(dout, din, k, 1, n);
    CHECK(hipEventRecord(ev, 0));
    CHECK(hipEventSynchronize(ev));
    CHECK(hipMemcpy(hout, dout, n * 4, hipMemcpyDeviceToHost));
    for (int i = 0; i < n; ++i) WANT(hout[i] == host_mix(hin[i], k, 1));
  }
  // 7. destroyed right after a record whose packet is still queued; then reused handles stay apart
  for (int k = 0; k < 50; ++k) {
    hipEvent_t tmp;
    CHECK(hipEventCreate(&tmp));
    mix<<<(n + 63) / 64, 64>>>(dout, din, k, 500, n);
    CHECK(hipEventRecord(tmp, 0));
    CHECK(hipEventDestroy(tmp));
  }
  CHECK(hipDeviceSynchronize());
  WANT(hipEventQuery(nullptr) != hipSuccess);
  CHECK(hipStreamDestroy(s));
  for (auto& e : evs) CHECK(hipEventDestroy(e));
  CHECK(hipEventDestroy(ev));
  CHECK(hipEventDestroy(ev2));
  std::printf("PASS\n");
  return 0;
}
