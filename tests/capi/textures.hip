// Texture and surface objects, arrays and legacy texture references through HIP 5.2's API, run under
// `pyhip exec textures DIR`: inputs are DIR/<name>.in (raw little-endian data written by test_textures.py),
// each case writes DIR/<case>.out; checks of API behaviour print "FAIL ..." lines; the last line is "DONE".
#include <hip/hip_runtime.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#define CHECK(x) do { hipError_t e_ = (x); if (e_ != hipSuccess) { \
    printf("FAIL %s:%d %s -> %d\n", __FILE__, __LINE__, #x, (int)e_); exit(1); } } while (0)
#define EXPECT(c) do { if (!(c)) printf("FAIL %s:%d %s\n", __FILE__, __LINE__, #c); } while (0)

static std::string dir;
static std::vector<char> in(const char* name, size_t bytes) {
  std::vector<char> v(bytes);
  FILE* f = fopen((dir + "/" + name + ".in").c_str(), "rb");
  if (!f || fread(v.data(), 1, bytes, f) != bytes) { printf("FAIL reading %s\n", name); exit(1); }
  fclose(f);
  return v;
}
static void out(const char* name, const void* p, size_t bytes) {
  FILE* f = fopen((dir + "/" + name + ".out").c_str(), "wb");
  fwrite(p, 1, bytes, f);
  fclose(f);
}
template <typename T> static T* dev(const std::vector<char>& h) {
  T* d; CHECK(hipMalloc(&d, h.size()));
  CHECK(hipMemcpy(d, h.data(), h.size(), hipMemcpyHostToDevice));
  return d;
}
template <typename T> static void save(const char* name, const T* d, int n) {
  std::vector<T> h(n);
  CHECK(hipMemcpy(h.data(), d, n * sizeof(T), hipMemcpyDeviceToHost));
  out(name, h.data(), n * sizeof(T));
}

const int N = 256;          // samples per case

template <typename T> __global__ void k1d(hipTextureObject_t t, const float* c, T* o) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; o[i] = tex1D<T>(t, c[i]); }
template <typename T> __global__ void k2d(hipTextureObject_t t, const float2* c, T* o) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; o[i] = tex2D<T>(t, c[i].x, c[i].y); }
template <typename T> __global__ void k3d(hipTextureObject_t t, const float4* c, T* o) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; o[i] = tex3D<T>(t, c[i].x, c[i].y, c[i].z); }
template <typename T> __global__ void k1dl(hipTextureObject_t t, const float2* c, T* o) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; o[i] = tex1DLayered<T>(t, c[i].x, (int)c[i].y); }
template <typename T> __global__ void k2dl(hipTextureObject_t t, const float4* c, T* o) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; o[i] = tex2DLayered<T>(t, c[i].x, c[i].y, (int)c[i].z); }
__global__ void kfetch(hipTextureObject_t t, const int* c, float* o) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; o[i] = tex1Dfetch<float>(t, c[i]); }
__global__ void ksurf(hipSurfaceObject_t s, int w) {
  int x = threadIdx.x, y = blockIdx.x;
  if (x < w) { float v; surf2Dread(&v, s, x * 4, y); surf2Dwrite(3.0f * v + x, s, x * 4, y); }
}
texture<float, hipTextureType2D, hipReadModeElementType> legacy_tex;
texture<float, hipTextureType1D, hipReadModeElementType> legacy_lin;
__global__ void klegacy_fetch(const int* c, float* o) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; o[i] = tex1Dfetch(legacy_lin, c[i]); }
__global__ void klegacy(const float2* c, float* o) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; o[i] = tex2D(legacy_tex, c[i].x, c[i].y); }

static hipTextureDesc tdesc(hipTextureAddressMode am, hipTextureFilterMode fm, int normalized,
                            hipTextureReadMode rm = hipReadModeElementType) {
  hipTextureDesc d; memset(&d, 0, sizeof(d));
  d.addressMode[0] = d.addressMode[1] = d.addressMode[2] = am;
  d.filterMode = fm; d.readMode = rm; d.normalizedCoords = normalized;
  return d;
}
static hipResourceDesc rdesc(hipArray_t a) {
  hipResourceDesc r; memset(&r, 0, sizeof(r));
  r.resType = hipResourceTypeArray; r.res.array.array = a;
  return r;
}
template <typename Out, typename Coord, typename K>
static void run(const char* name, K kernel, hipTextureObject_t t, Coord* coords) {
  Out* o; CHECK(hipMalloc(&o, N * sizeof(Out)));
  hipLaunchKernelGGL(kernel, dim3(N / 64), dim3(64), 0, 0, t, coords, o);
  CHECK(hipGetLastError());
  save(name, o, N);
  CHECK(hipFree(o));
}

