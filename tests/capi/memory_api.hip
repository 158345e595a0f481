// The memory family through the C ABI, checked against host references with random data, odd sizes and
// poisoned outputs: pitched/3-D allocations, 2-D/3-D copies and fills (every API form), driver-style and
// stream copies, pinned-memory ordering, pointer attributes, host registration, managed memory, pools.
// Prints one line per check ("name: ok" or "name: FAIL ...") and exits with the number of failures.
#include <hip/hip_runtime.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

static int failures = 0;
static void check(const char* what, bool ok, const char* detail = "") {
  std::printf("%s: %s%s\n", what, ok ? "ok" : "FAIL ", ok ? "" : detail);
  if (!ok) ++failures;
}
static void code(const char* what, hipError_t got, hipError_t want) {
  char buf[128];
  std::snprintf(buf, sizeof buf, "got %s want %s", hipGetErrorName(got), hipGetErrorName(want));
  check(what, got == want, buf);
}
__device__ int sym_pair[2];                 // 8 bytes: copies must stay inside them
static unsigned char rnd() { return (unsigned char)(std::rand() & 0xff); }

__global__ void inc_rows(unsigned char* p, size_t pitch, int width, int height) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
  if (x < width && y < height) p[y * pitch + x] += 1;
}
__global__ void add_one(int* p, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) p[i] += 1; }
__global__ void spin_then_copy(const int* src, int* dst, int n, int spin) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int acc = 0;
  for (int k = 0; k < spin; ++k) acc += k ^ i;         // keeps the stream busy for a while
  if (i < n) dst[i] = src[i] + (acc & 0);
}

static void pitched_2d() {
  const int W = 77, H = 13;                                     // not multiples of anything
  size_t pitch = 0; unsigned char* d = nullptr;
  code("hipMallocPitch", hipMallocPitch((void**)&d, &pitch, W, H), hipSuccess);
  check("pitch >= width and aligned", pitch >= W && pitch % 256 == 0);
  std::vector<unsigned char> h(W * H), back(W * H, 0xCD), ref(W * H);
  for (auto& v : h) v = rnd();
  code("hipMemcpy2D H2D", hipMemcpy2D(d, pitch, h.data(), W, W, H, hipMemcpyHostToDevice), hipSuccess);
  inc_rows<<<dim3(1, H), 128>>>(d, pitch, W, H);
  code("hipMemset2D", hipMemset2D(d + 3 * pitch + 5, pitch, 0xA5, 20, 4), hipSuccess);
  code("hipMemset2D width > pitch", hipMemset2D(d, 1, 0x11, W, H), hipErrorInvalidValue);
  code("hipMemset2DAsync width > pitch", hipMemset2DAsync(d, pitch, 0x11, pitch + 1, 2, nullptr), hipErrorInvalidValue);
  code("hipMemcpy2D D2H", hipMemcpy2D(back.data(), W, d, pitch, W, H, hipMemcpyDeviceToHost), hipSuccess);
  for (int y = 0; y < H; ++y)
    for (int x = 0; x < W; ++x)
      ref[y * W + x] = (y >= 3 && y < 7 && x >= 5 && x < 25) ? 0xA5 : (unsigned char)(h[y * W + x] + 1);
  check("2-D copy/kernel/fill roundtrip", back == ref);
  // the driver-style descriptor: a sub-rectangle of the pitched buffer into a tight host array
  hip_Memcpy2D p = {};
  p.srcMemoryType = hipMemoryTypeDevice; p.srcDevice = d; p.srcPitch = pitch; p.srcXInBytes = 2; p.srcY = 1;
  p.dstMemoryType = hipMemoryTypeHost; std::vector<unsigned char> sub(30 * 5, 0xEE); p.dstHost = sub.data();
  p.dstPitch = 30; p.WidthInBytes = 30; p.Height = 5;
  code("hipMemcpyParam2D", hipMemcpyParam2D(&p), hipSuccess);
  bool same = true;
  for (int y = 0; y < 5; ++y) for (int x = 0; x < 30; ++x) same &= sub[y * 30 + x] == ref[(y + 1) * W + x + 2];
  check("hipMemcpyParam2D sub-rectangle", same);
  hipStream_t s; hipStreamCreate(&s);
  std::vector<unsigned char> back2(W * H, 0);
  code("hipMemcpy2DAsync", hipMemcpy2DAsync(back2.data(), W, d, pitch, W, H, hipMemcpyDeviceToHost, s), hipSuccess);
  hipStreamSynchronize(s);
  check("hipMemcpy2DAsync data", back2 == ref);
  code("pitch below width", hipMemcpy2D(back.data(), W - 1, d, pitch, W, H, hipMemcpyDeviceToHost),
       hipErrorInvalidPitchValue);
  code("null destination", hipMemcpy2D(nullptr, W, d, pitch, W, H, hipMemcpyDeviceToHost), hipErrorInvalidValue);
  code("bad kind", hipMemcpy2D(back.data(), W, d, pitch, W, H, (hipMemcpyKind)7), hipErrorInvalidMemcpyDirection);
  code("zero-sized copy", hipMemcpy2D(back.data(), W, d, pitch, 0, H, hipMemcpyDeviceToHost), hipSuccess);
  hipStreamDestroy(s);
  hipFree(d);
}

