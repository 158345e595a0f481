// Concurrency stress (issue 24): 8 host threads x N small launches; threads 0-3 on private streams, 4-7 sharing
// two non-blocking streams.  Each launch is one step of its thread's chain: every lane below `width` of the
// thread's state advances (state = state * mul + seq + lane), the step's lane-0 value is stored at out[seq], and
// the thread's progress word becomes i + 1.  Every 100 launches a thread records an event on its stream, makes
// the next thread's stream wait for it, and launches there a snapshot of its own progress (which the event
// makes at least i + 1).  A lost, duplicated or reordered launch changes every later value of its chain.
//
// The kernels are also the code object of the Python face (tests/runtime/test_stress.py builds it with
// `hipcc --genco`); the host program is the C face (tests/capi/test_stress_capi.py, under `pyhip exec`).
// Usage: stress N INPUT OUTPUT.  INPUT: the initial states (8 x 64 u32) and multipliers (8 u32); OUTPUT: out
// (8N u32), the final states (8 x 64 u32), the snapshots (8 x N/100 i32).  tests/stresskit.py writes the
// input and checks the output against numpy.
#include <hip/hip_runtime.h>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#define CHECK(x) do { hipError_t e_ = (x); if (e_ != hipSuccess) { \
  std::printf("FAIL %s:%d %s -> %d\n", __FILE__, __LINE__, #x, (int)e_); std::exit(1); } } while (0)

extern "C" __global__ void stress_step(unsigned* state, unsigned* out, int* progress, int seq, unsigned mul, int i,
                                       int width) {
  unsigned lane = threadIdx.x;
  if (lane >= (unsigned)width) return;
  unsigned v = state[lane] * mul + (unsigned)seq + lane;
  state[lane] = v;
  if (lane == 0) {
    out[seq] = v;
    __atomic_store_n(progress, i + 1, __ATOMIC_RELAXED);
  }
}

extern "C" __global__ void stress_snapshot(const int* progress, int* snap) {
  if (threadIdx.x == 0) *snap = __atomic_load_n(progress, __ATOMIC_RELAXED);
}

int main(int argc, char** argv) {
  const int T = 8, L = 64, WIDTH = 50;
  if (argc < 4) { std::printf("usage: stress N INPUT OUTPUT\n"); return 2; }
  const int N = std::atoi(argv[1]), S = N / 100;
  std::vector<unsigned> in(T * L + T);
  FILE* f = std::fopen(argv[2], "rb");
  if (!f || std::fread(in.data(), 4, in.size(), f) != in.size()) { std::printf("FAIL cannot read %s\n", argv[2]); return 2; }
  std::fclose(f);
  hipStream_t streams[6];
  for (int i = 0; i < 4; ++i) CHECK(hipStreamCreate(&streams[i]));
  for (int i = 4; i < 6; ++i) CHECK(hipStreamCreateWithFlags(&streams[i], hipStreamNonBlocking));
  int stream_of[T];
  for (int t = 0; t < T; ++t) stream_of[t] = t < 4 ? t : 4 + (t - 4) / 2;
  unsigned *state, *out;
  int *progress, *snap;
  CHECK(hipMalloc(&state, T * L * 4));
  CHECK(hipMalloc(&out, (size_t)T * N * 4));
  CHECK(hipMalloc(&progress, T * 4));
  CHECK(hipMalloc(&snap, T * (S ? S : 1) * 4));
  CHECK(hipMemcpy(state, in.data(), T * L * 4, hipMemcpyHostToDevice));
  CHECK(hipMemset(out, 0xFF, (size_t)T * N * 4));
  CHECK(hipMemset(progress, 0, T * 4));
  CHECK(hipMemset(snap, 0xFF, T * (S ? S : 1) * 4));
  CHECK(hipDeviceSynchronize());
  auto t0 = std::chrono::steady_clock::now();
  std::vector<std::thread> ts;
  for (int t = 0; t < T; ++t)
    ts.emplace_back([&, t] {
      hipStream_t s = streams[stream_of[t]], other = streams[stream_of[(t + 1) % T]];
      for (int i = 0; i < N; ++i) {
        stress_step<<<1, L, 0, s>>>(state + t * L, out, progress + t, t * N + i, in[T * L + t], i, WIDTH);
        if (i % 100 == 99) {
          hipEvent_t ev;
          CHECK(hipEventCreate(&ev));
          CHECK(hipEventRecord(ev, s));
          CHECK(hipStreamWaitEvent(other, ev, 0));
          CHECK(hipEventDestroy(ev));
          stress_snapshot<<<1, L, 0, other>>>(progress + t, snap + t * S + i / 100);
        }
      }
      CHECK(hipGetLastError());
    });
  for (auto& t : ts) t.join();
  auto t1 = std::chrono::steady_clock::now();
  CHECK(hipDeviceSynchronize());
  auto t2 = std::chrono::steady_clock::now();
  std::vector<unsigned> res((size_t)T * N + T * L + T * S);
  CHECK(hipMemcpy(res.data(), out, (size_t)T * N * 4, hipMemcpyDeviceToHost));
  CHECK(hipMemcpy(res.data() + (size_t)T * N, state, T * L * 4, hipMemcpyDeviceToHost));
  if (S) CHECK(hipMemcpy(res.data() + (size_t)T * N + T * L, snap, T * S * 4, hipMemcpyDeviceToHost));
  f = std::fopen(argv[3], "wb");
  if (!f || std::fwrite(res.data(), 4, res.size(), f) != res.size()) { std::printf("FAIL cannot write %s\n", argv[3]); return 2; }
  std::fclose(f);
  for (int s = 0; s < 6; ++s) CHECK(hipStreamDestroy(streams[s]));
  CHECK(hipFree(state)); CHECK(hipFree(out)); CHECK(hipFree(progress)); CHECK(hipFree(snap));
  double sub = std::chrono::duration<double>(t1 - t0).count(), tot = std::chrono::duration<double>(t2 - t0).count();
  std::printf("%d launches from %d threads: submitted in %.2f s, done in %.2f s\n", T * N + T * S, T, sub, tot);
  return 0;
}