int main(int argc, char** argv) {
  if (argc < 2) { printf("usage: textures DIR\n"); return 2; }
  dir = argv[1];
  float2* c2 = dev<float2>(in("coords2", N * 8));       // normalized
  float2* c2u = dev<float2>(in("coords2u", N * 8));     // texel units
  float4* c3 = dev<float4>(in("coords3", N * 16));
  float* c1 = dev<float>(in("coords1", N * 4));
  float2* c1l = dev<float2>(in("coords1l", N * 8));
  float4* c2l = dev<float4>(in("coords2l", N * 16));

  // 2-D float array, every addressing mode, point and linear, normalized coordinates
  const int W = 13, H = 7;
  std::vector<char> f2 = in("f2d", W * H * 4);
  hipChannelFormatDesc fd = hipCreateChannelDesc(32, 0, 0, 0, hipChannelFormatKindFloat);
  EXPECT(fd.x == 32 && fd.y == 0 && fd.f == hipChannelFormatKindFloat);
  hipArray_t a2; CHECK(hipMallocArray(&a2, &fd, W, H));
  EXPECT(a2->width == W && a2->height == H && a2->NumChannels == 1 && a2->Format == HIP_AD_FORMAT_FLOAT);
  CHECK(hipMemcpy2DToArray(a2, 0, 0, f2.data(), W * 4, W * 4, H, hipMemcpyHostToDevice));
  const char* modes[] = {"wrap", "clamp", "mirror", "border"};
  for (int am = 0; am < 4; am++) for (int fm = 0; fm < 2; fm++) for (int norm = 0; norm < 2; norm++) {
    hipResourceDesc r = rdesc(a2);
    hipTextureDesc td = tdesc((hipTextureAddressMode)am, (hipTextureFilterMode)fm, norm);
    hipTextureObject_t t; CHECK(hipCreateTextureObject(&t, &r, &td, nullptr));
    char name[64]; snprintf(name, sizeof name, "f2d_%s_%s_%s", modes[am], fm ? "linear" : "point", norm ? "n" : "u");
    run<float>(name, k2d<float>, t, norm ? c2 : c2u);
    CHECK(hipDestroyTextureObject(t));
  }
  {   // descriptor queries and what HIP 5.2 refuses
    hipResourceDesc r = rdesc(a2);
    hipTextureDesc td = tdesc(hipAddressModeBorder, hipFilterModeLinear, 1);
    hipTextureObject_t t; CHECK(hipCreateTextureObject(&t, &r, &td, nullptr));
    hipResourceDesc rr; hipTextureDesc tt;
    CHECK(hipGetTextureObjectResourceDesc(&rr, t));
    CHECK(hipGetTextureObjectTextureDesc(&tt, t));
    EXPECT(rr.resType == hipResourceTypeArray && rr.res.array.array == a2);
    EXPECT(tt.filterMode == hipFilterModeLinear && tt.addressMode[1] == hipAddressModeBorder && tt.normalizedCoords);
    CHECK(hipDestroyTextureObject(t));
    td.maxAnisotropy = 4;
    EXPECT(hipCreateTextureObject(&t, &r, &td, nullptr) == hipErrorNotSupported);
    EXPECT(hipCreateTextureObject(&t, nullptr, &td, nullptr) == hipErrorInvalidValue);
    hipChannelFormatDesc got; CHECK(hipGetChannelDesc(&got, a2));
    EXPECT(got.x == 32 && got.y == 0 && got.f == hipChannelFormatKindFloat);
    hipChannelFormatDesc bad = hipCreateChannelDesc(8, 16, 0, 0, hipChannelFormatKindUnsigned);
    hipArray_t x; EXPECT(hipMallocArray(&x, &bad, 4, 4) == hipErrorInvalidValue);
  }

  // 1-D float, linear, wrap
  {
    std::vector<char> f1 = in("f1d", 11 * 4);
    hipArray_t a; CHECK(hipMallocArray(&a, &fd, 11));
    CHECK(hipMemcpyToArray(a, 0, 0, f1.data(), 11 * 4, hipMemcpyHostToDevice));
    hipResourceDesc r = rdesc(a);
    hipTextureDesc td = tdesc(hipAddressModeWrap, hipFilterModeLinear, 1);
    hipTextureObject_t t; CHECK(hipCreateTextureObject(&t, &r, &td, nullptr));
    run<float>("f1d_wrap_linear", k1d<float>, t, c1);
    std::vector<float> back(11);
    CHECK(hipMemcpyFromArray(back.data(), a, 0, 0, 11 * 4, hipMemcpyDeviceToHost));
    EXPECT(memcmp(back.data(), f1.data(), 44) == 0);
    CHECK(hipDestroyTextureObject(t)); CHECK(hipFreeArray(a));
  }
  // 1-D layered float2 (9 x 3 layers), linear, mirror
  {
    std::vector<char> d = in("f1dl", 9 * 3 * 8);
    hipChannelFormatDesc cd = hipCreateChannelDesc<float2>();
    hipArray_t a; CHECK(hipMalloc3DArray(&a, &cd, make_hipExtent(9, 0, 3), hipArrayLayered));
    hipMemcpy3DParms p; memset(&p, 0, sizeof(p));
    p.srcPtr = make_hipPitchedPtr(d.data(), 9 * 8, 9, 1); p.dstArray = a;
    p.extent = make_hipExtent(9, 1, 3); p.kind = hipMemcpyHostToDevice;
    CHECK(hipMemcpy3D(&p));
    hipResourceDesc r = rdesc(a);
    hipTextureDesc td = tdesc(hipAddressModeMirror, hipFilterModeLinear, 1);
    hipTextureObject_t t; CHECK(hipCreateTextureObject(&t, &r, &td, nullptr));
    run<float2>("f1dl_mirror_linear", k1dl<float2>, t, c1l);
    CHECK(hipDestroyTextureObject(t)); CHECK(hipFreeArray(a));
  }
  // 2-D layered float4 (5 x 4 x 3 layers), point, clamp
  {
    std::vector<char> d = in("f2dl", 5 * 4 * 3 * 16);
    hipChannelFormatDesc cd = hipCreateChannelDesc<float4>();
    hipArray_t a; CHECK(hipMalloc3DArray(&a, &cd, make_hipExtent(5, 4, 3), hipArrayLayered));
    hipMemcpy3DParms p; memset(&p, 0, sizeof(p));
    p.srcPtr = make_hipPitchedPtr(d.data(), 5 * 16, 5, 4); p.dstArray = a;
    p.extent = make_hipExtent(5, 4, 3); p.kind = hipMemcpyHostToDevice;
    CHECK(hipMemcpy3D(&p));
    hipResourceDesc r = rdesc(a);
    hipTextureDesc td = tdesc(hipAddressModeClamp, hipFilterModePoint, 1);
    hipTextureObject_t t; CHECK(hipCreateTextureObject(&t, &r, &td, nullptr));
    run<float4>("f2dl_clamp_point", k2dl<float4>, t, c2l);
    CHECK(hipDestroyTextureObject(t)); CHECK(hipFreeArray(a));
  }
  // 3-D float (6 x 5 x 4), linear (trilinear), wrap; copied back through hipMemcpy3D into pitched memory
  {
    std::vector<char> d = in("f3d", 6 * 5 * 4 * 4);
    hipArray_t a; CHECK(hipMalloc3DArray(&a, &fd, make_hipExtent(6, 5, 4), 0));
    hipMemcpy3DParms p; memset(&p, 0, sizeof(p));
    p.srcPtr = make_hipPitchedPtr(d.data(), 6 * 4, 6, 5); p.dstArray = a;
    p.extent = make_hipExtent(6, 5, 4); p.kind = hipMemcpyHostToDevice;
    CHECK(hipMemcpy3D(&p));
    hipResourceDesc r = rdesc(a);
    hipTextureDesc td = tdesc(hipAddressModeWrap, hipFilterModeLinear, 1);
    hipTextureObject_t t; CHECK(hipCreateTextureObject(&t, &r, &td, nullptr));
    run<float>("f3d_wrap_linear", k3d<float>, t, c3);
    CHECK(hipDestroyTextureObject(t));
    char* pitched; CHECK(hipMalloc(&pitched, 256 * 5 * 4));
    memset(&p, 0, sizeof(p));
    p.srcArray = a; p.dstPtr = make_hipPitchedPtr(pitched, 256, 6, 5);
    p.extent = make_hipExtent(6, 5, 4); p.kind = hipMemcpyDeviceToDevice;
    CHECK(hipMemcpy3D(&p));
    std::vector<char> back(256 * 5 * 4);
    CHECK(hipMemcpy(back.data(), pitched, back.size(), hipMemcpyDeviceToHost));
    for (int z = 0; z < 4; z++) for (int y = 0; y < 5; y++)
      EXPECT(memcmp(&back[(z * 5 + y) * 256], &d[(z * 5 + y) * 24], 24) == 0);
    CHECK(hipFree(pitched)); CHECK(hipFreeArray(a));
  }
  // 2-D uchar4 read as normalized floats, linear, clamp; 2-D short2 as integers; half read as float
  {
    std::vector<char> d = in("u8x4", 6 * 5 * 4);
    // (HIP 5.2's hipCreateChannelDesc<uchar4>() says Signed: it would read these bytes as SNORM)
    hipChannelFormatDesc cd = hipCreateChannelDesc(8, 8, 8, 8, hipChannelFormatKindUnsigned);
    hipArray_t a; CHECK(hipMallocArray(&a, &cd, 6, 5));
    CHECK(hipMemcpy2DToArray(a, 0, 0, d.data(), 24, 24, 5, hipMemcpyHostToDevice));
    hipResourceDesc r = rdesc(a);
    hipTextureDesc td = tdesc(hipAddressModeClamp, hipFilterModeLinear, 1, hipReadModeNormalizedFloat);
    hipTextureObject_t t; CHECK(hipCreateTextureObject(&t, &r, &td, nullptr));
    run<float4>("u8x4_clamp_linear", k2d<float4>, t, c2);
    CHECK(hipDestroyTextureObject(t)); CHECK(hipFreeArray(a));
  }
  {
    std::vector<char> d = in("s16x2", 6 * 5 * 4);
    hipChannelFormatDesc cd = hipCreateChannelDesc<short2>();
    hipArray_t a; CHECK(hipMallocArray(&a, &cd, 6, 5));
    CHECK(hipMemcpy2DToArray(a, 0, 0, d.data(), 24, 24, 5, hipMemcpyHostToDevice));
    hipResourceDesc r = rdesc(a);
    hipTextureDesc td = tdesc(hipAddressModeBorder, hipFilterModePoint, 1);
    hipTextureObject_t t; CHECK(hipCreateTextureObject(&t, &r, &td, nullptr));
    run<short2>("s16x2_border_point", k2d<short2>, t, c2);
    CHECK(hipDestroyTextureObject(t)); CHECK(hipFreeArray(a));
  }
  {
    std::vector<char> d = in("f16", 6 * 5 * 2);
    hipChannelFormatDesc cd = hipCreateChannelDesc(16, 0, 0, 0, hipChannelFormatKindFloat);
    hipArray_t a; CHECK(hipMallocArray(&a, &cd, 6, 5));
    CHECK(hipMemcpy2DToArray(a, 0, 0, d.data(), 12, 12, 5, hipMemcpyHostToDevice));
    hipResourceDesc r = rdesc(a);
    hipTextureDesc td = tdesc(hipAddressModeWrap, hipFilterModeLinear, 1);
    hipTextureObject_t t; CHECK(hipCreateTextureObject(&t, &r, &td, nullptr));
    run<float>("f16_wrap_linear", k2d<float>, t, c2);
    CHECK(hipDestroyTextureObject(t)); CHECK(hipFreeArray(a));
  }
  // linear memory (tex1Dfetch, out-of-range indices read 0) and pitched 2-D memory
  {
    std::vector<char> d = in("lin", 100 * 4);
    float* buf = dev<float>(d);
    hipResourceDesc r; memset(&r, 0, sizeof r);
    r.resType = hipResourceTypeLinear; r.res.linear.devPtr = buf; r.res.linear.desc = fd; r.res.linear.sizeInBytes = 400;
    hipTextureDesc td = tdesc(hipAddressModeClamp, hipFilterModePoint, 0);
    hipTextureObject_t t; CHECK(hipCreateTextureObject(&t, &r, &td, nullptr));
    int* idx = dev<int>(in("fetch_idx", N * 4));
    run<float>("lin_fetch", kfetch, t, idx);
    CHECK(hipDestroyTextureObject(t));
    // the same through a legacy 1-D reference: hipBindTexture, and the offset of an unaligned pointer
    size_t offset = 99;
    CHECK(hipBindTexture(&offset, legacy_lin, buf, 400));
    EXPECT(offset == 0);
    float* o; CHECK(hipMalloc(&o, N * 4));
    hipLaunchKernelGGL(klegacy_fetch, dim3(N / 64), dim3(64), 0, 0, idx, o);
    CHECK(hipGetLastError());
    save("legacy_fetch", o, N);
    CHECK(hipBindTexture(&offset, legacy_lin, buf + 3, 388));
    EXPECT(offset == 12);
    EXPECT(hipBindTexture(nullptr, legacy_lin, buf + 3, 388) == hipErrorInvalidValue);
    CHECK(hipUnbindTexture(legacy_lin));
  }
  {
    std::vector<char> d = in("pitch", 7 * 256);
    char* buf = dev<char>(d);
    hipResourceDesc r; memset(&r, 0, sizeof r);
    r.resType = hipResourceTypePitch2D; r.res.pitch2D.devPtr = buf; r.res.pitch2D.desc = fd;
    r.res.pitch2D.width = 9; r.res.pitch2D.height = 7; r.res.pitch2D.pitchInBytes = 256;
    hipTextureDesc td = tdesc(hipAddressModeClamp, hipFilterModeLinear, 1);
    hipTextureObject_t t; CHECK(hipCreateTextureObject(&t, &r, &td, nullptr));
    run<float>("pitch_clamp_linear", k2d<float>, t, c2);
    CHECK(hipDestroyTextureObject(t));
    r.res.pitch2D.pitchInBytes = 200;                       // not a multiple of texturePitchAlignment
    EXPECT(hipCreateTextureObject(&t, &r, &td, nullptr) == hipErrorInvalidValue);
    // the driver API on the same memory: point filtering, mirror, normalized coordinates (flags)
    HIP_RESOURCE_DESC dr; memset(&dr, 0, sizeof dr);
    dr.resType = HIP_RESOURCE_TYPE_PITCH2D; dr.res.pitch2D.devPtr = buf; dr.res.pitch2D.format = HIP_AD_FORMAT_FLOAT;
    dr.res.pitch2D.numChannels = 1; dr.res.pitch2D.width = 9; dr.res.pitch2D.height = 7;
    dr.res.pitch2D.pitchInBytes = 256;
    HIP_TEXTURE_DESC dt; memset(&dt, 0, sizeof dt);
    dt.addressMode[0] = HIP_TR_ADDRESS_MODE_MIRROR; dt.filterMode = HIP_TR_FILTER_MODE_POINT;
    dt.flags = HIP_TRSF_NORMALIZED_COORDINATES;
    CHECK(hipTexObjectCreate(&t, &dr, &dt, nullptr));
    run<float>("drv_pitch_mirror_point", k2d<float>, t, c2);
    HIP_RESOURCE_DESC back; HIP_TEXTURE_DESC tback;
    CHECK(hipTexObjectGetResourceDesc(&back, t));
    CHECK(hipTexObjectGetTextureDesc(&tback, t));
    EXPECT(back.resType == HIP_RESOURCE_TYPE_PITCH2D && back.res.pitch2D.devPtr == buf &&
           back.res.pitch2D.numChannels == 1 && back.res.pitch2D.format == HIP_AD_FORMAT_FLOAT &&
           back.res.pitch2D.pitchInBytes == 256 && back.res.pitch2D.width == 9);
    EXPECT(tback.flags == HIP_TRSF_NORMALIZED_COORDINATES && tback.addressMode[0] == HIP_TR_ADDRESS_MODE_MIRROR);
    CHECK(hipTexObjectDestroy(t));
  }
  // surface: read, write 3v + x, copy back
  {
    hipArray_t a; CHECK(hipMallocArray(&a, &fd, W, H, hipArraySurfaceLoadStore));
    CHECK(hipMemcpy2DToArray(a, 0, 0, f2.data(), W * 4, W * 4, H, hipMemcpyHostToDevice));
    hipResourceDesc r = rdesc(a);
    hipSurfaceObject_t s; CHECK(hipCreateSurfaceObject(&s, &r));
    hipLaunchKernelGGL(ksurf, dim3(H), dim3(64), 0, 0, s, W);
    CHECK(hipDeviceSynchronize());
    std::vector<float> back(W * H);
    CHECK(hipMemcpy2DFromArray(back.data(), W * 4, a, 0, 0, W * 4, H, hipMemcpyDeviceToHost));
    out("surface", back.data(), W * H * 4);
    CHECK(hipDestroySurfaceObject(s)); CHECK(hipFreeArray(a));
  }
  // legacy texture reference bound to the 2-D array (clamp, linear, unnormalized)
  {
    legacy_tex.filterMode = hipFilterModeLinear;
    legacy_tex.normalized = 0;
    legacy_tex.addressMode[0] = legacy_tex.addressMode[1] = hipAddressModeClamp;
    CHECK(hipBindTextureToArray(legacy_tex, a2));
    float* o; CHECK(hipMalloc(&o, N * 4));
    hipLaunchKernelGGL(klegacy, dim3(N / 64), dim3(64), 0, 0, c2u, o);
    CHECK(hipGetLastError());
    save("legacy_clamp_linear_u", o, N);
    CHECK(hipUnbindTexture(legacy_tex));
    EXPECT(legacy_tex.textureObject == nullptr);
  }
  CHECK(hipFreeArray(a2));
  printf("DONE\n");
  return 0;
}