static void pitched_3d() {
  hipExtent e = make_hipExtent(19, 6, 5);                     // bytes, rows, slices
  hipPitchedPtr pp;
  code("hipMalloc3D", hipMalloc3D(&pp, e), hipSuccess);
  check("3-D pitch", pp.pitch >= 19 && pp.xsize == 19 && pp.ysize == 6);
  const size_t n = 19 * 6 * 5;
  std::vector<unsigned char> h(n), back(n, 0x11), ref(n);
  for (auto& v : h) v = rnd();
  hipMemcpy3DParms p = {};
  p.srcPtr = make_hipPitchedPtr(h.data(), 19, 19, 6); p.dstPtr = pp; p.extent = e; p.kind = hipMemcpyHostToDevice;
  code("hipMemcpy3D H2D", hipMemcpy3D(&p), hipSuccess);
  hipExtent sub = make_hipExtent(7, 2, 3);
  hipPitchedPtr inner = pp; inner.ptr = (char*)pp.ptr + 1 * pp.pitch * 6 + 2 * pp.pitch + 4;   // slice 1, row 2, byte 4
  code("hipMemset3D", hipMemset3D(inner, 0x3C, sub), hipSuccess);
  hipMemcpy3DParms q = {};
  q.srcPtr = pp; q.dstPtr = make_hipPitchedPtr(back.data(), 19, 19, 6); q.extent = e; q.kind = hipMemcpyDeviceToHost;
  hipStream_t s; hipStreamCreate(&s);
  code("hipMemcpy3DAsync D2H", hipMemcpy3DAsync(&q, s), hipSuccess);
  hipStreamSynchronize(s);
  for (int z = 0; z < 5; ++z)
    for (int y = 0; y < 6; ++y)
      for (int x = 0; x < 19; ++x) {
        bool in = z >= 1 && z < 4 && y >= 2 && y < 4 && x >= 4 && x < 11;
        ref[(z * 6 + y) * 19 + x] = in ? 0x3C : h[(z * 6 + y) * 19 + x];
      }
  check("3-D copy/fill roundtrip", back == ref);
  // copy with positions: a 5x3x2 box from (3,1,2) of the device volume to (0,0,0) of a host box
  std::vector<unsigned char> box(5 * 3 * 2, 0x99);
  hipMemcpy3DParms r = {};
  r.srcPtr = pp; r.srcPos = make_hipPos(3, 1, 2);
  r.dstPtr = make_hipPitchedPtr(box.data(), 5, 5, 3); r.extent = make_hipExtent(5, 3, 2); r.kind = hipMemcpyDefault;
  code("hipMemcpy3D with positions", hipMemcpy3D(&r), hipSuccess);
  bool same = true;
  for (int z = 0; z < 2; ++z) for (int y = 0; y < 3; ++y) for (int x = 0; x < 5; ++x)
    same &= box[(z * 3 + y) * 5 + x] == ref[((z + 2) * 6 + y + 1) * 19 + x + 3];
  check("3-D box data", same);
  hipMemcpy3DParms bad = {};
  bad.extent = make_hipExtent(4, 1, 1);  // (an empty extent succeeds before any check)
  code("hipMemcpy3D without pointers", hipMemcpy3D(&bad), hipErrorInvalidValue);
  hipStreamDestroy(s);
  hipFree(pp.ptr);
}

static void one_d_forms() {
  const int n = 1001;
  std::vector<int> h(n), back(n, -7);
  for (auto& v : h) v = std::rand();
  int *a, *b;
  hipMalloc(&a, n * 4); hipMalloc(&b, n * 4);
  code("hipMemcpyHtoD", hipMemcpyHtoD((hipDeviceptr_t)a, h.data(), n * 4), hipSuccess);
  code("hipMemcpyDtoD", hipMemcpyDtoD((hipDeviceptr_t)b, (hipDeviceptr_t)a, n * 4), hipSuccess);
  hipStream_t s; hipStreamCreate(&s);
  code("hipMemcpyWithStream", hipMemcpyWithStream(back.data(), b, n * 4, hipMemcpyDeviceToHost, s), hipSuccess);
  check("1-D forms data", back == h);
  // a kind that contradicts the pointers: the runtime infers the direction (as AMD's does)
  std::fill(back.begin(), back.end(), 0);
  code("contradicting kind", hipMemcpy(back.data(), a, n * 4, hipMemcpyHostToDevice), hipSuccess);
  check("contradicting kind data", back == h);
  int x = 1, y = 2;
  code("two pageable pointers need HtoH", hipMemcpy(&x, &y, 4, hipMemcpyDeviceToHost), hipErrorInvalidValue);
  code("hipMemcpyDtoHAsync", hipMemcpyDtoHAsync(back.data(), (hipDeviceptr_t)b, n * 4, s), hipSuccess);
  hipStreamSynchronize(s);
  hipStreamDestroy(s);
  hipFree(a); hipFree(b);
}

