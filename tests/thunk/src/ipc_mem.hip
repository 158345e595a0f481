// HIP IPC of device memory between two processes: the parent forks and the child execs this program again
// ("child" mode, the pipes' descriptors as arguments), so it starts HIP afresh whatever the parent started
// before main (hipcc programs register their kernels in constructors).  The parent fills three buffers with a kernel from random host data and
// sends their hipIpcMemHandles through a pipe; the child opens them, runs a kernel that reads and rewrites
// A and B in place, and sums C after the parent freed C (and reused its memory) while the child held it.
// The child then tries bad handles: all zeros, one with its first byte flipped, and C's handle again after
// it closed C (the exporter freed it: the handle is stale) — each must be an error, not a crash.  Before the
// child rewrites B, the parent runs a kernel on B and records it in an IPC event the child waits for.  The parent
// checks A and B against values it computes itself, and C's sum.
//   ipc_mem [seed]          (ipc_mem child IN OUT: the child)
#include <hip/hip_runtime.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

// sizes not a multiple of the block: A small (inside one of ROCr's 2 MiB fragment blocks), B and C blocks of
// their own (a freed fragment's block lives on in ROCr, and so would its handle)
static const size_t NA = 100003, NB = (4u << 20) / 4 + 4099, NC = (3u << 20) / 4 + 77;
static const unsigned BLOCK = 256;

__global__ void fill(uint32_t* p, const uint32_t* src, size_t n, uint32_t salt) {
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (i < n) p[i] = src[i] ^ (uint32_t)(i * 0x9E3779B9u + salt);
}

__global__ void rewrite(uint32_t* p, size_t n) {            // the child: reads and writes in place
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (i < n) p[i] = p[i] * 2654435761u + ((uint32_t)i ^ 0x5bd1e995u);
}

__global__ void bump(uint32_t* p, size_t n) {            // the parent, after the child opened B
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (i < n) p[i] += (uint32_t)i * 7u + 1u;
}

__global__ void sum(const uint32_t* p, size_t n, unsigned long long* out) {
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(out, (unsigned long long)p[i]);
}

static uint64_t rng_state;
static uint32_t next_random() {                                 // xorshift64*
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  return (uint32_t)((rng_state * 2685821657736338717ull) >> 32);
}

static void put(int fd, const void* p, size_t n) {
  const char* c = (const char*)p;
  while (n) {
    ssize_t k = write(fd, c, n);
    if (k <= 0) { std::perror("write"); std::exit(90); }
    c += k, n -= k;
  }
}

static bool get(int fd, void* p, size_t n) {
  char* c = (char*)p;
  while (n) {
    ssize_t k = read(fd, c, n);
    if (k <= 0) return false;
    c += k, n -= k;
  }
  return true;
}

