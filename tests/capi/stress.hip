// Concurrency stress through the C ABI: 8 host threads x 1,000 <<<>>> launches; threads 0-3 on private
// streams, 4-7 sharing two non-blocking streams; every 100 launches a thread records an event on its stream
// and makes the next thread's stream wait for it.  Each launch appends its sequence number to its stream's
// log and counts it in a global table.  Checks: 0 lost, 0 duplicated, per-producer order in every stream.
#include <hip/hip_runtime.h>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#define CHECK(x) do { hipError_t e_ = (x); if (e_ != hipSuccess) { \
  std::printf("FAIL %s:%d %s -> %d\n", __FILE__, __LINE__, #x, (int)e_); std::exit(1); } } while (0)

__global__ void record(int* log, int* counter, int* seen, int seq) {
  if (threadIdx.x == 0 && blockIdx.x == 0) {
    int pos = atomicAdd(counter, 1);
    log[pos] = seq;
    atomicAdd(&seen[seq], 1);
  }
}

int main(int argc, char** argv) {
  const int T = 8, N = argc > 1 ? std::atoi(argv[1]) : 1000;
  hipStream_t streams[6];
  for (int i = 0; i < 4; ++i) CHECK(hipStreamCreate(&streams[i]));
  for (int i = 4; i < 6; ++i) CHECK(hipStreamCreateWithFlags(&streams[i], hipStreamNonBlocking));
  int stream_of[8];
  for (int t = 0; t < T; ++t) stream_of[t] = t < 4 ? t : 4 + (t - 4) / 2;
  int *logs[6], *counters[6], *seen;
  for (int s = 0; s < 6; ++s) {
    CHECK(hipMalloc(&logs[s], T * N * sizeof(int)));
    CHECK(hipMalloc(&counters[s], sizeof(int)));
    CHECK(hipMemset(logs[s], 0xFF, T * N * sizeof(int)));
    CHECK(hipMemset(counters[s], 0, sizeof(int)));
  }
  CHECK(hipMalloc(&seen, T * N * sizeof(int)));
  CHECK(hipMemset(seen, 0, T * N * sizeof(int)));
  CHECK(hipDeviceSynchronize());
  auto t0 = std::chrono::steady_clock::now();
  std::vector<std::thread> ts;
  for (int t = 0; t < T; ++t)
    ts.emplace_back([&, t] {
      int s = stream_of[t], other = stream_of[(t + 1) % T];
      for (int i = 0; i < N; ++i) {
        record<<<1, 64, 0, streams[s]>>>(logs[s], counters[s], seen, t * N + i);
        if (i % 100 == 99) {
          hipEvent_t ev;
          CHECK(hipEventCreate(&ev));
          CHECK(hipEventRecord(ev, streams[s]));
          CHECK(hipStreamWaitEvent(streams[other], ev, 0));
          CHECK(hipEventDestroy(ev));
        }
      }
      CHECK(hipGetLastError());
    });
  for (auto& t : ts) t.join();
  auto t1 = std::chrono::steady_clock::now();
  CHECK(hipDeviceSynchronize());
  auto t2 = std::chrono::steady_clock::now();
  std::vector<int> h(T * N);
  CHECK(hipMemcpy(h.data(), seen, T * N * sizeof(int), hipMemcpyDeviceToHost));
  for (int k = 0; k < T * N; ++k)
    if (h[k] != 1) { std::printf("FAIL seq %d ran %d times\n", k, h[k]); return 1; }
  for (int s = 0; s < 6; ++s) {
    int n;
    CHECK(hipMemcpy(&n, counters[s], sizeof(int), hipMemcpyDeviceToHost));
    CHECK(hipMemcpy(h.data(), logs[s], T * N * sizeof(int), hipMemcpyDeviceToHost));
    int producers = 0;
    for (int t = 0; t < T; ++t) {
      if (stream_of[t] != s) continue;
      ++producers;
      int next = t * N;
      for (int k = 0; k < n; ++k)
        if (h[k] >= t * N && h[k] < (t + 1) * N) {
          if (h[k] != next) { std::printf("FAIL stream %d: %d after %d\n", s, h[k], next - 1); return 1; }
          ++next;
        }
      if (next != (t + 1) * N) { std::printf("FAIL stream %d: thread %d incomplete\n", s, t); return 1; }
    }
    if (n != producers * N) { std::printf("FAIL stream %d ran %d launches\n", s, n); return 1; }
  }
  for (int s = 0; s < 6; ++s) { CHECK(hipStreamDestroy(streams[s])); CHECK(hipFree(logs[s])); CHECK(hipFree(counters[s])); }
  CHECK(hipFree(seen));
  double sub = std::chrono::duration<double>(t1 - t0).count(), tot = std::chrono::duration<double>(t2 - t0).count();
  std::printf("%d launches from %d threads: submitted in %.2f s, done in %.2f s\nPASS\n", T * N, T, sub, tot);
  return 0;
}