static void pinned_ordering() {
  // hipMemcpyAsync from pinned memory reads it when the stream reaches the copy, not at enqueue
  const int n = 4096;
  int *src_pinned, *d, *out;
  hipHostMalloc((void**)&src_pinned, n * 4, 0);
  hipMalloc(&d, n * 4); hipMalloc(&out, n * 4);
  for (int i = 0; i < n; ++i) src_pinned[i] = i;
  hipStream_t s; hipStreamCreate(&s);
  hipEvent_t gate; hipEventCreate(&gate);
  int* flag; hipHostMalloc((void**)&flag, 4, 0); *flag = 0;
  hipStreamWaitValue32(s, flag, 1, hipStreamWaitValueEq, 0xffffffff);   // the stream stalls here
  hipMemcpyAsync(d, src_pinned, n * 4, hipMemcpyHostToDevice, s);
  for (int i = 0; i < n; ++i) src_pinned[i] = 3 * i;                       // changed before the copy runs
  *flag = 1;
  std::vector<int> back(n);
  hipMemcpyAsync(back.data(), d, n * 4, hipMemcpyDeviceToHost, s);
  hipStreamSynchronize(s);
  bool ok = true; for (int i = 0; i < n; ++i) ok &= back[i] == 3 * i;
  check("pinned source read in stream order", ok);
  // pageable memory on either side: the copy runs in stream order and hipMemcpyAsync returns when it is done
  // (as AMD's runtime: it reads what earlier work left and the buffer may be reused at once)
  std::vector<int> pageable(n); for (int i = 0; i < n; ++i) pageable[i] = i + 5;
  hipMemcpyAsync(d, pageable.data(), n * 4, hipMemcpyHostToDevice, s);
  for (int i = 0; i < n; ++i) pageable[i] = -1;                           // reused at once
  spin_then_copy<<<(n + 255) / 256, 256, 0, s>>>(d, out, n, 2000);        // keeps the stream busy
  hipMemcpyAsync(back.data(), out, n * 4, hipMemcpyDeviceToHost, s);      // no synchronize after this
  ok = true; for (int i = 0; i < n; ++i) ok &= back[i] == i + 5;
  check("pageable copies in stream order, done at return", ok);
  // hip-tests' H2H chain: pageable -> pageable -> pinned -> pinned, each reading what the previous wrote
  std::vector<int> a_h(n), b_h(n, -3);
  for (int i = 0; i < n; ++i) a_h[i] = (int)(std::rand() & 0xffff);
  int *a_p, *b_p; hipHostMalloc((void**)&a_p, n * 4, 0); hipHostMalloc((void**)&b_p, n * 4, 0);
  for (int i = 0; i < n; ++i) { a_p[i] = -1; b_p[i] = -2; }
  hipMemcpyAsync(b_h.data(), a_h.data(), n * 4, hipMemcpyHostToHost, s);
  hipMemcpyAsync(a_p, b_h.data(), n * 4, hipMemcpyHostToHost, s);
  hipMemcpyAsync(b_p, a_p, n * 4, hipMemcpyHostToHost, s);
  hipStreamSynchronize(s);
  ok = true; for (int i = 0; i < n; ++i) ok &= b_p[i] == a_h[i];
  check("H2H chain pageable -> pinned -> pinned", ok);
  hipHostFree(a_p); hipHostFree(b_p);
  void* zero = (void*)0x1234;
  code("hipHostMalloc(0)", hipHostMalloc(&zero, 0, 0), hipSuccess);
  check("hipHostMalloc(0) gives a null pointer", zero == nullptr);
  // hipMemset on pinned memory, hipMemcpy into managed memory
  code("hipMemset on hipHostMalloc memory", hipMemset(src_pinned, 0x7F, n * 4), hipSuccess);
  check("hipMemset pinned data", src_pinned[17] == 0x7F7F7F7F && src_pinned[n - 1] == 0x7F7F7F7F);
  int* managed; code("hipMallocManaged", hipMallocManaged((void**)&managed, n * 4, hipMemAttachGlobal), hipSuccess);
  {                                   // AMD's coherency extensions: device memory coarse, managed fine until advised
    unsigned mode_d = 9, mode_m = 9, mode_c = 9, mode_f = 9;
    hipMemRangeGetAttribute(&mode_d, 4, hipMemRangeAttributeCoherencyMode, d, n * 4);
    hipMemRangeGetAttribute(&mode_m, 4, hipMemRangeAttributeCoherencyMode, managed, n * 4);
    code("hipMemAdviseSetCoarseGrain", hipMemAdvise(managed, n * 4, hipMemAdviseSetCoarseGrain, 0), hipSuccess);
    hipMemRangeGetAttribute(&mode_c, 4, hipMemRangeAttributeCoherencyMode, managed, n * 4);
    code("hipMemAdviseUnsetCoarseGrain", hipMemAdvise(managed, n * 4, hipMemAdviseUnsetCoarseGrain, 0), hipSuccess);
    hipMemRangeGetAttribute(&mode_f, 4, hipMemRangeAttributeCoherencyMode, managed, n * 4);
    // set/unset pairs and the last prefetch location, read back as HIP's range attributes
    int rm = -1, pl = -1, lp = -1, ab[3] = {-1, -1, -1};
    hipMemAdvise(managed, n * 4, hipMemAdviseSetReadMostly, 0);
    hipMemAdvise(managed, n * 4, hipMemAdviseSetPreferredLocation, 0);
    hipMemAdvise(managed, n * 4, hipMemAdviseSetAccessedBy, 0);
    hipMemAdvise(managed, n * 4, hipMemAdviseSetAccessedBy, hipCpuDeviceId);
    code("hipMemPrefetchAsync", hipMemPrefetchAsync(managed, n * 4, 0, nullptr), hipSuccess);
    hipMemRangeGetAttribute(&rm, 4, hipMemRangeAttributeReadMostly, managed, n * 4);
    hipMemRangeGetAttribute(&pl, 4, hipMemRangeAttributePreferredLocation, managed, n * 4);
    hipMemRangeGetAttribute(&lp, 4, hipMemRangeAttributeLastPrefetchLocation, managed, n * 4);
    hipMemRangeGetAttribute(ab, sizeof ab, hipMemRangeAttributeAccessedBy, managed, n * 4);
    check("advice set", rm == 1 && pl == 0 && lp == 0 && ab[0] == 0 && ab[1] == hipCpuDeviceId && ab[2] == -2);
    hipMemAdvise(managed, n * 4, hipMemAdviseUnsetReadMostly, 0);
    hipMemAdvise(managed, n * 4, hipMemAdviseUnsetPreferredLocation, 0);
    hipMemAdvise(managed, n * 4, hipMemAdviseUnsetAccessedBy, 0);
    hipMemRangeGetAttribute(&rm, 4, hipMemRangeAttributeReadMostly, managed, n * 4);
    hipMemRangeGetAttribute(&pl, 4, hipMemRangeAttributePreferredLocation, managed, n * 4);
    hipMemRangeGetAttribute(ab, sizeof ab, hipMemRangeAttributeAccessedBy, managed, n * 4);
    check("advice unset", rm == 0 && pl == -2 && ab[0] == hipCpuDeviceId && ab[1] == -2);
    hipMemAdvise(managed, n * 4, hipMemAdviseUnsetAccessedBy, hipCpuDeviceId);
    code("range attribute, data size 6", hipMemRangeGetAttribute(ab, 6, hipMemRangeAttributeReadMostly, managed, n * 4),
         hipErrorInvalidValue);
    code("accessed-by, data size 7", hipMemRangeGetAttribute(ab, 7, hipMemRangeAttributeAccessedBy, managed, n * 4),
         hipErrorInvalidValue);
    code("read-mostly of device memory", hipMemRangeGetAttribute(&rm, 4, hipMemRangeAttributeReadMostly, d, n * 4),
         hipErrorInvalidValue);
    check("coherency modes", mode_d == hipMemRangeCoherencyModeCoarseGrain &&
          mode_m == hipMemRangeCoherencyModeFineGrain && mode_c == hipMemRangeCoherencyModeCoarseGrain &&
          mode_f == hipMemRangeCoherencyModeFineGrain);
  }
  code("hipMemcpy to managed memory", hipMemcpy(managed, d, n * 4, hipMemcpyDeviceToHost), hipSuccess);
  check("managed memory data", managed[100] == 5 + 100);
  add_one<<<(n + 255) / 256, 256>>>(managed, n);
  hipDeviceSynchronize();
  check("kernel on managed memory", managed[n - 1] == n - 1 + 5 + 1);
  void* huge = nullptr;
  code("oversize hipMallocManaged", hipMallocManaged(&huge, (size_t)1 << 50, hipMemAttachGlobal), hipErrorOutOfMemory);
  code("hipMallocManaged bad flags", hipMallocManaged(&huge, 64, 0), hipErrorInvalidValue);
  void* hp = nullptr;
  code("hipHostMalloc unknown flags", hipHostMalloc(&hp, 64, 0x100), hipErrorInvalidValue);
  code("hipHostMalloc coherent+noncoherent", hipHostMalloc(&hp, 64, hipHostMallocCoherent | hipHostMallocNonCoherent),
       hipErrorInvalidValue);
  hipFree(managed); hipHostFree(flag); hipHostFree(src_pinned); hipFree(d); hipFree(out);
  hipEventDestroy(gate); hipStreamDestroy(s);
}

