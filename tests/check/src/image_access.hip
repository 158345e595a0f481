// memcheck and initcheck on image instructions: a texture over linear memory the host filled only half of
// (tex1Dfetch: image_load of a buffer image), a hipArray nothing wrote read through a texture (tex2D:
// image_sample), then the same texture fetched after hipFree of its memory and a surface written after
// hipFreeArray of its array (use after free: loads read 0, stores dropped, as for any access).  A clean phase
// first (every texel written by a copy or a surface store, then read) must be silent.
#include <hip/hip_runtime.h>
#include <cstdio>

__global__ void fetch(float* out, hipTextureObject_t t, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex1Dfetch<float>(t, i);               // IMG-FETCH
}

__global__ void read2d(float* out, hipTextureObject_t t, int w, int h) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
  if (x < w) out[y * w + x] = tex2D<float>(t, x + 0.5f, y + 0.5f);   // IMG-SAMPLE
}

__global__ void put(hipSurfaceObject_t s, int w, int h) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
  if (x < w) surf2Dwrite(float(y * w + x), s, x * (int)sizeof(float), y);   // IMG-STORE
}

static hipTextureObject_t linear_texture(float* p, size_t bytes) {
  hipResourceDesc r = {};
  r.resType = hipResourceTypeLinear;
  r.res.linear.devPtr = p;
  r.res.linear.desc = hipCreateChannelDesc<float>();
  r.res.linear.sizeInBytes = bytes;
  hipTextureDesc d = {};
  d.readMode = hipReadModeElementType;
  hipTextureObject_t t = 0;
  hipCreateTextureObject(&t, &r, &d, nullptr);
  return t;
}

static hipTextureObject_t array_texture(hipArray_t a) {
  hipResourceDesc r = {};
  r.resType = hipResourceTypeArray;
  r.res.array.array = a;
  hipTextureDesc d = {};
  d.readMode = hipReadModeElementType;
  d.filterMode = hipFilterModePoint;
  d.addressMode[0] = d.addressMode[1] = hipAddressModeClamp;
  hipTextureObject_t t = 0;
  hipCreateTextureObject(&t, &r, &d, nullptr);
  return t;
}

static hipSurfaceObject_t surface(hipArray_t a) {
  hipResourceDesc r = {};
  r.resType = hipResourceTypeArray;
  r.res.array.array = a;
  hipSurfaceObject_t s = 0;
  hipCreateSurfaceObject(&s, &r);
  return s;
}

static double sum(const float* d, size_t bytes) {
  static float h[4096];
  hipMemcpy(h, d, bytes, hipMemcpyDeviceToHost);
  double s = 0;
  for (size_t i = 0; i < bytes / sizeof(float); ++i) s += h[i];
  return s;
}

int main() {
  const int n = 1000, w = 37, h = 5;
  float host[n];
  for (int i = 0; i < n; ++i) host[i] = float(i);
  float *lin, *out;
  hipMalloc(&lin, n * sizeof(float));
  hipMalloc(&out, n * sizeof(float));
  hipChannelFormatDesc f = hipCreateChannelDesc<float>();
  hipArray_t arr;
  hipMallocArray(&arr, &f, w, h, hipArraySurfaceLoadStore);

  // clean: everything read was written (a copy, a surface store)
  hipMemcpy(lin, host, n * sizeof(float), hipMemcpyHostToDevice);
  hipTextureObject_t tl = linear_texture(lin, n * sizeof(float));
  fetch<<<(n + 255) / 256, 256>>>(out, tl, n);
  std::printf("clean fetch %.0f\n", sum(out, n * sizeof(float)));
  hipSurfaceObject_t sa = surface(arr);
  hipTextureObject_t ta = array_texture(arr);
  put<<<dim3(1, h), 64>>>(sa, w, h);
  read2d<<<dim3(1, h), 64>>>(out, ta, w, h);
  std::printf("clean array %.0f\n", sum(out, w * h * sizeof(float)));
  hipDestroyTextureObject(tl);
  hipDestroyTextureObject(ta);
  hipDestroySurfaceObject(sa);
  hipFreeArray(arr);
  hipFree(lin);

  // initcheck: half of the linear memory and none of a fresh array written
  hipMalloc(&lin, n * sizeof(float));
  hipMemcpy(lin, host, n / 2 * sizeof(float), hipMemcpyHostToDevice);
  tl = linear_texture(lin, n * sizeof(float));
  fetch<<<(n + 255) / 256, 256>>>(out, tl, n);
  std::printf("half fetch %.0f\n", sum(out, n / 2 * sizeof(float)));
  hipMallocArray(&arr, &f, w, h, hipArraySurfaceLoadStore);
  ta = array_texture(arr);
  read2d<<<dim3(1, h), 64>>>(out, ta, w, h);
  std::printf("fresh array %s\n", hipGetErrorName(hipDeviceSynchronize()));

  // memcheck: the texture's memory and the surface's array freed before the kernels use them
  sa = surface(arr);
  hipFree(lin);
  fetch<<<(n + 255) / 256, 256>>>(out, tl, n);
  std::printf("fetch after free %s\n", hipGetErrorName(hipDeviceSynchronize()));
  hipFreeArray(arr);
  put<<<dim3(1, h), 64>>>(sa, w, h);
  std::printf("store after free %s\n", hipGetErrorName(hipDeviceSynchronize()));
  hipDestroyTextureObject(tl);
  hipDestroyTextureObject(ta);
  hipDestroySurfaceObject(sa);
  hipFree(out);
  return 0;
}
