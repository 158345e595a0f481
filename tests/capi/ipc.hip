// Several processes, one emulated GPU each, sharing device memory and events through HIP IPC (test_ipc_forked.py).
// The parent fills N ints (N, seed from argv), holds its stream on a host flag (hipStreamWaitValue32), doubles
// the ints there and records an IPC event.  K forked children open the memory and the event, wait for it in
// their stream, add k + 1 to their slice (i % K == k) and record IPC events of their own; the parent sees
// those events not ready while its flag is down, raises it, waits for the children's events and prints the
// ints.  Then it frees them: each child still reads its mapping (the owner's free leaves it) and closes twice.
#include <hip/hip_runtime.h>
#include <cstdio>
#include <cstdlib>
#include <unistd.h>
#include <sys/wait.h>

#define K 3

__global__ void scale2(int* p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] *= 2;
}

__global__ void add_slice(int* p, int n, int k) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n && i % K == k) p[i] += k + 1;
}

static void put(int fd, const void* b, size_t n) { if (write(fd, b, n) != (ssize_t)n) _exit(3); }
static void get(int fd, void* b, size_t n) {
  for (size_t got = 0; got < n;) {
    ssize_t r = read(fd, (char*)b + got, n - got);
    if (r <= 0) _exit(4);
    got += r;
  }
}

static int child(int k, int n, int in, int out) {
  hipIpcMemHandle_t mh; hipIpcEventHandle_t eh;
  get(in, &mh, sizeof mh); get(in, &eh, sizeof eh);
  int* p = nullptr; hipEvent_t theirs, mine; hipStream_t s;
  if (hipIpcOpenMemHandle((void**)&p, mh, 0) || hipIpcOpenEventHandle(&theirs, eh)) return 5;
  hipStreamCreateWithFlags(&s, hipStreamNonBlocking);
  hipEventCreateWithFlags(&mine, hipEventInterprocess | hipEventDisableTiming);
  hipStreamWaitEvent(s, theirs, 0);
  add_slice<<<(n + 127) / 128, 128, 0, s>>>(p, n, k);
  hipEventRecord(mine, s);
  hipIpcEventHandle_t back;
  if (hipIpcGetEventHandle(&back, mine)) return 6;
  put(out, &back, sizeof back);
  char bye; get(in, &bye, 1);                     // the parent has freed the memory by now
  int* seen = (int*)malloc(n * sizeof(int));
  hipError_t copied = hipMemcpy(seen, p, n * sizeof(int), hipMemcpyDeviceToHost);
  long long sum = 0;
  for (int i = 0; i < n; ++i) sum += seen[i];
  int c1 = hipIpcCloseMemHandle(p), c2 = hipIpcCloseMemHandle(p);
  char line[128];
  int len = snprintf(line, sizeof line, "child %d copy=%d sum=%lld close=%d,%d\n", k, copied, sum, c1, c2);
  put(out, line, len);
  return 0;
}

int main(int argc, char** argv) {
  int n = atoi(argv[1]), seed = atoi(argv[2]);
  int* host = (int*)malloc(n * sizeof(int));
  for (int i = 0; i < n; ++i) host[i] = (i * 7919 + seed) % 1000;
  int* p; hipMalloc(&p, n * sizeof(int));
  hipMemcpy(p, host, n * sizeof(int), hipMemcpyHostToDevice);
  hipIpcMemHandle_t mh; hipEvent_t done; hipIpcEventHandle_t eh;
  hipEventCreateWithFlags(&done, hipEventInterprocess | hipEventDisableTiming);
  if (hipIpcGetMemHandle(&mh, p) || hipIpcGetEventHandle(&eh, done)) return 2;
  void* own = nullptr; hipIpcMemHandle_t bad = mh; bad.reserved[0] ^= 0x5a;
  printf("own=%d bad=%d close=%d\n", hipIpcOpenMemHandle(&own, mh, 0), hipIpcOpenMemHandle(&own, bad, 0),
         hipIpcCloseMemHandle(p));
  fflush(stdout);
  int to[K][2], from[K][2]; pid_t pids[K];
  for (int k = 0; k < K; ++k) {
    if (pipe(to[k]) || pipe(from[k])) return 2;
    pids[k] = fork();
    if (pids[k] == 0) _exit(child(k, n, to[k][0], from[k][1]));
  }
  unsigned* flag; hipHostMalloc((void**)&flag, sizeof(unsigned), 0); *flag = 0;
  hipStream_t s; hipStreamCreateWithFlags(&s, hipStreamNonBlocking);
  hipStreamWaitValue32(s, flag, 1, hipStreamWaitValueEq, 0xffffffff);
  scale2<<<(n + 127) / 128, 128, 0, s>>>(p, n);
  hipEventRecord(done, s);
  hipEvent_t theirs[K];
  for (int k = 0; k < K; ++k) {
    put(to[k][1], &mh, sizeof mh); put(to[k][1], &eh, sizeof eh);
    hipIpcEventHandle_t back; get(from[k][0], &back, sizeof back);
    if (hipIpcOpenEventHandle(&theirs[k], back)) return 7;
  }
  printf("pending=%d,%d\n", hipEventQuery(theirs[K - 1]), hipEventQuery(done));
  __atomic_store_n(flag, 1u, __ATOMIC_RELEASE);
  for (int k = 0; k < K; ++k) hipEventSynchronize(theirs[k]);
  hipMemcpy(host, p, n * sizeof(int), hipMemcpyDeviceToHost);
  printf("values");
  for (int i = 0; i < n; ++i) printf(" %d", host[i]);
  printf("\nfree=%d\n", hipFree(p));
  fflush(stdout);
  for (int k = 0; k < K; ++k) {
    put(to[k][1], "x", 1);
    char line[128] = {0}; ssize_t r = read(from[k][0], line, sizeof line - 1);
    if (r > 0) fputs(line, stdout);
    int status; waitpid(pids[k], &status, 0);
    printf("exit %d %d\n", k, WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  }
  return 0;
}