static void attributes_and_registration() {
  int* d; hipMalloc(&d, 4000);
  hipPointerAttribute_t a;
  code("hipPointerGetAttributes device", hipPointerGetAttributes(&a, d + 10), hipSuccess);
  check("device attributes", a.memoryType == hipMemoryTypeDevice && a.devicePointer == d + 10 && a.device == 0 &&
        !a.isManaged);
  size_t size = 0; void* base = nullptr;
  code("hipMemPtrGetInfo", hipMemPtrGetInfo(d + 10, &size), hipSuccess);
  check("hipMemPtrGetInfo size", size == 4000);
  code("hipMemGetAddressRange", hipMemGetAddressRange((hipDeviceptr_t*)&base, &size, (hipDeviceptr_t)(d + 99)),
       hipSuccess);
  check("address range", base == d && size == 4000);
  std::vector<int> pageable(1000, 3);
  code("attributes of pageable memory", hipPointerGetAttributes(&a, pageable.data()), hipErrorInvalidValue);
  code("hipHostRegister beyond the mapping", hipHostRegister(pageable.data(), size_t(1) << 46, 0), hipErrorInvalidValue);
  code("hipHostRegister", hipHostRegister(pageable.data(), 4000, hipHostRegisterMapped), hipSuccess);
  code("registered again (counted, as AMD's runtime)", hipHostRegister(pageable.data(), 4000, hipHostRegisterMapped),
       hipSuccess);
  code("overlapping registration", hipHostRegister(pageable.data() + 10, 400, 0), hipErrorHostMemoryAlreadyRegistered);
  code("first hipHostUnregister of two", hipHostUnregister(pageable.data()), hipSuccess);
  unsigned flags = 99;
  code("hipHostGetFlags", hipHostGetFlags(&flags, pageable.data()), hipSuccess);
  check("registered flags", flags == hipHostRegisterMapped);
  int* dp = nullptr;
  code("hipHostGetDevicePointer", hipHostGetDevicePointer((void**)&dp, pageable.data(), 0), hipSuccess);
  add_one<<<4, 256>>>(dp, 1000);                                   // the kernel writes the caller's memory
  hipDeviceSynchronize();
  check("kernel on registered memory", pageable[0] == 4 && pageable[999] == 4);
  code("hipPointerGetAttributes host", hipPointerGetAttributes(&a, pageable.data() + 5), hipSuccess);
  check("host attributes", a.memoryType == hipMemoryTypeHost && a.hostPointer == pageable.data() + 5);
  int dev = -1;
  code("hipPointerGetAttribute ordinal", hipPointerGetAttribute(&dev, HIP_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
                                                                (hipDeviceptr_t)d), hipSuccess);
  check("ordinal", dev == 0);
  unsigned id1 = 0, id2 = 0, id3 = 0;
  int *e1, *e2;
  hipMalloc(&e1, 4096);
  hipPointerGetAttribute(&id1, HIP_POINTER_ATTRIBUTE_BUFFER_ID, (hipDeviceptr_t)e1);
  hipFree(e1);
  hipMalloc(&e2, 4096);                                           // (typically the same address again)
  hipPointerGetAttribute(&id2, HIP_POINTER_ATTRIBUTE_BUFFER_ID, (hipDeviceptr_t)(e2 + 7));
  code("buffer id of device memory", hipPointerGetAttribute(&id3, HIP_POINTER_ATTRIBUTE_BUFFER_ID,
                                                             (hipDeviceptr_t)d), hipSuccess);
  check("buffer ids are unique per allocation", id1 && id2 && id3 && id1 != id2 && id2 != id3);
  hipFree(e2);
  code("hipHostUnregister", hipHostUnregister(pageable.data()), hipSuccess);
  code("unregister again", hipHostUnregister(pageable.data()), hipErrorHostMemoryNotRegistered);
  int* hm; hipHostMalloc((void**)&hm, 64, hipHostMallocMapped | hipHostMallocPortable);
  code("hipHostGetFlags hostmalloc", hipHostGetFlags(&flags, hm), hipSuccess);
  check("hostmalloc flags", flags == (hipHostMallocMapped | hipHostMallocPortable));
  hipHostFree(hm);
  hipFree(d);
}

