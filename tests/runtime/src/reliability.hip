// Kernels for the runtime-level reliability tests (tests/runtime/test_fault_matrix.py, test_stress.py),
// compiled by the tests with clang-19 for gfx90a.
#include "common.h"

// private array indexed by the caller: idx outside [0, 32) runs off the private segment
extern "C" __global__ void scratch_index(const int* idx, int* out, int n) {
  volatile int arr[32];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  for (int k = 0; k < 32; ++k) arr[k] = k * 3 + i;
  if (i < n) out[i] = arr[idx[i]];
}

// one launch = one packet: records its sequence number at the next free position of its stream's log and
// counts how often each sequence number was seen (lost / duplicated packets)
extern "C" __global__ void record(int* log, int* counter, int* seen, int seq) {
  if (threadIdx.x == 0 && blockIdx.x == 0) {
    int pos = atomicAdd(counter, 1);
    log[pos] = seq;
    atomicAdd(&seen[seq], 1);
  }
}

// a data-dependent amount of work (keeps a queue busy)
extern "C" __global__ void busy(int* out, int iters) {
  int acc = (int)threadIdx.x;
  for (int k = 0; k < iters; ++k) acc = acc * 1664525 + 1013904223 + k;
  out[threadIdx.x] = acc;
}

// atomicAdd through a caller-chosen (possibly misaligned) pointer
extern "C" __global__ void atomic_at(int* p, int v) {
  if (threadIdx.x == 0) atomicAdd(p, v);
}
