// rocRAND 5.3 through the prebuilt librocrand.so.1 (host API) and rocrand_kernel.h (device API), for
// tests/libraries/test_rocrand.py: writes what it generated to argv[1]; the test checks it against a
// Philox4x32-10 written in numpy.
#include <hip/hip_runtime.h>
#include <rocrand/rocrand.h>
#include <rocrand/rocrand_kernel.h>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK(x) do { auto s_ = (x); if (s_ != 0) { fprintf(stderr, "%s failed: %d (line %d)\n", #x, (int)s_, __LINE__); exit(1); } } while (0)

constexpr unsigned long long SEED = 0x1234567890abcdefULL;
constexpr size_t N_U32 = 100003;      // not a multiple of 4: the generator's tail path
constexpr size_t N_F32 = 4099;        // continues the same stream at offset N_U32
constexpr size_t N_NORMAL = 65536;
constexpr int THREADS = 300, DRAWS = 5;

__global__ void device_api(unsigned int* out, unsigned long long seed)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= THREADS) return;
    rocrand_state_philox4x32_10 st;
    rocrand_init(seed, i, i % 7, &st);   // subsequence i, offset i % 7
    for (int k = 0; k < DRAWS; ++k) out[i * DRAWS + k] = rocrand(&st);
}

template <class T> static std::vector<T> fetch(T* d, size_t n)
{
    std::vector<T> h(n);
    CHECK(hipMemcpy(h.data(), d, n * sizeof(T), hipMemcpyDeviceToHost));
    return h;
}

int main(int argc, char** argv)
{
    if (argc < 2) { fprintf(stderr, "usage: %s OUT\n", argv[0]); return 2; }
    rocrand_generator gen;
    CHECK(rocrand_create_generator(&gen, ROCRAND_RNG_PSEUDO_PHILOX4_32_10));
    CHECK(rocrand_set_seed(gen, SEED));
    unsigned int* du; float* df; float* dn; unsigned int* dd;
    CHECK(hipMalloc(&du, N_U32 * 4)); CHECK(hipMalloc(&df, N_F32 * 4)); CHECK(hipMalloc(&dn, N_NORMAL * 4));
    CHECK(hipMalloc(&dd, THREADS * DRAWS * 4));
    CHECK(rocrand_generate(gen, du, N_U32));
    CHECK(rocrand_generate_uniform(gen, df, N_F32));
    CHECK(rocrand_generate_normal(gen, dn, N_NORMAL, 2.0f, 3.0f));
    hipLaunchKernelGGL(device_api, dim3((THREADS + 127) / 128), dim3(128), 0, 0, dd, SEED);
    CHECK(hipGetLastError());
    CHECK(hipDeviceSynchronize());
    auto u = fetch(du, N_U32); auto f = fetch(df, N_F32); auto n = fetch(dn, N_NORMAL); auto d = fetch(dd, THREADS * DRAWS);
    FILE* fp = fopen(argv[1], "wb");
    if (!fp) { perror(argv[1]); return 1; }
    fwrite(u.data(), 4, u.size(), fp); fwrite(f.data(), 4, f.size(), fp);
    fwrite(n.data(), 4, n.size(), fp); fwrite(d.data(), 4, d.size(), fp);
    fclose(fp);
    CHECK(rocrand_destroy_generator(gen));
    printf("PASS\n");
    return 0;
}