static void pools_and_info() {
  size_t free0 = 0, total = 0, free1 = 0;
  hipMemGetInfo(&free0, &total);
  add_one<<<1, 1>>>(nullptr, 0);                                   // first launch of this kernel
  hipDeviceSynchronize();
  hipMemGetInfo(&free1, &total);
  check("a launch does not take device memory", free0 == free1);
  hipStream_t s; hipStreamCreate(&s);
  int* p = nullptr;
  code("hipMallocAsync", hipMallocAsync((void**)&p, 5000, s), hipSuccess);
  hipMemsetAsync(p, 0, 5000, s);
  add_one<<<5, 256, 0, s>>>(p, 1250);
  std::vector<int> back(1250);
  hipMemcpyAsync(back.data(), p, 5000, hipMemcpyDeviceToHost, s);
  code("hipFreeAsync", hipFreeAsync(p, s), hipSuccess);
  hipStreamSynchronize(s);
  bool ok = true; for (int v : back) ok &= v == 1;
  check("stream-ordered allocation data", ok);
  hipMemGetInfo(&free1, &total);
  check("hipFreeAsync returned the memory", free0 == free1);
  hipMemPool_t pool; hipMemPoolProps props = {};
  props.allocType = hipMemAllocationTypePinned; props.location.type = hipMemLocationTypeDevice; props.location.id = 0;
  code("hipMemPoolCreate", hipMemPoolCreate(&pool, &props), hipSuccess);
  code("hipMallocFromPoolAsync", hipMallocFromPoolAsync((void**)&p, 1 << 20, pool, s), hipSuccess);
  uint64_t used = 0;
  code("pool used memory", hipMemPoolGetAttribute(pool, hipMemPoolAttrUsedMemCurrent, &used), hipSuccess);
  check("pool used >= 1 MiB", used >= (1u << 20));
  hipFreeAsync(p, s);
  hipStreamSynchronize(s);
  code("hipMemPoolGetAttribute after free", hipMemPoolGetAttribute(pool, hipMemPoolAttrUsedMemCurrent, &used), hipSuccess);
  check("pool used back to 0", used == 0);
  code("hipMemPoolDestroy", hipMemPoolDestroy(pool), hipSuccess);
  // reuse: a block freed in a stream serves that stream's next allocation at once (stream order); another
  // stream gets it only after the free completed and only with opportunistic reuse; a synchronize returns
  // what exceeds the release threshold; a trim returns completed frees; a busy pool's destruction waits
  code("hipMemPoolCreate (reuse)", hipMemPoolCreate(&pool, &props), hipSuccess);
  uint64_t big = 1ull << 30;
  hipMemPoolSetAttribute(pool, hipMemPoolAttrReleaseThreshold, &big);       // keep freed blocks at syncs
  hipStream_t s2; hipStreamCreateWithFlags(&s2, hipStreamNonBlocking);
  int *a = nullptr, *b = nullptr, *keep = nullptr;
  int* flag; hipHostMalloc((void**)&flag, 4, 0); *flag = 0;
  hipMallocFromPoolAsync((void**)&keep, 4096, pool, s);
  hipMallocFromPoolAsync((void**)&a, 3 << 20, pool, s);
  hipStreamWaitValue32(s, flag, 1, hipStreamWaitValueEq, 0xffffffff);    // s stalls: the free is pending
  hipFreeAsync(a, s);
  code("same-stream allocation", hipMallocFromPoolAsync((void**)&b, 3 << 20, pool, s), hipSuccess);
  check("same stream reuses a pending free", a == b);
  hipFreeAsync(b, s);
  int opp = 0;
  hipMemPoolSetAttribute(pool, hipMemPoolReuseAllowOpportunistic, &opp);
  int* c2 = nullptr;
  hipMallocFromPoolAsync((void**)&c2, 3 << 20, pool, s2);
  check("another stream never gets a pending free", c2 != a);
  hipFreeAsync(c2, s2);
  hipStreamSynchronize(s2);
  *flag = 1;
  hipStreamSynchronize(s);                                                  // both frees completed
  hipMallocFromPoolAsync((void**)&b, 3 << 20, pool, s2);
  check("no opportunistic reuse when disallowed", b != a);
  hipFreeAsync(b, s2);
  hipStreamSynchronize(s2);
  opp = 1;
  hipMemPoolSetAttribute(pool, hipMemPoolReuseAllowOpportunistic, &opp);
  hipMallocFromPoolAsync((void**)&b, 3 << 20, pool, s2);
  check("opportunistic reuse of a completed free", b == a || b == c2);
  uint64_t used2 = 0, reserved = 0, reserved2 = 0;
  hipMemPoolGetAttribute(pool, hipMemPoolAttrUsedMemCurrent, &used2);
  hipMemPoolGetAttribute(pool, hipMemPoolAttrReservedMemCurrent, &reserved);
  check("used counts live allocations, reserved the cached blocks too",
        used2 == 4096 + (3u << 20) && reserved >= used2 + (3u << 20));
  code("hipMemPoolTrimTo", hipMemPoolTrimTo(pool, 0), hipSuccess);
  hipMemPoolGetAttribute(pool, hipMemPoolAttrReservedMemCurrent, &reserved2);
  check("trim releases completed frees, not live memory", reserved2 == 4096 + (3u << 20));
  code("hipMemPoolDestroy with live allocations", hipMemPoolDestroy(pool), hipSuccess);
  code("hipFreeAsync after the pool's destruction", hipFreeAsync(keep, s), hipSuccess);
  code("hipFreeAsync (second) after the pool's destruction", hipFreeAsync(b, s2), hipSuccess);
  hipDeviceSynchronize();
  hipMemGetInfo(&free1, &total);
  check("a destroyed pool returns everything", free0 == free1);
  hipHostFree(flag);
  hipStreamDestroy(s2);
  hipStreamDestroy(s);
}

