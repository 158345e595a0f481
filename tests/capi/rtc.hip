// hiprtc through the C ABI: the compile API from libamdhip64.so.5 (as HIP 5.2 exports it), the link API from
// libhiprtc.so.5 (dlopen'ed, ROCm 5.4 prototypes).  Results are checked against host arithmetic; prints PASS.
#include <dlfcn.h>
#include <hip/hip_runtime.h>
#include <hip/hiprtc.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#define CHECK(x)                                                                              \
  do {                                                                                        \
    int e_ = (int)(x);                                                                        \
    if (e_ != 0) {                                                                            \
      printf("FAIL %s:%d %s -> %d\n", __FILE__, __LINE__, #x, e_);                            \
      exit(1);                                                                                \
    }                                                                                         \
  } while (0)
#define EXPECT(c)                                                                             \
  do {                                                                                        \
    if (!(c)) {                                                                               \
      printf("FAIL %s:%d %s\n", __FILE__, __LINE__, #c);                                      \
      exit(1);                                                                                \
    }                                                                                         \
  } while (0)

static const char* kSource = R"(
#include "params.h"
template <typename T> __global__ void axpb(T* x, T a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = a * x[i] + T(OFFSET) + T(EXTRA);
}
)";
static const char* kHeader = "#define OFFSET 3\n";

typedef int (*link_create_t)(unsigned, int*, void**, void**);
typedef int (*link_add_t)(void*, int, void*, size_t, const char*, unsigned, int*, void**);
typedef int (*link_complete_t)(void*, void**, size_t*);
typedef int (*link_destroy_t)(void*);
typedef int (*get_size_t)(void*, size_t*);
typedef int (*get_t)(void*, char*);
typedef int (*create_t)(void**, const char*, const char*, int, const char**, const char**);
typedef int (*compile_t)(void*, int, const char**);
typedef int (*destroy_t)(void**);

int main() {
  // -- the compile API, from libamdhip64 -----------------------------------------------------------------
  int major = 0, minor = 0;
  CHECK(hiprtcVersion(&major, &minor));
  EXPECT(major == 9 && minor == 0);
  EXPECT(strcmp(hiprtcGetErrorString(HIPRTC_ERROR_COMPILATION), "HIPRTC_ERROR_COMPILATION") == 0);
  hiprtcProgram prog;
  const char* headers[] = {kHeader};
  const char* names[] = {"params.h"};
  CHECK(hiprtcCreateProgram(&prog, kSource, "axpb.hip", 1, headers, names));
  CHECK(hiprtcAddNameExpression(prog, "axpb<float>"));
  CHECK(hiprtcAddNameExpression(prog, "&axpb<double>"));
  const char* opts[] = {"-DEXTRA=2", "-O2"};
  CHECK(hiprtcCompileProgram(prog, 2, opts));
  const char* lowered = nullptr;
  CHECK(hiprtcGetLoweredName(prog, "axpb<float>", &lowered));
  EXPECT(strcmp(lowered, "_Z4axpbIfEvPT_S0_i") == 0);
  const char* lowered_d = nullptr;
  CHECK(hiprtcGetLoweredName(prog, "&axpb<double>", &lowered_d));
  EXPECT(strcmp(lowered_d, "_Z4axpbIdEvPT_S0_i") == 0);
  EXPECT(hiprtcGetLoweredName(prog, "axpb<int>", &lowered) == HIPRTC_ERROR_NAME_EXPRESSION_NOT_VALID);
  size_t code_size = 0;
  CHECK(hiprtcGetCodeSize(prog, &code_size));
  std::vector<char> code(code_size);
  CHECK(hiprtcGetCode(prog, code.data()));
  EXPECT(code_size > 64 && memcmp(code.data(), "\x7f" "ELF", 4) == 0);

  hipModule_t module;
  hipFunction_t fn;
  CHECK(hipModuleLoadData(&module, code.data()));
  CHECK(hipModuleGetFunction(&fn, module, lowered));
  const int n = 1000;
  std::vector<float> x(n), y(n);
  for (int i = 0; i < n; i++) x[i] = (float)(i % 97) * 0.25f;
  float* dx;
  CHECK(hipMalloc(&dx, n * sizeof(float)));
  CHECK(hipMemcpy(dx, x.data(), n * sizeof(float), hipMemcpyHostToDevice));
  float a = 1.5f;
  int nn = n;
  void* args[] = {&dx, &a, &nn};
  CHECK(hipModuleLaunchKernel(fn, (n + 255) / 256, 1, 1, 256, 1, 1, 0, nullptr, args, nullptr));
  CHECK(hipMemcpy(y.data(), dx, n * sizeof(float), hipMemcpyDeviceToHost));
  for (int i = 0; i < n; i++) EXPECT(y[i] == a * x[i] + 3.0f + 2.0f);
  CHECK(hipModuleUnload(module));
  CHECK(hiprtcDestroyProgram(&prog));

  // a compile error: HIPRTC_ERROR_COMPILATION and a log naming the problem
  hiprtcProgram bad;
  CHECK(hiprtcCreateProgram(&bad, "__global__ void k() { undeclared_thing(); }", "bad.hip", 0, nullptr, nullptr));
  EXPECT(hiprtcCompileProgram(bad, 0, nullptr) == HIPRTC_ERROR_COMPILATION);
  size_t log_size = 0;
  CHECK(hiprtcGetProgramLogSize(bad, &log_size));
  std::string log(log_size, '\0');
  CHECK(hiprtcGetProgramLog(bad, &log[0]));
  EXPECT(log.find("undeclared_thing") != std::string::npos);
  CHECK(hiprtcDestroyProgram(&bad));

  // -- the link API, from libhiprtc.so.5 -------------------------------------------------------------------
  void* lib = dlopen("libhiprtc.so.5", RTLD_NOW);
  EXPECT(lib != nullptr);
  auto create = (create_t)dlsym(lib, "hiprtcCreateProgram");
  auto compile = (compile_t)dlsym(lib, "hiprtcCompileProgram");
  auto destroy = (destroy_t)dlsym(lib, "hiprtcDestroyProgram");
  auto bc_size = (get_size_t)dlsym(lib, "hiprtcGetBitcodeSize");
  auto bc_get = (get_t)dlsym(lib, "hiprtcGetBitcode");
  auto link_create = (link_create_t)dlsym(lib, "hiprtcLinkCreate");
  auto link_add = (link_add_t)dlsym(lib, "hiprtcLinkAddData");
  auto link_complete = (link_complete_t)dlsym(lib, "hiprtcLinkComplete");
  auto link_destroy = (link_destroy_t)dlsym(lib, "hiprtcLinkDestroy");
  EXPECT(create && compile && destroy && bc_size && bc_get && link_create && link_add && link_complete && link_destroy);
  const char* srcs[2] = {
      "__device__ float op(float v);\n"
      "extern \"C\" __global__ void apply(float* x, int n) {\n"
      "  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] = op(x[i]); }\n",
      "__device__ float op(float v) { return sqrtf(v) + 1.0f; }\n"};
  const char* rdc[] = {"-fgpu-rdc"};
  void* link = nullptr;
  CHECK(link_create(0, nullptr, nullptr, &link));
  for (int s = 0; s < 2; s++) {
    void* p = nullptr;
    CHECK(create(&p, srcs[s], s ? "op.hip" : "apply.hip", 0, nullptr, nullptr));
    CHECK(compile(p, 1, rdc));
    size_t sz = 0;
    CHECK(bc_size(p, &sz));
    std::vector<char> bc(sz);
    CHECK(bc_get(p, bc.data()));
    EXPECT(sz > 4 && memcmp(bc.data(), "BC\xc0\xde", 4) == 0);
    CHECK(link_add(link, 100 /* HIPRTC_JIT_INPUT_LLVM_BITCODE */, bc.data(), sz, s ? "op" : "apply", 0, nullptr,
                   nullptr));
    CHECK(destroy(&p));
  }
  EXPECT(link_add(link, 1 /* HIPRTC_JIT_INPUT_PTX */, (void*)srcs[0], 10, "ptx", 0, nullptr, nullptr) ==
         HIPRTC_ERROR_INVALID_INPUT);
  void* image = nullptr;
  size_t image_size = 0;
  CHECK(link_complete(link, &image, &image_size));
  CHECK(hipModuleLoadData(&module, image));
  CHECK(link_destroy(link));
  CHECK(hipModuleGetFunction(&fn, module, "apply"));
  CHECK(hipMemcpy(dx, x.data(), n * sizeof(float), hipMemcpyHostToDevice));
  void* args2[] = {&dx, &nn};
  CHECK(hipModuleLaunchKernel(fn, (n + 255) / 256, 1, 1, 256, 1, 1, 0, nullptr, args2, nullptr));
  CHECK(hipMemcpy(y.data(), dx, n * sizeof(float), hipMemcpyDeviceToHost));
  for (int i = 0; i < n; i++) EXPECT(std::fabs(y[i] - (std::sqrt(x[i]) + 1.0f)) <= 1e-6f * (1.0f + y[i]));
  CHECK(hipModuleUnload(module));
  CHECK(hipFree(dx));
  printf("PASS\n");
  return 0;
}