#define CHECK(x)                                                                     \
  do {                                                                               \
    hipError_t e_ = (x);                                                             \
    if (e_ != hipSuccess) {                                                          \
      std::printf("%s: %s\n", #x, hipGetErrorName(e_));                              \
      std::fflush(stdout);                                                           \
      return 10 + __LINE__ % 80;                                                     \
    }                                                                                \
  } while (0)

struct Handles { hipIpcMemHandle_t a, b, c; };
struct Freed { char tag; hipIpcEventHandle_t bumped; };    // C freed; B's bump recorded in this event
struct Report {
  int status;                         // 0: the child did everything
  unsigned long long c_sum;           // C's sum, read after the exporter freed C
  hipError_t zero, flipped, stale;    // hipIpcOpenMemHandle of the bad handles
};

static int child(int from_parent, int to_parent) {
  Handles h;
  if (!get(from_parent, &h, sizeof h)) return 20;
  CHECK(hipSetDevice(0));
  uint32_t *a, *b, *c;
  CHECK(hipIpcOpenMemHandle((void**)&a, h.a, hipIpcMemLazyEnablePeerAccess));
  CHECK(hipIpcOpenMemHandle((void**)&b, h.b, hipIpcMemLazyEnablePeerAccess));
  CHECK(hipIpcOpenMemHandle((void**)&c, h.c, hipIpcMemLazyEnablePeerAccess));
  char opened = 'o';
  put(to_parent, &opened, 1);
  Freed freed;
  if (!get(from_parent, &freed, sizeof freed) || freed.tag != 'f') return 21;    // the parent freed C
  hipEvent_t bumped;                  // the parent's kernel on B may still run: wait for its event
  CHECK(hipIpcOpenEventHandle(&bumped, freed.bumped));
  CHECK(hipEventSynchronize(bumped));
  rewrite<<<(NA + BLOCK - 1) / BLOCK, BLOCK>>>(a, NA);
  rewrite<<<(NB + BLOCK - 1) / BLOCK, BLOCK>>>(b, NB);
  unsigned long long* out;
  CHECK(hipMalloc(&out, sizeof *out));
  CHECK(hipMemset(out, 0, sizeof *out));
  sum<<<(NC + BLOCK - 1) / BLOCK, BLOCK>>>(c, NC, out);
  CHECK(hipGetLastError());
  CHECK(hipDeviceSynchronize());
  Report r = {};
  CHECK(hipMemcpy(&r.c_sum, out, sizeof r.c_sum, hipMemcpyDeviceToHost));
  CHECK(hipIpcCloseMemHandle(a));
  CHECK(hipIpcCloseMemHandle(b));
  CHECK(hipIpcCloseMemHandle(c));
  // (the IPC event is not destroyed: AMD's HIP 5.2 aborts in hipEventDestroy of an IPC event, "Memobj map
  // does not have ptr" — its destructor unregisters the shared page by another pointer than it registered)
  void* p = nullptr;
  hipIpcMemHandle_t bad;
  std::memset(&bad, 0, sizeof bad);
  r.zero = hipIpcOpenMemHandle(&p, bad, hipIpcMemLazyEnablePeerAccess);
  bad = h.a;
  bad.reserved[0] ^= 0x5a;
  r.flipped = hipIpcOpenMemHandle(&p, bad, hipIpcMemLazyEnablePeerAccess);
  r.stale = hipIpcOpenMemHandle(&p, h.c, hipIpcMemLazyEnablePeerAccess);
  // the device still works after the bad handles
  CHECK(hipMemset(out, 0, sizeof *out));
  CHECK(hipDeviceSynchronize());
  CHECK(hipFree(out));
  put(to_parent, &r, sizeof r);
  return 0;
}

static int parent(pid_t pid, int to_child, int from_child, uint64_t seed) {
  rng_state = seed * 0x9E3779B97F4A7C15ull + 1;
  std::vector<uint32_t> ra(NA), rb(NB), rc(NC);
  for (auto& x : ra) x = next_random();
  for (auto& x : rb) x = next_random();
  for (auto& x : rc) x = next_random();
  const uint32_t salt = next_random();
  uint32_t *a, *b, *c, *tmp;
  CHECK(hipMalloc(&a, NA * 4));
  CHECK(hipMalloc(&b, NB * 4));
  CHECK(hipMalloc(&c, NC * 4));
  CHECK(hipMalloc(&tmp, (NA + NB + NC) * 4));
  CHECK(hipMemcpy(tmp, ra.data(), NA * 4, hipMemcpyHostToDevice));
  CHECK(hipMemcpy(tmp + NA, rb.data(), NB * 4, hipMemcpyHostToDevice));
  CHECK(hipMemcpy(tmp + NA + NB, rc.data(), NC * 4, hipMemcpyHostToDevice));
  fill<<<(NA + BLOCK - 1) / BLOCK, BLOCK>>>(a, tmp, NA, salt);
  fill<<<(NB + BLOCK - 1) / BLOCK, BLOCK>>>(b, tmp + NA, NB, salt);
  fill<<<(NC + BLOCK - 1) / BLOCK, BLOCK>>>(c, tmp + NA + NB, NC, salt);
  // (the fills complete first: pyhip's emulator backend copies an allocation's bytes at its first export
  // and does not stop kernels meanwhile; the thunk stops its queues)
  CHECK(hipDeviceSynchronize());
  Handles h;
  CHECK(hipIpcGetMemHandle(&h.c, c));
  CHECK(hipIpcGetMemHandle(&h.b, b));
  CHECK(hipIpcGetMemHandle(&h.a, a));
  put(to_child, &h, sizeof h);
  char opened = 0;
  if (!get(from_child, &opened, 1) || opened != 'o') {
    int st = 0;
    waitpid(pid, &st, 0);
    std::printf("the child failed before opening the handles (status 0x%x)\n", st);
    return 30;
  }
  // free C while the child holds it, and reuse the memory: the child must still see C's bytes
  CHECK(hipFree(c));
  uint32_t* d;
  CHECK(hipMalloc(&d, NC * 4));
  CHECK(hipMemset(d, 0xA5, NC * 4));
  CHECK(hipDeviceSynchronize());
  // bump B and tell the child by an IPC event, without waiting for the kernel here
  hipEvent_t bumped;
  CHECK(hipEventCreateWithFlags(&bumped, hipEventInterprocess | hipEventDisableTiming));
  bump<<<(NB + BLOCK - 1) / BLOCK, BLOCK>>>(b, NB);
  CHECK(hipEventRecord(bumped, 0));
  Freed freed;
  freed.tag = 'f';
  CHECK(hipIpcGetEventHandle(&freed.bumped, bumped));
  put(to_child, &freed, sizeof freed);
  Report r;
  bool got = get(from_child, &r, sizeof r);
  int st = 0;
  waitpid(pid, &st, 0);
  if (!got || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
    std::printf("the child failed (status 0x%x)\n", st);
    return 31;
  }
  std::vector<uint32_t> ha(NA), hb(NB);
  CHECK(hipMemcpy(ha.data(), a, NA * 4, hipMemcpyDeviceToHost));
  CHECK(hipMemcpy(hb.data(), b, NB * 4, hipMemcpyDeviceToHost));
  size_t bad_a = 0, bad_b = 0;
  for (size_t i = 0; i < NA; ++i)
    bad_a += ha[i] != (ra[i] ^ (uint32_t)(i * 0x9E3779B9u + salt)) * 2654435761u + ((uint32_t)i ^ 0x5bd1e995u);
  for (size_t i = 0; i < NB; ++i)
    bad_b += hb[i] != ((rb[i] ^ (uint32_t)(i * 0x9E3779B9u + salt)) + (uint32_t)i * 7u + 1u) * 2654435761u +
                      ((uint32_t)i ^ 0x5bd1e995u);
  unsigned long long want = 0;
  for (size_t i = 0; i < NC; ++i) want += rc[i] ^ (uint32_t)(i * 0x9E3779B9u + salt);
  std::printf("A (%zu words) rewritten by the child: %zu wrong\n", NA, bad_a);
  std::printf("B (%zu words) bumped here, then rewritten by the child after the IPC event: %zu wrong\n", NB, bad_b);
  std::printf("C summed by the child after the parent freed it: %s\n", r.c_sum == want ? "right" : "WRONG");
  std::printf("zero handle: %s\n", r.zero != hipSuccess ? "error" : "OPENED");
  std::printf("corrupt handle: %s\n", r.flipped != hipSuccess ? "error" : "OPENED");
  std::printf("stale handle: %s\n", r.stale != hipSuccess ? "error" : "OPENED");
  std::fprintf(stderr, "bad handles: %s %s %s\n", hipGetErrorName(r.zero), hipGetErrorName(r.flipped),
               hipGetErrorName(r.stale));
  CHECK(hipFree(a));
  CHECK(hipFree(b));
  CHECK(hipFree(d));
  CHECK(hipFree(tmp));
  bool ok = !bad_a && !bad_b && r.c_sum == want && r.zero != hipSuccess && r.flipped != hipSuccess &&
            r.stale != hipSuccess;
  std::printf("%s\n", ok ? "PASS" : "FAIL");
  return ok ? 0 : 1;
}

int main(int argc, char** argv) {
  if (argc == 4 && !std::strcmp(argv[1], "child")) return child(std::atoi(argv[2]), std::atoi(argv[3]));
  uint64_t seed = argc > 1 ? std::strtoull(argv[1], nullptr, 0) : 1;
  int down[2], up[2];
  if (pipe(down) || pipe(up)) return 2;
  std::fflush(stdout);
  pid_t pid = fork();
  if (pid < 0) return 3;
  if (pid == 0) {                     // a fresh process: a runtime may have started before main (constructors)
    close(down[1]);
    close(up[0]);
    char in[16], out[16];
    std::snprintf(in, sizeof in, "%d", down[0]);
    std::snprintf(out, sizeof out, "%d", up[1]);
    char* args[] = {argv[0], (char*)"child", in, out, nullptr};
    execv("/proc/self/exe", args);
    _exit(127);
  }
  close(down[0]);
  close(up[1]);
  return parent(pid, down[1], up[0], seed);
}