// driver-style descriptors with a hipArray side (hipMemoryTypeArray): host -> array with hipMemcpyParam2D,
// array -> array and array -> host with hipDrvMemcpy3D, a sub-box at offsets, against the host data
static void array_descriptors() {
  const int w = 37, h = 11, d = 5;                         // float elements; odd sizes
  HIP_ARRAY3D_DESCRIPTOR desc = {};
  desc.Width = w; desc.Height = h; desc.Depth = d; desc.Format = HIP_AD_FORMAT_FLOAT; desc.NumChannels = 1;
  hipArray_t a = nullptr, b = nullptr;
  code("hipArray3DCreate", hipArray3DCreate(&a, &desc), hipSuccess);
  code("hipArray3DCreate (second)", hipArray3DCreate(&b, &desc), hipSuccess);
  std::vector<float> src(w * h * d), back(w * h * d, -1.0f);
  for (auto& v : src) v = (float)(std::rand() % 100000) / 7.0f;
  for (int z = 0; z < d; ++z) {        // each slice: host -> slice 0 of a (2-D descriptor), then a -> slice z of b
    hip_Memcpy2D p = {};
    p.srcMemoryType = hipMemoryTypeHost; p.srcHost = src.data() + z * w * h; p.srcPitch = w * sizeof(float);
    p.dstMemoryType = hipMemoryTypeArray; p.dstArray = a;
    p.WidthInBytes = w * sizeof(float); p.Height = h;
    hipError_t e1 = hipMemcpyParam2D(&p);
    HIP_MEMCPY3D m = {};
    m.srcMemoryType = hipMemoryTypeArray; m.srcArray = a;
    m.dstMemoryType = hipMemoryTypeArray; m.dstArray = b; m.dstZ = z;
    m.WidthInBytes = w * sizeof(float); m.Height = h; m.Depth = 1;
    hipError_t e2 = hipDrvMemcpy3D(&m);
    if (z == 0) {
      code("hipMemcpyParam2D host -> array", e1, hipSuccess);
      code("hipDrvMemcpy3D array -> array", e2, hipSuccess);
    }
  }
  HIP_MEMCPY3D m;
  m = {};
  m.srcMemoryType = hipMemoryTypeArray; m.srcArray = b;
  m.dstMemoryType = hipMemoryTypeHost; m.dstHost = back.data(); m.dstPitch = w * sizeof(float); m.dstHeight = h;
  m.WidthInBytes = w * sizeof(float); m.Height = h; m.Depth = d;
  code("hipDrvMemcpy3D array -> host", hipDrvMemcpy3D(&m), hipSuccess);
  check("array round trip", std::memcmp(src.data(), back.data(), src.size() * sizeof(float)) == 0);
  std::vector<float> box(3 * 4 * 2, -1.0f);                 // a 3 x 4 x 2 box at (5, 2, 1) into a host buffer
  m = {};
  m.srcMemoryType = hipMemoryTypeArray; m.srcArray = b; m.srcXInBytes = 5 * sizeof(float); m.srcY = 2; m.srcZ = 1;
  m.dstMemoryType = hipMemoryTypeHost; m.dstHost = box.data(); m.dstPitch = 3 * sizeof(float); m.dstHeight = 4;
  m.WidthInBytes = 3 * sizeof(float); m.Height = 4; m.Depth = 2;
  code("hipDrvMemcpy3D array box -> host", hipDrvMemcpy3D(&m), hipSuccess);
  bool ok = true;
  for (int z = 0; z < 2; ++z) for (int y = 0; y < 4; ++y) for (int x = 0; x < 3; ++x)
    ok &= box[(z * 4 + y) * 3 + x] == src[((z + 1) * h + y + 2) * w + x + 5];
  check("array sub-box", ok);
  m.srcZ = d - 1;                                            // the box would leave the array
  code("box outside the array", hipDrvMemcpy3D(&m), hipErrorInvalidValue);
  {                                                          // 2-D copies of height 0 succeed and copy nothing
    hipChannelFormatDesc fd = hipCreateChannelDesc<float>();
    hipArray* arr = nullptr;
    hipMallocArray(&arr, &fd, w, h, hipArrayDefault);
    std::vector<float> other(w * h, 2.5f), out2(w * h, -1.0f);
    code("hipMemcpy2DToArray", hipMemcpy2DToArray(arr, 0, 0, src.data(), w * 4, w * 4, h, hipMemcpyHostToDevice),
         hipSuccess);
    code("hipMemcpy2DToArray height 0", hipMemcpy2DToArray(arr, 0, 0, other.data(), w * 4, w * 4, 0,
                                                          hipMemcpyHostToDevice), hipSuccess);
    code("hipMemcpy2DFromArray height 0", hipMemcpy2DFromArray(other.data(), w * 4, arr, 0, 0, w * 4, 0,
                                                              hipMemcpyDeviceToHost), hipSuccess);
    code("hipMemcpy2DFromArray", hipMemcpy2DFromArray(out2.data(), w * 4, arr, 0, 0, w * 4, h, hipMemcpyDeviceToHost),
         hipSuccess);
    check("height-0 copies touch nothing", std::memcmp(out2.data(), src.data(), w * h * 4) == 0 && other[0] == 2.5f &&
          other[w * h - 1] == 2.5f);
    hipFreeArray(arr);
  }
  hipArrayDestroy(a);
  hipArrayDestroy(b);
  size_t free_only = 0, total_only = 0;                      // either output of hipMemGetInfo may be null
  code("hipMemGetInfo(&free, nullptr)", hipMemGetInfo(&free_only, nullptr), hipSuccess);
  code("hipMemGetInfo(nullptr, &total)", hipMemGetInfo(nullptr, &total_only), hipSuccess);
  check("hipMemGetInfo partial outputs", free_only > 0 && total_only >= free_only);
  code("hipMemGetInfo(nullptr, nullptr)", hipMemGetInfo(nullptr, nullptr), hipSuccess);
}

