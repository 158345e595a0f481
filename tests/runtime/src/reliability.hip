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

// sixteen arguments of every scalar kind and pointers (tests/runtime/test_native_dispatch.py): reads
// src[threadIdx + shift], so a large shift runs off the allocation
extern "C" __global__ void tiny16(int a0, double a1, long a2, const float* src, int shift, double a5, long a6,
                                  const float* p7, int a8, double a9, long a10, const float* p11, int a12,
                                  double a13, long a14, float* out) {
  int i = threadIdx.x + blockIdx.x * blockDim.x;
  if (i < a12)
    out[i] = src[i + shift] + (float)(a0 + a8) + (float)(a1 + a5 + a9 + a13) + (float)(a2 + a6 + a10 + a14) +
             p7[i] * 0.5f + p11[i] * 0.25f;
}