// hipDrvPointerGetAttributes: an attribute with no value for the pointer (the host pointer of device
// memory) gets its default and the call still succeeds (hipamd 5.2 ignores each attribute's status)
static void driver_attributes() {
  int* d = nullptr;
  hipMalloc(&d, 3000);
  int* host = (int*)0x1234;                                  // poisoned
  int ordinal = -7;
  void* start = nullptr;
  void* data[] = {&host, &ordinal, &start};
  hipPointer_attribute attrs[] = {HIP_POINTER_ATTRIBUTE_HOST_POINTER, HIP_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
                                  HIP_POINTER_ATTRIBUTE_RANGE_START_ADDR};
  code("hipDrvPointerGetAttributes on device memory",
       hipDrvPointerGetAttributes(3, attrs, data, (hipDeviceptr_t)(d + 100)), hipSuccess);
  check("host pointer NULL, ordinal, range start", host == nullptr && ordinal == 0 && start == d);
  code("hipDrvPointerGetAttributes without attributes", hipDrvPointerGetAttributes(0, attrs, data, (hipDeviceptr_t)d),
       hipErrorInvalidValue);
  hipFree(d);
  void* huge = nullptr;                                        // more than any host has: out of memory, as AMD's
  code("hipHostMalloc(SIZE_MAX)", hipHostMalloc(&huge, ~size_t(0)), hipErrorOutOfMemory);
  code("hipHostMalloc(1 << 50)", hipHostMalloc(&huge, size_t(1) << 50), hipErrorOutOfMemory);
}

static void symbol_bounds() {
  int in[3] = {11, 22, 33}, out[3] = {-1, -1, -1};
  code("hipMemcpyToSymbol whole", hipMemcpyToSymbol(HIP_SYMBOL(sym_pair), in, 8, 0, hipMemcpyHostToDevice), hipSuccess);
  code("hipMemcpyToSymbol past the end", hipMemcpyToSymbol(HIP_SYMBOL(sym_pair), in, 12, 0, hipMemcpyHostToDevice),
       hipErrorInvalidValue);
  code("hipMemcpyToSymbol offset past the end", hipMemcpyToSymbol(HIP_SYMBOL(sym_pair), in, 4, 8, hipMemcpyHostToDevice),
       hipErrorInvalidValue);
  code("hipMemcpyFromSymbol too large", hipMemcpyFromSymbol(out, HIP_SYMBOL(sym_pair), 12, 0, hipMemcpyDeviceToHost),
       hipErrorInvalidValue);
  code("hipMemcpyFromSymbolAsync offset past the end",
       hipMemcpyFromSymbolAsync(out, HIP_SYMBOL(sym_pair), 4, 300, hipMemcpyDeviceToHost, nullptr), hipErrorInvalidValue);
  check("failed symbol copies wrote nothing", out[0] == -1 && out[2] == -1);
  code("hipMemcpyFromSymbol offset 4", hipMemcpyFromSymbol(out, HIP_SYMBOL(sym_pair), 4, 4, hipMemcpyDeviceToHost),
       hipSuccess);
  check("symbol data", out[0] == 22 && out[1] == -1);
}

int main() {
  std::srand(12345);
  symbol_bounds();
  pitched_2d();
  pitched_3d();
  one_d_forms();
  pinned_ordering();
  attributes_and_registration();
  pools_and_info();
  array_descriptors();
  driver_attributes();
  std::printf(failures ? "FAILURES %d\n" : "PASS\n", failures);
  return failures;
}
